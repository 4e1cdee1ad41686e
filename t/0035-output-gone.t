#!/bin/sh
# SPDX-License-Identifier: ISC
# When cbexec's own stdout goes: a reader that went away (`| head`) ends a
# loop as it ends `yes`, and the runs that died of it count for nothing;
# a write error (a full disk: /dev/full) is cbexec's failure, said once,
# exit 125 at the end, the command running on unharmed.
. "$(dirname "$0")/lib.sh"

C() { "$CBEXEC" --no-prompt "$@"; }
st() { jget "$CBEXEC_STATE_DIR/$1.json" "$2"; }

# --- A loop under head: one run, then the end.
{ C --loop --budget 20 --name h -- sh -c 'seq 100000'; echo $? > h.rc; } 2> h.err | head -1 > h.out
is "$(cat h.out)" 1 "--loop | head -1: head has its line"
is "$(cat h.rc)" 141 "the loop ends with the run's own status (SIGPIPE: 141), as yes | head"
is "$(st h iteration)" 1 "... after that one run"
is "$(st h state)" CLOSED "... the circuit stays CLOSED"
is "$(st h consecutive_errors)" 0 "... the run is no error"
is "$(st h history.0.reason)" "ignored: its output was closed downstream" \
    "... and its history says why"
like "$(cat h.err)" "run 1 exited 141 .*: ignored \(its output was closed downstream\)" \
    "... as the log line does"

# The same with -n and the command writing straight to our stdout.
{ C -n 5 --no-capture-stdout --name hn -- sh -c 'seq 100000'; echo $? > hn.rc; } 2>/dev/null | head -1 >/dev/null
is "$(cat hn.rc)/$(st hn iteration)/$(st hn consecutive_errors)" 141/1/0 \
    "--no-capture-stdout -n 5 | head: one run, no error, 141"

# head gone between two runs: the next run finds nobody, the loop ends.
{ C --loop --budget 20 --delay 0.05 --name hb -- sh -c 'echo x'; echo $? > hb.rc; } 2>/dev/null | head -2 >/dev/null
n=$(st hb iteration)
ok "$([ "$n" -ge 2 ] && [ "$n" -le 4 ]; echo $?)" "head -2 between runs: the loop ends at once ($n runs)"
is "$(st hb state)/$(st hb consecutive_errors)" CLOSED/0 "... nothing counted against the command"

# EPIPE is the reader going away, not a write error.
{ C -q --name ep -- seq 100000; echo $? > ep.rc; } 2> ep.err | head -1 >/dev/null
is "$(cat ep.rc)" 141 "cbexec -- seq | head: 141, not 125"
ok "$(grep -q 'write error' ep.err; [ $? -ne 0 ]; echo $?)" "... and no write error is said"

# --- A write error on our stdout: said once, 125, the command unharmed.
err=$(C -q --name full -- sh -c 'seq 100000 && echo done > full.done' 2>&1 >/dev/full)
is "$?" 125 "stdout on /dev/full: 125"
like "$err" "^cbexec: write error on standard output: No space left on device" "... says so"
is "$(printf '%s\n' "$err" | grep -c 'write error')" 1 "... once"
ok "$(test -e full.done; echo $?)" "the command ran to its end (not killed by our error)"
is "$(st full outcome)/$(st full consecutive_errors)" OK/0 "... and its run is a success"
err=$(C -q -n 3 --name full3 -- echo hello 2>&1 >/dev/full)
is "$?" 125 "-n 3 on /dev/full: 125 at the end"
is "$(printf '%s\n' "$err" | grep -c 'write error')" 1 "... said once for the three runs"
is "$(st full3 iteration)" 3 "... all three ran"
# The breaker's own statuses keep their meaning.
C -q --trip --create --name fo >/dev/null 2>&1
C -q --name fo -- echo x >/dev/full 2>/dev/null
is "$?" 120 "an OPEN circuit still exits 120"
# The same on stderr.
err=$(C -q --name fe -- sh -c 'echo oops >&2' 2>/dev/full; echo "rc=$?")
is "$err" "rc=125" "stderr on /dev/full: 125"

done_testing
