#!/bin/sh
# SPDX-License-Identifier: ISC
# The menu when the circuit opens on a terminal (SPEC §5), driven through
# a pseudo-terminal by script(1); without a terminal nothing is read.
. "$(dirname "$0")/lib.sh"
command -v script >/dev/null 2>&1 || { echo "1..0 # SKIP no script(1)"; exit 0; }

# tty INPUT ARGS...: run cbexec on a pty fed INPUT; its exit status in rc.
tty() {
	input=$1; shift
	# timeout: a menu that waits for input it never gets must fail, not hang.
	printf "$input" | timeout 20 script -qec "$CBEXEC -q --progress exit --no-progress-threshold 1 --half-open-after 1 $*; echo \"rc=\$?\" > rc" /dev/null > screen 2>&1
	rc=$(sed -n 's/^rc=//p' rc)
}
second='sh -c "[ \$CBEXEC_ITERATION -ge 2 ]"'

tty 'r\n' --state r.json -- "$second"
is "$rc" 0 "Reset and retry: one more run, even with -n 1, and it succeeds"
like "$(cat screen)" '\[R\]eset and retry' "the menu is shown"
like "$(jcompact r.json)" '"event":"reset"' "Reset recorded in history"
is "$(jget r.json state)" CLOSED "Reset: CLOSED"

tty 'x\nr\n' --state x.json -n 2 -- "$second"
is "$rc" 0 "invalid input re-prompts"
like "$(cat screen)" 'Please answer' "invalid input: says so"

tty 's\n' --state s.json --phase GREEN -- false
is "$rc" 0 "Skip: exit 0"
is "$(jget s.json skipped_phases)" '["GREEN"]' "Skip records the phase"
is "$(jget s.json outcome)" SKIP "Skip: outcome SKIP"

tty 'a\n' --state a.json -- false
is "$rc" 122 "Abort: 122"
is "$(jget a.json state)" OPEN "Abort leaves it OPEN"

tty '' --state eof.json -- false
is "$rc" 122 "EOF means Abort: 122"

# A command that leaves the terminal raw: the menu gets the modes from
# before the run back, so Enter (a carriage return, typed once the prompt
# is there) ends the answer.
rm -f rc.raw screen.raw
sh -c 'i=0; while ! grep -q "guidance) >" screen.raw 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; printf "a\r"; sleep 0.5' |
	timeout 20 script -qec "$CBEXEC -q --progress exit --no-progress-threshold 1 --half-open-after 1 --state raw.json -- sh -c 'stty raw -echo; exit 1'; echo \"rc=\$?\" > rc.raw" /dev/null > screen.raw 2>&1
is "$(sed -n 's/^rc=//p' rc.raw 2>/dev/null)" 122 "after a command left the terminal raw, the menu still reads Enter"

tty 'm\nsplit the feature\n' --state m.json -- 'sh -c "echo \"G=\$CBEXEC_GUIDANCE\" >> g; [ \$CBEXEC_ITERATION -ge 2 ]"'
is "$rc" 0 "Modify: goes on"
is "$(jget m.json guidance)" "split the feature" "Modify stores the guidance"
is "$(tail -1 g)" "G=split the feature" "the next run sees CBEXEC_GUIDANCE"

tty 'r\n' --state np.json --no-prompt -- false
is "$rc" 120 "--no-prompt: no menu, 120"

# An operator signal at the prompt aborts at once (122, state saved), as it
# does during a run: the terminal stays open (sleep holds script's stdin),
# so neither input nor EOF ends the menu.
has_prompt() { grep -q 'guidance) >' screen.sig 2>/dev/null; }
has_rc() { [ -s rc.sig ]; }
for sig in TERM INT HUP QUIT; do
	rm -f screen.sig rc.sig cb.pid
	sh -c 'echo $$ > feeder.pid; exec sleep 10' | timeout 20 script -qec "sh -c 'echo \$\$ > cb.pid; exec $CBEXEC -q --progress exit --no-progress-threshold 1 --half-open-after 1 --state sig$sig.json -- false'; echo \"rc=\$?\" > rc.sig" /dev/null > screen.sig 2>&1 &
	bg=$!
	poll_until 10 has_prompt
	kill -"$sig" "$(cat cb.pid)"
	poll_until 3 has_rc; ok $? "SIG$sig at the prompt: cbexec ends at once"
	is "$(sed -n 's/^rc=//p' rc.sig)" 122 "SIG$sig at the prompt: 122"
	is "$(jget sig$sig.json outcome)" ABORT "SIG$sig at the prompt: outcome ABORT saved"
	kill "$(cat feeder.pid)" 2>/dev/null; wait "$bg" 2>/dev/null
done

# Without a terminal nothing is read.
echo r | "$CBEXEC" -q --state nt.json --progress exit --no-progress-threshold 1 --half-open-after 1 -- false 2>/dev/null
is "$?" 120 "no terminal: 120 at once"
done_testing
