# SPDX-License-Identifier: ISC
# For the tests of the shared store (--store): a redis-server of the
# test's own, in the scratch directory, on a unix socket and a loopback
# port, never a system service.  Source it after lib.sh.  Without
# redis-server the whole test file is skipped, saying why.
#
#   redis_start [ARGS...]  start it (ARGS: more redis-server options);
#                          sets REDIS_SOCK, REDIS_PORT, REDIS_PID,
#                          REDIS_URL (unix://), REDIS_TCP (redis://)
#   redis_kill [SIG]       stop it (default SIGKILL) and wait for it
#   rcli ARGS...           redis-cli on the socket
#   redis_node NAME PORT [ARGS...]
#                          one more redis-server (a replica, a TLS-only
#                          one: ARGS), in $REDIS_DIR/NAME, on loopback
#                          PORT and on the socket $REDIS_DIR/NAME/sock
#                          (plain, even for a TLS-only server)
#   node_kill NAME [SIG]   stop it (default SIGKILL) and wait for it
#   ncli NAME ARGS...      redis-cli on its socket
#   tls_files              a throw-away CA and certificates in ./tls/ (see
#                          there); 1 with a message when openssl is missing
#   ./host N ARGS...       (written here) cbexec as seen from host N: its
#                          own HOME, XDG and state directories, exec'd (so
#                          $! of "./host ... &" is cbexec itself); after
#                          host_names, its own host name too (hostN)
#   host_names (lib.sh)    give each ./host N the name hostN from now on
#                          (t/hostshim.so preloaded); 1 with why not
#                          (cbexec built with ASan, or not an ELF binary)

if ! command -v redis-server >/dev/null 2>&1 ||
    ! command -v redis-cli >/dev/null 2>&1; then
	# CI installs it and must not pass by skipping these.
	if [ -n "${CBEXEC_REQUIRE_REDIS:-}" ]; then
		echo "Bail out! redis-server is required (CBEXEC_REQUIRE_REDIS)"
		exit 1
	fi
	echo "1..0 # SKIP redis-server not installed (Debian package" \
	    "redis-server; make deps installs it)"
	exit 0
fi

REDIS_DIR=$SCRATCH/redis
mkdir -p "$REDIS_DIR"
REDIS_SOCK=$REDIS_DIR/redis.sock
REDIS_URL=unix://$REDIS_SOCK
REDIS_PID=

# A loopback port nobody listens on now (perl, which prove needs anyway:
# no interpreter start to wait for).
free_port() {
	perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(Listen => 1,
	    LocalAddr => "127.0.0.1", LocalPort => 0, Proto => "tcp")->sockport'
}

rcli() { redis-cli -s "$REDIS_SOCK" "$@"; }

redis_start() {
	REDIS_PORT=${REDIS_PORT:-$(free_port)}
	REDIS_TCP=redis://127.0.0.1:$REDIS_PORT/0
	redis-server --bind 127.0.0.1 --port "$REDIS_PORT" \
	    --unixsocket "$REDIS_SOCK" --unixsocketperm 700 \
	    --dir "$REDIS_DIR" --save '' --daemonize no \
	    --logfile "$REDIS_DIR/log" "$@" &
	REDIS_PID=$!
	poll_until 10 sh -c 'redis-cli -s "$1" ping 2>/dev/null |
	    grep -q PONG' sh "$REDIS_SOCK" || {
		echo "Bail out! redis-server did not start"; cat "$REDIS_DIR/log"
		exit 1
	}
}

redis_kill() {
	[ -n "$REDIS_PID" ] || return 0
	kill "-${1:-KILL}" "$REDIS_PID" 2>/dev/null
	wait "$REDIS_PID" 2>/dev/null
	REDIS_PID=
}

redis_node() {
	_nm=$1 _np=$2
	shift 2
	mkdir -p "$REDIS_DIR/$_nm"
	redis-server --bind 127.0.0.1 --port "$_np" \
	    --unixsocket "$REDIS_DIR/$_nm/sock" --unixsocketperm 700 \
	    --dir "$REDIS_DIR/$_nm" --save '' --daemonize no \
	    --logfile "$REDIS_DIR/$_nm/log" "$@" &
	echo $! >"$REDIS_DIR/$_nm/pid"
	poll_until 10 sh -c 'redis-cli -s "$1" ping 2>/dev/null |
	    grep -q PONG' sh "$REDIS_DIR/$_nm/sock" || {
		echo "Bail out! redis-server $_nm did not start"
		cat "$REDIS_DIR/$_nm/log"
		exit 1
	}
}

node_kill() {
	[ -s "$REDIS_DIR/$1/pid" ] || return 0
	kill "-${2:-KILL}" "$(cat "$REDIS_DIR/$1/pid")" 2>/dev/null
	poll_until 10 dead "$(cat "$REDIS_DIR/$1/pid")"
	rm -f "$REDIS_DIR/$1/pid"
}

ncli() { _nm=$1; shift; redis-cli -s "$REDIS_DIR/$_nm/sock" "$@"; }

redis_cleanup() {
	for _p in "$REDIS_DIR"/*/pid; do
		[ -s "$_p" ] && kill -KILL "$(cat "$_p")" 2>/dev/null
	done
	redis_kill
}

# A throw-away CA, made here, and what it signs, in ./tls/ (elliptic-curve
# keys: quick to make and to use, under valgrind too):
#   ca.pem            the CA (ca.key its key)
#   srv.pem srv.key   the server's, for DNS:localhost and IP:127.0.0.1
#   other.pem         another CA, which signed nothing here
#   alien.pem/.key    a server's for localhost, signed by a CA of its own
#   name.pem/.key     a server's for DNS:redis.example only
#   old.pem/.key      srv.pem's names, expired yesterday
#   cli.pem cli.key   a client's (cli.key mode 0600), signed by the CA
tls_files() {
	if ! command -v openssl >/dev/null 2>&1; then
		echo "openssl not installed (Debian package openssl)"
		return 1
	fi
	mkdir -p tls && (
	cd tls || exit 1
	umask 077
	ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
	ca() { openssl req -x509 $ec -keyout "$1.key" -out "$1.pem" -days 2 \
	    -subj "/CN=$1" 2>/dev/null; }
	# cert NAME CA DAYS SAN: a certificate NAME.pem signed by CA
	cert() {
		openssl req $ec -keyout "$1.key" -out "$1.csr" -subj "/CN=$1" \
		    2>/dev/null &&
		printf 'subjectAltName=%s\n' "$4" >"$1.ext" &&
		openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" \
		    -CAcreateserial -days "$3" -extfile "$1.ext" \
		    -out "$1.pem" 2>/dev/null
	}
	ca ca && ca other && ca alienca &&
	cert srv ca 2 DNS:localhost,IP:127.0.0.1 &&
	cert alien alienca 2 DNS:localhost,IP:127.0.0.1 &&
	cert name ca 2 DNS:redis.example &&
	cert old ca -1 DNS:localhost,IP:127.0.0.1 &&
	cert cli ca 2 DNS:cbexec
	) || { echo "openssl could not make the test's certificates"; return 1; }
}

trap 'redis_cleanup; rm -rf "$SCRATCH" "$T_TMP"' EXIT

cat >"$SCRATCH/host" <<SH
#!/bin/sh
h=$SCRATCH/host\$1
[ -n "\${HOST_NAMES:-}" ] &&
    export LD_PRELOAD=$T_DIR/hostshim.so SHIM_HOST=host\$1
shift
mkdir -p "\$h/home"
HOME=\$h/home XDG_STATE_HOME=\$h/state XDG_CONFIG_HOME=\$h/config \\
    CBEXEC_STATE_DIR=\$h/state/cbexec exec "$CBEXEC" "\$@"
SH
chmod +x "$SCRATCH/host"
