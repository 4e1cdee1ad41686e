#!/bin/sh
# SPDX-License-Identifier: ISC
# Every wait is bounded by what the operator set (SPEC §11): git's
# progress probe, --progress-cmd and the --on-state-change hook end when
# --budget does, whatever their own limits; git never hangs on a FIFO the
# command put where it reads (.gitignore at the top or deeper,
# .git/info/exclude, .git/config, an include.path target,
# core.excludesFile): the invocation ends within the budget, saying why.
. "$(dirname "$0")/lib.sh"
if ! command -v git >/dev/null 2>&1; then
	echo "1..0 # SKIP git not installed"
	exit 0
fi
# The whole invocation must end by the budget plus this slack (loaded
# machine; a budget of 3s, where a hang is 60s or more).
SLACK=4
# The old limit per git command was 120s: anything that waited on the
# FIFO would run far longer than this, and timeout(1) ends it.
CAP=40

# within T0 LIMIT DESC: under LIMIT seconds since T0 (ns); not judged
# under valgrind.
within() {
	_s=$(( ($(date +%s%N) - $1) / 1000000000 ))
	if [ -n "$UNDER_VALGRIND" ]; then skip "timing under valgrind: $3"
	else ok "$([ "$_s" -lt "$2" ]; echo $?)" "$3 (${_s}s)"; fi
}
cb() { timeout "$CAP" "$CBEXEC" --no-prompt "$@"; }
fresh() { rm -rf "$1" && mkdir -p "$1" && (cd "$1" && git init -q .); }
# gone PIDFILE: the process it names is no more.
gone() { [ -s "$1" ] && ! kill -0 "$(cat "$1")" 2>/dev/null; }

# --- a FIFO where git reads
fresh top && mkfifo top/.gitignore
t0=$(date +%s%N)
err=$(cb -T 3 -C top --name top -- true 2>&1); rc=$?
is "$rc" 0 "a FIFO .gitignore at the top: the run goes (exit 0)"
within "$t0" 3 "... at once (before -T 3 ran out): the file is looked at before git runs"
like "$err" "git fingerprint failed: \.gitignore is not a regular file" "... saying which file"

fresh exc && rm -f exc/.git/info/exclude && mkfifo exc/.git/info/exclude
t0=$(date +%s%N)
err=$(cb -T 3 -C exc --name exc -- true 2>&1)
within "$t0" 3 "a FIFO .git/info/exclude: at once (before -T 3 ran out)"
like "$err" "\.git/info/exclude is not a regular file" "... named"

fresh deep && mkdir -p deep/sub/dir && mkfifo deep/sub/dir/.gitignore
t0=$(date +%s%N)
err=$(cb -T 3 -C deep --name deep -- true 2>&1)
within "$t0" $((3 + SLACK)) "a FIFO .gitignore two directories down, -T 3: ends with the budget"
like "$err" "git fingerprint failed: git status did not finish in time" "... saying git was killed"

fresh inc && mkfifo inc/fifo.cfg && git -C inc config include.path "$SCRATCH/inc/fifo.cfg"
t0=$(date +%s%N)
err=$(cb -T 3 -C inc --name inc -- touch "$SCRATCH/inc.ran" 2>&1); rc=$?
within "$t0" $((3 + SLACK)) "an include.path target that is a FIFO, -T 3: ends with the budget"
is "$rc" 124 "... exit 124, the budget spent"
like "$err" "the --budget ran out before run 1 could start: git rev-parse did not finish in time" \
    "... saying so, and that git was killed, never a silent 124"
ok "$([ ! -e inc.ran ]; echo $?)" "... the command did not run"

fresh xf && mkfifo xf.ignore && git -C xf config core.excludesFile "$SCRATCH/xf.ignore"
t0=$(date +%s%N)
cb -T 3 -C xf --name xf -- true >/dev/null 2>&1
within "$t0" $((3 + SLACK)) "a core.excludesFile that is a FIFO, -T 3: ends with the budget"

# --- --progress-cmd: its own limit is --timeout (or 120s); the budget
# comes first.
t0=$(date +%s%N)
err=$(cb -T 3 -t 60 --name pc --progress cmd \
    --progress-cmd "echo \$\$ >$SCRATCH/pc.pid; sleep 50" -- true 2>&1)
within "$t0" $((3 + SLACK)) "--progress-cmd sleeping 50s under -T 3: ends with the budget"
like "$err" "progress command killed: the --budget ran out" "... saying why"
poll_until 5 gone pc.pid; ok $? "... and it is gone"

# --- the hook: its own limit is --kill-after; the budget comes first,
# and a hook is not started once the budget is spent.
t0=$(date +%s%N)
err=$(cb -T 2 -k 60 --name hk --progress exit --half-open-after 1 \
    --on-state-change "echo \$\$ >$SCRATCH/hk.pid; sleep 50" -- \
    sh -c 'sleep 1; exit 1' 2>&1); rc=$?
is "$rc" 1 "a hook sleeping 50s: the run's exit status stands"
within "$t0" $((2 + SLACK)) "... and the invocation ends with the budget (-T 2)"
like "$err" "hook killed: the --budget ran out" "... saying why"
poll_until 5 gone hk.pid; ok $? "... and the hook is gone"
rm -f hk2.pid
err=$(cb -T 1 -k 60 --name hk2 --progress exit --half-open-after 1 \
    --on-state-change "echo \$\$ >$SCRATCH/hk2.pid" -- sleep 5 2>&1)
like "$err" "hook not run: the --budget is spent" "a transition after the budget ran out: the hook is not started"
ok "$([ ! -e hk2.pid ]; echo $?)" "... it did not run"
done_testing
