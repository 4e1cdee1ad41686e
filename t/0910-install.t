#!/bin/sh
# SPDX-License-Identifier: ISC
# make install / make uninstall with DESTDIR and PREFIX: the binary, the man
# page, both completions and circuit_breaker.sh land where packagers expect
# them (zsh's in site-functions, or ZSHCOMPDIR; the library in
# share/cbexec, or PKGDATADIR), and uninstall removes exactly those and the
# directories install made for them.  The man page's footer names cbexec
# and its version.
. "$(dirname "$0")/lib.sh"
DEST=$SCRATCH/dest
P=$DEST/usr/local

out=$(make -C "$TOP" install DESTDIR="$DEST" PREFIX=/usr/local 2>&1); rc=$?
is "$rc" 0 "make install DESTDIR=... PREFIX=/usr/local"
[ "$rc" -eq 0 ] || printf '# %s\n' "$out" | tail -n 20

ok "$(test -f "$P/bin/cbexec" && test -x "$P/bin/cbexec"; echo $?)" "installs bin/cbexec, executable"
ver=$("$P/bin/cbexec" --version | sed -n '1s/^cbexec //p')
ok "$(sed "s/^\\.Os\$/.Os cbexec $ver/" "$TOP/man/cbexec.1" |
    cmp -s "$P/share/man/man1/cbexec.1" -; echo $?)" \
	"installs share/man/man1/cbexec.1 (its .Os naming cbexec $ver)"
ok "$(cmp -s "$P/share/bash-completion/completions/cbexec" "$TOP/contrib/cbexec.bash"; echo $?)" \
	"installs share/bash-completion/completions/cbexec"
ok "$(cmp -s "$P/share/zsh/site-functions/_cbexec" "$TOP/contrib/_cbexec"; echo $?)" \
	"installs share/zsh/site-functions/_cbexec (in zsh's \$fpath)"
ok "$(cmp -s "$P/share/cbexec/circuit_breaker.sh" "$TOP/contrib/circuit_breaker.sh"; echo $?)" \
	"installs share/cbexec/circuit_breaker.sh"
is "$(cd "$DEST" && find . -type f | sort | tr '\n' ' ')" \
	"./usr/local/bin/cbexec ./usr/local/share/bash-completion/completions/cbexec ./usr/local/share/cbexec/circuit_breaker.sh ./usr/local/share/man/man1/cbexec.1 ./usr/local/share/zsh/site-functions/_cbexec " \
	"installs those five files and nothing else"
is "$(stat -c %a "$P/bin/cbexec" "$P/share/man/man1/cbexec.1" "$P/share/cbexec/circuit_breaker.sh" | tr '\n' ' ')" "755 644 644 " \
	"modes: binary 755, man page and library 644"
out=$("$P/bin/cbexec" --version); is "$?" 0 "the installed binary runs"
like "$out" '^cbexec [0-9]' "the installed binary prints its version"
# The installed library works as the README shows it: sourced, on top of
# the installed binary.
out=$(PATH="$P/bin:$PATH" CB_NAME=inst bash -c '
	set -euo pipefail
	. "$1/share/cbexec/circuit_breaker.sh"
	cb_init
	cb_record_failure "boom"
	cb_get_state' sh "$P" 2>&1)
is "$out" CLOSED "sourcing the installed circuit_breaker.sh: its functions work"
# The man page's footer: cbexec and its version, not the formatter's
# default (groff says "BSD", mandoc the system's name).
ver=$("$P/bin/cbexec" --version | sed -n '1s/^cbexec //p')
if command -v groff >/dev/null 2>&1; then
	foot=$(groff -mdoc -Tascii -P-c "$P/share/man/man1/cbexec.1" 2>/dev/null | sed '/^$/d' | tail -n 1)
	like "$foot" "^cbexec $ver +.* +cbexec $ver\$" "groff: the footer says cbexec $ver"
else
	skip "no groff"
fi
if command -v mandoc >/dev/null 2>&1; then
	foot=$(mandoc -Tascii "$P/share/man/man1/cbexec.1" | sed '/^$/d' | tail -n 1)
	like "$foot" "^cbexec $ver +.* +cbexec $ver\$" "mandoc: the footer says cbexec $ver"
else
	skip "no mandoc"
fi

out=$(make -C "$TOP" uninstall DESTDIR="$DEST" PREFIX=/usr/local 2>&1); rc=$?
is "$rc" 0 "make uninstall DESTDIR=... PREFIX=/usr/local"
is "$(cd "$DEST" && find . \( -type f -o -type l \) | sort | tr '\n' ' ')" "" \
	"uninstall leaves no file under DESTDIR"
is "$(cd "$DEST" && find . -mindepth 1 | sort | tr '\n' ' ')" "" \
	"uninstall removes the directories install made"

# A directory that holds something else stays, and so does PREFIX.
D2=$SCRATCH/dest2
mkdir -p "$D2/opt/cb/share/man/man1" "$D2/opt/cb/share/zsh/site-functions"
: > "$D2/opt/cb/share/man/man1/other.1"
make -C "$TOP" install DESTDIR="$D2" PREFIX=/opt/cb >/dev/null 2>&1
make -C "$TOP" uninstall DESTDIR="$D2" PREFIX=/opt/cb >/dev/null 2>&1
is "$(cd "$D2" && find . -mindepth 1 | sort | tr '\n' ' ')" \
	"./opt ./opt/cb ./opt/cb/share ./opt/cb/share/man ./opt/cb/share/man/man1 ./opt/cb/share/man/man1/other.1 " \
	"uninstall keeps directories that are not empty"
# Without DESTDIR, PREFIX itself is kept even when it ends up empty.
make -C "$TOP" install PREFIX="$SCRATCH/pfx" >/dev/null 2>&1
make -C "$TOP" uninstall PREFIX="$SCRATCH/pfx" >/dev/null 2>&1
is "$(find "$SCRATCH/pfx" | wc -l | tr -d ' ')" 1 "uninstall keeps PREFIX itself"

# ZSHCOMPDIR puts the zsh completion where a distribution wants it.
D3=$SCRATCH/dest3
make -C "$TOP" install DESTDIR="$D3" PREFIX=/usr \
	ZSHCOMPDIR=/usr/share/zsh/vendor-completions >/dev/null 2>&1
ok "$(test -f "$D3/usr/share/zsh/vendor-completions/_cbexec"; echo $?)" \
	"ZSHCOMPDIR=/usr/share/zsh/vendor-completions is honoured"
done_testing
