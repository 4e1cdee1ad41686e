#!/bin/sh
# SPDX-License-Identifier: ISC
# contrib/ralph-loop.sh, ralph-claude-code's loop as one cbexec
# invocation, in a Ralph project with a stand-in for Claude Code that
# prints what `claude -p --output-format json` prints: its settings from
# .ralphrc (read, never run) and the environment, every run on the prompt
# of .ralph/PROMPT.md with ralph's --allowedTools and the last run's
# session resumed, the loop ending on EXIT_SIGNAL: true (0) or when the
# circuit opens after CB_NO_PROGRESS_THRESHOLD runs without progress
# (120); --circuit-status, --reset-circuit and --auto-reset-circuit.
. "$(dirname "$0")/lib.sh"
LOOP=$TOP/contrib/ralph-loop.sh

if ! command -v git >/dev/null 2>&1; then
	skip "git not installed: a Ralph project is a git work tree"
	done_testing
	exit 0
fi
mkdir -p bin proj/.ralph
# claude: each argument on a line of $ARGLOG (a run per "--run--" line);
# MODE=work changes the tree and says EXIT_SIGNAL: true at its third run,
# MODE=stuck changes nothing; the session is s-RUN.
cat > bin/claude <<'EOF'
#!/bin/sh
n=$(($(cat "$COUNT" 2>/dev/null || echo 0) + 1))
echo "$n" > "$COUNT"
{ echo "--run--"; for a in "$@"; do printf '%s\n' "$a"; done; } >> "$ARGLOG"
exit_signal=false status=IN_PROGRESS files=0
if [ "$MODE" = work ]; then
	echo "change $n" >> work.txt
	files=1
	[ "$n" -ge 3 ] && exit_signal=true status=COMPLETE
fi
printf '{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"Did step %s.\\n---RALPH_STATUS---\\nSTATUS: %s\\nTASKS_COMPLETED_THIS_LOOP: %s\\nFILES_MODIFIED: %s\\nTESTS_STATUS: PASSING\\nWORK_TYPE: IMPLEMENTATION\\nEXIT_SIGNAL: %s\\nRECOMMENDATION: go on\\n---END_RALPH_STATUS---","session_id":"s-%s","total_cost_usd":0.01,"usage":{"input_tokens":100,"output_tokens":10}}\n' \
    "$n" "$status" "$files" "$files" "$exit_signal" "$n"
EOF
chmod +x bin/claude
# (a bound, so that a wrong judgement fails the test instead of hanging it)
export PATH="$SCRATCH/bin:$PATH" CBEXEC ARGLOG=$SCRATCH/args COUNT=$SCRATCH/count \
    RALPH_BUDGET=60s
# what the loop prints goes outside the work tree: a file changing in it
# is progress
O=$SCRATCH/out E=$SCRATCH/err
cd proj || exit 1
git init -q . && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m init
echo "Build the thing; keep .ralph/fix_plan.md up to date." > .ralph/PROMPT.md
cat > .ralphrc <<'EOF'
# .ralphrc as `ralph enable` writes it, shortened
PROJECT_NAME="${PROJECT_NAME:-demo}"
MAX_CALLS_PER_HOUR=360000
CLAUDE_TIMEOUT_MINUTES=5
CLAUDE_OUTPUT_FORMAT="json"
ALLOWED_TOOLS="Write,Read,Bash(git add *)"
SESSION_CONTINUITY=true
CB_NO_PROGRESS_THRESHOLD=2
CB_SAME_ERROR_THRESHOLD=4
CB_COOLDOWN_MINUTES=45
CLAUDE_MODEL="$(touch pwned)"
EOF
state() { jget "$CBEXEC_STATE_DIR/$(ls "$CBEXEC_STATE_DIR" | grep '^dir-proj-.*\.json$')" "$1"; }
run_args() {	# run_args N: the arguments of claude's Nth run, one a line
	awk -v n="$1" '/^--run--$/ { r++; next } r == n' "$ARGLOG"
}

# --- a loop that ends with EXIT_SIGNAL: true --------------------------------
MODE=work sh "$LOOP" >"$O" 2>"$E"
is "$?" 0 "EXIT_SIGNAL: true in the RALPH_STATUS block ends the loop: 0"
is "$(cat "$COUNT")" 3 "three runs"
is "$(run_args 1)" "--output-format
json
--allowedTools
Write
Read
Bash(git add *)
-p
Build the thing; keep .ralph/fix_plan.md up to date." \
    "run 1: claude -p PROMPT.md --output-format json, .ralphrc's tools one an argument"
like "$(run_args 2 | tr '\n' ' ')" '--resume s-1 -p Build' "run 2 resumes run 1's session"
like "$(run_args 3 | tr '\n' ' ')" '--resume s-2 -p Build' "run 3 resumes run 2's"
ok "$([ ! -e pwned ]; echo $?)" ".ralphrc is read, never run: \$(touch pwned) did nothing"
is "$(state thresholds.no_progress_threshold)/$(state thresholds.same_error_threshold)/$(state thresholds.cooldown)" \
    2/4/2700 ".ralphrc's CB_NO_PROGRESS_THRESHOLD, CB_SAME_ERROR_THRESHOLD, CB_COOLDOWN_MINUTES"
is "$(grep -c '"event"' "$O")/$(grep -c 'Did step' "$O")" "0/3" "Claude's output passes through"

# --- no progress: the circuit opens -----------------------------------------
rm -f "$COUNT" "$ARGLOG"
MODE=stuck sh "$LOOP" >"$O" 2>"$E"
is "$?" 120 "runs that change nothing: the circuit opens, 120"
is "$(cat "$COUNT")" 2 "... after CB_NO_PROGRESS_THRESHOLD (2) runs"
like "$(cat "$E")" 'REASON: No progress for 2 iterations' "... with the OPEN block"
sh "$LOOP" --circuit-status >"$O" 2>&1
is "$?" 120 "--circuit-status: 120 while OPEN"
like "$(cat "$O")" 'state: +OPEN' "... showing it"
MODE=stuck sh "$LOOP" >/dev/null 2>"$E"
is "$?:$(cat "$COUNT")" 120:2 "a new start is refused while OPEN (45m cooldown)"
sh "$LOOP" --reset-circuit 2>/dev/null
is "$?" 0 "--reset-circuit: 0"
sh "$LOOP" --status >/dev/null 2>&1
is "$?" 0 "... CLOSED again"

# --- CB_AUTO_RESET and the command line ---------------------------------------
MODE=stuck sh "$LOOP" >/dev/null 2>&1
rm -f "$COUNT" "$ARGLOG"
CB_AUTO_RESET=true MODE=work sh "$LOOP" --no-continue -c 0 --output-format text \
    --allowed-tools 'Read, Edit' -- --verbose >/dev/null 2>&1
is "$?" 0 "CB_AUTO_RESET=true: an OPEN circuit reset, the loop runs to its end"
is "$(run_args 2)" "--allowedTools
Read
Edit
--verbose
-p
Build the thing; keep .ralph/fix_plan.md up to date." \
    "--no-continue, --output-format text, --allowed-tools, -- ARGS: as asked"
like "$(sh "$LOOP" -t x 2>&1)" 'not a whole number' "a bad -t: a usage error"
rm -f "$COUNT"
CB_NO_PROGRESS_THRESHOLD=7 MODE=work sh "$LOOP" >/dev/null 2>&1
is "$?:$(state thresholds.no_progress_threshold)" 0:7 "the environment over .ralphrc"
# --- README's loop, as written (but for its pace) ------------------------
perl -e '
	my ($in, $under);
	while (<>) {
		if (/^## /) { $under = /^## Coming from ralph-claude-code/; next }
		next unless $under;
		if (!$in && /^```sh$/) { $in = 1; next }
		if ($in && /^```$/) { last }
		print if $in;
	}
' "$TOP/README.md" | sed 's/--delay 36s/--delay 10ms/' > "$SCRATCH/readme-loop.sh"
like "$(head -1 "$SCRATCH/readme-loop.sh")" '^cbexec --loop ' "README: the PROMPT.md loop under cbexec"
rm -f "$COUNT" "$ARGLOG"
mkdir -p "$SCRATCH/cb"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$CBEXEC" > "$SCRATCH/cb/cbexec"
chmod +x "$SCRATCH/cb/cbexec"
"$CBEXEC" --reset-circuit >/dev/null 2>&1
MODE=work PATH="$SCRATCH/cb:$PATH" sh "$SCRATCH/readme-loop.sh" >"$O" 2>"$E"
is "$?:$(cat "$COUNT")" 0:3 "README's loop: three runs, done on EXIT_SIGNAL: true"
like "$(run_args 3 | tr '\n' ' ')" '^-p Build the thing.* --output-format json --allowedTools Write Read Edit Bash\(git add \*\) Bash\(git commit \*\) --resume s-2 $' \
    "... the prompt read for each run, the last session resumed"
like "$(cat "$E")" 'run [0-9]+ exited 0 after [0-9.]+s \(0\.01 USD, 110 tokens, 2 turns\)' \
    "... Claude Code known behind sh -c: its cost and tokens read"
done_testing
