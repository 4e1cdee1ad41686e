#!/bin/sh
# SPDX-License-Identifier: ISC
# etcds:// (TLS) and etcd's users: a cluster whose clients' side speaks
# only TLS with a throw-away CA (--store-ca), the host name verified, a
# plain etcd:// at its port and etcds:// at a plain one said plainly, a
# client certificate when the cluster wants one (--store-cert,
# --store-key, the key private), all in bounded time; then auth on: an
# etcd user with the password outside the URL (CBEXEC_STORE_PASSWORD,
# --store-password-file), never in the command's environment, a wrong
# password or a user without permission 125 (no fallback), and the
# operator verbs with the user.  (etcd's gateway takes no client
# certificate from a user when auth is on: the two are tried apart.)
. "$(dirname "$0")/lib.sh"
. "$T_DIR/etcd.sh"

ETCD_TLS=1 etcd_start
CA=$ETCD_DIR/tls/ca.pem
# Under valgrind a TLS handshake alone takes seconds: a longer timeout
# (an option given later on a command line still wins).
VT=
[ -n "$UNDER_VALGRIND" ] && VT="--store-timeout 10s --store-lease 60s"
S="--store $ETCD_URL --store-ca $CA"
ms() { echo $(( $(date +%s%N) / 1000000 )); }
eget() { ectl get "$1" --print-value-only; }

# ---- etcds:// with the CA of --store-ca ----
"$CBEXEC" $VT $S --name t -- sh -c 'exit 3' 2>err; rc=$?
is "$rc:$(eget cbexec:circuit:t | jget /dev/stdin iteration)" "3:1" \
    "etcds:// with --store-ca: the run's status, the state saved"
CBEXEC_STORE_CA=$CA "$CBEXEC" $VT --store "$ETCD_URL" --status t >/dev/null 2>err
is "$?" 0 "CBEXEC_STORE_CA names the CA"
t0=$(ms)
"$CBEXEC" $VT --store "$ETCD_URL" --store-timeout 1s --name t -- touch ran-noca \
    2>err; rc=$?
el=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-noca ] && echo ran)" "125:" \
    "the system's CAs do not know the test's CA: 125, not run"
like "$(cat err)" "^cbexec: store etcds://localhost:[0-9]+,.*certificate" \
    "naming the store and the certificate"
quick 5000 "$el" "at once, not each member's timeout over ($el ms)"
"$CBEXEC" $VT --store "etcds://127.0.0.1:$ETCD_C1" --store-ca "$CA" --name t -- \
    touch ran-name 2>err; rc=$?
is "$rc:$([ -e ran-name ] && echo ran)" "125:" \
    "a certificate for another name (localhost, asked for 127.0.0.1): 125"
like "$(cat err)" "127\.0\.0\.1.*(subject name|does not match|match)" \
    "saying the name does not match"
"$CBEXEC" $VT --store "$ETCD_URL" --store-ca /nonexistent/ca.pem --name t -- \
    touch ran-bad 2>err; rc=$?
is "$rc:$([ -e ran-bad ] && echo ran)" "125:" "a CA file that is not there: 125"
like "$(cat err)" "/nonexistent/ca.pem" "naming it"
t0=$(ms)
"$CBEXEC" $VT --store "etcd://localhost:$ETCD_C1" --store-timeout 1s --name t -- \
    touch ran-plain 2>err; rc=$?
el=$(( $(ms) - t0 ))
is "$rc:$([ -e ran-plain ] && echo ran)" "125:" "etcd:// at a TLS port: 125"
like "$(cat err)" "a TLS port\? use etcds://" "saying so"
quick 3000 "$el" "in bounded time ($el ms)"
# A plain HTTP server where etcds:// looks for TLS.
perl -MIO::Socket::INET -e '
	my $s = IO::Socket::INET->new(Listen => 5, LocalAddr => "127.0.0.1",
	    LocalPort => 0, ReuseAddr => 1) or die;
	open(my $f, ">", "$ARGV[0].tmp") or die; print $f $s->sockport, "\n";
	close $f; rename "$ARGV[0].tmp", $ARGV[0];
	while (my $c = $s->accept) { my $b; sysread($c, $b, 4096);
	    print $c "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
	    close $c }' plain.port & plain=$!
poll_until 20 test -s plain.port
t0=$(ms)
"$CBEXEC" $VT --store "etcds://127.0.0.1:$(cat plain.port)" --store-timeout 1s \
    --name t -- touch ran-tls 2>err; rc=$?
el=$(( $(ms) - t0 ))
kill $plain; wait $plain 2>/dev/null
is "$rc:$([ -e ran-tls ] && echo ran)" "125:" "etcds:// at a plain port: 125"
like "$(cat err)" "does not speak TLS; use etcd://" "saying so"
quick 3000 "$el" "in bounded time ($el ms)"
"$CBEXEC" $VT --store "$ETCD_URL" --store-fallback local --name t -- \
    touch ran-fb 2>err; rc=$?
is "$rc:$([ -e ran-fb ] && echo ran)" "125:" \
    "a certificate refused is no store out of reach: no --store-fallback"

# ---- an etcd user ----
ectl user add root:rootpw >/dev/null
ectl user grant-role root root >/dev/null
ectl user add cb:cbpw >/dev/null
ectl role add cbrole >/dev/null
ectl role grant-permission cbrole --prefix=true readwrite cbexec: >/dev/null
ectl user grant-role cb cbrole >/dev/null
ectl user add nobody:nopw >/dev/null
ectl auth enable >/dev/null || { echo "Bail out! cannot enable auth"; exit 1; }
ECTL_USER=root:rootpw
U=$(echo "$ETCD_URL" | sed 's|://|://cb@|')
"$CBEXEC" $VT $S --name u -- touch ran-nouser 2>err; rc=$?
is "$rc:$([ -e ran-nouser ] && echo ran)" "125:" "auth on, no user: 125, not run"
like "$(cat err)" "user name is empty \(the cluster wants a user: etcd://USER@host" \
    "saying the cluster wants a user"
"$CBEXEC" $VT $S --store "$U" --name u -- touch ran-nopw 2>err; rc=$?
is "$rc:$([ -e ran-nopw ] && echo ran)" "125:" "a user without a password: 125"
like "$(cat err)" "etcd user cb has no password \(--store-password-file, CBEXEC_STORE_PASSWORD" \
    "saying where it may come from"
CBEXEC_STORE_PASSWORD=cbpw "$CBEXEC" $VT $S --store "$U" --name u -- \
    sh -c 'env >env.out; tr "\0" "\n" </proc/$PPID/environ >penv.out' 2>err
rc=$?
is "$rc:$(eget cbexec:circuit:u | jget /dev/stdin iteration)" "0:1" \
    "etcd://cb@... with CBEXEC_STORE_PASSWORD: the run goes"
ok "$(grep -c cbpw env.out)" "the password is not in the command's environment"
if [ -n "$UNDER_VALGRIND" ]; then
	skip "nor in cbexec's own (valgrind)"
else
	ok "$(grep -c cbpw penv.out)" "nor left in cbexec's own environment"
fi
W=$(echo "$ETCD_URL" | sed 's|://|://cb:cbpw@|')
"$CBEXEC" $VT $S --store "$W" --name u -- \
    sh -c 'tr "\0" " " </proc/$PPID/cmdline >ppid.out' 2>err; rc=$?
is "$rc" 0 "a password in the etcds:// URL works"
if [ -n "$UNDER_VALGRIND" ]; then
	skip "it is not in cbexec's arguments as the command reads them (valgrind)"
else
	ok "$(grep -c cbpw ppid.out)" "it is not in cbexec's arguments as the command reads them"
fi
printf 'cbpw\n' >pw
chmod 600 pw
"$CBEXEC" $VT $S --store "$U" --store-password-file pw --name u -- true 2>err
is "$?" 0 "--store-password-file"
chmod 644 pw
"$CBEXEC" $VT $S --store "$U" --store-password-file pw --name u -- touch ran-644 \
    2>err; rc=$?
is "$rc:$([ -e ran-644 ] && echo ran)" "125:" "a password file others may read: 125"
chmod 600 pw
CBEXEC_STORE_PASSWORD=wrong "$CBEXEC" $VT $S --store "$U" --store-fallback local \
    --name u -- touch ran-wrong 2>err; rc=$?
is "$rc:$([ -e ran-wrong ] && echo ran)" "125:" \
    "a wrong password: 125, not run, no fallback"
like "$(cat err)" "authentication failed.*\(etcd user cb\)" "naming the user"
ok "$(grep -c wrong err)" "never repeating the password"
N=$(echo "$ETCD_URL" | sed 's|://|://nobody@|')
CBEXEC_STORE_PASSWORD=nopw "$CBEXEC" $VT $S --store "$N" --name u -- \
    touch ran-perm 2>err; rc=$?
is "$rc:$([ -e ran-perm ] && echo ran)" "125:" \
    "a user without permission on cbexec's keys: 125"
like "$(cat err)" "permission denied" "saying so"
P="$S --store $U --store-password-file $SCRATCH/pw"
"$CBEXEC" $VT $P --trip --reason maint u 2>err; rc=$?
is "$rc:$(eget cbexec:circuit:u | jget /dev/stdin state)" "0:OPEN" "--trip with the user"
"$CBEXEC" $VT $P --status --all >all 2>err; rc=$?
is "$rc" 120 "--status --all with the user: 120 (an OPEN circuit)"
like "$(cat all)" "^[● ]*u +OPEN" "... listing it"
"$CBEXEC" $VT $P --reset-circuit u 2>err; rc=$?
is "$rc:$(eget cbexec:circuit:u | jget /dev/stdin state)" "0:CLOSED" \
    "--reset-circuit with the user"
"$CBEXEC" $VT $P --reset-account nobody 2>err; rc=$?
like "$rc $(cat err)" "^125 cbexec: no such account 'nobody'" \
    "--reset-account reaches etcd with the user (no such account)"
"$CBEXEC" $VT $P --status u >st 2>&1
ok "$(grep -c cbpw st)" "--status never shows the password"


# ---- a cluster that wants a client certificate ----
ECTL_USER=
ETCD_TLS=1 ETCD_CLIENT_CERT=1 etcd_start

S="--store $ETCD_URL --store-ca $CA"
"$CBEXEC" $VT $S --name c -- touch ran-nocert 2>err; rc=$?
is "$rc:$([ -e ran-nocert ] && echo ran)" "125:" \
    "no client certificate where the cluster wants one: 125"
like "$(cat err)" "^cbexec: store etcds://" "naming the store"
C="--store-cert $ETCD_DIR/tls/client.pem --store-key $ETCD_DIR/tls/client.key"
"$CBEXEC" $VT $S $C --name c -- true 2>err; rc=$?
is "$rc:$(eget cbexec:circuit:c | jget /dev/stdin iteration)" "0:1" \
    "--store-cert and --store-key: the run goes"
cat "$ETCD_DIR/tls/client.pem" "$ETCD_DIR/tls/client.key" >both.pem
chmod 600 both.pem
"$CBEXEC" $VT $S --store-cert both.pem --name c -- true 2>err; rc=$?
is "$rc" 0 "the key in the certificate's file"
chmod 644 both.pem
"$CBEXEC" $VT $S --store-cert both.pem --name c -- touch ran-644 2>err; rc=$?
is "$rc:$([ -e ran-644 ] && echo ran)" "125:" "a key others may read: 125"
like "$(cat err)" "^cbexec: --store-cert both.pem: mode 0644" "naming its mode"

done_testing
