#!/bin/sh
# SPDX-License-Identifier: ISC
# ralph-loop.sh: ralph-claude-code's loop (ralph_loop.sh) as one cbexec(1)
# invocation.  Run it in a Ralph project (.ralph/PROMPT.md, .ralphrc): it
# runs Claude Code on the prompt again and again -- each run resuming the
# last one's session -- until Claude reports EXIT_SIGNAL: true in its
# RALPH_STATUS block (exit 0), or the circuit opens: no progress
# (CB_NO_PROGRESS_THRESHOLD runs without a change in git or FILES_MODIFIED),
# the same error (CB_SAME_ERROR_THRESHOLD), a fatal error such as a bad
# API key (122).  A usage limit ("5-hour limit") is waited out until its
# reset time, as the loop does when nobody answers its question.
#
# usage: ralph-loop.sh [-c CALLS] [-p PROMPT] [-t MINUTES] [-T BUDGET]
#            [--allowed-tools LIST] [--output-format json|text]
#            [--no-continue] [--auto-reset-circuit] [--name NAME]
#            [-- CLAUDE_ARG...]
#        ralph-loop.sh --status | --circuit-status | --reset-circuit
#            [--name NAME]
#
#   -c, --calls CALLS      at most CALLS runs an hour, spread evenly (a pause
#                          of an hour / CALLS between runs; 0: no pause)
#                          (MAX_CALLS_PER_HOUR, 100)
#   -p, --prompt FILE      the prompt, read again for every run
#                          (.ralph/PROMPT.md)
#   -t, --timeout MINUTES  limit of one run (CLAUDE_TIMEOUT_MINUTES, 15)
#   -T, --budget D         limit of the whole loop, a cbexec duration
#                          (RALPH_BUDGET; 0, no limit, as ralph has none)
#   --allowed-tools LIST   Claude's --allowedTools, comma-separated
#                          (ALLOWED_TOOLS, ralph's default list)
#   --output-format F      json or text (CLAUDE_OUTPUT_FORMAT, json)
#   --no-continue          every run a new session (SESSION_CONTINUITY=false)
#   --auto-reset-circuit   reset an OPEN circuit before starting
#                          (CB_AUTO_RESET=true)
#   --name NAME            the circuit (default: the working directory's)
#   -s, --status, --circuit-status   cbexec --status of the circuit
#   --reset-circuit        cbexec --reset-circuit of the circuit
#   -- CLAUDE_ARG...       more arguments for Claude Code
#
# Settings come from the command line, else the environment, else
# .ralphrc, else ralph's defaults.  .ralphrc is read, never run: only
# NAME=value lines of the settings above are taken (their value as
# written, quotes removed), since a file in the work tree is one the agent
# can write.  Also read: CLAUDE_CODE_CMD (claude), CLAUDE_MODEL,
# MAX_TOKENS_PER_HOUR (0: none; else --max-tokens N/1h),
# CB_NO_PROGRESS_THRESHOLD (3), CB_SAME_ERROR_THRESHOLD (5),
# CB_COOLDOWN_MINUTES (30; 0: a trial at once at the next start).
# Environment only: CBEXEC (the cbexec binary), CBEXEC_OPTS (more cbexec
# options, split at blanks), NOTIFY_CMD (--on-state-change).
#
# Exits with cbexec's status: 0 done, 120 OPEN, 121 STUCK, 122 ABORT,
# 124 the budget ran out, 125 cbexec's own error (see cbexec(1)).
set -u

usage() {
	sed -n 's/^# \{0,1\}//; /^usage:/,/^$/p' "$0" >&2
	exit 2
}
die() {
	echo "${0##*/}: $*" >&2
	exit 2
}

# NAME=value of .ralphrc, as written (one level of quotes removed); a
# value that expands anything ($, `) is not taken.
rc_get() {
	[ -f .ralphrc ] || return 1
	v=$(sed -n "s/^[[:space:]]*\\(export[[:space:]]\\{1,\\}\\)\\{0,1\\}$1=//p" .ralphrc |
	    tail -1 | sed 's/[[:space:]]#.*$//; s/^"\(.*\)"$/\1/; s/^'"'"'\(.*\)'"'"'$/\1/')
	case $v in
	'' | *'$'* | *'`'*) return 1 ;;
	esac
	printf '%s\n' "$v"
}
# setting NAME DEFAULT: the environment's, else .ralphrc's, else DEFAULT
setting() {
	eval "v=\${$1-}"
	if [ -n "$v" ]; then
		printf '%s\n' "$v"
	elif rc_get "$1"; then
		:
	else
		printf '%s\n' "$2"
	fi
}

calls=$(setting MAX_CALLS_PER_HOUR 100)
prompt=.ralph/PROMPT.md
minutes=$(setting CLAUDE_TIMEOUT_MINUTES 15)
budget=$(setting RALPH_BUDGET 0)
tools=$(setting CLAUDE_ALLOWED_TOOLS "")
[ -n "$tools" ] || tools=$(setting ALLOWED_TOOLS \
    'Write,Read,Edit,Bash(git add *),Bash(git commit *),Bash(git diff *),Bash(git log *),Bash(git status),Bash(git status *),Bash(git push *),Bash(git pull *),Bash(git fetch *),Bash(git checkout *),Bash(git branch *),Bash(git stash *),Bash(git merge *),Bash(git tag *),Bash(npm *),Bash(pytest)')
format=$(setting CLAUDE_OUTPUT_FORMAT json)
continuity=$(setting CLAUDE_USE_CONTINUE "")
[ -n "$continuity" ] || continuity=$(setting SESSION_CONTINUITY true)
auto_reset=$(setting CB_AUTO_RESET false)
claude_cmd=$(setting CLAUDE_CODE_CMD claude)
model=$(setting CLAUDE_MODEL "")
tokens=$(setting MAX_TOKENS_PER_HOUR 0)
no_progress=$(setting CB_NO_PROGRESS_THRESHOLD 3)
same_error=$(setting CB_SAME_ERROR_THRESHOLD 5)
cooldown=$(setting CB_COOLDOWN_MINUTES 30)
name=
verb=

while [ $# -gt 0 ]; do
	case $1 in
	-c | --calls) [ $# -ge 2 ] || usage; calls=$2; shift 2 ;;
	-p | --prompt) [ $# -ge 2 ] || usage; prompt=$2; shift 2 ;;
	-t | --timeout) [ $# -ge 2 ] || usage; minutes=$2; shift 2 ;;
	-T | --budget) [ $# -ge 2 ] || usage; budget=$2; shift 2 ;;
	--allowed-tools) [ $# -ge 2 ] || usage; tools=$2; shift 2 ;;
	--output-format) [ $# -ge 2 ] || usage; format=$2; shift 2 ;;
	--no-continue) continuity=false; shift ;;
	--auto-reset-circuit) auto_reset=true; shift ;;
	--name) [ $# -ge 2 ] || usage; name=$2; shift 2 ;;
	-s | --status | --circuit-status) verb=status; shift ;;
	--reset-circuit) verb=reset; shift ;;
	-h | --help) usage ;;
	--) shift; break ;;
	*) usage ;;
	esac
done

for n in "$calls" "$minutes" "$tokens" "$no_progress" "$same_error" "$cooldown"; do
	case $n in '' | *[!0-9]*) die "not a whole number: '$n'" ;; esac
done
case $format in json | text) ;; *) die "--output-format: json or text, not '$format'" ;; esac

cbexec=${CBEXEC:-cbexec}
# The circuit: --name, else the working directory's (ralph keeps its
# breaker in the project's .ralph/; cbexec keeps it outside the tree).
circuit=
[ -n "$name" ] && circuit=$name

case $verb in
status) exec "$cbexec" --status ${circuit:+"$circuit"} ;;
reset) exec "$cbexec" --reset-circuit --reason "ralph-loop.sh --reset-circuit" \
    ${circuit:+"$circuit"} ;;
esac

[ -f "$prompt" ] || die "no prompt file $prompt (run it in a Ralph project, or give -p FILE)"

# CB_AUTO_RESET: an OPEN circuit (--status: 120) is closed before the loop
# starts.
if [ "$auto_reset" = true ]; then
	"$cbexec" --status ${circuit:+"$circuit"} >/dev/null 2>&1
	if [ $? -eq 120 ]; then
		"$cbexec" --reset-circuit --reason "CB_AUTO_RESET on start" \
		    ${circuit:+"$circuit"} || exit
	fi
fi

# Claude Code's command line, built in the positional parameters: the
# command (CLAUDE_CODE_CMD may be "npx @anthropic-ai/claude-code"), the
# model, the output format, each allowed tool as its own argument, then
# the caller's arguments.
extra_n=$#
set -f
for w in $claude_cmd; do set -- "$@" "$w"; done
set +f
[ -n "$model" ] && set -- "$@" --model "$model"
[ "$format" = json ] && set -- "$@" --output-format json
if [ -n "$tools" ]; then
	set -- "$@" --allowedTools
	old_ifs=$IFS
	IFS=,
	set -f
	for t in $tools; do
		t=$(printf '%s' "$t" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
		[ -n "$t" ] && set -- "$@" "$t"
	done
	set +f
	IFS=$old_ifs
fi
# the caller's arguments, which went first, go last
while [ "$extra_n" -gt 0 ]; do
	set -- "$@" "$1"
	shift
	extra_n=$((extra_n - 1))
done

# Each run reads the prompt again and resumes the last run's session
# (cbexec hands it over in CBEXEC_SESSION_ID), as ralph's --resume does.
RALPH_PROMPT=$prompt RALPH_CONTINUE=$continuity
export RALPH_PROMPT RALPH_CONTINUE
# shellcheck disable=SC2016 # expanded by the step's shell, at each run
step='if [ "$RALPH_CONTINUE" = true ] && [ -n "${CBEXEC_SESSION_ID:-}" ]; then
	set -- "$@" --resume "$CBEXEC_SESSION_ID"
fi
exec "$@" -p "$(cat "$RALPH_PROMPT")"'

delay=0
[ "$calls" -gt 0 ] && delay=$((3600000 / calls))ms
cooldown_d=${cooldown}m
[ "$cooldown" -eq 0 ] && cooldown_d=1s
max_tokens=
[ "$tokens" -gt 0 ] && max_tokens=--max-tokens=$tokens/1h
notify=
[ -n "${NOTIFY_CMD:-}" ] && notify=--on-state-change=$NOTIFY_CMD

# shellcheck disable=SC2086 # CBEXEC_OPTS is split at blanks on purpose
exec "$cbexec" ${circuit:+--name "$circuit"} --agent claude --no-prompt \
    --loop --budget "$budget" --timeout "${minutes}m" --delay "$delay" \
    --backoff 30s:30m --no-progress-threshold "$no_progress" \
    --same-error-threshold "$same_error" --cooldown "$cooldown_d" \
    ${max_tokens:+"$max_tokens"} ${notify:+"$notify"} ${CBEXEC_OPTS:-} \
    -- sh -c "$step" ralph-step "$@"
