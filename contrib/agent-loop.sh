#!/bin/sh
# SPDX-License-Identifier: ISC
# agent-loop.sh: run an agent step again and again under cbexec(1), one
# run per cbexec invocation, and let cbexec's exit status decide what
# happens next.  An agent exits 0 after every step, done or not: the step
# says the work is done in its status block (STATUS: COMPLETE or
# EXIT_SIGNAL: true), which cbexec --exit-codes complete=DONE_CODE turns
# into an exit status of its own:
#
#   10       done (DONE_CODE): the step reported it     -> stop, exit 0
#   0        the step went well, the work goes on       -> the next step
#   120      OPEN: the circuit is open                  -> alert, stop
#   121      STUCK: the same error or task again        -> alert, stop
#   122      ABORT: fatal error, or interrupted         -> alert, stop
#   123      BUSY: another cbexec runs this circuit     -> skip this turn
#   124      TIMEOUT: the step ran out of time          -> retry at once
#   other    the step failed (1-119, 126, 127, 128+N),
#            or cbexec failed (125)                     -> retry after a pause
#
# usage: agent-loop.sh [-n NAME] [-m MAX_RUNS] [--] COMMAND [ARG...]
#
#   -n NAME      the circuit (default: agent)
#   -m MAX_RUNS  stop after this many cbexec invocations (default: no limit)
#
# Environment:
#   CBEXEC       the cbexec binary (default: cbexec)
#   CBEXEC_OPTS  more cbexec options, split at blanks
#                (default: --no-prompt --timeout 15m)
#   ALERT_CMD    run with /bin/sh -c on an alert, the message in $1
#                (e.g. 'mail -s "$1" ops@example.com </dev/null')
#   RETRY_PAUSE  seconds before retrying a failed step (default: 30)
#   BUSY_PAUSE   seconds to wait when the circuit is busy (default: 60)
#   MAX_ERRORS   stop after this many cbexec errors (125) in a row (default: 3)
#   DONE_CODE    the status that means done (default: 10); a step that
#                exits with it on its own is taken as done too, so pick
#                one your step never exits with
#
# Exits 0 when done, else with the status that stopped it.
set -u

usage() {
	echo "usage: ${0##*/} [-n NAME] [-m MAX_RUNS] [--] COMMAND [ARG...]" >&2
	exit 2
}

name=agent
max_runs=0
while getopts n:m: opt; do
	case $opt in
	n) name=$OPTARG ;;
	m) max_runs=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || usage
case $max_runs in
'' | *[!0-9]*) usage ;;
esac

cbexec=${CBEXEC:-cbexec}
opts=${CBEXEC_OPTS:---no-prompt --timeout 15m}
retry_pause=${RETRY_PAUSE:-30}
busy_pause=${BUSY_PAUSE:-60}
max_errors=${MAX_ERRORS:-3}
done_code=${DONE_CODE:-10}
case $done_code in
'' | 0 | *[!0-9]*) usage ;;
esac

say() {
	echo "agent-loop[$name]: $*" >&2
}

alert() {
	say "$*"
	if [ -n "${ALERT_CMD:-}" ]; then
		sh -c "$ALERT_CMD" agent-loop "agent-loop[$name]: $*" ||
			say "alert command failed"
	fi
}

runs=0
errors=0
while :; do
	runs=$((runs + 1))
	# $opts unquoted on purpose: several options in one variable.
	# shellcheck disable=SC2086
	"$cbexec" --name "$name" --exit-codes complete="$done_code" $opts -- "$@"
	rc=$?
	[ "$rc" -eq 125 ] && errors=$((errors + 1)) || errors=0
	case $rc in
	"$done_code")
		say "done after $runs runs"
		exit 0
		;;
	0)
		;;
	120)
		alert "circuit OPEN; see: $cbexec --status $name"
		exit "$rc"
		;;
	121)
		alert "STUCK: the same failure repeats; see: $cbexec --status $name"
		exit "$rc"
		;;
	122)
		alert "ABORT: fatal error or interrupted; see: $cbexec --status $name"
		exit "$rc"
		;;
	123)
		say "busy: another cbexec runs $name; skipping this turn"
		sleep "$busy_pause"
		;;
	124)
		say "run $runs timed out; retrying"
		;;
	125)
		if [ "$errors" -ge "$max_errors" ]; then
			alert "cbexec failed $errors times in a row; stopping"
			exit "$rc"
		fi
		say "cbexec failed (exit 125); retrying in ${retry_pause}s"
		sleep "$retry_pause"
		;;
	*)
		say "run $runs exited $rc; retrying in ${retry_pause}s"
		sleep "$retry_pause"
		;;
	esac
	if [ "$max_runs" -gt 0 ] && [ "$runs" -ge "$max_runs" ]; then
		say "stopping after $runs runs"
		exit "$rc"
	fi
done
