#!/bin/sh
# SPDX-License-Identifier: ISC
# The stuck analysis of the OPEN block (SPEC §9, seed 004's Pattern 3):
# the most common error with its count, the file most named, the task
# that failed most, one hint; 3 to 5 lines whatever the history holds.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }

# A compiler that keeps failing on one file, for one task.
cat > build.sh <<'EOF'
#!/bin/sh
printf -- '---CBEXEC_STATUS---\nTASK: 2.3-login\n---END_CBEXEC_STATUS---\n'
echo "src/login.c:$CBEXEC_ITERATION:5: error: 'user' undeclared" >&2
exit 1
EOF
chmod +x build.sh
cb --state b.json -n 9 --max-retries 4 --no-progress-threshold 9 -- ./build.sh >/dev/null 2>block
is "$?" 121 "STUCK after 4 failures of one task"
block=$(sed -n '/^ANALYSIS:/,/^HINT:/p' block)
is "$block" "ANALYSIS: the last 4 failures (runs 1-4)
MOST_COMMON_ERROR: 4x build_error: src/login.c:1:5: error: 'user' undeclared
MOST_NAMED_FILE: src/login.c (in 4 of 4)
MOST_FAILED_TASK: 2.3-login (4 of 4)
HINT: task 2.3-login keeps failing: split it, or --skip --task it" \
    "the analysis: error and count, file, task, hint"
like "$(sed -n '/^SUGGESTION:/,/^RESET:/p' block | head -1)" '^SUGGESTION:' "it comes after the suggestion"
like "$(sed -n '/^HINT:/{n;p;}' block)" '^RESET:' "... and before RESET"
like "$(jget b.json history)" '"error_hash":"[0-9a-f]{64}".*"task":"2.3-login"' "error events keep the fingerprint and the task"

# Different tasks failing in different ways: the environment.
cat > env.sh <<'EOF'
#!/bin/sh
printf -- '---CBEXEC_STATUS---\nTASK: T-%s\n---END_CBEXEC_STATUS---\n' "$CBEXEC_ITERATION"
case $CBEXEC_ITERATION in
1) echo "SyntaxError: unexpected end" >&2 ;;
2) echo "AssertionError: 1 != 2" >&2 ;;
*) echo "something else $CBEXEC_ITERATION" >&2 ;;
esac
exit 1
EOF
chmod +x env.sh
cb --state e.json -n 9 --max-consecutive-errors 3 --no-progress-threshold 9 -- ./env.sh >/dev/null 2>block
is "$?" 120 "3 consecutive errors: OPEN"
like "$(cat block)" 'HINT: different tasks fail in different ways: suspect the environment' "hint: the environment"
ok "$(! grep -q '^MOST_FAILED_TASK' block; echo $?)" "no task failed twice: no task line"

# The same error every time, no task, no file.
cb --state s.json -n 9 --same-error-threshold 3 --no-progress-threshold 9 -- sh -c 'echo "fatal: bad object HEAD" >&2; exit 128' 2>block
like "$(cat block)" "HINT: the same error every time: fix its cause first" "hint: the same error"
ok "$(! grep -q '^MOST_NAMED_FILE' block; echo $?)" "no file named: no file line"
ok "$(! grep -q '^MOST_FAILED_TASK' block; echo $?)" "no task: no task line"
n=$(sed -n '/^ANALYSIS:/,/^HINT:/p' block | wc -l)
is "$n" 3 "three lines then"

# No failure, only no progress: nothing to analyse.
cb --state n.json -n 3 --progress git -- true 2>block
ok "$(! grep -q '^ANALYSIS' block; echo $?)" "no failed run: no analysis"

# However long the history, 3 to 5 lines and a bounded state file; only
# the failures since the last reset count.
cb --state long.json -n 150 --history-size 1000 --no-progress-threshold 999 --max-consecutive-errors 999 \
    --same-error-threshold 999 -- sh -c 'echo "lib/x$CBEXEC_ITERATION.py: ValueError" >&2; exit 1' 2>/dev/null
"$CBEXEC" --reset-circuit --state long.json 2>/dev/null
cb --state long.json -n 9 --no-progress-threshold 2 --half-open-after 1 -- sh -c 'echo "src/only.rs:1: error: E" >&2; exit 1' 2>block
n=$(sed -n '/^ANALYSIS:/,/^HINT:/p' block | wc -l)
ok "$([ "$n" -ge 3 ] && [ "$n" -le 5 ]; echo $?)" "a long history: $n lines"
like "$(cat block)" 'ANALYSIS: the last 2 failures \(runs 151-152\)' "only the failures since the reset"
like "$(cat block)" 'MOST_NAMED_FILE: src/only.rs \(in 2 of 2\)' "... and their file"
size=$(wc -c < long.json)
ok "$([ "$size" -lt 400000 ]; echo $?)" "the state file stays bounded ($size bytes for 150 failures)"

# -qq keeps the OPEN block off stderr (the log still has it).
"$CBEXEC" -qq --no-prompt --progress exit --state qq.json -n 3 --no-progress-threshold 2 \
    --log qq.log -- sh -c 'exit 1' 2>qq.err
is "$?" 120 "-qq: 120"
is "$(cat qq.err)" "" "-qq: nothing on stderr"
like "$(cat qq.log)" '"event":"open"' "-qq: the OPEN block is in the log"

# --log: the analysis as an object.
cb --state lg.json -n 3 --log lg.log --no-progress-threshold 2 -- sh -c 'echo "a.py:1: SyntaxError" >&2; exit 1' 2>/dev/null
line=$(grep '"event":"open"' lg.log)
printf '%s' "$line" > open.json
is "$(jget open.json analysis.most_named_file)/$(jget open.json analysis.file_count)/$(jget open.json analysis.failures)" \
    "a.py/2/2" "--log: the open object carries the analysis"
like "$(jget open.json analysis.hint)" 'same error every time' "--log: its hint"
done_testing
