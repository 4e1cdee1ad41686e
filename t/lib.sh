# SPDX-License-Identifier: ISC
# Shared helpers for the shell tests: TAP output, a scratch directory,
# poll_until instead of sleeping.  Source it: . "$(dirname "$0")/lib.sh"

set -u
T_DIR=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$T_DIR/.." && pwd)
CBEXEC=${CBEXEC:-$TOP/cbexec}
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/cbexec-test.XXXXXX")
# $TMPDIR: apart from the tree the tests watch, and removed with it.
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbexec-tmp.XXXXXX")
trap 'rm -rf "$SCRATCH" "$T_TMP"' EXIT
export TMPDIR="$T_TMP"
# Keep tests away from the user's state and terminal colours.
export CBEXEC_STATE_DIR="$SCRATCH/state" NO_COLOR=1
unset CBEXEC_STATE CB_NO_PROGRESS_THRESHOLD CB_SAME_ERROR_THRESHOLD \
	CB_HALF_OPEN_RETRIES CB_MAX_CONSECUTIVE_ERRORS CB_MAX_RETRIES CB_COOLDOWN
cd "$SCRATCH" || exit 1

# Under valgrind (make valgrind) cbexec is many times slower: tests of
# timing or CPU use skip what they cannot judge there.
case $CBEXEC in *valgrind*) UNDER_VALGRIND=1 ;; *) UNDER_VALGRIND= ;; esac

_n=0 _fail=0
ok() {	# ok COND-STATUS DESC: ok 0 "desc" passes
	_n=$((_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $_n - $2"
	else echo "not ok $_n - $2"; _fail=$((_fail + 1)); fi
}
is() {	# is GOT WANT DESC
	_n=$((_n + 1))
	if [ "$1" = "$2" ]; then echo "ok $_n - $3"
	else
		echo "not ok $_n - $3"; _fail=$((_fail + 1))
		printf '#   got:  %s\n#   want: %s\n' "$1" "$2"
	fi
}
like() {	# like GOT ERE DESC
	_n=$((_n + 1))
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then echo "ok $_n - $3"
	else
		echo "not ok $_n - $3"; _fail=$((_fail + 1))
		printf '#   got:  %s\n#   want match: %s\n' "$1" "$2"
	fi
}
skip() {	# skip DESC: counts as passed, says why
	_n=$((_n + 1))
	echo "ok $_n # skip $1"
}
done_testing() { echo "1..$_n"; [ "$_fail" -eq 0 ]; }

# poll_until SECONDS CMD...: run CMD every 20ms until it succeeds; 1 on timeout.
poll_until() {
	_lim=$1; shift
	_end=$(( $(date +%s%N) / 1000000 + $(echo "$_lim" | awk '{printf "%d", $1 * 1000}') ))
	while ! "$@"; do
		[ $(( $(date +%s%N) / 1000000 )) -ge "$_end" ] && return 1
		sleep 0.02
	done
}
# How long a helper a test starts (a python3 server or proxy) may take to
# come up: generous, for a python3 that is a version manager's shim (2-3 s
# to start, more on a loaded machine).  Only a helper that never comes up
# waits this long.
HELPER_START=${CBEXEC_HELPER_START:-60}
alive() { kill -0 "$1" 2>/dev/null; }
# quick LIMIT MS DESC: MS is under LIMIT; under valgrind, where cbexec is
# many times slower, not judged (said so).
quick() {
	if [ -n "$UNDER_VALGRIND" ]; then skip "$3 (timing, under valgrind)"
	else ok "$([ "$2" -lt "$1" ]; echo $?)" "$3"; fi
}
# stamped N CBEXEC-INVOCATION...: the invocation (all of it up to its
# "--") runs a command that writes N lines 40 ms apart, each with the time
# it wrote it, once its reader is ready; ./late gets "LINES MS", MS how
# late the latest line reached the reader (cbexec's relay, not how
# quickly a loaded machine let the command go on), ./rc cbexec's status,
# ./err its stderr.
stamped() {
	_lines=$1; shift
	rm -f gap.ready
	{ "$@" -- perl -MTime::HiRes=time,sleep -e '$| = 1; my $i = 0;
	    sleep 0.02 while !-e "gap.ready" && $i++ < $ARGV[0] * 50;
	    for (1 .. $ARGV[1]) { printf "%d %.6f\n", $_, time; sleep 0.04 }' \
	    "$HELPER_START" "$_lines" 2>err; echo $? >rc; } |
	    perl -MTime::HiRes=time -e 'open(my $f, ">", "gap.ready") and close $f;
		my ($n, $l) = (0, 0);
		while (<STDIN>) { my $t = time; my (undef, $s) = split;
		    $l = $t - $s if $t - $s > $l; $n++ }
		printf "%d %d\n", $n, $l * 1000' >late
}
dead() { ! kill -0 "$1" 2>/dev/null; }
# jget FILE PATH: a JSON value by dotted path (a.b.0), printed plainly;
# objects and arrays as canonical JSON, null when absent (perl's JSON::PP).
jget() {
	perl -MJSON::PP -0777 -e 'binmode STDOUT, ":utf8";
		my $v = decode_json(<STDIN>);
		for my $k (split /\./, $ARGV[0]) {
			$v = ref $v eq "HASH" ? $v->{$k} : ref $v eq "ARRAY" ? $v->[$k] : undef;
		}
		print !defined $v ? "null"
		    : JSON::PP::is_bool($v) ? ($v ? "true" : "false")
		    : ref $v ? JSON::PP->new->canonical->encode($v) : $v;
	' "$2" < "$1"
}
# jcompact FILE: the JSON in FILE on one line, keys sorted.
jcompact() {
	perl -MJSON::PP -0777 -e 'print JSON::PP->new->canonical->encode(decode_json(<STDIN>)), "\n"' < "$1"
}
# bash_comp FILE WORD...: the bash completion function of FILE run for
# "cbexec WORD...", the cursor on the last word, under `set -u` (as a
# user's ~/.bashrc may have it); COMPREPLY one per line, sorted, and what
# bash said.
bash_comp() {
	bash -c '
		set -u
		. "$1" || exit 1
		shift
		COMP_WORDS=(cbexec "$@")
		COMP_CWORD=$#
		COMP_LINE="${COMP_WORDS[*]}"
		COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		_cbexec cbexec "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"
	' comp "$@" 2>&1 | sort
}

# renewed_past_lease SCHEME STORE-OPTION...: a run with a 4 s lease (each
# store command bounded by a third of it: renewals 1.3 s apart, the local
# deadline 3.5 s after the last one -- room for a loaded machine, or a
# small etcd cluster's election) goes on until released, so a second
# invocation, however slowly it starts, comes while the first holds the
# lease and once its first term is past: BUSY, naming the lease in
# SCHEME://, and the first run ends well.  Three checks.
renewed_past_lease() {
	_scheme=$1; shift
	_past=4.4
	[ -n "$UNDER_VALGRIND" ] && _past=5
	rm -f started released
	"$CBEXEC" "$@" --store-lease 4s --store-timeout 1200ms --name long -- \
	    sh -c 'touch started; i=0; while [ ! -e released ] && [ $i -lt 600 ]
	    do sleep 0.05; i=$((i + 1)); done' 2>errl & _p=$!
	poll_until 20 test -e started
	sleep $_past
	"$CBEXEC" "$@" --name long -- true 2>err2; _rc=$?
	touch released
	is "$_rc" 123 "past the lease the holder still has it (renewed): BUSY"
	like "$(cat err2)" "busy: another cbexec holds its lease in $_scheme://" \
	    "naming the lease"
	wait $_p; _rc=$?
	is "$_rc:$(grep lease errl)" "0:" "the long run ends well, its lease kept"
}
# shim_why NAME: whether t/NAME.so can be preloaded into cbexec: 0, or 1
# saying why not (cbexec is a wrapper script, as under valgrind; it is
# built with ASan, whose runtime must come first; the shim does not build).
shim_why() {
	if ! head -c 4 "$CBEXEC" 2>/dev/null | grep -q ELF; then
		echo "CBEXEC is not an ELF binary (a preload shim goes into it)"
	elif nm "$CBEXEC" 2>/dev/null | grep -q __asan_init ||
	    ldd "$CBEXEC" 2>/dev/null | grep -q libasan; then
		echo "cbexec is built with ASan (no preload before its runtime)"
	elif ! make -s -C "$TOP" "t/$1.so" >/dev/null 2>&1 &&
	    [ ! -f "$T_DIR/$1.so" ]; then
		echo "cannot build t/$1.so"
	else
		return 0
	fi
	return 1
}
# host_names: give each ./host N the name hostN from now on (t/hostshim.so
# preloaded); 1 with why not.
host_names() { shim_why hostshim && export HOST_NAMES=1; }
