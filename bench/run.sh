#!/bin/sh
# SPDX-License-Identifier: ISC
# cbexec benchmarks (make bench).  Every benchmark runs cbexec and its
# reference alternately in the same run (bench/abrun.bin), N repetitions,
# and prints medians and the ratio; nothing here ever fails the build.
# bench/README.md says what each one measures and holds the last results.
#
#   sh bench/run.sh                      everything (about 2.5-4 minutes)
#   BENCH_ONLY="single kill" sh bench/run.sh   some of: single loop kill
#                                        pipe agent spend status files
#                                        probe store
#   CBEXEC=/path/to/cbexec sh bench/run.sh     another binary
#   BENCH_ONLY=ab CBEXEC_B=/path/to/other/cbexec sh bench/run.sh
#                                        this binary against another,
#                                        invocation by invocation

# Option lists ($NEVER, $LOOP, pkg-config output) are split on purpose.
# shellcheck disable=SC2086,SC2046
set -u
BENCH=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$BENCH/.." && pwd)
CBEXEC=${CBEXEC:-$TOP/cbexec}
CC=${CC:-cc}
ONLY=${BENCH_ONLY:-single loop kill pipe agent spend status files probe store}
GIB=1073741824

say() { printf '%s\n' "$*"; }
skip() { say "bench: $*; skipped"; }
want() { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }

if [ ! -x "$CBEXEC" ]; then
	skip "no $CBEXEC (run make first)"
	exit 0
fi

# Helpers: small C programs, built here (bench/*.bin is ignored by git).
build() {	# build NAME SOURCE [FLAGS...]
	_n=$1 _s=$2
	shift 2
	"$CC" -O2 -Wall -o "$BENCH/$_n.bin" "$BENCH/$_s.c" "$@" ||
		{ skip "cannot build bench/$_n.bin"; exit 0; }
}
build abrun abrun
build refloop refloop
build sleeper sleeper
build mktree mktree
build empty-libc empty
# --no-as-needed: link the libraries even though nothing uses them.  Those
# cbexec loads at start-up: cJSON alone (libev and hiredis are linked
# statically where their archives are installed, libcrypto is loaded on
# the first SHA-256); and cJSON with libcrypto, what linking libcrypto
# would cost every invocation.
build empty-libs empty -Wl,--no-as-needed \
	$(pkg-config --libs libcjson 2>/dev/null || echo -lcjson)
build empty-crypto empty -Wl,--no-as-needed \
	$(pkg-config --libs libcjson libcrypto 2>/dev/null || echo -lcjson -lcrypto)
build hwm hwm -shared -fPIC
build evp evp $(pkg-config --cflags --libs libcrypto 2>/dev/null || echo -lcrypto)
build jsonl jsonl
AB=$BENCH/abrun.bin

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/cbexec-bench.XXXXXX") || exit 0
# A tmpfs directory, to tell the cost of the durable save from the rest.
SHM=$(mktemp -d /dev/shm/cbexec-bench.XXXXXX 2>/dev/null) || SHM=
trap 'rm -rf "$SCRATCH" ${SHM:+"$SHM"}' EXIT
trap 'exit 130' INT TERM
export CBEXEC_STATE_DIR="$SCRATCH/state" NO_COLOR=1
unset CBEXEC_STATE CB_NO_PROGRESS_THRESHOLD CB_SAME_ERROR_THRESHOLD \
	CB_HALF_OPEN_RETRIES CB_MAX_CONSECUTIVE_ERRORS CB_MAX_RETRIES \
	CB_COOLDOWN XDG_STATE_HOME
# Reproducible git for the file-tree benchmark: no user or system config.
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
# Not a terminal: cbexec would hand it to the command (tcsetpgrp) and
# could prompt when a circuit opens.
exec </dev/null
mkdir -p "$SCRATCH/work" "$CBEXEC_STATE_DIR"
cd "$SCRATCH/work" || exit 0
# Outside a git work tree, --progress auto means "exit": no git probe.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	say "bench: note: $SCRATCH is inside a git work tree; the single-run" \
	    "benchmark will include cbexec's git probes"
fi
# Thresholds no benchmark should ever reach: the circuit must stay closed.
NEVER="--no-progress-threshold 1000000 --max-consecutive-errors 1000000"
NEVER="$NEVER --same-error-threshold 1000000 --half-open-after 1000000"

# med FILE LABEL COLUMN: median of a column of abrun's output for A or B.
med() {
	awk -v l="$2" -v c="$3" '$1 == l { print $c }' "$1" | sort -n | awk '
		{ a[NR] = $1 }
		END {
			if (NR == 0) { print "nan"; exit }
			if (NR % 2) print a[(NR + 1) / 2]
			else print (a[NR / 2] + a[NR / 2 + 1]) / 2
		}'
}
# calc EXPR: awk arithmetic, printed with the given format.
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
# exits FILE LABEL: the distinct exit statuses of a side, "0" when all were.
exits() { awk -v l="$2" '$1 == l { print $4 }' "$1" | sort -u | tr '\n' ' ' |
	sed 's/ $//'; }
# nprocs: processes on this machine.
nprocs() { set -- /proc/[0-9]*; echo $#; }
# reps FILE: how many repetitions abrun made.
reps() { awk '$1 == "A"' "$1" | wc -l | tr -d ' '; }
# verdict VALUE OP TARGET: "yes" or "NO".
verdict() { awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN {
	ok = (op == "<=") ? v <= t : v >= t
	print (v == v + 0 && ok) ? "yes" : "NO" }'; }

ROWS=$SCRATCH/rows
: >"$ROWS"
row() {	# row WHAT CBEXEC REFERENCE RATIO TARGET MET
	printf '| %s | %s | %s | %s | %s | %s |\n' "$@" >>"$ROWS"
	printf '  %-44s cbexec %-16s ref %-16s ratio %-7s target %-10s met: %s\n' "$@"
}
note() { printf '  %s\n' "$*"; }
T0=$(date +%s)
T1=$T0
took() {	# the time a section took, then a blank line
	_t=$(date +%s)
	say "  ($((_t - T1)) s)"
	say ""
	T1=$_t
}

say "cbexec benchmarks: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), Linux $(uname -r), $(date -u +%Y-%m-%d)"
say "binary: $CBEXEC ($("$CBEXEC" --version 2>/dev/null))"
say ""

# ---------------------------------------------------------------------------
# 1. One invocation: start, take the lock, load the state, run, save it
#    durably (two fsyncs), exit -- against timeout(1) running the same thing.
if want single; then
	say "== single invocation: cbexec --name b -- /bin/true  vs  timeout 10 /bin/true (41 reps)"
	O=$SCRATCH/single
	"$AB" -n 41 -w 3 -o "$O" -- "$CBEXEC" -q --name b -- /bin/true \
		::: timeout 10 /bin/true
	a=$(med "$O" A 2) b=$(med "$O" B 2)
	r=$(calc %.2f "$a / $b")
	row "single invocation (median wall)" "$(calc %.2fms "$a / 1e6")" \
	    "$(calc %.2fms "$b / 1e6")" "${r}x" "<= 1.3x" "$(verdict "$r" "<=" 1.3)"
	note "CPU (user+sys, incl. /bin/true): cbexec $(calc %.2fms "$(med "$O" A 7) / 1e6"), timeout $(calc %.2fms "$(med "$O" B 7) / 1e6"); exit statuses: $(exits "$O" A) / $(exits "$O" B)"
	# The same with the state file on tmpfs, where fsync costs nothing:
	# what cbexec costs apart from the durable save.
	if [ -n "$SHM" ]; then
		O=$SCRATCH/shm
		"$AB" -n 41 -w 3 -o "$O" -- "$CBEXEC" -q --state "$SHM/b.json" \
			-- /bin/true ::: timeout 10 /bin/true
		note "diagnosis: with the state file on tmpfs ($SHM, no disk) cbexec takes $(calc %.2fms "$(med "$O" A 2) / 1e6") against $(calc %.2fms "$(med "$O" B 2) / 1e6"): $(calc %.2fx "$(med "$O" A 2) / $(med "$O" B 2)"); the rest is the durable save on this disk"
	fi
	# The floor: fork/exec/wait plus one durable replace (SPEC §6) of a
	# file as big as cbexec's state, and nothing else (bench/refloop.c,
	# N = 1): the least any supervisor keeping a crash-safe record does.
	O=$SCRATCH/floor
	size=$(wc -c <"$CBEXEC_STATE_DIR/b.json")
	"$AB" -n 41 -w 3 -o "$O.f" -- "$BENCH/refloop.bin" 1 "$size" \
		"$SCRATCH/floor.json" -- /bin/true ::: timeout 10 /bin/true
	"$AB" -n 41 -w 3 -o "$O.c" -- "$CBEXEC" -q --name b -- /bin/true \
		::: "$BENCH/refloop.bin" 1 "$size" "$SCRATCH/floor.json" -- /bin/true
	note "floor: bench/refloop.bin 1 (fork, exec, wait, one durable replace) takes $(calc %.2fms "$(med "$O.f" A 2) / 1e6") against timeout's $(calc %.2fms "$(med "$O.f" B 2) / 1e6"): $(calc %.2fx "$(med "$O.f" A 2) / $(med "$O.f" B 2)")"
	a=$(med "$O.c" A 2) b=$(med "$O.c" B 2)
	r=$(calc %.2f "$a / $b")
	row "single invocation vs the durable floor (median wall)" \
	    "$(calc %.2fms "$a / 1e6")" "$(calc %.2fms "$b / 1e6")" "${r}x" \
	    "<= 1.3x" "$(verdict "$r" "<=" 1.3)"
	note "CPU (user+sys, incl. /bin/true): cbexec $(calc %.2fms "$(med "$O.c" A 7) / 1e6"), floor $(calc %.2fms "$(med "$O.c" B 7) / 1e6"); peak RSS cbexec $(med "$O.c" A 3) KiB, floor $(med "$O.c" B 3) KiB"

	# Where the time goes: library loading, the failure path (OpenSSL
	# initialised for the error fingerprint), and the git probe.
	O=$SCRATCH/libs
	"$AB" -n 41 -w 3 -o "$O" -- "$BENCH/empty-libs.bin" ::: "$BENCH/empty-libc.bin"
	note "diagnosis: an empty main() linked with cbexec's libraries starts in $(calc %.2fms "$(med "$O" A 2) / 1e6"), with libc only $(calc %.2fms "$(med "$O" B 2) / 1e6")"
	O=$SCRATCH/crypto
	"$AB" -n 41 -w 3 -o "$O" -- "$BENCH/empty-crypto.bin" ::: "$BENCH/empty-libs.bin"
	note "diagnosis: libcrypto, were it linked (NEEDED): an empty main() with it starts in $(calc %.2fms "$(med "$O" A 2) / 1e6"), without it $(calc %.2fms "$(med "$O" B 2) / 1e6"): $(calc %.2fx "$(med "$O" A 2) / $(med "$O" B 2)"), peak RSS $(med "$O" A 3) KiB against $(med "$O" B 3) KiB"
	O=$SCRATCH/fail
	"$AB" -n 41 -w 3 -o "$O" -- "$CBEXEC" -q --name f $NEVER -- /bin/false \
		::: "$CBEXEC" -q --name t $NEVER -- /bin/true
	note "diagnosis: a failing run (/bin/false) takes $(calc %.2fms "$(med "$O" A 2) / 1e6"), a succeeding one $(calc %.2fms "$(med "$O" B 2) / 1e6")"
	O=$SCRATCH/evp
	"$AB" -n 41 -w 3 -o "$O" -- "$BENCH/evp.bin" evp ::: "$BENCH/evp.bin"
	"$AB" -n 41 -w 3 -o "$O.sha" -- "$BENCH/evp.bin" sha ::: "$BENCH/evp.bin"
	note "diagnosis: the first SHA-256 costs a fresh process that has libcrypto $(calc %.2fms "($(med "$O.sha" A 2) - $(med "$O.sha" B 2)) / 1e6") through SHA256_Init/Update/Final (what cbexec uses), $(calc %.2fms "($(med "$O" A 2) - $(med "$O" B 2)) / 1e6") through EVP; peak RSS $(med "$O.sha" A 3) / $(med "$O" A 3) KiB"
	if command -v git >/dev/null 2>&1; then
		mkdir -p "$SCRATCH/repo" && (cd "$SCRATCH/repo" && git init -q . &&
			echo x >f && git add f && git -c user.name=b \
			-c user.email=b@example.org commit -qm x)
		O=$SCRATCH/gitp
		"$AB" -n 21 -w 2 -o "$O" -- "$CBEXEC" -C "$SCRATCH/repo" -q \
			--name g $NEVER -- /bin/true ::: "$CBEXEC" \
			-C "$SCRATCH/repo" -q --name g2 --progress exit -- /bin/true
		note "diagnosis: in a git work tree (--progress auto = git) a run takes $(calc %.2fms "$(med "$O" A 2) / 1e6"), with --progress exit $(calc %.2fms "$(med "$O" B 2) / 1e6")"
	fi
	took
fi

# ---------------------------------------------------------------------------
# 2. Per-run overhead in one invocation: 1000 runs of /bin/true against a C
#    loop of fork/exec/wait plus one durable atomic replace of a file as big
#    as cbexec's state file, per run.
if want loop; then
	say "== loop: cbexec -n 1000 --loop --progress exit -- /bin/true  vs  bench/refloop.bin (5 reps, 3 if slow)"
	LOOP="-q --name loop -n 1000 --loop --progress exit $NEVER"
	# Once first, so the state holds a full history (100 events) and the
	# reference writes as many bytes as cbexec does.
	"$CBEXEC" $LOOP -- /bin/true
	size=$(wc -c <"$CBEXEC_STATE_DIR/loop.json")
	O=$SCRATCH/loop
	"$AB" -n 5 -w 0 -T 40 -o "$O" -- "$CBEXEC" $LOOP -- /bin/true \
		::: "$BENCH/refloop.bin" 1000 "$size" "$SCRATCH/ref.json" -- /bin/true
	a=$(med "$O" A 2) b=$(med "$O" B 2)
	r=$(calc %.2f "$a / $b")
	row "per-run overhead, loop of 1000 (median wall/run)" \
	    "$(calc %.0fus "$a / 1e3 / 1000")" "$(calc %.0fus "$b / 1e3 / 1000")" \
	    "${r}x" "<= 1.3x" "$(verdict "$r" "<=" 1.3)"
	note "CPU per run (user+sys, incl. /bin/true): cbexec $(calc %.0fus "$(med "$O" A 7) / 1e6"), reference $(calc %.0fus "$(med "$O" B 7) / 1e6"); state file $size bytes; $(reps "$O") reps; exit statuses: $(exits "$O" A) / $(exits "$O" B)"
	O=$SCRATCH/nosync
	"$AB" -n 3 -w 0 -o "$O" -- "$BENCH/refloop.bin" 100 "$size" \
		"$SCRATCH/ref.json" -- /bin/true ::: "$BENCH/refloop.bin" -S 100 \
		"$size" "$SCRATCH/ref.json" -- /bin/true
	note "diagnosis: reference per run $(calc %.0fus "$(med "$O" A 2) / 1e3 / 100"), of which the two fsyncs are $(calc %.0fus "($(med "$O" A 2) - $(med "$O" B 2)) / 1e3 / 100") on this disk right now"
	took
fi

# ---------------------------------------------------------------------------
# 3. Kill precision: how long past 200 ms until the command is signalled,
#    and until the caller gets its exit status.  bench/sleeper.bin is
#    sleep 10 that records when SIGTERM arrived.
if want kill; then
	say "== kill precision: cbexec -t 0.2 -- sleep 10  vs  timeout 0.2 sleep 10 (21 reps)"
	O=$SCRATCH/kill
	BENCH_STAMP=$SCRATCH/stamp
	export BENCH_STAMP
	"$AB" -n 21 -w 1 -s "$BENCH_STAMP" -o "$O" -- "$CBEXEC" -q --name kill \
		-t 0.2 $NEVER -- "$BENCH/sleeper.bin" \
		::: timeout 0.2 "$BENCH/sleeper.bin"
	unset BENCH_STAMP
	a=$(calc %.3f "$(med "$O" A 2) / 1e6 - 200")
	b=$(calc %.3f "$(med "$O" B 2) / 1e6 - 200")
	r=$(calc %.2f "$a / $b")
	row "kill: lateness past 200 ms until exit (median)" "${a}ms" "${b}ms" \
	    "${r}x" "<= 1.0x" "$(verdict "$r" "<=" 1.0)"
	a=$(calc %.3f "$(med "$O" A 5) / 1e6 - 200")
	b=$(calc %.3f "$(med "$O" B 5) / 1e6 - 200")
	r=$(calc %.2f "$a / $b")
	row "kill: lateness past 200 ms of SIGTERM (median)" "${a}ms" "${b}ms" \
	    "${r}x" "<= 1.0x" "$(verdict "$r" "<=" 1.0)"
	# Column 5 minus column 6: signal time measured from the command's own
	# start, i.e. the timer alone.
	awk '{ print $1, $5 - $6 }' "$O" >"$O.timer"
	note "diagnosis: SIGTERM came $(calc %.3fms "$(med "$O.timer" A 2) / 1e6 - 200") (cbexec) / $(calc %.3fms "$(med "$O.timer" B 2) / 1e6 - 200") (timeout) from 200 ms after the command started; the command started $(calc %.2fms "$(med "$O" A 6) / 1e6") / $(calc %.2fms "$(med "$O" B 6) / 1e6") after launch; exit statuses: $(exits "$O" A) / $(exits "$O" B)"
	if [ -n "$SHM" ]; then
		O=$SCRATCH/killshm
		"$AB" -n 21 -w 1 -o "$O" -- "$CBEXEC" -q --state \
			"$SHM/kill.json" -t 0.2 $NEVER -- "$BENCH/sleeper.bin" \
			::: timeout 0.2 "$BENCH/sleeper.bin"
		note "diagnosis: with the state file on tmpfs (no disk) the lateness until exit is $(calc %.3fms "$(med "$O" A 2) / 1e6 - 200") (cbexec) / $(calc %.3fms "$(med "$O" B 2) / 1e6 - 200") (timeout); the rest is the durable save of the timed-out run"
	fi
	# The floor: timeout's kill, then one durable replace, nothing else.
	O=$SCRATCH/killfloor
	size=$(wc -c <"$CBEXEC_STATE_DIR/kill.json")
	"$AB" -n 21 -w 1 -o "$O.f" -- "$BENCH/refloop.bin" -t 0.2 1 "$size" \
		"$SCRATCH/floor.json" -- "$BENCH/sleeper.bin" \
		::: timeout 0.2 "$BENCH/sleeper.bin"
	"$AB" -n 21 -w 1 -o "$O.c" -- "$CBEXEC" -q --name kill -t 0.2 $NEVER \
		-- "$BENCH/sleeper.bin" ::: "$BENCH/refloop.bin" -t 0.2 1 \
		"$size" "$SCRATCH/floor.json" -- "$BENCH/sleeper.bin"
	note "floor: bench/refloop.bin -t 0.2 1 (timeout's kill, then one durable replace) is $(calc %.3fms "$(med "$O.f" A 2) / 1e6 - 200") late until exit against timeout's $(calc %.3fms "$(med "$O.f" B 2) / 1e6 - 200"): $(calc %.2fx "($(med "$O.f" A 2) / 1e6 - 200) / ($(med "$O.f" B 2) / 1e6 - 200)"); cbexec is $(calc %.2fx "($(med "$O.c" A 2) / 1e6 - 200) / ($(med "$O.c" B 2) / 1e6 - 200)") as late as the floor"
	# A shell with a child: the child's zombie is still in the process
	# group when cbexec looks for leftovers, which makes it scan /proc.
	O=$SCRATCH/killsh
	"$AB" -n 11 -w 1 -o "$O" -- "$CBEXEC" -q --name killsh -t 0.2 $NEVER \
		-- sh -c 'sleep 10; :' ::: timeout 0.2 sh -c 'sleep 10; :'
	note "diagnosis: with sh -c 'sleep 10; :' (a leftover child) the lateness until exit is $(calc %.2fms "$(med "$O" A 2) / 1e6 - 200") (cbexec) / $(calc %.2fms "$(med "$O" B 2) / 1e6 - 200") (timeout), with $(nprocs) processes on this machine"
	took
fi

# ---------------------------------------------------------------------------
# 4. Pass-through of 1 GiB per stream, each stream ending in a pipe to
#    cat >/dev/null.  The reference puts one cat in cbexec's place, so both
#    sides copy every byte through the same number of pipes and processes.
if want pipe; then
	say "== pass-through: 1 GiB on stdout, on stderr, and on both at once (7 reps each)"
	P="head -c $GIB /dev/zero"
	for s in out err both; do
		case $s in
		out)
			A="\"\$CBEXEC\" -q -- sh -c '$P' | cat >/dev/null"
			B="sh -c '$P' | cat | cat >/dev/null"
			bytes=$GIB ;;
		err)
			A="\"\$CBEXEC\" -q -- sh -c '$P >&2' 2>&1 >/dev/null | cat >/dev/null"
			B="sh -c '$P >&2' 2>&1 >/dev/null | cat | cat >/dev/null"
			bytes=$GIB ;;
		both)
			A="{ \"\$CBEXEC\" -q -- sh -c '$P & $P >&2; wait' 2>&3 | cat >/dev/null; } 3>&1 | cat >/dev/null"
			B="{ sh -c '$P & $P >&2; wait' 2>&3 | cat | cat >/dev/null; } 3>&1 | cat | cat >/dev/null"
			bytes=$((GIB * 2)) ;;
		esac
		O=$SCRATCH/pipe-$s
		CBEXEC=$CBEXEC "$AB" -n 7 -w 1 -o "$O" -- sh -c "$A" ::: sh -c "$B"
		a=$(med "$O" A 2) b=$(med "$O" B 2)
		ta=$(calc %.0f "$bytes / 1048576 / ($a / 1e9)")
		tb=$(calc %.0f "$bytes / 1048576 / ($b / 1e9)")
		r=$(calc %.2f "$ta / $tb")
		# Both streams at once: at least a cat relay's speed.
		t=0.9
		[ "$s" = both ] && t=1.0
		row "pass-through $s ($((bytes / GIB)) GiB, median throughput)" \
		    "${ta}MiB/s" "${tb}MiB/s" "${r}x" ">= ${t}x" \
		    "$(verdict "$r" ">=" "$t")"
		note "CPU (whole pipeline): cbexec side $(calc %.2fs "$(med "$O" A 7) / 1e9"), cat side $(calc %.2fs "$(med "$O" B 7) / 1e9")"
	done

	# Peak RSS at that volume: /usr/bin/time %M is wait4's ru_maxrss, the
	# larger of cbexec's and its children's (sh, head: under 2 MiB).
	# Then once with bench/hwm.bin, which reads VmHWM, RssAnon and RssFile
	# of the cbexec process itself as it exits.
	say "== memory: peak RSS of cbexec copying 1 GiB on each stream (3 runs)"
	H=$SCRATCH/hwm T=$SCRATCH/time
	: >"$T"
	if [ -x /usr/bin/time ]; then
		for _ in 1 2 3; do
			{ /usr/bin/time -a -o "$T" -f %M "$CBEXEC" -q -- \
				sh -c "$P & $P >&2; wait" 2>&3 | cat >/dev/null; } \
				3>&1 | cat >/dev/null
		done
		awk '{ print "X", $1 }' "$T" >"$T.c"
		m=$(med "$T.c" X 2) how="/usr/bin/time %M"
	fi
	{ BENCH_HWM=$H LD_PRELOAD=$BENCH/hwm.bin "$CBEXEC" -q -- \
		sh -c "$P & $P >&2; wait" 2>&3 | cat >/dev/null; } 3>&1 |
		cat >/dev/null
	BENCH_HWM=$H.idle LD_PRELOAD=$BENCH/hwm.bin "$CBEXEC" -q -- /bin/true
	# The process name is the binary's (at most 15 bytes of it).
	comm=$(basename "$CBEXEC" | cut -c1-15)
	awk -v c="$comm" '$1 == c { print "X", $3, $4, $5 }' "$H" >"$H.c"
	if [ ! -s "$T" ]; then
		m=$(med "$H.c" X 2) how="VmHWM"
	fi
	row "peak RSS at 2 x 1 GiB (median, $how)" "${m}KiB" "-" "-" \
	    "<= 4096KiB" "$(verdict "$m" "<=" 4096)"
	note "VmHWM of the cbexec process: $(med "$H.c" X 2) KiB, at exit $(med "$H.c" X 3) KiB anonymous + $(med "$H.c" X 4) KiB file-backed (shared libraries); with no output at all: $(awk -v c="$comm" '$1 == c { print $3 }' "$H.idle") KiB (bench/hwm.bin adds a few KiB)"
	# Which mappings the resident pages belong to, while a run is going.
	"$CBEXEC" -q -- sleep 0.5 &
	pid=$!
	sleep 0.25
	if [ -r "/proc/$pid/smaps" ]; then
		note "RSS by mapping during a run (KiB): $(awk '
			/^[0-9a-f]+-[0-9a-f]+ / {
				n = $6; sub(".*/", "", n)
				if (n == "") n = "[anon]"
			}
			/^Rss:/ { r[n] += $2 }
			END { for (k in r) if (r[k] > 0) print r[k], k }' \
			"/proc/$pid/smaps" | sort -rn | head -7 |
			awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 }')"
	fi
	wait "$pid"
	took
fi

# ---------------------------------------------------------------------------
# 4b. Pass-through with an agent's adapter reading the stream: 1 GiB of
#     Claude Code's stream-json (bench/jsonl.c), and 1 GiB of bytes that are
#     no JSON at all, against the same bytes through cat; and peak RSS with
#     the adapter and without it over that gigabyte.
if want agent; then
	say "== pass-through with an adapter (--agent claude): 1 GiB of stream-json, 1 GiB of text (7 reps each)"
	J="$BENCH/jsonl.bin $GIB" P="head -c $GIB /dev/zero"
	for s in json text; do
		case $s in
		json)
			A="\"\$CBEXEC\" -q --agent claude -- $J | cat >/dev/null"
			B="$J | cat | cat >/dev/null" ;;
		text)
			A="\"\$CBEXEC\" -q --agent claude -- sh -c '$P' | cat >/dev/null"
			B="sh -c '$P' | cat | cat >/dev/null" ;;
		esac
		O=$SCRATCH/agent-$s
		CBEXEC=$CBEXEC "$AB" -n 7 -w 1 -o "$O" -- sh -c "$A" ::: sh -c "$B"
		a=$(med "$O" A 2) b=$(med "$O" B 2)
		ta=$(calc %.0f "$GIB / 1048576 / ($a / 1e9)")
		tb=$(calc %.0f "$GIB / 1048576 / ($b / 1e9)")
		r=$(calc %.2f "$ta / $tb")
		row "pass-through with an adapter, $s (1 GiB, median throughput)" \
		    "${ta}MiB/s" "${tb}MiB/s" "${r}x" ">= 0.9x" \
		    "$(verdict "$r" ">=" 0.9)"
		note "CPU (whole pipeline): cbexec side $(calc %.2fs "$(med "$O" A 7) / 1e9"), cat side $(calc %.2fs "$(med "$O" B 7) / 1e9")"
	done
	say "== memory: peak RSS (VmHWM) of cbexec over 1 GiB of stream-json with the adapter, without it, and over 1 MiB with it (3 runs each)"
	H=$SCRATCH/hwm-agent
	for _ in 1 2 3; do
		for a in claude none; do
			BENCH_HWM=$H.$a LD_PRELOAD=$BENCH/hwm.bin "$CBEXEC" -q \
				--agent $a -- $J >/dev/null
		done
		BENCH_HWM=$H.small LD_PRELOAD=$BENCH/hwm.bin "$CBEXEC" -q \
			--agent claude -- "$BENCH/jsonl.bin" 1048576 >/dev/null
	done
	comm=$(basename "$CBEXEC" | cut -c1-15)
	for a in claude none small; do
		awk -v c="$comm" '$1 == c { print "X", $3 }' "$H.$a" >"$H.$a.c"
	done
	m=$(med "$H.claude.c" X 2) n=$(med "$H.none.c" X 2)
	k=$(med "$H.small.c" X 2)
	r=$(calc %.2f "$m / $n")
	row "peak RSS at 1 GiB of stream-json, adapter / none (median VmHWM)" \
	    "${m}KiB" "${n}KiB" "${r}x" "<= 1.1x" "$(verdict "$r" "<=" 1.1)"
	r=$(calc %.2f "$m / $k")
	row "peak RSS with the adapter, 1 GiB / 1 MiB of stream-json" \
	    "${m}KiB" "${k}KiB" "${r}x" "<= 1.1x" "$(verdict "$r" "<=" 1.1)"
	took
fi

# ---------------------------------------------------------------------------
# 4c. What watching the stream costs: the same 1 GiB of stream-json through
#     cbexec with the Claude adapter adding up its usage against every cap
#     and fingerprinting its tool calls (caps no run reaches), against the
#     adapter reading it with no cap and no loop watch, and against the
#     pass-through reference of 4b (one cat in cbexec's place).
if want spend; then
	say "== stream accounting: 1 GiB of stream-json with --agent claude and every cap, against the adapter alone and against cat (7 reps each)"
	J="$BENCH/jsonl.bin $GIB"
	CAPS="--max-cost 1000000 --max-tokens 9000000000000000"
	CAPS="$CAPS --max-turns 1000000000 --max-repeat-calls 5 --idle-timeout 1h"
	A="\"\$CBEXEC\" -q --progress exit $NEVER --agent claude $CAPS -- $J | cat >/dev/null"
	for s in adapter cat; do
		case $s in
		adapter)
			what="the adapter with no cap"
			B="\"\$CBEXEC\" -q --progress exit $NEVER --agent claude --max-repeat-calls 0 -- $J | cat >/dev/null" ;;
		cat)
			what="cat in cbexec's place"
			B="$J | cat | cat >/dev/null" ;;
		esac
		O=$SCRATCH/spend-$s
		CBEXEC=$CBEXEC "$AB" -n 7 -w 1 -o "$O" -- sh -c "$A" ::: sh -c "$B"
		a=$(med "$O" A 2) b=$(med "$O" B 2)
		ta=$(calc %.0f "$GIB / 1048576 / ($a / 1e9)")
		tb=$(calc %.0f "$GIB / 1048576 / ($b / 1e9)")
		r=$(calc %.2f "$ta / $tb")
		row "stream accounting and caps against $what (1 GiB of stream-json, median throughput)" \
		    "${ta}MiB/s" "${tb}MiB/s" "${r}x" ">= 0.9x" \
		    "$(verdict "$r" ">=" 0.9)"
		note "CPU (whole pipeline): accounting $(calc %.2fs "$(med "$O" A 7) / 1e9"), reference $(calc %.2fs "$(med "$O" B 7) / 1e9")"
	done
	took
fi

# ---------------------------------------------------------------------------
# 5. --status --json on a state with a full history (100 events).
if want status; then
	say "== cbexec --status --json (41 reps; cat of the same file for scale)"
	if [ ! -f "$CBEXEC_STATE_DIR/loop.json" ]; then
		"$CBEXEC" -q --name loop -n 150 --loop --progress exit $NEVER -- /bin/true
	fi
	O=$SCRATCH/status
	"$AB" -n 41 -w 3 -o "$O" -- "$CBEXEC" --status --json loop \
		::: cat "$CBEXEC_STATE_DIR/loop.json" >/dev/null
	a=$(med "$O" A 2) b=$(med "$O" B 2)
	row "--status --json, $(wc -c <"$CBEXEC_STATE_DIR/loop.json")-byte state (median)" \
	    "$(calc %.2fms "$a / 1e6")" "cat $(calc %.2fms "$b / 1e6")" "-" \
	    "<= 2ms" "$(verdict "$(calc %.3f "$a / 1e6")" "<=" 2)"
	O=$SCRATCH/version
	"$AB" -n 41 -w 3 -o "$O" -- "$CBEXEC" --version ::: "$BENCH/empty-libs.bin" >/dev/null
	note "diagnosis: cbexec --version alone takes $(calc %.2fms "$(med "$O" A 2) / 1e6"); an empty program with the same libraries $(calc %.2fms "$(med "$O" B 2) / 1e6")"
	took
fi

# ---------------------------------------------------------------------------
# 6. --progress files on 100 000 files: a fingerprint before the run and,
#    when the watch saw a change, one after it, minus a bare run, against
#    one git status of the same tree.
if want files; then
	say "== --progress files on a 100 000-file tree  vs  git status --porcelain (5 reps)"
	TREE=$SCRATCH/tree
	if ! "$BENCH/mktree.bin" "$TREE" 100000; then
		skip "cannot make the tree"
	elif ! (cd "$TREE" && git init -q . && git add -A &&
		git -c user.name=bench -c user.email=bench@example.org \
		commit -qm tree); then
		skip "cannot commit the tree (git missing?)"
	else
		# Files must be older than the index, or git re-reads the
		# "racily clean" ones on every status.
		sleep 1
		git -C "$TREE" update-index -q --really-refresh >/dev/null 2>&1
		git -C "$TREE" status --porcelain >/dev/null
		O=$SCRATCH/files
		"$AB" -n 5 -w 1 -T 30 -o "$O" -- "$CBEXEC" -q --name files $NEVER \
			--progress files --watch "$TREE" -- true \
			::: git -C "$TREE" status --porcelain >/dev/null
		O2=$SCRATCH/bare
		"$AB" -n 5 -w 1 -T 30 -o "$O2" -- "$CBEXEC" -q --name bare \
			--progress exit -- true ::: git -c core.preloadIndex=false \
			-C "$TREE" status --porcelain >/dev/null
		# A run that changes a file: the watch sees it, so the tree
		# is walked again after the run.
		O3=$SCRATCH/touch
		"$AB" -n 5 -w 1 -T 30 -o "$O3" -- "$CBEXEC" -q --name touch \
			$NEVER --progress files --watch "$TREE" -- \
			touch "$TREE/d00/d00/f00.txt" ::: true
		a=$(calc %.1f "($(med "$O" A 2) - $(med "$O2" A 2)) / 1e6")
		b=$(calc %.1f "$(med "$O" B 2) / 1e6")
		r=$(calc %.2f "$a / $b")
		row "--progress files, 100 000 files (median, minus bare run)" \
		    "${a}ms" "${b}ms" "${r}x" "<= 1.0x" "$(verdict "$r" "<=" 1.0)"
		note "diagnosis: one walk before the run; nothing changed, so none after. A run that touches a file (a second walk): $(calc %.1fms "($(med "$O3" A 2) - $(med "$O2" A 2)) / 1e6"); a bare run takes $(calc %.1fms "$(med "$O2" A 2) / 1e6"); git status with core.preloadIndex=false (one thread for lstat) $(calc %.1fms "$(med "$O2" B 2) / 1e6")"
	fi
	took
fi

# ---------------------------------------------------------------------------
# 7. The git probe (--progress auto in a work tree): one snapshot, half of
#    what a run in the tree costs more than the same run with --progress
#    exit, against one git status --porcelain, half of what a run whose
#    command runs two of them costs more.  The tree: 30 000 files
#    committed (empty but for 200 of 60 lines), those 200 modified.
if want probe; then
	# 200 files spread over the tree: 60 lines of text each (what=text),
	# or a line changed and one added (what=edit).
	EDIT200='BEGIN {
		for (i = 0; i < 200; i++) {
			f = sprintf("%s/d%02d/d%02d/f%02d.txt", t, i % 3,
			    i * 7 % 100, i % 100)
			for (l = 0; l < 60; l++)
				printf "%s %d of file %d: text for git to diff\n",
				    what == "edit" && l == 30 ? "changed" : "line",
				    l, i > f
			if (what == "edit")
				printf "one more line\n" > f
			close(f)
		}
	}'
	say "== git probe: one snapshot in a 30 000-file tree with 200 modified files  vs  git status --porcelain (21 reps)"
	TREE=$SCRATCH/ptree
	if ! "$BENCH/mktree.bin" "$TREE" 30000; then
		skip "cannot make the tree"
	elif ! (cd "$TREE" && awk -v t="$TREE" -v what=text "$EDIT200" &&
		git init -q . && git add -A &&
		git -c user.name=bench -c user.email=bench@example.org \
		commit -qm tree); then
		skip "cannot commit the tree (git missing?)"
	else
		# Files older than the index (none "racily clean"), then the
		# 200 with text in them modified.
		sleep 1
		git -C "$TREE" update-index -q --really-refresh >/dev/null 2>&1
		awk -v t="$TREE" -v what=edit "$EDIT200"
		n=$(git -C "$TREE" status --porcelain | wc -l | tr -d ' ')
		# The same run three ways, alternately: with the probe (two
		# snapshots around the command), without it (--progress exit)
		# running two git status in the command instead, and bare.
		GS='git status --porcelain >/dev/null; git status --porcelain >/dev/null'
		O=$SCRATCH/probe
		"$AB" -n 21 -w 2 -T 60 -o "$O" -- "$CBEXEC" -C "$TREE" -q \
			--name probe $NEVER -- sh -c : \
			::: "$CBEXEC" -C "$TREE" -q --name probegs $NEVER \
			--progress exit -- sh -c "$GS"
		O2=$SCRATCH/probebare
		"$AB" -n 21 -w 2 -T 60 -o "$O2" -- "$CBEXEC" -C "$TREE" -q \
			--name probebare $NEVER --progress exit -- sh -c : \
			::: git -C "$TREE" status --porcelain >/dev/null
		# Ten runs in one invocation: each snapshot before a run
		# finds the files the one after the last run read.
		O3=$SCRATCH/probeloop
		"$AB" -n 5 -w 1 -T 60 -o "$O3" -- "$CBEXEC" -C "$TREE" -q \
			--name probeloop $NEVER -n 10 --loop -- sh -c : \
			::: "$CBEXEC" -C "$TREE" -q --name probeloopgs $NEVER \
			-n 10 --loop --progress exit -- sh -c "$GS"
		bare=$(med "$O2" A 2)
		a=$(calc %.2f "($(med "$O" A 2) - $bare) / 2 / 1e6")
		b=$(calc %.2f "($(med "$O" B 2) - $bare) / 2 / 1e6")
		r=$(calc %.2f "$a / $b")
		row "git probe, one snapshot, 30 000 files, 200 modified (median wall)" \
		    "${a}ms" "${b}ms" "${r}x" "<= 1.2x" "$(verdict "$r" "<=" 1.2)"
		bare=$(med "$O2" A 7)
		ca=$(calc %.2f "($(med "$O" A 7) - $bare) / 2 / 1e6")
		cb=$(calc %.2f "($(med "$O" B 7) - $bare) / 2 / 1e6")
		note "CPU (user+sys, git included): a snapshot ${ca}ms, a git status ${cb}ms: $(calc %.2fx "$ca / $cb"); git status lists $n changed paths; exit statuses: $(exits "$O" A) / $(exits "$O" B)"
		note "diagnosis: a run with the probe takes $(calc %.1fms "$(med "$O" A 2) / 1e6"), with two git status instead $(calc %.1fms "$(med "$O" B 2) / 1e6"), with neither $(calc %.1fms "$(med "$O2" A 2) / 1e6"); git status --porcelain alone $(calc %.1fms "$(med "$O2" B 2) / 1e6"); ten runs in one invocation with the probe $(calc %.0fms "$(med "$O3" A 2) / 1e6"), with two git status in each instead $(calc %.0fms "$(med "$O3" B 2) / 1e6") ($(calc %.2fx "$(med "$O3" A 2) / $(med "$O3" B 2)"), CPU $(calc %.2fx "$(med "$O3" A 7) / $(med "$O3" B 7)"))"
	fi
	took
fi

# ---------------------------------------------------------------------------
# A/B: this binary against another (CBEXEC_B), the same invocations
# alternately: what a change costs per invocation.
if want ab; then
	if [ -z "${CBEXEC_B:-}" ] || [ ! -x "$CBEXEC_B" ]; then
		skip "ab: set CBEXEC_B to the other cbexec"
	else
		say "== A/B: $CBEXEC (A) against $CBEXEC_B (B), 61 reps each"
		D=${SHM:-$SCRATCH}
		for what in ok fail status; do
			O=$SCRATCH/ab-$what
			case $what in
			ok) set -- -q --state "$D/ab-a.json" $NEVER -- /bin/true \
				::: "$CBEXEC_B" -q --state "$D/ab-b.json" $NEVER \
				-- /bin/true ;;
			fail) set -- -q --state "$D/ab-c.json" $NEVER -- /bin/false \
				::: "$CBEXEC_B" -q --state "$D/ab-d.json" $NEVER \
				-- /bin/false ;;
			status) set -- --status --state "$D/ab-a.json" \
				::: "$CBEXEC_B" --status --state "$D/ab-a.json" ;;
			esac
			"$AB" -n 61 -w 3 -o "$O" -- "$CBEXEC" "$@" >/dev/null
			row "A/B: $what (median wall)" \
			    "$(calc %.2fms "$(med "$O" A 2) / 1e6")" \
			    "$(calc %.2fms "$(med "$O" B 2) / 1e6")" \
			    "$(calc %.2fx "$(med "$O" A 2) / $(med "$O" B 2)")" "-" "-"
			note "CPU: A $(calc %.2fms "$(med "$O" A 7) / 1e6"), B $(calc %.2fms "$(med "$O" B 7) / 1e6"): $(calc %.2fx "$(med "$O" A 7) / $(med "$O" B 7)"); peak RSS A $(med "$O" A 3) KiB, B $(med "$O" B 3) KiB"
		done
	fi
	took
fi

# ---------------------------------------------------------------------------
# 8. The shared store (--store) on a local redis-server of its own (unix
#    socket, no persistence): one invocation and a loop of 1000 runs,
#    against the file store and against bench/redisfloor.bin, the same
#    Redis round trips made by plain commands and nothing else; and 20
#    invocations at once on one circuit (--wait-lock), store against file.
#    Then the same server over TCP and over TLS (rediss://, a throw-away
#    CA made here), each against the floor on the same transport.
if want store; then
	if ! command -v redis-server >/dev/null 2>&1; then
		skip "store: no redis-server"
	elif ! "$CC" -O2 -Wall -o "$BENCH/redisfloor.bin" \
	    "$BENCH/redisfloor.c" $(pkg-config --cflags --libs hiredis \
	    2>/dev/null || echo -lhiredis); then
		skip "store: cannot build bench/redisfloor.bin"
	else
		RS=$SCRATCH/redis.sock
		TLSARGS=
		# The TLS floor links libssl; the others must not load it.
		"$CC" -O2 -Wall -DFLOOR_TLS -o "$BENCH/redisfloor-tls.bin" \
		    "$BENCH/redisfloor.c" $(pkg-config --cflags --libs hiredis \
		    libssl 2>/dev/null || echo -lhiredis -lssl -lcrypto) ||
		    rm -f "$BENCH/redisfloor-tls.bin"
		# ports nobody else should be on; tried again when taken
		RPORT=$(awk 'BEGIN { srand(); print 20000 + 2 * int(rand() * 10000) }')
		TPORT=$((RPORT + 1))
		if [ -x "$BENCH/redisfloor-tls.bin" ] &&
		    command -v openssl >/dev/null 2>&1 && (
		    cd "$SCRATCH" &&
		    openssl req -x509 -newkey ec -pkeyopt \
			ec_paramgen_curve:prime256v1 -nodes -keyout ca.key \
			-out ca.pem -days 2 -subj /CN=bench-ca &&
		    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
			-nodes -keyout srv.key -out srv.csr -subj /CN=localhost &&
		    printf 'subjectAltName=DNS:localhost\n' >srv.ext &&
		    openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key \
			-CAcreateserial -days 2 -extfile srv.ext -out srv.pem
		    ) >/dev/null 2>&1; then
			TLSARGS="--tls-port $TPORT --tls-cert-file $SCRATCH/srv.pem
			    --tls-key-file $SCRATCH/srv.key
			    --tls-ca-cert-file $SCRATCH/ca.pem --tls-auth-clients no"
		fi
		for try in 1 2 3 4 5; do
			redis-server --port "$RPORT" --bind 127.0.0.1 \
			    --unixsocket "$RS" --save '' --appendonly no \
			    --dir "$SCRATCH" --daemonize no \
			    --logfile "$SCRATCH/redis.log" \
			    $(echo "$TLSARGS" | sed "s/--tls-port [0-9]*/--tls-port $TPORT/") &
			RPID=$!
			i=0
			while [ $i -lt 200 ] && kill -0 "$RPID" 2>/dev/null &&
			    ! redis-cli -s "$RS" ping >/dev/null 2>&1; do
				sleep 0.02; i=$((i + 1))
			done
			kill -0 "$RPID" 2>/dev/null && break
			RPORT=$((RPORT + 2)) TPORT=$((TPORT + 2))
		done
		ST="--store unix://$RS"
		say "== store, single invocation: cbexec --store unix://SOCK --name s -- /bin/true  vs  the file store, vs bench/redisfloor.bin 1 (41 reps)"
		O=$SCRATCH/st1
		"$AB" -n 41 -w 3 -o "$O" -- "$CBEXEC" -q $ST --name s \
			--progress exit -- /bin/true ::: "$CBEXEC" -q --name sf \
			--progress exit -- /bin/true
		a=$(med "$O" A 2) b=$(med "$O" B 2)
		row "store: single invocation vs file store (median wall)" \
		    "$(calc %.2fms "$a / 1e6")" "$(calc %.2fms "$b / 1e6")" \
		    "$(calc %.2fx "$a / $b")" "-" "-"
		size=$(redis-cli -s "$RS" GET cbexec:circuit:s | wc -c)
		O=$SCRATCH/st1f
		"$AB" -n 41 -w 3 -o "$O" -- "$CBEXEC" -q $ST --name s \
			--progress exit -- /bin/true ::: "$BENCH/redisfloor.bin" \
			"$RS" 1 "$size" floor:s -- /bin/true
		a=$(med "$O" A 2) b=$(med "$O" B 2)
		row "store: single invocation vs Redis floor (median wall)" \
		    "$(calc %.2fms "$a / 1e6")" "$(calc %.2fms "$b / 1e6")" \
		    "$(calc %.2fx "$a / $b")" "-" "-"
		note "CPU: cbexec $(calc %.2fms "$(med "$O" A 7) / 1e6"), floor $(calc %.2fms "$(med "$O" B 7) / 1e6"); state $size bytes; exit statuses: $(exits "$O" A) / $(exits "$O" B)"

		say "== store, loop: cbexec --store ... -n 1000 --loop -- /bin/true  vs  the file store, vs bench/redisfloor.bin 1000 (3 reps)"
		LOOP="-q -n 1000 --loop --progress exit $NEVER"
		"$CBEXEC" $ST --name sl $LOOP -- /bin/true
		size=$(redis-cli -s "$RS" GET cbexec:circuit:sl | wc -c)
		O=$SCRATCH/stl
		"$AB" -n 3 -w 0 -T 60 -o "$O" -- "$CBEXEC" $ST --name sl $LOOP \
			-- /bin/true ::: "$CBEXEC" --name sfl $LOOP -- /bin/true
		a=$(med "$O" A 2) b=$(med "$O" B 2)
		row "store: loop of 1000 vs file store (median wall/run)" \
		    "$(calc %.0fus "$a / 1e3 / 1000")" \
		    "$(calc %.0fus "$b / 1e3 / 1000")" "$(calc %.2fx "$a / $b")" \
		    "-" "-"
		O=$SCRATCH/stlf
		"$AB" -n 3 -w 0 -T 60 -o "$O" -- "$CBEXEC" $ST --name sl $LOOP \
			-- /bin/true ::: "$BENCH/redisfloor.bin" "$RS" 1000 \
			"$size" floor:sl -- /bin/true
		a=$(med "$O" A 2) b=$(med "$O" B 2)
		row "store: loop of 1000 vs Redis floor (median wall/run)" \
		    "$(calc %.0fus "$a / 1e3 / 1000")" \
		    "$(calc %.0fus "$b / 1e3 / 1000")" "$(calc %.2fx "$a / $b")" \
		    "-" "-"
		note "CPU per run: cbexec $(calc %.0fus "$(med "$O" A 7) / 1e6"), floor $(calc %.0fus "$(med "$O" B 7) / 1e6"); state $size bytes; exit statuses: $(exits "$O" A) / $(exits "$O" B)"

		# transport NAME URL FLOORBIN FLOOR [OPTIONS...]: one
		# invocation and a loop of 1000 over URL, each against the
		# floor FLOORBIN over FLOOR.
		transport() {
			_t=$1 _u=$2 _fb=$3 _f=$4
			shift 4
			say "== store over $_t: cbexec --store $_u  vs  bench/redisfloor.bin $_f (one invocation: 41 reps; a loop of 1000: 3 reps)"
			"$CBEXEC" -q --store "$_u" "$@" --name "t$_t" \
			    --progress exit -- /bin/true
			_s=$(redis-cli -s "$RS" GET "cbexec:circuit:t$_t" | wc -c)
			O=$SCRATCH/tr1$_t
			"$AB" -n 41 -w 3 -o "$O" -- "$CBEXEC" -q --store "$_u" "$@" \
			    --name "t$_t" --progress exit -- /bin/true ::: \
			    "$_fb" "$_f" 1 "$_s" "floor:t$_t" \
			    -- /bin/true
			a=$(med "$O" A 2) b=$(med "$O" B 2)
			row "store over $_t: single invocation vs its floor (median wall)" \
			    "$(calc %.2fms "$a / 1e6")" "$(calc %.2fms "$b / 1e6")" \
			    "$(calc %.2fx "$a / $b")" "-" "-"
			note "CPU: cbexec $(calc %.2fms "$(med "$O" A 7) / 1e6"), floor $(calc %.2fms "$(med "$O" B 7) / 1e6"); peak RSS cbexec $(med "$O" A 3) KiB, floor $(med "$O" B 3) KiB; exit statuses: $(exits "$O" A) / $(exits "$O" B)"
			"$CBEXEC" --store "$_u" "$@" --name "l$_t" $LOOP -- /bin/true
			_s=$(redis-cli -s "$RS" GET "cbexec:circuit:l$_t" | wc -c)
			O=$SCRATCH/trl$_t
			"$AB" -n 3 -w 0 -T 60 -o "$O" -- "$CBEXEC" --store "$_u" "$@" \
			    --name "l$_t" $LOOP -- /bin/true ::: \
			    "$_fb" "$_f" 1000 "$_s" "floor:l$_t" \
			    -- /bin/true
			a=$(med "$O" A 2) b=$(med "$O" B 2)
			row "store over $_t: loop of 1000 vs its floor (median wall/run)" \
			    "$(calc %.0fus "$a / 1e3 / 1000")" \
			    "$(calc %.0fus "$b / 1e3 / 1000")" \
			    "$(calc %.2fx "$a / $b")" "-" "-"
			note "CPU per run: cbexec $(calc %.0fus "$(med "$O" A 7) / 1e6"), floor $(calc %.0fus "$(med "$O" B 7) / 1e6"); exit statuses: $(exits "$O" A) / $(exits "$O" B)"
		}
		transport TCP "redis://127.0.0.1:$RPORT/0" \
		    "$BENCH/redisfloor.bin" "tcp:127.0.0.1:$RPORT"
		if [ -n "$TLSARGS" ]; then
			transport TLS "rediss://localhost:$TPORT/0" \
			    "$BENCH/redisfloor-tls.bin" \
			    "tls:localhost:$TPORT:$SCRATCH/ca.pem" \
			    --store-ca "$SCRATCH/ca.pem"
		else
			skip "store over TLS: no openssl, or no TLS in redis-server"
		fi

		say "== store, contention: 20 invocations at once on one circuit (--wait-lock), store vs file store (9 reps)"
		C20='i=0; while [ $i -lt 20 ]; do "$0" "$@" -- /bin/true & i=$((i + 1)); done; wait'
		O=$SCRATCH/stc
		"$AB" -n 9 -w 1 -o "$O" -- sh -c "$C20" "$CBEXEC" -q $ST \
			--name sc --wait-lock=60s --progress exit ::: sh -c "$C20" \
			"$CBEXEC" -q --name sfc --wait-lock=60s --progress exit
		a=$(med "$O" A 2) b=$(med "$O" B 2)
		row "store: 20 at once, all done (median wall)" \
		    "$(calc %.1fms "$a / 1e6")" "$(calc %.1fms "$b / 1e6")" \
		    "$(calc %.2fx "$a / $b")" "-" "-"
		note "runs recorded: store $(redis-cli -s "$RS" GET cbexec:circuit:sc | sed -n 's/^  \"iteration\": \([0-9]*\),/\1/p'), file $(sed -n 's/^  \"iteration\": \([0-9]*\),/\1/p' "$CBEXEC_STATE_DIR/sfc.json") (20 per repetition, warm-up included)"
		kill "$RPID" 2>/dev/null
		wait "$RPID" 2>/dev/null
	fi
	took
fi

say "== summary, $(($(date +%s) - T0)) s in all (paste into bench/README.md)"
say "| what | cbexec | reference | ratio | target | met |"
say "|---|---|---|---|---|---|"
cat "$ROWS"
exit 0
