#!/bin/sh
# SPDX-License-Identifier: ISC
# --metrics as Prometheus and its tools take it: promtool check metrics
# accepts the file (no gauge ends in _count: cbexec_no_progress_runs and
# cbexec_same_error_runs), the staleness gauges
# cbexec_last_run_timestamp_seconds and
# cbexec_last_success_timestamp_seconds follow the runs, and the shipped
# example, alert rules (promtool check rules, promtool test rules) and
# dashboard use the metrics cbexec writes.
. "$(dirname "$0")/lib.sh"
C="$TOP/contrib"
cb() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }
# val FILE METRIC: the sample's value.
val() { sed -n "s/^$2{[^}]*} //p" "$1"; }
# names FILE: the metric names of its TYPE lines, sorted.
names() { sed -n 's/^# TYPE \([^ ]*\) .*/\1/p' "$1" | sort; }

if command -v promtool >/dev/null 2>&1; then
	PROMTOOL=promtool
else
	PROMTOOL=
	echo "# promtool not found (Debian package prometheus; make check" \
	     "installs it as root): its checks skip"
fi

# A failing run, then a successful one.
t0=$(date +%s)
cb --name nightly --metrics m.prom -- false 2>/dev/null
like "$(cat m.prom)" '^cbexec_no_progress_runs\{circuit="nightly"\} 1$' \
	"cbexec_no_progress_runs"
like "$(cat m.prom)" '^cbexec_same_error_runs\{circuit="nightly"\} 1$' \
	"cbexec_same_error_runs"
ok "$(grep -q '_count' m.prom; [ $? -ne 0 ]; echo $?)" "no metric name ends in _count"
last=$(val m.prom cbexec_last_run_timestamp_seconds)
ok "$(awk -v v="$last" -v t="$t0" 'BEGIN { exit !(v >= t - 1 && v <= t + 60) }'; echo $?)" \
	"cbexec_last_run_timestamp_seconds is the time of the run ($last)"
is "$(val m.prom cbexec_last_success_timestamp_seconds)" "0.000" \
	"cbexec_last_success_timestamp_seconds 0 before any success"
st="$CBEXEC_STATE_DIR/nightly.json"
like "$(jget "$st" last_run_at)" '^[0-9-]+T[0-9:.]+Z$' "the state keeps last_run_at"
is "$(jget "$st" last_success_at)" null "last_success_at null before any success"
if [ -n "$PROMTOOL" ]; then
	out=$($PROMTOOL check metrics < m.prom 2>&1); rc=$?
	is "$rc:$out" "0:" "promtool check metrics accepts the file"
else
	skip "no promtool"
fi

cb --name nightly --metrics m.prom -- true
ok "$([ "$(val m.prom cbexec_last_success_timestamp_seconds)" = \
	"$(val m.prom cbexec_last_run_timestamp_seconds)" ]; echo $?)" \
	"after a success both timestamps are that run's"
succ=$(val m.prom cbexec_last_success_timestamp_seconds)
ok "$(awk -v v="$succ" -v t="$t0" 'BEGIN { exit !(v >= t - 1) }'; echo $?)" \
	"cbexec_last_success_timestamp_seconds is recent ($succ)"
# A trip rewrites the file; the timestamps and the last run's duration
# stay those of the runs.
dur=$(val m.prom cbexec_last_run_seconds)
"$CBEXEC" --trip --name nightly --metrics m.prom 2>/dev/null
is "$(val m.prom cbexec_last_success_timestamp_seconds)" "$succ" \
	"a trip leaves the last success's time"
is "$(val m.prom cbexec_state)" 2 "... and shows the circuit OPEN"
is "$(val m.prom cbexec_last_run_seconds)" "$dur" "... and the last run's duration"
is "$(val m.prom cbexec_open_reason)" 1 "... with why: cbexec_open_reason"
like "$(cat m.prom)" '^cbexec_open_reason\{circuit="nightly",reason="tripped"\} 1$' \
	"... its kind as a label"

# An operator's trip without --metrics (SPEC §11): the circuit remembers
# the textfile its runs wrote, and the trip rewrites it, so
# CbexecCircuitOpen fires from the trip alone; the reset --status prints,
# run as printed, clears it; a refusal that changes nothing leaves the
# file (and its mtime) alone.
mkdir -p bin
printf '#!/bin/sh\nexec "%s" "$@"\n' "$CBEXEC" > bin/cbexec
chmod +x bin/cbexec
cb --name ops --metrics ops.prom -- sleep 0.05 2>/dev/null
is "$(val ops.prom cbexec_state)" 0 "a run: cbexec_state 0"
is "$(jget "$CBEXEC_STATE_DIR/ops.json" outputs.0.kind):$(jget "$CBEXEC_STATE_DIR/ops.json" outputs.0.path):$(jget "$CBEXEC_STATE_DIR/ops.json" outputs.0.host)" \
	"metrics:$(pwd -P)/ops.prom:$(hostname)" "the state remembers the textfile, on this host"
"$CBEXEC" --trip --name ops --reason 'fire
drill' 2>/dev/null
is "$(val ops.prom cbexec_state)" 2 "a --trip without --metrics rewrites it: cbexec_state 2"
like "$(cat ops.prom)" '^cbexec_open_reason\{circuit="ops",reason="tripped"\} 1$' \
	"... with the open reason's kind, not the operator's text"
like "$(val ops.prom cbexec_last_run_seconds)" '^0\.0[5-9][0-9]|^0\.[1-9]' \
	"... and the last run's duration as the state keeps it"
cp ops.prom ops.tripped
cb --name ops --metrics ops.prom -- true 2>/dev/null; rc=$?
is "$rc" 120 "the next run is refused (120)"
ino=$(ls -i ops.prom | cut -d' ' -f1)
cb --name ops --metrics ops.prom -- true 2>/dev/null
is "$(ls -i ops.prom | cut -d' ' -f1)" "$ino" "a refusal that changes nothing does not rewrite it"
hint=$("$CBEXEC" --status ops | sed -n 's/^reset: *//p')
is "$hint" "cbexec --reset-circuit --name ops" "--status prints the reset"
PATH="$SCRATCH/bin:$PATH" sh -c "$hint" 2>/dev/null
is "$(val ops.prom cbexec_state)" 0 "the reset as printed, no --metrics: cbexec_state 0"
ok "$(grep -q cbexec_open_reason ops.prom; [ $? -ne 0 ]; echo $?)" \
	"... and no cbexec_open_reason once CLOSED"
if [ -n "$PROMTOOL" ]; then
	out=$(perl "$T_DIR/alertclears.pl" test "$C/prometheus-alerts.yml" ops.tripped ops.prom 2>&1); rc=$?
	is "$rc" 0 "promtool test rules: CbexecCircuitOpen fires on the trip's textfile, clears on the reset's"
	[ "$rc" -eq 0 ] || printf '%s\n' "$out" | sed 's/^/# /' | head -30
else
	skip "no promtool"
fi
# A skip and an unskip rewrite it too.
"$CBEXEC" --skip --phase GREEN --name ops 2>/dev/null
is "$(val ops.prom cbexec_skips)" 1 "--skip rewrites it: cbexec_skips 1"
"$CBEXEC" --unskip GREEN --name ops 2>/dev/null
is "$(val ops.prom cbexec_skips)" 0 "--unskip rewrites it: cbexec_skips 0"
# Two cron lines of one circuit, two textfiles: a trip rewrites both,
# each with its own labels.
cb --name two --metrics two-a.prom -- true
cb --name two --metrics two-b.prom -- true
"$CBEXEC" --trip two 2>/dev/null
is "$(val two-a.prom cbexec_state):$(val two-b.prom cbexec_state)" "2:2" "a trip rewrites every textfile of the circuit"
# A textfile somebody removed is not made anew by a verb, and is
# forgotten.
rm two-b.prom
"$CBEXEC" --reset-circuit two 2>/dev/null
is "$(val two-a.prom cbexec_state):$(test -e two-b.prom && echo there || echo gone)" "0:gone" \
	"a removed textfile stays removed"
is "$(jget "$CBEXEC_STATE_DIR/two.json" outputs | grep -c two-b)" 0 "... and forgotten"
# A refusal is the only invocation of a new cron line: its file is
# remembered all the same (once), so a reset reaches it.
"$CBEXEC" --trip --create new 2>/dev/null
cb --name new --metrics new.prom -- true 2>/dev/null
is "$?:$(val new.prom cbexec_state)" "120:2" "a refused first run writes its textfile"
"$CBEXEC" --reset-circuit new 2>/dev/null
is "$(val new.prom cbexec_state)" 0 "... and the reset rewrites it"
# The log the runs write gets the operator's acts too.
cb --name lg --log lg.log -- true
"$CBEXEC" --trip --reason maint lg 2>/dev/null
like "$(tail -2 lg.log | head -1)" '"event":"trip".*"reason":"tripped by operator: maint"' \
	"a trip is written to the log the runs write"
like "$(tail -1 lg.log)" '"event":"state_change".*"to_state":"OPEN"' "... with its transition"
# A circuit held OPEN by another's account gate: the refused run says so.
"$CBEXEC" --record --account acme --exit 1 \
	--message "You've hit your usage limit. Try again in 5 hours." acct1 2>/dev/null
cb --name acct2 --account acme --metrics acct.prom -- true 2>/dev/null; rc=$?
is "$rc" 120 "a run on an account whose gate is OPEN is refused"
like "$(cat acct.prom)" '^cbexec_account_gate\{circuit="acct2",account="acme"\} 2$' \
	"... and the textfile says the gate is OPEN"
# The run that takes a spend window to its cap opens the circuit itself
# and writes so: CbexecCircuitOpen starts pending at that run, not at the
# next invocation.
. "$T_DIR/fakeagent.sh"
N=1 COST=0.6 cb --name spend --max-cost 1/1h --metrics sp.prom -- claude -p x >/dev/null 2>&1
is "$(val sp.prom cbexec_state)" 0 "under a spend window's cap: cbexec_state 0"
N=1 COST=0.6 cb --name spend --max-cost 1/1h --metrics sp.prom -- claude -p x >/dev/null 2>&1
is "$?:$(val sp.prom cbexec_state)" 120:2 "the run that reaches the cap: 120, and the textfile says OPEN"
like "$(cat sp.prom)" '^cbexec_open_reason\{circuit="spend",reason="spend_cap"\} 1$' \
	"... why: spend_cap"
like "$(cat sp.prom)" '^cbexec_runs_total\{circuit="spend"\} 2$' "... and counts that run"
if [ -n "$PROMTOOL" ]; then
	out=$($PROMTOOL check metrics < sp.prom 2>&1); rc=$?
	is "$rc:$out" "0:" "promtool check metrics: the spend cap's textfile"
else
	skip "no promtool"
fi
# A circuit label that needs escaping still lints.
cb --state 'we"ird\path.json' --metrics w.prom -- false 2>/dev/null
if [ -n "$PROMTOOL" ]; then
	out=$($PROMTOOL check metrics < w.prom 2>&1); rc=$?
	is "$rc:$out" "0:" "promtool check metrics: an escaped label"
else
	skip "no promtool"
fi

# contrib/metrics.prom.example shows exactly the metrics cbexec writes
# for an OPEN circuit whose agent reported its spend (a.prom).
. "$T_DIR/fakeagent.sh"
N=2 COST=0.25 cb --name agent --metrics a.prom -- claude -p x >/dev/null 2>&1
"$CBEXEC" --trip --name agent --metrics a.prom 2>/dev/null
is "$(names "$C/metrics.prom.example" | tr '\n' ' ')" "$(names a.prom | tr '\n' ' ')" \
	"metrics.prom.example has the same metrics as cbexec writes"
# The dashboard and the alerts query only metrics cbexec writes.
used=$(cat "$C/grafana-dashboard.json" "$C/prometheus-alerts.yml" |
	grep -o 'cbexec_[a-z_]*' | sort -u)
unknown=
for m in $used; do
	names a.prom | grep -qx "$m" || unknown="$unknown $m"
done
is "$unknown" "" "the dashboard and the alerts use only metrics cbexec writes"
for m in cbexec_last_run_timestamp_seconds cbexec_last_success_timestamp_seconds \
    cbexec_open_reason cbexec_cost_usd_total cbexec_tokens_total; do
	like "$(cat "$C/grafana-dashboard.json")" "$m" "the dashboard shows $m"
done
# ... by host: every query of a circuit's metric names its instance too,
# and the host is a variable of the dashboard.
out=$(perl -MJSON::PP -0777 -e '
	my $d = decode_json(<STDIN>);
	print join(",", map { $_->{name} } @{$d->{templating}{list}}), "\n";
	for my $p (@{$d->{panels}}) {
		for my $t (@{$p->{targets} || []}) {
			print "$p->{title}: $t->{expr}\n"
			    if $t->{expr} =~ /by \((?!class)[^)]*\)/ &&
			    $t->{expr} !~ /by \([^)]*instance/;
		}
	}' < "$C/grafana-dashboard.json")
is "$out" "datasource,instance,circuit" \
	"grafana: a host (instance) variable, and no per-circuit sum across hosts"

if [ -n "$PROMTOOL" ]; then
	out=$($PROMTOOL check metrics < "$C/metrics.prom.example" 2>&1); rc=$?
	is "$rc:$out" "0:" "promtool check metrics: metrics.prom.example"
	out=$($PROMTOOL check rules "$C/prometheus-alerts.yml" 2>&1); rc=$?
	is "$rc" 0 "promtool check rules: prometheus-alerts.yml"
	[ "$rc" -eq 0 ] || printf '# %s\n' "$out"
	out=$(cd "$C" && $PROMTOOL test rules prometheus-alerts.test.yml 2>&1); rc=$?
	is "$rc" 0 "promtool test rules: the alerts' unit tests pass"
	[ "$rc" -eq 0 ] || printf '%s\n' "$out" | sed 's/^/# /' | head -40
	# At a 2026 clock: a new circuit's first failed run is no
	# CbexecNoSuccess (its last_success_timestamp 0 is "never").
	out=$(cd "$C" && $PROMTOOL test rules prometheus-alerts.2026.test.yml 2>&1); rc=$?
	is "$rc" 0 "promtool test rules: the alerts' unit tests at a 2026 clock pass"
	[ "$rc" -eq 0 ] || printf '%s\n' "$out" | sed 's/^/# /' | head -40
else
	skip "no promtool"; skip "no promtool"; skip "no promtool"; skip "no promtool"
fi
done_testing
