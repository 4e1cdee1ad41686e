# SPDX-License-Identifier: ISC
# shellcheck shell=bash
# circuit_breaker.sh: a circuit breaker for bash loop scripts that run the
# agent themselves, with the functions of the ralph circuit breaker spec
# (S02), on top of cbexec(1): every rule, the state file, the lock, the
# log and the metrics are cbexec's, so a loop script and cbexec runs can
# share one circuit.
#
#   source contrib/circuit_breaker.sh
#   cb_init .prp-session/circuit-breaker.json
#   while [[ $(cb_get_state) != OPEN ]]; do
#       err=$(./agent-step.sh 2>&1 >/dev/null)
#       if cb_check_progression; then cb_record_success
#       else cb_record_failure "$err"; fi
#       cb_evaluate || break
#   done
#   cb_get_stats
#
# Functions (each returns 2, with a message on stderr, when cbexec fails):
#   cb_init [STATE_FILE]   use this circuit (else $CB_STATE_FILE, else
#                          $CB_NAME, else cbexec's circuit for the working
#                          directory) and take the work tree's fingerprint
#                          for cb_check_progression; the state file appears
#                          with the first record
#   cb_get_state           print CLOSED, HALF_OPEN or OPEN
#   cb_record_success      record an iteration that made progress
#   cb_record_failure [MSG]  record an iteration that made none; with MSG
#                          it also failed with that error (exit 1), which
#                          the same-error rule fingerprints
#   cb_check_progression   0 when the work tree changed since cb_init or
#                          the last call (git: HEAD, changes and untracked
#                          files; else the files' names, sizes and times),
#                          1 when it did not
#   cb_evaluate            0 while iterations may go on (CLOSED,
#                          HALF_OPEN), 1 when the circuit is OPEN
#   cb_reset [REASON]      close the circuit (cbexec --reset-circuit)
#   cb_get_stats [--json]  print the circuit's diagnostics (cbexec --status)
#
# Variables:
#   CB_NO_PROGRESS_THRESHOLD, CB_SAME_ERROR_THRESHOLD, CB_HALF_OPEN_RETRIES,
#   CB_MAX_CONSECUTIVE_ERRORS, CB_MAX_RETRIES, CB_COOLDOWN
#                the breaker's thresholds, passed to cbexec whether
#                exported or not
#   CB_STATE_FILE, CB_NAME   the circuit (see cb_init)
#   CB_PHASE, CB_TASK        the phase and task of the recorded iterations
#   CBEXEC                   the cbexec binary (default: cbexec)

_cb_vars='CB_NO_PROGRESS_THRESHOLD CB_SAME_ERROR_THRESHOLD CB_HALF_OPEN_RETRIES
	CB_MAX_CONSECUTIVE_ERRORS CB_MAX_RETRIES CB_COOLDOWN'
_cb_tree=

# cbexec with the CB_* thresholds in its environment and the circuit's
# options after the given ones.
_cb_cbexec()
{
	local v
	local -a env=() circuit=()

	for v in $_cb_vars; do
		if [[ -n ${!v+set} ]]; then env+=("$v=${!v}"); fi
	done
	if [[ -n ${CB_STATE_FILE:-} ]]; then
		circuit=(--state "$CB_STATE_FILE")
	elif [[ -n ${CB_NAME:-} ]]; then
		circuit=(--name "$CB_NAME")
	fi
	env ${env[@]+"${env[@]}"} "${CBEXEC:-cbexec}" "$@" \
	    ${circuit[@]+"${circuit[@]}"}
}

# Record one iteration; its exit status says what the breaker did, which
# cb_get_state and cb_evaluate report: only cbexec's own failures count.
# (Every status is caught with ||, so a script under set -e goes on.)
_cb_record()
{
	local rc=0
	local -a what=()

	if [[ -n ${CB_PHASE:-} ]]; then what+=(--phase "$CB_PHASE"); fi
	if [[ -n ${CB_TASK:-} ]]; then what+=(--task "$CB_TASK"); fi
	_cb_cbexec --record ${what[@]+"${what[@]}"} "$@" || rc=$?
	case $rc in
	123|125)
		echo "circuit_breaker.sh: cbexec --record failed ($rc)" >&2
		return 2
		;;
	esac
	return 0
}

# The work tree's fingerprint; the circuit's own files left out.
_cb_tree_print()
{
	local skip=${CB_STATE_FILE:-}

	skip=${skip##*/}
	[[ -n $skip ]] || skip=/	# no file name contains '/'
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		{
			git rev-parse HEAD 2>/dev/null
			# a clean tree selects no line: not a failure, also
			# under set -euo pipefail
			git status --porcelain=v1 --untracked-files=all 2>/dev/null |
			    { grep -vF -- "$skip" || true; }
			git diff HEAD 2>/dev/null
			git ls-files -z --others --exclude-standard 2>/dev/null |
			    { grep -zvF -- "$skip" || true; } |
			    xargs -0 -r stat -c '%n %s %Y' 2>/dev/null
		} | cksum
	else
		find . -name .git -prune -o -type f ! -name "$skip*" \
		    ! -name ".$skip.tmp.*" -printf '%P %s %T@\n' 2>/dev/null |
		    LC_ALL=C sort | cksum
	fi
}

cb_init()
{
	if [[ -n ${1:-} ]]; then CB_STATE_FILE=$1; fi
	if ! command -v "${CBEXEC:-cbexec}" >/dev/null 2>&1; then
		echo "circuit_breaker.sh: ${CBEXEC:-cbexec} not found" \
		    "(set CBEXEC)" >&2
		return 2
	fi
	_cb_tree=$(_cb_tree_print)
	return 0
}

cb_get_state()
{
	local out err rc=0

	err=$(mktemp) || return 2
	out=$(_cb_cbexec --status --json 2>"$err") || rc=$?
	# A circuit that never recorded anything is a fresh CLOSED one.
	if _cb_no_circuit "$rc" "$err"; then
		rm -f "$err"
		echo CLOSED
		return 0
	fi
	if [[ $rc -ne 0 && $rc -ne 120 ]]; then
		cat "$err" >&2
		rm -f "$err"
		return 2
	fi
	rm -f "$err"
	# The state object prints one top-level member per line.
	out=$(sed -n 's/^  "state": "\([A-Z_]*\)".*/\1/p' <<<"$out")
	[[ -n $out ]] || return 2
	echo "$out"
}

# Whether cbexec said (exit 125, its own first stderr line) that the circuit
# has recorded nothing: never a match in what the command printed, which
# --status shows as the last error.
_cb_no_circuit()
{
	local line

	[[ $1 -eq 125 ]] || return 1
	IFS= read -r line <"$2" || true
	[[ $line == "cbexec: no such circuit: "* ]]
}

cb_record_success()
{
	_cb_record --exit 0 --progress yes
}

cb_record_failure()
{
	if [[ -n ${1:-} ]]; then
		_cb_record --exit 1 --message "$1" --progress no
	else
		_cb_record --exit 0 --progress no
	fi
}

cb_check_progression()
{
	local now

	now=$(_cb_tree_print)
	if [[ $now != "$_cb_tree" ]]; then
		_cb_tree=$now
		return 0
	fi
	return 1
}

cb_evaluate()
{
	local state

	state=$(cb_get_state) || return 2
	if [[ $state == OPEN ]]; then return 1; fi
	return 0
}

cb_reset()
{
	local err rc=0

	err=$(mktemp) || return 2
	_cb_cbexec --reset-circuit --reason "${1:-cb_reset}" >/dev/null \
	    2>"$err" || rc=$?
	_cb_tree=$(_cb_tree_print)
	# Nothing recorded yet: nothing to reset.
	if [[ $rc -eq 0 ]] || _cb_no_circuit "$rc" "$err"; then
		rm -f "$err"
		return 0
	fi
	cat "$err" >&2
	rm -f "$err"
	return 2
}

cb_get_stats()
{
	local out err rc=0

	err=$(mktemp) || return 2
	out=$(_cb_cbexec --status "$@" 2>"$err") || rc=$?
	if _cb_no_circuit "$rc" "$err"; then
		rm -f "$err"
		echo "state:              CLOSED  (nothing recorded yet)"
		return 0
	fi
	cat "$err" >&2
	rm -f "$err"
	printf '%s\n' "$out"
	if [[ $rc -ne 0 && $rc -ne 120 ]]; then return 2; fi
	return 0
}
