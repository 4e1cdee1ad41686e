#!/bin/sh
# SPDX-License-Identifier: ISC
# One JSON vocabulary, versioned ("v": 2): every JSON view (--status
# --json, --status --all --json, --history --json, --record --json) and
# every --log line validates against its schema in contrib/schema/ (by
# t/jsonschema.pl, a validator of the keywords those schemas use); the
# same thing has the same key everywhere -- the circuit is "circuit", why
# it is OPEN is "reason", a run's result is a "run" event in --history as
# in --log, with the same timestamp for the same event -- while the state
# file keeps the circuit breaker spec's own names (name, open_reason, its
# history's error and progress events); and the files of an older cbexec
# (a state without last_run_seconds, an account's document with "since")
# still load.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/fakeagent.sh"
cb() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }
D=$CBEXEC_STATE_DIR
SCHEMA=$TOP/contrib/schema
# valid SCHEMA FILE [--lines]: what the validator says, "" when valid.
valid() {
	perl "$T_DIR/jsonschema.pl" ${3:-} "$SCHEMA/$1" "$2" 2>&1
}
# keys FILE: every member name anywhere in the JSON document(s) of FILE
# (one document, or one per line), sorted, once each.
keys() {
	perl -MJSON::PP -e '
		my %k;
		sub walk { my $v = shift;
			if (ref $v eq "HASH") { for (keys %$v) { $k{$_} = 1; walk($v->{$_}) } }
			elsif (ref $v eq "ARRAY") { walk($_) for @$v } }
		local $/; my $t = <STDIN>;
		my @docs = eval { (decode_json($t)) };
		@docs = map { decode_json($_) } grep { /\S/ } split /\n/, $t unless @docs;
		walk($_) for @docs;
		print "$_\n" for sort keys %k;' < "$1"
}
# vs FILE: the "v" of each document or line of FILE (of each element of
# an array), one per line.
vs() {
	perl -MJSON::PP -e '
		local $/; my $t = <STDIN>;
		my @docs = eval { (decode_json($t)) };
		@docs = map { decode_json($_) } grep { /\S/ } split /\n/, $t unless @docs;
		for my $d (@docs) { print(($_->{v} // "none"), "\n") for ref $d eq "ARRAY" ? @$d : ($d) }' < "$1"
}

# --- the validator itself: it refuses what it should ------------------------
printf '%s\n' '{"v":1,"timestamp":"2026-01-02T03:04:05.000Z","circuit":"x","event":"reset","iteration":1,"reason":null,"user":null}' > bad1.log
printf '%s\n' '{"v":2,"timestamp":"2026-01-02T03:04:05.000Z","circuit":"x","event":"reset","iteration":1,"reason":null,"user":null,"name":"x"}' > bad2.log
printf '%s\n' '{"v":2,"timestamp":"2026-01-02 03:04","circuit":"x","event":"reset","iteration":1,"reason":null,"user":null}' > bad3.log
printf '%s\n' '{"v":2,"timestamp":"2026-01-02T03:04:05.000Z","circuit":"x","event":"error","iteration":1,"reason":"boom"}' > bad4.log
for b in 1 2 3 4; do
	ok "$([ -n "$(valid log-event.schema.json bad$b.log --lines)" ]; echo $?)" \
		"the validator refuses a bad event ($b: $(cut -c1-60 bad$b.log)...)"
done

# --- a circuit through runs, an agent, a trip, a reset, skips ---------------
cb --name n --log n.log -n 3 -- sh -c 'echo "boom" >&2; exit 1' 2>/dev/null
N=2 COST=0.25 cb --name a --log n.log -- claude -p x >/dev/null 2>&1
"$CBEXEC" --trip a --log n.log --reason "look" 2>/dev/null
"$CBEXEC" --reset-circuit n --log n.log 2>/dev/null
cb --name n --log n.log --ignore-exit-codes 75 -- sh -c 'exit 75'
cb --name n --log n.log --task T1 -- sh -c 'kill -9 $$' 2>/dev/null
cb --name n --log n.log --phase GREEN -- true
"$CBEXEC" --skip --phase GREEN --reason "known" n --log n.log 2>/dev/null
cb --name n --log n.log --phase GREEN -- true 2>/dev/null
"$CBEXEC" --unskip GREEN n --log n.log 2>/dev/null
cb --name n --log n.log --timeout 10 --budget 5 -- true 2>/dev/null

"$CBEXEC" --status n --json > status.json
"$CBEXEC" --history n --json > history.json
"$CBEXEC" --history a --json > history-a.json
"$CBEXEC" --status --all --json > all.json
is "$(valid status.schema.json status.json)" "" "--status --json validates (contrib/schema/status.schema.json)"
is "$(valid history.schema.json history.json)" "" "--history --json validates (history.schema.json)"
is "$(valid history.schema.json history-a.json)" "" "... an agent's and a trip's too"
is "$(valid status-all.schema.json all.json)" "" "--status --all --json validates (status-all.schema.json)"
is "$(valid log-event.schema.json n.log --lines)" "" "every --log line validates (log-event.schema.json)"
for e in run state_change open reset trip skip unskip skipped warning; do
	ok "$(grep -q "\"event\":\"$e\"" n.log; echo $?)" "... the log has a $e event"
done
for f in status.json history.json all.json n.log; do
	is "$(vs $f | sort -u)" 2 "$f: \"v\": 2 in every document"
done
is "$(head -2 status.json | tail -1)" '  "v": 2,' "--status --json: v first"

# The circuit is "circuit", why it is OPEN "reason", in every view.
is "$(jget status.json circuit):$(jget history.json 0.circuit):$(jget all.json 0.circuit)" "n:n:a" \
	"\"circuit\" in --status --json, --history --json, --status --all --json"
is "$(keys all.json | grep -cx name)" 0 "--status --all --json: no \"name\""
is "$(perl -MJSON::PP -ne 'print decode_json($_)->{circuit}, "\n"' n.log | sort -u | tr '\n' ' ')" "a n " \
	"--log: \"circuit\" on every line"
"$CBEXEC" --status a --json > sa.json
is "$(jget sa.json reason)" "tripped by operator: look" "--status --json: reason"
is "$(jget sa.json open_reason)" "tripped by operator: look" "... and the state object's own open_reason, the same"
is "$(jget sa.json name)" "a" "... and its name: the state object, as SPEC §7 has it"
is "$(jget all.json 0.reason)" "tripped by operator: look" "--status --all --json: reason"
is "$(keys all.json | grep -cx open_reason):$(keys n.log | grep -cx open_reason)" "0:0" \
	"no open_reason in --status --all or the log"

# A run's result: "run" in --history as in --log, with "message".
is "$(perl -MJSON::PP -0777 -e 'my %e; $e{$_->{event}}++ for @{decode_json(<STDIN>)}; print join " ", sort keys %e' < history.json)" \
	"reset run skip state_change unskip" "--history --json: the log's event names (no error or progress)"
is "$(jget history.json 0.event):$(jget history.json 0.message):$(jget history.json 0.class)" "run:boom:recoverable" \
	"... a failed run: a run event with its message"
is "$(jget "$D/n.json" history.0.event):$(jget "$D/n.json" history.0.reason)" "error:boom" \
	"the state file keeps the spec's error event with its reason"
like "$(grep '"event":"run"' n.log | head -1)" '"message":"boom"' "--log: the run's message"
# The same run in both: the same time and the same members for the same things.
same=$(perl -MJSON::PP -e '
	open my $h, "<", $ARGV[0]; local $/; my $hist = decode_json(<$h>); close $h;
	open my $l, "<", $ARGV[1]; my @log = map { decode_json($_) } grep { /\S/ } split /\n/, <$l>;
	my ($bad, $n) = (0, 0);
	for my $e (@$hist) {
		$n++;
		my ($m) = grep { $_->{circuit} eq "n" && $_->{event} eq $e->{event} &&
		    $_->{timestamp} eq $e->{timestamp} } @log;
		if (!$m) { print "no log event at $e->{timestamp} for $e->{event}\n"; next }
		for my $k (keys %$e) {
			my $a = JSON::PP->new->canonical->allow_nonref->encode($e->{$k});
			my $b = JSON::PP->new->canonical->allow_nonref->encode($m->{$k});
			print "$e->{event} $e->{timestamp}: $k is $a in --history, $b in --log\n" if $a ne $b;
		}
	}
	print "none\n" if $n == 0;' history.json n.log)
is "$same" "" "every event of --history --json is in the log: same time, same members"
like "$(grep -c '"event":"run"' history.json)" '^7$' "... all seven runs"
is "$(perl -MJSON::PP -0777 -e 'my @r = grep { $_->{event} eq "run" && $_->{ignored} } @{decode_json(<STDIN>)}; print scalar(@r), ":", $r[0]{class}, ":", $r[0]{exit_code}' < history.json)" \
	"1:recoverable:75" "an ignored run: ignored, its class and exit code"
is "$(perl -MJSON::PP -0777 -e 'my ($r) = grep { $_->{event} eq "run" && $_->{exit_code} == 137 } @{decode_json(<STDIN>)}; print "$r->{task}:$r->{type}"' < history.json)" \
	"T1:killed" "a run killed by a signal: exit_code 137 (128+9) in both, its task"
like "$(grep '"exit_code":137' n.log)" '"signal":"SIGKILL"' "... the log names the signal too"
is "$(perl -MJSON::PP -0777 -e 'my ($t) = grep { $_->{event} eq "trip" } @{decode_json(<STDIN>)}; print "$t->{reason}"' < history-a.json)" \
	"tripped by operator: look" "a trip in --history --json: the act, as the log has it"
like "$(grep '"event":"open"' n.log | head -1)" '"skips":\[' "the OPEN block's skips named as the state's"

# --record --json: what it decided.
"$CBEXEC" --record --json --exit 1 --message "kaput" --max-consecutive-errors 2 r > r1.json
rc1=$?
"$CBEXEC" --record --json --exit 1 --message "kaput" --max-consecutive-errors 2 r > r2.json
rc2=$?
"$CBEXEC" --record --json --exit 0 r > r3.json
rc3=$?
"$CBEXEC" --record --json --exit 0 --exit-codes open=90 r > r4.json
rc4=$?
for f in r1 r2 r3 r4; do
	is "$(valid record.schema.json $f.json)" "" "--record --json validates ($f)"
done
is "$rc1:$(jget r1.json exit_status):$(jget r1.json run.message):$(jget r1.json state):$(jget r1.json transitions)" \
	"1:1:kaput:CLOSED:[]" "--record --json: the run, no transition, exit 1"
is "$rc2:$(jget r2.json exit_status):$(jget r2.json state):$(jget r2.json reason)" \
	"120:120:OPEN:2 consecutive errors" "... the run that opens it: 120, OPEN, why"
is "$(jget r2.json transitions.1.from_state)-$(jget r2.json transitions.1.to_state)" "HALF_OPEN-OPEN" \
	"... and its transitions"
is "$(jget r2.json timestamp)" "$(jget r2.json run.timestamp)" "... its time the run's"
is "$rc3:$(jget r3.json run):$(jget r3.json exit_status)" "120:null:120" "... refused: no run, 120"
is "$rc4:$(jget r4.json exit_status)" "90:90" "... the exit status as --exit-codes remaps it"
"$CBEXEC" --skip --phase GREEN r 2>/dev/null
"$CBEXEC" --record --json --phase GREEN --exit 1 r > r5.json
is "$?:$(valid record.schema.json r5.json):$(jget r5.json skipped.name):$(jget r5.json run)" "0::GREEN:null" \
	"... a skipped phase: the skip that turned it away"

# A first run going on, and a state that cannot be read, in --status --all.
"$CBEXEC" -q --name going -- sh -c 'echo $$ > going.pid; exec sleep 30' &
poll_until 10 test -s going.pid
"$CBEXEC" --status going --json > going.json
"$CBEXEC" --status --all --json > all2.json
echo '{' > "$D/broken.json"
"$CBEXEC" --status --all --json > all3.json
kill "$(cat going.pid)"
wait
is "$(valid status.schema.json going.json)" "" "--status --json of a run going on validates"
is "$(valid status-all.schema.json all2.json)" "" "--status --all --json with a run going on validates"
is "$(valid status-all.schema.json all3.json)" "" "... and with a state that cannot be read"
rm -f "$D/broken.json"

# --- the state file keeps the spec's names ----------------------------------
for k in name open_reason opened_at timestamp from_state to_state error_hash; do
	ok "$(keys "$D/n.json" | grep -qx "$k" || keys "$D/a.json" | grep -qx "$k"; echo $?)" \
		"the state file says $k"
done

# --- files of an older cbexec -------------------------------------------------
# An account's document says opened_at; one of before, with since, loads.
"$CBEXEC" --record --account acme --exit 1 --message "You've hit your usage limit" acc 2>/dev/null
is "$(jget "$D/acme.account" since)" null "an account's document: no since"
like "$(jget "$D/acme.account" opened_at)" '^20[0-9-]+T' "... but opened_at"
"$CBEXEC" --status acc --json > acc.json
is "$(valid status.schema.json acc.json)" "" "--status --json with an account validates"
like "$(jget acc.json account_gate.opened_at)" '^20[0-9-]+T' "... its gate's opened_at"
perl -MJSON::PP -0777 -e 'my $j = decode_json(<STDIN>); $j->{since} = delete $j->{opened_at};
	$j->{since} = "2026-01-02T03:04:05.000Z"; print encode_json($j)' < "$D/acme.account" > old.account &&
	cat old.account > "$D/acme.account"
out=$("$CBEXEC" --status acc 2>&1)
like "$out" 'gate OPEN since 2026-01-02T03:04:05.000Z' "an older document's since reads as opened_at"
# A state of before last_run_seconds loads; a run writes it.
perl -MJSON::PP -0777 -e 'my $j = decode_json(<STDIN>); delete $j->{last_run_seconds};
	print JSON::PP->new->pretty->encode($j)' < "$D/n.json" > old.json && cat old.json > "$D/n.json"
"$CBEXEC" --status n >/dev/null; is "$?" 0 "a state without last_run_seconds loads"
cb --name n -- sleep 0.05
like "$(jget "$D/n.json" last_run_seconds)" '^0\.0[5-9]|^0\.[1-9]' "a run writes last_run_seconds"
done_testing
