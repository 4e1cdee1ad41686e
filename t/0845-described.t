#!/bin/sh
# SPDX-License-Identifier: ISC
# A client cbexec does not know, described in the config (SPEC §10,
# "agents"): its verdict, usage, session, tool calls and rows are read as
# for the nine it knows; a bad description is cbexec's own error (125);
# only the operator's config (or an approved work tree's) describes one.
. "$(dirname "$0")/lib.sh"

st() { jget "$CBEXEC_STATE_DIR/$1.json" "$2"; }
verdict() { echo "$(st "$1" last_error.class) $(st "$1" last_error.type)"; }

bin="$SCRATCH/bin"
mkdir -p "$bin"
# grok: prints the lines of $SCRIPT (one JSON event each), exits $CODE
cat >"$bin/grok" <<'SH'
#!/bin/sh
cat "$SCRIPT"
exit "${CODE:-0}"
SH
chmod +x "$bin/grok"
cp "$bin/grok" "$bin/grok-wrapper"
PATH="$bin:$PATH"
export PATH

cfg="$SCRATCH/cfg.json"
cat >"$cfg" <<'JSON'
{ "agents": [ {
  "name": "grok", "commands": ["grok"], "format": "jsonl",
  "result": "result", "is_error": "is_error",
  "error": "error.message", "status": "error.status",
  "session": "session_id",
  "usage": { "input": "usage.input_tokens", "output": "usage.output_tokens",
             "cost": "usage.cost_usd" },
  "tool": { "name": "tool.name", "input": "tool.args", "id": "tool.id" },
  "rules": [ { "match": "grok quota exhausted", "type": "usage_limit",
               "class": "transient" } ] } ] }
JSON
cb() { "$CBEXEC" --no-prompt --config "$cfg" "$@"; }
# script NAME LINE...: the events grok prints
script() { f="$SCRATCH/$1.jsonl"; shift; printf '%s\n' "$@" >"$f"; echo "$f"; }

ok_run=$(script ok '{"type":"start","session_id":"gs-123"}' \
    '{"type":"tool","tool":{"id":"1","name":"read","args":{"path":"a.c"}}}' \
    '{"type":"done","result":"All done.","is_error":false,"usage":{"input_tokens":1200,"output_tokens":300,"cost_usd":0.42}}')
SCRIPT=$ok_run cb --name g1 -- grok -p hi >/dev/null 2>&1
is "$? $(st g1 outcome) $(st g1 spend.agent)" "0 OK grok" \
    "a described client's run: success, read as that client"
is "$(st g1 spend.cost_usd) $(st g1 spend.input_tokens) $(st g1 spend.output_tokens)" \
    "0.42 1200 300" "its usage, from the paths the config gives"
is "$(st g1 session_id)" gs-123 "its session id"

# Its own words, as for a known client: an error event with an HTTP
# status, though it exits 0.
SCRIPT=$(script e401 '{"type":"error","error":{"message":"invalid api key","status":401}}') \
    cb --name g2 -- grok >/dev/null 2>&1
is "$? $(verdict g2) $(st g2 state)" "122 fatal auth OPEN" \
    "an error event with status 401 and exit 0: fatal auth"
SCRIPT=$(script fail '{"type":"done","result":"I could not finish","is_error":true}') \
    CODE=0 cb --name g2b -- grok >/dev/null 2>&1
is "$(verdict g2b) $(st g2b last_error.message)" \
    "recoverable unknown I could not finish" \
    "is_error true: the run failed, its result the message"
# A result that fails and carries its error: the error says what failed
# (the result is what the answer got to), and the rows type it.
SCRIPT=$(script fail401 '{"type":"done","result":"partial answer","is_error":true,"error":{"message":"401 Incorrect API key provided","status":401}}') \
    CODE=0 cb --name g2c -- grok >/dev/null 2>&1
is "$? $(verdict g2c) $(st g2c last_error.message)" \
    "122 fatal auth 401 Incorrect API key provided" \
    "is_error true with an error in the same event: the error, typed"

# The operator's own row.
SCRIPT=$(script lim '{"type":"error","error":{"message":"grok quota exhausted"}}') \
    cb --name g3 -- grok >/dev/null 2>&1
is "$? $(verdict g3)" "120 transient usage_limit" "the description's own row"

# The loop guard sees its tool calls.
SCRIPT=$(script loop \
    '{"type":"tool","tool":{"id":"1","name":"read","args":{"path":"same.c"}}}' \
    '{"type":"tool","tool":{"id":"2","name":"read","args":{"path":"same.c"}}}' \
    '{"type":"tool","tool":{"id":"3","name":"read","args":{"path":"same.c"}}}' \
    '{"type":"tool","tool":{"id":"4","name":"read","args":{"path":"same.c"}}}' \
    '{"type":"tool","tool":{"id":"5","name":"read","args":{"path":"same.c"}}}' \
    '{"type":"tool","tool":{"id":"6","name":"read","args":{"path":"same.c"}}}') \
    cb --name g4 -- grok >/dev/null 2>&1
is "$? $(verdict g4)" "124 recoverable loop" "five identical tool calls: a loop"
SCRIPT=$(script pages \
    '{"type":"tool","tool":{"id":"1","name":"read","args":{"path":"big.c","offset":1}}}' \
    '{"type":"tool","tool":{"id":"2","name":"read","args":{"path":"big.c","offset":2001}}}' \
    '{"type":"tool","tool":{"id":"3","name":"read","args":{"path":"big.c","offset":4001}}}' \
    '{"type":"tool","tool":{"id":"4","name":"read","args":{"path":"big.c","offset":6001}}}' \
    '{"type":"tool","tool":{"id":"5","name":"read","args":{"path":"big.c","offset":8001}}}' \
    '{"type":"tool","tool":{"id":"6","name":"read","args":{"path":"big.c","offset":10001}}}' \
    '{"type":"done","result":"read it all","is_error":false}') \
    cb --name g4b -- grok >/dev/null 2>&1
is "$? $(st g4b outcome)" "0 OK" "paging through a file: not a loop"

# Spend caps; --agent names it behind a command it does not know.
SCRIPT=$ok_run cb --name g5 --max-cost 0.10 -- grok >/dev/null 2>&1
is "$? $(st g5 last_error.type)" "124 max_cost" "--max-cost stops it"
SCRIPT=$ok_run cb --name g6 -- grok-wrapper >/dev/null 2>&1
is "$(st g6 spend.cost_usd)" "null" "another command name: not read as grok"
SCRIPT=$ok_run cb --name g6 --agent grok -- grok-wrapper >/dev/null 2>&1
is "$(st g6 spend.cost_usd)" "0.42" "--agent grok: read as grok"

# A session id that is not opaque is dropped, as for any client.
SCRIPT=$(script sess '{"type":"start","session_id":"--dangerously-skip-permissions"}' \
    '{"type":"done","result":"ok","is_error":false}') \
    cb --name g7 -- grok >/dev/null 2>&1
is "$(st g7 session_id)" "null" "a session id that is an option: dropped"

# format text: no JSON read, the exit status and the rows decide; the rows
# skip a test runner's lines, which are the work's.
cat >"$SCRATCH/text.json" <<'JSON'
{ "agents": [ { "name": "aider", "commands": ["aider"], "format": "text",
  "rules": [ { "match": "litellm\\.AuthenticationError", "type": "auth",
               "class": "fatal" } ] } ] }
JSON
printf '#!/bin/sh\necho "$MSG" >&2\nexit 1\n' >"$bin/aider"
chmod +x "$bin/aider"
MSG='litellm.AuthenticationError: AnthropicException - invalid x-api-key' \
    "$CBEXEC" --no-prompt --config "$SCRATCH/text.json" --name a1 -- aider \
    >/dev/null 2>&1
is "$? $(verdict a1)" "122 fatal auth" "format text: the description's row"
MSG='FAIL tests/test_auth.py::test_bad_key - litellm.AuthenticationError' \
    "$CBEXEC" --no-prompt --config "$SCRATCH/text.json" --name a2 -- aider \
    >/dev/null 2>&1
is "$? $(st a2 state)" "1 CLOSED" "a test runner's line naming it: not the client's"

# aider exits 0 after its own error with --message: the rows still see it
printf '#!/bin/sh\necho "$MSG"\nexit 0\n' >"$bin/aider"
MSG='litellm.AuthenticationError: AnthropicException - invalid x-api-key' \
    "$CBEXEC" --no-prompt --config "$SCRATCH/text.json" --name a3 -- aider \
    >/dev/null 2>&1
is "$? $(verdict a3)" "122 fatal auth" "format text, exit 0: the row decides"
MSG='ok 3 - handles litellm.AuthenticationError' \
    "$CBEXEC" --no-prompt --config "$SCRATCH/text.json" --name a4 -- aider \
    >/dev/null 2>&1
is "$? $(st a4 errors_total.success)" "0 1" "a test's title naming it: a success"

# format json: one object, over many lines.
cat >"$SCRATCH/json.json" <<'JSON'
{ "agents": [ { "name": "grokj", "commands": ["grokj"], "format": "json",
  "result": "answer.text", "is_error": "answer.failed" } ] }
JSON
printf '#!/bin/sh\nprintf "{\\n  \\"answer\\": {\\n    \\"text\\": \\"no luck\\",\\n    \\"failed\\": true\\n  }\\n}\\n"\n' >"$bin/grokj"
chmod +x "$bin/grokj"
"$CBEXEC" --no-prompt --config "$SCRATCH/json.json" --name j1 -- grokj \
    >/dev/null 2>&1
is "$(st j1 errors_total.recoverable) $(st j1 last_error.message)" "1 no luck" \
    "format json: nested paths over a multi-line object"

# Picking a fact by a value, arrays, string flags, rows over the client's
# own values whatever it exited (SPEC §10): Grok CLI prints every message
# of the conversation and answers an API error with exit 0.
sed -n '/^```json$/,/^```$/p' "$TOP/t/agents/docs/grok.md" | sed '1d;$d' \
    >"$SCRATCH/grok.json"
R=$TOP/t/corpus/recorded/grok-1.0.1
gcb() { "$CBEXEC" --no-prompt --config "$SCRATCH/grok.json" --agent grok \
    --progress status "$@"; }
gcb --name gr1 -- sh "$TOP/t/corpus/replay" "$R/401-json" >/dev/null 2>&1
is "$? $(verdict gr1)" "122 fatal auth" \
    "grok: 'Sorry, I encountered an error: ... 401', exit 0: fatal auth"
gcb --name gr2 -- sh "$TOP/t/corpus/replay" "$R/429-json" >/dev/null 2>&1
is "$? $(verdict gr2)" "1 transient rate_limited" \
    "grok: a 429 in its answer, exit 0: transient, exit 1"
gcb --name gr3 -- sh "$TOP/t/corpus/replay" "$R/success-json" >/dev/null 2>&1
is "$? $(st gr3 last_progress_iteration)" "0 1" \
    "grok: its answer's status block is read (progress)"
gcb --name gr4 --max-repeat-calls 5 -- sh "$TOP/t/corpus/replay" \
    "$R/tools_loop-json" >/dev/null 2>&1
is "$? $(verdict gr4)" "124 recoverable loop" \
    "grok: tool_calls[] of six messages: the same call, a loop"
# the user's prompt and a tool's output are not its words
SCRIPT=$(script gwords \
    '{"role":"user","content":"Fix it.\n---CBEXEC_STATUS---\nSTATUS: COMPLETE\n---END_CBEXEC_STATUS---"}' \
    '{"role":"assistant","content":"Looking.","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"cat log\"}"}}]}' \
    '{"role":"tool","tool_call_id":"c1","content":"Sorry, I encountered an error: 401 Unauthorized"}' \
    '{"role":"assistant","content":"Done for now.\n---CBEXEC_STATUS---\nSTATUS: IN_PROGRESS\n---END_CBEXEC_STATUS---"}') \
    "$CBEXEC" --no-prompt --config "$SCRATCH/grok.json" --name gr5 -- grok -p x \
    >/dev/null 2>&1
is "$? $(st gr5 complete) $(st gr5 errors_total.success)" "0 false 1" \
    "grok: a user's status block and a tool's error text are not its words"
# five identical calls in one message's tool_calls: five calls
call='{"id":"c","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}'
SCRIPT=$(script gburst "{\"role\":\"assistant\",\"content\":\"x\",\"tool_calls\":[$call,$call,$call,$call,$call]}") \
    "$CBEXEC" --no-prompt --config "$SCRATCH/grok.json" --name gr6 \
    --max-repeat-calls 5 -- grok -p x >/dev/null 2>&1
is "$? $(verdict gr6)" "124 recoverable loop" "a[].b: each element is a call"

# json, the whole conversation in one object: messages[role=assistant]
cat >"$SCRATCH/conv.json" <<'JSON'
{ "agents": [ { "name": "conv", "commands": ["conv"], "format": "json",
  "result": "messages[role=assistant].content",
  "is_error": { "path": "finish_reason", "equals": ["error", "failed"] },
  "rules": [ { "match": "^I hit an error" } ] } ] }
JSON
printf '#!/bin/sh
cat "$SCRIPT"
exit "${CODE:-0}"
' >"$bin/conv"
chmod +x "$bin/conv"
ccb() { "$CBEXEC" --no-prompt --config "$SCRATCH/conv.json" "$@"; }
SCRIPT=$(script conv1 '{"messages":[' \
    '{"role":"user","content":"Go on.\n---CBEXEC_STATUS---\nSTATUS: COMPLETE\n---END_CBEXEC_STATUS---"},' \
    '{"role":"assistant","content":"I hit an error: 429 Too Many Requests"},' \
    '{"role":"tool","content":"All good"}],"finish_reason":"stop"}') \
    ccb --name cv1 -- conv >/dev/null 2>&1
is "$? $(verdict cv1) $(st cv1 complete)" "1 transient rate_limited false" \
    "messages[role=assistant].content: the assistant's, not the user's or a tool's"
SCRIPT=$(script conv2 '{"messages":[' \
    '{"role":"assistant","content":"step one"},' \
    '{"role":"tool","content":"I hit an error: 401"},' \
    '{"role":"assistant","content":"All done.\n---CBEXEC_STATUS---\nSTATUS: COMPLETE\n---END_CBEXEC_STATUS---"}],' \
    '"finish_reason":"stop"}') ccb --name cv2 --exit-codes complete=10 -- conv \
    >/dev/null 2>&1
is "$? $(st cv2 complete)" "10 true" "the last assistant message is the answer"
SCRIPT=$(script conv3 '{"messages":[{"role":"assistant","content":"gave up"}],' \
    '"finish_reason":"failed"}') CODE=0 ccb --name cv3 -- conv >/dev/null 2>&1
is "$? $(st cv3 last_error.message)" "1 gave up" \
    "is_error {path, equals}: a string flag fails the run"
SCRIPT=$(script conv4 '{"messages":[{"role":"assistant","content":"ok"}],' \
    '"finish_reason":"stop"}') CODE=0 ccb --name cv4 -- conv >/dev/null 2>&1
is "$? $(st cv4 outcome)" "0 OK" "... and another value does not"

# Cline CLI: a string error flag (finishReason), its events wrapped and
# picked by event.type (t/agents/docs/cline.md), against its recordings.
sed -n '/^```json$/,/^```$/p' "$TOP/t/agents/docs/cline.md" | sed '1d;$d' \
    >"$SCRATCH/cline.json"
R=$TOP/t/corpus/recorded/cline-3.0.65
lcb() { "$CBEXEC" --no-prompt --config "$SCRATCH/cline.json" --agent cline \
    --progress status "$@"; }
lcb --name cl1 -- sh "$TOP/t/corpus/replay" "$R/401-json" >/dev/null 2>&1
is "$? $(verdict cl1)" "122 fatal auth" "cline: finishReason error, invalid x-api-key: fatal auth"
lcb --name cl2 -- sh "$TOP/t/corpus/replay" "$R/529-json" >/dev/null 2>&1
is "$? $(verdict cl2) $(st cl2 last_error.message)" "1 transient overloaded Overloaded" \
    "cline: its error event's message, typed by the built-in rows"
lcb --name cl3 -- sh "$TOP/t/corpus/replay" "$R/tools-json" >/dev/null 2>&1
is "$? $(st cl3 last_progress_iteration) $(st cl3 session_id)" \
    "0 1 $(grep -o '"taskId":"[^"]*' "$R/tools-json.stdout" | head -1 | cut -d'"' -f4)" \
    "cline: its answer's status block, its session (taskId)"
is "$(st cl3 spend.cost_usd | cut -c1-5) $(st cl3 spend.input_tokens)" "0.033 22800" \
    "cline: its run_result's usage"
lcb --name cl4 -- sh "$TOP/t/corpus/replay" "$R/tools_loop-json" >/dev/null 2>&1
is "$? $(verdict cl4)" "124 recoverable loop" \
    "cline's own loop stop (finishReason aborted, exit 0): a loop, 124"

# A bad description is cbexec's own error, named.
bad() {	# bad JSON ERE DESC
	printf '%s\n' "$1" >"$SCRATCH/bad.json"
	out=$("$CBEXEC" --config "$SCRATCH/bad.json" --name b -- true 2>&1)
	r=$?
	is "$r $(printf '%s\n' "$out" | wc -l | tr -d ' ')" "125 1" "$3: 125, one line"
	like "$out" "$2" "$3: named"
}
bad '{"agents":[{"name":"x","commands":["x"],"colour":"red"}]}' \
    "agents\\[0\\]: unknown key or bad value 'colour'" "an unknown key"
bad '{"agents":[{"name":"x","commands":["x"],"format":"yaml"}]}' \
    "agents\\[0\\]\\.format: expected jsonl, json or text" "a bad format"
bad '{"agents":[{"name":"claude","commands":["x"]}]}' \
    "'claude' is a client cbexec knows" "a known client's name"
bad '{"agents":[{"name":"x"}]}' "needs \"commands\"" "no commands"
bad '{"agents":[{"name":"x","commands":["/usr/bin/x"]}]}' \
    "command names \\(no '/'\\)" "a path as a command"
bad '{"agents":[{"name":"x","commands":["x"],"result":"a..b"}]}' \
    "agents\\[0\\]\\.result: expected a JSON path" "a bad path"
bad '{"agents":[{"name":"x","commands":["x"],"rules":[{"match":"("}]}]}' \
    "rules\\[0\\]: invalid regular expression" \
    "a row with no type (a failure's mark) that does not compile"
bad '{"agents":[{"name":"x","commands":["x"],"result":{"path":"c","equals":"y"}}]}' \
    "only is_error takes equals" "equals on a fact that is no flag"
bad '{"agents":[{"name":"x","commands":["x"],"result":{"path":"c","when":{"path":"r"}}}]}' \
    "result.when: needs \"path\" and \"equals\"" "a when with nothing to equal"
bad '{"agents":[{"name":"x","commands":["x"],"result":"a[k=v][j=w].b"}]}' \
    "result: expected a JSON path" "two picks in one path"
bad '{"agents":[{"name":"x","commands":["x"],"is_error":{"path":"f","equals":[]}}]}' \
    "is_error: expected a string or an array of 1 to 8 strings" "an empty equals"
bad '{"agents":[{"name":"x","commands":["x"],"rules":[{"match":"(","type":"t"}]}]}' \
    "agents\\[0\\]: rules\\[0\\]: rule \"\\(\"" "a rule that does not compile"
bad '{"agents":{"name":"x"}}' "'agents': expected an array" "not an array"
out=$("$CBEXEC" --agent grok -- true 2>&1)
is "$?" 125 "--agent of a client no config describes: 125"
like "$out" "unknown agent 'grok' for --agent \\(claude, .*kilo or none\\)" \
    "named, with the clients it knows"

# A work tree's config describes nothing until it is approved.
mkdir -p "$SCRATCH/wt/.cbexec"
cp "$cfg" "$SCRATCH/wt/.cbexec/config.json"
out=$(cd "$SCRATCH/wt" && XDG_CONFIG_HOME="$SCRATCH/xdg" \
    "$CBEXEC" --agent grok -- true 2>&1)
is "$?" 125 "an unapproved work tree's description: not read"
like "$out" "not approved" "said"

# README's two descriptions load, and its aider example is what it says.
readme="$TOP/README.md"
awk '/^```json$/ { j = 1; b = ""; next } j && /^```$/ { j = 0;
    if (b ~ /"agents"/) { n++; f = sprintf("%s/readme%d.json", dir, n);
    printf "%s", b > f; close(f) } next } j { b = b $0 "\n" }' \
    dir="$SCRATCH" "$readme"
for n in 1 2; do
	"$CBEXEC" --config "$SCRATCH/readme$n.json" --name "rd$n" -- true \
	    >/dev/null 2>&1
	is "$?" 0 "README's description $n loads"
done
MSG='litellm.AuthenticationError: AnthropicException - invalid x-api-key' \
    "$CBEXEC" --no-prompt --config "$SCRATCH/readme1.json" --name fix -- \
    aider --yes --message "fix the failing test" >/dev/null 2>&1
is "$? $(verdict fix)" "122 fatal auth" "README's aider example: 122"

done_testing
