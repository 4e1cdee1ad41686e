#!/bin/sh
# SPDX-License-Identifier: ISC
# What a packager relies on: CPPFLAGS and LDFLAGS reach every compile and
# link, libcrypto is named in an ELF dlopen note and loaded on the first
# SHA-256 (a clear message without it), libssl too for rediss:// only, libcurl for an etcd store only, a plain make names the missing
# libraries before it compiles anything, the test runner keeps cbexec's
# stderr out of prove's report unless a test fails, the man page formats
# without groff warnings, and the systemd example names no install prefix.
. "$(dirname "$0")/lib.sh"

# Compile and link lines make would run, none run (-n), all of them (-B).
dry=$(make -s -n -B -C "$TOP" CPPFLAGS=-DCBEXEC_PKG_FLAG \
	LDFLAGS=-Wl,-z,now cbexec t/unit/ring.t 2>&1)
compiles=$(printf '%s\n' "$dry" | grep -E ' -c -o src/[^ ]+\.o ')
n=$(printf '%s\n' "$compiles" | grep -c .)
ok "$([ "$n" -gt 20 ]; echo $?)" "make -n -B lists the compile lines ($n)"
is "$(printf '%s\n' "$compiles" | grep -vc -- '-DCBEXEC_PKG_FLAG')" 0 \
	"CPPFLAGS reaches every compile of src/"
like "$(printf '%s\n' "$dry" | grep -E ' -o t/unit/ring\.t ')" '-DCBEXEC_PKG_FLAG' \
	"CPPFLAGS reaches the unit tests"
link=$(printf '%s\n' "$dry" | grep -E ' -o cbexec ')
like "$link" '-Wl,-z,now' "LDFLAGS reaches the link"
ok "$(printf '%s\n' "$link" | grep -q -- '-lcrypto'; [ $? -ne 0 ]; echo $?)" \
	"libcrypto is not linked: it is loaded on the first SHA-256"
like "$(printf '%s\n' "$compiles" | head -1)" '-D_GNU_SOURCE' \
	"cbexec's own preprocessor flags are kept beside the packager's"

# What a packager sees instead of a NEEDED entry: the ELF dlopen notes
# (https://systemd.io/ELF_DLOPEN_METADATA/), naming the soname of the
# libcrypto built against as required, and libssl's (rediss:// only) and
# libcurl's (etcd:// only) as recommended.
if command -v readelf >/dev/null 2>&1; then
	ok "$(readelf -d "$TOP/cbexec" | grep -q 'NEEDED.*libcrypto'; [ $? -ne 0 ]; echo $?)" \
		"libcrypto is not among the binary's NEEDED entries"
	like "$(readelf -n "$TOP/cbexec")" 'FDO +0x[0-9a-f]+.*(0x407c0c0a|FDO_DLOPEN_METADATA)' \
		"an FDO dlopen note (type 0x407c0c0a)"
	note=$(readelf -p .note.dlopen "$TOP/cbexec" | sed -n 's/^ *\[ *[0-9a-f]*\] *//p' | grep '^\[')
	want=$(readelf -d "$(${CC:-cc} -print-file-name=libcrypto.so)" 2>/dev/null |
	    sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
	wantssl=$(readelf -d "$(${CC:-cc} -print-file-name=libssl.so)" 2>/dev/null |
	    sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
	wantcurl=$(readelf -d "$(${CC:-cc} -print-file-name=libcurl.so)" 2>/dev/null |
	    sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
	got=$(printf '%s\n' "$note" | perl -MJSON::PP -e '
		my @all;
		while (<STDIN>) {
			push @all, map { "$_->{priority}:" . join(",", @{$_->{soname}}) } @{decode_json($_)};
		}
		print join(" ", sort @all)' 2>&1)
	is "$got" "recommended:${wantcurl:-libcurl.so.4} recommended:$wantssl required:$want" \
	    "... naming libcrypto's soname ($want), required, libssl's ($wantssl) and libcurl's (${wantcurl:-?}), recommended"
	ok "$(readelf -d "$TOP/cbexec" | grep -q 'NEEDED.*libcurl'; [ $? -ne 0 ]; echo $?)" \
		"libcurl is not among the binary's NEEDED entries"
else
	skip "no readelf"; skip "no readelf"; skip "no readelf"; skip "no readelf"
fi
like "$(cat "$TOP/README.md")" 'dh_dlopenlibdeps' "README says how a package depends on it"

# Without the library: cbexec starts and a run that hashes nothing works;
# the first SHA-256 says which library could not be loaded (125).  A copy
# with the soname changed (same length) stands for a system without it.
soname=$(readelf -p .note.dlopen "$TOP/cbexec" 2>/dev/null | grep '"feature":"sha256"' |
    sed -n 's/.*"soname":\["\([^"]*\)".*/\1/p')
if [ -n "$soname" ]; then
	gone=$(printf '%s' "$soname" | sed 's/libcrypto/libcryptX/')
	perl -0777 -pe "s/\Q$soname\E/$gone/g" "$TOP/cbexec" > nolib
	chmod +x nolib
	./nolib --version >/dev/null 2>&1
	is "$?" 0 "libcrypto missing: cbexec still starts"
	./nolib -q --name nl -- true
	is "$?" 0 "... a successful run of a named circuit needs no SHA-256"
	err=$(./nolib -q --name nl -- false 2>&1); rc=$?
	is "$rc" 125 "... a failed run's fingerprint cannot be made: 125"
	like "$err" "^cbexec: cannot load OpenSSL's libcrypto \($gone\) for SHA-256: $gone: cannot open shared object file" \
		"... naming the library"
	err=$(./nolib -q -- true 2>&1)
	like "$err" "working directory: cannot hash its path: cannot load OpenSSL's libcrypto \($gone\)" \
		"... as the working directory's circuit does"
else
	skip "no soname"; skip "no soname"; skip "no soname"; skip "no soname"
	skip "no soname"
fi
# Without libssl: only a rediss:// store needs it, and says so.
ssl=$(readelf -p .note.dlopen "$TOP/cbexec" 2>/dev/null | grep '"feature":"tls"' |
    sed -n 's/.*"soname":\["\([^"]*\)".*/\1/p')
if [ -n "$ssl" ]; then
	gone=$(printf '%s' "$ssl" | sed 's/libssl/libssX/')
	perl -0777 -pe "s/\Q$ssl\E/$gone/g" "$TOP/cbexec" > nossl
	chmod +x nossl
	./nossl -q --name ns -- true
	is "$?" 0 "libssl missing: a run without a rediss:// store works"
	err=$(./nossl -q --store rediss://127.0.0.1:1 --name ns -- touch ran 2>&1)
	rc=$?
	is "$rc:$([ -e ran ] && echo ran)" "125:" "... a rediss:// store is 125, nothing run"
	like "$err" "^cbexec: store rediss://127.0.0.1:1/0: cannot load OpenSSL's libssl \($gone\) for TLS: $gone: cannot open shared object file" \
		"... naming the library, before any connection"
else
	skip "no libssl soname"; skip "no libssl soname"; skip "no libssl soname"
fi

# The same for libcurl, which only an etcd store loads: a plain run and a
# Redis or file store never need it; --store etcd:// says which library.
curlso=$(readelf -p .note.dlopen "$TOP/cbexec" 2>/dev/null | grep '"feature":"etcd"' |
    sed -n 's/.*"soname":\["\([^"]*\)".*/\1/p')
if [ -n "$curlso" ]; then
	gone=$(printf '%s' "$curlso" | sed 's/libcurl/libcurX/')
	perl -0777 -pe "s/\Q$curlso\E/$gone/g" "$TOP/cbexec" > nocurl
	chmod +x nocurl
	./nocurl -q --name nc -- false 2>/dev/null
	is "$?" 1 "libcurl missing: a run of a named circuit works"
	err=$(./nocurl --store etcd://127.0.0.1:9 --name nc -- touch ran-nc 2>&1)
	rc=$?
	is "$rc:$([ -e ran-nc ] && echo ran)" "125:" "... an etcd store cannot: 125, not run"
	like "$err" "^cbexec: cannot load libcurl \($gone\) for the etcd store: $gone: cannot open shared object file" \
		"... naming the library"
else
	skip "no libcurl soname"; skip "no libcurl soname"
	skip "no libcurl soname"
fi

# A plain make on a machine without the libraries: one message naming
# them and the packages, before any object is compiled.
mkdir tree
cp -r "$TOP/Makefile" "$TOP/src" "$TOP/include" "$TOP/build-aux" tree/
find tree -name '*.o' -exec rm -f {} +
out=$(make -C tree PKG_CONFIG=false 2>&1); rc=$?
ok "$([ "$rc" -ne 0 ]; echo $?)" "make without cJSON and libcrypto fails"
like "$out" 'cbexec: missing build dependencies: cJSON, OpenSSL.s libcrypto' \
	"it names what is missing"
like "$out" 'apt-get install libcjson-dev libssl-dev' "and the packages"
is "$(find tree -name '*.o' | wc -l | tr -d ' ')" 0 "before compiling anything"
ok "$(printf '%s\n' "$out" | grep -q 'No such file'; [ $? -ne 0 ]; echo $?)" \
	"no compiler error about a missing header"

# build-aux/quiet-test: stderr only when the test fails.
Q="$TOP/build-aux/quiet-test"
printf '#!/bin/sh\necho "noise on stderr" >&2\necho "ok 1"\necho "1..1"\n' >pass.t
printf '#!/bin/sh\necho "why it failed" >&2\necho "not ok 1"\necho "1..1"\nexit 1\n' >fail.t
printf '#!/bin/sh\necho "said so" >&2\necho "not ok 1 - it"\necho "#   got:  x"\necho "ok 2"\necho "# later"\necho "1..2"\n' >notok.t
chmod +x pass.t fail.t notok.t
out=$(sh "$Q" ./pass.t 2>err); rc=$?
is "$rc:$out" "0:ok 1
1..1" "quiet-test: a passing test's TAP and status pass through"
is "$(cat err)" "" "quiet-test: its stderr is not shown"
out=$(sh "$Q" ./fail.t 2>err); rc=$?
is "$rc" 1 "quiet-test: a failing test's status passes through"
like "$(cat err)" 'why it failed' "quiet-test: a failing test's stderr is shown"
sh "$Q" ./notok.t >/dev/null 2>err
like "$(cat err)" 'said so' "quiet-test: a 'not ok' with exit 0 shows stderr too"
is "$(sed -n 2,3p err)" "not ok 1 - it
#   got:  x" "quiet-test: ... after the failed line and its diagnostics, and nothing else of the TAP"
is "$(grep -c later err)" 0 "quiet-test: ... (not a comment after a passing line)"
like "$(make -s -n -C "$TOP" test 2>&1 | grep prove)" "--exec 'sh [^']*build-aux/quiet-test'" \
	"make check runs each test through quiet-test"

# groff formats the man page without "can't break line" (an 80-column
# terminal, and a 70-column one).
if command -v man >/dev/null 2>&1 && command -v groff >/dev/null 2>&1; then
	for w in 80 70; do
		out=$(MANWIDTH=$w man --warnings -E UTF-8 -l -Tutf8 -Z \
			"$TOP/man/cbexec.1" 2>&1 >/dev/null)
		is "$out" "" "man --warnings at $w columns: no warning"
	done
else
	skip "no man or groff"; skip "no man or groff"
fi

# The systemd unit: no install prefix, and a restart policy for
# RestartPreventExitStatus= to act on.
U="$TOP/contrib/cbexec-agent.service"
ok "$(grep -v '^#' "$U" | grep -q '/usr/local/bin'; [ $? -ne 0 ]; echo $?)" \
	"contrib/cbexec-agent.service sets no /usr/local/bin"
like "$(grep '^ExecStart=' "$U")" '^ExecStart=cbexec ' "its ExecStart is a bare cbexec"
ex=$(sed -n '/^\[Service\]/,/^\.Ed/p' "$TOP/man/cbexec.1")
like "$ex" '^Restart=on-failure$' "man page's systemd example has Restart="
like "$ex" '^RestartPreventExitStatus=120 121 122 123 125$' \
	"... and RestartPreventExitStatus= with 125"
ok "$(printf '%s\n' "$ex" | grep -q '/usr/local/bin'; [ $? -ne 0 ]; echo $?)" \
	"... and no /usr/local/bin"
done_testing
