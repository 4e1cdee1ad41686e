#!/bin/sh
# SPDX-License-Identifier: ISC
# Skip moves on (SPEC §9): --skip and --unskip, runs for a skipped phase or
# task not started (exit 0, one line), the circuit closed for everything
# else, CBEXEC_SKIPPED_*, and the skips in --status, --json, --metrics,
# --log, the hook and the history.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }

# The three-phase pipeline of a script without a terminal: GREEN trips,
# the operator skips it, the pipeline passes GREEN (0, not run) and runs
# REFACTOR.
cat > step.sh <<'EOF'
#!/bin/sh
echo "$1" >> ran
[ "$1" != GREEN ]
EOF
chmod +x step.sh
pipeline() {
	for p in RED GREEN REFACTOR; do
		cb --name pipe --phase "$p" -n 3 --until-success -- ./step.sh "$p" \
		    </dev/null 2>>pipe.err
		rc=$?
		echo "$p $rc" >> rcs
		[ "$rc" -eq 0 ] || return "$rc"
	done
}
pipeline
is "$?" 120 "pipeline: GREEN opens the circuit (120)"
is "$(cat ran | tr '\n' ' ')" "RED GREEN GREEN " "pipeline: RED ran, GREEN twice, REFACTOR not"
is "$(jget "$CBEXEC_STATE_DIR/pipe.json" state)" OPEN "pipeline: OPEN"
out=$("$CBEXEC" --skip --phase GREEN --reason "known failures" pipe 2>&1)
is "$?" 0 "--skip --phase GREEN: 0"
like "$out" 'skipped phase GREEN: known failures' "--skip says what it skipped"
is "$(jget "$CBEXEC_STATE_DIR/pipe.json" state)" CLOSED "--skip closes the circuit"
is "$(jget "$CBEXEC_STATE_DIR/pipe.json" skipped_phases)" '["GREEN"]' "skipped_phases"
: > ran; : > rcs; : > pipe.err
pipeline
is "$?" 0 "pipeline after the skip: passes"
is "$(cat rcs | tr '\n' ' ')" "RED 0 GREEN 0 REFACTOR 0 " "every phase exits 0"
is "$(cat ran | tr '\n' ' ')" "RED REFACTOR " "GREEN not run, REFACTOR run"
is "$(grep -c 'was skipped' pipe.err)" 1 "one line says GREEN was skipped"
like "$(cat pipe.err)" 'cbexec\[pipe\]: phase GREEN was skipped at [0-9T:.-]+Z: known failures; not running it\. Unskip: cbexec --unskip GREEN --name pipe' "it says when, why and how to unskip"
cb --name pipe --phase green -- ./step.sh green 2>/dev/null
is "$?" 0 "a phase is named in any case"
ok "$(! grep -q green ran; echo $?)" "... and still not run"

# --unskip: the phase runs again; what is not skipped is an error.
"$CBEXEC" --unskip green pipe 2>unskip.err
is "$?" 0 "--unskip green: 0"
like "$(cat unskip.err)" 'unskipped phase GREEN' "--unskip says so"
is "$(jget "$CBEXEC_STATE_DIR/pipe.json" skipped_phases)" '[]' "no phase skipped"
cb --name pipe --phase GREEN -- ./step.sh GREEN 2>/dev/null
is "$?" 1 "after --unskip GREEN runs again"
"$CBEXEC" --unskip GREEN pipe 2>unskip.err
is "$?" 125 "--unskip of what is not skipped: 125"
like "$(cat unskip.err)" "^cbexec: 'GREEN' is not skipped$" "... saying so"

# Usage and missing circuits.
"$CBEXEC" --skip --phase GREEN nosuch 2>err
is "$?" 125 "--skip of a circuit without a state file: 125"
like "$(cat err)" "no such circuit.*$CBEXEC_STATE_DIR/nosuch.json" "... names the path"
ok "$(test ! -e "$CBEXEC_STATE_DIR/nosuch.json"; echo $?)" "... and creates nothing"
"$CBEXEC" --unskip GREEN nosuch 2>err
is "$?" 125 "--unskip of a missing circuit: 125"
"$CBEXEC" --skip --phase BOGUS pipe 2>err
is "$?" 125 "--skip --phase of an unknown phase: 125"
"$CBEXEC" --skip --phase GREEN --task T pipe 2>err
is "$?" 125 "--skip with --phase and --task: 125"
like "$(cat err)" 'takes --phase P or --task T, not both' "... says so"
"$CBEXEC" --unskip '' pipe 2>err
is "$?" 125 "--unskip '': 125"
"$CBEXEC" --skip --status pipe 2>err
is "$?" 125 "--skip with another operator command: 125"
cb --state nophase.json -- true 2>/dev/null
"$CBEXEC" --skip --state nophase.json 2>err
is "$?" 125 "--skip of a circuit with no phase and no stuck task: 125"
like "$(cat err)" 'nothing to skip' "... says nothing to skip"

# STUCK on a task: --skip with neither option gives up that task.
cb --state t.json --task T-1 --max-retries 3 -n 5 -- false 2>/dev/null
is "$?" 121 "the same task failing 3 times: STUCK"
is "$(jget t.json stuck_task)" T-1 "stuck_task names it"
USER=alice "$CBEXEC" --skip --reason "needs a human" --state t.json 2>/dev/null
is "$?" 0 "--skip: 0"
is "$(jget t.json skipped_tasks)" '["T-1"]' "--skip gave up the stuck task"
is "$(jget t.json skipped_phases)" '[]' "... not a phase"
is "$(jget t.json stuck_task)" null "stuck_task cleared"
is "$(jget t.json state)" CLOSED "CLOSED"
is "$(jget t.json consecutive_errors)/$(jget t.json same_task_failures)" 0/0 "counters cleared"
is "$(jget t.json skips.0.kind)/$(jget t.json skips.0.name)/$(jget t.json skips.0.reason)/$(jget t.json skips.0.user)" \
    "task/T-1/needs a human/alice" "the skip record: kind, name, why, who"
like "$(jget t.json skips.0.at)" '^20[0-9-]+T[0-9:.]+Z$' "... and when"
like "$(jget t.json history)" '"event":"skip".*"from_state":"OPEN".*"reason":"skipped task T-1: needs a human".*"to_state":"CLOSED".*"user":"alice"' "history: a skip event"
cb --state t.json --task T-1 -- sh -c 'echo ran >> t1' 2>/dev/null
is "$?" 0 "a run for the skipped task: 0"
ok "$(test ! -e t1; echo $?)" "... not started"
cb --state t.json --task T-2 -- sh -c 'echo ran >> t2' 2>/dev/null
is "$?" 0 "another task runs"
ok "$(test -e t2; echo $?)" "... it ran"

# The command sees what is skipped.
"$CBEXEC" --skip --task 'T 3' --state t.json 2>/dev/null
cb --state t.json --phase RED -- sh -c 'echo "P=$CBEXEC_SKIPPED_PHASES T=$CBEXEC_SKIPPED_TASKS" > env.out' 2>/dev/null
is "$(cat env.out)" "P= T=T-1,T 3" "CBEXEC_SKIPPED_TASKS, comma-separated; CBEXEC_SKIPPED_PHASES empty"
CBEXEC_SKIPPED_PHASES=stale cb --state fresh.json -- sh -c 'echo "P=$CBEXEC_SKIPPED_PHASES T=$CBEXEC_SKIPPED_TASKS" > env.out' 2>/dev/null
is "$(cat env.out)" "P= T=" "inherited values are replaced"
out=$(cb --state t.json --task 'T 3' -- true 2>&1)
like "$out" "Unskip: cbexec --unskip 'T 3' --state t.json" "the unskip hint is shell-quoted"

# A task the status block names, skipped: the run happens (the task is
# known only after it) but is no progress and never a same-task failure.
printf '#!/bin/sh\nprintf -- "---CBEXEC_STATUS---\\nTASK: T-1\\n---END_CBEXEC_STATUS---\\n"\nexit 1\n' > t1.sh
chmod +x t1.sh
cb --state t.json --max-retries 1 -- ./t1.sh >/dev/null 2>warn.err
is "$?" 1 "a run reporting a skipped task: its own exit status"
like "$(cat warn.err)" 'warning: run [0-9]+ worked on skipped task T-1' "a warning names the task"
is "$(jget t.json same_task_failures)" 0 "no same-task failure (--max-retries 1 did not trip)"
is "$(jget t.json no_progress_count)" 1 "no progress"

# -q keeps the line, -qq is silent; --exit-codes leaves 0 alone.
out=$(cb -q --state t.json --task T-1 --exit-codes open=90 -- true 2>&1)
is "$?" 0 "-q: 0"
like "$out" 'task T-1 was skipped' "-q: the line is still printed"
out=$(cb -qq --state t.json --task T-1 -- true 2>&1)
is "$out" "" "-qq: nothing"

# Reporting: --status, --json, --metrics, --log, the hook.
out=$("$CBEXEC" --status --state t.json)
like "$out" 'skipped: +task T-1  \(at 20[0-9T:.-]+Z by alice: needs a human\)' "--status: the skip, when, who, why"
like "$out" '    task T 3  \(at 20[0-9T:.-]+Z' "--status: every skip"
"$CBEXEC" --status --json --state t.json > st.json
is "$(jget st.json skipped_tasks)" '["T-1","T 3"]' "--status --json: skipped_tasks"
is "$(jget st.json skips.1.name)" "T 3" "--status --json: the records"
USER=bob "$CBEXEC" --skip --phase DOCUMENT --state t.json --metrics m.prom --log ev.log \
    --on-state-change 'echo "hook $CBEXEC_FROM->$CBEXEC_TO: $CBEXEC_REASON"' 2>hook.err
like "$(cat hook.err)" 'hook: hook CLOSED->CLOSED: skipped phase DOCUMENT' "the hook runs on a skip of a CLOSED circuit"
like "$(cat m.prom)" '^cbexec_skips\{circuit="t.json"\} 3$' "--metrics: cbexec_skips"
like "$(cat m.prom)" '^cbexec_skip_timestamp_seconds\{circuit="t.json",kind="phase",name="DOCUMENT",reason=""\} [0-9]+\.[0-9]+$' "--metrics: when, per skip"
like "$(cat ev.log)" '"event":"skip".*"reason":"skipped phase DOCUMENT"' "--log: the skip"
if command -v promtool >/dev/null 2>&1; then
	grep -v '_count' m.prom | promtool check metrics >/dev/null 2>&1
	ok $? "promtool accepts the skip metrics"
fi
cb --state t.json --phase DOCUMENT --log ev.log -- true 2>/dev/null
like "$(tail -1 ev.log)" '"event":"skipped","kind":"phase","name":"DOCUMENT","at":"20[^"]+","reason":null,"user":"bob"' "--log: a run not started"

# An OPEN circuit: the hook sees OPEN -> CLOSED.
cb --state h.json --phase GREEN -n 2 -- false 2>/dev/null
is "$?" 120 "GREEN opens"
"$CBEXEC" --skip --state h.json --on-state-change 'echo "hook $CBEXEC_FROM->$CBEXEC_TO: $CBEXEC_REASON"' 2>hook.err
is "$(jget h.json skipped_phases)" '["GREEN"]' "--skip without options: the circuit's phase"
like "$(cat hook.err)" 'hook: hook OPEN->CLOSED: skipped phase GREEN' "the hook sees OPEN -> CLOSED"

# A reset forgets every skip.
"$CBEXEC" --reset-circuit --state t.json 2>reset.err
is "$(jget t.json skipped_tasks)/$(jget t.json skipped_phases)" "[]/[]" "--reset-circuit forgets the skips"
like "$(cat reset.err)" 'unskip: unskipped task T-1, task T 3, phase DOCUMENT' "... and says so"
cb --state t.json --task T-1 -- sh -c 'echo ran > t1b' 2>/dev/null
ok "$(test -e t1b; echo $?)" "the task runs again after a reset"

# A state file from before skipped tasks: its skipped_phases hold.
cat > old.json <<'EOF'
{"version": 1, "state": "OPEN", "phase": "GREEN", "open_reason": "x",
 "opened_at": "2026-01-01T00:00:00Z", "skipped_phases": ["GREEN"]}
EOF
cb --state old.json --phase GREEN -- sh -c 'echo ran > old.ran' 2>old.err
is "$?" 0 "an older file's skipped phase is skipped"
ok "$(test ! -e old.ran; echo $?)" "... not run (even with the circuit OPEN)"
like "$(cat old.err)" 'phase GREEN was skipped; not running it' "... when unknown"
cb --state old.json --phase RED -- true 2>/dev/null
is "$?" 120 "another phase: the OPEN circuit refuses"
"$CBEXEC" --status --json --state old.json > oldst.json
is "$(jget oldst.json skips.0.at)" null "an older skip: at null"

# Skip in the menu (through a pseudo-terminal) moves on the same way.
if command -v script >/dev/null 2>&1; then
	tty() {	# tty INPUT ARGS...: cbexec on a pty fed INPUT; rc
		input=$1; shift
		printf "$input" | timeout 20 script -qec "$CBEXEC -q --progress exit $*; echo \"rc=\$?\" > rc" /dev/null > screen 2>&1
		rc=$(sed -n 's/^rc=//p' rc)
	}
	tty 's\n' --state m.json --phase GREEN -n 3 -- false
	is "$rc" 0 "menu Skip: 0"
	is "$(jget m.json state)/$(jget m.json skipped_phases)" 'CLOSED/["GREEN"]' "menu Skip: GREEN skipped, CLOSED"
	is "$(jget m.json skips.0.reason)" "skipped from the menu" "menu Skip: the reason says where"
	cb --state m.json --phase GREEN -- sh -c 'echo ran > m.ran' </dev/null 2>/dev/null
	is "$?" 0 "after menu Skip, GREEN: 0"
	ok "$(test ! -e m.ran; echo $?)" "... not run"
	cb --state m.json --phase REFACTOR -- sh -c 'echo ran > m.ran' </dev/null 2>/dev/null
	ok "$(test -e m.ran; echo $?)" "REFACTOR runs: the circuit is CLOSED for it"

	tty 's\n' --state mt.json --phase GREEN --task T-9 --max-retries 1 -- false
	is "$rc" 0 "menu Skip when STUCK on a task: 0"
	is "$(jget mt.json skipped_tasks)/$(jget mt.json skipped_phases)" '["T-9"]/[]' "... the task is skipped, not the phase"

	tty 's\na\n' --state mn.json --no-progress-threshold 1 --half-open-after 1 -- false
	is "$rc" 122 "menu Skip with nothing to skip: asks again (then Abort)"
	like "$(cat screen)" 'Nothing to skip' "... saying why"
	is "$(jget mn.json skipped_phases)" '[]' "... nothing recorded"
else
	skip "no script(1): menu Skip"
fi
done_testing
