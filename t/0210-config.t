#!/bin/sh
# SPDX-License-Identifier: ISC
# The config file (SPEC §6): option defaults, custom phases, user rules,
# and errors that name the key.
. "$(dirname "$0")/lib.sh"
# c.json is named with --config when it exists (a work tree's config is
# never read unasked: t/0600-trust.t).
cb() {
	if [ -f c.json ]; then set -- --config c.json "$@"; fi
	"$CBEXEC" -q --no-prompt --progress exit "$@"
}

echo '{"no_progres_threshold": 4}' > c.json
err=$(cb -- true 2>&1); is "$?" 125 "unknown key: 125"
like "$err" "no_progres_threshold" "unknown key: named"
echo '{"name": "other"}' > c.json
err=$(cb -- true 2>&1); is "$?" 125 "a key that picks the circuit: 125"
like "$err" "key 'name': cannot be set in a config file" "a key that picks the circuit: says why"
echo '{"follow_symlinks": false}' > c.json
err=$(cb -- true 2>&1); is "$?" 125 "a key a config may not set, even false: 125"
# A key given twice: which one counts is not JSON's to say (RFC 8259),
# so neither is taken, as a state file's is not.
echo '{"timeout": "5s", "budget": "1m", "timeout": "0"}' > c.json
err=$(cb -- true 2>&1); is "$?" 125 "a key given twice: 125"
is "$err" "cbexec: c.json: key 'timeout' given twice" "a key given twice: one line naming it"
echo '{"timeout": "5 minutes"}' > c.json
err=$(cb -- true 2>&1); is "$?" 125 "bad value: 125"
like "$err" "timeout" "bad value: names the key"
echo '{"rules": [{"match": "(unclosed", "type": "x"}]}' > c.json
err=$(cb -- true 2>&1); is "$?" 125 "bad regex: 125"
like "$err" "rules\[0\]" "bad regex: names the rule"
# regcomp would copy these repeats into an automaton of exponential size.
for re in 'x+++++++++++++++++++++++++++++++' '((a{0,255}){0,255}){0,255}' \
    'z*++++++++++++' 'u)))*++++++++++++'; do
	printf '{"rules": [{"match": "%s", "type": "x"}]}' "$re" > c.json
	err=$(cb -- true 2>&1); is "$?" 125 "pathological regex $re: 125"
	like "$err" "too many nested or stacked repetitions" "pathological regex: says why"
done
echo '{"timeout": ' > c.json
err=$(cb -- true 2>&1); is "$?" 125 "invalid JSON: 125"
like "$err" "c\.json" "invalid JSON: names the file"
echo '{"state": "x.json"}' > c.json
cb -- true 2>/dev/null; is "$?" 125 "a config may not pick the circuit"
rm c.json
err=$(cb --config missing.json -- true 2>&1); is "$?" 125 "--config missing file: 125"
like "$err" "missing.json" "--config missing file: named"

# Defaults from the config; the command line wins.
echo '{"timeout": "0.2s", "loop": false}' > c.json
cb -- sleep 5; is "$?" 124 "config timeout applies"
cb -t 0 -- true; is "$?" 0 "command line beats the config"
rm c.json

# A user rule turns an exit-0 "success" into an error.
cat > rules.json <<'J'
{"rules": [
  {"match": "\"is_error\": *true", "stream": "stdout", "exit": [0], "class": "recoverable", "type": "agent_error"},
  {"match": "invalid api key", "class": "fatal", "type": "bad_credentials"}
]}
J
cb --config rules.json --state r1.json -- echo '{"is_error": true}' >/dev/null
is "$?" 1 "rule on exit 0: a failure never exits 0, 1 (SPEC §11)"
is "$(jget r1.json last_error.type)" agent_error "rule on exit 0: counted as an error"
is "$(jget r1.json consecutive_errors)" 1 "rule on exit 0: consecutive_errors 1"
cb --config rules.json --state r2.json -- echo '{"is_error": false, "result": "error: none"}' >/dev/null
is "$(jget r2.json consecutive_errors)" 0 "stdout false positive: still a success"
cb --config rules.json --state r3.json -- sh -c 'echo "Error: Invalid API key" >&2; exit 1' 2>/dev/null
is "$?" 122 "user fatal rule: 122"
is "$(jget r3.json open_reason)" "fatal: bad_credentials" "user fatal rule: reason"
cb --state r4.json -- sh -c 'echo "{\"is_error\": true}"' >/dev/null
is "$(jget r4.json consecutive_errors)" 0 "without the rule, exit 0 is success"

# A custom phase with its own thresholds and metric direction.
cat > phases.json <<'J'
{"phases": {"LINT": {"no_progress": 2, "same_error": 4, "progress": {"lint_errors": "down"}}}}
J
echo 10 > lint
P="--config phases.json --state p.json --phase lint --progress cmd --progress-cmd 'echo lint_errors=\$(cat lint)'"
eval cb $P -- true
eval cb $P -- sh -c "'echo 7 > lint'"
is "$(jget p.json no_progress_count)" 0 "custom phase: lint_errors down is progress"
eval cb $P -- true
eval cb $P -- true; is "$?" 120 "custom phase: no_progress 2 trips"
is "$(jget p.json phase)" LINT "custom phase stored"
done_testing
