#!/bin/sh
# SPDX-License-Identifier: ISC
# --on-run CMD: /bin/sh -c CMD before each run (CBEXEC_EVENT=start) and
# after it (end, with the outcome in its environment); what it prints
# goes to stderr as "hook: ..."; it is bounded by --kill-after and its
# failure is a warning, never the run's; a refused or skipped run runs no
# hook; --record runs only the end; the config key is on_run.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }
D=$CBEXEC_STATE_DIR
ms() { echo $(( $(date +%s%N) / 1000000 )); }
HOOK='printf "%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s\n" "$CBEXEC_EVENT" "$CBEXEC_NAME" "$CBEXEC_ITERATION" "$CBEXEC_PHASE" "$CBEXEC_CIRCUIT_STATE" "${CBEXEC_RESULT-unset}" "${CBEXEC_EXIT_STATUS-unset}" "${CBEXEC_EXIT_CODE-unset}" "${CBEXEC_SIGNAL-unset}" "${CBEXEC_CLASS-unset}" "${CBEXEC_TYPE-unset}" "${CBEXEC_MESSAGE-unset}" "${CBEXEC_PROGRESS-unset}" "$CBEXEC_STATE_FILE" >> "$OUT"'
export OUT=$SCRATCH/hook.out

# A success, then a failure: start and end of each, in order.
cb --name h --phase GREEN --on-run "$HOOK" -- sh -c 'echo "start seen: $(cat "$OUT" | wc -l)"' \
    >run.out 2>err
is "$?" 0 "a run with an --on-run hook: 0"
is "$(cat run.out)" "start seen: 1" "the start hook ran before the command"
# a leftover outcome in cbexec's own environment never reaches a start
CBEXEC_RESULT=stale CBEXEC_EXIT_STATUS=9 cb --name h --phase GREEN --on-run "$HOOK" \
    -- sh -c 'echo "TypeError: x is undefined" >&2; exit 3' 2>err
is "$?" 3 "a failed run: its own status, the hook changes nothing"
is "$(cat hook.out)" "start|h|1|GREEN|CLOSED|unset|unset|unset|unset|unset|unset|unset|unset|$D/h.json
end|h|1|GREEN|CLOSED|success|0|0||success|||1|$D/h.json
start|h|2|GREEN|CLOSED|unset|unset|unset|unset|unset|unset|unset|unset|$D/h.json
end|h|2|GREEN|CLOSED|failure|3|3||recoverable|runtime_error|TypeError: x is undefined|0|$D/h.json" \
    "start, then end with the outcome; nothing of the outcome at a start"

# The end hook sees the state the run left: an opening.
: > hook.out
cb --name o --no-progress-threshold 1 --on-run "$HOOK" -- false 2>/dev/null
is "$?" 120 "a run that opens the circuit: 120"
like "$(sed -n 2p hook.out)" '^end\|o\|1\|\|OPEN\|failure\|1\|1\|' "the end hook: CBEXEC_CIRCUIT_STATE OPEN"
# The end of the work: CBEXEC_COMPLETE says so, the exit status the run
# stands for stays 0 (a ping's success) whatever --exit-codes makes of it.
: > hook.out
cb --name done --exit-codes complete=10 --on-run \
    'echo "$CBEXEC_EVENT ${CBEXEC_COMPLETE-unset} ${CBEXEC_EXIT_STATUS-unset}" >> "$OUT"' \
    -- printf -- '---CBEXEC_STATUS---\nSTATUS: COMPLETE\n---END_CBEXEC_STATUS---\n' >/dev/null 2>&1
is "$?" 10 "a run that reports completion with --exit-codes complete=10: 10"
cb --name done2 --on-run \
    'echo "$CBEXEC_EVENT ${CBEXEC_COMPLETE-unset} ${CBEXEC_EXIT_STATUS-unset}" >> "$OUT"' \
    -- printf -- '---CBEXEC_STATUS---\nSTATUS: IN_PROGRESS\n---END_CBEXEC_STATUS---\n' >/dev/null 2>&1
is "$(cat hook.out)" "start unset unset
end 1 0
start unset unset
end 0 0" "CBEXEC_COMPLETE: 1 at the end of a run that completed the work, else 0"

# Refused: no run, no hook.
: > hook.out
cb --name o --on-run "$HOOK" -- true 2>/dev/null
is "$?:$(wc -l <hook.out | tr -d ' ')" "120:0" "a refused run runs no hook"

# Timed out, killed by a signal: the status the run stands for.
: > hook.out
cb --name t -t 0.2 -k 0.1 --on-run "$HOOK" -- sleep 5 2>/dev/null
like "$(sed -n 2p hook.out)" '^end\|t\|1\|\|CLOSED\|failure\|124\|\|SIGTERM\|timeout\|timeout\|' \
    "a timeout: 124, the signal cbexec sent, class timeout"
: > hook.out
cb --name s --on-run "$HOOK" -- sh -c 'kill -USR1 $$' 2>/dev/null
like "$(sed -n 2p hook.out)" '^end\|s\|1\|\|CLOSED\|failure\|138\|\|SIGUSR1\|' "killed by SIGUSR1: 138"
: > hook.out
cb --name i --ignore-exit-codes 75 --on-run "$HOOK" -- sh -c 'exit 75' 2>/dev/null
like "$(sed -n 2p hook.out)" '^end\|i\|1\|\|CLOSED\|ignored\|75\|75\|' "an ignored exit code: ignored"

# Its output is logged, its failure is a warning; -n 2 runs it 4 times.
cb --name f -n 2 --log f.log --on-run 'echo "said $CBEXEC_EVENT"; exit 7' -- true 2>err
is "$?" 0 "a failing hook never changes the run's status"
is "$(grep -c 'hook: said start' err)/$(grep -c 'hook: said end' err)" 2/2 "its output, prefixed hook:"
is "$(grep -c 'warning: on-run hook exited 7' err)" 4 "each failure a warning"
is "$(grep -c '"event":"warning".*on-run hook exited 7' f.log)" 4 "... in the log too"
is "$(jget "$D/f.json" iteration)" 2 "both runs ran"

# Bounded like --on-state-change: killed after --kill-after.
t0=$(ms)
cb --name slow -k 0.3 --on-run 'sleep 30' -- true 2>err
t1=$(ms)
ok "$([ $((t1 - t0)) -lt 5000 ]; echo $?)" "a hanging hook is killed after --kill-after ($((t1 - t0)) ms)"
like "$(cat err)" 'on-run hook timed out after 0\.3s; killed' "... saying so"

# The config key, and --record (no run is started: only its end).
printf '{"on_run": "echo cfg $CBEXEC_EVENT >> %s/cfg.out"}\n' "$SCRATCH" > c.json
cb --name c --config c.json -- true 2>/dev/null
is "$(cat cfg.out)" "cfg start
cfg end" "config key on_run"
: > hook.out
"$CBEXEC" --record --exit 2 --message "boom" --on-run "$HOOK" r 2>/dev/null
is "$?" 2 "--record: its status"
is "$(cut -d'|' -f1,6,7,12 hook.out)" "end|failure|2|boom" "--record: the end hook only"

# A skipped phase is not started: no hook.
cb --name k --phase RED -- true 2>/dev/null
"$CBEXEC" --skip --phase RED --reason later k 2>/dev/null
: > hook.out
cb --name k --phase RED --on-run "$HOOK" -- true 2>/dev/null
is "$?:$(wc -l <hook.out | tr -d ' ')" "0:0" "a skipped phase: not run, no hook"

# An agent's spend: CBEXEC_COST_USD and CBEXEC_TOKENS.
. "$T_DIR/fakeagent.sh"
N=2 COST=0.25 cb --name a --on-run 'echo "$CBEXEC_EVENT cost=$CBEXEC_COST_USD tokens=$CBEXEC_TOKENS" >> "$OUT"' \
    -- claude -p x >/dev/null 2>&1
like "$(tail -1 hook.out)" '^end cost=0\.25 tokens=2020$' "an agent's cost and tokens at the end"
N=1 cb --name cx --on-run 'echo "$CBEXEC_EVENT cost=[$CBEXEC_COST_USD]" >> "$OUT"' \
    -- codex exec --json x >/dev/null 2>&1
like "$(tail -1 hook.out)" '^end cost=\[\]$' "a cost the agent does not report: empty, never 0"
done_testing
