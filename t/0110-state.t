#!/bin/sh
# SPDX-License-Identifier: ISC
# The state file and its lock: corrupt files are never replaced, a second
# cbexec is BUSY, kill -9 leaves a parseable file, symlinks are refused.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }

# Missing -> fresh; file 0600 in a 0700 directory cbexec created.
cb --state deep/er/st.json -- true; is "$?" 0 "missing state: fresh circuit"
is "$(stat -c %a deep/er/st.json)" 600 "state file mode 0600"
is "$(stat -c %a deep/er)" 700 "created directory mode 0700"
is "$(jget deep/er/st.json version)" 1 "version 1"
like "$(jget deep/er/st.json updated_at)" '^20[0-9-]{8}T[0-9:]{8}\.[0-9]{3}Z$' "updated_at ISO-8601 ms"

# Corrupt: 125 naming the file, never overwritten, for runs and --status.
printf '{"version": 1, "state": "OPEN", "iter' > bad.json
cp bad.json bad.orig
err=$(cb --state bad.json -- touch ran 2>&1); is "$?" 125 "corrupt state: 125"
like "$err" "bad.json" "corrupt state: message names the file"
cmp -s bad.json bad.orig; ok $? "corrupt state: file unchanged"
ok "$(test ! -e ran; echo $?)" "corrupt state: command not run"
"$CBEXEC" --status --state bad.json >/dev/null 2>&1; is "$?" 125 "--status on corrupt: 125"
cmp -s bad.json bad.orig; ok $? "--status: file unchanged"
echo '{"version": 1, "state": "BOGUS"}' > bad2.json
cb --state bad2.json -- true 2>/dev/null; is "$?" 125 "bad state name: 125"
echo '{"version": 1, "state": "CLOSED", "iteration": "x"}' > bad3.json
err=$(cb --state bad3.json -- true 2>&1); is "$?" 125 "bad field type: 125"
like "$err" "iteration" "bad field type: names the field"
echo '{"version": 99, "state": "CLOSED"}' > new.json
err=$(cb --state new.json -- true 2>&1); is "$?" 125 "newer version refused: 125"
like "$err" "version" "newer version: says so"
cp new.json new.orig
err=$("$CBEXEC" --reset-circuit --state new.json 2>&1); is "$?" 125 "--reset-circuit on a newer version: refused, 125"
cmp -s new.json new.orig; ok $? "--reset-circuit on a newer version: file unchanged"
ok "$(! ls new.json.corrupt-* >/dev/null 2>&1; echo $?)" "--reset-circuit on a newer version: nothing moved aside"
err=$("$CBEXEC" --reset-circuit --state bad.json 2>&1); is "$?" 0 "--reset-circuit on corrupt: 0"
like "$err" "corrupt-" "--reset-circuit says where it moved it"
ls bad.json.corrupt-* >/dev/null 2>&1; ok $? "corrupt file moved aside"
cmp -s bad.json.corrupt-* bad.orig; ok $? "moved-aside file is the original"
is "$(jget bad.json state)" CLOSED "fresh CLOSED after reset"

# Symlinks are refused unless --follow-symlinks.
cb --state real.json -- true
ln -s real.json link.json
cb --state link.json -- true 2>err; is "$?" 125 "symlinked state refused: 125"
like "$(cat err)" "symbolic link" "symlink: says so"
cb --state link.json --follow-symlinks -- true; is "$?" 0 "--follow-symlinks accepts it"
ok "$(test -L link.json; echo $?)" "the link is still a link"
is "$(jget real.json iteration)" 2 "the target was updated"
"$CBEXEC" --reset-circuit --state link.json 2>err; is "$?" 125 "--reset-circuit on a symlink: refused, 125"
like "$(cat err)" "symbolic link" "--reset-circuit on a symlink: says so"
ok "$(test -L link.json; echo $?)" "--reset-circuit on a symlink: the link is left alone"
"$CBEXEC" --reset-circuit --follow-symlinks --state link.json 2>/dev/null; is "$?" 0 "--reset-circuit --follow-symlinks: resets through it"
ok "$(test -L link.json; echo $?)" "--reset-circuit --follow-symlinks: still a link"

# BUSY: a second cbexec on the same circuit exits 123 at once.
rm -f ready
# Started directly, not through cb(): $! must be cbexec itself.
# It holds the lock until the test ends it (TERM, below), valgrind or not.
"$CBEXEC" -q --no-prompt --progress exit --name busy -t 120 -- sh -c 'touch ready; sleep 120' &
bg=$!
poll_until 5 test -f ready
start=$(date +%s%N)
err=$(cb --name busy -- true 2>&1); rc=$?
el=$(( ($(date +%s%N) - start) / 1000000 ))
is "$rc" 123 "second cbexec: BUSY 123"
like "$err" "busy" "BUSY: says so"
ok "$([ "$el" -lt 2000 ]; echo $?)" "BUSY at once (${el}ms)"
cb --name busy --exit-codes busy=93 -- true 2>/dev/null; is "$?" 93 "--exit-codes busy=93"
"$CBEXEC" --status --name busy >/dev/null; is "$?" 0 "--status takes no lock"
cb --name busy --wait-lock=0.2 -- true 2>/dev/null; is "$?" 123 "--wait-lock=0.2 gives up: 123"
err=$(cb --name busy --wait-lock --budget 0.2 -- true 2>&1); is "$?" 124 "--wait-lock within --budget 0.2: 124"
like "$err" "budget ran out waiting for the lock" "--wait-lock within the budget: says so"
kill -TERM $bg; wait $bg
cb --name busy --wait-lock -- true; is "$?" 0 "--wait-lock after the holder is gone: 0"

# --wait-lock waits for the holder to finish.
rm -f ready
"$CBEXEC" -q --no-prompt --progress exit --name wl -t 10 -- sh -c 'touch ready; sleep 0.3' &
bg=$!
poll_until 5 test -f ready
cb --name wl --wait-lock -- true; is "$?" 0 "--wait-lock waits, then runs"
wait $bg

# kill -9 of cbexec mid-run leaves a parseable file that never goes back.
i=0; prev=0; good=0
while [ $i -lt 20 ]; do
	i=$((i + 1))
	"$CBEXEC" -q --no-prompt --progress exit --state k9.json --loop -- true &
	bg=$!
	sleep 0.0$((i % 9 + 1))
	kill -9 $bg; wait $bg 2>/dev/null
	# Killed before its first save: no file yet, which is fine.
	if [ ! -e k9.json ] && [ "$prev" -eq 0 ]; then good=$((good + 1)); continue; fi
	n=$(jget k9.json iteration 2>/dev/null)
	if [ -n "$n" ] && [ "$n" != null ] && [ "$n" -ge "$prev" ]; then good=$((good + 1)); prev=$n; fi
done
is "$good" 20 "kill -9 at random moments: always parseable, iteration never goes back"
done_testing
