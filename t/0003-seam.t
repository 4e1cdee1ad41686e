#!/bin/sh
# SPDX-License-Identifier: ISC
# The seams the source keeps (ARCHITECTURE.md):
# - the driver holds the circuit's store as a handle and never asks which
#   kind it is: it walks no directory itself.  The names it needs of one
#   (the approvals and the runs going on under allow/) come from core's
#   file_names();
# - one way to replace a file: every file cbexec rewrites whole goes
#   through core's atomic_write() (src/core/atomic.c), the only code that
#   makes a temp file to rename over another.
. "$(dirname "$0")/lib.sh"

for f in "$TOP"/src/driver/*.[ch]; do
	hits=$(grep -nE '\b(opendir|fdopendir|readdir|scandir|nftw|ftw)[[:space:]]*\(|<dirent\.h>|<ftw\.h>' "$f")
	is "$hits" "" "src/driver/${f##*/} walks no directory"
done

hits=$(cd "$TOP" && grep -nE '\b(mkstemp|mkostemp|mkstemps|mkostemps|tmpfile|mktemp)[[:space:]]*\(|O_TMPFILE' \
    src/*.c src/*/*.[ch] include/*.h | grep -v '^src/core/atomic\.c:')
is "$hits" "" "a temp file to replace a file is made only by atomic_write()"
done_testing
