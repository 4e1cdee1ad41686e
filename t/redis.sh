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
#   ./host N ARGS...       (written here) cbexec as seen from host N: its
#                          own HOME, XDG and state directories, exec'd (so
#                          $! of "./host ... &" is cbexec itself)

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

trap 'redis_kill; rm -rf "$SCRATCH" "$T_TMP"' EXIT

cat >"$SCRATCH/host" <<SH
#!/bin/sh
h=$SCRATCH/host\$1; shift
mkdir -p "\$h/home"
HOME=\$h/home XDG_STATE_HOME=\$h/state XDG_CONFIG_HOME=\$h/config \\
    CBEXEC_STATE_DIR=\$h/state/cbexec exec "$CBEXEC" "\$@"
SH
chmod +x "$SCRATCH/host"
