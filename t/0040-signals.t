#!/bin/sh
# SPDX-License-Identifier: ISC
# Operator signals: SIGTERM/SIGINT/SIGHUP to cbexec reach the child and
# cbexec exits 122; a second one SIGKILLs; USR1 is passed through.
. "$(dirname "$0")/lib.sh"

run_bg() {	# run_bg STATE ARGS...: cbexec in the background, $bg its pid
	st=$1; shift
	# A background job of sh starts with SIGINT ignored; undo that, as
	# an interactive shell would, so the child can trap it.
	perl -e '$SIG{INT} = $SIG{QUIT} = "DEFAULT"; exec @ARGV or die' -- \
	    "$CBEXEC" -q --no-prompt --progress exit --state "$st" "$@" &
	bg=$!
}

for sig in TERM INT HUP; do
	rm -f got ready
	run_bg "$sig.json" -t 30 -- sh -c "trap 'echo $sig > got; exit 0' $sig; touch ready; while :; do sleep 0.05; done"
	poll_until 5 test -f ready
	kill -"$sig" "$bg"; wait "$bg"; rc=$?
	is "$rc" 122 "SIG$sig to cbexec: exit 122"
	is "$(cat got 2>/dev/null)" "$sig" "SIG$sig reached the child"
	is "$(jget "$sig.json" outcome)" ABORT "SIG$sig: outcome ABORT saved"
done

# The child ignores TERM: cbexec waits --kill-after, then SIGKILLs.
rm -f ready
run_bg ign.json -t 30 -k 0.3 -- sh -c 'trap "" TERM; echo $$ > child.pid; touch ready; while :; do sleep 0.05; done'
poll_until 5 test -f ready
start=$(date +%s%N)
kill -TERM "$bg"; wait "$bg"; rc=$?
el=$(( ($(date +%s%N) - start) / 1000000 ))
is "$rc" 122 "TERM-ignoring child: 122"
ok "$([ "$el" -lt 10000 ]; echo $?)" "killed after --kill-after, not -t 30 (${el}ms)"
dead "$(cat child.pid)"; ok $? "the child is gone"

# A second SIGINT SIGKILLs at once, long before --kill-after.
rm -f ready
run_bg int2.json -t 30 -k 20 -- sh -c 'trap "" INT; touch ready; while :; do sleep 0.05; done'
poll_until 5 test -f ready
start=$(date +%s%N)
kill -INT "$bg"; sleep 0.1; kill -INT "$bg"; wait "$bg"; rc=$?
el=$(( ($(date +%s%N) - start) / 1000000 ))
is "$rc" 122 "second SIGINT: 122"
ok "$([ "$el" -lt 10000 ]; echo $?)" "second SIGINT kills at once, long before -k 20 (${el}ms)"

# USR1 passes through and the run goes on.
rm -f ready got
run_bg usr.json -t 30 -- sh -c 'trap "echo usr1 >> got" USR1; touch ready; i=0; while [ ! -s got ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; exit 7'
poll_until 5 test -f ready
kill -USR1 "$bg"; wait "$bg"; rc=$?
is "$rc" 7 "USR1 forwarded, the command's own status kept"
is "$(cat got)" usr1 "the child got USR1"

# SIGTERM during a --delay pause: 122 at once.
rm -f ran
run_bg delay.json --loop --delay 30 -- touch ran
poll_until 5 test -f ran
kill -TERM "$bg"; wait "$bg"; rc=$?
is "$rc" 122 "SIGTERM during --delay: 122"

# kill -9 of cbexec: PDEATHSIG takes the child too.
rm -f ready
"$CBEXEC" -q --state k9.json -t 30 -- sh -c 'echo $$ > k9.pid; touch ready; exec sleep 30' &
bg=$!
poll_until 5 test -f ready
kill -9 "$bg"; wait "$bg" 2>/dev/null
poll_until 3 dead "$(cat k9.pid)"; ok $? "kill -9 of cbexec takes the child with it"
done_testing
