#!/bin/sh
# SPDX-License-Identifier: ISC
# The shared store over TLS (rediss://), on a TLS-only redis-server of the
# test's own with a throw-away CA made here by openssl: the CA given with
# --store-ca or found in the system's store (SSL_CERT_FILE), the host name
# verified and sent as SNI; a server that wants a client certificate
# (--store-cert, --store-key).  Each way it can fail -- a CA not trusted,
# a certificate for another name, an expired one, no client certificate,
# a plain redis:// at the TLS port, rediss:// at a plain one, a handshake
# that never ends or trickles -- is 125 in bounded time, naming which,
# with nothing run.  The lease is renewed over TLS through a run longer
# than it, with slow replies that never stall the output, and after the
# server closed an idle connection.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"

if ! why=$(tls_files); then
	echo "1..0 # SKIP $why"
	exit 0
fi
if ! ldd "$(command -v redis-server)" 2>/dev/null | grep -q libssl; then
	if [ -n "${CBEXEC_REQUIRE_REDIS:-}" ]; then
		echo "Bail out! redis-server has no TLS (CBEXEC_REQUIRE_REDIS)"
		exit 1
	fi
	echo "1..0 # SKIP this redis-server is built without TLS"
	exit 0
fi

ms() { echo $(( $(date +%s%N) / 1000000 )); }
# certs NAME: the TLS server's certificate and key become tls/NAME.*
# (for the connections that come next).
certs() {
	ncli tls CONFIG SET tls-cert-file "$SCRATCH/tls/$1.pem" \
	    tls-key-file "$SCRATCH/tls/$1.key" >/dev/null
}

redis_start			# a plain one, for rediss:// at a plain port
TLS_PORT=$(free_port)
redis_node tls "$TLS_PORT" --port 0 --tls-port "$TLS_PORT" \
    --tls-cert-file "$SCRATCH/tls/srv.pem" \
    --tls-key-file "$SCRATCH/tls/srv.key" \
    --tls-ca-cert-file "$SCRATCH/tls/ca.pem" --tls-auth-clients no
CA="--store-ca $SCRATCH/tls/ca.pem"
# No CA of the system may vouch for the test's: unknown, whatever is
# installed.
export SSL_CERT_FILE=/dev/null SSL_CERT_DIR=/nonexistent
TMO=2s
[ -n "$UNDER_VALGRIND" ] && TMO=10s

# ---- a TLS store that works ----
./host 1 --store "rediss://127.0.0.1:$TLS_PORT" $CA --name a -- \
    sh -c 'echo ran >ran-a' 2>err; rc=$?
is "$rc:$(cat ran-a 2>/dev/null)" "0:ran" "rediss:// with --store-ca: the run goes"
is "$(ncli tls GET cbexec:circuit:a | jget /dev/stdin iteration)" 1 \
    "its state is in the TLS store"
./host 2 --store "rediss://localhost:$TLS_PORT/0" $CA --name a \
    --metrics a.prom -- true 2>err; rc=$?
is "$rc:$(ncli tls GET cbexec:circuit:a | jget /dev/stdin iteration)" "0:2" \
    "by host name (localhost), another host"
like "$(grep '^cbexec_runs_total' a.prom)" \
    "store=\"rediss://localhost:$TLS_PORT/0\"" "the metrics name the rediss:// store"
SSL_CERT_FILE=$SCRATCH/tls/ca.pem ./host 1 \
    --store "rediss://127.0.0.1:$TLS_PORT" --name a -- true 2>err; rc=$?
is "$rc" 0 "without --store-ca: the system's CA store (SSL_CERT_FILE here)"
./host 1 --store "rediss://127.0.0.1:$TLS_PORT" $CA --status --all >all 2>err
rc=$?
is "$rc:$(grep -c '^ *a ' all)" "0:1" "--status --all over TLS"

# ---- certificates refused: 125, naming why, nothing run ----
t0=$(ms)
./host 1 --store "rediss://127.0.0.1:$TLS_PORT" --name a -- touch ran-u \
    2>err; rc=$?
el=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "a CA nobody said to trust: 125, nothing run"
like "$(cat err)" "^cbexec: store rediss://127.0.0.1:$TLS_PORT/0: TLS: the server's certificate is signed by an unknown CA \(--store-ca" \
    "it says: unknown CA, and how to name one"
quick 3000 "$el" "at once ($el ms)"
./host 1 --store "rediss://127.0.0.1:$TLS_PORT" \
    --store-ca "$SCRATCH/tls/other.pem" --name a -- touch ran-u 2>err; rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "--store-ca naming another CA: 125"
like "$(cat err)" "unknown CA" "said the same"
./host 1 --store "rediss://127.0.0.1:$TLS_PORT" --store-fallback local \
    --name a -- touch ran-u 2>err; rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" \
    "--store-fallback local never runs past a refused certificate"

certs alien
./host 1 --store "rediss://localhost:$TLS_PORT" $CA --name a -- touch ran-u \
    2>err; rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "a server certificate of another CA: 125"
like "$(cat err)" "unknown CA" "unknown CA"

certs name
./host 1 --store "rediss://localhost:$TLS_PORT" $CA --name a -- touch ran-u \
    2>err; rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "a certificate for another host name: 125"
like "$(cat err)" "TLS: the server's certificate is not for localhost \(host name mismatch\)" \
    "naming the host it is not for"
./host 1 --store "rediss://127.0.0.1:$TLS_PORT" $CA --name a -- touch ran-u \
    2>err; rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "nor for the address: 125"
like "$(cat err)" "is not for 127.0.0.1 \(IP address mismatch\)" "naming the address"

certs old
./host 1 --store "rediss://localhost:$TLS_PORT" $CA --name a -- touch ran-u \
    2>err; rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "an expired certificate: 125"
like "$(cat err)" "TLS: the server's certificate has expired" "says it expired"
certs srv

# ---- a client certificate ----
ncli tls CONFIG SET tls-auth-clients yes >/dev/null
./host 1 --store "rediss://localhost:$TLS_PORT" $CA --name a -- touch ran-u \
    2>err; rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "a server that wants a client certificate, none given: 125"
like "$(cat err)" "the server wants a client certificate \(--store-cert|does it want a client certificate\? --store-cert" \
    "says so (or, when the reset took its alert, asks), naming the options"
CERT="--store-cert $SCRATCH/tls/cli.pem --store-key $SCRATCH/tls/cli.key"
./host 1 --store "rediss://localhost:$TLS_PORT" $CA $CERT --name a -- \
    sh -c 'echo ran >ran-c' 2>err; rc=$?
is "$rc:$(cat ran-c 2>/dev/null)" "0:ran" "--store-cert and --store-key: the run goes"
cat tls/cli.pem tls/cli.key >tls/both.pem
chmod 600 tls/both.pem
CBEXEC_STORE_CERT=$SCRATCH/tls/both.pem ./host 1 \
    --store "rediss://localhost:$TLS_PORT" $CA --name a -- true 2>err; rc=$?
is "$rc" 0 "CBEXEC_STORE_CERT: the key in the certificate's file"
./host 1 --store "rediss://localhost:$TLS_PORT" $CA \
    --store-cert "$SCRATCH/tls/alien.pem" --store-key "$SCRATCH/tls/alien.key" \
    --name a -- touch ran-u 2>err; rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "a client certificate of another CA: 125"
like "$(cat err)" "the server (does not trust|refused) the client certificate|does it refuse the client certificate" \
    "says so, or asks"
chmod 644 tls/cli.key
./host 1 --store "rediss://localhost:$TLS_PORT" $CA $CERT --name a -- \
    touch ran-u 2>err; rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "a client key others may read: 125"
like "$(cat err)" "--store-key $SCRATCH/tls/cli.key: mode 0644" "naming its mode"
chmod 600 tls/cli.key
./host 1 --store "rediss://localhost:$TLS_PORT" $CA \
    --store-cert "$SCRATCH/tls/cli.pem" --store-key "$SCRATCH/tls/srv.key" \
    --name a -- touch ran-u 2>err; rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "a key that is not the certificate's: 125"
like "$(cat err)" "srv.key is not the key of --store-cert" "said"
ncli tls CONFIG SET tls-auth-clients no >/dev/null

# ---- the options belong to rediss:// ----
./host 1 --store "redis://127.0.0.1:$REDIS_PORT" $CA --name a -- touch ran-u \
    2>err; rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "--store-ca with a plain redis:// store: 125"
like "$(cat err)" "--store-ca, --store-cert and --store-key are for a rediss:// \(TLS\) store" \
    "said before anything is sent in clear"

# ---- the wrong port: 125 in bounded time, naming which ----
t0=$(ms)
./host 1 --store "redis://127.0.0.1:$TLS_PORT" --name a -- touch ran-u \
    2>err; rc=$?
el=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "a plain redis:// at the TLS port: 125, nothing run"
like "$(cat err)" "the server closed the connection before answering \(a TLS port\? use rediss://\)" \
    "naming the likely cause"
quick 3000 "$el" "at once ($el ms)"
t0=$(ms)
./host 1 --store "rediss://127.0.0.1:$REDIS_PORT" $CA --store-timeout 500ms \
    --name a -- touch ran-u 2>err; rc=$?
el=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "rediss:// at a plain port: 125, nothing run"
like "$(cat err)" "no TLS handshake within --store-timeout \(not a TLS port\?\)" \
    "naming it"
quick 3000 "$el" "within --store-timeout ($el ms)"

# ---- the handshake is bounded as a whole, and a signal ends it ----
proxy() {
	echo pass >"$1.mode"
	python3 "$T_DIR/storeproxy.py" "$1.port" "$TLS_PORT" "$1.mode" &
	echo $! >>"$REDIS_DIR/proxy-$1.pid"
	mkdir -p "$REDIS_DIR/proxy-$1"
	mv "$REDIS_DIR/proxy-$1.pid" "$REDIS_DIR/proxy-$1/pid"
	poll_until "$HELPER_START" test -s "$1.port" || { echo "Bail out! no proxy"; exit 1; }
}
fault() {
	echo "$2" >"$1.mode"
	poll_until 20 sh -c '[ "$(cat "$1.mode.now" 2>/dev/null)" = "$2" ]' sh \
	    "$1" "$2" || { echo "Bail out! proxy $1 not in $2"; exit 1; }
}
proxy p
fault p trickle
t0=$(ms)
./host 1 --store "rediss://127.0.0.1:$(cat p.port)" $CA --store-timeout 400ms \
    --name a -- touch ran-u 2>err; rc=$?
el=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "a handshake that trickles: 125, nothing run"
like "$(cat err)" "no TLS handshake within --store-timeout|no answer within --store-timeout" \
    "it did not finish in time"
quick 3000 "$el" "bounded as a whole, not a byte's wait each ($el ms)"
fault p hold
rm -f p.mode.conns
./host 1 --store "rediss://127.0.0.1:$(cat p.port)" $CA --store-timeout 20s \
    --store-lease 60s --name a -- touch ran-u 2>err & p=$!
poll_until 30 test -s p.mode.conns
sleep 0.2
t0=$(ms)
kill -TERM $p
wait $p; rc=$?
el=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-u ] && echo ran)" "122:" "SIGTERM in the handshake: 122, nothing run"
quick 5000 "$el" "at once, not at --store-timeout ($el ms)"

# ---- SNI: the host name is sent, an address is not ----
python3 -c '
import os, socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain("tls/srv.pem", "tls/srv.key")
def said(sock, name, c):
    with open("sni.log", "a") as f:
        f.write("%s\n" % name)
ctx.sni_callback = said
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(5)
open("sni.tmp", "w").write("%d\n" % ls.getsockname()[1])
os.rename("sni.tmp", "sni.port")
while True:
    c, _ = ls.accept()
    try:
        ctx.wrap_socket(c, server_side=True).close()
    except Exception:
        c.close()
' & echo $! >"$REDIS_DIR/sni.pid"
mkdir -p "$REDIS_DIR/sni" && mv "$REDIS_DIR/sni.pid" "$REDIS_DIR/sni/pid"
poll_until 10 test -s sni.port
./host 1 --store "rediss://localhost:$(cat sni.port)" $CA --name a -- true \
    2>/dev/null
./host 1 --store "rediss://127.0.0.1:$(cat sni.port)" $CA --name a -- true \
    2>/dev/null
is "$(tr '\n' ' ' <sni.log)" "localhost None " \
    "SNI names localhost; none for an address"

# ---- the lease over TLS ----
# (a lease of 3 s: renewals a second apart, the local deadline 2.6 s after
# the last, room for a loaded machine; the run goes on until the second
# host has asked, however slowly that one starts and shakes hands)
# (by address: under valgrind a resolver's thread is slower than a
# lease this short)
lease=3s past=3.4
[ -n "$UNDER_VALGRIND" ] && past=3.5
TS="--store rediss://127.0.0.1:$TLS_PORT $CA"
rm -f started released
./host 1 $TS --store-lease $lease --store-timeout 1s --name long -- sh -c 'touch started
    i=0; while [ ! -e released ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done' \
    2>err & p=$!
poll_until 30 test -e started
sleep $past
./host 2 $TS --store-timeout $TMO --name long -- true 2>err2; rc=$?
touch released
is "$rc" 123 "past the lease the holder still has it, renewed over TLS: BUSY"
[ "$rc" = 123 ] || sed 's/^/# /' err2
wait $p; rc=$?
is "$rc:$(grep lease err)" "0:" "the long run ends well"

fault p "delay 250"
lease=6s tmo=2s
[ -n "$UNDER_VALGRIND" ] && lease=15s tmo=5s
stamped 80 ./host 1 --store "rediss://127.0.0.1:$(cat p.port)" $CA \
    --store-lease $lease --store-timeout $tmo --name slow
is "$(cat rc) $(cut -d' ' -f1 late)" "0 80" "renewals over TLS answered 500 ms late: the run goes on"
g=$(cut -d' ' -f2 late)
quick 350 "$g" "its output never waits for the store (a line at most $g ms late)"

# (under valgrind a TLS session takes seconds to open: longer idling)
idle=1 long=3.5 lease=6s
[ -n "$UNDER_VALGRIND" ] && idle=6 long=14 lease=30s
ncli tls CONFIG SET timeout $idle >/dev/null
./host 1 $TS --store-lease $lease --name idle -- sleep $long 2>err; rc=$?
is "$rc" 0 "a TLS connection the server closed while idle is opened again"
ncli tls CONFIG SET timeout 0 >/dev/null

done_testing
