#!/bin/sh
# SPDX-License-Identifier: ISC
# An account's gate in the shared store (--store with --account): a usage
# limit that host A's run meets is the document under cbexec:account:NAME,
# and host B (its own HOME and state directory) is refused until the reset
# time, then runs the one trial, which closes the gate; while that trial
# goes on host C waits; --status --all lists the store's accounts and
# --reset-account clears one there; two hosts learning at once both count
# (compare-and-set on the document's generation).
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"

redis_start
S="--store $REDIS_URL"
mkdir -p bin
export TZ=UTC LOG=$SCRATCH/ran.log
# A Claude Code stand-in: hits its usage limit (resetting at $RESET) while
# $LIMIT is set; when $SLOW is set, first waits for $LOG.CIRCUIT.go (at
# most $SLOW seconds); logs every run.
cat >bin/claude <<'SH'
#!/bin/sh
echo "$CIRCUIT" >>"$LOG"
if [ -n "${SLOW:-}" ]; then
	touch "$LOG.$CIRCUIT.started"
	i=0
	while [ ! -e "$LOG.$CIRCUIT.go" ] && [ $i -lt $((SLOW * 20)) ]; do
		sleep 0.05; i=$((i + 1))
	done
fi
if [ -n "${LIMIT:-}" ]; then
	printf '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":%s,"rateLimitType":"five_hour"}}\n' "$RESET"
	printf '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"api_error":"usage_limit_reached","result":"You'"'"'ve hit your 5-hour limit","session_id":"s-lim"}\n'
	exit 1
fi
printf '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s-ok"}\n'
SH
chmod +x bin/claude
PATH=$SCRATCH/bin:$PATH
# host N ARGS...: cbexec on host N (exec'd, so "host ... &" is cbexec).
cat >host <<SH
#!/bin/sh
h=$SCRATCH/host\$1; shift
mkdir -p "\$h/home"
HOME=\$h/home XDG_STATE_HOME=\$h/state XDG_CONFIG_HOME=\$h/config \\
    CBEXEC_STATE_DIR=\$h/state/cbexec exec "$CBEXEC" --no-prompt \\
    --progress exit "\$@"
SH
chmod +x host
runs() { grep -c "^$1\$" "$LOG" 2>/dev/null; }
acct() { rcli GET cbexec:account:max | jget /dev/stdin "$1"; }
# (the reset 5 s ahead: two hosts' runs and --status --all come before it
# on a loaded machine too)
SOON=5; [ -n "$UNDER_VALGRIND" ] && SOON=12

RESET=$(( $(date +%s) + SOON ))
export RESET
CIRCUIT=a LIMIT=1 ./host 1 $S --account max --name a -- claude -p x \
    >/dev/null 2>err; rc=$?
is "$rc" 120 "host A meets the usage limit: 120"
is "$(acct gate)/$(acct type)/$(acct circuit)" "OPEN/usage_limit/a" \
    "the account in the store: OPEN, usage_limit, learned by a"
is "$(acct retry_at)" "$(date -u -d "@$RESET" +%Y-%m-%dT%H:%M:%S.000Z)" \
    "...until the reset time"
ls "$SCRATCH"/host*/state/cbexec/*.account >/dev/null 2>&1
ok "$([ $? -ne 0 ] && echo 0 || echo 1)" "no account file on any host"

CIRCUIT=b ./host 2 $S --account max --name b -- claude -p x >/dev/null 2>err
rc=$?
is "$rc/$(runs b)" "120/0" "host B before the reset time: refused, not run"
like "$(cat err)" "^cbexec\[b\]: account max is OPEN: usage limit until ([A-Z][a-z]{2} )?[0-9:]+ UTC \(learned by circuit a\); retry in" \
    "...saying whose limit and until when"
"$CBEXEC" $S --status --all >all 2>&1; rc=$?
like "$(cat all)" "account max: OPEN  usage limit until" \
    "--status --all lists the store's account"

# At the reset time: B's trial (going on until C has asked), C waits for
# it, then it closes.
poll_until 30 sh -c "[ \$(date +%s) -ge $RESET ]"
CIRCUIT=b SLOW=30 ./host 2 $S --account max --name b -- claude -p x \
    >/dev/null 2>errb & B=$!
poll_until 20 test -e "$LOG.b.started"
CIRCUIT=c ./host 3 $S --account max --name c -- claude -p x >/dev/null 2>errc
rc=$?
touch "$LOG.b.go"
is "$rc/$(runs c)" "120/0" "host C during B's trial: refused"
like "$(cat errc)" "a trial run of circuit b is going on" "...the trial is b's"
wait $B; rc=$?
is "$rc/$(runs b)" "0/1" "B's one trial runs and succeeds"
like "$(cat errb)" "account: max: HALF_OPEN: retry time reached" \
    "...as the account's trial"
is "$(acct gate)/$(acct retry_at)" "CLOSED/null" "the trial closed the gate"
CIRCUIT=c ./host 3 $S --account max --name c -- claude -p x >/dev/null 2>&1
is "$?/$(runs c)" "0/1" "after it host C runs"

# --reset-account over the store.
RESET=$(( $(date +%s) + 3600 ))
CIRCUIT=a LIMIT=1 ./host 1 $S --account max --name a -- claude -p x \
    >/dev/null 2>&1
is "$(acct gate)" OPEN "OPEN again"
gen=$(acct generation)
"$CBEXEC" $S --reset-account max 2>err; rc=$?
is "$rc/$(acct gate)" "0/CLOSED" "--reset-account --store closes it in the store"
is "$(acct generation)" "$((gen + 1))" "...one more generation"
"$CBEXEC" $S --reset-account nosuch 2>err; rc=$?
is "$rc" 125 "--reset-account of an account not in the store: 125"

# Two hosts learning at the same time: neither write is lost.
RESET=$(( $(date +%s) + 3600 ))
gen=$(acct generation)
CIRCUIT=p LIMIT=1 ./host 1 $S --account max --name p -- claude -p x \
    >/dev/null 2>&1 & P=$!
CIRCUIT=q LIMIT=1 ./host 2 $S --account max --name q -- claude -p x \
    >/dev/null 2>&1 & Q=$!
wait $P; rp=$?
wait $Q; rq=$?
is "$rp/$rq" "120/120" "both hosts met the limit"
ok "$([ "$(acct generation)" -ge $((gen + 1)) ] && [ "$(acct gate)" = OPEN ] &&
    echo 0 || echo 1)" "the account is OPEN, each write on the one before it"

# A corrupt account document in the store stops the circuits on it.
rcli SET cbexec:account:bad 'garbage' >/dev/null
CIRCUIT=z ./host 1 $S --account bad --name z -- claude -p x >/dev/null 2>err
is "$?/$(runs z)" "125/0" "a corrupt account in the store: 125, not run"
like "$(cat err)" "cbexec:account:bad in unix://.*corrupt" "...naming the key"
"$CBEXEC" $S --reset-account bad 2>err; rc=$?
is "$rc" 0 "--reset-account moves it aside"
like "$(rcli KEYS 'cbexec:corrupt-account:bad:*')" '^cbexec:corrupt-account:bad:20' \
    "...kept for the operator"

done_testing
