#!/bin/sh
# SPDX-License-Identifier: ISC
# Progress sources and the status the command reports (SPEC §3.1, §3.2).
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" -q --no-prompt "$@"; }
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com \
	GIT_CEILING_DIRECTORIES="$SCRATCH"

if command -v git >/dev/null 2>&1; then
	mkdir repo && cd repo && git init -q && echo base > a && echo 'ignored*' > .gitignore &&
	    git add . && git commit -qm init && cd ..
	S="$SCRATCH/g.json"
	cb -C repo --state "$S" -- git commit -q --allow-empty -m step
	is "$(jget "$S" no_progress_count)" 0 "git: a commit inside the run is progress"
	cb -C repo --state "$S" -- true
	is "$(jget "$S" no_progress_count)" 1 "git: nothing changed is no progress (auto = git in a work tree)"
	cb -C repo --state "$S" -- sh -c 'echo more >> a'
	is "$(jget "$S" no_progress_count)" 0 "git: editing a tracked file is progress"
	cb -C repo --state "$S" -- sh -c 'echo more >> a'
	is "$(jget "$S" no_progress_count)" 0 "git: editing it again is progress too"
	cb -C repo --state "$S" -- touch new-untracked
	is "$(jget "$S" no_progress_count)" 0 "git: an untracked file is progress"
	cb -C repo --state "$S" -- touch ignored-file
	is "$(jget "$S" no_progress_count)" 1 "git: an ignored file is not"
	like "$(jget "$S" last_fingerprint)" '^[0-9a-f]{64}$' "last_fingerprint recorded"
	cb -C repo --state "$S" -- sh -c 'echo x >> a; exit 1'
	is "$(jget "$S" no_progress_count)" 0 "git: a failed run with real work resets no-progress"
	is "$(jget "$S" consecutive_errors)" 1 "git: ...while its error still counts"
	cb -C repo --state "$S" -t 1 -- sh -c 'echo y >> a; sleep 5'
	is "$?" 124 "git: a timed-out run: 124"
	is "$(jget "$S" no_progress_count)" 0 "git: a timeout after real work is progress"
else
	for i in 1 2 3 4 5 6 7 8 9 10 11; do ok 0 "# skip git not installed"; done
fi

# files: --watch and --exclude.
mkdir w
S=f.json
cb --state $S --progress files --watch w -- touch w/one
is "$(jget $S no_progress_count)" 0 "files: a new file is progress"
cb --state $S --progress files --watch w -- true
is "$(jget $S no_progress_count)" 1 "files: no change is no progress"
cb --state $S --progress files --watch w --exclude '*.log' -- touch w/x.log
is "$(jget $S no_progress_count)" 2 "files: excluded glob is not progress"
cb --state $S --progress files --watch w -- chmod 600 w/one
is "$(jget $S no_progress_count)" 0 "files: a mode change is progress"
cb --state $S --progress files --watch w -- sh -c 'touch w/tmp; rm w/tmp'
is "$(jget $S no_progress_count)" 1 "files: a file made and removed is no progress"
cb --state $S --progress files --watch w -- sh -c 'mkdir -p w/a/b; echo x > w/a/b/c'
is "$(jget $S no_progress_count)" 0 "files: a file in a new directory is progress"

# status: the block on stdout, and the status file.
S=s.json
cb --state $S --progress status -- printf -- '---CBEXEC_STATUS---\nSTATUS: IN_PROGRESS\nTASKS_COMPLETED_THIS_LOOP: 1\n---END_CBEXEC_STATUS---\n' >/dev/null
is "$(jget $S no_progress_count)" 0 "status: tasks completed is progress"
cb --state $S --progress status -- printf -- '---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nFILES_MODIFIED: 0\n---END_RALPH_STATUS---\n' >/dev/null
is "$(jget $S no_progress_count)" 1 "status: nothing done is no progress"
cb --state $S --progress status -- sh -c 'printf "STATUS: IN_PROGRESS\nFILES_MODIFIED: 2\n" > "$CBEXEC_STATUS_FILE"'
is "$(jget $S no_progress_count)" 0 "status file: files modified is progress"
cb --state $S --progress status,exit -- printf -- '---CBEXEC_STATUS---\nSTATUS: BLOCKED\nFILES_MODIFIED: 5\n---END_CBEXEC_STATUS---\n' >/dev/null
is "$(jget $S no_progress_count)" 1 "status: BLOCKED is no progress whatever else"

# COMPLETE and EXIT_SIGNAL end a loop with 0; EXIT_SIGNAL false wins.
cb --state c.json --loop --progress exit -- sh -c '[ "$CBEXEC_ITERATION" -ge 3 ] && printf -- "---CBEXEC_STATUS---\nSTATUS: COMPLETE\n---END_CBEXEC_STATUS---\n"; true' >/dev/null
is "$?" 0 "COMPLETE ends the loop: 0"
is "$(jget c.json iteration)" 3 "COMPLETE at run 3: three runs"
cb --state c2.json -n 3 --progress exit -- printf -- '---CBEXEC_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: false\n---END_CBEXEC_STATUS---\n' >/dev/null
is "$(jget c2.json iteration)" 3 "EXIT_SIGNAL false beats COMPLETE"
# Inside a JSON string, as claude -p --output-format json prints it.
cb --state j.json --loop --progress exit -- printf '{"type":"result","result":"Done.\\n\\n---RALPH_STATUS---\\nSTATUS: COMPLETE\\nEXIT_SIGNAL: true\\n---END_RALPH_STATUS---\\n","is_error":false}\n' >/dev/null
is "$?" 0 "block inside a JSON string ends the loop"
is "$(jget j.json iteration)" 1 "JSON-escaped block: one run"
# A malformed block is a warning, never a crash.
err=$("$CBEXEC" --state mal.json --progress exit -- printf -- '---CBEXEC_STATUS---\nSTATUS: WEIRD\n' 2>&1 >/dev/null)
is "$?" 0 "malformed block: the run's status"
like "$err" "warning" "malformed block: a warning"

# STUCK: the same task failing max-retries times in a row.
S=t.json
for i in 1 2; do
	cb --state $S --max-retries 3 --no-progress-threshold 9 --progress exit -- sh -c 'printf -- "---CBEXEC_STATUS---\nTASK: 2.3-login\n---END_CBEXEC_STATUS---\n"; exit 1' >/dev/null
done
is "$(jget $S same_task_failures)" 2 "same task failed twice"
cb --state $S --max-retries 3 --no-progress-threshold 9 --progress exit -- sh -c 'printf -- "---CBEXEC_STATUS---\nTASK: 2.3-login\n---END_CBEXEC_STATUS---\n"; exit 1' >/dev/null
is "$?" 121 "same task failing 3 times: STUCK 121"
S=t2.json
cb --state $S --task T1 -n 2 --no-progress-threshold 9 --progress exit -- false
is "$(jget $S same_task_failures)" 2 "--task feeds the same-task rule"
cb --state $S --no-progress-threshold 9 --progress exit -- false
is "$(jget $S same_task_failures)" 2 "a run with no task never moves the counter"

# --progress-cmd in GREEN: edits that never raise tests_passing are no progress.
S=g2.json
echo 3 > passing
cb --state $S --phase GREEN --progress files,cmd --watch . --progress-cmd 'echo tests_passing=$(cat passing)' -- touch edit1
is "$(jget $S no_progress_count)" 0 "GREEN: first report sets the baseline (3 > 0)"
cb --state $S --phase GREEN --progress files,cmd --watch . --progress-cmd 'echo tests_passing=$(cat passing)' -- touch edit2
is "$(jget $S no_progress_count)" 1 "GREEN: file edits without more passing tests are no progress"
cb --state $S --phase GREEN --progress files,cmd --watch . --progress-cmd 'echo tests_passing=$(cat passing)' -- sh -c 'echo 5 > passing'
is "$(jget $S no_progress_count)" 0 "GREEN: tests_passing went up is progress"
is "$(jget $S last_progress_metric.GREEN.tests_passing)" 5 "last_progress_metric per phase"

# The child environment: CBEXEC_LAST_ERROR after a failure.
S=le.json
cb --state $S --progress exit -- sh -c 'echo "SyntaxError: Unexpected token" >&2; exit 1' 2>/dev/null
cb --state $S --progress exit -- sh -c 'echo "$CBEXEC_LAST_ERROR" > lasterr'
is "$(cat lasterr)" "syntax_error: SyntaxError: Unexpected token" "CBEXEC_LAST_ERROR is the previous error"
cb --state $S --progress exit -- sh -c 'echo "[$CBEXEC_LAST_ERROR]" > lasterr'
is "$(cat lasterr)" "[]" "CBEXEC_LAST_ERROR empty after a success"
cb --state $S --progress exit -- sh -c 'test -f "$CBEXEC_STATUS_FILE" && echo "$CBEXEC_STATUS_FILE" > sf'
ok "$(test ! -e "$(cat sf)"; echo $?)" "the status file is removed after the run"
done_testing
