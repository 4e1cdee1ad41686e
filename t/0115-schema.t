#!/bin/sh
# SPDX-License-Identifier: ISC
# One schema, forward compatible (SPEC §11), on the file store: members a
# newer cbexec wrote, at the top of the state and inside history events,
# survive a run and every operator verb byte for byte; a file of each
# older shape (t/state/README) is read and written back in this version's
# shape with nothing lost; a newer version is refused (125) and left as
# it is.  t/0957-store-schema.t does the same on Redis.
. "$(dirname "$0")/lib.sh"
FIX=$T_DIR/state
ST=$CBEXEC_STATE_DIR
mkdir -p "$ST"
cb() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }
# jkeys FILE [PATH]: the member names of the object at PATH, sorted.
jkeys() {
	perl -MJSON::PP -0777 -e 'my $v = decode_json(<STDIN>);
		for my $k (split /\./, $ARGV[0] // "") {
			$v = ref $v eq "HASH" ? $v->{$k} : $v->[$k];
		}
		print join(",", sort keys %$v), "\n";' "${2:-}" < "$1"
}

# The members of t/state/v1-newer-members.json no row of this cbexec
# knows, each as its text stands there.
TOP1='"run_started": {"iteration": 4, "host": "build-7", "pid": 4242, "at": "2026-11-27T01:43:00.000Z"}'
TOP2='"labels":["nightly", "gpu"]'
TOP3='"priority" :  2.50'
TOP4='"note\u00e9": "caf\u00e9 \"quoted\""'
EV1='"host": "build-7", "duration_ms": 1234'
EV2='"cause":{"file":"a.c","line":3}'
# kept FILE WHAT: each member is in FILE byte for byte, once.
kept() {
	_f=$1 _all=0
	for _m in "$TOP1" "$TOP2" "$TOP3" "$TOP4" "$EV1" "$EV2"; do
		[ "$(grep -cF -- "$_m" "$_f")" = 1 ] || {
			echo "# lost: $_m"; _all=1; }
	done
	ok $_all "$2: every member it does not know is kept, byte for byte"
}
grep -qF -- "$TOP1" "$FIX/v1-newer-members.json" &&
    grep -qF -- "$EV2" "$FIX/v1-newer-members.json"
ok $? "the fixture holds the members the tests look for"

# ---- a run, then every operator verb, on one state ----
cp "$FIX/v1-newer-members.json" "$ST/n.json"
cb --name n -- true; is "$?" 0 "a run on a state with members it does not know"
is "$(jget "$ST/n.json" iteration)" 4 "the run was counted and saved"
kept "$ST/n.json" "after a run"
is "$(jget "$ST/n.json" run_started.host):$(jget "$ST/n.json" history.0.duration_ms)" \
    "build-7:1234" "the same values, read as JSON"
cb --name n -- sh -c 'echo "error: boom" >&2; exit 1' 2>/dev/null
is "$?" 1 "a failing run"
kept "$ST/n.json" "after a failing run"
cb --record --exit 0 --name n; is "$?" 0 "--record"
kept "$ST/n.json" "after --record"
"$CBEXEC" --trip --reason "db migration" --name n 2>/dev/null; is "$?" 0 "--trip"
is "$(jget "$ST/n.json" state)" OPEN "tripped"
kept "$ST/n.json" "after --trip"
"$CBEXEC" --reset-circuit --reason fixed --name n 2>/dev/null; is "$?" 0 "--reset-circuit"
is "$(jget "$ST/n.json" state)" CLOSED "reset"
kept "$ST/n.json" "after --reset-circuit"
"$CBEXEC" --skip --phase REFACTOR --reason later --name n 2>/dev/null; is "$?" 0 "--skip"
is "$(jget "$ST/n.json" skipped_phases)" '["REFACTOR"]' "skipped"
kept "$ST/n.json" "after --skip"
"$CBEXEC" --unskip REFACTOR --name n 2>/dev/null; is "$?" 0 "--unskip"
kept "$ST/n.json" "after --unskip"
"$CBEXEC" --status --name n >/dev/null; is "$?" 0 "--status reads it"
"$CBEXEC" --status --json --name n >status.json
is "$(jget status.json run_started.pid)" 4242 "--status --json shows them too"
cp "$ST/n.json" before.json
cb --name n -- true
cb --name n -- true
is "$(jkeys "$ST/n.json")" "$(jkeys before.json)" \
    "saved again and again: the same members, none twice"

# History trimming: an event that goes takes its members with it; the
# others and the top-level ones stay.
cp "$FIX/v1-newer-members.json" "$ST/h.json"
cb --name h --history-size 3 -- true
is "$(jget "$ST/h.json" history.0.cause.line):$(grep -cF -- "$EV1" "$ST/h.json")" "3:0" \
    "--history-size 3: the oldest event went with its members, the next keeps its own"
grep -qF -- "$EV2" "$ST/h.json" && grep -qF -- "$TOP1" "$ST/h.json" &&
    grep -qF -- "$TOP3" "$ST/h.json"
ok $? "--history-size 3: the rest byte for byte"

# An event of a kind a newer cbexec wrote: kept as it came, counted for
# nothing, shown by --history under its own name and left out of the
# --history --json vocabulary.
OTHER='{"timestamp": "2026-11-27T01:42:45.000Z", "iteration": 3, "event": "paused", "reason": "quota window", "until": "2026-11-27T06:00:00.000Z"}'
OTHER=$OTHER perl -0777 -pe 's/\}\n  \]\n\}/},\n    $ENV{OTHER}\n  ]\n}/ or die' \
    <"$FIX/v1-newer-members.json" >"$ST/k.json"
is "$(jget "$ST/k.json" history.3.event)" paused "a state with an event of a kind this cbexec does not know"
cb --name k -- sh -c 'echo "error: boom at line 4" >&2; exit 1' 2>err; rc=$?
is "$rc:$(jget "$ST/k.json" iteration):$(jget "$ST/k.json" same_error_count):$(jget "$ST/k.json" state)" \
    "120:4:3:OPEN" \
    "a run on it: counted, the same error a third time opens it (the event between counts for nothing)"
is "$(jget "$ST/k.json" history.3.event):$(jget "$ST/k.json" history.3.reason):$(jget "$ST/k.json" history.4.event)" \
    "paused:quota window:error" "the event is kept in its place, the run's after it"
grep -qF '"until": "2026-11-27T06:00:00.000Z"' "$ST/k.json"
ok $? "its member this cbexec does not know, byte for byte"
"$CBEXEC" --trip --reason t --name k 2>/dev/null && "$CBEXEC" --reset-circuit --name k 2>/dev/null
is "$?:$(grep -c '"event": "paused"' "$ST/k.json")" "0:1" "--trip and --reset-circuit keep it"
"$CBEXEC" --history --name k >hist; rc=$?
like "$(grep paused hist)" "run 3 +paused +quota window" "--history shows it by its name"
"$CBEXEC" --history --json --name k >hist.json; rc=$?
is "$rc:$(perl -MJSON::PP -0777 -e 'my @e = map { $_->{event} } @{decode_json(<STDIN>)};
	print scalar(@e), ",", scalar(grep { !/^(run|state_change|reset|trip|skip|unskip)$/ } @e)' <hist.json)" \
    "0:9,0" "--history --json: every other event, in this cbexec's vocabulary only"
# Not a name at all: corrupt, as before.
sed 's/"event": "paused"/"event": "Paused!"/' "$ST/k.json" >"$ST/kb.json"
cb --name kb -- touch ran-kb 2>err; rc=$?
is "$rc:$(test -e ran-kb; echo $?)" "125:1" "an event kind that is no name: 125, not run"
like "$(cat err)" "field 'history\[3\]\.event'" "naming it"

# An account's document keeps what it does not know too.
sed 's/"updated_at"/"gate_future": {"x": [1, 2]},\n\t"updated_at"/' \
    "$FIX/account-v1-9286c44.account" >"$ST/acme.account"
chmod 600 "$ST/acme.account"
grep -q gate_future "$ST/acme.account"; ok $? "an account document with a member this cbexec does not know"
cb --name a --account acme -- true; is "$?" 0 "a run on the account: its trial (the reset time has passed)"
is "$(jget "$ST/acme.account" gate):$(jget "$ST/acme.account" generation)" "CLOSED:3" \
    "the document was written twice (the trial, then its end)"
is "$(jget "$ST/acme.account" gate_future)" '{"x":[1,2]}' "the member is kept"
grep -qF '"gate_future": {"x": [1, 2]}' "$ST/acme.account"
ok $? "byte for byte"

# ---- each older shape ----
# The members a state of this version has, from a fresh one.
cb --name fresh -- true
FRESH=$(jkeys "$ST/fresh.json")
for f in "$FIX"/v1-[0-9a-f]*-*.json "$FIX"/v0-*.json; do
	b=$(basename "$f" .json)
	cp "$f" "$ST/o.json"
	cp "$f" orig.json
	"$CBEXEC" --status --json --name o >st.json 2>err; rc=$?
	is "$rc:$(jget st.json state):$(jget st.json iteration)" \
	    "120:OPEN:$(jget orig.json iteration | sed 's/null/0/')" \
	    "$b: read, OPEN as it was, at its iteration"
	cb --name o -- touch ran 2>/dev/null; rc=$?
	is "$rc:$(test -e ran; echo $?)" "120:1" "$b: still refuses a run"
	cmp -s "$ST/o.json" orig.json; ok $? "$b: reading it wrote nothing"
	"$CBEXEC" --reset-circuit --reason upgraded --name o 2>/dev/null; rc=$?
	is "$rc:$(jget "$ST/o.json" state):$(jget "$ST/o.json" version)" "0:CLOSED:1" \
	    "$b: --reset-circuit writes it as version 1"
	is "$(jkeys "$ST/o.json")" "$FRESH" \
	    "$b: every member of this version, nothing taken for unknown"
	n=$(perl -MJSON::PP -0777 -e 'print scalar @{decode_json(<STDIN>)->{history}}' <orig.json)
	is "$(perl -MJSON::PP -0777 -e 'print scalar @{decode_json(<STDIN>)->{history}}' <"$ST/o.json")" \
	    "$((n + 1))" "$b: its history kept, the reset after it"
	is "$(jget "$ST/o.json" history.0.timestamp):$(jget "$ST/o.json" history.0.reason)" \
	    "$(jget orig.json history.0.timestamp | sed 's/Z$/.000Z/; s/\.\([0-9]\{3\}\)\.000Z$/.\1Z/'):$(jget orig.json history.0.reason)" \
	    "$b: the first event as it was"
	is "$(jget "$ST/o.json" total_opens):$(jget "$ST/o.json" last_progress_metric)" \
	    "$(jget orig.json total_opens | sed 's/null/0/'):$(jget orig.json last_progress_metric)" \
	    "$b: total_opens and last_progress_metric kept"
	rm -f ran
done
is "$(jget "$ST/o.json" last_progress_metric.GREEN.tests_passing)" 12 \
    "the circuit breaker spec's file: its progress metric read"

# The working directory's circuit an older cbexec kept in the tree.
mkdir -p w/.cbexec
cp "$FIX/v1-7adeeb2-tree.json" w/.cbexec/state.json
(cd w && "$CBEXEC" -q --no-prompt --progress exit -- touch ran) 2>err; rc=$?
is "$rc" 120 ".cbexec/state.json of 2026-11-22: taken over, still OPEN"
like "$(cat err)" "moved from \.cbexec/state\.json to" "and says so"
new=$(ls "$ST"/dir-w-*.json)
is "$(jkeys "$new")" "$FRESH" "written in this version's shape"
is "$(jget "$new" open_reason):$(jget "$new" iteration)" \
    "$(jget w/.cbexec/state.json.migrated open_reason):2" "its reason and count kept"

# An account document of 2026-11-23 said "since" for "opened_at".
cp "$FIX/account-v1-9286c44.account" "$ST/old.account"
"$CBEXEC" --status --json --account old --name fresh >st.json; rc=$?
is "$rc:$(jget st.json account_gate.opened_at)" \
    "0:$(jget "$FIX/account-v1-9286c44.account" since)" \
    "an account document's since is read as opened_at"
is "$(jget st.json account_gate.since)" null "and not kept as a member of its own"

# ---- a newer version ----
for verb in "-q --no-prompt --progress exit --name v -- touch ran" \
    "--trip --name v" "--reset-circuit --name v" "--skip --phase GREEN --name v" \
    "--unskip GREEN --name v" "--record --exit 1 --name v" "--status --name v" \
    "--history --name v"; do
	cp "$FIX/v2-newer.json" "$ST/v.json"
	# shellcheck disable=SC2086
	"$CBEXEC" $verb >out 2>err; rc=$?
	is "$rc" 125 "version 2, ${verb%% --name*}: 125"
	like "$(cat err)" "state version 2 is newer than this cbexec supports \(1\)" \
	    "version 2, ${verb%% --name*}: says so"
	cmp -s "$ST/v.json" "$FIX/v2-newer.json"; ok $? "version 2, ${verb%% --name*}: file untouched"
done
ok "$(test ! -e ran; echo $?)" "version 2: the command never ran"
ok "$(! ls "$ST"/v.json.corrupt-* >/dev/null 2>&1; echo $?)" "version 2: nothing moved aside"
# An account's document of a newer version: the same.
printf '{"version": 2, "account": "new", "gate": "CLOSED", "x": 1}\n' >"$ST/new.account"
chmod 600 "$ST/new.account"
cp "$ST/new.account" acct.orig
cb --name w --account new -- touch ran 2>err; rc=$?
is "$rc:$(test -e ran; echo $?)" "125:1" "an account of version 2: 125, nothing run"
like "$(cat err)" "account version 2 is newer than this cbexec supports \(1\)" "says so"
"$CBEXEC" --reset-account new 2>err; rc=$?
is "$rc" 125 "--reset-account of version 2: 125"
cmp -s "$ST/new.account" acct.orig; ok $? "the account's document left as it is"
ok "$(! ls "$ST"/new.account.corrupt-* >/dev/null 2>&1; echo $?)" "nothing moved aside"
done_testing
