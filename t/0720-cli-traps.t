#!/bin/sh
# SPDX-License-Identifier: ISC
# Command-line traps a user of timeout(1) and flock(1) would fall into:
# -s is the signal (not a state file named KILL), an optional value is
# never taken from the next word silently, an operator command on a
# circuit that does not exist says so instead of showing a healthy one,
# -q keeps the refusal of an OPEN circuit out of cron mail, write errors on
# stdout are reported, colour follows NO_COLOR and TERM, a relative
# XDG_STATE_HOME is ignored; and the README's and man page's recipes do
# what they say.
. "$(dirname "$0")/lib.sh"
cb() { "$CBEXEC" -q --no-prompt --progress exit "$@"; }
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# ---- -s is --signal, as in timeout(1) ------------------------------------
start=$(date +%s%N)
cb --state s.json -s KILL -k 0 -t 0.2 -- sh -c 'trap "" TERM; sleep 3; touch late'
rc=$?; el=$(ms "$start")
is "$rc" 124 "-s KILL -k 0 -t 0.2: 124"
ok "$([ ! -e late ]; echo $?)" \
	"-s KILL kills a command that ignores TERM (${el}ms)"
ok "$([ ! -e KILL ]; echo $?)" "-s KILL creates no state file named KILL"
err=$(cb -s x.json -- true 2>&1); rc=$?
is "$rc" 125 "-s FILE is no longer a state file: 125"
like "$err" "invalid signal 'x.json' for --signal" "... a bad signal for --signal"
cb --state long.json -- true
ok "$([ -f long.json ]; echo $?)" "--state FILE keeps its long form"

# ---- an optional value is never taken from the next word -----------------
err=$(cb --state w.json --wait-lock 30 -- touch ran30 2>&1); rc=$?
is "$rc" 125 "--wait-lock 30 -- cmd: a usage error"
like "$err" "--wait-lock=30" "... that shows --wait-lock=30"
like "$err" "Try 'cbexec --help'" "... and points to --help"
ok "$([ ! -e ran30 ] && [ ! -e w.json ]; echo $?)" "... nothing ran, no circuit made"
err=$(cb --state w.json --wait 1.5s touch ran15 2>&1); rc=$?
is "$rc" 125 "an abbreviated --wait 1.5s: a usage error too"
like "$err" "--wait-lock=1.5s" "... showing --wait-lock=1.5s"
cb --state w.json --wait-lock -- touch ranbare; is "$?" 0 "a bare --wait-lock then -- still runs"
ok "$([ -e ranbare ]; echo $?)" "... the command"
cb --state w.json --wait-lock=30 -- true; is "$?" 0 "--wait-lock=30 works"

# ---- operator commands on a circuit that does not exist ------------------
for verb in --status --history --reset-circuit --trip --skip "--unskip GREEN"; do
	err=$("$CBEXEC" $verb nightyl 2>&1); rc=$?
	is "$rc" 125 "$verb on a mistyped name: 125"
	like "$err" "^cbexec: no such circuit 'nightyl': $CBEXEC_STATE_DIR/nightyl.json does not exist$" \
		"$verb: says 'no such circuit', naming the path it looked at"
done
ok "$([ ! -e "$CBEXEC_STATE_DIR" ]; echo $?)" "none of them made the state directory or a file"
err=$("$CBEXEC" --status --state sub/none.json 2>&1); rc=$?
is "$rc:$err" "125:cbexec: no such circuit: sub/none.json does not exist" \
	"--status --state PATH: no such circuit"
err=$("$CBEXEC" --reset-circuit 2>&1); rc=$?
is "$rc" 125 "--reset-circuit of the working directory's circuit, never run: 125"
ok "$([ ! -e sub ] && [ ! -e .cbexec ]; echo $?)" "... creating nothing"
err=$("$CBEXEC" --status --json nightyl 2>&1); is "$?" 125 "--status --json: 125 as well"
# A real circuit beside the typo stays as it was.
cb --name nightly -n 3 -- false 2>/dev/null
before=$(cat "$CBEXEC_STATE_DIR/nightly.json")
"$CBEXEC" --reset-circuit nightyl 2>/dev/null
is "$(cat "$CBEXEC_STATE_DIR/nightly.json")" "$before" "the real circuit is untouched"
ok "$([ ! -e "$CBEXEC_STATE_DIR/nightyl.json" ]; echo $?)" "... and no nightyl.json appeared"

# --trip --create opens a circuit that has not run yet.
err=$("$CBEXEC" --trip --create --reason "not before the migration" fresh 2>&1); rc=$?
is "$rc" 0 "--trip --create: 0"
is "$(jget "$CBEXEC_STATE_DIR/fresh.json" state)" OPEN "... the new circuit is OPEN"
is "$(jget "$CBEXEC_STATE_DIR/fresh.json" open_reason)" \
	"tripped by operator: not before the migration" "... with the operator's reason"
cb --name fresh -- touch ranfresh; is "$?" 120 "its first run is refused: 120"
ok "$([ ! -e ranfresh ]; echo $?)" "... and does not run"
"$CBEXEC" --trip --create fresh 2>/dev/null; is "$?" 0 "--trip --create on an existing circuit: trips it"
err=$("$CBEXEC" --create --status fresh 2>&1); rc=$?
is "$rc" 125 "--create without --trip: usage error"
like "$err" "--create goes only with --trip" "... saying so"

# ---- -q: the refusal of an OPEN circuit is silent ------------------------
err=$(cb --name nightly -- true 2>&1); rc=$?
is "$rc:$err" "120:" "-q on an OPEN circuit: 120 and not a word"
err=$("$CBEXEC" --no-prompt --name nightly -- true 2>&1); rc=$?
is "$rc" 120 "without -q: 120"
like "$err" "circuit is OPEN.*not running" "... and the refusal line"

# ---- write errors on stdout ----------------------------------------------
if [ -w /dev/full ]; then
	for args in "--help" "--version" "--status nightly" "--history nightly" \
	    "--status --all" "--status --json nightly"; do
		err=$($CBEXEC $args 2>&1 >/dev/full); rc=$?
		is "$rc" 125 "$args >/dev/full: 125"
		like "$err" "^cbexec: write error: No space left on device$" \
			"$args >/dev/full: says so"
	done
else
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do skip "no /dev/full"; done
fi
err=$("$CBEXEC" --status nightly 2>&1 >&-); rc=$?
is "$rc" 125 "--status >&-: 125"
like "$err" "^cbexec: write error: Bad file descriptor$" "--status >&-: says so"
err=$("$CBEXEC" --status nightly 2>&1 <&- >&-); rc=$?
is "$rc:$err" "125:cbexec: write error: Bad file descriptor" \
	"--status with stdin and stdout closed: the same"
err=$("$CBEXEC" --help 2>&1 >&-); rc=$?
is "$rc" 125 "--help >&-: 125 with a message"
like "$err" "write error" "--help >&-: says so"
# A closed stdout never receives the state file (nor it the output).
cp "$CBEXEC_STATE_DIR/nightly.json" nightly.before
"$CBEXEC" --reset-circuit nightly >&- 2>/dev/null; is "$?" 0 "--reset-circuit >&-: 0"
is "$(jget "$CBEXEC_STATE_DIR/nightly.json" state)" CLOSED "... and the state file is whole"
cb --name nightly -n 3 -- false 2>/dev/null
# Nor does a closed stderr make cbexec's messages land in the lock file,
# the first file it opens.
if [ -n "$UNDER_VALGRIND" ]; then
	skip "valgrind needs a stderr"; skip "valgrind needs a stderr"
else
	"$CBEXEC" --trip nightly 2>&-
	is "$?" 0 "--trip with stderr closed: 0"
	# It holds the start record of the last run, and nothing else.
	is "$(sed 's/^{"run":[0-9]*,[^}]*}$//' \
	    "$CBEXEC_STATE_DIR/nightly.json.lock" | tr -d ' \n')" "" \
		"... and its messages did not land in the lock file"
fi
"$CBEXEC" --reset-circuit nightly 2>/dev/null

# ---- colour: NO_COLOR only when not empty, TERM=dumb, only on a terminal --
if command -v script >/dev/null 2>&1; then
	colour() {	# colour ENV...: run a failing circuit on a terminal
		rm -f "$CBEXEC_STATE_DIR/col.json"
		env "$@" timeout 20 script -qec "$CBEXEC --no-prompt --progress exit --name col -n 3 -- false" /dev/null 2>&1 | cat -v
	}
	like "$(colour NO_COLOR= TERM=xterm)" '\^\[\[3[123]m' "NO_COLOR empty: colour on a terminal"
	out=$(colour NO_COLOR=1 TERM=xterm)
	ok "$(printf '%s' "$out" | grep -q '\^\[\['; [ $? -ne 0 ]; echo $?)" "NO_COLOR=1: no colour"
	like "$out" 'circuit HALF_OPEN -> OPEN' "... the lines are there"
	out=$(colour NO_COLOR= TERM=dumb)
	ok "$(printf '%s' "$out" | grep -q '\^\[\['; [ $? -ne 0 ]; echo $?)" "TERM=dumb: no colour"
	out=$(NO_COLOR= TERM=xterm "$CBEXEC" --no-prompt --progress exit --name col2 -n 3 -- false 2>&1 | cat -v)
	ok "$(printf '%s' "$out" | grep -q '\^\[\['; [ $? -ne 0 ]; echo $?)" "not a terminal: no colour"
else
	for i in 1 2 3 4 5; do skip "no script(1)"; done
fi

# ---- a relative XDG_STATE_HOME is ignored --------------------------------
mkdir -p home
(unset CBEXEC_STATE_DIR; XDG_STATE_HOME=relxdg HOME="$SCRATCH/home" \
	"$CBEXEC" -q --progress exit --name x -- true)
ok "$([ -f home/.local/state/cbexec/x.json ] && [ ! -e relxdg ]; echo $?)" \
	"XDG_STATE_HOME=relxdg: ignored, \$HOME/.local/state/cbexec used"
(unset CBEXEC_STATE_DIR; XDG_STATE_HOME="$SCRATCH/absxdg" HOME="$SCRATCH/home" \
	"$CBEXEC" -q --progress exit --name x -- true)
ok "$([ -f absxdg/cbexec/x.json ]; echo $?)" "an absolute XDG_STATE_HOME is used"

# ---- the recipes ---------------------------------------------------------
# A fake cbexec on PATH that exits 125 (cbexec's own error) and counts.
mkdir -p fake
printf '#!/bin/sh\necho x >> "%s/calls"\nexit 125\n' "$SCRATCH" > fake/cbexec
chmod +x fake/cbexec
# The README's loop script.
awk '/^### A loop script/ { f = 1 } f && /^#!\/bin\/sh$/ { p = 1 }
	p { print } p && /^done$/ { exit }' "$TOP/README.md" > readme-loop.sh
like "$(cat readme-loop.sh)" 'cbexec --name agent' "README: the loop script extracted"
rm -f calls
PATH="$SCRATCH/fake:$PATH" timeout 10 sh readme-loop.sh >/dev/null 2>&1; rc=$?
ok "$([ "$rc" -ne 124 ] && [ "$rc" -ne 0 ]; echo $?)" "README loop: 125 stops it (exit $rc), no retrying forever"
is "$(wc -l < calls | tr -d ' ')" 1 "README loop: cbexec ran once"
# The man page's.
awk '/^A loop script that decides by exit status/ { f = 1 }
	f && /^while :; do$/ { p = 1 } p { print } p && /^done$/ { exit }' \
	"$TOP/man/cbexec.1" | sed 's/\\e/\\/g' > man-loop.sh
like "$(cat man-loop.sh)" 'cbexec --name agent' "man page: the loop script extracted"
rm -f calls
PATH="$SCRATCH/fake:$PATH" timeout 10 sh man-loop.sh >/dev/null 2>&1; rc=$?
ok "$([ "$rc" -ne 124 ]; echo $?)" "man page loop: 125 stops it"
is "$(wc -l < calls | tr -d ' ')" 1 "man page loop: cbexec ran once"

# The README's plain retries: five tries, curl's own status, nothing left,
# the same again on the next invocation.
awk '/^For plain retries/ { f = 1 } f && /^d=\$\(mktemp -d\)/ { p = 1 }
	p { print } p && /rm -rf "\$d"$/ { exit }' "$TOP/README.md" > retry.sh
like "$(cat retry.sh)" 'curl -fsSO' "README: the plain-retries recipe extracted"
sed -i 's|curl -fsSO https://example.com/data.csv|sh -c "echo x >> tries; exit 6"|; s|--backoff 2s:1m|--backoff 10ms:20ms|' retry.sh
echo 'exit $rc' >> retry.sh
mkdir -p rwork real
printf '#!/bin/sh\nexec "%s" "$@"\n' "$CBEXEC" > real/cbexec
chmod +x real/cbexec
(cd rwork && PATH="$SCRATCH/real:$PATH" sh ../retry.sh 2>/dev/null); rc=$?
is "$rc" 6 "retries: the command's own status after the last try"
is "$(wc -l < rwork/tries | tr -d ' ')" 5 "retries: five tries"
(cd rwork && PATH="$SCRATCH/real:$PATH" sh ../retry.sh 2>/dev/null); rc=$?
is "$rc" 6 "retries again: not refused by a circuit left behind"
is "$(wc -l < rwork/tries | tr -d ' ')" 10 "retries again: five more tries"
is "$(ls -A rwork | tr '\n' ' ')" "tries " "retries: nothing left in the working directory"
done_testing
