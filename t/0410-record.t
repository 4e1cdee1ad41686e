#!/bin/sh
# SPDX-License-Identifier: ISC
# --record (SPEC §9): one run's result applied without running anything,
# through the rules of a supervised run; exit status as that run's;
# nothing printed unless -v; the files read safely, only their tail.
. "$(dirname "$0")/lib.sh"
rec() { "$CBEXEC" --record "$@"; }

# Nothing printed, the state made, the exit status the run's own.
out=$(rec --state r.json 2>&1)
is "$?" 0 "--record of a success: 0"
is "$out" "" "... prints nothing"
is "$(jget r.json iteration)" 1 "... counted as a run"
like "$(jget r.json history)" '"event":"progress","exit_code":0' "... with a run event"
out=$(rec --exit 3 --message "boom" --state r.json 2>&1)
is "$?" 3 "--exit 3: 3, the run's own status"
is "$out" "" "... prints nothing"
is "$(jget r.json last_error.message)/$(jget r.json last_error.type)/$(jget r.json last_error.exit_code)" \
    "boom/unknown/3" "--message is the run's stderr: classified"
is "$(jget r.json consecutive_errors)" 1 "... counted"
rec --exit 1 --state r.json 2>/dev/null
is "$(jget r.json last_error.message)" "exited with status 1" "no message: the status says it"

# The same results recorded or run give the same state.
results='0: 1:boom 1:boom 2:TypeError:_x 0: 1:src/a.c:3:_error:_y 1:src/a.c:9:_error:_y'
for r in $results; do
	code=${r%%:*} msg=$(printf '%s' "${r#*:}" | tr _ ' ')
	"$CBEXEC" -q --no-prompt --progress exit --state run.json --max-consecutive-errors 9 --no-progress-threshold 9 \
	    -- sh -c 'printf "%s\n" "$2" >&2; exit $1' sh "$code" "$msg" 2>/dev/null
	rc1=$?
	if [ -n "$msg" ]; then
		rec --progress exit --state recd.json --max-consecutive-errors 9 --no-progress-threshold 9 --exit "$code" --message "$msg"
	else
		rec --progress exit --state recd.json --max-consecutive-errors 9 --no-progress-threshold 9 --exit "$code"
	fi
	rc2=$?
	[ "$rc1" = "$rc2" ] || echo "# exit status differs for $r: run $rc1, record $rc2"
done
fields() {
	for f in state no_progress_count same_error_count consecutive_errors \
	    same_task_failures iteration last_error_hash last_error outcome errors_total; do
		printf '%s=%s\n' "$f" "$(jget "$1" "$f")"
	done
}
is "$(fields recd.json)" "$(fields run.json)" "recorded results move the breaker as runs do"

# The circuit opens as for a run; an OPEN circuit refuses a result (120).
rec --state s.json --exit 1 --message "E: same" --progress no --no-progress-threshold 9 --same-error-threshold 3
rec --state s.json --exit 1 --message "E: same" --progress no --no-progress-threshold 9 --same-error-threshold 3
out=$(rec --state s.json --exit 1 --message "E: same" --progress no --no-progress-threshold 9 --same-error-threshold 3 2>&1)
is "$?" 121 "the same error 3 times: 121, as a run"
is "$out" "" "... and prints nothing, not even the OPEN block"
is "$(jget s.json state)" OPEN "OPEN"
out=$(rec --state s.json 2>&1)
is "$?" 120 "an OPEN circuit refuses a result: 120"
is "$out" "" "... silently"
is "$(jget s.json iteration)" 3 "... not recorded"
out=$(rec -v --state s.json 2>&1)
is "$?" 120 "-v: 120"
like "$out" 'circuit is OPEN: Same error 3 times: E: same; not running' "-v: the refusal line"
rec --state s.json --exit-codes open=90 2>/dev/null
is "$?" 90 "--exit-codes remaps it"
out=$(rec -v --state v.json --exit 2 --message "SyntaxError: x" --progress no --no-progress-threshold 1 --half-open-after 1 2>&1)
is "$?" 120 "-v: a result that opens the circuit: 120"
like "$out" 'run 1 exited 2 after 0.00s: recoverable syntax_error: SyntaxError: x' "-v: the run line"
like "$out" '---CIRCUIT_BREAKER_OPEN---' "-v: the OPEN block"
rec --state f.json --exit 1 --message "bash: ./x: Permission denied"
is "$?" 122 "a fatal class: 122"
is "$(jget f.json open_reason)" "fatal: permission_denied" "... opens the circuit"

# --progress yes|no decides; auto judges it as for a run.
rec --state p.json --exit 1 --message x --progress yes
is "$(jget p.json no_progress_count)" 0 "--progress yes: progress"
rec --state p.json --exit 0 --progress no
is "$(jget p.json no_progress_count)" 1 "--progress no: none, whatever the status"
mkdir g && (cd g && git init -q && git config user.email t@t && git config user.name t &&
	echo a > f && git add f && git commit -qm a) >/dev/null 2>&1
if [ -d g/.git ]; then
	(cd g && "$CBEXEC" --record --state ../pg.json --exit 0)
	is "$(jget pg.json no_progress_count)" 1 "auto in a git tree: no fingerprint before the first, no progress"
	(cd g && "$CBEXEC" --record --state ../pg.json --exit 0)
	is "$(jget pg.json no_progress_count)" 2 "... a tree that did not change since: no progress"
	echo b >> g/f
	(cd g && "$CBEXEC" --record --state ../pg.json --exit 1)
	is "$(jget pg.json no_progress_count)" 0 "... a tree changed since the last record: progress"
else
	skip "git: no repository"; skip "git"; skip "git"
fi

# --stdout-file: its status block counts as a run's.
printf 'lots of output\n---CBEXEC_STATUS---\nSTATUS: COMPLETE\nTASK: T-4\nTESTS_PASSING: 5\n---END_CBEXEC_STATUS---\n' > out.txt
rec --state so.json --phase GREEN --exit 0 --stdout-file out.txt
is "$?" 0 "STATUS: COMPLETE: 0"
is "$(jget so.json last_progress_metric)" '{"GREEN":{"tests_passing":5}}' "the phase rule saw the metrics"
printf -- '---CBEXEC_STATUS---\nTASK: T-4\n---END_CBEXEC_STATUS---\n' > out2.txt
rec --state so.json --phase GREEN --exit 1 --stdout-file out2.txt --message err
is "$(jget so.json last_failed_task)" T-4 "the block's TASK is the run's task"
printf 'FAILED tests/x.py\nResult: FAIL\n' > test.out
rec --state so2.json --exit 1 --stdout-file test.out
is "$(jget so2.json last_error.type)" test_failure "stdout of a failed run refines its type"

# --stderr-file: only its tail is read.
{ i=0; while [ $i -lt 5000 ]; do echo "TypeError: noise $i"; i=$((i + 1)); done; echo "SyntaxError: the last"; } > err.txt
rec --state se.json --exit 1 --stderr-file err.txt --capture-bytes 100
is "$(jget se.json last_error.type)" syntax_error "the tail of --stderr-file is classified"
printf 'x\n' > small.txt
rec --state se.json --exit 1 --stderr-file small.txt 2>/dev/null
is "$(jget se.json last_error.message)" x "a small file whole"

# The files are opened safely.
ln -s err.txt link.txt
rec --state l.json --exit 1 --stderr-file link.txt 2>err
is "$?" 125 "a symlinked --stderr-file: 125"
like "$(cat err)" '^cbexec: --stderr-file link.txt: is a symbolic link \(use --follow-symlinks\)$' "... says so"
ok "$(test ! -e l.json; echo $?)" "... nothing recorded"
rec --state l.json --exit 1 --stderr-file link.txt --follow-symlinks
is "$?" 1 "--follow-symlinks: read"
mkfifo fifo
start=$(date +%s)
rec --state l.json --stdout-file fifo 2>err
is "$?" 125 "a FIFO: 125"
ok "$([ $(( $(date +%s) - start )) -lt 5 ]; echo $?)" "... at once, no hang"
like "$(cat err)" 'fifo: not a regular file' "... says so"
rec --state l.json --stdout-file . 2>err
is "$?" 125 "a directory: 125"
rec --state l.json --stderr-file missing.txt 2>err
is "$?" 125 "a missing file: 125"
like "$(cat err)" 'missing.txt: No such file or directory' "... says so"

# Usage.
for args in "--exit 3 -- true" "--message x -- true" "--stderr-file err.txt -- true" \
    "--stdout-file out.txt -- true" "--progress yes -- true" "--record --exit 256" \
    "--record --exit -1" "--record --message x --stderr-file err.txt" "--record --progress maybe" \
    "--record -- true"; do
	"$CBEXEC" --state u.json $args >/dev/null 2>err
	is "$?" 125 "usage: $args: 125"
done
like "$(cat err)" 'too many arguments|CIRCUIT' "--record takes no command"
"$CBEXEC" --state u.json --exit 3 -- true 2>err
like "$(cat err)" '^cbexec: --exit is for --record$' "--exit without --record says so"
echo '{"exit": "3"}' > cfg.json
"$CBEXEC" --config cfg.json --record --state u.json 2>err
is "$?" 125 "--exit in a config file: 125"

# The lock, the log, the metrics and the hook, as for a run.
"$CBEXEC" -q --state busy.json --progress exit -- sleep 5 &
bg=$!
poll_until 5 test -e busy.json.lock
rec --state busy.json 2>err
is "$?" 123 "a running cbexec holds the circuit: 123"
kill "$bg" 2>/dev/null; wait "$bg" 2>/dev/null
rec --state lg.json --exit 1 --message "E: x" --progress no --no-progress-threshold 1 --half-open-after 1 \
    --log lg.log --metrics lg.prom --on-state-change 'echo "hook $CBEXEC_TO" >> hook.out'
is "$?" 120 "opens: 120"
like "$(cat lg.log)" '"event":"run".*"exit_code":1' "--log: the run"
like "$(cat lg.log)" '"event":"open"' "--log: the OPEN block"
like "$(cat lg.prom)" '^cbexec_runs_total\{circuit="lg.json"\} 1$' "--metrics written"
like "$(cat hook.out)" 'hook OPEN' "the hook ran"

# A skipped phase or task takes no result.
rec --state sk.json --phase GREEN
"$CBEXEC" --skip --phase GREEN --state sk.json 2>/dev/null
out=$(rec --state sk.json --phase GREEN --exit 1 2>&1)
is "$?" 0 "a result for a skipped phase: 0"
is "$out" "" "... silently"
is "$(jget sk.json iteration)" 1 "... not recorded"
out=$(rec -v --state sk.json --phase GREEN --exit 1 2>&1)
like "$out" 'phase GREEN was skipped at .*; result not recorded' "-v: says so"
"$CBEXEC" --skip --task T-4 --state sk.json 2>/dev/null
rec --state sk.json --exit 1 --stdout-file out2.txt
is "$?" 0 "a result whose status block names a skipped task: 0"
is "$(jget sk.json iteration)" 1 "... not recorded"
done_testing
