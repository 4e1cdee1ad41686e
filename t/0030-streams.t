#!/bin/sh
# SPDX-License-Identifier: ISC
# stdout/stderr pass through byte-exact, EPIPE reaches the child, and
# leftovers of a run never hang cbexec or outlive it.
. "$(dirname "$0")/lib.sh"
_k=0
# Each call gets a fresh circuit, so earlier failures never trip this one.
C() { _k=$((_k + 1)); ST="st$_k.json"; "$CBEXEC" -q --state "$ST" --progress exit --no-prompt "$@"; }

head -c 5000000 /dev/urandom > blob
C -- sh -c 'cat blob; cat blob >&2' > out 2> err; is "$?" 0 "5 MB each way: exit 0"
cmp -s blob out; ok $? "stdout byte-exact"
cmp -s blob err; ok $? "stderr byte-exact"
C --no-capture-stdout -- cat blob > out2; cmp -s blob out2; ok $? "--no-capture-stdout byte-exact"

# Into pipes the bytes are spliced on, not copied: still byte-exact, and
# the tails and the status block are still seen.
{ C -- sh -c 'cat blob; cat blob >&2' 2>&3 | cat > pout; } 3>&1 | cat > perr
cmp -s blob pout; ok $? "stdout byte-exact through a pipe"
cmp -s blob perr; ok $? "stderr byte-exact through a pipe"
"$CBEXEC" -q --state pipe1.json --no-prompt -- sh -c 'cat blob; cat blob >&2;
	echo "Error: Cannot find module x" >&2; exit 1' 2>&1 | cat > /dev/null
is "$(jget pipe1.json last_error.type)" missing_dependency \
	"stderr tail through a pipe: classified"
"$CBEXEC" -q --state pipe2.json --no-prompt --loop -n 5 -- sh -c 'cat blob
	printf "%s\n" ---CBEXEC_STATUS--- "STATUS: COMPLETE" ---END_CBEXEC_STATUS---
	cat blob >&2' 2>&1 | cat > /dev/null
is "$(jget pipe2.json iteration)" 1 "status block through a pipe: the loop ends"

# Into a pipe the stderr tail is taken from a pipe cbexec tee()s into: it
# still holds exactly the last --capture-bytes, in order.  A marker line
# then N bytes of filler (37-byte lines) then exit 1.
tail_case() {	# tail_case NAME FILLER_LINES [OPTIONS...]
	tc_state=$1.json tc_lines=$2
	shift 2
	"$CBEXEC" -q --state "$tc_state" --no-prompt "$@" -- sh -c 'echo "SyntaxError: marker" >&2
		awk -v n='"$tc_lines"' "BEGIN { for (i = 0; i < n; i++)
			printf \"filler %06d xxxxxxxxxxxxxxxxxxxxxxx\\n\", i }" >&2
		echo "the last line" >&2; exit 1' 2>&1 >/dev/null | cat >/dev/null
}
tail_case t1 1600		# 59 KiB after the marker: in the tail
is "$(jget t1.json last_error.type)" syntax_error "pipe tail: 59 KiB back is kept"
tail_case t2 1900		# 69 KiB after it: not
is "$(jget t2.json last_error.type)" unknown "pipe tail: 69 KiB back is gone"
is "$(jget t2.json last_error.message)" "the last line" "pipe tail: ends with the last line"
tail_case t3 60000		# 2 MB of filler
is "$(jget t3.json last_error.message)" "the last line" "pipe tail after 2 MB: in order"
tail_case t4 20 --capture-bytes 100
is "$(jget t4.json last_error.type)" unknown "pipe tail: --capture-bytes 100"
tail_case t5 5000 --capture-bytes 400k
is "$(jget t5.json last_error.type)" syntax_error "pipe tail: --capture-bytes 400k keeps 180 KiB"
# A trickle of small writes, one per wake-up.
"$CBEXEC" -q --state t6.json --no-prompt -- sh -c 'echo "SyntaxError: early" >&2
	i=0; while [ $i -lt 150 ]; do echo "trickle $i" >&2; i=$((i+1)); sleep 0.002; done
	exit 1' 2>&1 >/dev/null | cat >/dev/null
is "$(jget t6.json last_error.type)" syntax_error "pipe tail of a trickle: the start kept"
"$CBEXEC" -q --state t7.json --no-prompt -- sh -c '
	i=0; while [ $i -lt 150 ]; do echo "trickle $i" >&2; i=$((i+1)); sleep 0.002; done
	exit 1' 2>&1 >/dev/null | cat >/dev/null
is "$(jget t7.json last_error.message)" "trickle 149" "pipe tail of a trickle: in order"

# cbexec -- yes | head ends promptly; the child dies of SIGPIPE.
start=$(date +%s%N)
out=$(C -t 60 -- yes | head -c 10 | wc -c)
el=$(( ($(date +%s%N) - start) / 1000000 ))
is "$out" 10 "yes | head -c 10: 10 bytes"
ok "$([ "$el" -lt 20000 ]; echo $?)" "yes | head ends promptly, not at -t 60 (${el}ms)"
{ C -t 10 -- yes; echo $? > yrc; } | head -c 1 >/dev/null
poll_until 5 test -s yrc
is "$(cat yrc)" 141 "the child sees SIGPIPE: 128+13"

# A setsid daemon holding stdout: cbexec returns at once, daemon gone.
start=$(date +%s%N)
out=$(C -t 10 -- sh -c 'setsid sh -c "echo \$\$ > daemon.pid; exec sleep 30" & sleep 0.1; echo done')
rc=$?
el=$(( ($(date +%s%N) - start) / 1000000 ))
is "$rc" 0 "daemon holding stdout: exit 0"
is "$out" "done" "daemon holding stdout: output kept"
ok "$([ "$el" -lt 6000 ]; echo $?)" "daemon holding stdout: no hang (${el}ms)"
pid=$(cat daemon.pid)
poll_until 3 dead "$pid"; ok $? "daemon is gone"

# A double-forked TERM-ignoring grandchild is killed after --kill-after.
C -k 0.2 -- sh -c '(trap "" TERM; setsid sh -c "trap \"\" TERM; echo \$\$ > gc.pid; while :; do sleep 0.05; done" &) ; sleep 0.1'
pid=$(cat gc.pid)
poll_until 3 dead "$pid"; ok $? "TERM-ignoring orphan SIGKILLed"

# --keep-orphans leaves it and still does not hang.
start=$(date +%s%N)
C --keep-orphans -- sh -c 'setsid sh -c "echo \$\$ > keep.pid; exec sleep 30" & sleep 0.1' > /dev/null
el=$(( ($(date +%s%N) - start) / 1000000 ))
ok "$([ "$el" -lt 6000 ]; echo $?)" "--keep-orphans: no hang (${el}ms)"
pid=$(cat keep.pid)
alive "$pid"; ok $? "--keep-orphans: the orphan lives"
kill "$pid" 2>/dev/null

# A writer in packet mode (O_DIRECT) makes a pipe buffer per byte, more
# than one tee() can take.  Two batches of 64, each written while cbexec is
# stopped so it finds the batch at once, then the end of stderr while the
# command lives on: cbexec must neither spin nor lose a byte of the tail.
{ "$CBEXEC" -q --state packet.json -- perl -MFcntl -e '
	fcntl(STDERR, F_SETFL, fcntl(STDERR, F_GETFL, 0) | O_DIRECT |
	    O_NONBLOCK) or die;
	my $n = 0;
	for (1, 2) {
		kill "STOP", getppid;
		for (1 .. 64) { defined syswrite(STDERR, "x") or last; $n++ }
		kill "CONT", getppid;
		select undef, undef, undef, 0.1;
	}
	open my $f, ">", "packet.n" or die; print $f $n; close $f;
	close STDERR; select undef, undef, undef, 0.7; exit 3' 2>&1 &
	echo $! > packet.pid; wait; } | cat > packet.out &
poll_until 2 test -s packet.n
sleep 0.4
ticks=$(awk '{ print $14 + $15 }' "/proc/$(cat packet.pid)/stat" 2>/dev/null)
wait
if [ -n "$UNDER_VALGRIND" ]; then
	skip "packet-mode stderr: CPU use is not judged under valgrind"
else
	ok "$([ "${ticks:-0}" -lt 15 ]; echo $?)" "packet-mode stderr: no busy loop (${ticks:-?} ticks)"
fi
is "$(wc -c < packet.out | tr -d ' ')" "$(cat packet.n)" "packet-mode stderr: every byte passed on"
is "$(jget packet.json last_error.message)" "$(head -c "$(cat packet.n)" /dev/zero | tr '\0' x)" \
	"packet-mode stderr: the tail kept"

# cbexec enlarges the pipes it writes into, but never shrinks one its
# caller made larger (F_SETPIPE_SZ 1031, F_GETPIPE_SZ 1032 on Linux).
sizes=$(perl -e '
	pipe my $r, my $w or die;
	fcntl($w, 1031, 1048576) or exit 0;	# no room for it: nothing to test
	my $pid = fork;
	if (!$pid) { open STDOUT, ">&", $w; exec @ARGV; exit 127 }
	waitpid $pid, 0;
	print fcntl($w, 1032, 0) + 0' -- "$CBEXEC" -q --state psz.json -- true)
case $sizes in
"") ok 0 "a caller's 1 MiB pipe: cannot make one here, skipped" ;;
*) is "$sizes" 1048576 "a caller's 1 MiB pipe is not shrunk" ;;
esac

# Output arrives as it is written, not at the end.
# (The command goes on for 20 s, the test looks for 10: long enough for
# cbexec under valgrind; the end of the run would copy it anyway.)
"$CBEXEC" -q --state live.json -t 30 -- sh -c 'echo first; sleep 20' > live &
bg=$!
poll_until 10 grep -q first live; ok $? "stdout is copied as it arrives"
kill -TERM "$bg"; wait "$bg"
# All of a burst, the last round of copying included: 256 KiB written
# while cbexec is stopped are four rounds of 64 KiB when it wakes.
"$CBEXEC" -q --state burst.json -t 30 -- perl -MFcntl -e '
	fcntl(STDOUT, F_SETFL, fcntl(STDOUT, F_GETFL, 0) | O_NONBLOCK) or die;
	kill "STOP", getppid;
	my ($n, $k) = (0, 0);
	$n += $k while $n < 262144 && ($k = syswrite STDOUT, "x" x 65536);
	kill "CONT", getppid;
	open my $f, ">", "burst.n" or die; print $f $n; close $f;
	sleep 20' > burst &
bg=$!
size() { [ -s burst.n ] && [ "$(wc -c < burst | tr -d ' ')" = "$(cat burst.n)" ]; }
poll_until 10 size; ok $? "a burst is copied whole before the command's next write"
kill -TERM "$bg"; wait "$bg"
done_testing
