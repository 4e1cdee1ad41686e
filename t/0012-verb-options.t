#!/bin/sh
# SPDX-License-Identifier: ISC
# Where the words go.  An operator command takes its options before or
# after its CIRCUIT, as GNU tools do (also under POSIXLY_CORRECT); a run
# stops at the first word that is no option, or at --, and leaves COMMAND
# and its arguments alone.  The options that only an operator command
# uses (--json, --last, --reason, --create, --all) are a usage error in a
# run instead of being dropped without a word.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }

cb --name nightly -n 2 -- false 2>/dev/null
out=$("$CBEXEC" --status nightly --json); rc=$?
is "$rc:$(printf '%s\n' "$out" | jget /dev/stdin name)" "0:nightly" \
	"--status nightly --json: the JSON of nightly"
out=$(POSIXLY_CORRECT=1 "$CBEXEC" --status nightly --json); rc=$?
is "$rc:$(printf '%s\n' "$out" | jget /dev/stdin name)" "0:nightly" \
	"... also under POSIXLY_CORRECT"
out=$("$CBEXEC" --history nightly --last 1 --json)
is "$(printf '%s\n' "$out" | jget /dev/stdin 0.event)" state_change \
	"--history nightly --last 1 --json: one event, as JSON"
is "$(printf '%s\n' "$out" | perl -MJSON::PP -0777 -e 'print scalar @{decode_json(<STDIN>)}')" 1 \
	"... only the last one"
"$CBEXEC" --trip nightly --reason 'fire drill' 2>/dev/null; rc=$?
is "$rc:$(jget "$CBEXEC_STATE_DIR/nightly.json" open_reason)" "0:tripped by operator: fire drill" \
	"--trip nightly --reason TEXT"
"$CBEXEC" --reset-circuit nightly --reason 'fixed the fixture' 2>/dev/null; rc=$?
is "$rc" 0 "--reset-circuit nightly --reason TEXT: 0"
is "$("$CBEXEC" --history nightly --json --last 1 | jget /dev/stdin 0.reason)" "fixed the fixture" \
	"... its reason is in the history"
out=$("$CBEXEC" --status nightly -- 2>&1); rc=$?
is "$rc" 0 "--status nightly --: 0"
out=$("$CBEXEC" --status -- nightly 2>&1); rc=$?
like "$rc:$out" '^0:circuit: +nightly' "--status -- nightly: the circuit after --"
err=$("$CBEXEC" --status nightly other 2>&1); rc=$?
is "$rc" 125 "two CIRCUITs: 125"
like "$err" "too many arguments: 'other'" "... naming the second"
err=$("$CBEXEC" --status nightly --json other 2>&1); rc=$?
like "$rc:$err" "^125:.*too many arguments: 'other'" "... options between them or not"
err=$("$CBEXEC" --status nightly --name other 2>&1); rc=$?
like "$rc:$err" "^125:.*CIRCUIT 'nightly' given as well as --state or --name" \
	"CIRCUIT and --name after it: 125"
"$CBEXEC" --skip nightly --task t1 --reason "not now" 2>/dev/null; rc=$?
is "$rc:$(jget "$CBEXEC_STATE_DIR/nightly.json" skipped_tasks)" '0:["t1"]' \
	"--skip nightly --task T --reason TEXT"
"$CBEXEC" --record nightly --exit 3 --message "boom" 2>/dev/null; rc=$?
is "$rc:$(jget "$CBEXEC_STATE_DIR/nightly.json" last_error.exit_code)" "3:3" \
	"--record nightly --exit N --message TEXT"

# A run: COMMAND and what follows it are untouched.
out=$(cb --name r echo --status nightly --json); rc=$?
is "$rc:$out" "0:--status nightly --json" "a run: COMMAND's words after it are its own"
out=$(cb --name r -- echo --reason x --last 3); rc=$?
is "$rc:$out" "0:--reason x --last 3" "a run after --: the same"
out=$(POSIXLY_CORRECT=1 cb --name r echo -n --json); rc=$?
is "$rc:$out" "0:--json" "... under POSIXLY_CORRECT too"

# Operator-only options in a run: a usage error, not silently dropped.
for o in "--json" "--last 3" "--reason why" "--create" "--all"; do
	name=${o%% *}
	err=$("$CBEXEC" $o -- true 2>&1); rc=$?
	is "$rc" 125 "a run with $name: 125"
	like "$err" "^cbexec: $name goes only with .*\(a run would not use it\)" "... saying so"
done
err=$("$CBEXEC" --last 3 --status nightly 2>&1); rc=$?
like "$rc:$err" "^125:cbexec: --last goes only with --history$" "--last with --status: 125"
err=$("$CBEXEC" --reason x --history nightly 2>&1); rc=$?
like "$rc:$err" "^125:cbexec: --reason goes only with --reset-circuit, --trip, --skip or --reset-account" \
	"--reason with --history: 125"
ok "$([ ! -e "$CBEXEC_STATE_DIR/r.json" ] || [ "$(jget "$CBEXEC_STATE_DIR/r.json" iteration)" = 3 ]; echo $?)" \
	"the refused runs did not run"
done_testing
