#!/bin/sh
# SPDX-License-Identifier: ISC
# A demo "agent" that is stuck: every step it claims to edit a file, prints
# a status block, and then fails with the same error (with a different
# time and pid each time, which the fingerprint ignores).
echo "agent step $CBEXEC_ITERATION: editing src/login.js"
cat <<BLOCK
---CBEXEC_STATUS---
STATUS: IN_PROGRESS
TASK: 2.3-login-form
FILES_MODIFIED: 1
TESTS_STATUS: FAILING
---END_CBEXEC_STATUS---
BLOCK
echo "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) [pid $$] TypeError: Cannot read property 'x' of undefined" >&2
exit 1
