#!/bin/sh
# SPDX-License-Identifier: ISC
# The seams the source keeps (ARCHITECTURE.md):
# - the driver holds the circuit's store as a handle and never asks which
#   kind it is: it walks no directory itself.  The names it needs of one
#   (the approvals and the runs going on under allow/) come from core's
#   file_names();
# - one way to replace a file: every file cbexec rewrites whole goes
#   through core's atomic_write() (src/core/atomic.c), the only code that
#   makes a temp file to rename over another;
# - one size for a message's buffer: every err, why, ..._err or ..._why
#   buffer in src/ is CB_ERRLEN (a whole message) or CB_WHYLEN (a reason
#   inside one) from core.h, and 4400 or 4200 is written nowhere else but
#   there (CB_WHERELEN: where a circuit is kept).
. "$(dirname "$0")/lib.sh"

for f in "$TOP"/src/driver/*.[ch]; do
	hits=$(grep -nE '\b(opendir|fdopendir|readdir|scandir|nftw|ftw)[[:space:]]*\(|<dirent\.h>|<ftw\.h>' "$f")
	is "$hits" "" "src/driver/${f##*/} walks no directory"
done

hits=$(cd "$TOP" && grep -nE '\b(mkstemp|mkostemp|mkstemps|mkostemps|tmpfile|mktemp)[[:space:]]*\(|O_TMPFILE' \
    src/*.c src/*/*.[ch] include/*.h | grep -v '^src/core/atomic\.c:')
is "$hits" "" "a temp file to replace a file is made only by atomic_write()"

hits=$(cd "$TOP" && grep -nE '\b(err|why)[a-z0-9_]*\[[[:space:]]*[0-9]|\b[a-z0-9_]+_(err|why)\[[[:space:]]*[0-9]' \
    src/*.c src/*/*.[ch] | grep -E '^[^:]+:[0-9]+:[[:space:]]*(static[[:space:]]+)?char[[:space:]]')
is "$hits" "" "a message's buffer is CB_ERRLEN or CB_WHYLEN, no literal size"
hits=$(cd "$TOP" && grep -nE '\b(4400|4200)\b' src/*.c src/*/*.[ch] include/*.h |
    grep -vE '^include/core\.h:[0-9]+:#define CB_(ERRLEN|WHERELEN)[[:space:]]')
is "$hits" "" "4400 and 4200 are written only where core.h names them"
done_testing
