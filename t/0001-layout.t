#!/bin/sh
# SPDX-License-Identifier: ISC
# The layering of src/: no subsystem includes one above it or beside it, so
# there is no circle between folders (build-aux/layers.pl, ARCHITECTURE.md).
exec perl "$(dirname "$0")/../build-aux/layers.pl" "$(dirname "$0")/.."
