#!/bin/sh
# SPDX-License-Identifier: ISC
# --status shows a run in progress, as systemctl status leads with "active
# (running) since ...; Main PID": the run's number, since when, and the pid
# and host of the cbexec running it (from its start record, SPEC §11); a
# cbexec that holds the circuit between runs (a --loop's --delay) is named
# too; a record whose cbexec is gone is no run going on.  --status --json
# says the same in "running" and "holder", and --status --all lists a
# circuit whose first run is going on.
. "$(dirname "$0")/lib.sh"
SCHEMA=$TOP/contrib/schema
valid() { perl "$T_DIR/jsonschema.pl" "$SCHEMA/$1" "$2" 2>&1; }
host=$(hostname)

# A first run going on: no state yet.
"$CBEXEC" -q --name job -- sh -c 'echo $$ > job.pid; exec sleep 30' &
cb=$!
poll_until 10 test -s job.pid
out=$("$CBEXEC" --status job); rc=$?
"$CBEXEC" --status job --json > job.json
"$CBEXEC" --status --all > all.txt
is "$rc" 0 "--status of a circuit whose first run is going on: 0"
like "$out" "^running: +run 1 since [0-9]{2}:[0-9]{2}Z, [0-9]+s ago  \\(pid $cb on $host\\)\$" \
	"--status: running, run 1, since when, cbexec's pid and host"
is "$(jget job.json running.iteration):$(jget job.json running.pid):$(jget job.json running.host)" \
	"1:$cb:$host" "--status --json: running's iteration, pid and host"
like "$(jget job.json running.started_at)" '^20[0-9-]+T[0-9:.]+Z$' "... and since when (started_at)"
is "$(jget job.json holder.pid):$(jget job.json holder.host)" "$cb:$host" "... and who holds the circuit"
is "$(valid status.schema.json job.json)" "" "... valid (status.schema.json)"
like "$(grep job all.txt)" "running \\(pid $cb\\)" "--status --all: listed, running"
kill "$(cat job.pid)"
wait "$cb"

# Between runs: held, no run.
rm -f job.pid
"$CBEXEC" -q --name job -n 2 --delay 20 -- sh -c 'echo $$ > job.pid' &
cb=$!
ran2() { [ "$(jget "$CBEXEC_STATE_DIR/job.json" iteration 2>/dev/null)" = 2 ]; }
poll_until 10 ran2
out=$("$CBEXEC" --status job)
"$CBEXEC" --status job --json > held.json
like "$out" "^held by: +pid $cb on $host  \\(no run going on\\)\$" "--status between runs: who holds it"
ok "$(printf '%s\n' "$out" | grep -q '^running:'; [ $? -ne 0 ]; echo $?)" "... and no run going on"
is "$(jget held.json running):$(jget held.json holder.pid)" "null:$cb" "--status --json: running null, the holder"
kill -TERM "$cb"
wait "$cb"

# Nobody: neither row, both null.
out=$("$CBEXEC" --status job)
"$CBEXEC" --status job --json > idle.json
ok "$(printf '%s\n' "$out" | grep -Eq '^(running|held by):'; [ $? -ne 0 ]; echo $?)" "--status of an idle circuit: no running, no holder"
is "$(jget idle.json running):$(jget idle.json holder)" "null:null" "--status --json: both null"

# A cbexec killed during its run left its record: no run is going on.
rm -f job.pid
"$CBEXEC" -q --name job -- sh -c 'echo $$ > job.pid; exec sleep 30' &
cb=$!
poll_until 10 test -s job.pid
kill -9 "$cb"
wait "$cb" 2>/dev/null
poll_until 10 dead "$(cat job.pid)"
poll_until 10 sh -c '! "$1" --status job | grep -q "^held by:"' sh "$CBEXEC"
out=$("$CBEXEC" --status job)
ok "$(printf '%s\n' "$out" | grep -Eq '^(running|held by):'; [ $? -ne 0 ]; echo $?)" \
	"a cbexec killed during its run: no run going on (the next invocation counts it)"
done_testing
