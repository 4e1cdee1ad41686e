#!/bin/sh
# SPDX-License-Identifier: ISC
# A run in progress on a shared store, seen from another host: --status
# says which host holds the circuit (its lease names the host and pid) and
# which run it is running since when (its start record, cbexec:run:NAME);
# --status --json says the same in "running" and "holder"; and --status
# --all lists a circuit whose first run is going on (a lease and no state
# yet), as the file store lists one whose lock is held.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"

redis_start
S="--store $REDIS_URL"
SCHEMA=$TOP/contrib/schema
valid() { perl "$T_DIR/jsonschema.pl" "$SCHEMA/$1" "$2" 2>&1; }
# Each host its own name where a preload can give it one; else both are
# this machine.
if host_names > why; then h1=host1 h2=host2
else
	echo "# $(cat why): both hosts are $(hostname)"
	h1=$(hostname) h2=$h1
fi

# Host 1's first run of a new circuit, seen from host 2.
./host 1 $S -q --name fleet -- sh -c 'echo $$ > cmd.pid; exec sleep 30' &
cb=$!
poll_until 10 test -s cmd.pid
./host 2 $S --status --all > all.txt
./host 2 $S --status --all --json > all.json
out=$(./host 2 $S --status fleet); rc=$?
./host 2 $S --status fleet --json > st.json
like "$(grep fleet all.txt)" "running \\(pid $cb( on $h1)?\\)" \
	"--status --all on host 2 lists a circuit whose first run goes on on host 1"
is "$(jget all.json 0.circuit):$(jget all.json 0.running.host):$(jget all.json 0.running.pid):$(jget all.json 0.iteration)" \
	"fleet:$h1:$cb:0" "--status --all --json: running on host 1, no run recorded yet"
is "$(valid status-all.schema.json all.json)" "" "... valid (status-all.schema.json)"
is "$rc" 0 "--status on host 2: 0"
like "$out" "^running: +run 1 since [0-9]{2}:[0-9]{2}Z, [0-9]+s ago  \\(pid $cb on $h1\\)\$" \
	"--status on host 2: run 1, since when, on host 1 (pid)"
is "$(jget st.json running.host):$(jget st.json holder.host):$(jget st.json path)" \
	"$h1:$h1:cbexec:circuit:fleet" "--status --json: running and holder on host 1"
is "$(valid status.schema.json st.json)" "" "... valid (status.schema.json)"
kill "$(cat cmd.pid)"
wait "$cb"
out=$(./host 2 $S --status fleet)
ok "$(printf '%s\n' "$out" | grep -Eq '^(running|held by):'; [ $? -ne 0 ]; echo $?)" \
	"once it ended: no run going on, nobody holds it"

# Between runs of a loop on host 1: held, no run.
rm -f cmd.pid
./host 1 $S -q --name fleet -n 2 --delay 20 -- sh -c 'echo $$ > cmd.pid' 2>/dev/null &
cb=$!
poll_until 10 test -s cmd.pid
ran() { [ "$(rcli GET cbexec:circuit:fleet | jget /dev/stdin iteration 2>/dev/null)" = 2 ]; }
poll_until 10 ran
out=$(./host 2 $S --status fleet)
like "$out" "^held by: +pid $cb on $h1  \\(no run going on\\)\$" "--status on host 2 between host 1's runs: host 1 holds it"
kill -TERM "$cb"
wait "$cb"
done_testing
