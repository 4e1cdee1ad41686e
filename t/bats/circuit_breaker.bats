#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# contrib/circuit_breaker.sh against seed 001's acceptance criteria
# (S02-AC1 ... AC6), on top of the cbexec in the tree ($CBEXEC).

setup() {
	TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	export CBEXEC=${CBEXEC:-$TOP/cbexec}
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/cb-bats.XXXXXX")
	export TMPDIR=$WORK NO_COLOR=1 CBEXEC_STATE_DIR=$WORK/state
	unset CB_NO_PROGRESS_THRESHOLD CB_SAME_ERROR_THRESHOLD \
	    CB_HALF_OPEN_RETRIES CB_MAX_CONSECUTIVE_ERRORS CB_MAX_RETRIES \
	    CB_COOLDOWN CB_STATE_FILE CB_NAME CB_PHASE CB_TASK
	mkdir "$WORK/tree"
	cd "$WORK/tree"
	echo a > file
	# shellcheck source=/dev/null
	source "$TOP/contrib/circuit_breaker.sh"
	cb_init "$WORK/tree/.prp-session/circuit-breaker.json"
}

teardown() {
	cd /
	rm -rf "$WORK"
}

# One loop of the seed's pattern: record success when files changed,
# else a failure with the given error (none: just no progress).
loop() {
	if cb_check_progression; then
		cb_record_success
	else
		cb_record_failure "${1:-}"
	fi
	cb_evaluate
}

state_field() {
	sed -n "s/^  \"$1\": \"\\{0,1\\}\\([^\",]*\\).*/\\1/p" "$CB_STATE_FILE"
}

@test "the library defines exactly seed 001's functions" {
	for f in cb_init cb_get_state cb_record_success cb_record_failure \
	    cb_check_progression cb_evaluate cb_reset cb_get_stats; do
		declare -F "$f"
	done
}

@test "a circuit that recorded nothing is CLOSED, and recording prints nothing" {
	[ "$(cb_get_state)" = CLOSED ]
	out=$(cb_record_failure "boom" 2>&1)
	[ -z "$out" ]
	[ -f "$CB_STATE_FILE" ]
	[ "$(state_field iteration)" = 1 ]
}

@test "S02-AC1: 3 loops without file changes -> HALF_OPEN" {
	CB_HALF_OPEN_RETRIES=3 CB_NO_PROGRESS_THRESHOLD=5
	loop; loop
	[ "$(cb_get_state)" = CLOSED ]
	loop
	[ "$(cb_get_state)" = HALF_OPEN ]
}

@test "S02-AC1 with the defaults: HALF_OPEN after CB_HALF_OPEN_RETRIES (2)" {
	loop
	[ "$(cb_get_state)" = CLOSED ]
	loop
	[ "$(cb_get_state)" = HALF_OPEN ]
}

@test "S02-AC2: HALF_OPEN and still no progression -> OPEN at the threshold" {
	CB_HALF_OPEN_RETRIES=3 CB_NO_PROGRESS_THRESHOLD=5
	loop; loop; loop
	[ "$(cb_get_state)" = HALF_OPEN ]
	loop
	[ "$(cb_get_state)" = HALF_OPEN ]
	run loop
	[ "$status" -eq 1 ]	# cb_evaluate: halt
	[ "$(cb_get_state)" = OPEN ]
	[ "$(state_field open_reason)" = "No progress for 5 iterations" ]
}

@test "S02-AC3: OPEN, the user runs --reset-circuit -> CLOSED" {
	CB_NO_PROGRESS_THRESHOLD=3
	loop; loop; run loop
	[ "$(cb_get_state)" = OPEN ]
	"$CBEXEC" --reset-circuit --state "$CB_STATE_FILE" 2>/dev/null
	[ "$(cb_get_state)" = CLOSED ]
	[ "$(state_field no_progress_count)" = 0 ]
}

@test "S02-AC3: cb_reset closes it too" {
	CB_NO_PROGRESS_THRESHOLD=3
	loop; loop; run loop
	[ "$(cb_get_state)" = OPEN ]
	cb_reset "fixed it"
	[ "$(cb_get_state)" = CLOSED ]
	cb_evaluate
}

@test "S02-AC4: 5 loops with the same error -> OPEN" {
	CB_NO_PROGRESS_THRESHOLD=10 CB_MAX_CONSECUTIVE_ERRORS=10
	for i in 1 2 3 4; do
		loop "Error: connection to db at 10.0.0.$i failed after ${i}s"
	done
	[ "$(cb_get_state)" != OPEN ]
	run loop "Error: connection to db at 10.0.0.5 failed after 5s"
	[ "$status" -eq 1 ]
	[ "$(cb_get_state)" = OPEN ]
	[[ $(state_field open_reason) == "Same error 5 times"* ]]
}

@test "S02-AC4: different errors do not count as the same" {
	CB_NO_PROGRESS_THRESHOLD=10 CB_MAX_CONSECUTIVE_ERRORS=10
	for e in alpha beta gamma delta epsilon; do
		loop "Error: $e"
	done
	[ "$(cb_get_state)" = HALF_OPEN ]
}

@test "S02-AC5: HALF_OPEN and files modified -> CLOSED" {
	loop; loop
	[ "$(cb_get_state)" = HALF_OPEN ]
	echo b >> file
	loop
	[ "$(cb_get_state)" = CLOSED ]
	[ "$(state_field no_progress_count)" = 0 ]
}

@test "cb_check_progression sees changes since cb_init and since the last call" {
	run cb_check_progression
	[ "$status" -eq 1 ]
	echo new > other
	cb_check_progression
	run cb_check_progression
	[ "$status" -eq 1 ]
	cb_record_failure x	# the state file changing is no progress
	run cb_check_progression
	[ "$status" -eq 1 ]
}

@test "S02-AC6: cb_get_stats returns diagnostic info" {
	loop "Error: x"; loop "Error: x"
	run cb_get_stats
	[ "$status" -eq 0 ]
	[[ $output == *"state:"*"HALF_OPEN"* ]]
	[[ $output == *"counters:"*"no-progress 2"* ]]
	[[ $output == *"current run:"*"2"* ]]
	[[ $output == *"last error:"*"Error: x"* ]]
	run cb_get_stats --json
	[ "$status" -eq 0 ]
	[[ $output == *'"state": "HALF_OPEN"'* ]]
}

@test "S02-AC6: cb_get_stats of an OPEN circuit still succeeds" {
	CB_NO_PROGRESS_THRESHOLD=2
	loop; run loop
	run cb_get_stats
	[ "$status" -eq 0 ]
	[[ $output == *OPEN* ]]
}

@test "the CB_* thresholds count whether exported or not" {
	CB_MAX_CONSECUTIVE_ERRORS=2 CB_NO_PROGRESS_THRESHOLD=9
	echo 1 >> file; cb_check_progression
	cb_record_failure "Error: one"
	cb_record_failure "Error: two"
	[ "$(cb_get_state)" = OPEN ]
	[ "$(state_field open_reason)" = "2 consecutive errors" ]
}

@test "CB_PHASE and CB_TASK name what is recorded" {
	CB_PHASE=GREEN CB_TASK=T-7
	cb_record_failure "Error: x"
	[ "$(state_field phase)" = GREEN ]
	[ "$(state_field last_failed_task)" = T-7 ]
}

@test "an OPEN circuit refuses records: the state stays" {
	CB_NO_PROGRESS_THRESHOLD=2
	loop; run loop
	n=$(state_field iteration)
	cb_record_success
	[ "$(state_field iteration)" = "$n" ]
	[ "$(cb_get_state)" = OPEN ]
}

@test "a missing cbexec is an error" {
	CBEXEC=/nonexistent/cbexec run cb_init
	[ "$status" -eq 2 ]
	[[ $output == *"not found"* ]]
}

@test "a script under set -euo pipefail can use every function" {
	run bash -c 'set -euo pipefail
		source "$1"
		cb_init "$2"
		cb_get_state
		cb_record_failure "Error: x"
		cb_record_success
		cb_check_progression || true
		cb_evaluate
		cb_get_stats >/dev/null
		cb_reset
		echo done' _ "$TOP/contrib/circuit_breaker.sh" "$WORK/s.json"
	[ "$status" -eq 0 ]
	[[ $output == *done ]]
}

@test "by name, and with neither name nor file the working directory's circuit" {
	run bash -c 'set -eu
		source "$1"
		CB_NAME=named
		cb_init
		cb_record_failure "Error: x"
		cb_get_state' _ "$TOP/contrib/circuit_breaker.sh"
	[ "$status" -eq 0 ]
	[ "$output" = CLOSED ]
	[ -f "$CBEXEC_STATE_DIR/named.json" ]
	run bash -c 'set -eu
		source "$1"
		cb_init
		cb_record_failure "Error: x"
		cb_get_stats' _ "$TOP/contrib/circuit_breaker.sh"
	[ "$status" -eq 0 ]
	[[ $output == *"current run:"*"1"* ]]
}

@test "set -euo pipefail in a clean git work tree: cb_init and the rest" {
	git init -q "$WORK/repo"
	git -C "$WORK/repo" -c user.email=t@example.com -c user.name=t \
	    commit -q --allow-empty -m init
	run bash -c 'set -euo pipefail
		cd "$2"
		source "$1"
		cb_init "$3"
		cb_check_progression || true
		cb_record_failure "Error: x"
		cb_get_state
		echo done' _ "$TOP/contrib/circuit_breaker.sh" "$WORK/repo" \
	    "$WORK/g.json"
	[ "$status" -eq 0 ]
	[[ $output == *CLOSED*done ]]
}

@test "a failure whose text says 'no such circuit' is not taken for no circuit" {
	cb_record_failure "cbexec: no such circuit: the tests' fixture is gone"
	run cb_get_stats
	[ "$status" -eq 0 ]
	[[ $output == *"current run:"* ]]
	[[ $output != *"nothing recorded yet"* ]]
	CB_STATE_FILE=$WORK/nothing.json
	run cb_get_stats
	[ "$status" -eq 0 ]
	[[ $output == *"nothing recorded yet"* ]]
	run cb_reset
	[ "$status" -eq 0 ]
}
