#!/bin/sh
# SPDX-License-Identifier: ISC
# make demo: a stuck agent trips the breaker, the next invocation is
# refused, an operator resets it, and a timeout is enforced.
set -u
cd "$(dirname "$0")/.."
CBEXEC_STATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/cbexec-demo.XXXXXX")
export CBEXEC_STATE_DIR
trap 'rm -rf "$CBEXEC_STATE_DIR"' EXIT
step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "$2"; }

step "1. A stuck agent in a loop: the same error again and again" \
	"cbexec --name demo --loop --delay 0.1 --max-retries 9 --no-prompt -- demo/agent.sh"
./cbexec --name demo --loop --delay 0.1 --max-retries 9 --no-prompt -- demo/agent.sh
echo "exit status: $? (121 = STUCK)"

step "2. The next invocation (say, from cron) is refused" \
	"cbexec --name demo -- demo/agent.sh"
./cbexec --name demo -- demo/agent.sh
echo "exit status: $? (120 = OPEN; the agent did not run)"

step "3. What the operator sees" "cbexec --status --name demo"
./cbexec --status --name demo
echo "exit status: $?"

step "4. The operator fixes the cause and resets" \
	"cbexec --reset-circuit --name demo --reason 'fixed the fixture'"
./cbexec --reset-circuit --name demo --reason 'fixed the fixture'
./cbexec --status --name demo
echo "exit status: $?"

step "5. A run that hangs is stopped at its timeout" \
	"cbexec --name demo2 --timeout 0.5 -- sleep 10"
./cbexec --name demo2 --timeout 0.5 -- sleep 10
echo "exit status: $? (124 = TIMEOUT)"
