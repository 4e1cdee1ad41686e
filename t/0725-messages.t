#!/bin/sh
# SPDX-License-Identifier: ISC
# What cbexec says, said right: a run the --budget stopped says so (not
# "timeout timeout: timed out"); a --timeout longer than the --budget is
# warned of; --trip of an OPEN circuit records a trip, not "OPEN -> OPEN";
# the command's and the operator's words (escapes, newlines) stay on
# their one line, escaped, in the log lines, the OPEN block and the
# refusal.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }
D=$CBEXEC_STATE_DIR
ESC=$(printf '\033')

# ---- the budget ---------------------------------------------------------
cb --name b --budget 0.3 --timeout 5 -- sleep 5 2>err; rc=$?
is "$rc" 124 "a run the --budget stops: 124"
like "$(cat err)" 'run 1 was stopped after 0\.[0-9]+s: timeout: the --budget of 300ms ran out$' \
	"... its line says the budget stopped it"
ok "$(grep -q 'timeout timeout' err; [ $? -ne 0 ]; echo $?)" "... never 'timeout timeout'"
like "$("$CBEXEC" --status b)" 'last error: +timeout: the --budget of 300ms ran out \(exit' \
	"--status: the same"
cb --name t --timeout 0.2 -- sleep 5 2>err
like "$(cat err)" 'run 1 timed out after 0\.[0-9]+s: timeout: timed out$' "a --timeout: 'timeout: timed out'"
ok "$(grep -q 'timeout timeout' err; [ $? -ne 0 ]; echo $?)" "... once"
like "$("$CBEXEC" --history t)" 'error +timeout \(exit 143\): timed out' "--history: the class once"

like "$(cb --name w --timeout 10m --budget 5m -- true 2>&1)" \
	'warning: --timeout 10m is longer than --budget 5m: the budget stops the run first \(exit 124\)' \
	"--timeout longer than --budget: a warning"
out=$(cb --name w --budget 1m -- true 2>&1)
ok "$(printf '%s\n' "$out" | grep -q warning; [ $? -ne 0 ]; echo $?)" \
	"... not for the default --timeout (120s) beside a --budget of 1m"
out=$(cb -q --name w --timeout 10m --budget 5m -- true 2>&1)
is "$out" "" "... and not under -q"
out=$(cb --name w --timeout 0 --budget 5m -- true 2>&1)
ok "$(printf '%s\n' "$out" | grep -q warning; [ $? -ne 0 ]; echo $?)" "... nor for --timeout 0 (no limit)"

# ---- --trip of an OPEN circuit ---------------------------------------------
cb -q --name tr -- true
"$CBEXEC" --trip tr --reason first 2>/dev/null
"$CBEXEC" --trip tr --reason again 2>err; rc=$?
is "$rc" 0 "--trip of an OPEN circuit: 0"
out=$("$CBEXEC" --history tr)
ok "$(printf '%s\n' "$out" | grep -q 'OPEN -> OPEN'; [ $? -ne 0 ]; echo $?)" "no 'OPEN -> OPEN' in the history"
like "$(printf '%s\n' "$out" | tail -1)" 'run 1 +trip +tripped by operator: again' "... a trip event"
is "$("$CBEXEC" --history tr --json --last 1 | jget /dev/stdin 0.event):$("$CBEXEC" --history tr --json --last 1 | jget /dev/stdin 0.to_state)" \
	"trip:null" "--history --json: event trip, no to_state"
ok "$(grep -q 'OPEN -> OPEN' err; [ $? -ne 0 ]; echo $?)" "... nor on stderr"
is "$(jget "$D/tr.json" open_reason):$(jget "$D/tr.json" total_opens)" "tripped by operator: again:1" \
	"the new reason, no new opening"

# ---- escapes and newlines ---------------------------------------------------
"$CBEXEC" --trip tr --reason "line one
${ESC}[2Jline two" 2>err
is "$(wc -l < err | tr -d ' ')" 1 "--trip --reason with a newline: one line on stderr"
like "$(cat err)" 'trip: tripped by operator: line one\\n\\x1b\[2Jline two$' "... escaped"
ok "$(grep -q "$ESC" err; [ $? -ne 0 ]; echo $?)" "... no raw escape"
cb --name tr -- true 2>err; rc=$?
is "$rc:$(wc -l < err | tr -d ' ')" "120:1" "the refusal: one line"
like "$(cat err)" 'circuit is OPEN: tripped by operator: line one\\n\\x1b\[2Jline two; not running' \
	"... escaped"
cb --name esc -n 2 --max-consecutive-errors 2 -- sh -c \
	'printf "\033[31mred\033[0m and\033]0;title\007 more\n" >&2; exit 1' 2>err >/dev/null
ok "$(sed -n '/^cbexec\[esc\]/p' err | grep -q "$ESC"; [ $? -ne 0 ]; echo $?)" \
	"the run's log lines: no raw escape from the command"
like "$(grep '^cbexec\[esc\]: run 1' err)" 'recoverable unknown: \\x1b\[31mred\\x1b\[0m and\\x1b\]0;title\\x07 more$' \
	"... the command's line escaped"
like "$(grep '^LAST_ERROR:' err)" '^LAST_ERROR: \\x1b\[31mred' "the OPEN block: the last error escaped"
ok "$(sed -n '/^---CIRCUIT_BREAKER_OPEN/,/^---END/p' err | grep -q "$ESC"; [ $? -ne 0 ]; echo $?)" \
	"... no raw escape in the block"
done_testing
