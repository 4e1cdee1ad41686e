# SPDX-License-Identifier: ISC
# shellcheck shell=sh
# Source me (POSIX sh) to point Cline CLI (npm cline 3.0.65) at the local
# Anthropic mock: its provider "anthropic" with the mock as baseUrl, in
# $HOME/.cline/data/settings/providers.json (it reads no
# ANTHROPIC_BASE_URL).  Set first:
#   MOCK_URL   scenario base URL, e.g. http://127.0.0.1:PORT/s/success
#   HOME       a scratch directory
#   AGENT_BIN  node_modules/.bin of the install (holds `cline`)
# For the missing_key scenario: `unset CLINE_KEY; cline_settings` after
# sourcing.
# cbexec has no adapter for it: docs/cline.md describes it in a config.

: "${MOCK_URL:?set MOCK_URL}" "${HOME:?set HOME}" "${AGENT_BIN:?set AGENT_BIN}"

export PATH="$AGENT_BIN:$PATH"
export CLINE_KEY="sk-ant-api03-cbexec-mock"
unset ANTHROPIC_API_KEY HTTPS_PROXY HTTP_PROXY https_proxy http_proxy \
      ALL_PROXY all_proxy CLINE_API_BASE_URL
export NO_COLOR=1
export NO_PROXY="127.0.0.1,localhost" no_proxy="127.0.0.1,localhost"

# cline_settings: (re)write the provider settings from $CLINE_KEY (none
# when unset).  `cline -k KEY` would rewrite them without the baseUrl.
cline_settings() {
	_key=
	[ -n "${CLINE_KEY:-}" ] && _key="\"apiKey\": \"$CLINE_KEY\","
	mkdir -p "$HOME/.cline/data/settings"
	cat > "$HOME/.cline/data/settings/providers.json" <<JSON
{
  "version": 1,
  "lastUsedProvider": "anthropic",
  "modes": {},
  "providers": {
    "anthropic": {
      "settings": {
        "provider": "anthropic",
        $_key
        "model": "claude-opus-5-5",
        "baseUrl": "$MOCK_URL/v1"
      },
      "updatedAt": "2026-01-01T00:00:00.000Z",
      "tokenSource": "manual"
    }
  }
}
JSON
}
cline_settings
