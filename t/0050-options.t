#!/bin/sh
# SPDX-License-Identifier: ISC
# --capture-bytes and --backoff: what the classifier sees, and the pause
# after failed runs (doubling, never past the budget).
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" -q --no-prompt --progress exit --no-progress-threshold 99 --max-consecutive-errors 99 "$@"; }
noise='echo "SyntaxError: unexpected token" >&2; i=0; while [ $i -lt 20 ]; do echo "x$i" >&2; i=$((i+1)); done; exit 1'

cb --state c1.json -- sh -c "$noise" 2>/dev/null
is "$(jget c1.json last_error.type)" syntax_error "default capture keeps the early error line"
cb --state c2.json --capture-bytes 40 -- sh -c "$noise" 2>/dev/null
is "$(jget c2.json last_error.type)" unknown "--capture-bytes 40 keeps only the tail"
is "$(jget c2.json last_error.message)" x19 "the message is the last stderr line"
cb --state c3.json --capture-bytes 1k -- sh -c "$noise" 2>/dev/null
is "$(jget c3.json last_error.type)" syntax_error "--capture-bytes 1k"
for bad in -1 1g 100m x; do
	cb --capture-bytes "$bad" -- true 2>/dev/null; is "$?" 125 "--capture-bytes $bad: 125"
done

# --backoff 0.2: waits about 0.2 then 0.4 (±20%) between three failures.
start=$(date +%s%N)
cb --state b1.json -n 3 --backoff 0.2 -- false; rc=$?
el=$(( ($(date +%s%N) - start) / 1000000 ))
is "$rc" 1 "--backoff: the last run's status"
ok "$([ "$el" -ge 450 ] && [ "$el" -lt 5000 ]; echo $?)" "--backoff doubles: 0.2 + 0.4 s (${el}ms)"
start=$(date +%s%N)
cb --state b2.json -n 3 --backoff 0.2:0.2 -- false
el=$(( ($(date +%s%N) - start) / 1000000 ))
ok "$([ "$el" -ge 300 ] && [ "$el" -lt 5000 ]; echo $?)" "--backoff D:MAX caps the pause (${el}ms)"
start=$(date +%s%N)
# A backoff of 2 s would make it at least 4.8 s (2 + 4, less 20%): well
# apart from three runs of true, even on a loaded machine.
cb --state b3.json -n 3 --backoff 2 -- true
el=$(( ($(date +%s%N) - start) / 1000000 ))
if [ -n "$UNDER_VALGRIND" ]; then
	skip "no backoff after successful runs: not timed under valgrind"
else
	ok "$([ "$el" -lt 4000 ]; echo $?)" "no backoff after successful runs (${el}ms)"
fi
start=$(date +%s%N)
cb --state b4.json -n 3 --backoff 10 --budget 0.3 -- false; rc=$?
el=$(( ($(date +%s%N) - start) / 1000000 ))
is "$rc" 124 "the budget runs out during a backoff: 124"
is "$(jget b4.json outcome)" TIMEOUT "the budget runs out during a backoff: the state says TIMEOUT"
ok "$([ "$el" -lt 3000 ]; echo $?)" "backoff never waits past the budget (${el}ms)"
cb --backoff 1s:0.5s -- true 2>/dev/null; is "$?" 125 "--backoff MAX below D: 125"
cb --backoff 1e3 -- true 2>/dev/null; is "$?" 125 "--backoff bad duration: 125"
done_testing
