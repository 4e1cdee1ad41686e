#!/bin/sh
# SPDX-License-Identifier: ISC
# Chaos on the shared store (SPEC §10, "Exclusive under faults"): three
# hosts run one circuit over and over, each through its own loopback
# proxy (t/storeproxy.py), while a nemesis delays, holds, drops, resets
# and trickles one host's traffic at a time, now and then kills a
# holder with -9, and kills Redis (-9) and starts it again on its
# append-only file.  Two checks: never two commands of the circuit at once
# (each takes flock -n on one file: a second one at the same time finds
# it taken), and no lost update (each run that exited 0 was saved as its
# own iteration, and the store's iteration counts them all).
# CBEXEC_CHAOS_SECONDS (default 40) sets how long it goes on.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"

SECONDS_=${CBEXEC_CHAOS_SECONDS:-40}
if [ -n "$UNDER_VALGRIND" ]; then
	echo "1..0 # SKIP timing under valgrind"
	exit 0
fi
if ! command -v flock >/dev/null 2>&1; then
	echo "1..0 # SKIP flock(1) not installed (util-linux)"
	exit 0
fi
# With every write on disk before Redis answers, a restart loses nothing
# it said was saved (man cbexec, SHARED STORE, "Durability").
AOF="--appendonly yes --appendfsync always"
redis_start $AOF
trap 'for p in $(cat pids 2>/dev/null); do kill -9 $p 2>/dev/null; done
    redis_kill; [ -n "${KEEP:-}" ] || rm -rf "$SCRATCH" "$T_TMP"' EXIT

ms() { echo $(( $(date +%s%N) / 1000000 )); }
rnd() { echo $(( $(od -An -N2 -tu2 /dev/urandom) % $1 )); }

for h in 1 2 3; do
	echo pass >p$h.mode
	python3 "$T_DIR/storeproxy.py" p$h.port "$REDIS_PORT" p$h.mode &
	echo $! >>pids
	poll_until "$HELPER_START" test -s p$h.port || { echo "Bail out! no proxy"; exit 1; }
done

# The command: the circuit's one run at a time, or it says "overlap".
cat >step.sh <<'SH'
#!/bin/sh
flock -n -E 99 "$1/run.lock" sh -c 'echo "$CBEXEC_ITERATION" >"$1/last.$2"
    sleep 0.15' sh "$1" "$2"
rc=$?
[ "$rc" = 99 ] && echo "overlap host $2 at $(date +%T.%N)" >>"$1/overlaps"
exit "$rc"
SH
cat >host.sh <<SH
#!/bin/sh
# host.sh N END: host N runs the circuit until END (ms).
h=\$1 end=\$2 d=$SCRATCH/host\$1
mkdir -p "\$d/home"
while [ \$(( \$(date +%s%N) / 1000000 )) -lt "\$end" ]; do
	rm -f "$SCRATCH/last.\$h"
	HOME=\$d/home XDG_STATE_HOME=\$d/state CBEXEC_STATE_DIR=\$d/state/cbexec \\
	    "$CBEXEC" --store "redis://127.0.0.1:\$(cat p\$h.port)/0" \\
	    --store-lease 1200ms --store-timeout 400ms --wait-lock=3s -q \\
	    --name chaos -- sh "$SCRATCH/step.sh" "$SCRATCH" "\$h" \\
	    2>>"$SCRATCH/err.\$h" &
	echo \$! >"$SCRATCH/pid.\$h"
	wait \$!; rc=\$?
	echo "\$rc \$(cat "$SCRATCH/last.\$h" 2>/dev/null)" >>"$SCRATCH/results.\$h"
	[ \$rc = 0 ] || sleep 0.05	# as a loop script would
done
SH

end=$(( $(ms) + SECONDS_ * 1000 ))
for h in 1 2 3; do
	sh host.sh $h $end &
	echo $! >>pids
	hosts="${hosts:-} $!"
done

# The nemesis: one fault on one host's link at a time.
faults=0 kills=0 restarts=0
while [ "$(ms)" -lt $(( end - 1500 )) ]; do
	h=$(( $(rnd 3) + 1 ))
	case $(rnd 8) in
	0) f="delay 150" ;;
	1) f="delay 700" ;;
	2) f=hold ;;
	3) f=drop ;;
	4) f=reset ;;
	5) f=trickle ;;
	6) f=kill ;;
	7) f=restart ;;
	esac
	if [ "$f" = kill ]; then
		kill -9 "$(cat pid.$h 2>/dev/null)" 2>/dev/null &&
		    kills=$((kills + 1))
	elif [ "$f" = restart ]; then
		redis_kill KILL
		sleep 0.$(rnd 10)
		redis_start $AOF
		restarts=$((restarts + 1))
	else
		echo "$f" >p$h.mode
		faults=$((faults + 1))
		sleep "$(rnd 2).$(rnd 10)"
		echo pass >p$h.mode
	fi
	sleep 0.2
done
for p in $hosts; do wait "$p"; done
echo "# $faults faults, $kills holders killed, Redis killed and restarted $restarts times"

is "$(cat overlaps 2>/dev/null)" "" "never two runs of the circuit at once"
cat results.1 results.2 results.3 >results
good=$(awk '$1 == 0 && $2 != ""' results | wc -l)
ok "$([ "$good" -gt 5 ] && echo 0 || echo 1)" "runs went on through the faults ($good ok of $(wc -l <results))"
dups=$(awk '$1 == 0 && $2 != "" {print $2}' results | sort -n | uniq -d | tr '\n' ' ')
is "$dups" "" "each run that exited 0 was saved as its own iteration"
poll_until 5 sh -c '[ "$(redis-cli -s "$1" EXISTS cbexec:lock:chaos)" = 0 ]' sh \
    "$REDIS_SOCK"
final=$(rcli GET cbexec:circuit:chaos | jget /dev/stdin iteration)
top=$(awk '$1 == 0 && $2 != "" {print $2}' results | sort -n | tail -1)
ok "$([ "$final" -ge "$good" ] && [ "$final" -ge "${top:-0}" ] && echo 0 || echo 1)" \
    "no update lost: the store counts $final runs, $good exited 0, the last seen $top"
# What ended a run: the command (0), the store (125), busy (123), killed.
codes=$(awk '{print $1}' results | sort -n | uniq -c | awk '{printf "%s×%s ", $2, $1}')
echo "# exit statuses: $codes"
bad=$(awk '$1 != 0 && $1 != 125 && $1 != 123 && $1 != 137 && $1 != 124' results | wc -l)
is "$bad" 0 "every run ended 0, 123, 124, 125 or by the nemesis's kill"

done_testing
