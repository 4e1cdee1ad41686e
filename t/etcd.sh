# SPDX-License-Identifier: ISC
# For the tests of the etcd store (--store etcd://): an etcd cluster of
# the test's own, its members on loopback ports nobody listens on, their
# data in the scratch directory, never a system service.  Source it after
# lib.sh.  Without etcd (Debian's etcd-server) the whole test file is
# skipped, saying why; with CBEXEC_REQUIRE_ETCD set (CI) it bails out.
#
#   etcd_start [N]     start N members (3), wait for a leader; sets
#                      ETCD_URL (etcd://h1,h2,h3), ETCD_EPS (h1,h2,h3),
#                      ETCD_C1.. (client ports); ETCD_TLS=1 before it:
#                      the clients' side speaks TLS (etcd_tls makes a
#                      throw-away CA; the members' certificate names
#                      localhost only), ETCD_URL is etcds://localhost:...,
#                      and ETCD_CLIENT_CERT=1 wants a client certificate
#   etcd_kill I [SIG]  signal member I (default KILL; KILL and TERM wait
#                      for it to go)
#   etcd_revive I      start member I again on its data
#   etcd_leader        the index of the leader (from the members that
#                      answer), empty when none
#   ectl ARGS...       etcdctl on the cluster (as root when auth is on:
#                      ECTL_USER=user:password)
#   etcd_proxy I       a loopback proxy (t/storeproxy.py) in front of
#                      member I's client port, its mode in
#                      $ETCD_DIR/pI.mode; sets ETCD_PXI to its port (not
#                      in a subshell: the proxy ends with its parent)
#   etcd_fault I MODE  proxy I in MODE (pass, delay MS, hold, drop, reset,
#                      trickle), once it says so
#   ./host N ARGS...   (written here) cbexec as seen from host N: its own
#                      HOME, XDG and state directories, exec'd (so $! of
#                      "./host ... &" is cbexec itself); after
#                      host_names, its own host name too (hostN)
#   host_names (lib.sh) give each ./host N the name hostN from now on
#                      (t/hostshim.so preloaded); 1 with why not

if ! command -v etcd >/dev/null 2>&1 || ! command -v etcdctl >/dev/null 2>&1
then
	# CI installs it and must not pass by skipping these.
	if [ -n "${CBEXEC_REQUIRE_ETCD:-}" ]; then
		echo "Bail out! etcd is required (CBEXEC_REQUIRE_ETCD)"
		exit 1
	fi
	echo "1..0 # SKIP etcd not installed (Debian package etcd-server," \
	    "and etcd-client for etcdctl; make deps installs them)"
	exit 0
fi

ETCD_DIR=$SCRATCH/etcd
mkdir -p "$ETCD_DIR"
ETCD_SCHEME=http ETCD_CCERT=
export ETCDCTL_API=3

# N loopback ports nobody listens on now, one per line (perl: quicker to
# start than python3).
free_ports() {
	perl -MIO::Socket::INET -e 'my @s = map { IO::Socket::INET->new(
	    Listen => 1, LocalAddr => "127.0.0.1", LocalPort => 0) or die }
	    1 .. $ARGV[0]; print $_->sockport, "\n" for @s' "$1"
}

# etcd_tls: a throw-away CA and a certificate for localhost (the name
# only, not 127.0.0.1: a client that asks for that address finds the
# name wrong) signed by it, and a client certificate, in $ETCD_DIR/tls.
etcd_tls() {
	t=$ETCD_DIR/tls
	[ -s "$t/server.pem" ] && return 0
	mkdir -p "$t"
	(
		cd "$t" || exit 1
		openssl req -x509 -newkey rsa:2048 -nodes -days 2 \
		    -subj /CN=cbexec-test-ca -keyout ca.key -out ca.pem &&
		printf 'subjectAltName=DNS:localhost\n' >san.ext &&
		openssl req -newkey rsa:2048 -nodes -subj /CN=localhost \
		    -keyout server.key -out server.csr &&
		openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key \
		    -CAcreateserial -days 2 -extfile san.ext -out server.pem &&
		printf 'extendedKeyUsage=clientAuth\n' >client.ext &&
		openssl req -newkey rsa:2048 -nodes -subj /CN=cbexec \
		    -keyout client.key -out client.csr &&
		openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key \
		    -CAcreateserial -days 2 -extfile client.ext \
		    -out client.pem &&
		chmod 600 ca.key server.key client.key
	) >"$ETCD_DIR/tls.log" 2>&1 || {
		echo "Bail out! openssl could not make the test's CA"
		cat "$ETCD_DIR/tls.log"; exit 1
	}
}

# The client URL of member I, as its listener speaks; the name its
# certificate has with TLS.
etcd_curl() {
	eval "echo \${ETCD_SCHEME}://127.0.0.1:\$ETCD_C$1"
}
etcd_cname() {
	if [ "$ETCD_SCHEME" = https ]; then
		eval "echo https://localhost:\$ETCD_C$1"
	else
		etcd_curl "$1"
	fi
}

# etcd_run I: member I in the background, on its data directory.
etcd_run() {
	eval "c=\$ETCD_C$1 p=\$ETCD_P$1"
	set -- "$1" --name "m$1" --data-dir "$ETCD_DIR/m$1" \
	    --listen-client-urls "$(etcd_curl "$1")" \
	    --advertise-client-urls "$(etcd_curl "$1")" \
	    --listen-peer-urls "http://127.0.0.1:$p" \
	    --initial-advertise-peer-urls "http://127.0.0.1:$p" \
	    --initial-cluster "$ETCD_CLUSTER" --initial-cluster-state new \
	    --initial-cluster-token "cbexec-$$" \
	    --heartbeat-interval "${ETCD_HEARTBEAT:-100}" \
	    --election-timeout "${ETCD_ELECTION:-1000}" \
	    --logger zap --log-outputs stderr --log-level warn
	if [ "$ETCD_SCHEME" = https ]; then
		set -- "$@" --cert-file "$ETCD_DIR/tls/server.pem" \
		    --key-file "$ETCD_DIR/tls/server.key"
		[ -n "$ETCD_CCERT" ] && set -- "$@" \
		    --client-cert-auth --trusted-ca-file "$ETCD_DIR/tls/ca.pem"
	fi
	i=$1; shift
	etcd "$@" >>"$ETCD_DIR/log$i" 2>&1 &
	eval "ETCD_PID$i=\$!"
	echo "$!" >"$ETCD_DIR/pid$i"
}

ectl() {
	if [ "$ETCD_SCHEME" = https ]; then
		set -- --cacert "$ETCD_DIR/tls/ca.pem" "$@"
		[ -n "$ETCD_CCERT" ] && set -- \
		    --cert "$ETCD_DIR/tls/client.pem" \
		    --key "$ETCD_DIR/tls/client.key" "$@"
	fi
	[ -n "${ECTL_USER:-}" ] && set -- --user "$ECTL_USER" "$@"
	# etcdctl's own timeouts do not cover every wait (TLS): a bound.
	timeout -k 1 30 etcdctl --endpoints "$ETCD_EPS_URLS" \
	    --dial-timeout 3s --command-timeout 5s "$@"
}

etcd_start() {
	n=${1:-3}
	# a cluster of its own: none of a former one's members or data
	etcd_kill_all
	rm -rf "$ETCD_DIR"/m[0-9]* "$ETCD_DIR"/log[0-9]*
	ETCD_N=$n
	# what ETCD_TLS and ETCD_CLIENT_CERT said, kept for later calls
	if [ -n "${ETCD_TLS:-}" ]; then
		etcd_tls
		ETCD_SCHEME=https
	else
		ETCD_SCHEME=http
	fi
	ETCD_CCERT=${ETCD_CLIENT_CERT:-}
	set -- $(free_ports $((2 * n)))
	ETCD_CLUSTER= ETCD_EPS= ETCD_EPS_URLS=
	i=1
	while [ "$i" -le "$n" ]; do
		eval "ETCD_C$i=\$1 ETCD_P$i=\$2"
		shift 2
		eval "c=\$ETCD_C$i p=\$ETCD_P$i"
		ETCD_CLUSTER="$ETCD_CLUSTER${ETCD_CLUSTER:+,}m$i=http://127.0.0.1:$p"
		ETCD_EPS="$ETCD_EPS${ETCD_EPS:+,}$(etcd_cname $i | sed 's|.*://||')"
		ETCD_EPS_URLS="$ETCD_EPS_URLS${ETCD_EPS_URLS:+,}$(etcd_cname $i)"
		i=$((i + 1))
	done
	if [ "$ETCD_SCHEME" = https ]; then ETCD_URL=etcds://$ETCD_EPS
	else ETCD_URL=etcd://$ETCD_EPS; fi
	i=1
	while [ "$i" -le "$n" ]; do etcd_run $i; i=$((i + 1)); done
	# A write through the cluster: it has a leader and a quorum.
	poll_until 60 ectl_put || {
		echo "Bail out! the etcd cluster did not start"
		tail -n 20 "$ETCD_DIR"/log*; exit 1
	}
}

# The cluster takes a write.
ectl_put() { ectl put cbexec-test-up 1 >/dev/null 2>&1; }

etcd_kill() {
	eval "pid=\${ETCD_PID$1:-}"
	[ -n "$pid" ] || return 0
	kill "-${2:-KILL}" "$pid" 2>/dev/null
	case ${2:-KILL} in
	KILL|TERM|9|15)
		wait "$pid" 2>/dev/null
		eval "ETCD_PID$1="
		;;
	esac
}

etcd_revive() { etcd_run "$1"; }

etcd_kill_all() {
	i=1
	while [ "$i" -le "${ETCD_N:-0}" ]; do
		eval "pid=\${ETCD_PID$i:-}"
		[ -n "$pid" ] && { kill -CONT "$pid"; kill -KILL "$pid"; } \
		    2>/dev/null
		i=$((i + 1))
	done
	wait 2>/dev/null
}

# The leader's index, from the members that answer.
etcd_leader() {
	i=1
	while [ "$i" -le "${ETCD_N:-0}" ]; do
		ectl --endpoints "$(etcd_cname $i)" endpoint status -w fields \
		    2>/dev/null | awk '$1 == "\"MemberID\"" { m = $3 }
		    $1 == "\"Leader\"" { l = $3 }
		    END { exit !(m != "" && m == l) }' && { echo "$i"; return 0; }
		i=$((i + 1))
	done
}

etcd_proxy() {
	eval "c=\$ETCD_C$1"
	rm -f "$ETCD_DIR/p$1.port" "$ETCD_DIR/p$1.mode.now"
	echo pass >"$ETCD_DIR/p$1.mode"
	python3 "$T_DIR/storeproxy.py" "$ETCD_DIR/p$1.port" "$c" \
	    "$ETCD_DIR/p$1.mode" >/dev/null 2>&1 &
	echo $! >>"$ETCD_DIR/proxies"
	poll_until "${HELPER_START:-60}" test -s "$ETCD_DIR/p$1.port" || {
		echo "Bail out! no proxy"; exit 1
	}
	eval "ETCD_PX$1=\$(cat \"\$ETCD_DIR/p\$1.port\")"
}

# etcd_fault I MODE: the proxy of member I in MODE (storeproxy.py), once
# it says so.
etcd_fault() {
	echo "$2" >"$ETCD_DIR/p$1.mode"
	poll_until 20 sh -c '[ "$(cat "$1.now" 2>/dev/null)" = "$2" ]' sh \
	    "$ETCD_DIR/p$1.mode" "$2" || {
		echo "Bail out! proxy $1 not in $2"; exit 1
	}
}

trap 'for p in $(cat "$ETCD_DIR/proxies" 2>/dev/null); do kill $p; done \
    2>/dev/null; etcd_kill_all; rm -rf "$SCRATCH" "$T_TMP"' EXIT
# A test ended by a signal (prove interrupted, its reader gone) leaves no
# cluster behind either.
trap 'exit 1' HUP INT TERM PIPE

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
