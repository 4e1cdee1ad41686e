#!/bin/sh
# SPDX-License-Identifier: ISC
# The shared store under faults (SPEC §10, "Exclusive under faults"),
# each fault through a loopback proxy (t/storeproxy.py) or a server that
# is not Redis (t/fakeredis.py): the store's keys never reach the
# command; every wait is bounded by --store-timeout (a trickling reply,
# a resolver), and a signal ends it; a holder cut off is stopped before
# another host may run (F1); a request delivered late does nothing (F6);
# an idle connection the server closed is opened again (F7); the lease
# lives through a long --progress-cmd and a slow git (F4, F5); the
# fallback never bypasses an account (F8); a reply of the wrong type or
# too large is 125 with nothing run.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"

PW=sesame
export REDISCLI_AUTH=$PW
redis_start --requirepass $PW
# redis-cli alone knows the password: cbexec's hosts do not inherit it.
unset REDISCLI_AUTH
rcli() { REDISCLI_AUTH=$PW redis-cli -s "$REDIS_SOCK" "$@"; }

# proxy NAME: a proxy to the Redis as ./NAME.mode says; sets PROXY_PORT.
proxy() {
	rm -f "$1.mode.now"
	echo pass >"$1.mode"
	python3 "$T_DIR/storeproxy.py" "$1.port" "$REDIS_PORT" "$1.mode" &
	echo $! >>proxies
	poll_until "$HELPER_START" test -s "$1.port" || { echo "Bail out! no proxy"; exit 1; }
	PROXY_PORT=$(cat "$1.port")
}
trap 'for p in $(cat proxies 2>/dev/null); do kill $p 2>/dev/null; done
    redis_kill; rm -rf "$SCRATCH" "$T_TMP"' EXIT

# fault NAME MODE: proxy NAME in MODE, once it says so.
fault() {
	echo "$2" >"$1.mode"
	poll_until 20 sh -c '[ "$(cat "$1.mode.now" 2>/dev/null)" = "$2" ]' sh \
	    "$1" "$2" || { echo "Bail out! proxy $1 not in $2"; exit 1; }
}

# ms: the monotonic-enough wall clock in milliseconds.
ms() { echo $(( $(date +%s%N) / 1000000 )); }


# The lease and timeout of the partition tests: under valgrind a lease
# long enough for its slower loop.
if [ -n "$UNDER_VALGRIND" ]; then LEASE=6s TMO=2s; else LEASE=1500ms TMO=500ms; fi

# ---- the fleet's keys never reach the command ----
CBEXEC_STORE=redis://:$PW@127.0.0.1:$REDIS_PORT/0 ./host 1 --name keys -- \
    sh -c 'env >env.out; tr "\0" "\n" </proc/$PPID/environ >penv.out' 2>err
rc=$?
is "$rc" 0 "CBEXEC_STORE with a password in it: the run goes"
ok "$(grep -c '^CBEXEC_STORE' env.out)" "CBEXEC_STORE is not in the command's environment"
! grep -q "$PW" env.out; ok $? "nor is the password anywhere in it"
if [ -n "$UNDER_VALGRIND" ]; then
	skip "nor in cbexec's own environment as /proc shows it (valgrind)"
else
	grep -q '^CBEXEC_STORE=redis://:\*\**@' penv.out && ! grep -q "$PW" penv.out
	ok $? "nor in cbexec's own environment as /proc shows it to the command"
fi

# (the command goes on until the test has read cbexec's arguments too)
rm -f ppid.out ps.read
./host 1 --store "redis://:$PW@127.0.0.1:$REDIS_PORT/0" --name keys -- \
    sh -c 'tr "\0" " " </proc/$PPID/cmdline >ppid.out; i=0
    while [ ! -e ps.read ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done' 2>err &
p=$!
poll_until 20 test -s ppid.out
ps_line=$(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null)
touch ps.read
wait $p; rc=$?
is "$rc" 0 "a password in --store works"
if [ -n "$UNDER_VALGRIND" ]; then
	# valgrind's own arguments are what /proc shows, not cbexec's
	skip "it is not in cbexec's arguments as the command reads them (valgrind)"
	skip "nor as ps reads them (valgrind)"
else
	! grep -q "$PW" ppid.out
	ok $? "it is not in cbexec's arguments as the command reads them"
	case $ps_line in *"$PW"*) r=1 ;; *redis://*) r=0 ;; *) r=1 ;; esac
	ok $r "nor as ps reads them (the URL stays, its password overwritten)"
fi

CBEXEC_STORE_PASSWORD=$PW ./host 1 --store "redis://127.0.0.1:$REDIS_PORT/0" \
    --name keys -- sh -c 'env >env.out; tr "\0" "\n" </proc/$PPID/environ >penv.out' \
    2>err; rc=$?
is "$rc" 0 "CBEXEC_STORE_PASSWORD authenticates"
! grep -q "$PW" env.out; ok $? "and is not passed on"
if [ -n "$UNDER_VALGRIND" ]; then
	skip "nor left in cbexec's own environment (valgrind)"
else
	! grep -q "$PW" penv.out; ok $? "nor left in cbexec's own environment"
fi

./host 1 --store "redis://127.0.0.1:$REDIS_PORT/0" --name keys -- true 2>err
rc=$?
is "$rc" 125 "no password for a store that wants one: 125"
like "$(cat err)" "NOAUTH|Authentication required" "Redis's reason said"

printf '%s\nsecond line\n' "$PW" >pw
chmod 644 pw
./host 1 --store "redis://127.0.0.1:$REDIS_PORT/0" --store-password-file pw \
    --name keys -- touch ran-644 2>err; rc=$?
is "$rc:$([ -e ran-644 ] && echo ran)" "125:" "a password file others may read: 125, nothing run"
like "$(cat err)" "^cbexec: --store-password-file pw: mode 0644" "naming its mode"
chmod 600 pw
./host 1 --store "redis://127.0.0.1:$REDIS_PORT/0" --store-password-file pw \
    --name keys -- touch ran-600 2>err; rc=$?
is "$rc:$([ -e ran-600 ] && echo ran)" "0:ran" "mode 0600: its first line is the password"
./host 1 --status --store "redis://:$PW@127.0.0.1:$REDIS_PORT/0" keys >st 2>&1
! grep -q "$PW" st; ok $? "--status never shows the password"

S="--store redis://127.0.0.1:$REDIS_PORT/0 --store-password-file $SCRATCH/pw"

# The operator verbs take the password the same ways.
./host 1 $S --status --all >all.out 2>err; rc=$?
is "$rc:$(grep -c '^ *keys ' all.out)" "0:1" "--status --all with --store-password-file"
CBEXEC_STORE_PASSWORD=$PW ./host 1 --store "redis://127.0.0.1:$REDIS_PORT/0" \
    --status --all >all.out 2>err; rc=$?
is "$rc:$(grep -c '^ *keys ' all.out)" "0:1" "--status --all with CBEXEC_STORE_PASSWORD"
./host 1 $S --reset-account nobody >/dev/null 2>err; rc=$?
like "$rc $(cat err)" "^125 cbexec: no such account 'nobody'" \
    "--reset-account reaches the store with it (no such account, not NOAUTH)"

# ---- F8: the fallback never bypasses an account ----
dead=$(free_port)
./host 1 --store "redis://127.0.0.1:$dead/0" --store-timeout 300ms \
    --store-fallback local --account acct --name f8 -- touch ran-f8 2>err
rc=$?
is "$rc:$([ -e ran-f8 ] && echo ran)" "125:" "--store-fallback local with --account: 125, nothing run"
like "$(cat err)" "--store-fallback local cannot read account acct" "saying why"
./host 1 --store "redis://127.0.0.1:$dead/0" --store-timeout 300ms \
    --store-fallback local --name f8 -- touch ran-f8 2>err; rc=$?
is "$rc:$([ -e ran-f8 ] && echo ran)" "0:ran" "without an account the fallback runs"

# ---- the timeout is at most a third of the lease ----
./host 1 $S --store-lease 900ms --store-timeout 2s --name third -- true 2>err
rc=$?
is "$rc" 0 "--store-timeout above a third of the lease: the run goes"
like "$(cat err)" "--store-timeout 2s is more than a third of --store-lease 0.9s: using 0.3s" \
    "said once, with the timeout used"

# ---- F2: a reply that trickles is bounded as a whole ----
proxy trickle
fault trickle trickle
t0=$(ms)
./host 1 --store "redis://:$PW@127.0.0.1:$PROXY_PORT/0" --store-timeout 400ms \
    --name f2 -- touch ran-f2 2>err; rc=$?
el=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-f2 ] && echo ran)" "125:" "a store answering a byte at a time: 125, nothing run"
quick 3000 "$el" "within the bound, not a byte's wait each ($el ms)"
like "$(cat err)" "no answer within --store-timeout" "saying so"

# ---- F3: a name the resolver does not answer ----
# As root, in a mount namespace of its own: /etc/resolv.conf names a
# nameserver on loopback that reads every query and answers none.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	# on a loopback address of its own (another test may be doing this)
	python3 -c 'import random, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
while True:
    a = "127.%d.%d.%d" % tuple(random.randint(1, 254) for _ in range(3))
    try:
        s.bind((a, 53))
        break
    except OSError:
        pass
open("dns.tmp", "w").write(a + "\n")
__import__("os").rename("dns.tmp", "dns.up")
while True: s.recv(4096)' & echo $! >>proxies
	poll_until "$HELPER_START" test -s dns.up
	printf 'nameserver %s\noptions timeout:5 attempts:3\n' "$(cat dns.up)" >resolv
	t0=$(ms)
	unshare -m sh -c 'mount --bind "$1" /etc/resolv.conf &&
	    exec "$2" --store redis://store.never.invalid:6379/0 \
	    --store-timeout 500ms --name f3 -- true' sh "$SCRATCH/resolv" \
	    "$CBEXEC" 2>err; rc=$?
	el=$(( $(ms) - t0 ))
	is "$rc" 125 "a resolver that does not answer: 125"
	quick 3000 "$el" "within --store-timeout ($el ms)"
	like "$(cat err)" "store.never.invalid" "naming the store"
else
	skip "a resolver that does not answer (needs root and unshare -m)"
	skip "within --store-timeout"
	skip "naming the store"
fi

# ---- a signal ends a wait on the store at once ----
proxy hold
fault hold hold
./host 1 --store "redis://:$PW@127.0.0.1:$PROXY_PORT/0" --store-timeout 20s \
    --store-lease 60s --name sig -- touch ran-sig 2>err & p=$!
# once it waits for the store's answer (under valgrind, well after 0.3 s)
poll_until 30 test -s hold.mode.conns
sleep 0.2
t0=$(ms)
kill -TERM $p
wait $p; rc=$?
el=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-sig ] && echo ran)" "122:" "SIGTERM while the store holds the reply: 122, nothing run"
quick 5000 "$el" "at once, not at --store-timeout ($el ms)"
fault hold pass

# ---- a slow renewal never stalls the command's output ----
proxy slow
fault slow "delay 250"
stamped 80 ./host 1 --store "redis://:$PW@127.0.0.1:$PROXY_PORT/0" \
    --store-lease 6s --store-timeout 2s --name slow
is "$(cat rc) $(cut -d' ' -f1 late)" "0 80" "renewals answered 500 ms late: the run goes on"
g=$(cut -d' ' -f2 late)
quick 350 "$g" "its output never waits for the store (a line at most $g ms late)"
fault slow pass

# ---- F1: a holder cut off stops its command before another may run ----
proxy f1
HOLD="--store redis://:$PW@127.0.0.1:$PROXY_PORT/0 --store-lease $LEASE --store-timeout $TMO"
./host 1 $HOLD --name f1 -- flock -n "$SCRATCH/f1.lock" sh -c 'touch f1-started; exec sleep 30' \
    2>errA & A=$!
poll_until 20 test -e f1-started
fault f1 hold
./host 2 $S --store-lease $LEASE --store-timeout $TMO --name f1 --wait-lock=30s -- \
    flock -n "$SCRATCH/f1.lock" touch f1-second 2>errB; rc=$?
is "$rc:$([ -e f1-second ] && echo ran)" "0:ran" "another host runs once the lease is gone, never beside the holder"
wait $A; rcA=$?
is "$rcA" 125 "the cut-off holder exits 125"
like "$(cat errA)" "lease.*(ran out|renew)|no answer|connection lost" "saying its lease could not be kept"

# ---- F6: a lease request delivered late does nothing ----
./host 1 $HOLD --name f6 -- sh -c 'touch f6-started; exec sleep 30' 2>errA & A=$!
poll_until 20 test -e f6-started
fault f1 hold
wait $A; rcA=$?
is "$rcA" 125 "held: the holder stops (125)"
./host 2 $S --store-lease $LEASE --name f6 --wait-lock=30s -- true 2>errB; rc=$?
is "$rc" 0 "another host runs when the lease has gone"
fault f1 pass	# what was held now reaches Redis
sleep 0.3
is "$(rcli EXISTS cbexec:lock:f6)" 0 \
    "the late renewal did not take the lease again"
./host 3 $S --name f6 -- true 2>err; rc=$?
is "$rc" 0 "a third host is not BUSY"

# ---- a save delivered late does nothing either ----
# The command cuts its own link as it ends: the save is held, the holder
# gives up on it, the lease runs out with nobody else there, then the
# save reaches Redis.
./host 1 $HOLD --name f6s -- sh -c 'echo hold >f1.mode; i=0
    until [ "$(cat f1.mode.now)" = hold ] || [ $i -ge 400 ]; do
    sleep 0.05; i=$((i + 1)); done' 2>errA
rcA=$?
is "$rcA" 125 "a save held past --store-timeout: 125"
like "$(cat errA)" "may or may not have been saved" "saying it may or may not have been saved"
poll_until 20 sh -c '[ "$(REDISCLI_AUTH=$2 redis-cli -s "$1" EXISTS cbexec:lock:f6s)" = 0 ]' \
    sh "$REDIS_SOCK" "$PW"
fault f1 pass	# the held save now reaches Redis
sleep 0.3
is "$(rcli EXISTS cbexec:lock:f6s):$(rcli EXISTS cbexec:circuit:f6s)" "0:0" \
    "the late save took no lease and wrote no state"
./host 2 $S --name f6s -- true 2>err; rc=$?
is "$rc" 0 "the next host is not BUSY"

# ---- F7: Redis closes idle connections sooner than a renewal comes ----
rcli CONFIG SET timeout 1 >/dev/null
./host 1 $S --store-lease 6s --name f7 -- sleep 3.5 2>err; rc=$?
is "$rc" 0 "a connection the server closed while idle is opened again"
rcli CONFIG SET timeout 0 >/dev/null

# ---- F5, F4: the lease lives through a long --progress-cmd and git ----
# (a lease of 2 s, renewed every 0.7 s: a renewal a loaded machine delays
# by a second still comes before the local deadline)
./host 1 $S --store-lease 2s --store-timeout 600ms --name f5 \
    --progress-cmd 'sleep 2.5; date +%s%N' -- true 2>err; rc=$?
is "$rc:$(grep lease err)" "0:" "a --progress-cmd longer than the lease: the run is saved"
is "$(rcli GET cbexec:circuit:f5 | jget /dev/stdin iteration)" 1 \
    "and counted"
mkdir -p bin repo
# (its status, which cbexec asks before and after the run, slower than
# the lease)
cat >bin/git <<SH
#!/bin/sh
case "\$*" in *status*) sleep 2.5 ;; esac
exec $(command -v git) "\$@"
SH
chmod +x bin/git
(cd repo && git init -q . && git commit -q --allow-empty -m x) 2>/dev/null
(cd repo && PATH=$SCRATCH/bin:$PATH ../host 1 $S --store-lease 2s \
    --store-timeout 600ms --name f4 -- true) 2>err; rc=$?
is "$rc:$(grep lease err)" "0:" "a git slower than the lease: the lease is renewed and the run goes"

# ---- replies that are not what the script gives ----
for how in integer status; do
	python3 "$T_DIR/fakeredis.py" "fake-$how.port" $how & echo $! >>proxies
	poll_until "$HELPER_START" test -s "fake-$how.port"
	./host 1 --store "redis://127.0.0.1:$(cat fake-$how.port)/0" --name wt -- \
	    touch ran-$how 2>err; rc=$?
	is "$rc:$([ -e ran-$how ] && echo ran)" "125:" "a lock reply of type $how: 125, nothing run"
	like "$(cat err)" "unexpected reply" "said"
done
python3 "$T_DIR/fakeredis.py" fake-huge.port huge & echo $! >>proxies
poll_until "$HELPER_START" test -s fake-huge.port
./host 1 --store "redis://127.0.0.1:$(cat fake-huge.port)/0" --store-timeout 5s \
    --name wt -- touch ran-huge 2>err; rc=$?
is "$rc:$([ -e ran-huge ] && echo ran)" "125:" "a 64 MiB reply: 125, nothing run"
like "$(cat err)" "a reply of more than [0-9]+ bytes: refused" "refused, not read whole"
poll_until 5 test -s fake-huge.port.sent
sent=$(cat fake-huge.port.sent)
ok "$([ "$sent" -lt 33554432 ] && echo 0 || echo 1)" "it stopped reading early ($sent bytes sent)"

done_testing
