#!/bin/sh
# SPDX-License-Identifier: ISC
# A command that stops cbexec (kill -STOP $PPID) while its circuit is
# held in a shared store (SPEC §10, "Exclusive under faults"; §11): the
# stopped cbexec renews nothing, so the watchdog ends the command by the
# lease's local deadline -- before Redis lets the lease go -- and another
# host then runs, never beside it.  The stopped cbexec, once continued,
# finds its lease gone and saves nothing (125).
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"
redis_start
ms() { echo $(( $(date +%s%N) / 1000000 )); }
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(ps -o stat= -p "$1" | cut -c1)" = Z ]; }
stopped() { [ "$(ps -o stat= -p "$1" | cut -c1)" = T ]; }
if [ -n "$UNDER_VALGRIND" ]; then LEASE=6s; else LEASE=1500ms; fi
S="--store $REDIS_URL --store-lease $LEASE"

rm -f c.pid
./host 1 $S --name l --no-prompt -t 60 -- sh -c 'echo $$ >c.pid
    kill -STOP $PPID; exec flock -n '"$SCRATCH"'/l.lock sleep 60' 2>errA & A=$!
poll_until 20 test -s c.pid
c=$(cat c.pid)
poll_until 10 stopped "$A"; ok $? "the command stopped cbexec"
poll_until 20 gone "$c"; ok $? "... and is ended by the lease's deadline, not --timeout (60s)"
ok "$(stopped "$A"; echo $?)" "... while cbexec is still stopped"
# The lease lapses in Redis after the command is dead: another host runs.
./host 2 $S --name l --no-prompt --wait-lock=20s -- \
    flock -n "$SCRATCH/l.lock" touch second 2>errB; rc=$?
is "$rc:$([ -e second ] && echo ran)" "0:ran" "another host runs once the lease is gone, never beside the command"
kill -CONT "$A"; wait "$A"; rc=$?
is "$rc" 125 "the stopped holder, once continued, exits 125"
like "$(cat errA)" "lease|renew" "... saying its lease could not be kept"
# Host 2 counted the stopped holder's run first (its start record, the
# lease lapsed: SPEC §11), then ran its own; host 1 saved nothing after.
is "$(jget /dev/stdin iteration <<EOF
$(rcli GET cbexec:circuit:l)
EOF
)" 2 "... and saved nothing over the other host's run"
like "$(rcli GET cbexec:circuit:l)" "cbexec was killed during run 1" \
    "... whose run host 2 counted first, as killed"
done_testing
