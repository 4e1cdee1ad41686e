#!/bin/sh
# SPDX-License-Identifier: ISC
# A command that stops its supervisor (kill -STOP $PPID) cannot outlive
# --timeout, --budget or --kill-after (SPEC §11, "Every wait is bounded"):
# the watchdog, which no signal aimed at cbexec reaches, keeps the run's
# deadlines and ends the command's group when they pass; cbexec, once
# continued, records the run as the timeout it was (124).  A helper that
# stops cbexec dies by the budget's end.  Meanwhile the circuit stays
# locked (a second cbexec is BUSY), and is free again after.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }
# bcb ARGS... &: the same in the background, $! being cbexec itself.
bcb() { exec "$CBEXEC" --no-prompt --progress exit "$@"; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }
# gone PID: no such process, or only its zombie (cbexec, stopped, is the
# subreaper that would reap it).
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(ps -o stat= -p "$1" | cut -c1)" = Z ]; }
stopped() { [ "$(ps -o stat= -p "$1" | cut -c1)" = T ]; }
# by T0 LIMIT DESC: less than LIMIT ms since T0; not judged under valgrind.
by() {
	_e=$(( $(ms) - $1 ))
	if [ -n "$UNDER_VALGRIND" ]; then skip "timing under valgrind: $3"
	else ok "$([ "$_e" -lt "$2" ]; echo $?)" "$3 (${_e} ms)"; fi
}
# The slack a loaded machine gets on each deadline.
SLACK=1500

# --- -t 1 -T 3: the command stops cbexec, then sleeps.
rm -f c.pid
t0=$(ms)
bcb --name st -t 1 -T 3 -- sh -c 'echo $$ >c.pid; kill -STOP $PPID; exec sleep 30' \
    >out 2>err & p=$!
poll_until 10 test -s c.pid
c=$(cat c.pid)
poll_until 10 stopped "$p"; ok $? "the command stopped cbexec"
poll_until 10 gone "$c"; ok $? "... and is ended all the same"
by "$t0" $((1000 + SLACK)) "... by --timeout (1s)"
ok "$(stopped "$p"; echo $?)" "... while cbexec is still stopped"
err=$(cb --name st -- true 2>&1); rc=$?
is "$rc" 123 "meanwhile the circuit is held: a second cbexec is BUSY"
kill -CONT "$p"
wait "$p"; rc=$?
is "$rc" 124 "cbexec, once continued, exits 124"
like "$(cat err)" "run 1 timed out after" "... saying the run timed out"
is "$(jget "$CBEXEC_STATE_DIR/st.json" last_error.type)/$(jget "$CBEXEC_STATE_DIR/st.json" outcome)" \
    timeout/TIMEOUT "... and the state records a timeout"
cb -q --name st -- true; is "$?" 0 "the circuit is free again afterwards"

# --- a command that ignores the signal: SIGKILL after --kill-after.
rm -f c.pid
t0=$(ms)
bcb --name ka -t 1 -k 1 -- sh -c 'echo $$ >c.pid; trap "" TERM; kill -STOP $PPID
    while :; do sleep 0.1; done' >out 2>err & p=$!
poll_until 10 test -s c.pid
c=$(cat c.pid)
poll_until 10 gone "$c"; ok $? "a command that ignores SIGTERM: ended"
by "$t0" $((2000 + SLACK)) "... by --timeout + --kill-after (1s + 1s)"
kill -CONT "$p"; wait "$p"; is "$?" 124 "... and cbexec exits 124"

# --- --signal 0: only --kill-after ends it, as timeout -s0.
rm -f c.pid
t0=$(ms)
bcb --name s0 -t 1 -k 1 -s 0 -- sh -c 'echo $$ >c.pid; kill -STOP $PPID; exec sleep 30' \
    >out 2>err & p=$!
poll_until 10 test -s c.pid
poll_until 10 gone "$(cat c.pid)"; ok $? "--signal 0: ended by --kill-after"
by "$t0" $((2000 + SLACK)) "... (1s + 1s)"
kill -CONT "$p"; wait "$p"; is "$?" 124 "... 124"

# --- the budget: -T 2 under a longer --timeout.
rm -f c.pid
t0=$(ms)
bcb --name bu -t 30 -T 2 -- sh -c 'echo $$ >c.pid; kill -STOP $PPID; exec sleep 30' \
    >out 2>err & p=$!
poll_until 10 test -s c.pid
poll_until 10 gone "$(cat c.pid)"; ok $? "-T 2: ended by the budget"
by "$t0" $((2000 + SLACK)) "... in 2s"
kill -CONT "$p"; wait "$p"; is "$?" 124 "... 124 once continued"
like "$(cat err)" "the --budget of 2s ran out" "... saying the budget ran out"

# --- a process that left the group: cbexec, continued, ends it too.
rm -f c.pid d.pid
bcb --name ds -t 1 -T 4 -- sh -c 'echo $$ >c.pid; setsid sh -c "echo \$\$ >d.pid; exec sleep 30" &
    sleep 0.2; kill -STOP $PPID; exec sleep 30' >out 2>err & p=$!
poll_until 10 test -s d.pid
poll_until 10 gone "$(cat c.pid)"; ok $? "with a daemon of its own: the command is ended"
kill -CONT "$p"; wait "$p"; is "$?" 124 "... cbexec exits 124"
poll_until 5 gone "$(cat d.pid)"; ok $? "... and the daemon is gone too"

# --- a hook that stops cbexec dies by the budget's end.
rm -f h.pid
t0=$(ms)
bcb --name hk -T 2 -k 60 --half-open-after 1 \
    --on-state-change 'echo $$ >h.pid; kill -STOP $PPID; exec sleep 30' -- false \
    >out 2>err & p=$!
poll_until 10 test -s h.pid
poll_until 10 gone "$(cat h.pid)"; ok $? "a hook that stops cbexec: ended"
by "$t0" $((2000 + SLACK)) "... by the budget (-T 2)"
kill -CONT "$p"; wait "$p"; rc=$?
is "$rc" 1 "... and cbexec goes on: the run's own exit status"
like "$(cat err)" "hook (killed|timed out)" "... saying the hook was killed"

# --- a command that stops cbexec and exits before the deadline: its own
# exit status, though cbexec is continued only after the deadline.
t0=$(ms)
bcb --name ex -t 1 -T 3 -- sh -c 'kill -STOP $PPID; exit 3' >out 2>err & p=$!
poll_until 10 stopped "$p"
sleep 2
kill -CONT "$p"; wait "$p"; rc=$?
is "$rc" 3 "the command exited (3) before the deadline: its status, not 124"
is "$(jget "$CBEXEC_STATE_DIR/ex.json" outcome)" EXIT "... and the state says so"

# --- stopped by the operator with no deadline near: nothing happens.
rm -f c.pid
bcb --name op -t 20 -- sh -c 'echo $$ >c.pid; exec sleep 1' >out 2>err & p=$!
poll_until 10 test -s c.pid
kill -STOP "$p"
sleep 1.2
kill -CONT "$p"; wait "$p"; is "$?" 0 "cbexec stopped and continued with no deadline passed: the run's own 0"
done_testing
