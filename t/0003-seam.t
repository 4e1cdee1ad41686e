#!/bin/sh
# SPDX-License-Identifier: ISC
# The driver holds the circuit's store as a handle and never asks which
# kind it is (ARCHITECTURE.md): it walks no directory itself.  The names
# it needs of one (the approvals and the runs going on under allow/) come
# from core's file_names().
. "$(dirname "$0")/lib.sh"

for f in "$TOP"/src/driver/*.[ch]; do
	hits=$(grep -nE '\b(opendir|fdopendir|readdir|scandir|nftw|ftw)[[:space:]]*\(|<dirent\.h>|<ftw\.h>' "$f")
	is "$hits" "" "src/driver/${f##*/} walks no directory"
done
done_testing
