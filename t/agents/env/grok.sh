# SPDX-License-Identifier: ISC
# shellcheck shell=sh
# Source me (POSIX sh) to point Grok CLI (npm @vibe-kit/grok-cli 0.0.34) at
# the local OpenAI mock: it speaks Chat Completions to GROK_BASE_URL.  Set
# first:
#   MOCK_URL   scenario base URL, e.g. http://127.0.0.1:PORT/s/success/v1
#   HOME       a scratch directory (settings go to $HOME/.grok)
#   AGENT_BIN  node_modules/.bin of the install (holds `grok`)
# For the missing_key scenario: `unset GROK_API_KEY` after sourcing.
# cbexec has no adapter for it: docs/grok.md describes it in a config.

: "${MOCK_URL:?set MOCK_URL}" "${HOME:?set HOME}" "${AGENT_BIN:?set AGENT_BIN}"

export PATH="$AGENT_BIN:$PATH"
export GROK_API_KEY="xai-cbexec-mock"
export GROK_BASE_URL="$MOCK_URL"
export GROK_MODEL="grok-code-fast-1"
unset XAI_API_KEY HTTPS_PROXY HTTP_PROXY https_proxy http_proxy ALL_PROXY \
      all_proxy
export NO_COLOR=1
export NO_PROXY="127.0.0.1,localhost" no_proxy="127.0.0.1,localhost"
mkdir -p "$HOME"
