#!/bin/sh
# SPDX-License-Identifier: ISC
# One JSON vocabulary: --status --json, --history --json, --status --all
# --json and every --log line carry "v": 1 and the state file's names
# (timestamp, state_change with from_state/to_state, error_hash,
# opened_at, input_tokens ...), never the older ts, transition, from/to,
# fingerprint, since, last_run for a time, or a tokens object; the files of
# an older cbexec (a state without last_run_seconds, an account's
# document with "since") still load.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/fakeagent.sh"
cb() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }
D=$CBEXEC_STATE_DIR

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
OLD='^(ts|transition|from|to|fingerprint|since|tokens|iterations)$'

cb --name n --log n.log -n 3 -- sh -c 'echo "boom" >&2; exit 1' 2>/dev/null
N=2 COST=0.25 cb --name a --log n.log -- claude -p x >/dev/null 2>&1
"$CBEXEC" --trip a --log n.log --reason "look" 2>/dev/null
"$CBEXEC" --reset-circuit n --log n.log 2>/dev/null

"$CBEXEC" --status n --json > status.json
is "$(jget status.json v)" 1 "--status --json: \"v\": 1"
is "$(head -2 status.json | tail -1)" '  "v": 1,' "... first"
is "$(jget status.json version):$(jget status.json name)" "1:n" "... and the state object"
"$CBEXEC" --history n --json > history.json
is "$(vs history.json | sort -u)" 1 "--history --json: every event has \"v\": 1"
like "$(cat history.json)" '"event": "state_change", "from_state": "CLOSED", "to_state": "HALF_OPEN"' \
	"... a transition is a state_change from_state to_state"
"$CBEXEC" --status --all --json > all.json
is "$(vs all.json | sort -u)" 1 "--status --all --json: every circuit has \"v\": 1"
is "$(jget all.json 0.state):$(jget all.json 0.opened_at)" "OPEN:$(jget "$D/a.json" opened_at)" \
	"... an OPEN one's opened_at, as the state's"
like "$(jget all.json 0.last_run_at)" '^20[0-9-]+T[0-9:.]+Z$' "... last_run_at"
is "$(jget all.json 0.last_run)" null "... not last_run"
is "$(vs n.log | sort -u)" 1 "--log: every line has \"v\": 1"
is "$(perl -MJSON::PP -ne 'print decode_json($_)->{timestamp} =~ /^20\d\d-\d\d-\d\dT[\d:.]+Z$/ ? "" : "bad\n"' n.log)" "" \
	"--log: every line has its timestamp"
like "$(cat n.log)" '"event":"state_change","from_state":"CLOSED","to_state":"HALF_OPEN"' \
	"--log: a transition is a state_change from_state to_state"
like "$(grep '"event":"run"' n.log | head -1)" '"error_hash":"[0-9a-f]{64}"' "--log: a failed run's error_hash"
like "$(grep '"event":"run"' n.log | tail -1)" '"cost_usd":0.25,"input_tokens":2000,"output_tokens":20,"cache_tokens":null,"turns":2' \
	"--log: what an agent used, named as the state's spend"
like "$(grep '"event":"open"' n.log)" '"iteration":3' "--log: the OPEN block's iteration"
for f in status.json history.json all.json n.log; do
	is "$(keys $f | grep -E "$OLD" | tr '\n' ' ')" "" "$f: none of the older names"
done
# The same names as the state file for the same things.
for k in timestamp from_state to_state error_hash opened_at; do
	ok "$(keys "$D/n.json" | grep -qx "$k" || keys "$D/a.json" | grep -qx "$k"; echo $?)" \
		"the state file says $k too"
done

# An account's document says opened_at; one of before, with since, loads.
"$CBEXEC" --record --account acme --exit 1 --message "You've hit your usage limit" r 2>/dev/null
is "$(jget "$D/acme.account" since)" null "an account's document: no since"
like "$(jget "$D/acme.account" opened_at)" '^20[0-9-]+T' "... but opened_at"
"$CBEXEC" --status r --json > r.json
is "$(jget r.json v)" 1 "--status --json with an account: \"v\": 1"
like "$(jget r.json account_gate.opened_at)" '^20[0-9-]+T' "... its gate's opened_at"
perl -MJSON::PP -0777 -e 'my $j = decode_json(<STDIN>); $j->{since} = delete $j->{opened_at};
	$j->{since} = "2026-01-02T03:04:05.000Z"; print encode_json($j)' < "$D/acme.account" > old.account &&
	cat old.account > "$D/acme.account"
out=$("$CBEXEC" --status r 2>&1)
like "$out" 'gate OPEN since 2026-01-02T03:04:05.000Z' "an older document's since reads as opened_at"
# A state of before last_run_seconds loads; a run writes it.
perl -MJSON::PP -0777 -e 'my $j = decode_json(<STDIN>); delete $j->{last_run_seconds};
	print JSON::PP->new->pretty->encode($j)' < "$D/n.json" > old.json && cat old.json > "$D/n.json"
"$CBEXEC" --status n >/dev/null; is "$?" 0 "a state without last_run_seconds loads"
cb --name n -- sleep 0.05
like "$(jget "$D/n.json" last_run_seconds)" '^0\.0[5-9]|^0\.[1-9]' "a run writes last_run_seconds"
done_testing
