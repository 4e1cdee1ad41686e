#!/bin/sh
# SPDX-License-Identifier: ISC
# The etcd store under faults (SPEC §10, "Exclusive under faults"; §11):
# a run longer than its lease lives through its leader killed (-9) or
# stopped (SIGSTOP), and is saved; a member cut off from cbexec (through a
# loopback proxy, t/storeproxy.py) costs a command at most its share of
# --store-timeout; the whole cluster cut off while a run goes on kills the
# run before another host may take the lease, and what the partition held
# back does nothing when it is delivered late; a slow store never stalls
# the command's output; a silence of every member through a renewal
# shorter than the lease ends no run; a signal ends a wait at once; a trickling answer
# is bounded as a whole; a cluster that lost its quorum is 125, nothing
# run.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/etcd.sh"

if ! command -v flock >/dev/null 2>&1; then
	echo "1..0 # SKIP flock(1) not installed (util-linux)"
	exit 0
fi
ETCD_HEARTBEAT=50 ETCD_ELECTION=500 etcd_start
S="--store $ETCD_URL"
ms() { echo $(( $(date +%s%N) / 1000000 )); }
eget() { ectl get "$1" --print-value-only; }
if [ -n "$UNDER_VALGRIND" ]; then LEASE=8s TMO=2s LONG=10
else LEASE=3s TMO=1s LONG=4; fi
L="--store-lease $LEASE --store-timeout $TMO"

# ---- the leader killed, then stopped, while a run longer than the lease
# goes on ----
for how in KILL STOP; do
	rm -f started
	"$CBEXEC" $S $L --name lead$how -- sh -c "touch started; sleep $LONG" \
	    2>err$how & p=$!
	poll_until 20 test -e started
	leader=$(etcd_leader)
	etcd_kill "$leader" "$how"
	wait $p; rc=$?
	is "$rc" 0 "the leader (member $leader) $how'ed during a run: the run ends well"
	[ "$rc" = 0 ] || sed 's/^/# /' "err$how"
	is "$(eget cbexec:circuit:lead$how | jget /dev/stdin iteration)" 1 \
	    "... and its save is in the store"
	if [ "$how" = KILL ]; then
		etcd_revive "$leader"
	else
		etcd_kill "$leader" CONT
	fi
	poll_until 30 ectl_put
done
ok "$([ -n "$(etcd_leader)" ]; echo $?)" "the cluster has a leader again"

# ---- members behind proxies ----
etcd_proxy 1; etcd_proxy 2; etcd_proxy 3
PX="--store etcd://127.0.0.1:$ETCD_PX1,127.0.0.1:$ETCD_PX2,127.0.0.1:$ETCD_PX3"
"$CBEXEC" $PX --name px -- true 2>err
is "$?" 0 "through the proxies"

for mode in hold drop reset; do
	etcd_fault 1 "$mode"
	t0=$(ms)
	"$CBEXEC" $PX $L --name px -- true 2>err; rc=$?
	el=$(( $(ms) - t0 ))
	is "$rc" 0 "the first member cut off ($mode): the others answer"
	# Each of the handful of commands waits at most half the timeout
	# for the member it asked first; the member that answered is
	# asked first next time.
	quick 4000 "$el" "... within a few times the timeout's share ($el ms)"
	etcd_fault 1 pass
done

# ---- a slow store never stalls the command's output ----
# (a shell that forks sleep(1) 60 times can pause longer than a renewal
# takes: each line carries when it was written, t/lib.sh's stamped)
for i in 1 2 3; do etcd_fault $i "delay 250"; done
# shellcheck disable=SC2086
stamped 60 "$CBEXEC" $PX --store-lease 6s --store-timeout 2s --name slow
is "$(cat rc) $(cut -d' ' -f1 late)" "0 60" "answers 250 ms late both ways: the run goes on"
quick 350 "$(cut -d' ' -f2 late)" "its output never waits for the store (a line at most $(cut -d' ' -f2 late) ms late)"

# ---- every member silent through a renewal, the lease still good ----
# A renewal no member answers within --store-timeout is sent again while
# the lease can still be kept: a silence longer than the timeout and
# shorter than the lease (a leader's election, a network's hiccup) ends
# no run.  Renewals every 3 s of a 9 s lease: the 3.6 s silence takes in
# one and its 0.5 s timeout, and ends 1.2 s before the local deadline.
for i in 1 2 3; do etcd_fault $i pass; done
rm -f started released
"$CBEXEC" $PX --store-lease 9s --store-timeout 500ms --name gap -- sh -c \
    'touch started; while [ ! -e released ]; do sleep 0.05; done' \
    2>errgap & p=$!
poll_until 20 test -e started
for i in 1 2 3; do etcd_fault $i hold; done
sleep 3.6
for i in 1 2 3; do etcd_fault $i pass; done
touch released
wait $p; rc=$?
is "$rc:$(eget cbexec:circuit:gap | jget /dev/stdin iteration)" "0:1" \
    "every member silent past --store-timeout, not past the lease: the run ends well, saved"
[ "$rc" = 0 ] || sed 's/^/# /' errgap

# ---- a trickling answer is bounded as a whole ----
for i in 1 2 3; do etcd_fault $i trickle; done
t0=$(ms)
"$CBEXEC" $PX --store-timeout 600ms --name tr -- touch ran-tr 2>err; rc=$?
el=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-tr ] && echo ran)" "125:" "every member answering a byte at a time: 125, not run"
like "$(cat err)" "no answer within --store-timeout" "saying so"
quick 3000 "$el" "within the bound, not a byte's wait each ($el ms)"

# ---- a signal ends a wait for the store at once ----
for i in 1 2 3; do etcd_fault $i hold; done
conns=$(cat "$ETCD_DIR/p1.mode.conns")
"$CBEXEC" $PX --store-timeout 20s --store-lease 60s --name sig -- \
    touch ran-sig 2>err & p=$!
# once it waits for the answer (under valgrind, well after 0.3 s)
poll_until 60 sh -c '[ "$(cat "$1")" -gt "$2" ]' sh "$ETCD_DIR/p1.mode.conns" \
    "$conns"
sleep 0.3
t0=$(ms)
kill -TERM $p
wait $p; rc=$?
el=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-sig ] && echo ran)" "122:" "SIGTERM while the cluster holds the answer: 122, nothing run"
quick 5000 "$el" "at once, not at --store-timeout ($el ms)"
for i in 1 2 3; do etcd_fault $i pass; done

# ---- the whole cluster cut off while a run goes on ----
"$CBEXEC" $PX $L --name cut -- flock -n "$SCRATCH/cut.lock" sh -c \
    'touch cut-started; exec sleep 30' 2>errA & A=$!
poll_until 20 test -e cut-started
for i in 1 2 3; do etcd_fault $i hold; done
t0=$(ms)
# Another host, which reaches the cluster, runs once the lease is gone --
# never beside the holder, whose command holds the flock while it lives.
./host 2 $S $L --name cut --wait-lock=30s -- flock -n "$SCRATCH/cut.lock" \
    touch cut-second 2>errB; rc=$?
is "$rc:$([ -e cut-second ] && echo ran)" "0:ran" \
    "another host runs once the lease is gone, never beside the holder"
wait $A; rcA=$?
is "$rcA" 125 "the cut-off holder exits 125"
like "$(cat errA)" "lease.*(ran out|renew)|no answer|connection" \
    "saying its lease could not be kept"
# What the partition held (renewals of a lease gone) is delivered now.
for i in 1 2 3; do etcd_fault $i pass; done
sleep 0.5
is "$(ectl get cbexec:lock:cut --keys-only | grep -c .)" 0 \
    "the late renewals took no lease again"
./host 3 $S --name cut -- true 2>err; rc=$?
is "$rc" 0 "a third host is not BUSY"
is "$(eget cbexec:circuit:cut | jget /dev/stdin iteration)" 3 \
    "the cut-off run counted (killed), then two runs"

# ---- a save delivered late does nothing ----
# The command cuts the link as it ends: the save is held, the holder gives
# up on it, its lease runs out with nobody else there, then the save
# reaches the cluster.
# (the command ends once every proxy says it holds)
"$CBEXEC" $PX $L --name late -- sh -c "for i in 1 2 3; do
    echo hold >$ETCD_DIR/p\$i.mode; done; i=0
    until [ \"\$(cat $ETCD_DIR/p1.mode.now $ETCD_DIR/p2.mode.now \\
        $ETCD_DIR/p3.mode.now | sort -u)\" = hold ] || [ \$i -ge 400 ]; do
        sleep 0.05; i=\$((i + 1)); done" 2>errA; rcA=$?
is "$rcA" 125 "a save held past --store-timeout: 125"
like "$(cat errA)" "may or may not have been saved" "saying it may or may not have been saved"
poll_until 30 sh -c '[ -z "$(etcdctl --endpoints "$1" get cbexec:lock:late --keys-only)" ]' \
    sh "$ETCD_EPS"
for i in 1 2 3; do etcd_fault $i pass; done
sleep 0.5
is "$(ectl get cbexec:circuit:late --keys-only | grep -c .):$(ectl get cbexec:lock:late --keys-only | grep -c .)" \
    "0:0" "the late save wrote no state and took no lock"
"$CBEXEC" $S --name late -- true 2>err; rc=$?
is "$rc:$(eget cbexec:circuit:late | jget /dev/stdin iteration)" "0:2" \
    "the next holder counts the run whose save was lost, then its own"

# ---- a name the resolver does not answer ----
# As root, in a mount namespace of its own: /etc/resolv.conf names a
# nameserver on loopback that reads every query and answers none.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	perl -MIO::Socket::INET -e '
		my $s;
		for (1 .. 1000) {
			my $a = join ".", 127, map { 1 + int rand 254 } 1 .. 3;
			$s = IO::Socket::INET->new(Proto => "udp",
			    LocalAddr => $a, LocalPort => 53) and last;
		}
		$s or die;
		open(my $f, ">", "dns.tmp") or die;
		print $f $s->sockhost, "\n"; close $f; rename "dns.tmp", "dns.up";
		my $b; $s->recv($b, 4096) while 1' & echo $! >>"$ETCD_DIR/proxies"
	poll_until 20 test -s dns.up
	printf 'nameserver %s\noptions timeout:5 attempts:3\n' "$(cat dns.up)" >resolv
	t0=$(ms)
	unshare -m sh -c 'mount --bind "$1" /etc/resolv.conf &&
	    exec "$2" --store etcd://store.never.invalid:2379,store2.never.invalid \
	    --store-timeout 600ms --name dns -- touch "$3/ran-dns"' sh \
	    "$SCRATCH/resolv" "$CBEXEC" "$SCRATCH" 2>err; rc=$?
	el=$(( $(ms) - t0 ))
	is "$rc:$([ -e ran-dns ] && echo ran)" "125:" "a resolver that does not answer: 125, not run"
	quick 3000 "$el" "within --store-timeout, name lookup included ($el ms)"
	like "$(cat err)" "store etcd://store.never.invalid:2379,store2.never.invalid:2379: .*(resolve|Resolving|no answer)" \
	    "naming the store"
else
	skip "a resolver that does not answer (needs root and unshare -m)"
	skip "within --store-timeout"
	skip "naming the store"
fi

# ---- a cluster without its quorum ----
etcd_kill 2
etcd_kill 3
t0=$(ms)
"$CBEXEC" $S --store-timeout 1s --name q -- touch ran-q 2>err; rc=$?
el=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-q ] && echo ran)" "125:" "two members of three down: 125, not run"
quick 4000 "$el" "within the bound ($el ms)"

done_testing
