#!/bin/sh
# SPDX-License-Identifier: ISC
# Judgement on real agent work (SPEC §10), as a user meets it: the exit
# status and the state of runs whose output only mentions a provider's
# words, or repeats legitimately, or ends oddly.  The labelled corpus
# (make corpus) scores every detector on hundreds of cases; these are the
# reproductions of what misjudged a run, end to end.
. "$(dirname "$0")/lib.sh"

cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }
st() { jget "$CBEXEC_STATE_DIR/$1.json" "$2"; }
verdict() { echo "$(st "$1" last_error.class) $(st "$1" last_error.type)"; }
# emit FILE CODE: a command that prints FILE on stderr and exits CODE
emit_err() { printf '%s' "$1" >"$SCRATCH/e.txt"; echo "cat '$SCRATCH/e.txt' >&2; exit $2"; }
emit_out() { printf '%s' "$1" >"$SCRATCH/o.txt"; echo "cat '$SCRATCH/o.txt'; exit $2"; }

# A test asserting 401 is a test failure, not a credentials failure.
cb --name t401 -- sh -c "$(emit_err ' FAIL  src/auth.test.js
  ● auth › rejects an expired token

    expect(received).toBe(expected)

    Expected: 401
    Received: 200
' 1)" 2>/dev/null
is "$?" 1 "a test that asserts 401: its own exit status, not 122"
is "$(verdict t401)" "recoverable test_failure" "recoverable test_failure"
like "$(st t401 last_error.message)" "rejects an expired token" \
    "its message is the failing test"
is "$(st t401 state)" CLOSED "the circuit stays CLOSED"

# "expected 500 to be 200", run after run: the same test failing is STUCK,
# not a transient server error that never counts.
for i in 1 2 3; do
	cb --name t500 --same-error-threshold 3 --max-consecutive-errors 9 \
	    --no-progress-threshold 9 --half-open-after 9 -- sh -c "$(emit_out \
	    ' FAIL  src/proxy.test.ts > upstream > maps errors
AssertionError: expected 500 to be 200
' 1)" >/dev/null 2>&1
	r=$?
done
is "$r $(verdict t500)" "121 recoverable test_failure" \
    "the same failing test three times: STUCK"

# Three different failing tests are three errors.
for t in "adds an item" "removes an item" "applies a coupon"; do
	cb --name tdiff --same-error-threshold 3 --max-consecutive-errors 9 \
	    --no-progress-threshold 9 --half-open-after 9 -- sh -c "$(emit_err \
	    "  ● cart › $t

    Expected: 1
Tests:       1 failed, 31 passed, 32 total
" 1)" 2>/dev/null
	r=$?
done
is "$r $(st tdiff same_error_count)" "1 1" \
    "three different failing tests: not the same error"

# The app under test logging its own limiter, and "Ran 401 tests".
cb --name tapp -- sh -c "$(emit_err '  console.log
    [limiter] rate limit exceeded for user 42

 FAIL  src/orders.test.js
  ● orders › lists the first page

    Expected length: 20
    Received length: 0
Ran 401 tests in 2.345s
' 1)" 2>/dev/null
is "$? $(verdict tapp)" "1 recoverable test_failure" \
    "an app's rate-limit log line in a failing test run"

# A client's warning on every run is never the verdict.
cb --name tq --agent qwen -- sh -c "$(emit_err 'Ripgrep not available: spawn /x/rg EACCES. Falling back to built-in grep.
Error: 2 tests failed in src/cart.test.ts
' 1)" 2>/dev/null
is "$?" 1 "Qwen's ripgrep fall-back: not a fatal permission error"
like "$(st tq last_error.message)" "2 tests failed" \
    "the message is the error, not the warning"

# A tool result that quotes provider errors is data; the run's own end
# (error_max_turns, its turn cap) is an ordinary failure: turn_limit.
cat >"$SCRATCH/s.jsonl" <<'EOF'
{"type":"system","subtype":"init","session_id":"s1"}
{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"grep -rn api-key test/"}}]},"session_id":"s1"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"test/a.js:3: 401 invalid x-api-key\ntest/b.js:4: Your credit balance is too low\ntest/c.js:9: Claude usage limit reached|1795400000"}]},"session_id":"s1"}
{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":10,"session_id":"s1"}
EOF
cb --name tstream --agent claude -- sh -c "cat '$SCRATCH/s.jsonl'; exit 1" \
    >/dev/null 2>&1
is "$? $(verdict tstream)" "1 recoverable turn_limit" \
    "provider words in a tool result: not fatal auth, billing or a usage limit"

# Gemini CLI's own loop stop exits 0: a loop all the same.
cb --name tg --agent gemini -- sh -c "echo '{\"type\":\"init\",\"session_id\":\"g\"}
{\"type\":\"error\",\"severity\":\"warning\",\"message\":\"Loop detected, stopping execution\"}
{\"type\":\"result\",\"status\":\"success\",\"stats\":{\"input_tokens\":1}}'" \
    >/dev/null 2>&1
is "$? $(verdict tg)" "124 recoverable loop" "Gemini's Loop detected: a loop, 124 as cbexec's own loop stop"
cb --name tq2 --agent qwen -- sh -c "$(emit_err 'Loop detection halted the run (consecutive_identical_tool_calls: the model repeated the same tool call with identical arguments).
' 0)" 2>/dev/null
is "$? $(verdict tq2)" "124 recoverable loop" "Qwen's Loop detection halted: a loop, 124"

# Paging one file: the same tool and file, another offset each time.
{
	echo '{"type":"system","subtype":"init","session_id":"p"}'
	for o in 1 2001 4001 6001 8001 10001; do
		echo '{"type":"assistant","message":{"id":"m'$o'","role":"assistant","content":[{"type":"tool_use","id":"t'$o'","name":"Read","input":{"file_path":"/w/big.txt","offset":'$o',"limit":2000}}]},"session_id":"p"}'
		echo '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t'$o'","type":"tool_result","content":"'$o'\tline '$o'"}]},"session_id":"p"}'
	done
	echo '{"type":"result","subtype":"success","is_error":false,"num_turns":7,"result":"read it","session_id":"p"}'
} >"$SCRATCH/page.jsonl"
cb --name tpage2 --agent claude -- cat "$SCRATCH/page.jsonl" >/dev/null 2>&1
is "$? $(st tpage2 last_error.type)" "0 " "paging a file six pages: no loop"

# A client that prints its result and stays: ended after --result-grace,
# judged by its result.
t0=$(date +%s%N)
cb --name tgrace --agent claude --result-grace 0.2 -- sh -c \
    'tail -n 1 "$0"; exec sleep 30' "$SCRATCH/page.jsonl" >/dev/null 2>err
r=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
is "$r $(st tgrace outcome)" "0 OK" "a result, then no exit: 0, OK"
ok "$([ "$ms" -lt 10000 ] && echo 0 || echo 1)" "ended long before its sleep"
like "$(cat err)" "had not exited 0.2s after its final result" "and says so"

# A structured stream with no final result is no success.
cb --name tnores --agent claude -- sh -c \
    "echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"n\"}'" \
    >/dev/null 2>&1
is "$? $(verdict tnores)" "1 recoverable unknown" \
    "an exit 0 with no final result: recoverable unknown, exit 1"

# Blocked on a permission nobody could grant: no progress.
cb --name tblock --agent claude -- sh -c "echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"I need to run make test\",\"permission_denials\":[{\"tool_name\":\"Bash\",\"tool_use_id\":\"t\",\"tool_input\":{}}]}'" \
    >/dev/null 2>&1
is "$? $(verdict tblock) $(st tblock no_progress_count)" \
    "1 recoverable blocked 1" "blocked on a denied permission, no progress, exit 1"

# Codex prints "Reading additional input from stdin..." on every run whose
# stdin is not a terminal: a run cut short is "timed out", not that.
cb --name tcx --agent codex --timeout 0.3s --kill-after 0.2s -- sh -c \
    'echo "Reading additional input from stdin..." >&2; exec sleep 30' \
    >/dev/null 2>&1
is "$? $(verdict tcx) $(st tcx last_error.message)" \
    "124 timeout timeout timed out" \
    "codex's stdin notice is never the message"

# Claude's own turn cap is a turn limit, as Gemini's exit 53.
cb --name tmt --agent claude -- sh -c "echo '{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":true,\"num_turns\":2,\"errors\":[\"Reached maximum number of turns (1)\"]}'; exit 1" \
    >/dev/null 2>&1
is "$? $(verdict tmt) $(st tmt last_error.message)" \
    "1 recoverable turn_limit Reached maximum number of turns (1)" \
    "claude's error_max_turns: turn_limit"
cb --name tmt2 --agent claude -- sh -c 'echo "Error: Reached max turns (1)"; exit 1' \
    >/dev/null 2>&1
is "$(verdict tmt2)" "recoverable turn_limit" "... in text mode too"

# --record --agent reads the file in the client's format.
echo '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"api_error":"usage_limit_reached","result":"Claude usage limit reached. Your limit will reset at 5pm (UTC)."}' \
    >"$SCRATCH/r.json"
cb --record --agent claude --exit 0 --stdout-file "$SCRATCH/r.json" \
    --name trec >/dev/null 2>&1
is "$(verdict trec)" "transient usage_limit" \
    "--record --agent claude: a usage limit with exit 0"
done_testing
