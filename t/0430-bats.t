#!/bin/sh
# SPDX-License-Identifier: ISC
# The BATS tests of contrib/circuit_breaker.sh (t/bats/), through prove.
# Without bats they are skipped, saying so; CBEXEC_REQUIRE_BATS=1 (CI)
# makes a missing bats a failure.
T_DIR=$(cd "$(dirname "$0")" && pwd)
CBEXEC=${CBEXEC:-$T_DIR/../cbexec}
export CBEXEC
if ! command -v bats >/dev/null 2>&1; then
	if [ -n "${CBEXEC_REQUIRE_BATS:-}" ]; then
		echo "1..1"
		echo "not ok 1 - bats is required (CBEXEC_REQUIRE_BATS) but not installed"
		exit 1
	fi
	echo "1..0 # SKIP bats not installed (Debian: apt-get install bats)"
	exit 0
fi
exec bats --tap "$T_DIR/bats"
