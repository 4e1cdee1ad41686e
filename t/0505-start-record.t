#!/bin/sh
# SPDX-License-Identifier: ISC
# A run is on record before it starts (SPEC §11), on the file store: a
# cbexec killed during its run (kill -9, the OOM killer) has that run
# counted by the next invocation that takes the lock -- a run, --record or
# an operator verb -- as a failed run of type killed, one fingerprint, so
# a command that kills its supervisor every time ends STUCK.  A record
# that cannot be written starts nothing (125).  A successful run still
# makes two fsyncs (the durable save), no more.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }
ST=$CBEXEC_STATE_DIR

# ---- a command that kills its supervisor every time ends STUCK ----
killer='echo run >>runs; echo boom >&2; kill -9 $PPID; exit 1'
i=0
while [ $i -lt 5 ]; do
	i=$((i + 1))
	"$CBEXEC" --no-prompt --name k -- sh -c "$killer" 2>err.$i; rc=$?
	[ $rc = 137 ] || break
done
is "$i:$rc" "5:137" "five invocations, each killed by its own command (137)"
is "$(jget "$ST/k.json" iteration):$(jget "$ST/k.json" state)" "4:CLOSED" \
    "each counted the run before it: iteration 4, CLOSED"
is "$(jget "$ST/k.json" last_error.type):$(jget "$ST/k.json" last_error.class)" \
    "killed:recoverable" "the killed run is recoverable, type killed"
is "$(jget "$ST/k.json" last_error.message)" "cbexec was killed during run 4" \
    "its message names the run"
like "$(cat err.5)" "run 4 \(cbexec pid [0-9]+ on .*\) was never recorded: its cbexec was killed" \
    "the invocation says which run it counted"
"$CBEXEC" --no-prompt --name k -- sh -c "$killer" 2>err.6; rc=$?
is "$rc" 121 "the sixth counts the fifth: the same error 5 times, STUCK (121)"
is "$(wc -l <runs | tr -d ' ')" 5 "... and does not run the command again"
is "$(jget "$ST/k.json" state):$(jget "$ST/k.json" same_error_count)" "OPEN:5" \
    "the circuit is OPEN on the same error, 5 times"
like "$(cat err.6)" "Same error 5 times: cbexec was killed during run 5" \
    "the OPEN block says why"
"$CBEXEC" --no-prompt --name k -- sh -c "$killer" 2>/dev/null; rc=$?
is "$rc:$(wc -l <runs | tr -d ' ')" "120:5" "then it is refused (120), not run"
"$CBEXEC" --history k >hist
is "$(grep -c 'recoverable killed' hist)" 5 "--history shows the five killed runs"
is "$(jget "$ST/k.json" history.0.hash)" "$(jget "$ST/k.json" history.4.hash)" \
    "one fingerprint for all of them"
# Not one of them made the no-progress rule trip first: whether a killed
# run made progress was never seen.
is "$(jget "$ST/k.json" no_progress_count)" 0 "a killed run counts no no-progress"

# ---- the record is the lock file's, gone with the run's save ----
cb --name s -- sh -c 'head -c 100 "$1" >rec' sh "$ST/s.json.lock"
like "$(cat rec)" '^\{"run":1,"generation":0,"pid":[0-9]+,"host":"[^"]*","started":"20' \
    "while the command runs, the start record is in the lock file"
is "$(tr -d ' \n' <"$ST/s.json.lock")" "" "the run's save blanked it"
cb --name s -- true
cb --name s -- true
is "$(jget "$ST/s.json" iteration):$(jget "$ST/s.json" errors_total)" \
    '3:{"budget":0,"fatal":0,"recoverable":0,"success":3,"timeout":0,"transient":0}' \
    "a run saved is never counted again: three runs, three successes"
# A state file removed by hand starts afresh, with no phantom run in it.
rm "$ST/s.json"
cb --name s -- true
is "$(jget "$ST/s.json" iteration):$(jget "$ST/s.json" history.0.type)" "1:null" \
    "a state removed by hand: the next run is run 1, nothing else counted"

# ---- --record and the operator verbs count a killed run first ----
"$CBEXEC" --no-prompt --name r -- sh -c 'kill -9 $PPID' 2>/dev/null
"$CBEXEC" --record --exit 0 r; rc=$?
is "$rc:$(jget "$ST/r.json" iteration)" "0:2" "--record counts the killed run, then its own"
is "$(jget "$ST/r.json" history.0.type)" killed "... the killed one first"
"$CBEXEC" --no-prompt --name t -- sh -c 'kill -9 $PPID' 2>/dev/null
"$CBEXEC" --trip --reason maint t 2>err; rc=$?
is "$rc:$(jget "$ST/t.json" iteration):$(jget "$ST/t.json" state)" "0:1:OPEN" \
    "--trip counts the killed run, then trips"
like "$(cat err)" "run 1 .* was never recorded: its cbexec was killed" "... and says so"
"$CBEXEC" --no-prompt --name x -- sh -c 'kill -9 $PPID' 2>/dev/null
"$CBEXEC" --reset-circuit x 2>/dev/null; rc=$?
is "$rc:$(jget "$ST/x.json" iteration):$(jget "$ST/x.json" history.0.type)" \
    "0:1:killed" "--reset-circuit on a circuit whose only run was killed: counted"
# --status takes no lock: a record it sees may be a run going on.
"$CBEXEC" --no-prompt --name y -- sh -c 'kill -9 $PPID' 2>/dev/null
"$CBEXEC" --status y >/dev/null 2>&1; rc=$?
is "$rc:$([ -e "$ST/y.json" ] && echo saved)" "0:" \
    "--status counts nothing, writes nothing"
"$CBEXEC" --no-prompt --name y --status --json >y.status 2>/dev/null
is "$(jget y.status iteration)" 0 "--status --json: iteration 0"

# ---- a record that cannot be written starts nothing ----
if ! why=$(shim_why faultshim); then
	skip "$why"; skip "$why"; skip "$why"; skip "$why"
else
	cb --name full -- true
	cp "$ST/full.json" full.orig
	LD_PRELOAD=$T_DIR/faultshim.so FAULT_ON_PATH=full.json.lock \
	    FAULT_OP=write FAULT_ERRNO=ENOSPC "$CBEXEC" --no-prompt \
	    --name full -- touch ran 2>err; rc=$?
	is "$rc:$([ -e ran ] && echo ran)" "125:" \
	    "no space for the start record: 125, the command not run"
	is "$(cat err)" "cbexec: $ST/full.json.lock: cannot put run 2 on record: No space left on device; not running the command" \
	    "... saying why in one line"
	cmp -s "$ST/full.json" full.orig; ok $? "... and the state is as it was"
	LD_PRELOAD=$T_DIR/faultshim.so FAULT_ON_PATH=full.json.lock \
	    FAULT_OP=write FAULT_ERRNO=EROFS "$CBEXEC" --no-prompt \
	    --name full -- touch ran 2>err; rc=$?
	is "$rc:$([ -e ran ] && echo ran):$(grep -c 'Read-only file system' err)" \
	    "125::1" "a read-only one: 125, not run, said"
fi

# ---- a command that erases (or empties) the lock file, then kills
# cbexec: the watchdog, which outlives cbexec, writes the record again ----
for how in rm empty; do
	case $how in
	rm) wipe="rm -f \"\$CBEXEC_STATE_DIR/w$how.json.lock\"" ;;
	*) wipe=": >\"\$CBEXEC_STATE_DIR/w$how.json.lock\"" ;;
	esac
	i=0
	while [ $i -lt 6 ]; do
		i=$((i + 1))
		"$CBEXEC" -q --no-prompt --name "w$how" -- \
		    sh -c "echo run >>w$how.runs; $wipe; kill -9 \$PPID" \
		    2>/dev/null; rc=$?
		# The watchdog puts the record back within moments (on a
		# loaded machine an invocation started at once can take the
		# lock before it: that one does not see the record).
		[ $rc = 137 ] && poll_until 20 grep -q '"run"' \
		    "$ST/w$how.json.lock"
	done
	is "$rc:$(wc -l <"w$how.runs" | tr -d ' ')" "121:5" \
	    "lock file wiped ($how) before kill -9, six times: STUCK (121), five runs"
	is "$(jget "$ST/w$how.json" last_error.message)" \
	    "cbexec was killed during run 5" "... each run counted as killed"
done
"$CBEXEC" -q --no-prompt --name wdelay -n 2 --delay 5s -- true & p=$!
poll_until 20 test -s "$ST/wdelay.json"; kill -9 $p; wait $p 2>/dev/null
# (the watchdog, once cbexec is gone, takes the lock for a moment to see
# whether a run was going on: the next invocation waits for it)
cb --name wdelay --wait-lock=20s -- true
is "$(jget "$ST/wdelay.json" iteration):$(jget "$ST/wdelay.json" consecutive_errors)" \
    "2:0" "killed between runs (a --delay): no run is counted as killed"

# ---- the success path: the durable save's two fsyncs, no more ----
if [ -n "$UNDER_VALGRIND" ]; then
	skip "strace under valgrind"
elif ! command -v strace >/dev/null 2>&1; then
	skip "strace is not installed"
elif ! strace -f -o /dev/null true 2>/dev/null; then
	skip "strace cannot trace here (ptrace refused)"
else
	cb --name f -- true
	strace -f -e trace=fsync,fdatasync,sync_file_range,syncfs,msync \
	    -o strace.out "$CBEXEC" -q --no-prompt --progress exit --name f \
	    -- true
	is "$(grep -cE '(fsync|fdatasync|sync_file_range|syncfs|msync)\(' strace.out)" 2 \
	    "a successful run makes two fsyncs (the state's temp file, its directory)"
fi
done_testing
