#!/bin/sh
# SPDX-License-Identifier: ISC
# A run is on record before it starts (SPEC §11), in a shared store: the
# start record is cbexec:run:NAME, written fenced before the command starts
# and deleted by the run's save; a holder killed during its run has that
# run counted by the next holder once its lease lapsed; a store that is
# down when the record is written starts nothing (125); the operator verbs
# and --status work with a record there.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"

redis_start
S="--store $REDIS_URL"
host() { "$SCRATCH/host" "$@"; }

# ---- the record and the save ----
host 1 $S --name a -- sh -c 'rc=$(redis-cli -s "$1" GET cbexec:run:a); echo "$rc" >rec' \
    sh "$REDIS_SOCK" 2>err; rc=$?
is "$rc" 0 "a run over the store"
like "$(cat rec)" '^\{"run":1,"generation":0,"pid":[0-9]+,"host":"[^"]*","started":"20' \
    "while it runs, cbexec:run:NAME says run 1 began"
is "$(rcli EXISTS cbexec:run:a)" 0 "its save deleted the record"

# ---- a holder killed during its run: the next holder counts it ----
host 1 $S --store-lease 1s --name k -- sh -c 'echo boom >&2; kill -9 $PPID; exit 1' \
    2>/dev/null; rc=$?
is "$rc" 137 "the holder is killed by its own command"
like "$(rcli GET cbexec:run:k)" '"run":1,' "its run is on record"
host 2 $S --name k --wait-lock=10s -- true 2>err; rc=$?
is "$rc" 0 "another host takes the circuit once the lease lapsed"
rcli GET cbexec:circuit:k >k.json
is "$(jget k.json iteration):$(jget k.json history.0.type):$(jget k.json history.0.class)" \
    "2:killed:recoverable" "it counted the killed run first, then its own"
is "$(jget k.json history.0.reason)" "cbexec was killed during run 1" \
    "the killed run's message"
like "$(cat err)" "run 1 \(cbexec pid [0-9]+ on [^ ]*, since 20[^)]*\) was never recorded" \
    "and said so"
is "$(rcli EXISTS cbexec:run:k)" 0 "no record is left"

# The same command every time ends STUCK (a lower threshold: each lease
# has to lapse first).
i=0
while [ $i -lt 3 ]; do
	i=$((i + 1))
	host 1 $S --store-lease 1s --wait-lock=10s --same-error-threshold 2 \
	    --name loop -- sh -c 'echo run >>loop.runs; kill -9 $PPID' \
	    2>loop.err; rc=$?
	[ "$rc" = 137 ] || break
done
is "$i:$rc:$(wc -l <loop.runs | tr -d ' ')" "3:121:2" \
    "killed twice, the third holder counts it: STUCK (121), not run"
is "$(rcli GET cbexec:circuit:loop | jget /dev/stdin state)" OPEN "the circuit is OPEN"
"$CBEXEC" $S --history loop >hist
is "$(grep -c 'recoverable killed' hist)" 2 "--history over the store shows the killed runs"

# ---- the operator verbs and --status with a record there ----
host 1 $S --store-lease 1s --name op -- sh -c 'kill -9 $PPID' 2>/dev/null
"$CBEXEC" $S --status op >st.out 2>&1; rc=$?
is "$rc:$(grep -c CLOSED st.out)" "0:1" "--status works, counts nothing (no lock)"
is "$(rcli EXISTS cbexec:circuit:op)" 0 "... and writes nothing"
poll_until 5 sh -c '[ "$(redis-cli -s "$1" EXISTS cbexec:lock:op)" = 0 ]' sh \
    "$REDIS_SOCK"
"$CBEXEC" $S --trip --reason maint op 2>err; rc=$?
rcli GET cbexec:circuit:op >op.json
is "$rc:$(jget op.json iteration):$(jget op.json state):$(jget op.json history.0.type)" \
    "0:1:OPEN:killed" "--trip counts the killed run, then trips"
is "$(rcli EXISTS cbexec:run:op)" 0 "... and the record went with its save"
"$CBEXEC" $S --reset-circuit op 2>err; rc=$?
is "$rc:$(rcli GET cbexec:circuit:op | jget /dev/stdin state)" "0:CLOSED" \
    "--reset-circuit over the store"

# ---- a store down when the record is written: nothing starts ----
# git, asked for the progress fingerprint right before the record is
# written, stops the store on the way.
if command -v git >/dev/null 2>&1; then
	realgit=$(command -v git)
	mkdir -p bin repo
	cat >bin/git <<EOF
#!/bin/sh
if [ -e "$SCRATCH/stop-store" ]; then
	rm -f "$SCRATCH/stop-store"
	kill -STOP $REDIS_PID
fi
exec "$realgit" "\$@"
EOF
	chmod +x bin/git
	(cd repo && "$realgit" init -q . && "$realgit" -c user.name=t \
	    -c user.email=t@t commit -q --allow-empty -m init)
	touch stop-store
	(cd repo && PATH="$SCRATCH/bin:$PATH" "$CBEXEC" $S --store-timeout 300ms \
	    --progress git --name down -- touch "$SCRATCH/down-ran") 2>err
	rc=$?
	kill -CONT "$REDIS_PID"
	is "$rc:$([ -e down-ran ] && echo ran)" "125:" \
	    "the store stopped answering before the record: 125, not run"
	like "$(cat err)" "store unix://.*not running the command" \
	    "naming the store and saying the command was not run"
	ok "$([ ! -e stop-store ]; echo $?)" "(the store was stopped at the record)"
else
	skip "git not installed"; skip "git not installed"; skip "git not installed"
fi
# A store gone: the same.
redis_kill
"$CBEXEC" $S --store-timeout 300ms --name gone -- touch gone-ran 2>err; rc=$?
is "$rc:$([ -e gone-ran ] && echo ran)" "125:" "a store gone: 125, not run"
done_testing
