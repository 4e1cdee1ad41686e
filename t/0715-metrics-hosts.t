#!/bin/sh
# SPDX-License-Identifier: ISC
# --metrics on several hosts of one circuit in a shared store: a circuit
# opened by another host's run, or by an operator's --trip there, is OPEN
# in this host's textfile as soon as this host's next run is refused, so
# CbexecCircuitOpen fires for every host that runs it.  An operator's act
# (SPEC §11) rewrites the textfiles the circuit's runs wrote on the host it
# is done on, and another host's are made true at that host's next
# invocation of any kind (--status included): the alert clears there too,
# as promtool's rule test shows.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"

redis_start
S="--store $REDIS_URL"
val() { sed -n "s/^$2{[^}]*} //p" "$1"; }

# host N ARGS...: cbexec as seen from host N (its own state directory).
host() {
	h=$SCRATCH/host$1; shift
	mkdir -p "$h"
	CBEXEC_STATE_DIR=$h/state "$CBEXEC" "$@"
}

host 1 $S --name shared -q --progress exit --metrics h1.prom -- true
host 2 $S --name shared -q --progress exit --metrics h2.prom -- true
is "$(val h1.prom cbexec_state):$(val h2.prom cbexec_state)" "0:0" \
	"both hosts' textfiles: CLOSED"
# Host 1's runs open the circuit.
host 1 $S --name shared -q --no-prompt --progress exit --max-consecutive-errors 2 \
	--metrics h1.prom -- false 2>/dev/null
host 1 $S --name shared -q --no-prompt --progress exit --max-consecutive-errors 2 \
	--metrics h1.prom -- false 2>/dev/null; rc=$?
is "$rc" 120 "host 1 opens the circuit"
is "$(val h1.prom cbexec_state)" 2 "host 1's textfile: OPEN"
is "$(val h2.prom cbexec_state)" 0 "host 2's textfile has not heard yet"
host 2 $S --name shared -q --metrics h2.prom -- true; rc=$?
is "$rc" 120 "host 2's next run is refused"
is "$(val h2.prom cbexec_state)" 2 "... and host 2's textfile says OPEN"
like "$(cat h2.prom)" 'cbexec_open_reason\{circuit="shared",store="unix://[^"]*",reason="consecutive_errors"\} 1' \
	"... with the open reason's kind"
is "$(val h2.prom cbexec_runs_total)" 4 "... and the runs of every host"

# --- each host its own name: a reset on one, the other's file ---------------
if ! host_names > why; then
	for i in 1 2 3 4 5 6 7 8 9 10; do skip "$(cat why)"; done
	done_testing
	exit
fi
./host 1 $S --name fleet -q --progress exit --metrics f1.prom -- true
./host 2 $S --name fleet -q --progress exit --metrics f2.prom -- true
is "$(rcli GET cbexec:circuit:fleet | perl -MJSON::PP -0777 -e 'print join " ", sort map { "$_->{host}:" . ($_->{path} =~ s{.*/}{}r) } @{decode_json(<STDIN>)->{outputs}}')" \
	"host1:f1.prom host2:f2.prom" "the shared state remembers each host's textfile"
./host 1 $S --trip --name fleet --reason "bad deploy" 2>/dev/null
is "$(val f1.prom cbexec_state):$(val f2.prom cbexec_state)" "2:0" \
	"a trip on host 1 rewrites host 1's textfile at once; host 2's waits for host 2"
./host 2 $S --history --name fleet >/dev/null
is "$(val f2.prom cbexec_state)" 2 "host 2's next invocation (--history) makes its textfile say OPEN"
cp f1.prom f1.open
cp f2.prom f2.open
hint=$(./host 2 $S --status fleet | sed -n 's/^reset: *//p')
is "$hint" "cbexec --store $REDIS_URL --reset-circuit --name fleet" "host 2's --status prints the reset, with the store"
mkdir -p bin
printf '#!/bin/sh\nexec "%s/host" 2 "$@"\n' "$SCRATCH" > bin/cbexec
chmod +x bin/cbexec
PATH="$SCRATCH/bin:$PATH" sh -c "$hint" 2>/dev/null
is "$(val f2.prom cbexec_state):$(val f1.prom cbexec_state)" "0:2" \
	"the reset as printed on host 2: its textfile CLOSED at once, host 1's not yet"
./host 1 $S --status fleet >/dev/null
is "$(val f1.prom cbexec_state)" 0 "host 1's next invocation (--status, no lock) makes its textfile CLOSED"
ok "$(grep -q cbexec_open_reason f1.prom; [ $? -ne 0 ]; echo $?)" "... without cbexec_open_reason"
if command -v promtool >/dev/null 2>&1; then
	for h in 1 2; do
		out=$(perl "$T_DIR/alertclears.pl" test "$TOP/contrib/prometheus-alerts.yml" f$h.open f$h.prom "host$h:9100" 2>&1); rc=$?
		is "$rc" 0 "promtool test rules: CbexecCircuitOpen on host $h clears after the reset on host 2"
		[ "$rc" -eq 0 ] || printf '%s\n' "$out" | sed 's/^/# /' | head -30
	done
	perl "$T_DIR/alertclears.pl" render "$TOP/contrib/prometheus-alerts.yml" f1.open host1:9100 > desc
	ok "$(grep -qF "\`cbexec --store $REDIS_URL --reset-circuit --reason \"...\" fleet\`" desc; echo $?)" \
		"the alert's description names the store in its reset"
else
	skip "no promtool"; skip "no promtool"; skip "no promtool"
fi
done_testing
