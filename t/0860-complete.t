#!/bin/sh
# SPDX-License-Identifier: ISC
# The end of the work is an outcome (SPEC §11): a run whose status block
# reports completion exits 0, or N with --exit-codes complete=N, and says
# "complete": true in every JSON view and in --record -v; a bare STATUS:
# COMPLETE line is no block; a --loop of successes with no --delay says
# once that it runs hot; README's loop recipes, run as printed, end when
# the work is done.  The other way round, a run cbexec judged a failure
# never exits 0: 1, or 124 for a loop the client stopped itself; and a
# known client's own status above 128 is no signal.  And a half-open
# trial must disprove why the circuit opened: a stuck agent that exits 0
# gets one trial per cooldown, and the circuit holds.
. "$(dirname "$0")/lib.sh"

D=$CBEXEC_STATE_DIR
cb() { "$CBEXEC" --no-prompt "$@"; }
st() { jget "$D/$1.json" "$2"; }
block() {	# block STATUS: a status block on stdout
	printf -- '---CBEXEC_STATUS---\nSTATUS: %s\n---END_CBEXEC_STATUS---\n' "$1"
}
printf -- '---CBEXEC_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_CBEXEC_STATUS---\n' >done.txt

# --- completion as an exit status ------------------------------------------
cb -q --name c0 -- cat done.txt >/dev/null
is "$?" 0 "a run that reports completion: 0"
cb -q --name c1 --exit-codes complete=10 -- cat done.txt >/dev/null
is "$?" 10 "--exit-codes complete=10: 10"
cb -q --name c2 --loop -n 5 --exit-codes complete=10 -- cat done.txt >/dev/null
is "$? $(st c2 iteration)" "10 1" "--loop ends on it after one run, 10"
cb -q --name c3 --exit-codes complete=10,open=90 -- true
is "$?" 0 "a success that reports nothing: still 0"
out=$(cb --name c4 --exit-codes complete=300 -- true 2>&1)
is "$?" 125 "complete=300: a usage error"
like "$out" "invalid value 'complete=300' for --exit-codes" "named"

# a failed run that says COMPLETE ends the loop but is no success
cb -q --name c5 --loop -n 5 --exit-codes complete=10 -- sh -c \
    'cat done.txt; exit 3' >/dev/null 2>&1
is "$? $(st c5 iteration)" "3 1" "a failed run saying COMPLETE: its own 3, the loop ended"

# --- "complete": true where scripts read ------------------------------------
cb -q --name v --log v.log -- cat done.txt >/dev/null
"$CBEXEC" --status --json v >s.json
is "$(jget s.json complete)" true "--status --json: \"complete\": true"
"$CBEXEC" --history --json v >h.json
is "$(jget h.json 0.complete)" true "--history --json: the run's event, \"complete\": true"
like "$(grep '"event":"run"' v.log)" '"complete":true' "--log run line: \"complete\":true"
"$CBEXEC" --status --all --json >all.json
like "$(cat all.json)" '"circuit":"v",.*"complete":true' "--status --all --json: \"complete\": true"
like "$("$CBEXEC" --status v)" "complete: its status said the work is done" \
    "--status says so"
cb -q --name v -- true
is "$(jget "$D/v.json" complete)" false "the next run that reports nothing: false again"
out=$("$CBEXEC" --record -v --stdout-file done.txt r 2>&1)
is "$?" 0 "--record of a completed run: 0"
like "$out" "run 1 exited 0 after .*: complete" "--record -v says complete"
"$CBEXEC" --record --stdout-file done.txt --exit-codes complete=10 r2
is "$?" 10 "--record --exit-codes complete=10: 10"

# --- only a block says it ----------------------------------------------------
cb -q --name bare --loop -n 3 --delay 0.01 -- sh -c 'echo "STATUS: COMPLETE"' >/dev/null
is "$? $(st bare iteration) $(st bare complete)" "0 3 false" \
    "a bare STATUS: COMPLETE line: not read, the loop goes on"

# --- a hot loop is said once ------------------------------------------------
cb --name hot --loop -n 4 -- true 2>err.txt
is "$(grep -c 'runs hot' err.txt)" 1 "--loop of successes, no --delay: said once"
like "$(cat err.txt)" "give --delay" "with what to do"
cb --name cool --loop -n 3 --delay 0.01 -- true 2>err.txt
is "$(grep -c 'runs hot' err.txt)" 0 "with --delay: nothing said"
cb --name once -n 3 -- true 2>err.txt
is "$(grep -c 'runs hot' err.txt)" 0 "-n without --loop: nothing said"

# --- a failure never exits 0 --------------------------------------------------
mkdir -p bin
printf '#!/bin/sh\necho '"'"'{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"result":"API Error: 500 Internal server error"}'"'"'\nexit 0\n' >bin/claude
cat >bin/gemini <<'EOF'
#!/bin/sh
echo '{"type":"init","session_id":"s"}'
echo '{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: You exceeded your current quota, please retry in 2s. (Status: RESOURCE_EXHAUSTED)]"}}'
exit 173
EOF
chmod +x bin/claude bin/gemini
PATH=$SCRATCH/bin:$PATH cb -q --name f1 -- claude -p x >/dev/null 2>&1
is "$? $(st f1 last_error.class) $(st f1 outcome)" "1 transient EXIT" \
    "an error in claude's result, exit 0: exits 1"
is "$(st f1 last_error.exit_code)" 0 "the state keeps what it exited"
PATH=$SCRATCH/bin:$PATH cb -q --name f2 -- gemini -p x --output-format stream-json >/dev/null 2>&1
is "$? $(st f2 last_error.type)" "1 rate_limited" \
    "gemini's own 173 (HTTP 429 & 0xFF): 1, not 'killed by signal 45'"
is "$(st f2 last_error.exit_code)" 173 "the state keeps its 173"
sh -c 'kill -USR1 $$' >/dev/null 2>&1; usr1=$?
PATH=$SCRATCH/bin:$PATH cb -q --name f3 -- sh -c 'kill -USR1 $$' >/dev/null 2>&1
is "$?" "$usr1" "a real signal: still 128+N"

# --- a trial must disprove (ralph-claude-code's stuck agent) ------------------
# An agent that exits 0 and never changes a file: --progress files.
mkdir -p watched
# A cooldown of 1 s (2 s once doubled): each "not over yet" invocation
# comes right after the opening, with room for a loaded machine.
stuck() { cb -q --name stuck --progress files --watch watched \
    --no-progress-threshold 3 --half-open-after 2 --cooldown 1s -- true; }
stuck; stuck; stuck; rc=$?
stuck; rc2=$?
is "$rc $rc2 $(st stuck state)" "120 120 OPEN" \
    "three runs without progress: OPEN; before the cooldown: refused"
sleep 1.05
stuck; rc=$?
stuck; rc2=$?
is "$rc $rc2 $(st stuck state) $(st stuck open_reason)" \
    "120 120 OPEN Trial run made no progress" \
    "the trial (exit 0, no progress) re-opens it; the doubled cooldown is not over: refused"
is "$(st stuck total_opens) $(st stuck open_cause)" "2 no_progress" \
    "a second opening, for the same cause"
is "$(perl -MJSON::PP -0777 -ne 'print scalar grep { ($_->{to_state} // "") eq "CLOSED" } @{decode_json($_)->{history}}' "$D/stuck.json")" \
    0 "never CLOSED again: the circuit holds"
sleep 2.05
cb -q --name stuck --progress files --watch watched --no-progress-threshold 3 \
    --half-open-after 2 --cooldown 1s -- sh -c 'echo x >watched/f'
is "$? $(st stuck state)" "0 CLOSED" "a trial with progress closes it"

# --- README's loop recipes, run as printed ---------------------------------
# recipe N: the Nth ```sh block of README.md after the heading $1
recipe() {
	awk -v h="$1" '$0 == h { f = 1; next } f && /^### / { exit }
	    f && /^```sh$/ { b = 1; next } b && /^```$/ { exit } b' \
	    "$TOP/README.md"
}
# claude: IN_PROGRESS twice, then COMPLETE; counts its runs
cat >bin/claude <<'EOF'
#!/bin/sh
n=$(($(cat "$SCRATCH/runs" 2>/dev/null || echo 0) + 1))
echo $n >"$SCRATCH/runs"
printf -- '---CBEXEC_STATUS---\nSTATUS: %s\nTASK: t%d\n---END_CBEXEC_STATUS---\n' \
    "$([ $n -ge 3 ] && echo COMPLETE || echo IN_PROGRESS)" $n
EOF
chmod +x bin/claude
# cbexec on PATH, as the recipes call it
printf '#!/bin/sh\nexec "%s" "$@"\n' "$CBEXEC" >bin/cbexec
chmod +x bin/cbexec
echo "Work on the next task." >PROMPT.md
recipe "### A loop script that decides by exit status" >loop.sh
like "$(cat loop.sh)" "claude -p" "the exit-status recipe runs claude"
rm -f runs
out=$(PATH=$SCRATCH/bin:$PATH SCRATCH=$SCRATCH timeout 60 sh loop.sh 2>&1)
is "$? $(cat runs)" "0 3" "the exit-status recipe: three steps, done at COMPLETE"
like "$out" "done: the work is complete" "it says so"

cp bin/claude agent-step.sh
recipe "### A loop script that runs the agent itself" >rec.sh
rm -f runs
PATH=$SCRATCH/bin:$PATH SCRATCH=$SCRATCH timeout 60 sh rec.sh >/dev/null 2>&1
is "$? $(cat runs) $(jget "$D/feat.json" complete)" "0 3 true" \
    "the --record recipe: ends when the work is done"

recipe "### A loop in one invocation, in a pipeline" | head -1 >pipe.sh
echo 2 >runs	# the next run of the step reports COMPLETE
PATH=$SCRATCH/bin:$PATH SCRATCH=$SCRATCH timeout 60 sh pipe.sh >/dev/null 2>&1
is "$? $(cat runs) $(jget "$D/feature-x.json" complete)" "0 3 true" \
    "the --loop recipe: ends on completion"
done_testing
