#!/bin/sh
# SPDX-License-Identifier: ISC
# Operations: --log JSON Lines, --metrics textfile, --on-state-change,
# --status/--history output, circuit selection.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }

# --log: one valid JSON object per line.
cb --state l.json --log ev.log -n 3 -- false
n=0; bad=0
while IFS= read -r line; do
	n=$((n + 1))
	printf '%s' "$line" | perl -MJSON::PP -0777 -e 'decode_json(<STDIN>)' 2>/dev/null || bad=$((bad + 1))
done < ev.log
is "$bad" 0 "--log: every line is JSON"
ok "$([ "$n" -ge 6 ]; echo $?)" "--log: runs, transitions and the open block logged ($n lines)"
like "$(cat ev.log)" '"event":"run"' "--log has run events"
like "$(cat ev.log)" '"event":"state_change","iteration":2,"from_state":"CLOSED","to_state":"HALF_OPEN"' "--log has transitions (state_change)"
# Concurrent appenders never interleave within a line.
for i in 1 2 3 4; do cb --state "c$i.json" --log cc.log -n 20 --no-progress-threshold 99 -- true & done
wait
bad=$(perl -MJSON::PP -ne 'eval { decode_json($_) } or $b++; END { print $b || 0 }' cc.log)
is "$bad" 0 "--log from 4 writers: no torn lines"

# --metrics: Prometheus text format.
cb --state m.json --name mx --metrics m.prom -n 3 -- false 2>/dev/null
ok "$(test -f m.prom; echo $?)" "--metrics written"
like "$(cat m.prom)" '^cbexec_state\{circuit="[^"]+"\} 2$' "cbexec_state 2 when OPEN"
like "$(cat m.prom)" '^cbexec_runs_total\{circuit="[^"]+"\} 3$' "cbexec_runs_total"
like "$(cat m.prom)" '^# TYPE cbexec_opens_total counter$' "TYPE lines"
bad=$(grep -Ev '^(# (HELP|TYPE) [a-z_]+ .+|# cbexec state generation [0-9]+|[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? -?[0-9.eE+-]+|)$' m.prom | wc -l)
is "$bad" 0 "every metrics line is valid exposition format"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics < m.prom >/dev/null 2>&1; ok $? "promtool accepts the metrics"
fi

# --on-state-change: env and prefixed output; a failing hook is not fatal.
cb --state h.json -n 3 --on-state-change 'echo "hook $CBEXEC_FROM->$CBEXEC_TO np=$CBEXEC_NO_PROGRESS_COUNT"; exit 3' -- false 2> hook.err
is "$?" 120 "hook failure never changes the outcome"
like "$(cat hook.err)" 'hook: hook CLOSED->HALF_OPEN np=2' "hook sees FROM, TO and counters"
like "$(cat hook.err)" 'hook: hook HALF_OPEN->OPEN np=3' "hook runs on every transition"
"$CBEXEC" --reset-circuit --state h.json --on-state-change 'echo "reset from $CBEXEC_FROM np=$CBEXEC_NO_PROGRESS_COUNT"' 2> hook2.err
like "$(cat hook2.err)" 'reset from OPEN np=3' "reset hook sees the counters before the reset"
start=$(date +%s%N)
cb --state h2.json -n 2 -k 0.3 --no-progress-threshold 9 --on-state-change 'sleep 10' -- false 2>/dev/null
el=$(( ($(date +%s%N) - start) / 1000000 ))
ok "$([ "$el" -lt 6000 ]; echo $?)" "a hanging hook (sleep 10) is killed after --kill-after (${el}ms)"

# --status and --history.
out=$("$CBEXEC" --status --state h.json); is "$?" 0 "--status CLOSED: 0"
like "$out" 'CLOSED' "--status shows the state"
out=$("$CBEXEC" --history --state h.json --last 2)
is "$(printf '%s\n' "$out" | wc -l)" 2 "--history --last 2: two lines"
like "$out" 'reset' "--history shows the reset"
"$CBEXEC" --history --json --state h.json > hj
# Every event of the state's history, as the log names it: a run's error
# or progress event is a "run", an act's transition a state_change of its
# own (the same time).
is "$(perl -MJSON::PP -0777 -e 'print join " ", sort { $a cmp $b } map { $_->{timestamp} } @{decode_json(<STDIN>)}' < hj | tr ' ' '\n' | sort -u | tr '\n' ' ')" \
	"$(jget h.json history | perl -MJSON::PP -0777 -e 'print join " ", map { $_->{timestamp} } @{decode_json(<STDIN>)}' | tr ' ' '\n' | sort -u | tr '\n' ' ')" \
	"--history --json: every event's time"
is "$(perl -MJSON::PP -0777 -e 'print scalar grep { $_->{event} eq "run" } @{decode_json(<STDIN>)}' < hj)" \
	"$(jget h.json history | perl -MJSON::PP -0777 -e 'print scalar grep { $_->{event} =~ /^(error|progress)$/ } @{decode_json(<STDIN>)}')" \
	"--history --json: every run, as a run event"
out=$("$CBEXEC" --status --state none.json 2>&1); is "$?" 125 "--status of a missing circuit: 125"
like "$out" "no such circuit: none.json does not exist" "... saying so"

# Circuit selection.
CBEXEC_STATE="$SCRATCH/env.json" cb -- true
ok "$(test -f env.json; echo $?)" "CBEXEC_STATE picks the file"
cb --name byname -- true
ok "$(test -f "$CBEXEC_STATE_DIR/byname.json"; echo $?)" "--name uses CBEXEC_STATE_DIR"
(unset CBEXEC_STATE_DIR; XDG_STATE_HOME="$SCRATCH/xdg" "$CBEXEC" -q --progress exit --name x -- true)
ok "$(test -f xdg/cbexec/x.json; echo $?)" "--name falls back to XDG_STATE_HOME/cbexec"
(unset CBEXEC_STATE_DIR XDG_STATE_HOME; HOME="$SCRATCH/home" "$CBEXEC" -q --progress exit --name y -- true)
ok "$(test -f home/.local/state/cbexec/y.json; echo $?)" "... else HOME/.local/state/cbexec"
cb -- true
h=$(printf '%s' "$(pwd -P)" | sha256sum | cut -c1-12)
ok "$(test -f "$CBEXEC_STATE_DIR/dir-$(basename "$(pwd -P)")-$h.json"; echo $?)" \
    "neither: the directory's circuit in the state dir"
ok "$(test -e .cbexec && echo 1 || echo 0)" "neither: nothing written in the work tree"
done_testing
