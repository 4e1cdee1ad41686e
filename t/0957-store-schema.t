#!/bin/sh
# SPDX-License-Identifier: ISC
# One schema, forward compatible (SPEC §11), on a shared Redis (--store):
# the same JSON under cbexec:circuit:NAME, so the members a newer cbexec
# wrote -- at the top and in history events, and in an account's
# document -- survive a run and every operator verb byte for byte, an
# older shape is written back in this version's, and a newer version is
# refused (125) and left as it is.  t/0115-schema.t does the same on the
# file store.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"

redis_start
S="--store $REDIS_URL"
FIX=$T_DIR/state
cb() { "$CBEXEC" -q --no-prompt --progress exit $S "$@"; }
get() { rcli GET "cbexec:circuit:$1" >"$1.json"; }
jkeys() {
	perl -MJSON::PP -0777 -e 'print join(",", sort keys %{decode_json(<STDIN>)}), "\n"' <"$1"
}

TOP1='"run_started": {"iteration": 4, "host": "build-7", "pid": 4242, "at": "2026-11-27T01:43:00.000Z"}'
TOP2='"labels":["nightly", "gpu"]'
TOP3='"priority" :  2.50'
TOP4='"note\u00e9": "caf\u00e9 \"quoted\""'
EV1='"host": "build-7", "duration_ms": 1234'
EV2='"cause":{"file":"a.c","line":3}'
kept() {
	_all=0
	for _m in "$TOP1" "$TOP2" "$TOP3" "$TOP4" "$EV1" "$EV2"; do
		[ "$(grep -cF -- "$_m" "$1")" = 1 ] || {
			echo "# lost: $_m"; _all=1; }
	done
	ok $_all "$2: every member it does not know is kept, byte for byte"
}

rcli -x SET cbexec:circuit:n <"$FIX/v1-newer-members.json" >/dev/null
get n
kept n.json "the state as set in the store"
cb --name n -- true; is "$?" 0 "a run on a state with members it does not know"
get n
is "$(jget n.json iteration):$(jget n.json generation)" "4:4" "counted and saved"
kept n.json "after a run"
cb --name n -- sh -c 'exit 1'; is "$?" 1 "a failing run"
get n; kept n.json "after a failing run"
cb --record --exit 0 --name n; is "$?" 0 "--record"
get n; kept n.json "after --record"
"$CBEXEC" $S --trip --reason maintenance n 2>/dev/null; is "$?" 0 "--trip"
get n; is "$(jget n.json state)" OPEN "tripped"
kept n.json "after --trip"
"$CBEXEC" $S --reset-circuit n 2>/dev/null; is "$?" 0 "--reset-circuit"
get n; kept n.json "after --reset-circuit"
"$CBEXEC" $S --skip --phase REFACTOR n 2>/dev/null; is "$?" 0 "--skip"
get n; is "$(jget n.json skipped_phases)" '["REFACTOR"]' "skipped"
kept n.json "after --skip"
"$CBEXEC" $S --unskip REFACTOR n 2>/dev/null; is "$?" 0 "--unskip"
get n; kept n.json "after --unskip"
"$CBEXEC" $S --status --json n >status.json
is "$(jget status.json run_started.host)" build-7 "--status --json shows them"

rcli -x SET cbexec:circuit:h <"$FIX/v1-newer-members.json" >/dev/null
cb --name h --history-size 3 -- true
get h
is "$(grep -cF -- "$EV1" h.json):$(grep -cF -- "$EV2" h.json):$(grep -cF -- "$TOP2" h.json)" \
    "0:1:1" "--history-size 3: the oldest event went with its members; the rest stay"

# An account's document in the store.
sed 's/"updated_at"/"gate_future": {"x": [1, 2]},\n\t"updated_at"/' \
    "$FIX/account-v1-9286c44.account" | rcli -x SET cbexec:account:acme >/dev/null
cb --name a --account acme -- true; is "$?" 0 "a run on the account (its trial)"
rcli GET cbexec:account:acme >acme.json
is "$(jget acme.json gate):$(jget acme.json generation)" "CLOSED:3" \
    "the document was written twice (the trial, then its end)"
grep -qF '"gate_future": {"x": [1, 2]}' acme.json
ok $? "the account's member it does not know is kept, byte for byte"
is "$(jget acme.json opened_at):$(grep -c '"since"' acme.json)" "null:0" \
    "since, the older name of opened_at, is not kept beside it"

# An older shape: the circuit breaker spec's own file, without a version.
cb --name fresh -- true
get fresh
rcli -x SET cbexec:circuit:o <"$FIX/v0-circuit-breaker-spec.json" >/dev/null
cb --name o -- touch ran 2>/dev/null; rc=$?
is "$rc:$(test -e ran; echo $?)" "120:1" "the spec's file: read, still OPEN, refuses the run"
"$CBEXEC" $S --reset-circuit o 2>/dev/null; is "$?" 0 "--reset-circuit"
get o
is "$(jget o.json version):$(jkeys o.json)" "1:$(jkeys fresh.json)" \
    "written back as version 1 with every member of it"
is "$(jget o.json last_progress_metric.GREEN.tests_passing):$(jget o.json history.2.reason)" \
    "12:No progress for 3 iterations" "its metric and history kept"

# A newer version is refused and left as it is.
rcli -x SET cbexec:circuit:v <"$FIX/v2-newer.json" >/dev/null
before=$(rcli GET cbexec:circuit:v | cksum)
for verb in "-q --no-prompt --progress exit --name v -- touch ran" \
    "--trip v" "--reset-circuit v" "--skip --phase GREEN v" \
    "--unskip GREEN v" "--record --exit 1 --name v" "--status v"; do
	# shellcheck disable=SC2086
	"$CBEXEC" $S $verb >out 2>err; rc=$?
	is "$rc" 125 "version 2 in the store, ${verb%% v}: 125"
	like "$(cat err)" "state version 2 is newer than this cbexec supports \(1\)" \
	    "version 2 in the store, ${verb%% v}: says so"
	is "$(rcli GET cbexec:circuit:v | cksum)" "$before" \
	    "version 2 in the store, ${verb%% v}: left as it is"
done
ok "$(test ! -e ran; echo $?)" "version 2: the command never ran"
printf '{"version": 2, "account": "new", "gate": "CLOSED"}' |
    rcli -x SET cbexec:account:new >/dev/null
before=$(rcli GET cbexec:account:new | cksum)
cb --name w --account new -- touch ran 2>err; rc=$?
is "$rc:$(test -e ran; echo $?)" "125:1" "an account of version 2 in the store: 125, nothing run"
like "$(cat err)" "account version 2 is newer than this cbexec supports \(1\)" "says so"
"$CBEXEC" $S --reset-account new 2>/dev/null; rc=$?
is "$rc:$(rcli GET cbexec:account:new | cksum)" "125:$before" \
    "--reset-account of version 2: 125, left as it is"
is "$(rcli KEYS 'cbexec:corrupt*' | grep -c .)" 0 "nothing moved aside"
done_testing
