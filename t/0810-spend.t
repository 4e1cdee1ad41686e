#!/bin/sh
# SPDX-License-Identifier: ISC
# Spend caps (SPEC §2, §9): a per-run cap crossed while the agent runs
# stops it as a timeout does (--signal, then SIGKILL after --kill-after):
# class budget, exit 124, outcome BUDGET; a figure only the result gives
# applies at the end and no further run starts.  A circuit over its
# rolling window is refused with 120 and retry_at until enough of the
# window has rolled off, then admitted again.  The state, --status,
# --metrics and --log say what was spent, and never 0 for a figure the
# agent did not report.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/fakeagent.sh"

cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }
st() { jget "$CBEXEC_STATE_DIR/$1.json" "$2"; }
val() { sed -n "s/^$2{[^}]*} //p" "$1"; }

# --- a per-run cap crossed mid-run --------------------------------------
t0=$(ms)
N=100 DELAY=0.1 IGNORE_TERM=1 PIDFILE=$SCRATCH/pid cb --name tok -k 0.5 \
    --max-tokens 3000 --log tok.log -- claude -p x >out 2>err
rc=$? t1=$(ms)
is "$rc" 124 "--max-tokens crossed mid-run: exit 124"
ok "$([ $((t1 - t0)) -lt 8000 ] && echo 0 || echo 1)" \
    "stopped within --kill-after of crossing (took $((t1 - t0)) ms of 10 s)"
ok "$(dead "$(cat pid)" && echo 0 || echo 1)" "the agent that ignored SIGTERM is gone"
is "$(st tok last_error.class)/$(st tok last_error.type)" budget/max_tokens \
    "class budget, type max_tokens in the state"
is "$(st tok outcome)" BUDGET "outcome BUDGET"
like "$(st tok last_error.message)" '^spend cap: 3030 tokens over --max-tokens 3000$' \
    "the message names the cap"
is "$(jget tok.log class)/$(jget tok.log type)" budget/max_tokens "--log: class and type"
# it ignored SIGTERM and went on writing until the SIGKILL
like "$(jget tok.log input_tokens)/$(jget tok.log cost_usd)" '^[3-9]000/null$' \
    "--log: the run's tokens; no cost before the result, never 0"
like "$(cat err)" 'run 1 was stopped after [0-9.]+s \([0-9]+ tokens, [0-9]+ turns\): budget max_tokens' \
    "the log line: stopped, what it used, why"
like "$(wc -l <out | tr -d ' ')" '^[3-9]$' "stdout passed through up to the stop"

N=10 cb --name turns --max-turns 2 -- claude -p x >/dev/null 2>&1
is "$?/$(st turns last_error.type)" 124/max_turns "--max-turns crossed: 124, max_turns"
N=2 cb --name under --max-turns 2 --max-tokens 2020 --max-cost 0.01 \
    -- claude -p x >/dev/null 2>&1
is "$?/$(st under outcome)" 0/OK "at the caps, not over them: exit 0"

# --- a figure only the result gives: the cap applies at the end ---------
N=1 COST=0.5 cb --name cost --loop -n 3 --max-cost 0.1 -- claude -p x \
    >/dev/null 2>&1
is "$?" 124 "--max-cost over in the result: exit 124"
is "$(st cost last_error.type)/$(st cost iteration)" max_cost/1 \
    "type max_cost, and the loop started no further run"

# --- a rolling window per circuit --------------------------------------
# (under valgrind a run takes a second or more: a longer window)
S=4; [ -n "$UNDER_VALGRIND" ] && S=20
w() { N=1 COST=${COST:-0.6} cb --name win --max-cost 1/${S}s "$@" -- claude -p x >/dev/null 2>&1; }
rm -f win.prom
w --metrics win.prom; r1=$?
is "$r1/$(val win.prom cbexec_state)" 0/0 "under the window cap: the run goes ahead"
N=1 COST=0.6 cb --name win --max-cost 1/${S}s --metrics win.prom -- claude -p x >/dev/null 2>err
r2=$?
is "$r2" 120 "the run that takes the window to its cap opens the circuit itself: 120"
is "$(st win state)/$(st win iteration)" OPEN/2 "...OPEN after that run, which was recorded"
like "$(st win open_reason)" "^spend cap: 1\\.2 of 1 USD in ${S}s until " "...saying why"
like "$(cat err)" "circuit CLOSED -> OPEN: spend cap: 1\\.2 of 1 USD" "...and the run's own log says so"
like "$(cat err)" "RETRY_AT: " "...with the OPEN block and its retry time"
is "$(val win.prom cbexec_state)" 2 "...and the metrics it wrote say OPEN"
w 2>err; rc=$?
is "$rc" 120 "over the window cap: refused with 120"
like "$(st win retry_at)" '^20[0-9-]+T' "retry_at is set"
like "$(st win open_reason)" "^spend cap: 1\\.2 of 1 USD in ${S}s until " "the reason names the window"
like "$("$CBEXEC" --status --name win)" "cost window: +1\\.2 of 1 USD in ${S}s, over the cap until " \
    "--status: spent/limit and when the window frees up"
is "$(st win iteration)" 2 "the refused run never started"
# (a trial costing 0.6 beside the 0.6 still in the window would cross the
# cap again and open the circuit anew: the trial is cheap)
w2() { COST=0.1 w; [ $? -eq 0 ]; }
poll_until $((S + 3)) w2
ok $? "admitted again once the window has rolled on"
is "$(st win state)" CLOSED "the trial closed the circuit"
[ "$(jget "$CBEXEC_STATE_DIR/win.json" spend.ledger | perl -MJSON::PP -e 'print scalar @{decode_json(<STDIN>)}')" -le 48 ]
ok $? "the ledger stays bounded"

"$CBEXEC" --reset-circuit --name win --reason "raised the budget" >/dev/null 2>&1
w; r1=$?; w; r2=$?
is "$r1/$r2/$(st win spend.cost_usd)" 0/120/2.5 "--reset-circuit empties the windows; the totals stay"

t() { N=1 cb --name twin --max-tokens 1500/1h -- claude -p x >/dev/null 2>&1; }
t; r1=$?; t; r2=$?; t; r3=$?
is "$r1/$r2/$r3" 0/120/120 "--max-tokens N/1h: the second run crosses it (120), the third is refused"
is "$(st twin iteration)" 2 "...and was not started"
like "$(st twin open_reason)" '^spend cap: 2020 of 1500 tokens in 1h until [0-9]{2}:[0-9]{2} UTC$|^spend cap: 2020 of 1500 tokens in 1h until [A-Z][a-z]{2} [0-9]{2}:[0-9]{2} UTC$' \
    "the tokens window's reason (its day named when not today)"

# A window that frees up almost a day later: the reason names the day when
# that is not today (UTC), wherever the reason is printed.
N=1 COST=2 cb --name day --max-cost 1/23h -- claude -p x >/dev/null 2>err
rc=$? at=$(( $(date +%s) + 23 * 3600 ))
day=
[ "$(date -u -d "@$at" +%F)" = "$(date -u +%F)" ] ||
    day="$(LC_ALL=C date -u -d "@$at" +%a) "
is "$rc" 120 "a run over a 23h window's cap: 120"
like "$(st day open_reason)" "^spend cap: 2 of 1 USD in 23h until $day[0-9]{2}:[0-9]{2} UTC\$" \
    "the reason: until ${day}HH:MM UTC"
like "$(cat err)" "OPEN: spend cap: 2 of 1 USD in 23h until $day[0-9]{2}:[0-9]{2} UTC" "...in the run's log line"
N=1 cb --name day --max-cost 1/23h -- claude -p x >/dev/null 2>err
like "$(cat err)" "circuit is OPEN: spend cap: 2 of 1 USD in 23h until $day[0-9]{2}:[0-9]{2} UTC \\(retry in 2[23]h" \
    "...in the refusal"
like "$("$CBEXEC" --status --name day)" "reason: +spend cap: 2 of 1 USD in 23h until $day[0-9]{2}:[0-9]{2} UTC" \
    "...and in --status"

# --- totals: state, --status, --metrics ---------------------------------
rm -f m.prom
N=2 COST=0.25 cb --name tot --metrics m.prom -- claude -p x >/dev/null 2>&1
N=2 COST=0.25 cb --name tot --metrics m.prom -- claude -p x >/dev/null 2>&1
is "$(st tot spend.cost_usd)/$(st tot spend.input_tokens)/$(st tot spend.turns)" 0.5/4000/4 \
    "lifetime totals in the state"
like "$(cat m.prom)" 'cbexec_cost_usd_total\{circuit="tot"\} 0\.5' "metrics: cbexec_cost_usd_total"
like "$(cat m.prom)" 'cbexec_tokens_total\{circuit="tot",kind="output"\} 40' "metrics: cbexec_tokens_total by kind"
like "$(cat m.prom)" 'cbexec_turns_total\{circuit="tot"\} 4' "metrics: cbexec_turns_total"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <m.prom >/dev/null 2>&1
	ok $? "promtool check metrics accepts it"
else
	skip "promtool not installed"
fi
like "$("$CBEXEC" --status --name tot)" 'spent \(all runs\): +cost 0\.5 USD, 4040 tokens \(4000 input, 40 output\), 4 turns' \
    "--status: what the circuit's runs spent"

# Codex reports tokens and no cost: said so, never 0.
rm -f c.prom
N=1 cb --name cdx --metrics c.prom -- codex exec --json x >/dev/null 2>&1
is "$?" 0 "codex run"
like "$("$CBEXEC" --status --name cdx)" 'cost not reported by codex, 2050 tokens \(1500 input, 50 output, 500 cache\)' \
    "--status: cost not reported by codex"
is "$(st cdx spend.cost_usd)" null "state: cost null, not 0"
grep -q cbexec_cost_usd_total c.prom
ok "$([ $? -ne 0 ] && echo 0 || echo 1)" "metrics: no cost sample for codex"
N=1 TOK=3000 cb --name cdx2 --max-tokens 1000 -- codex exec --json x >/dev/null 2>&1
is "$?/$(st cdx2 last_error.type)" 124/max_tokens "codex: its tokens count against --max-tokens"

# --- bad caps are usage errors; the config file sets them ---------------
for bad in "--max-cost -1" "--max-cost 1e3" "--max-tokens 1.5" \
    "--max-turns 3/1h" "--max-cost 1/0" "--max-cost 1/3x" "--max-cost ,1" \
    "--idle-timeout abc" "--max-repeat-calls -1"; do
	# shellcheck disable=SC2086
	"$CBEXEC" $bad -- true 2>err
	is "$?" 125 "$bad: usage error"
	like "$(cat err)" "^cbexec: invalid (value|duration) .* for --" "$bad: one line naming it"
done
cb --name plain --max-cost 1 -- true 2>err
is "$?" 0 "a cap on a command that is no agent: it runs"
like "$(cat err)" 'spend caps need a known agent.s output \(--agent\): nothing is counted for true' \
    "and cbexec says the cap cannot hold"
printf '{"max_cost": "0.1", "max_turns": 5}\n' >cfg.json
N=1 COST=0.5 cb --config cfg.json --name cfg -- claude -p x >/dev/null 2>&1
is "$?/$(st cfg last_error.type)" 124/max_cost "max_cost from the config file"
done_testing
