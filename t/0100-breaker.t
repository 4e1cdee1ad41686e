#!/bin/sh
# SPDX-License-Identifier: ISC
# The breaker as a user sees it across cron-style invocations (SPEC §4).
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" -q --no-prompt --name nightly --progress exit "$@"; }
ST="$CBEXEC_STATE_DIR/nightly.json"

cb -- false; is "$?" 1 "run 1 fails: its own status"
is "$(jget "$ST" state)" CLOSED "one no-progress run: CLOSED"
cb -- false; is "$?" 1 "run 2 fails"
is "$(jget "$ST" state)" HALF_OPEN "two no-progress runs: HALF_OPEN"
is "$(jget "$ST" no_progress_count)" 2 "no_progress_count 2"
cb -- false; is "$?" 120 "third no-progress run trips: 120"
is "$(jget "$ST" state)" OPEN "state OPEN"
is "$(jget "$ST" outcome)" OPEN "outcome OPEN"
is "$(jget "$ST" total_opens)" 1 "total_opens 1"
like "$(jget "$ST" opened_at)" '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z$' "opened_at is ISO-8601 with ms"
cb -- touch ran 2>err; is "$?" 120 "OPEN refuses: 120"
ok "$(test ! -e ran; echo $?)" "OPEN: the command did not run"
"$CBEXEC" --no-prompt --name nightly --progress exit -- touch ran 2>err
like "$(cat err)" "reset-circuit --name nightly" "refusal says how to reset"
is "$(jget "$ST" iteration)" 3 "refusal moves no counter"
"$CBEXEC" --status --name nightly > status; is "$?" 120 "--status on OPEN: 120"
like "$(cat status)" "OPEN" "--status shows OPEN"
"$CBEXEC" --status --json nightly > sj; is "$?" 120 "--status --json CIRCUIT: 120"
is "$(jget sj state)" OPEN "--status --json prints the state object"
"$CBEXEC" --reset-circuit --name nightly --reason "fixed it" 2>/dev/null; is "$?" 0 "--reset-circuit: 0"
is "$(jget "$ST" state)" CLOSED "reset: CLOSED"
is "$(jget "$ST" no_progress_count)" 0 "reset: counters 0"
is "$(jget "$ST" total_opens)" 1 "reset keeps total_opens"
is "$(jget "$ST" opened_at)" null "reset: opened_at null"
"$CBEXEC" --history --json --name nightly > hist
like "$(jcompact hist)" '"event":"reset"' "history has the reset event"
like "$(jcompact hist)" 'fixed it' "reset event keeps the reason"
"$CBEXEC" --status --name nightly >/dev/null; is "$?" 0 "--status on CLOSED: 0"

# HALF_OPEN + progress -> CLOSED.
cb -- false; cb -- false
is "$(jget "$ST" state)" HALF_OPEN "HALF_OPEN again"
cb -- true; is "$?" 0 "progress run: 0"
is "$(jget "$ST" state)" CLOSED "HALF_OPEN + progress: CLOSED"

# The same error five times: STUCK (121), even as time and pids change.
"$CBEXEC" --reset-circuit --name nightly 2>/dev/null
i=0
while [ $i -lt 4 ]; do
	i=$((i + 1))
	cb --no-progress-threshold 50 --max-consecutive-errors 50 -- sh -c 'echo "Error: connection to db failed at $(date +%H:%M:%S.%N) pid $$" >&2; exit 1'
done
is "$(jget "$ST" same_error_count)" 4 "same error counted across runs"
cb --no-progress-threshold 50 --max-consecutive-errors 50 -- sh -c 'echo "Error: connection to db failed at $(date +%H:%M:%S.%N) pid $$" >&2; exit 1'
is "$?" 121 "fifth same error: STUCK 121"
is "$(jget "$ST" outcome)" STUCK "outcome STUCK"
like "$(jget "$ST" last_error_hash)" '^[0-9a-f]{64}$' "last_error_hash is 64 hex digits"
cb -- true; is "$?" 120 "after STUCK: refused with 120"

# Different errors don't accumulate.
"$CBEXEC" --reset-circuit --name nightly 2>/dev/null
for w in alpha beta gamma delta epsilon; do
	cb --no-progress-threshold 50 --max-consecutive-errors 50 -- sh -c "echo 'Error: $w broke' >&2; exit 1"
done
is "$(jget "$ST" same_error_count)" 1 "different errors: same_error_count 1"
is "$(jget "$ST" consecutive_errors)" 5 "different errors: consecutive 5"

# Consecutive errors trip OPEN even with progress.
"$CBEXEC" --reset-circuit --name nightly 2>/dev/null
for w in a b c d; do
	"$CBEXEC" -q --no-prompt --name nightly --progress files --watch . -- sh -c "echo $w > f.$w; echo 'Error: $w' >&2; exit 1"
done
"$CBEXEC" -q --no-prompt --name nightly --progress files --watch . -- sh -c "echo e > f.e; echo 'Error: e' >&2; exit 1"
is "$?" 120 "5 consecutive errors with progress: OPEN 120"
like "$(jget "$ST" open_reason)" "consecutive" "reason names consecutive errors"

# Fatal: 122, then 120 next time.
"$CBEXEC" --reset-circuit --name nightly 2>/dev/null
cb -- sh -c 'echo "open(/etc/x): Permission denied" >&2; exit 1'; is "$?" 122 "fatal class: 122"
is "$(jget "$ST" open_reason)" "fatal: permission_denied" "fatal opens with reason fatal: TYPE"
cb -- true; is "$?" 120 "after fatal: 120"

# --trip and --exit-codes.
"$CBEXEC" --reset-circuit --name nightly 2>/dev/null
"$CBEXEC" --trip --name nightly --reason "deploy freeze" 2>/dev/null; is "$?" 0 "--trip: 0"
is "$(jget "$ST" open_reason)" "tripped by operator: deploy freeze" "--trip reason"
cb --exit-codes open=90 -- true; is "$?" 90 "--exit-codes open=90 remaps refusal"
cb --cooldown 0.01 -- true; is "$?" 120 "a tripped circuit ignores --cooldown"

# Cooldown: OPEN -> HALF_OPEN trial; a failed trial re-opens.
"$CBEXEC" --reset-circuit --name nightly 2>/dev/null
cb --no-progress-threshold 1 --half-open-after 1 -- false; is "$?" 120 "threshold 1: OPEN at once"
"$CBEXEC" --history --json --name nightly > hist
like "$(jcompact hist)" '"from_state":"CLOSED"[^}]*"to_state":"HALF_OPEN"' "CLOSED -> HALF_OPEN recorded"
like "$(jcompact hist)" '"from_state":"HALF_OPEN"[^}]*"to_state":"OPEN"' "HALF_OPEN -> OPEN recorded"
sleep 0.3
cb --cooldown 0.2 --no-progress-threshold 1 --half-open-after 1 -- false; is "$?" 120 "failed trial: OPEN again"
is "$(jget "$ST" cooldown)" 0.4 "failed trial doubles the cooldown"
sleep 0.5
cb --cooldown 0.2 -- true; is "$?" 0 "successful trial after the doubled cooldown"
is "$(jget "$ST" state)" CLOSED "successful trial closes"
is "$(jget "$ST" opened_at)/$(jget "$ST" open_reason)" null/null "a closed circuit keeps no opened_at or open_reason"

# Environment and phase thresholds, CLI over env.
"$CBEXEC" --reset-circuit --name nightly 2>/dev/null
CB_NO_PROGRESS_THRESHOLD=2 cb -- false; CB_NO_PROGRESS_THRESHOLD=2 cb -- false
is "$?" 120 "CB_NO_PROGRESS_THRESHOLD=2 trips at 2"
"$CBEXEC" --reset-circuit --name nightly 2>/dev/null
CB_NO_PROGRESS_THRESHOLD=2 cb --no-progress-threshold 4 -- false
CB_NO_PROGRESS_THRESHOLD=2 cb --no-progress-threshold 4 -- false
is "$?" 1 "CLI beats the environment"
"$CBEXEC" --reset-circuit --name nightly 2>/dev/null
cb --phase green -- false; cb --phase GREEN -- false; is "$?" 120 "GREEN trips at 2 no-progress runs"
is "$(jget "$ST" phase)" GREEN "phase stored"
"$CBEXEC" --reset-circuit --name nightly 2>/dev/null
echo '{"no_progress_threshold": 4}' > thr.json
CB_NO_PROGRESS_THRESHOLD=2 cb -c thr.json -- false; CB_NO_PROGRESS_THRESHOLD=2 cb -c thr.json -- false; is "$?" 120 "env beats the config file"
"$CBEXEC" --reset-circuit --name nightly 2>/dev/null
cb -c thr.json --phase GREEN -- false; cb -c thr.json --phase GREEN -- false; is "$?" 1 "config beats the phase table"
rm thr.json

# --ok-exit-codes and --ignore-exit-codes.
"$CBEXEC" --reset-circuit --name nightly 2>/dev/null
cb --ok-exit-codes 0,75 -n 4 -- sh -c 'exit 75'; is "$?" 75 "ok exit code keeps its own status"
is "$(jget "$ST" state)" CLOSED "ok exit codes count as success"
it=$(jget "$ST" iteration)
cb --ignore-exit-codes 3 -n 4 -- sh -c 'exit 3'; is "$?" 3 "ignored exit code passes through"
is "$(jget "$ST" no_progress_count)" 0 "ignored runs move no counter"
is "$(jget "$ST" iteration)" $((it + 4)) "ignored runs still count in iteration"
"$CBEXEC" --no-prompt --name nightly --progress exit --ignore-exit-codes 3 -- sh -c 'exit 3' 2>err
like "$(cat err)" "run [0-9]+ exited 3 after [0-9.]+s: ignored \(--ignore-exit-codes\)" "an ignored run's log line says so"
cb --ignore-exit-codes 127 -- sh -c 'echo "x: command not found" >&2; exit 127' 2>/dev/null
is "$?" 127 "an ignored code is never fatal: its own status, not 122"
is "$(jget "$ST" state)" CLOSED "an ignored code is never fatal: the circuit stays closed"
done_testing
