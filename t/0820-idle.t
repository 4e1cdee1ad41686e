#!/bin/sh
# SPDX-License-Identifier: ISC
# --idle-timeout (SPEC §2, §4, §9): a run that writes nothing to stdout or
# stderr (an agent: emits no event) for D is stopped as on --timeout:
# exit 124, class timeout, type idle; output on either stream restarts
# the clock, and 0 turns it off.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/fakeagent.sh"

cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }
st() { jget "$CBEXEC_STATE_DIR/$1.json" "$2"; }

t0=$(ms)
N=1 HANG=20 PIDFILE=$SCRATCH/pid cb --name agent --idle-timeout 0.3 -- \
    claude -p x >out 2>err
rc=$? t1=$(ms)
is "$rc" 124 "an agent silent past --idle-timeout: exit 124"
is "$(st agent last_error.class)/$(st agent last_error.type)" timeout/idle \
    "class timeout, type idle"
like "$(st agent last_error.message)" '^no output for 300ms \(--idle-timeout\)$' \
    "the message says how long it was silent"
ok "$([ $((t1 - t0)) -lt 10000 ] && echo 0 || echo 1)" "stopped at once (took $((t1 - t0)) ms of 20 s)"
ok "$(dead "$(cat pid)" && echo 0 || echo 1)" "the agent is gone"
like "$(cat err)" 'run 1 timed out after' "the log line says it timed out"

N=12 DELAY=0.1 cb --name busy --idle-timeout 0.5 -- claude -p x >/dev/null 2>&1
is "$?" 0 "events every 0.1s keep a run of 1.2s alive under --idle-timeout 0.5"

cb --name plain --idle-timeout 0.3 -- sh -c 'echo started; sleep 20' \
    >/dev/null 2>&1
is "$?/$(st plain last_error.type)" 124/idle "any command: silence is idle"
cb --name errs --idle-timeout 0.4 -- sh -c \
    'for i in 1 2 3 4 5 6 7 8 9 10; do echo tick >&2; sleep 0.1; done' \
    >/dev/null 2>&1
is "$?" 0 "output on stderr restarts the clock too"
cb --name off --idle-timeout 0 -- sh -c 'sleep 0.5' >/dev/null 2>&1
is "$?" 0 "--idle-timeout 0: no limit"
cb --name both --timeout 0.3 --idle-timeout 10 -- sleep 5 >/dev/null 2>&1
is "$?/$(st both last_error.type)" 124/timeout "--timeout still applies beside it"
cb --name loop --loop -n 2 --idle-timeout 0.2 -- sleep 5 >/dev/null 2>&1
is "$?/$(st loop iteration)" 124/2 "an idle run counts like a timeout: the loop goes on"
printf '{"idle_timeout": "0.2"}\n' >cfg.json
cb --config cfg.json --name cfg -- sleep 5 >/dev/null 2>&1
is "$?/$(st cfg last_error.type)" 124/idle "idle_timeout from the config file"
done_testing
