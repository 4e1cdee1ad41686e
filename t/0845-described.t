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
    "rules\\[0\\]" "a rule without a type"
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
