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
# A trip rewrites the file; the timestamps stay those of the runs.
"$CBEXEC" --trip --name nightly --metrics m.prom 2>/dev/null
is "$(val m.prom cbexec_last_success_timestamp_seconds)" "$succ" \
	"a trip leaves the last success's time"
is "$(val m.prom cbexec_state)" 2 "... and shows the circuit OPEN"
# A circuit label that needs escaping still lints.
cb --state 'we"ird\path.json' --metrics w.prom -- false 2>/dev/null
if [ -n "$PROMTOOL" ]; then
	out=$($PROMTOOL check metrics < w.prom 2>&1); rc=$?
	is "$rc:$out" "0:" "promtool check metrics: an escaped label"
else
	skip "no promtool"
fi

# contrib/metrics.prom.example shows exactly the metrics cbexec writes.
is "$(names "$C/metrics.prom.example" | tr '\n' ' ')" "$(names m.prom | tr '\n' ' ')" \
	"metrics.prom.example has the same metrics as cbexec writes"
# The dashboard and the alerts query only metrics cbexec writes.
used=$(cat "$C/grafana-dashboard.json" "$C/prometheus-alerts.yml" |
	grep -o 'cbexec_[a-z_]*' | sort -u)
unknown=
for m in $used; do
	names m.prom | grep -qx "$m" || unknown="$unknown $m"
done
is "$unknown" "" "the dashboard and the alerts use only metrics cbexec writes"
for m in cbexec_last_run_timestamp_seconds cbexec_last_success_timestamp_seconds; do
	like "$(cat "$C/grafana-dashboard.json")" "$m" "the dashboard shows $m"
done

if [ -n "$PROMTOOL" ]; then
	out=$($PROMTOOL check metrics < "$C/metrics.prom.example" 2>&1); rc=$?
	is "$rc:$out" "0:" "promtool check metrics: metrics.prom.example"
	out=$($PROMTOOL check rules "$C/prometheus-alerts.yml" 2>&1); rc=$?
	is "$rc" 0 "promtool check rules: prometheus-alerts.yml"
	[ "$rc" -eq 0 ] || printf '# %s\n' "$out"
	out=$(cd "$C" && $PROMTOOL test rules prometheus-alerts.test.yml 2>&1); rc=$?
	is "$rc" 0 "promtool test rules: the alerts' unit tests pass"
	[ "$rc" -eq 0 ] || printf '%s\n' "$out" | sed 's/^/# /' | head -40
else
	skip "no promtool"; skip "no promtool"; skip "no promtool"
fi
done_testing
