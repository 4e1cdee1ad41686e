# SPDX-License-Identifier: ISC
# Stand-ins for agent clients writing their stream formats at a pace the
# test sets, for the tests of what cbexec watches live (spend caps, the
# idle watchdog, tool-call loops).  Source it after lib.sh: it puts
# bin/claude and bin/codex first on PATH.
#
# claude (stream-json): $N assistant messages $DELAY seconds apart, each
# one tool call (Bash running $CMD, else one unlike the last) with $TOK
# input and 10 output tokens, then, after $HANG seconds of silence when
# set, a result costing $COST USD.  $PIDFILE: its pid goes there;
# $IGNORE_TERM: it ignores SIGTERM, so only --kill-after ends it.
# codex (exec --json): $N command executions, then turn.completed with
# tokens and no cost, as Codex reports.
mkdir -p "$SCRATCH/bin"
cat >"$SCRATCH/bin/claude" <<'EOF'
#!/bin/sh
[ -n "${IGNORE_TERM:-}" ] && trap '' TERM
[ -n "${PIDFILE:-}" ] && echo $$ >"$PIDFILE"
i=0
while [ "$i" -lt "${N:-3}" ]; do
	i=$((i + 1))
	# letters: numbers alone would make the same call (SPEC §4)
	l=$(echo abcdefghijklmnopqrstuvwxyz | cut -c$(((i - 1) % 26 + 1)))
	printf '{"type":"assistant","message":{"id":"msg_%d","type":"message","role":"assistant","content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"%s"}}],"usage":{"input_tokens":%d,"output_tokens":10}},"session_id":"s1"}\n' \
	    "$i" "$i" "${CMD:-echo step $l}" "${TOK:-1000}"
	sleep "${DELAY:-0.02}"
done
[ -n "${HANG:-}" ] && sleep "$HANG"
printf '{"type":"result","subtype":"success","is_error":false,"num_turns":%d,"result":"done","session_id":"s1","total_cost_usd":%s,"usage":{"input_tokens":%d,"output_tokens":%d}}\n' \
    "$i" "${COST:-0.01}" "$((i * ${TOK:-1000}))" "$((i * 10))"
EOF
cat >"$SCRATCH/bin/codex" <<'EOF'
#!/bin/sh
echo '{"type":"thread.started","thread_id":"th1"}'
echo '{"type":"turn.started"}'
i=0
while [ "$i" -lt "${N:-1}" ]; do
	i=$((i + 1))
	printf '{"type":"item.started","item":{"id":"item_%d","type":"command_execution","command":"%s","aggregated_output":"","exit_code":null,"status":"in_progress"}}\n' \
	    "$i" "${CMD:-echo $i}"
	sleep "${DELAY:-0.02}"
done
printf '{"type":"turn.completed","usage":{"input_tokens":%d,"cached_input_tokens":500,"output_tokens":50}}\n' \
    "${TOK:-2000}"
EOF
chmod +x "$SCRATCH/bin/claude" "$SCRATCH/bin/codex"
PATH=$SCRATCH/bin:$PATH
# ms: milliseconds since the epoch
ms() { echo $(( $(date +%s%N) / 1000000 )); }
