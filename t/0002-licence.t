#!/bin/sh
# SPDX-License-Identifier: ISC
# The licence: LICENSE is ISC, and every source file says so in an SPDX line.
. "$(dirname "$0")/lib.sh"

like "$(head -1 "$TOP/LICENSE")" '^ISC License$' "LICENSE is the ISC licence"
missing=
for f in "$TOP"/src/*.c "$TOP"/src/*/*.[ch] "$TOP"/include/*.h \
    "$TOP"/t/unit/*.c "$TOP"/t/fuzz/*.c "$TOP"/bench/*.c "$TOP"/t/*.t \
    "$TOP"/t/lib.sh "$TOP"/Makefile "$TOP"/man/cbexec.1 "$TOP"/contrib/*.sh \
    "$TOP"/contrib/cbexec.bash "$TOP"/contrib/_cbexec; do
	head -3 "$f" | grep -q 'SPDX-License-Identifier: ISC' ||
	    missing="$missing ${f#"$TOP"/}"
done
is "${missing:-none}" none "every source file has an SPDX line"
done_testing
