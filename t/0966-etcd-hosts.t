#!/bin/sh
# SPDX-License-Identifier: ISC
# Several hosts on one circuit in an etcd cluster: three "hosts" (each its
# own HOME, XDG and state directories) x 15 invocations at once never run
# two commands at a time and count every run; a holder killed with -9
# gives the circuit up when its lease expires; a holder stopped past its
# lease finds its save refused (125) and the newer state kept; an
# account's gate (--account) shared by every host: a usage limit one meets
# holds the others until its reset time, --status --all lists it,
# --reset-account clears it, two hosts learning at once both count.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/etcd.sh"

ETCD_HEARTBEAT=50 ETCD_ELECTION=500 etcd_start
S="--store $ETCD_URL"
eget() { ectl get "$1" --print-value-only; }
ecount() { ectl get "$1" --keys-only | grep -c .; }
host() { ./host "$@"; }

# ---- 3 hosts x 15 at once (x 3 under valgrind, each many times slower) ----
# (45 at once on a small machine, the cluster's members among them: a
# store command may wait seconds for its answer)
N=15 W="--store-timeout 8s"
[ -n "$UNDER_VALGRIND" ] && N=3 W="--store-timeout 10s --store-lease 30s"
# The command takes an exclusive marker (mkdir is atomic): a second run
# at the same time would find it taken and say so.
cat >step.sh <<'SH'
#!/bin/sh
mkdir "$1/marker" 2>/dev/null || { echo overlap >>"$1/overlaps"; exit 9; }
echo "$CBEXEC_ITERATION" >>"$1/runs"
sleep 0.01
rmdir "$1/marker"
SH
chmod +x step.sh
pids=
for h in 1 2 3; do
	for i in $(seq $N); do
		host $h $S $W --name shared --wait-lock=300s -q -- \
		    ./step.sh "$SCRATCH" 2>>"err$h" &
		pids="$pids $!"
	done
done
fails=0
for p in $pids; do wait "$p" || fails=$((fails + 1)); done
is "$fails" 0 "all $((3 * N)) invocations exit 0"
is "$(cat overlaps 2>/dev/null | wc -l)" 0 "never two runs at once"
is "$(wc -l <runs)" $((3 * N)) "$((3 * N)) runs made"
is "$(eget cbexec:circuit:shared | jget /dev/stdin iteration)" $((3 * N)) \
    "iteration equals the runs made"
is "$(sort -n runs | uniq | wc -l)" $((3 * N)) "each run saw its own iteration"
is "$(ecount cbexec:lock:shared)" 0 "no lock left"

# Without --wait-lock, a second host is BUSY at once (the run goes on
# until the second host has asked, however slowly that one starts).
host 1 $S --name busy -- sh -c 'touch held; i=0
    while [ ! -e released ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done' \
    2>/dev/null & p=$!
poll_until 20 test -e held
host 2 $S --name busy -- true 2>err; rc=$?
touch released
like "$rc:$(cat err)" "^123:.*busy: another cbexec holds its lease" \
    "another host while it runs: BUSY (123)"
wait $p

# A lease the next invocation cannot outlive by starting slowly (a loaded
# machine, an election of the cluster, valgrind), each store command a
# third of it.
LEASE=3 SLEEP=4
[ -n "$UNDER_VALGRIND" ] && LEASE=8 SLEEP=12

# ---- kill -9 of the holder ----
./host 1 $S --store-lease ${LEASE}s --name k -- sh -c 'echo $$ >k.pid; exec sleep 30' \
    2>/dev/null & holder=$!
poll_until 20 test -s k.pid
kill -9 $holder; wait $holder 2>/dev/null
host 2 $S --name k -- true 2>err; rc=$?
is "$rc" 123 "until the lease expires the circuit is busy"
poll_until 20 dead "$(cat k.pid)"; ok $? "the holder's command dies with it"
host 2 $S --name k --wait-lock=60s -- touch k-ran 2>err; rc=$?
is "$rc:$([ -e k-ran ] && echo ran)" "0:ran" "then another host runs"

# ---- SIGSTOP of a holder past its lease ----
./host 1 $S --store-lease ${LEASE}s --name s -- sh -c "touch s-started; sleep $SLEEP" \
    2>errA & A=$!
poll_until 20 test -e s-started
kill -STOP $A
poll_until 60 sh -c '[ -z "$(etcdctl --endpoints "$1" get cbexec:lock:s --keys-only)" ]' \
    sh "$ETCD_EPS"; ok $? "the stopped holder's lease expires, its lock key with it"
host 2 $S --name s -- sh -c 'exit 4' 2>errB; rc=$?
is "$rc" 4 "another host takes the circuit over and runs"
eget cbexec:circuit:s >newer.json
kill -CONT $A
wait $A; rc=$?
is "$rc" 125 "the resumed holder exits 125"
like "$(cat errA)" "lease on circuit s (expired|ran out|is gone)|another holder (saved a newer state|has it)" \
    "saying its lease was lost, its state not saved"
is "$(eget cbexec:circuit:s | jcompact /dev/stdin)" "$(jcompact newer.json)" \
    "the newer state is intact"
is "$(jget newer.json last_error.exit_code)" 4 "it is the other host's run"

# ---- an account's gate in etcd ----
mkdir -p bin
export TZ=UTC LOG=$SCRATCH/ran.log
# A Claude Code stand-in: hits its usage limit (resetting at $RESET) while
# $LIMIT is set; sleeps $SLOW seconds first when set; logs every run.
cat >bin/claude <<'SH'
#!/bin/sh
echo "$CIRCUIT" >>"$LOG"
[ -n "${SLOW:-}" ] && { touch "$LOG.$CIRCUIT.started"; sleep "$SLOW"; }
if [ -n "${LIMIT:-}" ]; then
	printf '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":%s,"rateLimitType":"five_hour"}}\n' "$RESET"
	printf '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"api_error":"usage_limit_reached","result":"You'"'"'ve hit your 5-hour limit","session_id":"s-lim"}\n'
	exit 1
fi
printf '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s-ok"}\n'
SH
chmod +x bin/claude
PATH=$SCRATCH/bin:$PATH
runs() { grep -c "^$1\$" "$LOG" 2>/dev/null; }
acct() { eget cbexec:account:max | jget /dev/stdin "$1"; }
A="--no-prompt --progress exit --account max"
# (the reset 5 s ahead: two hosts' runs and --status --all come before it
# on a loaded machine too)
SOON=5; [ -n "$UNDER_VALGRIND" ] && SOON=12

RESET=$(( $(date +%s) + SOON ))
export RESET
CIRCUIT=a LIMIT=1 host 1 $S $A --name a -- claude -p x >/dev/null 2>err
rc=$?
is "$rc" 120 "host A meets the usage limit: 120"
is "$(acct gate)/$(acct type)/$(acct circuit)" "OPEN/usage_limit/a" \
    "the account in etcd: OPEN, usage_limit, learned by a"
CIRCUIT=b host 2 $S $A --name b -- claude -p x >/dev/null 2>err; rc=$?
is "$rc/$(runs b)" "120/0" "host B before the reset time: refused, not run"
like "$(cat err)" "account max is OPEN: usage limit until" \
    "...saying whose limit and until when"
"$CBEXEC" $S --status --all >all 2>&1; rc=$?
like "$(cat all)" "account max: OPEN  usage limit until" \
    "--status --all lists the store's account"
poll_until 30 sh -c "[ \$(date +%s) -ge $RESET ]"
CIRCUIT=b host 2 $S $A --name b -- claude -p x >/dev/null 2>errb; rc=$?
is "$rc/$(runs b)" "0/1" "at the reset time B's trial runs and succeeds"
is "$(acct gate)/$(acct retry_at)" "CLOSED/null" "the trial closed the gate"

RESET=$(( $(date +%s) + 3600 ))
CIRCUIT=a LIMIT=1 host 1 $S $A --name a -- claude -p x >/dev/null 2>&1
gen=$(acct generation)
"$CBEXEC" $S --reset-account max 2>err; rc=$?
is "$rc/$(acct gate)/$(acct generation)" "0/CLOSED/$((gen + 1))" \
    "--reset-account closes it in etcd, one more generation"
"$CBEXEC" $S --reset-account nosuch 2>err; rc=$?
is "$rc" 125 "--reset-account of an account not in etcd: 125"

# Two hosts learning at the same time: neither write is lost.
gen=$(acct generation)
CIRCUIT=p LIMIT=1 host 1 $S $A --name p -- claude -p x >/dev/null 2>&1 & P=$!
CIRCUIT=q LIMIT=1 host 2 $S $A --name q -- claude -p x >/dev/null 2>&1 & Q=$!
wait $P; rp=$?
wait $Q; rq=$?
is "$rp/$rq" "120/120" "both hosts met the limit"
ok "$([ "$(acct generation)" -ge $((gen + 1)) ] && [ "$(acct gate)" = OPEN ]
    echo $?)" "the account is OPEN, each write on the one before it"

# A corrupt account document stops the circuits on it.
ectl put cbexec:account:bad 'garbage' >/dev/null
CIRCUIT=z host 1 $S --no-prompt --account bad --name z -- claude -p x \
    >/dev/null 2>err
is "$?/$(runs z)" "125/0" "a corrupt account in etcd: 125, not run"
like "$(cat err)" "cbexec:account:bad in etcd://.*corrupt" "...naming the key"
"$CBEXEC" $S --reset-account bad 2>err; rc=$?
is "$rc" 0 "--reset-account moves it aside"
like "$(ectl get --prefix cbexec:corrupt-account:bad: --keys-only)" \
    '^cbexec:corrupt-account:bad:20' "...kept for the operator"

# ---- who holds a circuit, seen from another host ----
# The lock key names the holder's host and pid: --status (and --json,
# --status --all) on host 2 says host 1 runs run 1, or holds the circuit
# between the runs of a loop.
SCHEMA=$TOP/contrib/schema
valid() { perl "$T_DIR/jsonschema.pl" "$SCHEMA/$1" "$2" 2>&1; }
if host_names >why; then h1=host1
else
	echo "# $(cat why): both hosts are $(hostname)"
	h1=$(hostname)
fi
./host 1 $S -q --name fleet -- sh -c 'echo $$ >cmd.pid; exec sleep 30' &
cb=$!
poll_until 30 test -s cmd.pid
host 2 $S --status --all >all.txt
host 2 $S --status --all --json >all.json
out=$(host 2 $S --status fleet); rc=$?
host 2 $S --status fleet --json >st.json
like "$(grep fleet all.txt)" "running \\(pid $cb( on $h1)?\\)" \
    "--status --all on host 2 lists a circuit whose first run goes on on host 1"
is "$(perl -MJSON::PP -0777 -ne 'print "$_->{running}{host}:$_->{running}{pid}"
    for grep { $_->{circuit} eq "fleet" } @{decode_json($_)}' all.json)" \
    "$h1:$cb" "--status --all --json: running on host 1 (pid)"
is "$(valid status-all.schema.json all.json)" "" "... valid (status-all.schema.json)"
is "$rc" 0 "--status on host 2: 0"
like "$out" "^running: +run 1 since [0-9]{2}:[0-9]{2}Z, [0-9]+s ago  \\(pid $cb on $h1\\)\$" "--status on host 2: run 1, since when, on host 1 (pid)"
is "$(jget st.json running.host):$(jget st.json holder.host):$(jget st.json holder.pid):$(jget st.json path)" \
    "$h1:$h1:$cb:cbexec:circuit:fleet" "--status --json: running and holder on host 1"
is "$(valid status.schema.json st.json)" "" "... valid (status.schema.json)"
kill "$(cat cmd.pid)"
wait "$cb"
out=$(host 2 $S --status fleet)
ok "$(printf '%s\n' "$out" | grep -Eq '^(running|held by):'; [ $? -ne 0 ]; echo $?)" \
    "once it ended: no run going on, nobody holds it"
rm -f cmd.pid
./host 1 $S -q --name fleet -n 2 --delay 20 -- sh -c 'echo $$ >cmd.pid' \
    2>/dev/null &
cb=$!
poll_until 30 test -s cmd.pid
ran() { [ "$(eget cbexec:circuit:fleet | jget /dev/stdin iteration 2>/dev/null)" = 2 ]; }
poll_until 30 ran
out=$(host 2 $S --status fleet)
like "$out" "^held by: +pid $cb on $h1  \\(no run going on\\)\$" "--status on host 2 between host 1's runs: host 1 holds it"
kill -TERM "$cb"
wait "$cb"
unset HOST_NAMES

done_testing
