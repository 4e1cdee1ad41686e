#!/bin/sh
# SPDX-License-Identifier: ISC
# The shared store with a Redis ACL user (redis://USER@host): its password
# from --store-password-file or CBEXEC_STORE_PASSWORD, never in the URL;
# user:password@ still works, with '@', ':' and '/' in the password; a
# user without a password, or a wrong one, is 125 with nothing run (and no
# --store-fallback local past it); the user README.md creates is enough
# for a run, an account and every operator verb.  Then, where a network
# and a mount namespace can be had (root), the fleet examples of README.md
# and the man page run as printed: redis.internal:6379, /etc/cbexec/redis.pw.
. "$(dirname "$0")/lib.sh"
. "$T_DIR/redis.sh"

redis_start
unset CBEXEC_STORE_PASSWORD

# The two code blocks of README.md's shared store: the user, the fleet.
awk '/^### One circuit for many hosts/ { f = 1 }
    f && /^```sh/ { n++; next } f && /^```/ { if (n == 2) exit; next }
    f && n == 1' "$TOP/README.md" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' \
    >acl.sh
awk '/^### One circuit for many hosts/ { f = 1 }
    f && /^```sh/ { n++; next } f && /^```/ { if (n == 2) exit; next }
    f && n == 2' "$TOP/README.md" >readme.sh
# The man page's (EXAMPLES): \e is a backslash there.
awk '/^Several hosts on one circuit in a shared Redis/ { f = 1 }
    f && /^\.Bd -literal/ { b = 1; next } b && /^\.Ed/ { exit } b' \
    "$TOP/man/cbexec.1" | sed 's/\\e/\\/g' >man.sh
like "$(grep -c 'ACL SETUSER cbexec' acl.sh)" '^1$' "README.md creates the ACL user"
like "$(cat readme.sh)" 'redis://cbexec@redis.internal' "README.md's fleet names the user, no password"
like "$(tr '\n' ' ' <man.sh)" 'redis://cbexec@redis.internal.*--store-password-file' \
    "the man page's takes the password from a file"

# ---- the README's user on this test's Redis ----
sed "s/-h redis.internal/-h 127.0.0.1 -p $REDIS_PORT/" acl.sh >acl-here.sh
is "$(sh acl-here.sh)" OK "its ACL SETUSER, as printed, on this Redis"
U="redis://cbexec@127.0.0.1:$REDIS_PORT/0"
printf 'secret\n' >pw
chmod 600 pw

./host 1 --store "$U" --store-password-file "$SCRATCH/pw" --name a -- \
    sh -c 'echo ran >ran-a' 2>err; rc=$?
is "$rc:$(cat ran-a 2>/dev/null)" "0:ran" "USER@ with --store-password-file: the run goes"
is "$(rcli GET cbexec:circuit:a | jget /dev/stdin iteration)" 1 "as user cbexec, in the store"
CBEXEC_STORE=$U CBEXEC_STORE_PASSWORD=secret ./host 2 --name a -- \
    sh -c 'env >env.out' 2>err; rc=$?
is "$rc:$(rcli GET cbexec:circuit:a | jget /dev/stdin iteration)" "0:2" \
    "CBEXEC_STORE=USER@... with CBEXEC_STORE_PASSWORD, another host"
! grep -q secret env.out; ok $? "the password is not passed on"
./host 1 --store "redis://cbexec:secret@127.0.0.1:$REDIS_PORT/0" --name a -- \
    true 2>err; rc=$?
is "$rc" 0 "user:password@ in the URL still works"

rcli ACL SETUSER odd on '>p@ss:w/rd' '~cbexec:*' +@all >/dev/null
./host 1 --store "redis://odd:p%40ss%3Aw%2Frd@127.0.0.1:$REDIS_PORT/0" \
    --name a -- true 2>err; rc=$?
is "$rc" 0 "a password with '@', ':' and '/', percent-encoded"
rcli ACL SETUSER odd2 on '>p@ss' '~cbexec:*' +@all >/dev/null
./host 1 --store "redis://odd2:p@ss@127.0.0.1:$REDIS_PORT/0" --name a -- \
    true 2>err; rc=$?
is "$rc" 0 "a raw '@' in the password: the credentials end at the last '@'"
"$CBEXEC" --store "redis://odd2:p@ss@127.0.0.1:$REDIS_PORT/0" --name a \
    -- sh -c 'tr "\0" " " </proc/$PPID/cmdline >cmdline' 2>err; rc=$?
if [ -n "$UNDER_VALGRIND" ]; then
	skip "what ps shows (valgrind's arguments, not cbexec's)"
else
	! grep -q 'p@ss' cmdline
	ok $? "that password is overwritten in cbexec's arguments too"
fi

# ---- refused: 125, nothing run ----
./host 1 --store "$U" --name a -- touch ran-u 2>err; rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "USER@ and no password anywhere: 125, nothing run"
like "$(cat err)" "^cbexec: store $U: no password for user cbexec: give it with --store-password-file F or CBEXEC_STORE_PASSWORD" \
    "it says where the password goes"
CBEXEC_STORE_PASSWORD=wrong ./host 1 --store "$U" --name a -- touch ran-u \
    2>err; rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "a wrong password: 125, nothing run"
like "$(cat err)" "WRONGPASS" "Redis's reason said"
! grep -q wrong err; ok $? "never the password"
CBEXEC_STORE_PASSWORD=wrong ./host 1 --store "$U" --store-fallback local \
    --name a -- touch ran-u 2>err; rc=$?
is "$rc:$([ -e ran-u ] && echo ran)" "125:" "--store-fallback local does not run past a refused password"

# ---- the user is enough for everything cbexec does ----
S="--store $U --store-password-file $SCRATCH/pw"
./host 1 $S --name b --account acme -- sh -c 'echo "Error: 429 rate limit" >&2; exit 1' \
    2>err; rc=$?
is "$rc" 1 "a run with --account"
./host 1 $S --status --all >all 2>err; rc=$?
is "$rc:$(grep -Ec '^ *(a|b) ' all)" "0:2" "--status --all"
./host 1 $S --trip --reason test a 2>err; rc=$?
is "$rc" 0 "--trip"
CBEXEC_STORE_PASSWORD=secret ./host 1 --store "$U" --name a -- true 2>err
rc=$?
hint=$(sed -n 's/.*\(cbexec --store [^;]* --reset-circuit --name a\).*/\1/p' err | head -1)
like "$rc:$hint" "^120:cbexec --store '?$U'? --reset-circuit --name a\$" \
    "OPEN: the hint names the store, its user and no password"
CBEXEC_STORE_PASSWORD=secret sh -c "$(echo "$hint" | sed "s|^cbexec|./host 1|")" \
    2>err; rc=$?
is "$rc:$(rcli GET cbexec:circuit:a | jget /dev/stdin state)" "0:CLOSED" \
    "and works as printed (the password from the environment)"
./host 1 $S --trip --reason test a 2>err
./host 1 $S --reset-circuit a 2>err; rc=$?
is "$rc:$(rcli GET cbexec:circuit:a | jget /dev/stdin state)" "0:CLOSED" "--reset-circuit"
./host 1 $S --record --exit 0 a 2>err; rc=$?
is "$rc" 0 "--record"
rcli SET cbexec:circuit:c junk >/dev/null
./host 1 $S --reset-circuit c 2>err; rc=$?
is "$rc:$(rcli KEYS 'cbexec:corrupt:c:*' | wc -l | tr -d ' ')" "0:1" \
    "--reset-circuit of a corrupt state moves it aside (RENAMENX)"
./host 1 $S --history a >/dev/null 2>err; rc=$?
is "$rc" 0 "--history"

# ---- the examples as printed: redis.internal:6379, /etc/cbexec ----
# In a network namespace of its own (its loopback has nothing on 6379)
# and a mount namespace whose /etc is an overlay: redis.internal in its
# /etc/hosts, /etc/cbexec/redis.pw; the machine's own /etc untouched.
if [ "$(id -u)" = 0 ] && unshare -mn true 2>/dev/null &&
    command -v ip >/dev/null 2>&1; then
	mkdir -p bin step up work
	printf '#!/bin/sh\nexec "%s" "$@"\n' "$CBEXEC" >bin/cbexec
	chmod +x bin/cbexec
	printf '#!/bin/sh\necho "step $(date +%%s%%N)" >>"%s/steps"\n' \
	    "$SCRATCH" >step/agent-step.sh
	chmod +x step/agent-step.sh
	cat >ns.sh <<'SH'
set -u
S=$1
ip link set lo up || exit 1
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$S/up,workdir=$S/work" \
    /etc || exit 1
echo '127.0.0.1 redis.internal' >>/etc/hosts
mkdir -p /etc/cbexec
(umask 077 && echo secret >/etc/cbexec/redis.pw)
mkdir -p "$S/nsredis"
redis-server --bind 127.0.0.1 --port 6379 --dir "$S/nsredis" --save '' \
    --appendonly yes --daemonize no --logfile "$S/ns-redis.log" &
r=$!
i=0
while ! redis-cli ping >/dev/null 2>&1 && [ $i -lt 500 ]; do
	sleep 0.02; i=$((i + 1))
done
export PATH="$S/bin:$PATH"
cd "$S/step" || exit 1
sh "$S/acl.sh" >"$S/acl.out" 2>&1; echo $? >"$S/acl.rc"
(sh -e "$S/readme.sh") >"$S/readme.out" 2>"$S/readme.err"
echo $? >"$S/readme.rc"
(sh -e "$S/man.sh") >"$S/man.out" 2>"$S/man.err"
echo $? >"$S/man.rc"
kill -9 $r
SH
	unshare -mn sh ns.sh "$SCRATCH" 2>ns.err
	is "$(cat acl.rc 2>/dev/null):$(cat acl.out 2>/dev/null)" "0:OK" \
	    "README.md's ACL SETUSER, as printed"
	is "$(cat readme.rc 2>/dev/null)" 0 "README.md's fleet block, as printed, exits 0"
	like "$(cat readme.out)" '^ +nightly +CLOSED' "its --status --all lists nightly"
	like "$(tr -d '\n ' <readme.out)" '"iteration":1,' \
	    "its redis-cli GET shows the state"
	is "$(cat man.rc 2>/dev/null)" 0 "the man page's example, as printed, exits 0"
	like "$(cat man.out)" '^ +nightly +CLOSED' "and lists nightly"
	is "$(wc -l <steps 2>/dev/null | tr -d ' ')" 2 "./agent-step.sh ran once for each"
	[ -e /etc/cbexec ]; is "$?" 1 "the machine's /etc is untouched"
else
	for d in "README.md's ACL SETUSER" "README.md's fleet block" \
	    "its --status --all" "its redis-cli GET" "the man page's example" \
	    "and lists nightly" "./agent-step.sh ran" "/etc untouched"; do
		skip "$d, as printed (needs root, unshare -mn and ip)"
	done
fi

done_testing
