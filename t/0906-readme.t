#!/bin/sh
# SPDX-License-Identifier: ISC
# README's transcripts are what the program prints: each is made again
# here, the wall clock set to the README's (t/clockshim.so), and compared
# line for line -- the milliseconds of a timestamp aside, and "..." in a
# transcript standing for lines left out.  The OPEN block fits 80 columns
# whatever opened the circuit, RESET (a command to paste) aside.
. "$(dirname "$0")/lib.sh"
README=$TOP/README.md
SHIM=$T_DIR/clockshim.so

# block HEADING FIRST: the fenced block of README under the heading that
# starts with HEADING whose first line is FIRST (leading indent removed).
block() {
	perl -e '
		my ($file, $head, $first) = @ARGV;
		open my $f, "<", $file or die;
		my ($under, $in, $ind, @b);
		while (<$f>) {
			if (/^#+ (.*)/) { $under = index($1, $head) == 0; next }
			next unless $under;
			if (!$in && /^(\s*)```/) { ($in, $ind, @b) = (1, $1); next }
			if ($in && /^\s*```/) {
				$in = 0;
				if (@b && $b[0] eq "$first\n") { print @b; exit }
				next;
			}
			push @b, s/^\Q$ind\E//r if $in;
		}
	' "$README" "$1" "$2"
}
# same GOT WANT: WANT's lines, "..." skipping any, are GOT's, in order,
# and all of them (unless WANT ends in "..."); milliseconds masked.
same() {
	printf '%s\n' "$1" | sed -E 's/\.[0-9]{3}Z/.NNNZ/g' > got.txt
	printf '%s\n' "$2" | sed -E 's/\.[0-9]{3}Z/.NNNZ/g' > want.txt
	perl -e '
		open my $g, "<", "got.txt" or die; my @g = <$g>;
		open my $w, "<", "want.txt" or die; my @w = <$w>;
		my ($i, $skip) = (0, 0);
		for my $l (@w) {
			if ($l eq "...\n") { $skip = 1; next }
			$i++ while $skip && $i < @g && $g[$i] ne $l;
			if ($i >= @g || $g[$i] ne $l) { print "at: $l"; exit 1 }
			($i, $skip) = ($i + 1, 0);
		}
		if (!$skip && $i < @g) { print "more: $g[$i]"; exit 1 }
	'
}

# The transcripts need the clock shim preloaded into cbexec.
why=$(shim_why clockshim)
# cbx HH:MM:SS ARGS: cbexec started at 2026-11-22 HH:MM:SS UTC exactly (the
# README's day).
cbx() {
	w=$1
	shift
	CLOCK_AT=$(date -u -d "2026-11-22 $w" +%s.%N) LD_PRELOAD=$SHIM "$CBEXEC" "$@"
}
mkdir -p lim/bin
cat > lim/bin/claude <<'EOF'
#!/bin/sh
echo "You've hit your 5-hour limit · resets 11:53pm (UTC)"
exit 1
EOF
chmod +x lim/bin/claude

if [ -n "$why" ]; then
	for i in 1 2 3 4 5 6; do skip "$why"; done
else
	printf '#!/bin/sh\necho "TypeError: x is undefined" >&2; exit 1\n' > fail.sh
	chmod +x fail.sh

	# --- "Reading --status" and "Operator reset" ----------------------------
	cbx 03:30:00 -q --no-prompt --progress exit --name backup -- true
	cbx 19:11:00 -q --no-prompt --progress exit --name nightly --phase GREEN \
	    --cooldown 3h -- true
	cbx 19:29:11 -q --no-prompt --progress exit --name nightly --phase GREEN \
	    --cooldown 3h -n 2 -- ./fail.sh 2>/dev/null
	cbx 21:40:11 -q --no-prompt --progress exit --name docs -n 2 -- false
	out=$(cbx 21:42:11 --status nightly; rc=$?; echo "\$ echo \$?"; echo $rc)
	want=$(block 'Reading `--status`' '$ cbexec --status nightly')
	msg=$(same "\$ cbexec --status nightly
$out" "$want")
	is "$?:$msg" "0:" "README, Reading --status: the transcript as printed"
	if command -v script >/dev/null 2>&1; then
		out=$(CLOCK_AT=$(date -u -d "2026-11-22 21:42:11" +%s) \
		    LD_PRELOAD=$SHIM COLUMNS=200 timeout 20 script -qec \
		    "'$CBEXEC' --status --all; rc=\$?; echo '\$ echo \$?'; echo \$rc" /dev/null | tr -d '\r')
		want=$(block 'Operator reset' '$ cbexec --status --all')
		msg=$(same "\$ cbexec --status --all
$out" "$want")
		is "$?:$msg" "0:" "README, Operator reset: --status --all on a terminal, as printed"
	else
		skip "no script(1): --status --all is not run on a terminal"
	fi

	# --- "A pipeline of phases, and Skip": the line of a skipped phase -----
	# From cron, with no $USER: no "by".
	cbx 19:20:00 -q --no-prompt --progress exit --name feat --phase GREEN -- true
	out=$(
		unset USER
		echo "\$ cbexec --skip --phase GREEN --reason \"known failures\" feat"
		cbx 19:31:02 --skip --phase GREEN --reason "known failures" feat 2>&1
		echo "\$ cbexec --name feat --phase GREEN --loop --budget 20m -- ./agent-step.sh GREEN"
		cbx 19:31:09 --name feat --phase GREEN --loop --budget 20m -- ./fail.sh GREEN 2>&1
		rc=$?
		echo "\$ echo \$?"
		echo $rc
	)
	want=$(block 'A pipeline of phases' '$ cbexec --skip --phase GREEN --reason "known failures" feat')
	msg=$(same "$out" "$want")
	is "$?:$msg" "0:" "README, Skip: the refused run's line, as printed"
	cbx 19:31:03 --unskip GREEN feat 2>/dev/null
	USER=alice cbx 19:31:04 --skip --phase GREEN --reason "known failures" feat 2>/dev/null
	like "$(cbx 19:31:05 --name feat --phase GREEN -- ./fail.sh 2>&1)" \
	    '^cbexec\[feat\]: phase GREEN was skipped at 2026-11-22T19:31:04\.[0-9]{3}Z by alice: known failures; not running it\.' \
	    "... and \"by USER\" when \$USER was set for the skip"

	# --- "AI coding agents": a usage limit; "One account, many circuits" ------
	(
		export CBEXEC_STATE_DIR=$SCRATCH/lim/state PATH=$SCRATCH/lim/bin:$PATH
		cbx 21:51:45 -q --no-prompt --name nightly --account max -- claude -p x \
		    >/dev/null 2>&1
		{ echo "\$ cbexec --status nightly"; cbx 21:51:45.5 --status nightly; } > lim.status
		{
			echo "\$ cbexec --name docs --account max -- claude -p \"\$(cat DOCS.md)\""
			cbx 21:51:45.5 --name docs --account max -- claude -p x 2>&1
			echo "\$ cbexec --status --account max docs"
			cbx 21:51:45.5 --status --account max docs
		} > lim.account
	)
	msg=$(same "$(cat lim.status)" "$(block 'AI coding agents' '$ cbexec --status nightly')")
	is "$?:$msg" "0:" "README, AI coding agents: a usage limit's --status, as printed"
	msg=$(same "$(cat lim.account)" "$(block 'One account, many circuits' '$ cbexec --name docs --account max -- claude -p "$(cat DOCS.md)"')")
	is "$?:$msg" "0:" "README, One account: the refusal and --status, as printed"

fi

# --- The OPEN block fits 80 columns --------------------------------------
# Each suggestion, a long error, a long reason, a long task and file name.
width() { perl -CS -ne 'chomp; $m = length if length > $m; END { print $m + 0 }'; }
long=src/components/authentication/providers/oauth2/callback/handler_with_a_long_name.ts
cat > step.sh <<EOF
#!/bin/sh
printf -- '---CBEXEC_STATUS---\nTASK: 12.4-refactor-the-authentication-provider-callback-handler-and-its-tests\n---END_CBEXEC_STATUS---\n'
echo "TypeError: Cannot read properties of undefined (reading 'accessToken') at $long:128:17" >&2
exit 1
EOF
chmod +x step.sh
bad=
cb() { "$CBEXEC" --no-prompt --progress exit "$@" 2>&1 >/dev/null; }
check() {	# check DESC: the OPEN block in block.out fits
	sed -n '/^---CIRCUIT_BREAKER_OPEN---$/,/^---END_CIRCUIT_BREAKER_OPEN---$/p' block.out |
	    grep -v '^RESET: ' > block.txt
	[ -s block.txt ] || { bad="$bad $1(no block)"; return; }
	w=$(width < block.txt)
	[ "$w" -le 80 ] || bad="$bad $1($w)"
}
cb --name b1 -n 3 --max-retries 3 -- ./step.sh > block.out; check stuck
cb --name b2 --phase GREEN -n 3 -- ./step.sh > block.out; check green
cb --name b3 -n 5 --no-progress-threshold 9 --same-error-threshold 9 \
    --max-retries 9 -- ./step.sh > block.out; check errors
cb --name b4 -- ./does-not-exist > block.out; check fatal
cb --name b5 --no-progress-threshold 9 --same-error-threshold 9 \
    --max-retries 9 -n 5 -- sh -c "echo 'Error: 429 Too Many Requests' >&2; exit 1" > block.out
check transient
cb --name b6 --agent claude -- "$SCRATCH/lim/bin/claude" > block.out; check limit
"$CBEXEC" -q --name b7 --phase RED --progress exit -- true
"$CBEXEC" --skip --phase RED --reason "$(printf 'the %s reason given for the skip, which goes on and on' "$long")" b7 2>/dev/null
cb --name b7 -n 3 --phase GREEN -- ./step.sh > block.out; check skip
is "$bad" "" "every line of the OPEN block fits 80 columns (RESET aside)"
like "$(grep '^SUGGESTION:' block.out)" '^SUGGESTION: .{1,68}$' "... its suggestion too"
like "$(grep '^LAST_ERROR:' block.out)" "^LAST_ERROR: TypeError: Cannot read .*…\$" "... a long error cut with an ellipsis"
like "$(grep 'run 3 exited' block.out)" "$long:128:17\$" "... whose whole is in the run's log line"
done_testing
