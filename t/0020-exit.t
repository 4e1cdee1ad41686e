#!/bin/sh
# SPDX-License-Identifier: ISC
# Exit statuses of SPEC §2 for single runs: pass-through, 124, 126, 127,
# 128+N, and the clean signal mask and environment of the child.
. "$(dirname "$0")/lib.sh"
_k=0
# Each call gets a fresh circuit, so earlier failures never trip this one.
C() { _k=$((_k + 1)); ST="st$_k.json"; "$CBEXEC" -q --state "$ST" --progress exit --no-prompt "$@"; }

for code in 0 1 2 42 119; do
	C -- sh -c "exit $code"; is "$?" "$code" "exit $code passes through"
done
C -- /nonexistent/cmd 2>err; is "$?" 127 "missing command: 127"
C -v -- /nonexistent/cmd 2>err; like "$(cat err)" "command_not_found" "missing command: classified"
printf '#!/bin/sh\n' > noexec; chmod 644 noexec
C -- ./noexec 2>/dev/null; is "$?" 126 "not executable: 126"
C -- no-such-command-xyz 2>/dev/null; is "$?" 127 "not on PATH: 127"
# A command that itself exits 127 is a fatal class, not cbexec's exec.
C -- sh -c 'echo "sh: 1: foo: command not found" >&2; exit 127' 2>/dev/null
is "$?" 122 "command's own 127 after 'command not found': 122"
C -- sh -c 'kill -SEGV $$'; is "$?" 139 "killed by SIGSEGV: 128+11"
C -- sh -c 'kill -USR1 $$'; is "$?" 138 "killed by SIGUSR1: 128+10"

# Timeout: 124, also when the command then exits 0 on SIGTERM.
C -t 0.2 -- sleep 10; is "$?" 124 "timeout: 124"
C -t 0.2 -- sh -c 'trap "exit 0" TERM; sleep 10 & wait'; is "$?" 124 "timeout kept when the child exits 0 on TERM"
start=$(date +%s%N)
C -t 0.2 -k 0.3 -- sh -c 'trap "" TERM; while :; do sleep 0.05; done'; rc=$?
el=$(( ($(date +%s%N) - start) / 1000000 ))
is "$rc" 124 "TERM-ignoring child: 124"
ok "$([ "$el" -lt 10000 ]; echo $?)" "TERM-ignoring child killed after --kill-after (${el}ms)"
C -t 0.2 --signal INT -- sh -c 'trap "exit 3" INT; sleep 10 & wait'; is "$?" 124 "--signal INT: 124"
C -t 0.2 --signal 0 -k 0.2 -- sleep 10; is "$?" 124 "--signal 0: only --kill-after ends it"
C -t 0.1 --signal 0 -k 0 -- sh -c 'sleep 0.3; touch s0k0.done'; rc=$?
is "$rc" 124 "--signal 0 -k 0: 124"
ok "$([ -e s0k0.done ]; echo $?)" "--signal 0 -k 0: the command runs to its end (timeout -s0 -k0)"
C -t 0 -- true; is "$?" 0 "-t 0: no limit"

# Budget across iterations.
start=$(date +%s%N)
C -n 100 --budget 0.5 -- sleep 0.2; rc=$?
el=$(( ($(date +%s%N) - start) / 1000000 ))
is "$rc" 124 "--budget across iterations: 124"
ok "$([ "$el" -lt 5000 ]; echo $?)" "--budget stops the loop on time (${el}ms)"
# (the run itself must fit in the budget: under valgrind it takes a while)
bud=0.3; [ -n "$UNDER_VALGRIND" ] && bud=3
"$CBEXEC" --state bd.json --progress exit --no-prompt --loop --delay 5 --budget $bud -- true 2>err
is "$?" 124 "--budget runs out in a delay: 124"
is "$(jget bd.json outcome)" TIMEOUT "--budget runs out in a delay: the state says TIMEOUT"
like "$(cat err)" "budget: spent" "--budget runs out in a delay: says so"
C -n 3 --no-progress-threshold 9 --max-consecutive-errors 9 -- sh -c 'exit 4'; is "$?" 4 "-n 3: the last run's status"
n=$(jget "$ST" iteration); ok "$([ "$n" -ge 3 ]; echo $?)" "-n 3 ran 3 times"
C -n 5 --until-success -- sh -c '[ "$CBEXEC_ITERATION" -ge 2 ]'; is "$?" 0 "--until-success stops at the first success"
is "$(jget "$ST" iteration)" 2 "--until-success: two runs"

# The child's signal mask and dispositions are what cbexec was given:
# compare with the same command run without cbexec.
sh -c 'grep -E "^Sig(Blk|Ign)" /proc/self/status' > mask.ref
C -- sh -c 'grep -E "^Sig(Blk|Ign)" /proc/self/status' > mask
is "$(grep SigBlk mask | awk '{print $2}')" 0000000000000000 "child signal mask is empty"
is "$(grep SigIgn mask)" "$(grep SigIgn mask.ref)" "child ignores only what cbexec's parent ignored"
# Signals ignored by our parent stay ignored.
(trap '' HUP; exec sh -c 'grep SigIgn /proc/self/status') > ign.ref
(trap '' HUP; exec "$CBEXEC" -q --state ign.json --progress exit -- sh -c 'grep SigIgn /proc/self/status') > ign
is "$(cat ign)" "$(cat ign.ref)" "inherited SIG_IGN of HUP stays"
like "$(awk '{print $2}' ign)" '[13579bdf]$' "HUP is in the ignored set"

# The child environment.
C --name envtest --phase GREEN -- sh -c 'echo "$CBEXEC_ITERATION $CBEXEC_NAME $CBEXEC_PHASE $CBEXEC_CIRCUIT_STATE"; test -f "$CBEXEC_STATUS_FILE" && echo file' > env
is "$(head -1 env)" "1 envtest GREEN CLOSED" "child env CBEXEC_*"
is "$(sed -n 2p env)" "file" "CBEXEC_STATUS_FILE exists during the run"
done_testing
