#!/bin/sh
# SPDX-License-Identifier: ISC
# Loops inside a run (SPEC §4, §9): an agent that makes the same tool call
# --max-repeat-calls times in a row (default 5, 0 off) with the same
# results (or, in a stream that shows none, the calls alone; SPEC §10)
# is stopped as on a timeout, class recoverable, type loop, the
# message naming the call; its fingerprint is the same error each time,
# so runs that loop the same way make the circuit STUCK.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/fakeagent.sh"

cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }
st() { jget "$CBEXEC_STATE_DIR/$1.json" "$2"; }

N=50 DELAY=0.05 CMD="ls /tmp" PIDFILE=$SCRATCH/pid cb --name loop -- \
    claude -p x >out 2>err
is "$?" 124 "the same tool call 5 times: stopped, exit 124"
is "$(st loop last_error.class)/$(st loop last_error.type)" recoverable/loop \
    "class recoverable, type loop"
is "$(st loop last_error.message)" \
    'the same tool call 5 times in a row: Bash {"command":"ls /tmp"}' \
    "the message names the call"
is "$(wc -l <out | tr -d ' ')" 5 "stopped at the fifth call"
ok "$(dead "$(cat pid)" && echo 0 || echo 1)" "the agent is gone"
like "$(cat err)" 'run 1 was stopped after .*: recoverable loop: ' "the log line"

N=8 CMD="sed -n 1,10p f" cb --name num --max-repeat-calls 3 -- claude -p x \
    >/dev/null 2>&1
is "$?/$(st num last_error.type)" 124/loop "--max-repeat-calls 3"
N=8 cb --name varied --max-repeat-calls 3 -- claude -p x >/dev/null 2>&1
is "$?" 0 "different calls are no loop"
N=8 CMD=ls cb --name off --max-repeat-calls 0 -- claude -p x >/dev/null 2>&1
is "$?" 0 "--max-repeat-calls 0: off"
N=8 CMD=ls cb --name codex -- codex exec --json x >/dev/null 2>&1
is "$?/$(st codex last_error.type)" 124/loop "Codex's command executions too"

# The next runs that loop the same way: the same error, then STUCK.
N=20 CMD=make cb --name stuck --same-error-threshold 2 -- claude -p x \
    >/dev/null 2>&1
r1=$? h1=$(st stuck last_error_hash)
N=20 CMD=make cb --name stuck --same-error-threshold 2 -- claude -p x \
    >/dev/null 2>&1
r2=$?
is "$r1/$r2" 124/121 "the same loop twice: STUCK (121)"
is "$(st stuck last_error_hash)" "$h1" "the same fingerprint both times"
is "$(st stuck same_error_count)/$(st stuck outcome)" 2/STUCK "same_error_count 2, outcome STUCK"
N=20 CMD=make cb --name stuck2 --loop -n 5 --same-error-threshold 3 -- \
    claude -p x >/dev/null 2>&1
is "$?/$(st stuck2 iteration)" 121/3 "--loop: the loops go on until STUCK"
done_testing
