#!/bin/sh
# SPDX-License-Identifier: ISC
# Known agents (SPEC §4 rule 8, §9): stand-ins for the five clients replay
# their real recorded output (t/corpus/recorded/), and cbexec must judge
# each run as what it was: a bad key, a missing key or no credit stops at
# once (122), a rate limit, an overload, a server error or a refused
# connection is transient and never "the same error", a usage limit opens
# the circuit until its reset time and then allows a trial without an
# operator, --loop waits for it within the budget, a run cut short while
# the client retried is that error, status blocks are read in every format,
# and the next run gets the session and the last error.
. "$(dirname "$0")/lib.sh"

FX=$TOP/t/corpus/recorded
C=$FX/claude-2.1.330 X=$FX/codex-0.169.0 G=$FX/gemini-0.61.0
Q=$FX/qwen-0.15.10 O=$FX/opencode-1.18.33
mkdir -p bin
# A client that prints the recording $FIX and exits as it did.
for c in claude codex gemini qwen opencode; do
	cat >bin/$c <<'EOF'
#!/bin/sh
cat "$FIX.stdout"; cat "$FIX.stderr" >&2; exit "$(cat "$FIX.exit")"
EOF
	chmod +x bin/$c
done
# npx PACKAGE ARGS: runs the package's command (here: the stand-in).
cat >bin/npx <<'EOF'
#!/bin/sh
while [ "${1#-}" != "$1" ]; do shift; done
case $1 in @anthropic-ai/claude-code*) shift; exec claude "$@" ;; esac
exit 99
EOF
chmod +x bin/npx
PATH=$SCRATCH/bin:$PATH
export TZ=UTC
cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }
st() { jget "$CBEXEC_STATE_DIR/$1.json" "$2" 2>/dev/null; }

# --- a bad key, a missing key, no credit: 122 after one run ------------
n=0
for f in $C/401-text $C/missing_key-json $C/credit-stream-json $C/403-text \
    $X/401-json $X/missing_key-plain $X/credit-plain \
    $G/401-stream-json $G/missing_key-text $G/400-text $G/credit-json \
    $Q/401-json $Q/missing_key-stream-json $Q/credit-text $Q/403-json \
    $O/401-json $O/missing_key-plain; do
	n=$((n + 1))
	c=${f%/*}; c=${c##*/}; c=${c%%-*}
	FIX=$f cb -q --name fatal$n -- "$c" -p x >/dev/null 2>&1
	is "$?" 122 "${f#"$FX"/}: 122 after one run"
	like "$(st fatal$n open_reason)" '^fatal: (auth|billing)$' \
	    "${f#"$FX"/}: $(st fatal$n open_reason)"
done
is "$(st fatal12 last_error.message)" \
    "API Error: 401 Incorrect API key provided: sk-mock-******************-key. You can find your API key at https://platform.openai.com/account/api-keys." \
    "Qwen's exit-0 [API Error: 401 ...] result: the structured message"
FIX=$C/success-text cb --name fatal1 -- claude -p x >/dev/null 2>&1
is "$?" 120 "after a bad key the circuit stays OPEN"

# --- transient errors: never the same error, never STUCK ----------------
for f in $C/429-text $C/529-stream-json $C/500-json $C/refused-text \
    $X/429-json $X/503-plain $X/refused-json $G/429-stream-json \
    $G/503-text $G/500-json $G/refused-text $Q/429-stream-json \
    $Q/529-json $O/429-json $O/529-plain; do
	c=${f%/*}; c=${c##*/}; c=${c%%-*}
	codes=
	for i in 1 2 3 4 5 6; do
		FIX=$f cb -q --name tr --same-error-threshold 2 \
		    --max-consecutive-errors 99 -- "$c" -p x >/dev/null 2>&1
		codes="$codes $?"
	done
	ok "$(case $codes in *12[0-2]*) echo 1 ;; *) echo 0 ;; esac)" \
	    "${f#"$FX"/}: six runs, never OPEN or STUCK ($codes)"
	is "$(st tr same_error_count)/$(st tr last_error.class)" "0/transient" \
	    "${f#"$FX"/}: transient $(st tr last_error.type), not the same error"
	rm -f "$CBEXEC_STATE_DIR/tr.json"
done
for f in 429 529 500 refused; do
	FIX=$C/$f-text cb -q --name diff --log diff.log -- claude >/dev/null 2>&1
done
is "$(perl -MJSON::PP -ne 'print decode_json($_)->{error_hash} // "", "\n"' \
    diff.log | sort -u | grep -c '^[0-9a-f]\{64\}$')" 4 \
    "four different errors, four fingerprints"
is "$(st diff last_error.message)" "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)" \
    "the message is the client's own, not 'exited with status 1'"

# --- exit 0 with an error inside is no success ---------------------------
FIX=$Q/429-json cb -q --name q0 -- qwen -p x >/dev/null 2>&1
is "$?" 1 "Qwen's [API Error: 429] result with exit 0: exits 1, never 0 (SPEC §11)"
is "$(st q0 last_error.type)/$(st q0 consecutive_errors)" "rate_limited/1" \
    "...but the run counts as a rate limit, not a success"

# --- a usage limit with a reset time -------------------------------------
# A client that hits its limit, resetting at $RESET, the first time it
# runs and until then; after it, it succeeds.
cat >bin/limited <<'EOF'
#!/bin/sh
if [ ! -e "$LOG.first" ] || [ "$(date +%s)" -lt "$RESET" ]; then
	: >"$LOG.first"
	printf '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":%s,"rateLimitType":"five_hour"}}\n' "$RESET"
	printf '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"api_error":"usage_limit_reached","result":"You'"'"'ve hit your 5-hour limit · resets soon","session_id":"s-lim"}\n'
	exit 1
fi
echo "ran after the reset" >>"$LOG"
printf '{"type":"result","subtype":"success","is_error":false,"result":"done\\n---RALPH_STATUS---\\nSTATUS: COMPLETE\\nEXIT_SIGNAL: true\\n---END_RALPH_STATUS---","session_id":"s-ok"}\n'
EOF
chmod +x bin/limited
export LOG=$SCRATCH/limited.log
# Far off: refused before it, and said so.
RESET=$(( $(date +%s) + 3600 ))
RESET=$RESET cb --agent claude --name lim -- limited >/dev/null 2>err
is "$?" 120 "usage limit: 120"
is "$(st lim state)" OPEN "usage limit: OPEN"
retry=$(date -u -d "@$RESET" +%Y-%m-%dT%H:%M:%S.000Z)
is "$(st lim retry_at)" "$retry" "retry_at is the reset time, ISO-8601"
at=$(( (RESET + 59) / 60 * 60 ))
day=
[ "$(date -u -d "@$at" +%F)" = "$(date -u +%F)" ] || day="$(LC_ALL=C date -u -d "@$at" +%a) "
is "$(st lim open_reason)" "usage limit until $day$(date -u -d "@$at" +%H:%M) UTC" \
    "reason: usage limit until HH:MM UTC (its weekday when not today)"
like "$(cat err)" 'RETRY_AT: .*\(in [0-9hms]+\)' "the OPEN block says when"
RESET=$RESET cb --agent claude --name lim -- limited >/dev/null 2>err
is "$?" 120 "before the reset time: refused, 120"
is "$(wc -l <err | tr -d ' ')" 1 "...in one line"
like "$(cat err)" 'circuit is OPEN: usage limit until ([A-Z][a-z]{2} )?[0-9:]+ UTC \(retry in [0-9hms]+\); not running' \
    "...saying when it retries"
RESET=$RESET cb -q --agent claude --name lim -- limited >/dev/null 2>err
is "$?/$(cat err)" "120/" "...silent under -q"
ok "$(test ! -e "$LOG"; echo $?)" "the command did not run"
"$CBEXEC" --status --name lim >out; is "$?" 120 "--status: 120"
like "$(cat out)" "^retry at: +$retry \\(in [0-9hms]+\\)$" "--status: retry at ... (in ...)"
is "$("$CBEXEC" --status --json --name lim | perl -MJSON::PP -0777 -ne 'print decode_json($_)->{retry_at}')" \
    "$retry" "--status --json carries retry_at"
# Near: at or after it, a trial without an operator.
# (A reset time passed before cbexec reads it is none: the lead is what
# a slow run -- valgrind's -- cannot outlast.)
rm -f "$LOG.first"
lead=4; [ -n "$UNDER_VALGRIND" ] && lead=12
RESET=$(( $(date +%s) + lead ))
RESET=$RESET cb --agent claude --name trial -- limited >/dev/null 2>&1
is "$?/$(st trial state)" "120/OPEN" "a usage limit that resets in ${lead}s: OPEN"
poll_until 30 sh -c "[ \$(date +%s) -gt $RESET ]"
RESET=$RESET cb --agent claude --name trial -- limited >/dev/null 2>err
is "$?" 0 "at the reset time: a trial runs without an operator, and succeeds"
is "$(st trial state)/$(st trial retry_at)" "CLOSED/null" "CLOSED, retry_at null"
like "$(cat err)" 'OPEN -> HALF_OPEN: Retry time reached' "logged as a trial"
is "$(st trial session_id)" s-ok "the session of the last run is kept"

# --loop sleeps until the reset time when the budget allows, and goes on.
rm -f "$LOG" "$LOG.first"
t0=$(date +%s%N)
RESET=$(( $(date +%s) + 2 )) cb -q --loop --budget 20s --agent claude \
    --name loop -- limited >/dev/null 2>&1
is "$?" 0 "--loop: waits out the usage limit, then COMPLETE ends it"
is "$(cat "$LOG" 2>/dev/null)" "ran after the reset" "...the second run came after the reset"
is "$(st loop iteration)" 2 "...in two runs"
rm -f "$LOG.first"
RESET=$(( $(date +%s) + 3600 )) cb -q --loop --budget 5s --agent claude \
    --name loop2 -- limited >/dev/null 2>&1
is "$?" 120 "--loop: a reset past the budget exits 120 at once"
ok "$([ $(( ($(date +%s%N) - t0) / 1000000000 )) -lt 15 ]; echo $?)" \
    "...without waiting for it"

# A usage limit without a time: 5 minutes, or --cooldown.
FIX=$Q/usage_limit-json cb -q --name nt -- qwen -p x >/dev/null 2>&1
is "$?" 120 "usage limit without a time: 120"
like "$("$CBEXEC" --status --name nt)" 'retry at: .*\(in (5m|4m5[0-9]s)\)' \
    "...retry in 5 minutes"
FIX=$X/usage_limit-json cb -q --name cx -- codex exec x >/dev/null 2>&1
is "$(st cx state)/$(st cx last_error.type)" OPEN/usage_limit \
    "Codex's usage limit opens the circuit"
at=$(sed -n 's/.*try again at \([0-9:]* [AP]M\)\..*/\1/p' "$X/usage_limit-json.stdout" |
    head -1)
like "$(st cx open_reason)" "^usage limit until ([A-Z][a-z]{2} )?$(date -u -d "$at" +%H:%M) UTC" \
    "...until 'try again at $at.' in local time"

# A rate limit's retry-after lengthens the pause of a loop.
cat >bin/opencode <<'EOF'
#!/bin/sh
n=$(cat "$CNT" 2>/dev/null || echo 0); echo $((n + 1)) >"$CNT"
date +%s%N >>"$CNT.times"
printf '{"type":"error","sessionID":"ses_1","error":{"name":"APIError","data":{"message":"rate limited","statusCode":429,"isRetryable":true,"responseHeaders":{"retry-after":"1"}}}}\n'
exit 1
EOF
chmod +x bin/opencode
CNT=$SCRATCH/cnt cb -q --loop -n 2 --name ra -- opencode run x >/dev/null 2>&1
is "$?" 1 "two rate-limited runs: the command's own status"
gap=$(awk 'NR == 1 { a = $1 } NR == 2 { printf "%d", ($1 - a) / 1000000 }' \
    "$SCRATCH/cnt.times")
ok "$([ "$gap" -ge 1000 ]; echo $?)" "retry-after: 1 makes the loop wait at least 1s (${gap}ms)"
rm -f bin/opencode
cp bin/claude bin/opencode

# --- cut short while the client retried ---------------------------------
cat >bin/retrying <<'EOF'
#!/bin/sh
case $MODE in
claude) printf '{"type":"system","subtype":"init","session_id":"s-r"}\n{"type":"system","subtype":"api_retry","attempt":3,"max_retries":10,"retry_delay_ms":4000,"error_status":529,"error":"overloaded"}\n' ;;
codex) echo 'ERROR: Reconnecting... waiting for network' >&2 ;;
gemini) printf 'Attempt 2 failed: You exceeded your current quota. Retrying after 12708ms...\n' >&2 ;;
qwen) printf '[qwen-code] Waiting for API capacity... attempt 2, retry in 60s\n' >&2 ;;
esac
exec sleep 10
EOF
chmod +x bin/retrying
for m in claude:overloaded codex:network gemini:rate_limited \
    qwen:rate_limited none:timeout; do
	MODE=${m%:*} cb -q -t 0.8 -k 0.2 --agent "${m%:*}" --name rt${m%:*} \
	    -- retrying >/dev/null 2>&1
	is "$?/$(st rt${m%:*} last_error.type)" "124/${m#*:}" \
	    "timed out while ${m%:*} retried: ${m#*:}"
done

# --- status blocks in every format; COMPLETE ends a loop ------------------
for f in $G/complete-stream-json $G/complete-json $G/complete-text \
    $C/complete-stream-json $X/complete-json $Q/complete-json \
    $O/complete-json; do
	c=${f%/*}; c=${c##*/}; c=${c%%-*}
	FIX=$f cb -q --loop --budget 30s --name done -- "$c" -p x >/dev/null 2>&1
	is "$?/$(st done iteration)" "0/1" "${f#"$FX"/}: COMPLETE ends the loop"
	rm -f "$CBEXEC_STATE_DIR/done.json"
done
# The block is the assistant's: one in the prompt Gemini echoes is not.
cat >bin/gemini <<'EOF'
#!/bin/sh
echo '{"type":"init","session_id":"g-1","model":"m"}'
echo '{"type":"message","role":"user","content":"End with ---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_RALPH_STATUS---"}'
for d in 'Working.\n\n---RAL' 'PH_STATUS---\nSTATUS: IN_PRO' 'GRESS\nTASK: 7\n---END_RALPH_' 'STATUS---'; do
	printf '{"type":"message","role":"assistant","content":"%s","delta":true}\n' "$d"
done
echo '{"type":"result","status":"success","stats":{"input_tokens":1}}'
EOF
chmod +x bin/gemini
cb -q --loop -n 2 --name gp -- gemini -p x >/dev/null 2>&1
is "$?/$(st gp iteration)/$(st gp last_failed_task)" "0/2/null" \
    "Gemini: the prompt's COMPLETE does not end the loop, the deltas' block is read"
rm -f bin/gemini
cp bin/claude bin/gemini

# --- continuity: CBEXEC_SESSION_ID and CBEXEC_LAST_ERROR -----------------
cat >bin/cont <<'EOF'
#!/bin/sh
printf '%s|%s\n' "${CBEXEC_SESSION_ID-unset}" "$CBEXEC_LAST_ERROR" >>"$LOG"
n=$(wc -l <"$LOG")
printf '{"type":"result","is_error":true,"api_error_status":429,"result":"API Error: Request rejected (429) · slow down","session_id":"sess-%s"}\n' "$n"
exit 1
EOF
chmod +x bin/cont
export LOG=$SCRATCH/cont.log
cb -q -n 2 --agent claude --name cont -- cont >/dev/null 2>&1
is "$(sed -n 1p "$LOG")" "unset|" "the first run has no session"
is "$(sed -n 2p "$LOG")" "sess-1|rate_limited: API Error: Request rejected (429) · slow down" \
    "the next run: CBEXEC_SESSION_ID and the last result's error"
cb -q --agent claude --name cont -- cont >/dev/null 2>&1
like "$(sed -n 3p "$LOG")" '^sess-2\|' "...also in the next invocation"

# --- which agent ----------------------------------------------------------
f=$C/401-text
FIX=$f cb -q --name w1 -- env A=1 claude -p x >/dev/null 2>&1
is "$?" 122 "detected through env"
FIX=$f cb -q --name w2 -- sh -c 'cd . && claude -p "$0"' x >/dev/null 2>&1
is "$?" 122 "detected through sh -c"
FIX=$f cb -q --name w3 -- npx -y @anthropic-ai/claude-code -p x >/dev/null 2>&1
is "$?" 122 "detected through npx"
FIX=$f cb -q --agent none --name w4 -- claude -p x >/dev/null 2>&1
is "$?/$(st w4 last_error.type)" "1/unknown" "--agent none: stdout is not read"
cp bin/claude bin/step.sh
FIX=$f cb -q --agent claude --name w5 -- step.sh >/dev/null 2>&1
is "$?" 122 "--agent claude for a script"
printf '{"agent":"none"}\n' >c.json
FIX=$f cb -q --config c.json --name w6 -- claude -p x >/dev/null 2>&1
is "$?" 1 "config key agent"
cb --agent aider -- true 2>err
is "$?" 125 "an unknown agent: 125"
like "$(cat err)" "^cbexec: unknown agent 'aider' for --agent \\(claude, codex, gemini, qwen, opencode, pi, copilot, cn, kilo or none\\)$" \
    "...naming the known ones"
cb -q --name w7 -- sh -c 'echo "Invalid API key"; exit 1' >/dev/null 2>&1
is "$?/$(st w7 last_error.type)" "1/unknown" \
    "another command's stdout is not classified"

# --- the demo's TypeError is a runtime_error ------------------------------
cb --name demo -- sh "$TOP/demo/agent.sh" >/dev/null 2>err
like "$(cat err)" "recoverable runtime_error: .*TypeError: Cannot read property 'x' of undefined" \
    "the demo: runtime_error, not build_error"

done_testing
