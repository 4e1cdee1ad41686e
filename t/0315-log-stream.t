#!/bin/sh
# SPDX-License-Identifier: ISC
# --log - (and /dev/stdout, /dev/stderr): the JSON events go to cbexec's
# own stdout (stderr), whatever it is -- a pipe, /dev/null, a terminal --
# as a container's log wants them, not through the regular-file checks a
# --log FILE gets.  The stream is shared with the command's relayed
# output: every event is a whole line of its own, after the command's
# output of that run, and a line the command left unfinished is ended
# first.  A reader that goes away is said once, never a hang.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }
cbq() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }
# every line of $1 that starts with {"v": valid JSON, one object
json_lines() {
	perl -MJSON::PP -ne 'next unless /^\{"v":/; $n++; eval { decode_json($_) } or $bad++;
		END { print $bad ? "bad $bad" : "ok " . ($n || 0) }' "$1"
}

# --log - into a pipe: the command's output and the events, each whole.
cb --name p --log - -n 2 -- sh -c 'echo "line one"; printf "no newline"; exit 1' \
    2>err | cat > out
is "$?" 0 "--log - into a pipe (as a container's stdout is): the pipeline runs"
is "$(json_lines out)" "ok 3" "three events (two runs, a transition), every one valid JSON on a line of its own"
is "$(grep -v '^{"v":' out)" "line one
no newline
line one
no newline" "the command's output is all there, its unfinished line ended before the event"
like "$(sed -n 3p out)" '^\{"v":2,"timestamp":"[^"]+","circuit":"p","event":"run","iteration":1,' \
    "the run's event right after its output"
is "$(grep -c '"event":' err)" 0 "nothing of the log on stderr"

# /dev/stdout too, even when it is a pipe (no "not a regular file").
cbq --name q --log /dev/stdout -- true 2>err | cat > out
is "$?:$(json_lines out)" "0:ok 1" "--log /dev/stdout into a pipe: the event on stdout"
is "$(cat err)" "" "... no complaint"
# /dev/stderr: beside cbexec's own lines, after the command's stderr.
cb --name r --log /dev/stderr -- sh -c 'printf "oops" >&2; exit 2' >out 2>err
is "$?" 2 "--log /dev/stderr: the run's status"
is "$(json_lines err)" "ok 1" "--log /dev/stderr: the event on stderr"
is "$(sed -n 1p err)" "oops" "... the command's unfinished line ended first"
like "$(sed -n 2p err)" '^cbexec\[r\]: run 1 exited 2 ' "... then cbexec's line"
is "$(cat out)" "" "... nothing on stdout"
# To /dev/null, and with -C: "-" is the stream, not a file in DIR.
mkdir -p d
cbq --name s --log - -C d -- true >/dev/null 2>err
is "$?:$(cat err)" "0:" "--log - with stdout on /dev/null"
ok "$([ ! -e d/- ]; echo $?)" "-C DIR --log -: no file named - in DIR"
# Operator verbs log there too.
"$CBEXEC" --reset-circuit --name p --reason fixed --log - >out 2>/dev/null
like "$(cat out)" '"event":"reset"' "--reset-circuit --log -: its event on stdout"

# A reader that goes away: no hang, one warning at most.
t0=$(date +%s)
cb --name h --log - --loop --budget 5 --no-progress-threshold 99 \
    -- sh -c 'seq 1 2000' 2>err | head -1 >/dev/null
t1=$(date +%s)
ok "$([ $((t1 - t0)) -lt 5 ]; echo $?)" "stdout closed downstream: cbexec ends ($((t1 - t0))s)"
ok "$([ "$(grep -c 'warning: --log -' err)" -le 1 ]; echo $?)" "... at most one warning about the log"

# A regular file is still a file: appended to, not the stream.
cbq --name f --log f.log -- true >out
is "$(json_lines f.log):$(cat out)" "ok 1:" "--log FILE: the file, not stdout"
done_testing
