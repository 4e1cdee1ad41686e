#!/bin/sh
# SPDX-License-Identifier: ISC
# Several hosts on one circuit in a shared Redis: three "hosts" (each its
# own HOME, XDG and state directories) x 20 invocations at once never run
# two commands at a time and count every run; a holder killed with -9
# gives the circuit up when its lease expires; a holder stopped past its
# lease finds its save refused (125) and the newer state kept; Redis
# killed in the middle of a run ends it at once with 125, nothing left.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"

redis_start
S="--store $REDIS_URL"

# ./host N: t/redis.sh
host() { ./host "$@"; }

# ---- 3 hosts x 20 at once ----
# The command takes an exclusive marker (mkdir is atomic): a second run
# at the same time would find it taken and say so.
cat >step.sh <<'SH'
#!/bin/sh
mkdir "$1/marker" 2>/dev/null || { echo overlap >>"$1/overlaps"; exit 9; }
echo "$CBEXEC_ITERATION" >>"$1/runs"
sleep 0.01
rmdir "$1/marker"
SH
chmod +x step.sh
pids=
for h in 1 2 3; do
	for i in $(seq 20); do
		host $h $S --name shared --wait-lock=60s -q -- \
		    ./step.sh "$SCRATCH" 2>>"err$h" &
		pids="$pids $!"
	done
done
fails=0
for p in $pids; do wait "$p" || fails=$((fails + 1)); done
is "$fails" 0 "all 60 invocations exit 0"
is "$(cat overlaps 2>/dev/null | wc -l)" 0 "never two runs at once"
is "$(wc -l <runs)" 60 "60 runs made"
is "$(rcli GET cbexec:circuit:shared | jget /dev/stdin iteration)" 60 \
    "iteration equals the runs made"
is "$(sort -n runs | uniq | wc -l)" 60 "each run saw its own iteration"
is "$(rcli EXISTS cbexec:lock:shared)" 0 "no lease left"

# Without --wait-lock, a second host is BUSY at once (the run goes on
# until the second host has asked, however slowly that one starts).
host 1 $S --name busy -- sh -c 'touch held; i=0
    while [ ! -e released ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done' \
    2>/dev/null & p=$!
poll_until 20 test -e held
host 2 $S --name busy -- true 2>err; rc=$?
touch released
like "$rc:$(cat err)" "^123:.*busy: another cbexec holds its lease" \
    "another host while it runs: BUSY (123)"
wait $p

# ---- kill -9 of the holder ----
# (a lease of 3 s: at least 2 s of it left when the holder is killed, for
# the next host to start and ask on a loaded machine)
./host 1 $S --store-lease 3s --name k -- sh -c 'echo $$ >k.pid; exec sleep 30' \
    2>/dev/null & holder=$!
poll_until 20 test -s k.pid
kill -9 $holder; wait $holder 2>/dev/null
host 2 $S --name k -- true 2>err; rc=$?
is "$rc" 123 "until the lease expires the circuit is busy"
poll_until 20 dead "$(cat k.pid)"; ok $? "the holder's command dies with it"
host 2 $S --name k --wait-lock=20s -- touch k-ran 2>err; rc=$?
is "$rc:$([ -e k-ran ] && echo ran)" "0:ran" "then another host runs"

# ---- SIGSTOP of a holder past its lease ----
# (a lease of 1.5 s: each store command may take half a second, which a
# loaded machine needs now and then)
./host 1 $S --store-lease 1500ms --name s -- sh -c 'touch s-started; sleep 2' \
    2>errA & A=$!
poll_until 20 test -e s-started
kill -STOP $A
poll_until 20 sh -c '[ "$(redis-cli -s "$1" EXISTS cbexec:lock:s)" = 0 ]' sh \
    "$REDIS_SOCK"; ok $? "the stopped holder's lease expires"
host 2 $S --name s -- sh -c 'exit 4' 2>errB; rc=$?
is "$rc" 4 "another host takes the circuit over and runs"
rcli GET cbexec:circuit:s >newer.json
kill -CONT $A
wait $A; rc=$?
is "$rc" 125 "the resumed holder exits 125"
like "$(cat errA)" "lease on circuit s (expired|ran out)|another holder saved a newer state" \
    "saying its lease was lost, its state not saved"
is "$(rcli GET cbexec:circuit:s | jcompact /dev/stdin)" "$(jcompact newer.json)" \
    "the newer state is intact"
# The stopped holder's run is on record and its lease lapsed: the other
# host counted it first (SPEC §11), then ran its own.
is "$(jget newer.json history.0.type):$(jget newer.json iteration):$(jget \
    newer.json last_error.exit_code)" "killed:2:4" \
    "it is the other host's run, after the stopped holder's, counted killed"

# ---- Redis killed mid-run ----
./host 1 $S --name r -- sh -c 'echo $$ >r.pid; exec sleep 30' 2>errR & R=$!
poll_until 20 test -s r.pid
redis_kill KILL
poll_until 10 dead $R; ok $? "cbexec ends at once"
wait $R; rc=$?
is "$rc" 125 "exit 125"
like "$(cat errR)" "store unix://.*connection lost.*the run was killed" \
    "naming the store, saying the run was killed"
poll_until 10 dead "$(cat r.pid)"; ok $? "no process of the run is left"

done_testing
