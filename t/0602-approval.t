#!/bin/sh
# SPDX-License-Identifier: ISC
# Only the operator approves (SPEC §11): --allow-config from inside a run
# is refused however the command hides where it comes from (env -u,
# setsid, nohup, script, a copy of the binary, a process outside the run
# waiting for it); an approval record written or changed while a run goes
# on -- by hand included -- does not count and is revoked after the run,
# said on stderr and in --log, also after a kill -9 of cbexec.  The
# user's config, its directory and allow/ are trusted as ssh trusts its
# files; an approved config that vanished is said once.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$SCRATCH/xdg"
mkdir -p "$XDG_CONFIG_HOME"
cb() { "$CBEXEC" --no-prompt --progress exit "$@"; }
ALLOW=$CBEXEC_STATE_DIR/allow
mkdir -p wt/.cbexec && cd wt || exit 1
WT=$(pwd -P)
CFG=$WT/.cbexec/config.json
# The work tree's config: a hook that marks that it was read.
printf '{"on_state_change": "touch %s/read", "half_open_after": 1}\n' \
    "$SCRATCH" >.cbexec/config.json
# read_by_run: 0 when a failing run reads the config (its hook runs).
read_by_run() {
	rm -f "$SCRATCH/read"
	cb -q --name "r$1" -- false 2>/dev/null
	test -e "$SCRATCH/read"
}
records() { ls "$ALLOW" 2>/dev/null | grep -Ec '^[0-9a-f]{64}$'; }
# The record a command would write by hand: what --allow-config writes.
cat >"$SCRATCH/forge" <<'EOF'
#!/bin/sh
f=$PWD/.cbexec/config.json
h=$(printf %s "$f" | sha256sum | cut -c1-64)
mkdir -p "$CBEXEC_STATE_DIR/allow"
printf 'sha256:%s\n%s\n' "$(sha256sum <"$f" | cut -c1-64)" "$f" \
    >"$CBEXEC_STATE_DIR/allow/$h"
EOF
chmod +x "$SCRATCH/forge"

read_by_run 0; is "$?" 1 "an unapproved work-tree config is not read"

# --- --allow-config from inside a run: refused, whatever hides it.
cb -q --name in -- sh -c '
	"$(readlink /proc/$PPID/exe)" --allow-config .cbexec/config.json 2>e1; echo $? >rc1
	env -u CBEXEC_ITERATION -u CBEXEC_STATUS_FILE -u CBEXEC_CIRCUIT_STATE \
	    -u CBEXEC_NAME -u CBEXEC_PHASE setsid "$0" --allow-config 2>e2; echo $? >rc2
	env -i PATH="$PATH" HOME="$HOME" CBEXEC_STATE_DIR="$CBEXEC_STATE_DIR" \
	    nohup "$0" --allow-config >/dev/null 2>e3; echo $? >rc3
	cp "$0" ./cb-copy
	env -i PATH="$PATH" CBEXEC_STATE_DIR="$CBEXEC_STATE_DIR" \
	    setsid ./cb-copy --allow-config 2>e4; echo $? >rc4
	(setsid sh -c "env -i CBEXEC_STATE_DIR=\"$CBEXEC_STATE_DIR\" ./cb-copy --allow-config 2>e5; echo \$? >rc5" &)
	sleep 0.5' "$CBEXEC" 2>/dev/null
if [ -n "$UNDER_VALGRIND" ]; then
	# /proc/$PPID/exe is valgrind, and "$0" the wrapper script
	skip "readlink /proc/\$PPID/exe is valgrind's own (valgrind)"
	skip "valgrind"
else
	is "$(cat rc1)" 125 "from inside a run: --allow-config is refused (125)"
	like "$(cat e1)" "refused inside a run of cbexec.*only the operator approves" "... saying why"
fi
is "$(cat rc2)" 125 "... with the run's variables removed (env -u) and setsid"
is "$(cat rc3)" 125 "... with an empty environment and nohup"
if [ -n "$UNDER_VALGRIND" ]; then
	skip "a copy of the binary: the wrapper script is copied (valgrind)"
	skip "valgrind"
else
	is "$(cat rc4)" 125 "... through a copy of the binary"
	poll_until 5 test -s rc5
	is "$(cat rc5 2>/dev/null)" 125 "... from a daemon it left behind while the run went on"
fi
if command -v script >/dev/null 2>&1; then
	cb -q --name sc -- sh -c 'env -u CBEXEC_ITERATION -u CBEXEC_STATUS_FILE \
	    -u CBEXEC_CIRCUIT_STATE script -qec "$0 --allow-config" /dev/null \
	    >out.sc 2>&1; echo $? >rc6' "$CBEXEC" 2>/dev/null
	is "$(cat rc6)" 125 "... through script(1), a terminal of its own"
else
	skip "script(1) not installed"
fi
is "$(records)" 0 "no approval was written"
read_by_run 1; is "$?" 1 "... and the next run does not read the config"

# --- a process outside the run, asked during it: refused while it goes on.
rm -f trig
(while [ ! -e trig ]; do sleep 0.02; done
 "$CBEXEC" --allow-config >/dev/null 2>e7; echo $? >rc7) &
cb -q --name out -- sh -c 'touch trig; i=0; while [ ! -s rc7 ] && [ $i -lt 250 ]; do sleep 0.02; i=$((i + 1)); done'
wait
is "$(cat rc7)" 125 "--allow-config by a process outside the run, while it goes on: refused"
like "$(cat e7)" "refused while a run of cbexec is going on \(pid [0-9]+\)" "... naming the run"

# --- a record written by hand during the run: revoked after it.
err=$(cb -q --name hand --log "$SCRATCH/l.jsonl" -- "$SCRATCH/forge" 2>&1)
is "$?" 0 "a run that writes an approval record by hand: runs"
is "$(records)" 0 "... the record is revoked after the run"
like "$err" "^cbexec: the approval of $CFG was written while a run of cbexec \(pid [0-9]+\) was going on: revoked" \
    "... said on stderr (even under -q)"
like "$(grep approval_revoked "$SCRATCH/l.jsonl")" "\"event\":\"approval_revoked\".*config\.json" \
    "... and in --log"
read_by_run 2; is "$?" 1 "... so the next run does not read the config"

# --- the same, then kill -9 of cbexec: the next invocation revokes it.
cb -q --name k9 -- sh -c '"$1"; kill -9 $PPID; sleep 1' sh "$SCRATCH/forge" 2>/dev/null
is "$(records)" 1 "written by hand, then cbexec killed: the record is there"
err=$(cb -q --name k9b -- false 2>&1)
ok "$([ ! -e "$SCRATCH/read" ]; echo $?)" "... the next run does not read it"
like "$err" "the approval of $CFG was written while a run of cbexec \(pid [0-9]+\) was going on: revoked" \
    "... and revokes it, saying so"
is "$(records)" 0 "... it is gone"

# --- the same, with the run's registration under allow/ removed or
# touched (a later ctime) before the kill -9: the watchdog, which
# outlives cbexec, writes it again with when the run began.
for how in rm touch; do
	case $how in
	rm) wipe='rm -f "$CBEXEC_STATE_DIR"/allow/.run-*' ;;
	*) wipe='sleep 0.1; touch "$CBEXEC_STATE_DIR"/allow/.run-*' ;;
	esac
	cb -q --name "k9$how" -- sh -c "\"\$1\"; $wipe; kill -9 \$PPID; sleep 1" \
	    sh "$SCRATCH/forge" 2>/dev/null
	# The watchdog puts a removed registration back within moments (on
	# a loaded machine an invocation started at once can come first).
	[ $how = rm ] && poll_until 20 sh -c 'ls "$1"/allow/.run-* >/dev/null 2>&1' \
	    sh "$CBEXEC_STATE_DIR"
	rm -f "$SCRATCH/read"
	err=$(cb -q --name "k9$how.b" -- false 2>&1)
	ok "$([ ! -e "$SCRATCH/read" ]; echo $?)" \
	    "registration ${how}ed, then cbexec killed: the forged approval is not read"
	like "$err" "the approval of $CFG was written while a run of cbexec \(pid [0-9]+\) was going on: revoked" \
	    "... and is revoked, said"
done

# --- written during another invocation's run: not read meanwhile.
rm -f go
cb -q --name long -- sh -c '"$1"; touch go; i=0; while [ -e go ] && [ $i -lt 400 ]; do sleep 0.02; i=$((i + 1)); done' sh "$SCRATCH/forge" 2>/dev/null &
L=$!
poll_until 10 test -e go
rm -f "$SCRATCH/read"
err=$(cb -q --name meanwhile -- false 2>&1)
ok "$([ ! -e "$SCRATCH/read" ]; echo $?)" "an approval written during another run: not read meanwhile"
like "$err" "was approved while a run of cbexec \(pid [0-9]+\) is going on: not read" "... saying why"
rm -f go; wait $L
is "$(records)" 0 "... and revoked when that run ends"

# --- the operator's approval, outside any run: read, and kept.
out=$("$CBEXEC" --allow-config 2>&1); is "$?" 0 "the operator approves, outside any run"
read_by_run 3; is "$?" 0 "... the config is read"
read_by_run 4; is "$?" 0 "... and still after a run: nothing revoked"
is "$(records)" 1 "... the record stays"

# --- an approved config that vanished: said once, stderr and log.
rm -rf .cbexec
err=$(cb -q --name gone --log "$SCRATCH/g.jsonl" -- true 2>&1); rc=$?
is "$rc" 0 "an approved config deleted: the run goes"
like "$err" "^cbexec: $CFG was approved and is gone: its limits no longer apply" "... said on stderr (even under -q)"
like "$(cat "$SCRATCH/g.jsonl")" "\"event\":\"config\".*is gone: its limits no longer apply" "... and in --log"
err=$(cb -q --name gone -- true 2>&1)
is "$err" "" "... once: the next run says nothing"
cd "$SCRATCH" || exit 1

# --- the user's config, trusted as ssh trusts its files.
U=$XDG_CONFIG_HOME/cbexec
mkdir -p "$U" && echo '{}' >"$U/config.json" && chmod 0755 "$U"
cb -q --name u -- true; is "$?" 0 "the user's config, theirs and 0644: read"
chmod 0666 "$U/config.json"
err=$(cb -q --name u -- touch ran-u 2>&1); rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "a world-writable user config: 125, nothing run"
like "$err" "^cbexec: $U/config\.json: writable by group and others \(mode 0666\); not trusted \(fix: chmod go-w $U/config\.json\)" \
    "... naming the file and the fix"
chmod 0644 "$U/config.json" && chmod 0775 "$U"
err=$(cb -q --name u -- true 2>&1); is "$?" 125 "a group-writable config directory: 125"
like "$err" "$U: writable by its group \(mode 0775\); not trusted \(fix: chmod go-w $U\)" "... naming it"
chmod 0755 "$U"
echo '{}' >"$SCRATCH/elsewhere.json" && chmod 0666 "$SCRATCH/elsewhere.json"
ln -sf "$SCRATCH/elsewhere.json" "$U/config.json"
err=$(cb -q --name u -- true 2>&1); is "$?" 125 "a link to a world-writable file: 125"
like "$err" "elsewhere\.json: writable" "... naming the file it leads to"
rm -f "$U/config.json" && echo '{}' >"$U/config.json"
if [ "$(id -u)" = 0 ]; then
	chown 65534 "$U/config.json"
	err=$(cb -q --name u -- true 2>&1); is "$?" 125 "a user config owned by another user: 125"
	like "$err" "config\.json: owned by .* \(uid 65534\), not by you; not trusted \(fix: chown " \
	    "... naming the owner and the fix"
	chown 0 "$U/config.json"
else
	skip "not root: cannot give the config to another user"; skip "chown"
fi
chmod 0775 "$ALLOW"
mkdir -p "$SCRATCH/wt3/.cbexec" && echo '{}' >"$SCRATCH/wt3/.cbexec/config.json"
err=$(cd "$SCRATCH/wt3" && cb -q --name u -- true 2>&1); is "$?" 125 "a group-writable allow/: 125"
like "$err" "allow: writable by its group \(mode 0775\); not trusted \(fix: chmod go-w " "... naming it"
chmod 0700 "$ALLOW"
done_testing
