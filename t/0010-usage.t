#!/bin/sh
# SPDX-License-Identifier: ISC
# Usage, --help, --version, and every kind of bad option value -> 125.
. "$(dirname "$0")/lib.sh"

out=$("$CBEXEC" --help); rc=$?
is "$rc" 0 "--help exits 0"
like "$out" '^usage: cbexec' "--help prints usage on stdout"
for code in 120 121 122 123 124 125 126 127; do
	like "$out" "^  $code " "--help lists exit code $code"
done
out=$("$CBEXEC" --version); is "$?" 0 "--version exits 0"
like "$out" '^cbexec [0-9]+\.[0-9]+\.[0-9]+$' "--version prints the version"
like "$out" '^Copyright \(C\) [0-9]{4} the cbexec authors\.$' "--version: copyright line"
like "$out" '^License ISC: ' "--version: licence line"

bad() {	# bad DESC ARGS... : exit 125, one line naming the problem
	desc=$1; shift
	err=$("$CBEXEC" "$@" 2>&1 >/dev/null); rc=$?
	is "$rc" 125 "$desc: exit 125"
	like "$err" "$PATTERN" "$desc: message"
}
PATTERN='no COMMAND'; bad "no command"
PATTERN="unknown option '--frobnicate'"; bad "unknown option" --frobnicate -- true
PATTERN="needs a value"; bad "missing value" --timeout
for d in 42D -1 1e3 abc 1.5S 1..2 '' ' 1' 0x10 inf 3650d1 10.5x; do
	PATTERN="invalid duration.*--timeout"; bad "duration '$d'" --timeout "$d" -- true
done
for d in 400000000 3651d 87700h; do
	PATTERN="'$d' for --timeout is over the limit of 10 years"
	bad "duration '$d' too long" --timeout "$d" -- true
done
PATTERN="ambiguous option '--stat' \(--state, --status\)"; bad "ambiguous abbreviation" --stat
PATTERN="option '--no-prompt' takes no value"; bad "value for a flag" --no-prompt=yes -- true
PATTERN="unknown option '--=x'"; bad "an empty long option" --=x -- true
PATTERN="invalid CIRCUIT '.hidden'"; bad "bad CIRCUIT argument" --status .hidden
PATTERN="invalid duration.*--budget"; bad "bad budget" --budget 5y -- true
PATTERN="invalid duration.*--kill-after"; bad "bad kill-after" -k -2 -- true
PATTERN="invalid signal 'FOO'"; bad "bad signal" --signal FOO -- true
PATTERN="unknown phase 'BLUE'"; bad "unknown phase" --phase BLUE -- true
PATTERN="--no-progress-threshold"; bad "negative threshold" --no-progress-threshold -3 -- true
PATTERN="--same-error-threshold"; bad "non-numeric threshold" --same-error-threshold x -- true
PATTERN="--iterations"; bad "zero iterations" -n 0 -- true
PATTERN="invalid circuit name"; bad "bad name" --name .hidden -- true
PATTERN="CB_SAME_ERROR_THRESHOLD"
err=$(CB_SAME_ERROR_THRESHOLD=abc "$CBEXEC" -- true 2>&1); is "$?" 125 "bad env threshold: 125"
like "$err" "CB_SAME_ERROR_THRESHOLD" "bad env threshold: names the variable"
PATTERN="--ok-exit-codes"; bad "bad code list" --ok-exit-codes 0,300 -- true
PATTERN="--exit-codes"; bad "bad remap" --exit-codes open=x -- true
PATTERN="progress source"; bad "bad progress" --progress gti -- true

# Accepted forms run the command.
for d in 90 1.5s .1 15m 2h 1d 250ms 0 3650d; do
	"$CBEXEC" --timeout "$d" --progress exit -- true; is "$?" 0 "duration '$d' accepted"
done
for s in TERM SIGTERM term 15 0 KILL; do
	"$CBEXEC" --signal "$s" --progress exit -- true; is "$?" 0 "signal '$s' accepted"
done
# Options after COMMAND belong to COMMAND.
out=$("$CBEXEC" --progress exit -- echo --timeout x); is "$out" "--timeout x" "COMMAND's options are its own"
out=$("$CBEXEC" --progress exit echo -n hi); is "$out" "hi" "parsing stops at the first non-option"

# -C: relative paths live in DIR.
mkdir -p sub
"$CBEXEC" -C sub --state st.json --progress exit -- true; is "$?" 0 "-C runs"
ok "$(test -f sub/st.json; echo $?)" "-C: relative --state lands in DIR"
err=$("$CBEXEC" -C nowhere -- true 2>&1); is "$?" 125 "-C missing dir: 125"
like "$err" "nowhere" "-C missing dir: names it"
# A value with control bytes in it still makes a one-line message.
nl='
'
"$CBEXEC" -t "1${nl}rm -rf" -- true 2>err; is "$?" 125 "newline in a value: 125"
is "$(wc -l <err | tr -d ' ')" 2 "newline in a value: the message stays one line (+ the --help pointer)"
like "$(head -1 err)" '1\\nrm -rf' "newline in a value: shown escaped"
done_testing
