#!/bin/sh
# SPDX-License-Identifier: ISC
# make install / make uninstall with DESTDIR and PREFIX: the binary, the man
# page and both completions land where packagers expect them, and uninstall
# removes exactly those.
. "$(dirname "$0")/lib.sh"
DEST=$SCRATCH/dest
P=$DEST/usr/local

out=$(make -C "$TOP" install DESTDIR="$DEST" PREFIX=/usr/local 2>&1); rc=$?
is "$rc" 0 "make install DESTDIR=... PREFIX=/usr/local"
[ "$rc" -eq 0 ] || printf '# %s\n' "$out" | tail -n 20

ok "$(test -f "$P/bin/cbexec" && test -x "$P/bin/cbexec"; echo $?)" "installs bin/cbexec, executable"
ok "$(cmp -s "$P/share/man/man1/cbexec.1" "$TOP/man/cbexec.1"; echo $?)" \
	"installs share/man/man1/cbexec.1"
ok "$(cmp -s "$P/share/bash-completion/completions/cbexec" "$TOP/contrib/cbexec.bash"; echo $?)" \
	"installs share/bash-completion/completions/cbexec"
ok "$(cmp -s "$P/share/zsh/vendor-completions/_cbexec" "$TOP/contrib/_cbexec"; echo $?)" \
	"installs share/zsh/vendor-completions/_cbexec"
is "$(cd "$DEST" && find . -type f | sort | tr '\n' ' ')" \
	"./usr/local/bin/cbexec ./usr/local/share/bash-completion/completions/cbexec ./usr/local/share/man/man1/cbexec.1 ./usr/local/share/zsh/vendor-completions/_cbexec " \
	"installs those four files and nothing else"
is "$(stat -c %a "$P/bin/cbexec" "$P/share/man/man1/cbexec.1" | tr '\n' ' ')" "755 644 " \
	"modes: binary 755, man page 644"
out=$("$P/bin/cbexec" --version); is "$?" 0 "the installed binary runs"
like "$out" '^cbexec [0-9]' "the installed binary prints its version"

out=$(make -C "$TOP" uninstall DESTDIR="$DEST" PREFIX=/usr/local 2>&1); rc=$?
is "$rc" 0 "make uninstall DESTDIR=... PREFIX=/usr/local"
is "$(cd "$DEST" && find . \( -type f -o -type l \) | sort | tr '\n' ' ')" "" \
	"uninstall leaves no file under DESTDIR"
done_testing
