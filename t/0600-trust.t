#!/bin/sh
# SPDX-License-Identifier: ISC
# The trust boundary (SPEC §1, §6): nothing the command can write in its
# work tree is taken as an order, the directory's circuit lives outside
# the tree, the lock is the inode at its path, git probes run no program
# the repository names, files of another user are refused, and no FIFO,
# device, directory or link planted at a path makes cbexec hang or write
# through it.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }
mark() { test -e "$SCRATCH/marker" && echo yes || echo no; }
# within T0 SECS DESC: less than SECS since T0; not judged under valgrind.
within() {
	if [ -n "$UNDER_VALGRIND" ]; then skip "timing under valgrind: $3"
	else ok "$([ $(( $(date +%s) - $1 )) -lt "$2" ]; echo $?)" "$3"; fi
}
export XDG_CONFIG_HOME="$SCRATCH/xdg"

# --- The directory's circuit: dir-BASE-HASH.json in the state dir.
mkdir -p "proj one!" && cd "proj one!" || exit 1
cb -q -- true
h=$(printf '%s' "$(pwd -P)" | sha256sum | cut -c1-12)
dflt="$CBEXEC_STATE_DIR/dir-proj_one_-$h.json"
ok "$(test -f "$dflt"; echo $?)" "default circuit: dir-BASE-HASH.json in the state dir"
ok "$(test -e .cbexec && echo 1 || echo 0)" "default circuit: nothing in the work tree"
err=$(cb -- false 2>&1)
like "$err" "^cbexec\[dir-proj_one_-$h\]: run 2 exited 1" "label: the file's name without .json"
like "$(cb --status | sed -n 1p)" "^circuit: +dir-proj_one_-$h\$" \
    "--status with no CIRCUIT finds it"
cb -q --trip 2>/dev/null
out=$(cb -- true 2>&1); is "$?" 120 "tripped, refused"
like "$out" "Reset: cbexec --reset-circuit --name dir-proj_one_-$h" \
    "the RESET hint names it from anywhere"
# What the command does in its tree cannot re-arm it.
cb -- true 2>/dev/null; is "$?" 120 "git clean -fdx in the tree leaves the circuit"
(cd / && "$CBEXEC" --reset-circuit --name "dir-proj_one_-$h" 2>/dev/null)
is "$(jget "$dflt" state)" CLOSED "the hint's command resets it from elsewhere"
cd "$SCRATCH" || exit 1
# The old place of the directory's circuit (an upgrade): its state moves
# to the new one, so a circuit tripped before stays tripped.
mkdir -p old/.cbexec && cd old || exit 1
printf '{"version":1,"state":"OPEN","open_reason":"tripped by hand"}\n' > .cbexec/state.json
err=$(cb --status 2>&1); is "$?" 125 "before any run, --status: no such circuit yet"
like "$err" "\.cbexec/state\.json, this directory's circuit before, is no longer read here: the next run moves it to $CBEXEC_STATE_DIR/dir-old-" \
    "... saying where its old state is going"
err=$(cb -q -- touch ran-old 2>&1); is "$?" 120 "an OPEN .cbexec/state.json stays OPEN after an upgrade: 120"
ok "$(test -e ran-old && echo 1 || echo 0)" "... the command is not run"
like "$err" "this directory's circuit \(OPEN: tripped by hand\) moved from \.cbexec/state\.json to $CBEXEC_STATE_DIR/dir-old-" \
    "... and cbexec says where it went"
new=$(ls "$CBEXEC_STATE_DIR"/dir-old-*.json)
is "$(jget "$new" state)/$(jget "$new" open_reason)" "OPEN/tripped by hand" "... the new state file holds it"
ok "$(test -e .cbexec/state.json.migrated && ! test -e .cbexec/state.json; echo $?)" \
    "... the old file is renamed .migrated, moved once only"
err=$(cb -q -- true 2>&1); is "$?:$err" "120:" "the next run: refused, nothing more said"
cb -q --reset-circuit 2>/dev/null; cb -q -- true; is "$?" 0 "a reset closes it as any circuit"
cd "$SCRATCH" || exit 1
mkdir -p old2/.cbexec && cd old2 || exit 1
printf '{"version":1,"state":"CLOSED","consecutive_errors":3}\n' > .cbexec/state.json
cb -q -- false 2>/dev/null
is "$(jget "$(ls "$CBEXEC_STATE_DIR"/dir-old2-*.json)" consecutive_errors)" 4 \
    "a CLOSED old state moves with its counters"
cd "$SCRATCH" || exit 1
mkdir -p old3/.cbexec && cd old3 || exit 1
printf '{"version":1,"state":"OP' > .cbexec/state.json
err=$(cb -q -- touch ran-old3 2>&1); is "$?" 125 "an unreadable .cbexec/state.json: 125, never passed over"
ok "$(test -e ran-old3 && echo 1 || echo 0)" "... the command is not run"
like "$err" "\.cbexec/state\.json, this directory's circuit before, cannot be moved to .*: .*it may hold an OPEN circuit: review it, then move it there to keep it, or aside to start afresh" \
    "... saying why and what to do"
mv .cbexec/state.json .cbexec/state.json.old
cb -q -- true; is "$?" 0 "moved aside: a fresh circuit"
cd "$SCRATCH" || exit 1

# --- Config: the user's is read; the work tree's only once approved.
mkdir -p xdg/cbexec wt/.cbexec && cd wt || exit 1
echo '{"timeout": "0.2s"}' > "$XDG_CONFIG_HOME/cbexec/config.json"
cb -q --name u -- sleep 2; is "$?" 124 "the user's config is read"
rm "$XDG_CONFIG_HOME/cbexec/config.json"
cat > .cbexec/config.json <<J
{"timeout": "0.2s", "on_state_change": "touch $SCRATCH/marker",
 "half_open_after": 1}
J
err=$(cb -q --name w -- sleep 0.5 2>&1); rc=$?
is "$rc" 0 "an unapproved work-tree config is not read"
is "$(printf '%s\n' "$err" | wc -l)" 1 "... with a one-line notice"
like "$err" "^cbexec: $(pwd -P)/\.cbexec/config\.json is not approved and was ignored.*--allow-config" \
    "... which says how to approve it"
is "$(mark)" no "... and its hook never runs"
out=$("$CBEXEC" --allow-config 2>&1); is "$?" 0 "--allow-config approves .cbexec/config.json"
like "$out" "approved $(pwd -P)/\.cbexec/config\.json" "... and says so"
ok "$(ls "$CBEXEC_STATE_DIR/allow/" | grep -Eqx '[0-9a-f]{64}'; echo $?)" \
    "... kept in the state dir"
cb -q --name w2 -- sleep 2; is "$?" 124 "an approved config is read"
echo '{"timeout": "0"}' > .cbexec/config.json
err=$(cb -q --name w -- true 2>&1); is "$?" 125 "a changed approved config: 125"
like "$err" "changed since it was approved; review it, then approve it again with: cbexec --allow-config" \
    "... says how to review and re-approve"
"$CBEXEC" --allow-config .cbexec/config.json >/dev/null; cb -q --name w3 -- true
is "$?" 0 "re-approved: read again"
echo '{"timeuot": 1}' > bad.json
err=$("$CBEXEC" --allow-config bad.json 2>&1); is "$?" 125 "a config that would be refused is not approved"
like "$err" "unknown key 'timeuot'" "... saying why"
rm .cbexec/config.json && mkfifo .cbexec/config.json
t0=$(date +%s)
err=$(timeout 5 "$CBEXEC" -q --name w4 -- true 2>&1)
is "$?" 125 "an approved config replaced by a FIFO: refused, no hang"
cd "$SCRATCH" && mkdir -p wt2/.cbexec && cd wt2 && mkfifo .cbexec/config.json
err=$(timeout 5 "$CBEXEC" -q --name w4 -- true 2>&1)
is "$?" 0 "an unapproved FIFO config: ignored, no hang"
err=$(timeout 5 "$CBEXEC" --allow-config 2>&1); is "$?" 125 "a FIFO cannot be approved"
like "$err" "not a regular file" "... not a regular file"
err=$(timeout 5 "$CBEXEC" --config .cbexec/config.json -q --name w4 -- true 2>&1)
is "$?" 125 "--config FIFO: refused at once"
within "$t0" 5 "none of it waited on the FIFO (a wait is 5 s)"
cd "$SCRATCH" || exit 1

# --- Lock identity: with --follow-symlinks the target is locked, so a
# run through a link and --trip of the file exclude each other.
cb -q --state real.json -- true
ln -s real.json link.json
cb -q --state link.json --follow-symlinks -- sleep 0.6 &
poll_until 3 test -e real.json.lock
sleep 0.1
cb -q --trip --state real.json 2>/dev/null; is "$?" 0 "--trip waits for the run through the link"
wait
is "$(jget real.json state)" OPEN "the trip is not undone by the run's save"
ok "$(test -e link.json.lock && echo 1 || echo 0)" "no lock beside the link"
# A lock file removed while held is taken again before the save.
cb -q --name rm -- sh -c 'rm "$CBEXEC_STATE_DIR/rm.json.lock"; sleep 0.2'
is "$?" 0 "lock removed during the run: still saved"
ok "$(test -f "$CBEXEC_STATE_DIR/rm.json.lock"; echo $?)" "... and the lock file is back"
is "$(jget "$CBEXEC_STATE_DIR/rm.json" iteration)" 1 "... with the run counted"

# --- git: no program the repository's config names ever runs.
if command -v git >/dev/null 2>&1; then
	mkdir -p repo && cd repo || exit 1
	git init -q . && git config user.email t@t && git config user.name t
	printf '#!/bin/sh\ntouch %s/marker\n' "$SCRATCH" > ../evil.sh
	chmod +x ../evil.sh
	echo 'one' > f.txt && echo 'x' > g.bin
	git add f.txt g.bin && git commit -qm init
	git config core.fsmonitor "$SCRATCH/evil.sh"
	git config filter.x.clean "$SCRATCH/evil.sh"
	git config filter.x.smudge "$SCRATCH/evil.sh"
	git config filter.x.process "$SCRATCH/evil.sh"
	git config filter.x.required true
	git config 'filter.a=b.c.clean' "$SCRATCH/evil.sh"
	git config diff.x.textconv "$SCRATCH/evil.sh"
	git config diff.x.command "$SCRATCH/evil.sh"
	git config core.hooksPath "$SCRATCH/hooks"
	mkdir -p "$SCRATCH/hooks" && cp ../evil.sh "$SCRATCH/hooks/post-index-change"
	printf '* filter=x diff=x\n*.bin filter=a=b.c\n' > .gitattributes
	echo two > f.txt
	rm -f "$SCRATCH/marker"
	"$CBEXEC" -q --no-prompt --name g -- sh -c 'echo three > f.txt'
	is "$?" 0 "a run in a hostile repository"
	is "$(mark)" no "no fsmonitor, filter, diff driver or hook of its config ran"
	is "$(jget "$CBEXEC_STATE_DIR/g.json" no_progress_count)" 0 \
	    "... and the edit still counts as progress"
	"$CBEXEC" -q --no-prompt --name g -- true
	is "$(jget "$CBEXEC_STATE_DIR/g.json" no_progress_count)" 1 \
	    "... a run that changes nothing does not"
	is "$(mark)" no "... nor on the second run"
	cd "$SCRATCH" || exit 1
else
	skip "git not installed"; skip "git"; skip "git"; skip "git"; skip "git"
fi

# --- Ownership (StrictModes): another user's directory or file, or one
# others may write, is refused naming the path and the owner.
owner=nobody
mkdir -p others && chown 65534:65534 others 2>/dev/null
if [ "$(stat -c %u others)" = 65534 ]; then
	err=$(CBEXEC_STATE_DIR="$SCRATCH/others" cb -q --name x -- true 2>&1)
	is "$?" 125 "a state dir of another user: 125"
	like "$err" "others: owned by $owner \(uid 65534\), not by you; not trusted" \
	    "... naming the path and the owner"
	mkdir -p mine && touch mine/x.json && chown 65534 mine/x.json
	err=$(CBEXEC_STATE_DIR="$SCRATCH/mine" cb -q --name x -- true 2>&1)
	is "$?" 125 "a state file of another user: 125"
	like "$err" "mine/x.json: owned by $owner" "... named"
	rm mine/x.json && touch mine/x.json.lock && chown 65534 mine/x.json.lock
	err=$(CBEXEC_STATE_DIR="$SCRATCH/mine" cb -q --name x -- true 2>&1)
	is "$?" 125 "a lock file of another user: 125"
	rm -f mine/x.json.lock
else
	skip "not root: cannot give a directory to another user"
	skip "chown"; skip "chown"; skip "chown"; skip "chown"
fi
mkdir -p gw && chmod 0775 gw
err=$(CBEXEC_STATE_DIR="$SCRATCH/gw" cb -q --name x -- true 2>&1)
is "$?" 125 "a group-writable state dir: 125"
like "$err" "gw: writable by its group \(mode 0775\); not trusted" "... says why"
mkdir -p sticky && chmod 1777 sticky
cb -q --state sticky/s.json -- true; is "$?" 0 "a sticky world-writable dir (/tmp) is fine"
chmod 0666 sticky/s.json
err=$(cb -q --state sticky/s.json -- true 2>&1); is "$?" 125 "a world-writable state file: 125"
# As a second user: the directory another user made in /tmp.
# (Not under valgrind: another user cannot write valgrind's temp files.)
# The second user runs a copy of the binary in the scratch directory: the
# tree may be where only root can reach (a clone in /root, mode 0700).
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
    [ -z "$UNDER_VALGRIND" ]; then
	mkdir -p shared && chmod 0755 shared && chown 65534 shared
	cb -q --state shared/s.json -- true 2>/dev/null
	is "$?" 125 "root refuses a state dir nobody made for it"
	chmod 0755 "$SCRATCH"
	mkdir -p nob && chown 65534 nob
	cp "$CBEXEC" nob/cbexec && chmod 0755 nob/cbexec
fi
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
    [ -z "$UNDER_VALGRIND" ] && as_nobody test -x "$SCRATCH/nob/cbexec"; then
	as_nobody env HOME="$SCRATCH/nob" \
	    CBEXEC_STATE_DIR="$SCRATCH/nob/st" "$SCRATCH/nob/cbexec" -q \
	    --no-prompt --progress exit --name n -- true
	is "$?" 0 "a second user runs in a state dir of its own"
	mkdir -p rootdir
	err=$(as_nobody env HOME="$SCRATCH/nob" "$SCRATCH/nob/cbexec" -q \
	    --no-prompt --progress exit --state "$SCRATCH/rootdir/s.json" \
	    -- true 2>&1)
	ok "$(test "$?" = 125 || test "$?" = 0; echo $?)" "a second user in root's dir: no crash"
elif [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
    [ -z "$UNDER_VALGRIND" ]; then
	skip "the scratch directory $SCRATCH is out of reach of a second user (uid 65534): set TMPDIR to a directory it can reach"
	skip "no second user"
else
	skip "not root, no setpriv, or under valgrind: no second user"
	skip "setpriv"; skip "setpriv"
fi

# --- Files that are not regular files, and links.
mkfifo lg.fifo
t0=$(date +%s)
err=$(timeout 5 "$CBEXEC" -q --name ff --log lg.fifo -- true 2>&1)
is "$?" 125 "--log FIFO: 125 at once"
like "$err" "lg.fifo: not a regular file" "... says why"
echo secret > private && chmod 0600 private && ln -s private lg.link
err=$(cb -q --name ff --log lg.link -- true 2>&1); is "$?" 125 "--log through a link: refused"
is "$(cat private)" secret "... nothing appended to the link's target"
cb -q --name ff --log lg.link --follow-symlinks -- true; is "$?" 0 "... unless --follow-symlinks"
ln -s /dev/null m.link
err=$(cb --name ff --metrics m.link -- true 2>&1)
like "$err" "m.link: is a symbolic link" "--metrics link: refused"
ok "$(test -L m.link; echo $?)" "... the link stays"
err=$(cb --name ff --metrics /dev/null -- true 2>&1)
like "$err" "/dev/null: not a regular file" "--metrics on a device: refused"
ok "$(test -c /dev/null; echo $?)" "... the device stays"
mkdir -p circuits.json
err=$(timeout 5 "$CBEXEC" --reset-circuit --state circuits.json 2>&1)
is "$?" 125 "--reset-circuit of a directory: 125"
ok "$(test -d circuits.json; echo $?)" "... never renamed"
mkfifo fifo.json
err=$(timeout 5 "$CBEXEC" --reset-circuit --state fifo.json 2>&1)
is "$?" 125 "--reset-circuit of a FIFO: 125 at once"
ok "$(test -p fifo.json; echo $?)" "... never renamed"
# The status file read back: a FIFO planted there is not waited on.
t1=$(date +%s)
err=$(timeout 10 "$CBEXEC" --no-prompt --progress exit --name sf -t 5 -- \
    sh -c 'rm -f "$CBEXEC_STATUS_FILE"; mkfifo "$CBEXEC_STATUS_FILE"' 2>&1)
is "$?" 0 "a FIFO as the status file: no hang"
within "$t1" 5 "... at once (a wait is 5 s)"
like "$err" "status file: not a regular file" "... and a warning"
within "$t0" 20 "nothing here waited"
done_testing
