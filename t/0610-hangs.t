#!/bin/sh
# SPDX-License-Identifier: ISC
# Never hang, never lose a signal (SPEC §2, §3): the drain to a reader
# that does not read is bounded, a stopped command is continued after the
# timeout signal, Ctrl-Z stops cbexec with its command, an interrupt while
# cbexec waits outside a run (the lock, --progress-cmd, git, the hook)
# acts at once, a kill -9 of cbexec leaves nothing of the run, and closed
# standard descriptors stay closed for the command.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }
# bg ARGS...: cbexec in the background as $! itself (not a subshell).
bg() { ( exec "$CBEXEC" -q --no-prompt --progress exit "$@" ) & }
ms() { echo $(( $(date +%s%N) / 1000000 )); }
# state PID: its process state letter, "gone" when there is none; a
# zombie (Z) no one reaps is dead all the same.
pstate() { s=$(sed 's/^.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null); echo "${s:-gone}"; }
gone() { s=$(pstate "$1"); [ "$s" = gone ] || [ "$s" = Z ]; }
# fast MS LIMIT DESC: MS under LIMIT; under valgrind no time is judged.
fast() {
	if [ -n "$UNDER_VALGRIND" ]; then skip "timing under valgrind: $3"
	else ok "$([ "$1" -lt "$2" ]; echo $?)" "$3 ($1 ms)"; fi
}
# How long cbexec needs to get going before a signal is meant for it.
settle=0.3; [ -n "$UNDER_VALGRIND" ] && settle=3

# --- The drain after the run is bounded by --kill-after (1 s here; the
# reader stops reading for 5 s, the bound between them).
t0=$(ms)
( cb --name dr -t 0.5 -k 0.5 -T 20 -- yes; echo "$? $(ms)" > dr.end ) | sleep 5
read -r rc t1 < dr.end
is "$rc" 124 "a reader that stops reading: still 124"
fast $((t1 - t0)) 4000 "... within the timeout and --kill-after, not at the reader's end"
t0=$(ms)
( cb --name dr -t 0.5 -k 0.5 -T 0 -- yes; echo "$? $(ms)" > dr.end ) | sleep 5
read -r rc t2 < dr.end
fast $((t2 - t0)) 4000 "... with no budget either"
# A slow reader that keeps reading gets every byte.
n=$(cb --name slow -t 10 -k 0.3 -- sh -c 'seq 1 200000' | (sleep 1; cat) | wc -l)
is "$n" 200000 "a slow reader still gets everything"

# --- A stopped command is continued after the timeout signal.
t0=$(ms)
cb --name st -t 0.3 -k 0 -T 5 -- sh -c 'kill -STOP $$'
is "$?" 124 "a stopped command times out"
fast $(( $(ms) - t0 )) 3000 "... at once, continued after the signal as timeout(1) does"

# --- Ctrl-Z at a terminal.
if command -v python3 >/dev/null 2>&1 && command -v bash >/dev/null 2>&1 &&
    [ -z "$UNDER_VALGRIND" ]; then
	out=$(timeout 30 python3 "$T_DIR/pty/ctrlz.py" "$CBEXEC" 2>&1)
	is "$(echo "$out" | sed -n 1p)" stopped "Ctrl-Z: the shell gets its prompt back, the job Stopped"
	is "$(echo "$out" | sed -n 2p)" not-early "... and the command stopped with it"
	is "$(echo "$out" | sed -n 3p)" finished "fg: the command goes on to its end"
	is "$(echo "$out" | sed -n 4p)" rc=0 "... and cbexec exits with its status"
else
	skip "no python3 or bash (or under valgrind): no pty"
	skip "pty"; skip "pty"; skip "pty"
fi

# (Each interrupt below comes once cbexec is where it is meant to be --
# the lock file open, the helper started -- and a moment more: a slow
# build on a loaded machine takes a while to get there.  "At once" is
# within 2 s where the wait would last 30.)
# --- An interrupt while cbexec waits for the lock: 122 at once, no run.
bg --name lk -- sh -c 'i=0
    while [ ! -e lk.go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done'
holder=$!
poll_until 10 test -e "$CBEXEC_STATE_DIR/lk.json.status"
bg --name lk --wait-lock -- touch ran-lk
w=$!
poll_until 20 sh -c 'ls -l /proc/$1/fd 2>/dev/null | grep -q "lk\.json\.lock"' sh "$w"
sleep $settle
t0=$(ms); kill -TERM "$w"; wait "$w"; rc=$?; t1=$(ms)
touch lk.go
is "$rc" 122 "SIGTERM during --wait-lock: 122"
fast $((t1 - t0)) 2000 "... at once"
ok "$(test -e ran-lk && echo 1 || echo 0)" "... and the command never started"
wait "$holder"
is "$(jget "$CBEXEC_STATE_DIR/lk.json" iteration)" 1 "... nor was a run counted"

# --- During --progress-cmd: 122 at once, no next run.
bg --name pc -l --progress cmd --progress-cmd "touch $SCRATCH/pc.started; sleep 30" -- true
w=$!
poll_until 20 test -e pc.started
sleep $settle
t0=$(ms); kill -INT "$w"; wait "$w"; rc=$?; t1=$(ms)
is "$rc" 122 "SIGINT during --progress-cmd: 122"
fast $((t1 - t0)) 2000 "... at once"
is "$(jget "$CBEXEC_STATE_DIR/pc.json" iteration)" 1 "... and no new run started"
is "$(jget "$CBEXEC_STATE_DIR/pc.json" outcome)" ABORT "... the state says ABORT"

# --- During the hook.
bg --name hk -l --half-open-after 1 --on-state-change "touch $SCRATCH/hk.started; sleep 30" -- false
w=$!
poll_until 20 test -e hk.started
sleep $settle
t0=$(ms); kill -HUP "$w"; wait "$w"; rc=$?; t1=$(ms)
is "$rc" 122 "SIGHUP during the hook: 122"
fast $((t1 - t0)) 2000 "... at once"
is "$(jget "$CBEXEC_STATE_DIR/hk.json" iteration)" 1 "... and no new run started"

# --- During git: a git that hangs (a slow repository) is interrupted.
mkdir -p slowgit/bin slowgit/.git
printf '#!/bin/sh\ntouch "%s/gt.started"\nexec sleep 30\n' "$SCRATCH" > slowgit/bin/git && chmod +x slowgit/bin/git
( cd slowgit && PATH="$SCRATCH/slowgit/bin:$PATH" exec "$CBEXEC" -q --no-prompt --name gt -- touch ran-gt ) &
w=$!
poll_until 20 test -e gt.started
sleep $settle
t0=$(ms); kill -TERM "$w"; wait "$w"; rc=$?; t1=$(ms)
is "$rc" 122 "SIGTERM while git runs: 122"
fast $((t1 - t0)) 2000 "... at once"
ok "$(test -e slowgit/ran-gt && echo 1 || echo 0)" "... and the command never started"

# --- kill -9 of cbexec: the run's processes die with it.
bg --name k9 -- sh -c 'sleep 300 & echo $! > k9.pid; wait'
w=$!
poll_until 10 test -s k9.pid
p=$(cat k9.pid)
kill -9 "$w"; wait "$w" 2>/dev/null
poll_until 10 gone "$p"; ok $? "kill -9 of cbexec: the command's child is gone too"
ok "$(test -e "$CBEXEC_STATE_DIR/k9.json.status"; echo $?)" "... its status file is left where the next run looks"
# The last run's watchdog is let go before the save; a hook after it runs
# under a new one.
bg --name hk9 --half-open-after 1 --on-state-change \
    'sleep 300 & echo $! > hk9.pid; wait' -- false
w=$!
poll_until 10 test -s hk9.pid
p=$(cat hk9.pid)
kill -9 "$w"; wait "$w" 2>/dev/null
poll_until 10 gone "$p"; ok $? "kill -9 of cbexec while the hook after the last run runs: the hook's child is gone too"
cb --name k9 -- true
ok "$(test -e "$CBEXEC_STATE_DIR/k9.json.status" && echo 1 || echo 0)" "... and the next run of the circuit removes it"
# Stale --metrics temp files of a killed writer (.NAME.tmp.XXXXXX, as
# every file cbexec replaces) go on the next write.
touch .m.prom.tmp.AbC123 .m.prom.tmp.other m.prom.other
cb --name k9 --metrics m.prom -- true
ok "$(test -e .m.prom.tmp.AbC123 && echo 1 || echo 0)" "a stale metrics temp file is removed"
ok "$(test -e m.prom.other && test -e .m.prom.tmp.other; echo $?)" "... nothing else beside it is"
# Nothing is left behind after a normal exit either.
cb --name gone -- true
ok "$(ls "$CBEXEC_STATE_DIR" | grep -c '^gone\.json\.status$' | grep -qx 0; echo $?)" \
    "no status file after a run"

# --- Started with fd 0, 1 or 2 closed.
cb --name fd -- sh -c 'if echo x; then echo open >&2; else echo closed >&2; fi' \
    >&- 2>fd.err
is "$(tail -n 1 fd.err)" closed "stdout closed: the command finds it closed"
# The lock file holds the start record of the last run and nothing else.
beside_record() { sed 's/^{"run":[0-9]*,[^}]*}$//' "$1" | tr -d ' \n'; }
is "$(beside_record "$CBEXEC_STATE_DIR/fd.json.lock")" "" "... and nothing went into the lock file"
cb --name fd -- sh -c 'echo oops >&2' 2>&-
is "$(beside_record "$CBEXEC_STATE_DIR/fd.json.lock")" "" "stderr closed: nothing in the lock file"
out=$(cb --name fd -- sh -c 'cat; echo "rc=$?"' <&- 2>/dev/null)
like "$out" "rc=[1-9]" "stdin closed: the command finds it closed"
done_testing
