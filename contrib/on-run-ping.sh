#!/bin/sh
# SPDX-License-Identifier: ISC
# An --on-run hook for cbexec(1): healthchecks.io-style pings and ntfy
# messages around every run, with curl (cbexec itself has no HTTP client).
#
#   HC_PING_URL=https://hc-ping.com/YOUR-UUID \
#   NTFY_URL=https://ntfy.sh/YOUR-TOPIC \
#   cbexec --name nightly --on-run /path/to/on-run-ping.sh -- ./agent-step.sh
#
# HC_PING_URL  pinged as each run starts (URL/start) and when it ends
#              (URL/EXIT_STATUS: 0 is a success, anything else a failure,
#              as healthchecks.io's exit-status endpoint takes it), the
#              run's class, type and message as the body of the end ping.
#              A circuit that is OPEN runs nothing and pings nothing, so
#              the check goes late and healthchecks.io says so.
# NTFY_URL     an ntfy topic: a message when a run fails (NTFY_ALL=1: after
#              every run), titled with the circuit and the run, tagged and
#              raised in priority when the circuit is OPEN after it.
# PING_MAX_TIME  seconds each request may take (default 4): cbexec kills
#              the hook after --kill-after (10 s), and two requests must fit.
#
# Either URL may be unset.  The hook's failure is a warning of cbexec's,
# never the run's; what curl says goes to cbexec's stderr as "hook: ...".
set -u

max=${PING_MAX_TIME:-4}
rc=0

if [ -n "${HC_PING_URL:-}" ]; then
	case $CBEXEC_EVENT in
	start)
		curl -fsS -m "$max" -o /dev/null "$HC_PING_URL/start" || rc=1
		;;
	end)
		curl -fsS -m "$max" -o /dev/null --data-raw \
		    "run $CBEXEC_ITERATION: $CBEXEC_RESULT ($CBEXEC_CLASS${CBEXEC_TYPE:+ $CBEXEC_TYPE}) after ${CBEXEC_DURATION}s${CBEXEC_MESSAGE:+: $CBEXEC_MESSAGE}" \
		    "$HC_PING_URL/$CBEXEC_EXIT_STATUS" || rc=1
		;;
	esac
fi

if [ -n "${NTFY_URL:-}" ] && [ "$CBEXEC_EVENT" = end ] &&
    { [ "$CBEXEC_RESULT" = failure ] || [ "${NTFY_ALL:-0}" = 1 ]; }; then
	name=${CBEXEC_NAME:-$CBEXEC_STATE_FILE}
	if [ "$CBEXEC_CIRCUIT_STATE" = OPEN ]; then
		prio=high tags=rotating_light
	elif [ "$CBEXEC_RESULT" = failure ]; then
		prio=default tags=warning
	else
		prio=low tags=white_check_mark
	fi
	curl -fsS -m "$max" -o /dev/null \
	    -H "Title: cbexec $name: run $CBEXEC_ITERATION $CBEXEC_RESULT (circuit $CBEXEC_CIRCUIT_STATE)" \
	    -H "Priority: $prio" -H "Tags: $tags" \
	    --data-raw "$CBEXEC_CLASS${CBEXEC_TYPE:+ $CBEXEC_TYPE}, exit status $CBEXEC_EXIT_STATUS after ${CBEXEC_DURATION}s${CBEXEC_MESSAGE:+: $CBEXEC_MESSAGE}" \
	    "$NTFY_URL" || rc=1
fi
exit $rc
