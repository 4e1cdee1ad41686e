#!/bin/sh
# SPDX-License-Identifier: ISC
# Nothing the run prints can brick a circuit or steer the next run (SPEC
# §6, §7, §9): every figure, time and name from the run is checked and
# bounded where it is read, so cbexec never writes what it will refuse
# and never hands on what it did not check.
. "$(dirname "$0")/lib.sh"

cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }
st() { jget "$CBEXEC_STATE_DIR/$1.json" "$2"; }
# claude NAME RESULT-JSON: a Claude Code run that printed that result
claude() {
	printf '%s\n' "$2" >"$SCRATCH/$1.out"
	cb --name "$1" --agent claude -- cat "$SCRATCH/$1.out" >/dev/null \
	    2>"$SCRATCH/$1.err"
}

# 1. Forged figures: clamped at the adapter, the state still loads.
claude inf '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s","total_cost_usd":1e309,"num_turns":1}'
"$CBEXEC" --status inf >/dev/null 2>&1
is "$?" 0 "a cost of 1e309: the state loads"
is "$(st inf spend.cost_usd)" null "an infinite cost is not counted"
claude big '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s","total_cost_usd":1e301,"usage":{"input_tokens":1e17,"output_tokens":5}}'
"$CBEXEC" --status big >/dev/null 2>&1
is "$?" 0 "a cost of 1e301 and 1e17 tokens: the state loads"
is "$(st big spend.cost_usd)" 1000000000000000 "the cost is cut to the state's bound"
is "$(st big spend.input_tokens)" 9007199254740992 \
    "the tokens to the state's bound"
like "$(cat "$SCRATCH/big.err")" "past what a state holds" "and it says so"
claude big '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s","total_cost_usd":1e301}'
is "$(st big spend.cost_usd)" 1000000000000000 \
    "the lifetime cost saturates, never goes back to null"
claude neg '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s","total_cost_usd":-5,"usage":{"input_tokens":"inf"}}'
is "$("$CBEXEC" --status neg >/dev/null 2>&1; echo $?)/$(st neg spend.cost_usd)" \
    0/null "a negative cost and a string of inf: not counted"

# 2. A reset time past year 9999: cut to 31 days ahead, the state and the
# account still load.
cb --name far --account acct -- sh -c \
    'echo "Claude AI usage limit reached|253402300800" >&2; exit 1' \
    >/dev/null 2>err
is "$?" 120 "a usage limit with a reset in year 10000: OPEN until then"
like "$(cat err)" "more than 31 days ahead" "it says the time was cut"
ra=$(st far retry_at)
like "$ra" '^20[0-9][0-9]-' "retry_at is a four-digit year"
now=$(date +%s)
ok "$(perl -MTime::Local -e '$ARGV[0] =~ /^(\d+)-(\d+)-(\d+)T(\d+):(\d+)/;
    my $t = timegm(0, $5, $4, $3, $2 - 1, $1);
    exit($t > $ARGV[1] + 30 * 86400 && $t <= $ARGV[1] + 31 * 86400 + 60 ? 0 : 1)' \
    "$ra" "$now"; echo $?)" "31 days ahead"
cb --name other --account acct -- true >/dev/null 2>&1
is "$?" 120 "another circuit on the account: refused, not 125"
cb --name far2 -- sh -c 'echo "rate limited; retry-after: 9999999999999" >&2; exit 1' \
    >/dev/null 2>&1
"$CBEXEC" --status far2 >/dev/null 2>&1
is "$?" 0 "a retry-after of 9999999999999 s: the state loads"

# 3. A session id is an opaque id, or it is dropped.
claude sid '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"--dangerously-skip-permissions"}'
is "$(st sid session_id)" null "an id that is an option is not kept"
like "$(cat "$SCRATCH/sid.err")" "not an opaque id" "and it says so"
cb --name sid -- sh -c 'echo "${CBEXEC_SESSION_ID-unset}"' >out 2>/dev/null
is "$(cat out)" unset "the next run gets no CBEXEC_SESSION_ID"
claude sid2 '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"d4f11475-7d8e-40a9-b9f5-7cc48c273144"}'
cb --name sid2 -- sh -c 'echo "$CBEXEC_SESSION_ID"' >out 2>/dev/null
is "$(cat out)" d4f11475-7d8e-40a9-b9f5-7cc48c273144 "an opaque id is passed on"
claude sid3 '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"a b"}'
is "$(st sid3 session_id)" null "an id with a space is not kept"

# 4. Long task names: cut to 256 bytes; the variable stays bounded.
cb --name sk -- true >/dev/null 2>&1
big=$(head -c 70000 /dev/zero | tr '\0' a)
"$CBEXEC" -q --skip --task "$big" sk
"$CBEXEC" -q --skip --task "b$big" sk
cb --name sk -- sh -c 'echo ${#CBEXEC_SKIPPED_TASKS}' >out 2>/dev/null
is "$?/$(cat out)" 0/513 "two skipped names of 70 kB: 256 bytes each"
printf -- '---CBEXEC_STATUS---\nSTATUS: BLOCKED\nTASK: %s\n---END_CBEXEC_STATUS---\n' \
    "$(head -c 5000 /dev/zero | tr '\0' c)" >"$SCRATCH/task.txt"
cb --name tk -- sh -c "cat '$SCRATCH/task.txt'; exit 1" >/dev/null 2>&1
is "$(st tk last_failed_task | wc -c | tr -d ' ')" 256 \
    "a task from the status block: cut to 256 bytes"
# exec(2) refusing the environment is cbexec's error, not the command's.
if (ulimit -s 256 2>/dev/null) && [ -z "$UNDER_VALGRIND" ]; then
	n=$(st sk iteration)
	# the first size of environment where cbexec starts but the command
	# (with the CBEXEC_* variables added) cannot
	pad=118000 r=0
	while [ $pad -lt 131072 ]; do
		(ulimit -s 256
		 PAD=$(head -c $pad /dev/zero | tr '\0' p) cb --name sk -- true \
		    >/dev/null 2>err)
		r=$?
		[ $r -ne 0 ] && break
		n=$(st sk iteration)
		pad=$((pad + 200))
	done
	is "$r" 125 "an environment exec(2) refuses: 125"
	like "$(cat err)" "too big for exec" "saying so"
	is "$(st sk iteration)/$(st sk state)" "$n/CLOSED" \
	    "the run is not counted against the command"
else
	skip "ulimit -s not available"
	skip "ulimit -s not available"
	skip "ulimit -s not available"
fi

# 5. --status --all escapes the reason and the name.
cb --name esc -- true >/dev/null 2>&1
"$CBEXEC" -q --trip --reason "$(printf 'evil\033[2Jx\nline2')" esc
out=$("$CBEXEC" --status --all 2>/dev/null)
case $out in *"$(printf '\033')"*) r=1 ;; *) r=0 ;; esac
ok $r "--status --all: no raw escape byte"
like "$out" 'evil\\x1b\[2Jx\\nline2' "the reason escaped, on its line"

# 7. A reset of a corrupt state with a --log it cannot open: nothing moved.
echo '{ broken' >"$CBEXEC_STATE_DIR/bad.json"
mkdir "$SCRATCH/logdir"
"$CBEXEC" --reset-circuit --log "$SCRATCH/logdir" bad >/dev/null 2>err
is "$?" 125 "--reset-circuit with a --log that is a directory: 125"
ok "$([ -f "$CBEXEC_STATE_DIR/bad.json" ] && echo 0 || echo 1)" \
    "the corrupt state is still where it was"
ok "$(ls "$CBEXEC_STATE_DIR" | grep -q corrupt && echo 1 || echo 0)" \
    "and nothing was moved aside"
done_testing
