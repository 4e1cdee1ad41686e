#!/bin/sh
# SPDX-License-Identifier: ISC
# The store's password never stays where the command can read it (SPEC
# §10): cbexec overwrites, in its arguments (/proc/PID/cmdline) and in its
# environment (/proc/PID/environ, CBEXEC_STORE), exactly the bytes the
# URL parser took for the password, whatever URL punctuation they hold;
# and --store-password-file is a regular file or nothing, never waited on.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"

# Every punctuation a URL has, raw where the parser takes it raw (the
# userinfo ends at the first '@' before the first '/'), %-encoded where it
# cannot be ('@', '/', '%').
PW="a:b?c#d[e]f!g\$h&i'j(k)l*m+n,o;p=q~r-s.t_u@v/w%x"
ENC="a:b?c#d[e]f!g\$h&i'j(k)l*m+n,o;p=q~r-s.t_u%40v%2Fw%25x"
stars() { printf '%s' "$1" | sed 's/./*/g'; }
STARS=$(stars "$ENC")
export REDISCLI_AUTH=$PW
redis_start --requirepass "$PW"
unset REDISCLI_AUTH

# secret_in FILE: 0 when FILE holds any piece of the password, raw or
# encoded, of 4 bytes or more.
secret_in() {
	perl -0777 -e '
		my ($f, @s) = @ARGV; open my $h, "<", $f or exit 1;
		my $t = <$h>; $t = "" unless defined $t;
		for my $s (@s) { for my $i (0 .. length($s) - 4) {
			exit 0 if index($t, substr($s, $i, 4)) >= 0 } }
		exit 1' "$1" "$PW" "$ENC"
}

URL="redis://:$ENC@127.0.0.1:$REDIS_PORT/0"
./host 1 --store "$URL" --name p -- sh -c '
	tr "\0" "\n" </proc/$PPID/cmdline >cmdline.out
	tr "\0" "\n" </proc/$PPID/environ >environ.out' 2>err
is "$?" 0 "a password with every URL punctuation in --store connects"
if [ -n "$UNDER_VALGRIND" ]; then
	skip "cbexec's arguments as /proc shows them (valgrind's own)"
	skip "valgrind"
else
	! secret_in cmdline.out; ok $? "... and no piece of it is left in cbexec's arguments"
	is "$(grep '^redis://' cmdline.out)" \
	    "redis://:$STARS@127.0.0.1:$REDIS_PORT/0" \
	    "... the URL stays, its password's bytes overwritten one for one"
fi
! secret_in err; ok $? "... nor said on stderr"

CBEXEC_STORE=$URL ./host 1 --name p -- sh -c '
	env >env.out; tr "\0" "\n" </proc/$PPID/environ >environ.out' 2>err
is "$?" 0 "the same in CBEXEC_STORE connects"
! secret_in env.out; ok $? "... the command's environment has none of it"
if [ -n "$UNDER_VALGRIND" ]; then
	skip "cbexec's environment as /proc shows it (valgrind)"
else
	! secret_in environ.out; ok $? "... nor has cbexec's own environment as /proc shows it"
	is "$(grep '^CBEXEC_STORE=' environ.out)" \
	    "CBEXEC_STORE=redis://:$STARS@127.0.0.1:$REDIS_PORT/0" \
	    "... where the URL stays with its password overwritten"
fi

# Each punctuation alone, as the first, a middle and the last byte: the
# wiper ends where the parser ends.
fails= cur=$PW
for c in ':' '?' '#' '[' ']' '!' '$' '&' "'" '(' ')' '*' '+' ',' ';' '=' '~' '%40' '%2F' '%25'; do
	for w in "${c}pw" "p${c}w" "pw${c}"; do
		raw=$(printf '%s' "$w" | sed 's/%40/@/; s/%2F/\//; s/%25/%/')
		REDISCLI_AUTH=$cur rcli CONFIG SET requirepass "$raw" >/dev/null &&
		    cur=$raw
		./host 1 --store "redis://:$w@127.0.0.1:$REDIS_PORT/0" --name p \
		    -- sh -c 'tr "\0" "\n" </proc/$PPID/cmdline >c.out' 2>/dev/null ||
		    fails="$fails [$w: exit $?]"
		if [ -z "$UNDER_VALGRIND" ] &&
		    ! grep -qxF "redis://:$(stars "$w")@127.0.0.1:$REDIS_PORT/0" c.out; then
			fails="$fails [$w: $(grep redis c.out)]"
		fi
	done
done
is "${fails:-none}" none "each punctuation first, inside and last: connects, and is overwritten"

# --store-password-file: a FIFO is refused at once (not a regular file),
# never waited on in open(2).
mkfifo pw.fifo
t0=$(date +%s)
err=$(timeout 10 "$CBEXEC" --store "redis://127.0.0.1:$REDIS_PORT/0" \
    --store-password-file pw.fifo --name f -- touch ran 2>&1)
is "$?" 125 "--store-password-file on a FIFO: 125"
like "$err" "^cbexec: --store-password-file pw\.fifo: not a regular file" "... saying why"
ok "$([ $(( $(date +%s) - t0 )) -lt 5 ] && [ ! -e ran ]; echo $?)" \
    "... at once, nothing run"
done_testing
