#!/bin/sh
# SPDX-License-Identifier: ISC
# Out of file descriptors (SPEC §6: cbexec's own failure is a message and
# 125): under every small ulimit -n, whatever cbexec was doing -- libev
# setting up its signal pipe, the lock, the state, the log, git, the
# hook, an operator command -- it says what failed and exits 125, or
# runs; it never aborts or dies of a signal.
. "$(dirname "$0")/lib.sh"
if ! command -v bash >/dev/null 2>&1; then
	echo "1..0 # SKIP no bash (ulimit -n)"
	exit 0
fi
if [ -n "$UNDER_VALGRIND" ]; then
	echo "1..0 # SKIP valgrind needs descriptors of its own"
	exit 0
fi
export XDG_CONFIG_HOME="$SCRATCH/xdg"
mkdir -p repo && (cd repo && git init -q . 2>/dev/null)

# under N ARGS...: cbexec ARGS under ulimit -n N; "RC<tab>last line of stderr".
under() {
	_n=$1; shift
	bash -c 'ulimit -n "$1" || exit 99; shift; exec "$@"' sh "$_n" \
	    "$CBEXEC" --no-prompt "$@" </dev/null >out 2>err
	printf '%s\t%s\n' "$?" "$(tail -1 err)"
}

bad=
for n in 4 5 6 7 8 9 10 11 12 13 14 16; do
	for args in "--name a -- true" \
	    "--name b --log l.jsonl --metrics m.prom --half-open-after 1 -- false" \
	    "--name c -C repo --progress git -- true" \
	    "--name d --on-state-change true --half-open-after 1 -- false" \
	    "--name e --progress cmd --progress-cmd true -- true" \
	    "--name f --loop -n 3 -- false" \
	    "--status --name a" "--history --name a" "--reset-circuit --name a" \
	    "--trip --name a" "--status --all"; do
		# shellcheck disable=SC2086
		r=$(under "$n" $args)
		rc=${r%%	*} msg=${r#*	}
		case $rc in
		0|1|120) ;;
		125) case $msg in "cbexec: "*) ;; *) bad="$bad [-n $n $args: 125 '$msg']" ;; esac ;;
		*) bad="$bad [-n $n $args: exit $rc '$msg']" ;;
		esac
	done
done
is "${bad:-none}" none "ulimit -n 4 to 16: every mode runs, or says why and exits 125; no abort"

r=$(under 4 --name g -- true)
is "${r%%	*}" 125 "ulimit -n 4: 125 (libev's signal pipe), not SIGABRT"
like "${r#*	}" "^cbexec: .*Too many open files" "... with a message saying why"

# ---- ulimit -s: a small stack ---------------------------------------------
# Below a few dozen KiB cbexec died by SIGSEGV after its run, before the
# save.  A soft limit it can raise, it raises, and the command still gets
# the limit cbexec was started with; a hard limit too small is 125.
stk() {
	bash -c 'ulimit '"$1"' "$2" || exit 99; shift 2; exec "$@"' sh "$@" \
	    2>err
}
out=$(stk -Ss 48 "$CBEXEC" -q --name s1 -- sh -c 'ulimit -s'); rc=$?
is "$rc:$out" "0:48" "ulimit -Ss 48: the run ends well; the command's limit is still 48 KiB"
is "$(jget "$CBEXEC_STATE_DIR/s1.json" iteration)" 1 "... and the run is saved"
stk -s 48 "$CBEXEC" -q --name s2 -- touch ran-s2; rc=$?
is "$rc:$(cat err):$([ -e ran-s2 ] && echo ran)" \
    "125:cbexec: a stack limit of 48 KiB (ulimit -s) is too small: cbexec needs 256 KiB:" \
    "ulimit -s 48 (hard): 125, saying why; nothing run"
done_testing
