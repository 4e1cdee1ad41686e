#!/bin/sh
# SPDX-License-Identifier: ISC
# Never write what it will refuse; never report failure after succeeding
# (SPEC §4 rule 7, §6, §7): counters saturate, history is trimmed by size,
# a duplicate key is corruption, a --log line cut short is removed, a reset
# that moved a corrupt file aside says what happened, and --status and
# --history print the command's text with its control bytes escaped and
# the RESET hint quoted for a shell.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }
now=2026-11-22T01:02:03.456Z

# --- Counters saturate.
cat > sat.json <<J
{"version":1,"state":"CLOSED","no_progress_count":2147483647,
 "consecutive_errors":2147483647,"same_error_count":2147483647,
 "iteration":9007199254740992,"total_opens":9007199254740992,
 "errors_total":{"recoverable":9007199254740992}}
J
cb --state sat.json -- false 2>/dev/null; rc=$?
is "$rc" 120 "a counter at its top still trips the circuit"
is "$(jget sat.json no_progress_count)" 2147483647 "no_progress_count stays at INT_MAX"
is "$(jget sat.json consecutive_errors)" 2147483647 "consecutive_errors too"
is "$(jget sat.json iteration)" 9007199254740992 "iteration stays at 2^53"
is "$(jget sat.json total_opens)" 9007199254740992 "total_opens too"
is "$(jget sat.json errors_total.recoverable)" 9007199254740992 "errors_total too"
"$CBEXEC" --status --state sat.json >/dev/null 2>&1
is "$?" 120 "the file written loads again"

# --- History is trimmed by size: the file stays loadable.
python3 - <<'P'
import json
limit = 16 * 1024 * 1024
ev = {"timestamp": "2026-11-22T01:02:03.456Z", "iteration": 1,
      "event": "error", "class": "recoverable", "type": "unknown",
      "exit_code": 1, "progress": False, "reason": "x" * 4000}
def text(evs):
    return json.dumps({"version": 1, "state": "CLOSED", "history": evs},
                      separators=(",", ":"))
one = len(text([ev])) - len(text([]))
events = [dict(ev) for _ in range((limit - 8000) // (one + 1))]
events[-1]["reason"] += "y" * (limit - 200 - len(text(events)))
open("big.json", "w").write(text(events))
P
size=$(stat -c %s big.json)
ok "$([ "$size" -le 16777216 ]; echo $?)" "a state just under the limit ($size bytes)"
cb --state big.json --history-size 100000 --no-progress-threshold 1000 \
    --max-consecutive-errors 1000 -- sh -c 'echo "$(head -c 3000 /dev/zero | tr "\\0" z)" >&2; exit 1' 2>/dev/null
is "$?" 1 "a run on it"
size=$(stat -c %s big.json)
ok "$([ "$size" -le 16777216 ]; echo $?)" "the file written is within the limit ($size bytes)"
"$CBEXEC" --status --state big.json >/dev/null 2>&1
is "$?" 0 "... and loads again"
ok "$(tail -c 20000 big.json | grep -q zzz; echo $?)" "the newest event is kept"
rm -f big.json

# --- A duplicate key is corruption.
printf '{"version":1,"state":"CLOSED","state":"OPEN"}\n' > dup.json
err=$(cb --state dup.json -- true 2>&1); is "$?" 125 "a key given twice: 125"
like "$err" "dup.json: corrupt state file: key 'state' given twice" "... named"
printf '{"version":1,"state":"CLOSED","history":[{"timestamp":"%s","event":"reset","reason":"a","reason":"b"}]}\n' "$now" > dup2.json
cb --state dup2.json -- true 2>/dev/null; is "$?" 125 "... in a history event too"

# --- A --log line cut short by a full disk is removed.
shim=
if shim_why faultshim >/dev/null; then
	shim=$T_DIR/faultshim.so
fi
if [ -n "$shim" ]; then
	echo '{"event":"earlier"}' > ev.log
	err=$(LD_PRELOAD=$shim FAULT_OP=short FAULT_ON_PATH=ev.log \
	    "$CBEXEC" --no-prompt --progress exit --name lg --log ev.log -- true 2>&1)
	is "$?" 0 "a full disk under --log: the run goes on"
	like "$err" "warning: --log ev.log: No space left on device; the partial line was removed" \
	    "... says so"
	is "$(cat ev.log)" '{"event":"earlier"}' "... and the log holds whole lines only"
	# A reset that moved the corrupt file aside, then could not write.
	echo 'not json' > rs.json
	err=$(LD_PRELOAD=$shim FAULT_OP=write FAULT_ON_PATH=rs.json.tmp \
	    "$CBEXEC" --reset-circuit --state rs.json 2>&1)
	is "$?" 0 "reset: moved aside, then the write failed: the circuit is reset all the same"
	like "$err" "moved it aside to rs\.json\.corrupt-" "... says where the file went"
	like "$err" "write failed: No space left on device" "... says the write failed"
	like "$err" "the circuit is reset all the same" "... and what that means"
	ok "$(test -e rs.json && echo 1 || echo 0)" "... no state file"
	"$CBEXEC" --status --state rs.json >/dev/null 2>&1
	is "$?" 0 "... so the circuit is CLOSED"
else
	for i in 1 2 3 4 5 6 7 8 9; do skip "no fault shim (ASan or no ELF)"; done
fi

# --- --status and --history escape the command's text.
esc=$(printf 'boom\033[2J\rstate: CLOSED\302\233x')
python3 - "$esc" <<'P'
import json, sys
msg = sys.argv[1]
json.dump({"version": 1, "state": "OPEN", "open_reason": "Same error: " + msg,
           "opened_at": "2026-11-22T01:02:03.456Z",
           "last_error": {"class": "recoverable", "type": "unknown",
                          "message": msg, "exit_code": 1},
           "history": [{"timestamp": "2026-11-22T01:02:03.456Z",
                        "iteration": 1, "event": "error", "class": "recoverable",
                        "type": "unknown", "reason": msg, "exit_code": 1}]},
          open("my dir.json", "w"))
P
out=$("$CBEXEC" --status --state "my dir.json")
ok "$(printf '%s' "$out" | grep -q "$(printf '\033')"; [ $? -ne 0 ]; echo $?)" "--status: no raw ESC byte"
ok "$(printf '%s' "$out" | grep -q "$(printf '\r')"; [ $? -ne 0 ]; echo $?)" "--status: no raw CR"
like "$out" 'boom\\x1b\[2J\\x0dstate: CLOSED\\u009bx' "--status: the bytes escaped"
like "$out" "reset: +cbexec --reset-circuit --state 'my dir.json'" "--status: the RESET hint is shell-quoted"
out=$("$CBEXEC" --history --state "my dir.json")
ok "$(printf '%s' "$out" | grep -q "$(printf '\033')"; [ $? -ne 0 ]; echo $?)" "--history: no raw ESC byte"
like "$out" 'boom\\x1b\[2J\\x0dstate' "--history: the bytes escaped"
"$CBEXEC" --no-prompt --progress exit --state "my dir.json" -- true 2>err.txt
like "$(cat err.txt)" "Reset: cbexec --reset-circuit --state 'my dir.json'" "the refusal's hint is quoted too"
hint=$(sed -n 's/.*Reset: cbexec //p' err.txt)
eval "\"\$CBEXEC\" $hint" 2>/dev/null
is "$(jget "my dir.json" state)" CLOSED "... and works pasted into a shell"
done_testing
