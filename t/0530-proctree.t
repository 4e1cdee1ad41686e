#!/bin/sh
# SPDX-License-Identifier: ISC
# Nearly 100 runs of commands that leave things behind (SPEC §3: "cbexec never
# leaves a process of the run behind and never hangs because a grandchild
# still holds a pipe open"): double-forked setsid daemons, TERM-ignoring
# daemons (-k 0.1), commands that close stdout early while a grandchild
# keeps stderr, several daemons per run, timeouts with a daemon around.
# When cbexec returns, every pid the runs recorded is gone, no process
# carrying this test's marker is alive, and the test shell has no zombie.
. "$(dirname "$0")/lib.sh"
MARK="T0530_MARK=$SCRATCH"

# Each daemon writes its pid to pid.KIND.RUN.K (via a rename, so a file is
# whole), and the command waits for that file before it exits, so the
# daemon exists when cbexec starts cleaning up.
cat > mk.sh <<'EOF'
#!/bin/sh
# mk.sh KIND: one run's worth of trouble of that kind
kind=$1 it=$CBEXEC_ITERATION
daemon() {	# daemon K TRAP: a setsid daemon, double-forked
	f=pid.$kind.$it.$1
	(setsid sh -c "trap '$2' TERM; echo \$\$ > $f.t; mv $f.t $f
		while :; do sleep 1; done" </dev/null >/dev/null 2>&1 &)
	while [ ! -e "$f" ]; do sleep 0.01; done
}
case $kind in
detached) daemon 1 - ;;
noterm)   daemon 1 '' ;;
noout)	# closes stdout, a grandchild holds stderr, then it exits
	exec >&-
	f=pid.$kind.$it.1
	sh -c "echo \$\$ > $f.t; mv $f.t $f; exec sleep 60" &
	while [ ! -e "$f" ]; do sleep 0.01; done
	echo "bye" >&2 ;;
several)  daemon 1 -; daemon 2 ''; daemon 3 - ;;
timeout)  daemon 1 ''; exec sleep 30 ;;
esac
exit 0
EOF
chmod +x mk.sh

pstate() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f"${2:-1}"; }
gone() {	# every pid in files $@ is dead (or a zombie of someone else)
	for _f in "$@"; do
		_p=$(cat "$_f")
		kill -0 "$_p" 2>/dev/null || continue
		[ "$(pstate "$_p")" = Z ] && continue
		echo "$_p ($({ tr '\0' ' ' < "/proc/$_p/cmdline"; } 2>/dev/null))"
	done
}

total=0
# kind runs expected-exit cbexec-options
for spec in "detached 25 0 -k 0.1" "noterm 20 0 -k 0.1" "noout 25 0 -k 0.1" \
    "several 20 0 -k 0.1" "timeout 6 124 -t 1 -k 0.1"; do
	set -- $spec
	kind=$1 n=$2 want=$3; shift 3
	start=$(date +%s%N)
	# timeout(1) bounds a hang (generously: 25 runs of a slow build on a
	# loaded machine); -s KILL makes its verdict 137, never a 124
	# that could be cbexec's own
	env "$MARK" timeout -s KILL 60 "$CBEXEC" -q --no-prompt --progress exit \
	    --max-consecutive-errors 1000 --same-error-threshold 1000 \
	    --no-progress-threshold 1000 --half-open-after 1000 \
	    --state "$kind.json" -n "$n" "$@" -- ./mk.sh "$kind" \
	    > "$kind.out" 2> "$kind.err"
	rc=$?
	el=$(( ($(date +%s%N) - start) / 1000000 ))
	left=$(gone pid.$kind.*)
	is "$rc" "$want" "$kind: $n runs, exit $want, no hang (${el}ms)"
	is "$(jget "$kind.json" iteration)" "$n" "$kind: all $n runs counted"
	runs=$(ls pid.$kind.* | sed 's/\.[0-9]*$//' | sort -u | wc -l)
	is "$runs" "$n" "$kind: every run started its daemon(s)"
	is "$left" "" "$kind: nothing recorded is alive when cbexec returns"
	total=$((total + n))
done
is "$(grep -c . noout.err)" 25 "noout: stderr of every run came through"

# Anything carrying the marker in its environment came from the runs.
left=
for e in /proc/[0-9]*/environ; do
	p=${e#/proc/}; p=${p%/environ}
	{ tr '\0' '\n' < "$e"; } 2>/dev/null | grep -qxF "$MARK" || continue
	[ "$(pstate "$p")" = Z ] && continue
	left="$left $p($({ tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null))"
done
is "${left:-none}" none "after $total runs no process of theirs is alive"

# Our own children were all reaped.
z=
for s in /proc/[0-9]*/stat; do
	p=${s#/proc/}; p=${p%/stat}
	[ "$(pstate "$p" 2)" = $$ ] && [ "$(pstate "$p")" = Z ] && z="$z $p"
done
is "${z:-none}" none "no zombie children of the test shell"
done_testing
