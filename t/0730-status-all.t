#!/bin/sh
# SPDX-License-Identifier: ISC
# What an operator with several circuits sees: --status --all (one line
# per circuit of the state directory, JSON, exit 120 when one is OPEN),
# --status with its counters beside their thresholds, ages and the next
# trial, --history in columns with a timeline wrapped to the terminal, and
# reasons that count in the singular.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }
D=$CBEXEC_STATE_DIR
# tty COLUMNS CMD: run the shell command CMD on a terminal that wide.
tty() {
	COLUMNS=$1 NO_COLOR=1 timeout 20 script -qec "$2" /dev/null 2>&1 | tr -d '\r'
}
HAVE_SCRIPT=; command -v script >/dev/null 2>&1 && HAVE_SCRIPT=1

# ---- --status --all ------------------------------------------------------
out=$("$CBEXEC" --status --all 2>err); rc=$?
is "$rc:$out" "125:" "no state directory: 125, nothing on stdout"
like "$(cat err)" "^cbexec: no state directory $D: no circuit has run with it" \
	"... saying so, naming it"
"$CBEXEC" --status --all --json >out 2>/dev/null; rc=$?
is "$rc:$(cat out)" "125:" "--json too"
mkdir -p "$D"
out=$("$CBEXEC" --status --all); rc=$?
is "$rc:$out" "0:no circuits in $D" "an empty state directory: no circuits, 0"
is "$("$CBEXEC" --status --all --json)" "[]" "--json: an empty array"

cb --name backup -- true
cb --name docs -n 2 -- false 2>/dev/null
cb --name nightly -n 3 -- false 2>/dev/null
cb --name dir-app-0123456789ab -- true
# What is not a circuit: the locks, a save's temp file, a moved-aside
# corrupt file, a directory, another file.
: > "$D/.nightly.json.tmp.Ab12Cd"
: > "$D/old.json.corrupt-20261122T000000Z"
mkdir "$D/sub.json"
: > "$D/notes.txt"
out=$("$CBEXEC" --status --all); rc=$?
is "$rc" 120 "--status --all with an OPEN circuit: 120"
like "$(printf '%s\n' "$out" | head -1)" '^  CIRCUIT +STATE +SINCE +PROGRESS +LAST RUN +REASON$' \
	"a header line; RETRY AT, '-' in every row, is left out"
is "$(printf '%s\n' "$out" | sed 1d | sed 's/^..//' | awk '{ print $1 }' | tr '\n' ' ')" \
	"nightly docs backup dir-app-0123456789ab " \
	"one line per circuit, OPEN first, then HALF_OPEN, then by name; nothing else"
line() { printf '%s\n' "$out" | grep "^..$1 "; }
like "$(line backup)" '^  backup +CLOSED +- +last run +[0-9]{2}:[0-9]{2}Z \([0-9]+s ago\) +-$' \
	"a CLOSED circuit: no since, progress in its last run, its last run"
like "$(line docs)" '^  docs +HALF_OPEN +[0-9]{2}:[0-9]{2}Z \([0-9]+s ago\) +never .*No progress detected for 2 iterations$' \
	"a HALF_OPEN circuit: since when, no progress yet, why"
like "$(line nightly)" '^● nightly +OPEN +[0-9]{2}:[0-9]{2}Z \([0-9]+s ago\) +never +[0-9]{2}:[0-9]{2}Z \([0-9]+s ago\) +No progress for 3 iterations$' \
	"an OPEN circuit: marked, since when, no progress yet, why"

"$CBEXEC" --status --all --json > all.json
is "$(perl -MJSON::PP -0777 -e 'print join " ", map { $_->{circuit} } @{decode_json(<STDIN>)}' < all.json)" \
	"backup dir-app-0123456789ab docs nightly" "--json: one object per circuit"
is "$(perl -MJSON::PP -0777 -e 'my ($n) = grep { $_->{circuit} eq "nightly" } @{decode_json(<STDIN>)};
	print join "|", $n->{state}, $n->{reason}, $n->{runs_since_progress}, $n->{iteration},
	    defined $n->{retry_at} ? "x" : "null", $n->{path}' < all.json)" \
	"OPEN|No progress for 3 iterations|3|3|null|$D/nightly.json" "--json: the circuit's fields"
like "$(jget all.json 0.last_run_at)" '^20[0-9-]+T[0-9:.]+Z$' "--json: last_run_at is ISO-8601"
like "$(jget all.json 2.changed_at)" '^20[0-9-]+T[0-9:.]+Z$' "--json: changed_at is ISO-8601"
is "$(jget all.json 3.opened_at)" "$(jget "$D/nightly.json" opened_at)" "--json: opened_at, as the state's"
is "$(jget all.json 2.opened_at)" null "--json: opened_at null unless OPEN"
"$CBEXEC" --status --all --json >/dev/null; is "$?" 120 "--json: 120 as well"
"$CBEXEC" --status --all --exit-codes open=90 >/dev/null; is "$?" 90 "--exit-codes remaps it"

# A later state's retry_at (a usage limit) shows as it is.
perl -MJSON::PP -0777 -e 'my $j = decode_json(<STDIN>); $j->{retry_at} = "2036-01-02T03:04:05.000Z";
	print JSON::PP->new->pretty->encode($j)' < "$D/docs.json" > docs.new &&
	cat docs.new > "$D/docs.json"
out=$("$CBEXEC" --status --all)
like "$(line docs)" ' 2036-01-02 03:04Z \(in [0-9]+d' "retry_at shows with its date"
"$CBEXEC" --status --all --json > all.json
is "$(jget all.json 2.retry_at)" "2036-01-02T03:04:05.000Z" "--json: retry_at"

# Unreadable: a line that says why; 125 when nothing is OPEN.
echo garbage > "$D/broken.json"
out=$("$CBEXEC" --status --all); rc=$?
like "$(line broken)" '^● broken +ERROR .*broken\.json: corrupt state file' "a corrupt file: marked, ERROR and why"
is "$rc" 120 "OPEN still wins: 120"
"$CBEXEC" --reset-circuit nightly 2>/dev/null
"$CBEXEC" --status --all >/dev/null; is "$?" 125 "nothing OPEN, one unreadable: 125"
rm "$D/broken.json"
"$CBEXEC" --status --all >/dev/null; is "$?" 0 "nothing OPEN: 0"

err=$("$CBEXEC" --status --all nightly 2>&1); is "$?" 125 "--status --all CIRCUIT: usage error"
like "$err" "no CIRCUIT, --state or --name" "... saying why"
err=$("$CBEXEC" --history --all 2>&1); is "$?" 125 "--all without --status: usage error"
like "$err" "--all goes only with --status" "... saying so"

# Any width: every column is there, the times shorter, the reason and
# then the name cut with an ellipsis; OPEN first.  Widths are counted in
# characters (the mark and the ellipsis are one each).
cb --name nightly-claude-refactor-pipeline -n 3 -- false 2>/dev/null
"$CBEXEC" --trip --reason "waiting for the vendor to fix their API, see ticket OPS-1234 for the details" \
	backup 2>/dev/null
width() { printf '%s\n' "$1" | perl -CS -ne 'chomp; $m = length if length > $m; END { print $m + 0 }'; }
for c in 200 100 80; do
	out=$(COLUMNS=$c "$CBEXEC" --status --all)
	like "$(printf '%s\n' "$out" | head -1)" '^  CIRCUIT +STATE +SINCE +PROGRESS +RETRY AT +LAST RUN +REASON$' \
		"COLUMNS=$c: every column, REASON and LAST RUN too"
	ok "$([ "$(width "$out")" -le "$c" ]; echo $?)" "COLUMNS=$c: no line is wider ($(width "$out"))"
	like "$(printf '%s\n' "$out" | sed -n 2p)" '^● backup +OPEN ' "COLUMNS=$c: an OPEN circuit first, marked"
	like "$(printf '%s\n' "$out" | sed -n 3p)" '^● nightl[a-z-]*(…[a-z-]*)?ine +OPEN ' \
		"COLUMNS=$c: the other OPEN circuit next, its name whole or cut in its middle"
done
out=$(COLUMNS=200 "$CBEXEC" --status --all)
like "$out" 'tripped by operator: waiting for the vendor to fix their API, see ticket' \
	"200 columns: most of the reason"
like "$out" '[0-9]{2}:[0-9]{2}Z \([0-9]+s ago\)' "200 columns: clock times with their ages"
out=$(COLUMNS=80 "$CBEXEC" --status --all)
like "$(line backup)" ' [0-9]+s ago +tripped by .*…$' "80 columns: ages, the reason cut with an ellipsis"
like "$out" '● nightl[a-z-]*…[a-z-]*ine +OPEN' "80 columns: a long name cut in its middle, its end kept"
r80=$(line backup | sed 's/.*tripped by/tripped by/')
out=$(COLUMNS=100 "$CBEXEC" --status --all)
r100=$(line backup | sed 's/.*tripped by/tripped by/')
ok "$([ "$(width "$r100")" -gt "$(width "$r80")" ]; echo $?)" "100 columns: more of the reason ($r100)"
out=$("$CBEXEC" --status --all)
like "$out" 'for the details$' "not on a terminal, no COLUMNS: no limit"
if [ -n "$HAVE_SCRIPT" ]; then
	out=$(tty 60 "$CBEXEC --status --all")
	is "$(width "$out")" 60 "on a 60-column terminal every line is cut to 60"
	like "$out" '5 circuits listed, 2 OPEN\.' "... and a count follows"
	out=$(tty 100 "$CBEXEC --status --all")
	like "$(printf '%s\n' "$out" | head -1)" 'LAST RUN +REASON$' \
		"on a 100-column terminal, every column"
	ok "$([ "$(width "$out")" -le 100 ]; echo $?)" "... within 100 columns"
else
	for i in 1 2 3 4; do skip "no script(1)"; done
fi
"$CBEXEC" --reset-circuit backup 2>/dev/null
"$CBEXEC" --reset-circuit nightly-claude-refactor-pipeline 2>/dev/null

# Thirty circuits whose names differ only at their end, at 80 columns:
# each cut in its middle, as systemd cuts a unit's name, so every row
# keeps a distinct name; the columns that are "-" in every row left out,
# the reason given what is left.
(
	export CBEXEC_STATE_DIR=$SCRATCH/many
	for i in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 \
	    21 22 23 24 25 26 27 28 29 30; do
		cb --name "team-platform-nightly-build-$i" -- true
	done
	cb --name team-platform-nightly-build-07 -n 3 -- false 2>/dev/null
	cb --name team-platform-nightly-build-12 -n 2 -- false 2>/dev/null
	COLUMNS=80 "$CBEXEC" --status --all > many.out
)
is "$(sed 1d many.out | cut -c3- | awk '{ print $1 }' | sort -u | wc -l | tr -d ' ')" 30 \
	"80 columns, 30 similar names: 30 distinct names shown"
like "$(sed -n 2p many.out)" '^● team-plat[a-z-]*…[a-z-]*-07 +OPEN ' \
	"... each cut in its middle, its end (what tells them apart) kept"
ok "$([ "$(width "$(cat many.out)")" -le 80 ]; echo $?)" "... within 80 columns ($(width "$(cat many.out)"))"
like "$(head -1 many.out)" '^  CIRCUIT +STATE +SINCE +PROGRESS +LAST RUN +REASON$' \
	"... RETRY AT, '-' in every row, left out"
like "$(sed -n 2p many.out)" '^● team-plat…d-07  OPEN .*  No progress for 3 i' \
	"... the name cut to 14, the reason given the rest"
is "$(width "$(sed -n 2p many.out)")" 80 "... up to the 80th column"

# A circuit whose first run is going on has its lock and no state yet: it
# is listed, running; a lock nobody holds is no circuit.
(
	export CBEXEC_STATE_DIR=$SCRATCH/first
	cb --name other -- true
	: > "$CBEXEC_STATE_DIR/stale.json.lock"
	"$CBEXEC" -q --name firstrun -- sh -c 'echo $$ > first.pid; exec sleep 30' &
	echo $! > cb.pid
	poll_until 10 test -s first.pid
	COLUMNS=80 "$CBEXEC" --status --all > first.out
	"$CBEXEC" --status --all --json > first.json
	kill "$(cat first.pid)"
	wait
)
like "$(grep firstrun first.out)" "^  firstrun +CLOSED .*running \(pid $(cat cb.pid)\)" \
	"a first run going on: listed, CLOSED, running, its pid"
is "$(grep -c stale first.out)" 0 "a lock nobody holds: not listed"
is "$(perl -MJSON::PP -0777 -e 'my ($n) = grep { $_->{circuit} eq "firstrun" } @{decode_json(<STDIN>)};
	print join "|", $n->{state}, $n->{running}{iteration}, $n->{running}{pid}, $n->{running}{host},
	    $n->{holder}{pid}, $n->{iteration}, $n->{running}{started_at} =~ /^20\d\d-/ ? "since" : "-"' < first.json)" \
	"CLOSED|1|$(cat cb.pid)|$(hostname)|$(cat cb.pid)|0|since" "--json: running run 1, its pid, host and start; no run recorded yet"

# ---- --status: thresholds, ages, the next trial --------------------------
cb --name cool --cooldown 1h --no-progress-threshold 3 -n 3 -- false 2>/dev/null
out=$("$CBEXEC" --status cool); rc=$?
is "$rc" 120 "--status on OPEN: 120"
like "$out" 'counters: +no-progress 3/3, same-error 3/5, consecutive errors 3/5, same-task 0/3' \
	"counters beside their thresholds"
like "$out" 'state: +OPEN  \(since [0-9]{2}:[0-9]{2}Z, [0-9]+s ago\)' "since when, and how long ago"
like "$out" 'next trial: +([0-9]{4}-[0-9]{2}-[0-9]{2} )?[0-9]{2}:[0-9]{2}Z, in (59m[0-9]*s|1h)  \(cooldown 1h\)' \
	"when the cooldown allows the next trial"
like "$out" 'last run: +[0-9]{2}:[0-9]{2}Z, [0-9]+s ago' "when the last run ended"
is "$(jget "$D/cool.json" thresholds.no_progress_threshold):$(jget "$D/cool.json" thresholds.cooldown)" \
	"3:3600" "the state file keeps the thresholds"
"$CBEXEC" --trip cool 2>/dev/null
like "$("$CBEXEC" --status cool)" 'next trial: +none: tripped by an operator' \
	"a tripped circuit: no trial"

# After a reset the runs without progress count from it, as the counter
# does: never "3" beside "no-progress 0/3".
cb --name rs -n 3 -- false 2>/dev/null
"$CBEXEC" --reset-circuit --reason fixed rs 2>/dev/null
out=$("$CBEXEC" --status rs)
like "$out" 'runs since progress: 0   \(counted from the reset after run 3; no progress yet\)' \
	"after a reset: 0 runs since progress, counted from the reset"
like "$out" 'counters: +no-progress 0/3' "... beside no-progress 0/3"
cb --name rs -- false 2>/dev/null
like "$("$CBEXEC" --status rs)" 'runs since progress: 1   \(counted from the reset after run 3' \
	"... and a run after it counts 1"
is "$("$CBEXEC" --status --all --json | perl -MJSON::PP -0777 -e '
	my ($n) = grep { $_->{circuit} eq "rs" } @{decode_json(<STDIN>)}; print $n->{runs_since_progress}')" 1 \
	"--status --all --json: the same count"

# ---- --history: columns, a timeline on a terminal ------------------------
cb --name h -n 2 --no-progress-threshold 9 --half-open-after 9 -- false 2>/dev/null
"$CBEXEC" --trip --reason maint h 2>/dev/null
"$CBEXEC" --reset-circuit --reason "fixed" h 2>/dev/null
cb --name h -n 12 --no-progress-threshold 99 --half-open-after 99 -- true
out=$("$CBEXEC" --history h)
like "$(printf '%s\n' "$out" | head -1)" '^20[0-9T:.-]+Z  run 1   error         recoverable unknown \(exit 1\)' \
	"history: columns, the run numbers as wide as the widest"
like "$out" 'run 2   state_change  CLOSED -> OPEN  tripped by operator: maint' "history: the trip"
like "$out" 'run 2   reset         fixed' "history: the reset"
ok "$(printf '%s\n' "$out" | grep -q timeline; [ $? -ne 0 ]; echo $?)" "no timeline off a terminal"
if [ -n "$HAVE_SCRIPT" ]; then
	out=$(tty 20 "$CBEXEC --history h")
	like "$(printf '%s\n' "$out" | sed -n 2p)" '^run  1  EE!R' \
		"timeline: the trip (!) and the reset (R) have their marks"
	like "$(printf '%s\n' "$out" | sed -n 3p)" '^run +[0-9]+  \.+$' \
		"timeline: wrapped, each line led by its first run"
	long=$(printf '%s\n' "$out" | sed -n '2,/^legend/p' | awk 'length > 20' | wc -l | tr -d ' ')
	is "$long" 0 "timeline and legend fit 20 columns"
	like "$out" 'R reset' "the legend names the reset"
else
	for i in 1 2 3 4; do skip "no script(1)"; done
fi

# ---- counts in the singular ----------------------------------------------
cb --name one --no-progress-threshold 1 -- false 2>/dev/null
is "$(jget "$D/one.json" open_reason)" "No progress for 1 iteration" "1 iteration, singular"
done_testing
