#!/bin/sh
# SPDX-License-Identifier: ISC
# Install the pinned agent clients from the npm registry into a cache
# outside the source tree, once: a client already there at its version is
# left alone, so nothing is downloaded again.
#
#   sh t/agents/install.sh [CLIENT...]      (default: the nine cbexec has
#                                           adapters for; grok and cline,
#                                           described in a config, when named)
#
# The cache is $CBEXEC_AGENT_CACHE, else .cache/cbexec-agents beside the
# checkout when that exists, else ${XDG_CACHE_HOME:-$HOME/.cache}/cbexec-agents;
# each client goes to its own directory there (npm install --prefix).
# Prints "CLIENT DIR" per client.  Exits 0 when all are there, 77 when one
# is missing and the npm registry cannot be reached (the caller skips, and
# says so), 1 when an install failed.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${CBEXEC_AGENT_CACHE:-}" ]; then
	CACHE=$CBEXEC_AGENT_CACHE
elif [ -d "$TOP/../.cache/cbexec-agents" ]; then
	CACHE=$(cd "$TOP/../.cache/cbexec-agents" && pwd)
else
	CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/cbexec-agents
fi

# client package version directory
PINS='claude @anthropic-ai/claude-code 2.1.332 claude-code-2.1.332
codex @openai/codex 0.171.0 codex-0.171.0
gemini @google/gemini-cli 0.61.0 @google+gemini-cli-0.61.0
qwen @qwen-code/qwen-code 0.15.10 qwen-code-0.15.10
opencode opencode-ai 1.18.33 opencode-ai-1.18.33
pi @mariozechner/pi-coding-agent 0.73.1 pi-coding-agent-0.73.1
copilot @github/copilot 1.0.102 github-copilot-1.0.102
cn @continuedev/cli 1.5.47 continuedev-cli-1.5.47
kilo @kilocode/cli 7.7.7 kilocode-cli-7.7.7
grok @vibe-kit/grok-cli 0.0.34 grok-cli-0.0.34
cline cline 3.0.65 cline-3.0.65'

say() { printf 'install: %s\n' "$*" >&2; }

# installed DIR PACKAGE VERSION: the client is there, at that version.
installed() {
	v=$(sed -n 's/^[[:space:]]*"version": *"\(.*\)",$/\1/p' \
	    "$1/node_modules/$2/package.json" 2>/dev/null | head -1)
	[ "$v" = "$3" ] && [ -x "$1/node_modules/.bin/$4" ]
}

reachable=
want=${*:-claude codex gemini qwen opencode pi copilot cn kilo}
echo "$PINS" | while read -r client pkg ver dir; do
	case " $want " in *" $client "*) ;; *) continue ;; esac
	d=$CACHE/$dir
	if ! installed "$d" "$pkg" "$ver" "$client"; then
		if [ -z "$reachable" ]; then
			if ! command -v npm >/dev/null 2>&1 ||
			    ! timeout 60 npm view "$pkg@$ver" version \
			    >/dev/null 2>&1; then
				say "$client not in $CACHE and the npm registry" \
				    "cannot be reached: skipped"
				exit 77
			fi
			reachable=1
		fi
		say "$pkg@$ver into $d"
		mkdir -p "$d" || exit 1
		timeout 900 npm install --prefix "$d" --no-audit --no-fund \
		    --save-exact --loglevel=error "$pkg@$ver" >&2 || exit 1
		# Claude Code's binary is put in place by its postinstall.
		if [ "$client" = claude ] &&
		    ! "$d/node_modules/.bin/claude" --version >/dev/null 2>&1; then
			node "$d/node_modules/$pkg/install.cjs" >&2 || exit 1
		fi
		installed "$d" "$pkg" "$ver" "$client" || exit 1
	fi
	echo "$client $d"
done
