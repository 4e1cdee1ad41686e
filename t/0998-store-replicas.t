#!/bin/sh
# SPDX-License-Identifier: ISC
# The shared store and Redis replicas: a node that is not the master is
# refused at once -- "store H:P is a replica (failover?): point --store at
# the master", 125, nothing run, no --store-fallback local past it -- and
# a master demoted while a run goes on (its READONLY) says the same, never
# Redis's raw text.  --store-replicas N: the lease and every save wait for
# N replicas (WAIT) within --store-timeout: confirmed, the state is on the
# replica when cbexec exits; a lease not confirmed is 125 with nothing
# run; a save not confirmed is 125, "may or may not have been saved"; a
# run whose renewals are not confirmed ends at the lease's local deadline.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"

ms() { echo $(( $(date +%s%N) / 1000000 )); }
quick() {
	if [ -n "$UNDER_VALGRIND" ]; then
		skip "$3 (timing, under valgrind)"
	else
		ok "$([ "$2" -lt "$1" ] && echo 0 || echo 1)" "$3"
	fi
}
# online NAME: the replica NAME has synchronised with its master.
online() {
	poll_until 20 sh -c 'redis-cli -s "$1" INFO replication |
	    grep -q "^master_link_status:up"' sh "$REDIS_DIR/$1/sock" || {
		echo "Bail out! replica $1 did not synchronise"
		cat "$REDIS_DIR/$1/log"
		exit 1
	}
}

SYNC="--repl-diskless-sync yes --repl-diskless-sync-delay 0"
redis_start $SYNC
REP_PORT=$(free_port)
redis_node rep "$REP_PORT" --replicaof 127.0.0.1 "$REDIS_PORT" $SYNC
online rep
M="--store redis://127.0.0.1:$REDIS_PORT/0"
REP_PID=$(cat "$REDIS_DIR/rep/pid")
# A WAIT that is to fail fails at this bound; one that is to succeed
# has the default's, for a replica slow to answer on a busy machine.
TMO=500ms OKTMO=2s
[ -n "$UNDER_VALGRIND" ] && TMO=3s OKTMO=5s

# ---- a replica is refused ----
t0=$(ms)
./host 1 --store "redis://127.0.0.1:$REP_PORT" --name a -- touch ran-r \
    2>err; rc=$?
el=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-r ] && echo ran)" "125:" "--store at a replica: 125, nothing run"
is "$(cat err)" "cbexec: store 127.0.0.1:$REP_PORT is a replica (failover?): point --store at the master; not running the command" \
    "saying so, and what to do"
quick 3000 "$el" "at once ($el ms)"
./host 1 --store "redis://127.0.0.1:$REP_PORT" --store-fallback local \
    --name a -- touch ran-r 2>err; rc=$?
is "$rc:$([ -e ran-r ] && echo ran)" "125:" "--store-fallback local does not run past it"
./host 1 --store "unix://$REDIS_DIR/rep/sock" --status a 2>err; rc=$?
is "$rc" 125 "an operator verb at a replica: 125"
like "$(cat err)" "^cbexec: store $REDIS_DIR/rep/sock is a replica \(failover\?\): point --store at the master" \
    "naming the socket"
is "$(ncli rep EXISTS cbexec:lock:a)" 0 "no lease was asked of the replica"

# ---- a master demoted while the command runs: READONLY, said plainly ----
SOLO_PORT=$(free_port)
redis_node solo "$SOLO_PORT"
# (renewals half a second apart, each bounded by that: room for a loaded
# machine, so no renewal misses before the demotion)
LEASE=1500ms
[ -n "$UNDER_VALGRIND" ] && LEASE=6s
./host 1 --store "redis://127.0.0.1:$SOLO_PORT" --store-lease $LEASE \
    --name d -- sh -c 'touch started-d; exec sleep 30' 2>err & p=$!
poll_until 20 test -e started-d
ncli solo REPLICAOF 127.0.0.1 "$REDIS_PORT" >/dev/null
t0=$(ms)
wait $p; rc=$?
el=$(( $(ms) - t0 ))
is "$rc" 125 "the store demoted under a run: the run is ended, 125"
like "$(cat err)" "store (127.0.0.1:$SOLO_PORT|redis://127.0.0.1:$SOLO_PORT/0: .*127.0.0.1:$SOLO_PORT) is a replica \(failover\?\): point --store at the master" \
    "the same words"
grep -Eq 'READONLY|user_script' err; is "$?" 1 "never Redis's raw READONLY"
quick 5000 "$el" "within about a lease ($el ms)"
./host 1 --store "redis://127.0.0.1:$SOLO_PORT" --name d -- touch ran-d \
    2>err; rc=$?
is "$rc:$([ -e ran-d ] && echo ran)" "125:" "and the next invocation is refused"
node_kill solo

# ---- --store-replicas ----
for bad in -1 x 1.5; do
	"$CBEXEC" $M --store-replicas "$bad" --name a -- true 2>err; rc=$?
	like "$rc:$(cat err)" "^125:cbexec: invalid value '$bad' for --store-replicas" \
	    "--store-replicas $bad: 125"
done
./host 1 $M --store-replicas 1 --store-timeout $OKTMO --name r -- \
    sh -c 'echo ran >ran-1' 2>err; rc=$?
is "$rc:$(cat ran-1 2>/dev/null)" "0:ran" "--store-replicas 1, one replica: the run goes"
is "$(ncli rep GET cbexec:circuit:r | jget /dev/stdin iteration)" 1 \
    "the saved state is on the replica as cbexec exits"
CBEXEC_STORE_REPLICAS=1 ./host 1 $M --store-timeout $OKTMO --name r \
    --account acme -- true 2>err; rc=$?
is "$rc:$(ncli rep GET cbexec:circuit:r | jget /dev/stdin iteration)" "0:2" \
    "CBEXEC_STORE_REPLICAS, with an account"

t0=$(ms)
./host 1 $M --store-replicas 2 --store-timeout $TMO --name r -- touch ran-2 \
    2>err; rc=$?
el=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-2 ] && echo ran)" "125:" "--store-replicas 2 with one replica: 125, nothing run"
like "$(cat err)" "the lease on circuit r was confirmed by 1 of 2 replicas within --store-timeout" \
    "saying how many confirmed"
quick 3000 "$el" "within --store-timeout ($el ms)"
is "$(rcli EXISTS cbexec:lock:r)" 0 "the lease is given back"

kill -STOP "$REP_PID"
./host 1 $M --store-replicas 1 --store-timeout $TMO --name r -- touch ran-3 \
    2>err; rc=$?
is "$rc:$([ -e ran-3 ] && echo ran)" "125:" "the replica stopped: WAIT not satisfied, 125, nothing run"
like "$(cat err)" "confirmed by 0 of 1 replicas" "0 of 1"
kill -CONT "$REP_PID"
online rep

before=$(rcli GET cbexec:circuit:r | jget /dev/stdin iteration)
./host 1 $M --store-replicas 1 --store-timeout $OKTMO --name r -- \
    sh -c "kill -STOP $REP_PID; echo ran >ran-4" 2>err; rc=$?
after=$(rcli GET cbexec:circuit:r | jget /dev/stdin iteration)
kill -CONT "$REP_PID"
is "$rc:$(cat ran-4 2>/dev/null)" "125:ran" "the replica stopped during the run: the save is not confirmed, 125"
like "$(cat err)" "the save was confirmed by 0 of 1 replicas within --store-timeout; the state may or may not have been saved" \
    "may or may not have been saved"
is "$after" $((before + 1)) "(here it is, on the master)"
online rep

LEASE=3s LTMO=1s
[ -n "$UNDER_VALGRIND" ] && LEASE=9s LTMO=3s
t0=$(ms)
./host 1 $M --store-replicas 1 --store-lease $LEASE --store-timeout $LTMO \
    --name u -- sh -c "kill -STOP $REP_PID; exec sleep 30" 2>err; rc=$?
el=$(( $(ms) - t0 ))
kill -CONT "$REP_PID"
is "$rc" 125 "renewals the replica does not confirm: the run ends, 125"
like "$(cat err)" "the lease on circuit u ran out before it could be renewed: its renewal was confirmed by 0 of 1 replicas" \
    "at the lease's local deadline, saying why"
quick 8000 "$el" "within the lease ($el ms)"
online rep

./host 1 $M --store-replicas 1 --store-timeout $OKTMO --name r -- true 2>err
rc=$?
is "$rc" 0 "the replica back: runs again"

done_testing
