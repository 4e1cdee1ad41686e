#!/bin/sh
# SPDX-License-Identifier: ISC
# Disk faults while saving the state (SPEC §6: "Disk full or read-only:
# keep the old file, say so, exit 125 — never continue with unsaved
# state").  Faults come from t/faultshim.so (LD_PRELOAD: write, fsync or
# close of the temp file fails), a real full tmpfs and a read-only mount in
# a private mount namespace (root), and a directory cbexec may not write.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }
skip() { _n=$((_n + 1)); echo "ok $_n # skip $1"; }
skipn() { _k=0; while [ $_k -lt "$1" ]; do skip "$2"; _k=$((_k + 1)); done; }
# no temp file (.NAME.tmp.XXXXXX, atomic_write()'s; NAME.XXXXXX, what the
# textfile's were once) left in directory $1
notmp() {
	for _t in "$1"/.*.tmp.* "$1"/*.prom.*; do [ -e "$_t" ] && return 1; done
	return 0
}
lines() { if [ -f "$1" ]; then wc -l < "$1" | tr -d ' '; else echo 0; fi; }

# ---- LD_PRELOAD shim -------------------------------------------------------
# An ASan build cannot take a preloaded library that interposes write and
# close before its runtime, and a wrapper script (valgrind) is not the ELF
# the shim has to go into.
shim_ok=
if ! head -c 4 "$CBEXEC" 2>/dev/null | grep -q ELF; then
	why="CBEXEC is not an ELF binary"
elif nm "$CBEXEC" 2>/dev/null | grep -q __asan_init ||
    ldd "$CBEXEC" 2>/dev/null | grep -q libasan; then
	why="cbexec is built with ASan"
else
	# A shim that does not build is a failure, never a reason to skip
	# the checks that need it (make check builds it first).
	make -s -C "$TOP" t/faultshim.so >/dev/null 2>&1
	ok $? "t/faultshim.so builds with the project's flags"
	if [ -f "$T_DIR/faultshim.so" ]; then shim_ok=1
	else why="t/faultshim.so did not build"; fi
fi
SHIM=$T_DIR/faultshim.so

fault() {	# fault OP ERRNO WHAT CBEXEC-ARGS...
	_op=$1 _errno=$2 _what=$3; shift 3
	LD_PRELOAD=$SHIM FAULT_OP=$_op FAULT_ERRNO=$_errno FAULT_ON_PATH=$_what \
	    "$CBEXEC" -q --no-prompt --progress exit "$@"
}

for c in write:ENOSPC:"No space left on device" \
    fsync:EIO:"Input/output error" close:EIO:"Input/output error" \
    write:EDQUOT:"quota exceeded"; do
	op=${c%%:*} rest=${c#*:}; e=${rest%%:*} msg=${rest#*:}
	if [ -z "$shim_ok" ]; then skipn 7 "$why"; continue; fi
	d=$op-$e; mkdir "$d"
	cb --state "$d/st.json" -- true
	cp "$d/st.json" "$d/orig"
	err=$(fault "$op" "$e" ".st.json.tmp." --state "$d/st.json" -n 3 \
	    -- sh -c "echo x >> $d/ran" 2>&1)
	is "$?" 125 "$op fails with $e: exit 125"
	like "$err" "st\.json" "$op $e: message names the state file"
	like "$err" "$msg" "$op $e: message says '$msg'"
	cmp -s "$d/st.json" "$d/orig"; ok $? "$op $e: old state byte-identical"
	ok "$([ "$(lines "$d/ran")" -le 1 ]; echo $?)" \
	    "$op $e: no run after the failed save ($(lines "$d/ran") run)"
	notmp "$d"; ok $? "$op $e: no temp file left"
	# The run that ran and was not saved is on record (SPEC §11): the
	# next invocation counts it first, then runs and saves normally.
	cb --state "$d/st.json" -- true
	is "$?:$(jget "$d/st.json" iteration):$(jget "$d/st.json" \
	    history.1.type)" 0:3:killed \
	    "$op $e: next invocation counts the unsaved run, then saves (lock released)"
done

# The directory fsync after the rename: the new file is in place, but
# cbexec cannot say it is durable, so it must not carry on.
if [ -n "$shim_ok" ]; then
	mkdir dsync
	cb --state dsync/st.json -- true
	err=$(fault fsync EIO "dsync\$" --state dsync/st.json -n 3 \
	    -- sh -c 'echo x >> dsync.ran' 2>&1)
	is "$?" 125 "directory fsync fails: exit 125"
	like "$err" "st\.json.*(sync|Input/output)" "directory fsync: says so"
	is "$(lines dsync.ran)" 1 "directory fsync: no run after it"
	notmp dsync; ok $? "directory fsync: no temp file left"
else
	skipn 4 "$why"
fi

# --metrics is a report, not the state: its failure is a warning, the run's
# exit status stands, the old metrics file stays whole.
if [ -n "$shim_ok" ]; then
	mkdir mt
	cb --state mt/st.json --metrics mt/m.prom -- true
	cp mt/m.prom mt/m.orig
	err=$(LD_PRELOAD=$SHIM FAULT_OP=write FAULT_ERRNO=ENOSPC \
	    FAULT_ON_PATH=m.prom. "$CBEXEC" --no-prompt --progress exit \
	    --state mt/st.json --metrics mt/m.prom -- true 2>&1)
	is "$?" 0 "metrics write fails: the command's exit status (0)"
	like "$err" "m\.prom.*No space left on device" "metrics: warning names the file"
	cmp -s mt/m.prom mt/m.orig; ok $? "metrics: old file byte-identical"
	notmp mt; ok $? "metrics: no temp file left"
	is "$(jget mt/st.json iteration)" 2 "metrics: the state was still saved"
else
	skipn 5 "$why"
fi

# ---- a real full disk and a read-only mount (root, private namespace) ------
# unshare(1) makes the new mount namespace private, so nothing leaks out;
# the results are written outside the tmpfs and checked here.
if [ "$(id -u)" = 0 ] && unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$1"' \
    sh "$SCRATCH" 2>/dev/null; then
	mkdir full ro
	CB=$CBEXEC unshare -m sh -c '
		cb() { "$CB" -q --no-prompt --progress exit "$@"; }
		mount -t tmpfs -o size=64k tmpfs full || exit
		cb --state full/st.json -- true || exit
		cp full/st.json full.orig
		dd if=/dev/zero of=full/fill bs=4096 2>/dev/null
		cb --state full/st.json -n 3 -- sh -c "echo x >> full.ran" \
		    2> full.err
		echo $? > full.rc
		cmp -s full/st.json full.orig; echo $? > full.cmp
		ls -a full > full.ls
		rm full/fill
		cb --state full/st.json -- true; echo $? > full.after

		mount -t tmpfs -o size=64k tmpfs ro || exit
		cb --state ro/st.json -- true || exit
		cp ro/st.json ro.orig
		mount -o remount,ro ro || exit
		cb --state ro/st.json -- touch ro.ran 2> ro.err
		echo $? > ro.rc
		cmp -s ro/st.json ro.orig; echo $? > ro.cmp
	'
	is "$(cat full.rc 2>/dev/null)" 125 "full tmpfs: exit 125"
	like "$(cat full.err 2>/dev/null)" "st\.json.*No space left on device" \
	    "full tmpfs: says so, naming the file"
	is "$(cat full.cmp 2>/dev/null)" 0 "full tmpfs: old state byte-identical"
	is "$(lines full.ran)" 1 "full tmpfs: no run after the failed save"
	ok "$(! grep -q '\.tmp\.' full.ls && [ -s full.ls ]; echo $?)" \
	    "full tmpfs: no temp file left"
	is "$(cat full.after 2>/dev/null)" 0 "full tmpfs: space freed, runs again"
	is "$(cat ro.rc 2>/dev/null)" 125 "read-only mount: exit 125"
	like "$(cat ro.err 2>/dev/null)" "st\.json" "read-only mount: names the file"
	is "$(cat ro.cmp 2>/dev/null)" 0 "read-only mount: old state byte-identical"
	ok "$([ ! -e ro.ran ]; echo $?)" "read-only mount: command not run"
else
	skipn 10 "needs root and unshare -m to mount a tmpfs"
fi

# ---- a directory cbexec may not write (chmod 0500) --------------------------
# Root ignores the mode, so as root the run is made as nobody (setpriv).
# nobody runs a copy in the scratch directory: the tree may be out of its
# reach (a clone in /root, mode 0700).
asuser= cb_as=$CBEXEC
if [ "$(id -u)" != 0 ]; then
	asuser=" "
elif command -v setpriv >/dev/null 2>&1; then
	chmod 711 "$SCRATCH"
	chmod 1777 "$TMPDIR"	# nobody's status files
	mkdir rod && chown 65534:65534 rod
	if [ -z "$UNDER_VALGRIND" ]; then	# the wrapper finds the tree
		cb_as=$SCRATCH/cbexec.nobody
		cp "$CBEXEC" "$cb_as" && chmod 0755 "$cb_as"
	fi
	if setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$cb_as"; then
		asuser="setpriv --reuid=65534 --regid=65534 --clear-groups"
	fi
fi
if [ -n "$asuser" ]; then
	mkdir -p rod
	# shellcheck disable=SC2086
	$asuser "$cb_as" -q --no-prompt --progress exit --state rod/st.json -- true
	cp rod/st.json rod.orig
	chmod 0500 rod
	# shellcheck disable=SC2086
	err=$($asuser "$cb_as" -q --no-prompt --progress exit \
	    --state rod/st.json -n 3 -- sh -c 'echo x >> /dev/null' 2>&1)
	is "$?" 125 "read-only directory: exit 125"
	like "$err" "st\.json.*(Permission denied|Read-only)" \
	    "read-only directory: says so, naming the file"
	cmp -s rod/st.json rod.orig; ok $? "read-only directory: old state byte-identical"
	notmp rod; ok $? "read-only directory: no temp file left"
	chmod 0700 rod
else
	skipn 4 "root without setpriv, or nobody cannot reach $SCRATCH (set TMPDIR to a directory it can reach)"
fi
done_testing
