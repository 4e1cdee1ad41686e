#!/bin/sh
# SPDX-License-Identifier: ISC
# The layering of src/ as ARCHITECTURE.md's table draws it: a subsystem
# includes only the faces its row says it uses, all of them below it, so
# there is no circle between folders; and no two files share a name but a
# header and its own code (build-aux/layers.pl).
exec perl "$(dirname "$0")/../build-aux/layers.pl" "$(dirname "$0")/.."
