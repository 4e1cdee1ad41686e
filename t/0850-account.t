#!/bin/sh
# SPDX-License-Identifier: ISC
# The account gate (SPEC §9, --account NAME): a usage limit, a billing or
# an auth failure met by any circuit on an account stops every circuit on
# it before it runs anything -- until the reset time (then one trial), or
# until an operator's --reset-account -- in one state directory with the
# file store; a corrupt account document is never replaced; without
# --account nothing changes.
. "$(dirname "$0")/lib.sh"

FX=$TOP/t/corpus/recorded
C=$FX/claude-2.1.330
mkdir -p bin
export TZ=UTC LOG=$SCRATCH/ran.log
# A Claude Code stand-in: hits its usage limit (resetting at $RESET) while
# $LIMIT is set and the time is before $RESET; prints $FIX's recording when
# FIX is set; else succeeds.  Every run it makes is logged.
cat >bin/claude <<'EOF'
#!/bin/sh
echo "$CIRCUIT" >>"$LOG"
if [ -n "${FIX:-}" ]; then
	cat "$FIX.stdout"; cat "$FIX.stderr" >&2; exit "$(cat "$FIX.exit")"
fi
if [ -n "${LIMIT:-}" ] && [ "$(date +%s)" -lt "$RESET" ]; then
	printf '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":%s,"rateLimitType":"five_hour"}}\n' "$RESET"
	printf '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"api_error":"usage_limit_reached","result":"You'"'"'ve hit your 5-hour limit · resets soon","session_id":"s-lim"}\n'
	exit 1
fi
printf '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s-ok"}\n'
EOF
chmod +x bin/claude
PATH=$SCRATCH/bin:$PATH
cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }
# A reset time a little ahead: past the runs made before it, even when
# each cbexec takes a second under valgrind.
SOON=2; [ -n "$UNDER_VALGRIND" ] && SOON=10
acct() { jget "$CBEXEC_STATE_DIR/max.account" "$1" 2>/dev/null; }
runs() { cat "$LOG" 2>/dev/null | grep -c "^$1\$"; }

# --- bad names -------------------------------------------------------------
cb --account '../x' -- true 2>err
is "$?/$(wc -l <err | tr -d ' ')" "125/2" "--account ../x: 125"
like "$(head -1 err)" "^cbexec: invalid account name '../x' for --account" "...naming it"
CBEXEC_ACCOUNT=.x cb -- true 2>err
is "$?" 125 "CBEXEC_ACCOUNT=.x: 125"
like "$(cat err)" "CBEXEC_ACCOUNT" "...naming the variable"
"$CBEXEC" --reset-account 'a b' 2>err
is "$?" 125 "--reset-account 'a b': 125"

# --- without --account nothing is kept ------------------------------------
RESET=$(( $(date +%s) + 3600 ))
export RESET
CIRCUIT=n1 LIMIT=1 cb --name n1 -- claude -p x >/dev/null 2>&1
is "$?" 120 "no account: the usage limit opens the circuit only"
CIRCUIT=n2 cb --name n2 -- claude -p x >/dev/null 2>&1
is "$?" 0 "...another circuit runs"
ok "$(ls "$CBEXEC_STATE_DIR" | grep -c account)" "...and no account file is written"

# --- a usage limit on A refuses B until the reset time ---------------------
rm -f "$LOG"
CIRCUIT=a LIMIT=1 cb --account max --name a -- claude -p x >/dev/null 2>err
is "$?" 120 "A meets the usage limit: 120"
is "$(acct gate)/$(acct type)/$(acct circuit)" "OPEN/usage_limit/a" \
    "the account document: OPEN, usage_limit, learned by a"
is "$(acct retry_at)" "$(date -u -d "@$RESET" +%Y-%m-%dT%H:%M:%S.000Z)" \
    "...retry_at is the reset time"
like "$(acct message)" "hit your 5-hour limit" "...with the provider's message"
like "$(cat err)" "account: max: OPEN: usage_limit; every circuit on it waits until" \
    "A says the account is OPEN"
perm=$(stat -c %a "$CBEXEC_STATE_DIR/max.account")
is "$perm" 600 "the account file is 0600"
CIRCUIT=b cb --account max --name b -- claude -p x >/dev/null 2>err
is "$?" 120 "B before the reset time: refused, 120"
is "$(runs b)" 0 "...the command did not run"
is "$(wc -l <err | tr -d ' ')" 1 "...one line"
like "$(cat err)" "^cbexec\[b\]: account max is OPEN: usage limit until ([A-Z][a-z]{2} )?[0-9:]+ UTC \(learned by circuit a\); retry in [0-9hms]+; not running\. Reset: cbexec --reset-account max$" \
    "...naming the account, the reason and the retry time"
CIRCUIT=b cb -q --account max --name b -- claude -p x >/dev/null 2>err
is "$?/$(cat err)" "120/" "...silent under -q"
CIRCUIT=b CBEXEC_ACCOUNT=max cb --name b -- claude -p x >/dev/null 2>/dev/null
is "$?/$(runs b)" "120/0" "CBEXEC_ACCOUNT works as --account"
printf '{"account":"max"}\n' >cfg.json
CIRCUIT=b cb -c cfg.json --name b -- claude -p x >/dev/null 2>/dev/null
is "$?/$(runs b)" "120/0" "config key account works as --account"
is "$(jget "$CBEXEC_STATE_DIR/b.json" state 2>/dev/null || echo none)" none \
    "B's own circuit has no state: it never ran"
CIRCUIT=c cb --name c -- claude -p x >/dev/null 2>&1
is "$?" 0 "a circuit without --account still runs"

# --status shows the gate; its exit status says runs are refused.
"$CBEXEC" --status --account max --name a >/dev/null 2>&1
CIRCUIT=b cb --name b -- true >/dev/null 2>&1
"$CBEXEC" --status --account max --name b >out 2>&1
is "$?" 120 "--status of B on an OPEN account: 120"
like "$(cat out)" "^account: +max  \(gate OPEN since " "--status: the gate"
like "$(cat out)" "^account reason: +usage limit until ([A-Z][a-z]{2} )?[0-9:]+ UTC \(learned by circuit a\)" "--status: why"
like "$(cat out)" "^account retry at: +[0-9T:.-]+Z \(in [0-9hms]+\)" "--status: retry at ... (in ...)"
"$CBEXEC" --status --json --account max --name b >out 2>&1
is "$(perl -MJSON::PP -0777 -ne '$j=decode_json($_); print "$j->{state}/$j->{account_gate}{account}/$j->{account_gate}{gate}/$j->{account_gate}{type}"' out)" \
    "CLOSED/max/OPEN/usage_limit" "--status --json: the account_gate member"
"$CBEXEC" --status --name a >out 2>&1
is "$?" 120 "--status of A without --account: the circuit remembers its account"
like "$(cat out)" "^account: +max  \(gate OPEN since " "...and shows the gate"
is "$(jget "$CBEXEC_STATE_DIR/a.json" account)" max "the state file names the account"
is "$(jget "$CBEXEC_STATE_DIR/c.json" account)" null "...only when there is one"

# At the reset time one trial goes, and its success closes the gate.
"$CBEXEC" --reset-account max -q
RESET=$(( $(date +%s) + SOON ))
CIRCUIT=a LIMIT=1 RESET=$RESET cb -q --account max --name a1 -- claude -p x >/dev/null 2>&1
is "$?/$(acct gate)" "120/OPEN" "a usage limit resetting in 2s"
rm -f "$LOG"
CIRCUIT=b RESET=$RESET cb --account max --name b -- claude -p x >/dev/null 2>&1
is "$?/$(runs b)" "120/0" "B refused before it"
poll_until 30 sh -c "[ \$(date +%s) -gt $RESET ]"
CIRCUIT=b RESET=$RESET cb --account max --name b -- claude -p x >/dev/null 2>err
is "$?/$(runs b)" "0/1" "after the reset time: B's trial runs and succeeds"
like "$(cat err)" "account: max: HALF_OPEN: retry time reached" "...logged as the account's trial"
is "$(acct gate)/$(acct retry_at)/$(acct type)" "CLOSED/null/null" "the trial closed the gate"
CIRCUIT=d cb --account max --name d -- claude -p x >/dev/null 2>&1
is "$?/$(runs d)" "0/1" "after it, every circuit runs"

# A trial that meets the limit again re-arms the gate.
RESET=$(( $(date +%s) + SOON ))
CIRCUIT=a LIMIT=1 RESET=$RESET cb -q --account max --name a2 -- claude -p x >/dev/null 2>&1
poll_until 30 sh -c "[ \$(date +%s) -ge $RESET ]"
NEXT=$(( $(date +%s) + 3600 ))
CIRCUIT=b LIMIT=1 RESET=$NEXT cb -q --account max --name b -- claude -p x >/dev/null 2>&1
is "$?/$(acct gate)/$(acct circuit)" "120/OPEN/b" "a trial meeting the limit again: OPEN again, learned by b"
is "$(acct retry_at)" "$(date -u -d "@$NEXT" +%Y-%m-%dT%H:%M:%S.000Z)" "...until the new reset time"

# While another circuit's trial goes on, the others wait for it; a claim
# its cbexec never gave back (killed) lapses.
now=$(date +%s)
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%S.000Z; }
cat >"$CBEXEC_STATE_DIR/max.account" <<EOF
{"version":1,"account":"max","gate":"HALF_OPEN","type":"usage_limit",
 "reason":"usage limit until 00:00 UTC","circuit":"a","since":"$(iso $now)",
 "retry_at":"$(iso $now)","trial_by":"z","trial_until":"$(iso $((now + 3600)))",
 "generation":9,"total_opens":1,"updated_at":"$(iso $now)"}
EOF
rm -f "$LOG"
CIRCUIT=y cb --account max --name y -- claude -p x >/dev/null 2>err
is "$?/$(runs y)" "120/0" "a trial of another circuit going on: refused"
like "$(cat err)" "account max is HALF_OPEN: a trial run of circuit z is going on; retry in [0-9hms]+; not running" \
    "...saying whose trial"
sed -i "s/$(iso $((now + 3600)))/$(iso $((now - 1)))/" "$CBEXEC_STATE_DIR/max.account"
CIRCUIT=y cb --account max --name y -- claude -p x >/dev/null 2>&1
is "$?/$(runs y)/$(acct gate)/$(acct generation)" "0/1/CLOSED/11" \
    "a lapsed claim: the next circuit takes the trial (one write), its success closes the gate (another)"

# --loop waits for the account's retry time, then runs.
"$CBEXEC" --reset-account max -q
RESET=$(( $(date +%s) + SOON ))
CIRCUIT=a LIMIT=1 RESET=$RESET cb -q --account max --name a3 -- claude -p x >/dev/null 2>&1
rm -f "$LOG"
CIRCUIT=e RESET=$RESET cb --loop -n 1 --budget 20s --account max --name e -- claude -p x >/dev/null 2>err
is "$?/$(runs e)" "0/1" "--loop: waits for the account's retry time, then runs"
like "$(cat err)" "waiting [0-9.ms]+ for the retry time" "...saying so"
RESET=$(( $(date +%s) + 3600 ))
CIRCUIT=a LIMIT=1 RESET=$RESET cb -q --account max --name a3 -- claude -p x >/dev/null 2>&1
CIRCUIT=e cb -q --loop --budget 3s --account max --name e -- claude -p x >/dev/null 2>&1
is "$?/$(runs e)" "120/1" "--loop: a retry time past the budget: 120 at once"

# --- billing and auth: refused until --reset-account -----------------------
"$CBEXEC" --reset-account max 2>err
is "$?" 0 "--reset-account: 0"
like "$(cat err)" "^cbexec: account max reset: OPEN -> CLOSED \(was: usage limit until" "...saying what it was"
for f in credit-json 401-text; do
	rm -f "$LOG"
	CIRCUIT=f FIX=$C/$f cb -q --account max --name f$f -- claude -p x >/dev/null 2>&1
	is "$?" 122 "$f on F: 122"
	type=$(acct type)
	is "$(acct gate)/$(acct retry_at)" "OPEN/null" "...the account is OPEN with no retry time ($type)"
	CIRCUIT=g cb --account max --name g -- claude -p x >/dev/null 2>err
	is "$?/$(runs g)" "120/0" "...G refused, 120, not run"
	like "$(cat err)" "account max is OPEN: fatal: $type \(learned by circuit f$f\); not running\. Reset: cbexec --reset-account max" \
	    "...the line says why and how to reset"
	"$CBEXEC" --reset-account max -q 2>err
	is "$?/$(cat err)" "0/" "--reset-account -q: silent"
	CIRCUIT=g cb --account max --name g -- claude -p x >/dev/null 2>&1
	is "$?/$(runs g)" "0/1" "...then G runs"
done
# A usage limit never hides a billing failure.
CIRCUIT=f FIX=$C/credit-json cb -q --account max --name fb -- claude -p x >/dev/null 2>&1
CIRCUIT=a LIMIT=1 RESET=$RESET cb -q --account max --name a4 -- claude -p x >/dev/null 2>&1
is "$(acct type)/$(acct retry_at)" "billing/null" "a later usage limit leaves billing in place"
gen=$(acct generation)
"$CBEXEC" --reset-account max -q
is "$(acct generation)" "$((gen + 1))" "every write bumps generation"

# --- --reset-account of an unknown account ---------------------------------
"$CBEXEC" --reset-account nosuch 2>err
is "$?" 125 "--reset-account nosuch: 125"
is "$(cat err)" "cbexec: no such account 'nosuch': $CBEXEC_STATE_DIR/nosuch.account does not exist" \
    "...no such account, naming the path"
ok "$(test ! -e "$CBEXEC_STATE_DIR/nosuch.account.lock"; echo $?)" "...and nothing created"
"$CBEXEC" --reset-account max x 2>/dev/null
is "$?" 125 "--reset-account takes no CIRCUIT"

# --- a corrupt account document: 125, never replaced ------------------------
printf '{"version":1,"gate":"OPEN"' >"$CBEXEC_STATE_DIR/max.account"
cp "$CBEXEC_STATE_DIR/max.account" corrupt.copy
rm -f "$LOG"
CIRCUIT=h cb --account max --name h -- claude -p x >/dev/null 2>err
is "$?/$(runs h)" "125/0" "a corrupt account file: 125, the command not run"
like "$(cat err)" "max.account: corrupt account file" "...naming the file"
CIRCUIT=h LIMIT=1 RESET=$RESET cb --account max --name h -- claude -p x >/dev/null 2>&1
cmp -s corrupt.copy "$CBEXEC_STATE_DIR/max.account"
ok "$?" "...never replaced"
"$CBEXEC" --status --account max --name a >/dev/null 2>&1
is "$?" 125 "--status on a corrupt account: 125"
printf '{"version":1,"gate":"OPEN","gate":"CLOSED"}\n' >"$CBEXEC_STATE_DIR/max.account"
CIRCUIT=h cb --account max --name h -- claude -p x >/dev/null 2>err
is "$?" 125 "a duplicate key is corrupt"
"$CBEXEC" --reset-account max 2>err
is "$?" 0 "--reset-account of a corrupt document: 0"
like "$(cat err)" "moved it aside to .*max\.account\.corrupt-" "...it is moved aside"
is "$(acct gate)" CLOSED "...and the gate is CLOSED"
ln -sf /dev/null "$CBEXEC_STATE_DIR/lnk.account"
CIRCUIT=h cb --account lnk --name h -- claude -p x >/dev/null 2>&1
is "$?" 125 "a symlinked account document is refused"

# --- --metrics: the account's gate as a gauge --------------------------------
"$CBEXEC" --reset-account max -q
CIRCUIT=m LIMIT=1 RESET=$RESET cb -q --account max --name m --metrics m.prom -- claude -p x >/dev/null 2>&1
like "$(cat m.prom)" '^cbexec_account_gate\{circuit="m",account="max"\} 2$' \
    "cbexec_account_gate: 2 once the run met the usage limit"
CIRCUIT=m2 cb -q --name m2 --metrics m2.prom -- claude -p x >/dev/null 2>&1
ok "$(grep -c cbexec_account_gate m2.prom)" "...no gauge without --account"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <m.prom >/dev/null 2>&1
	ok "$?" "promtool check metrics accepts it"
else
	skip "promtool not installed"
fi

# --- --status --all lists the accounts after the circuits -------------------
"$CBEXEC" --status --all >out 2>&1
like "$(cat out)" "^account max: OPEN  usage limit until ([A-Z][a-z]{2} )?[0-9:]+ UTC \(learned by circuit m\); retry at [0-9T:.-]+Z \(in [0-9hms]+\)$" \
    "--status --all: a line per account"
ok "$(grep -c '^account lnk: .*symbolic link' out >/dev/null; echo $?)" "...an unreadable one says why"

# --- --reset-account keeps the textfiles true --------------------------------
# The circuits on the account that wrote a textfile here show the gate
# closed at once, not at their next run; a circuit on no account is left.
cp m2.prom m2.before
"$CBEXEC" --reset-account max -q
like "$(cat m.prom)" '^cbexec_account_gate\{circuit="m",account="max"\} 0$' \
    "--reset-account: the circuit's textfile shows the gate closed"
is "$(cmp m2.prom m2.before && echo same)" same "...a circuit on no account's file is left"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <m.prom >/dev/null 2>&1
	ok "$?" "...promtool check metrics accepts it"
else
	skip "promtool not installed"
fi

# --- completions: the accounts of the state directory ----------------------
is "$(bash_comp "$TOP/contrib/cbexec.bash" --reset-account m | tr '\n' ' ' | sed 's/ $//')" \
    max "bash: --reset-account m -> max"
is "$(bash_comp "$TOP/contrib/cbexec.bash" --acc | tr '\n' ' ' | sed 's/ $//')" \
    --account "bash: --acc -> --account"
if command -v zsh >/dev/null 2>&1 && zsh -c 'zmodload zsh/zpty' 2>/dev/null; then
	is "$(timeout 30 zsh "$T_DIR/zsh-complete" "$TOP/contrib" cbexec --account m 2>&1 | tr '\n' ' ' | sed 's/ $//')" \
	    max "zsh: --account m -> max"
else
	skip "zsh with zpty not installed"
fi

done_testing
