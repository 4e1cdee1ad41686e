#!/bin/sh
# SPDX-License-Identifier: ISC
# --metrics on several hosts of one circuit in a shared store: a circuit
# opened by another host's run, or by an operator's --trip there, is OPEN
# in this host's textfile as soon as this host's next run is refused, so
# CbexecCircuitOpen fires for every host that runs it.
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
done_testing
