# SPDX-License-Identifier: ISC
# Environment for opencode (npm opencode-ai 1.18.33) talking to the local mock
# through its built-in "anthropic" provider.  POSIX sh, meant to be SOURCED
# after setting:
#   MOCK_URL   scenario base URL, e.g. http://127.0.0.1:PORT/s/success
#   HOME       a scratch directory (isolated per run)
#   AGENT_BIN  node_modules/.bin of the install (holds `opencode`)
# Scenario missing_key: source this, then `unset ANTHROPIC_API_KEY`.
# opencode has NO setting for its own API retries (5, hard-coded): see
# ../docs/opencode.md for the times that costs.

: "${MOCK_URL:?set MOCK_URL}" "${HOME:?set HOME}" "${AGENT_BIN:?set AGENT_BIN}"
PATH="$AGENT_BIN:$PATH"
export PATH HOME

# Nothing from the caller's environment may pick other providers/config.
unset OPENCODE_CONFIG OPENCODE_CONFIG_DIR OPENCODE_CONFIG_CONTENT OPENCODE_MODELS_URL \
  OPENCODE_MODELS_PATH OPENCODE_PERMISSION OPENAI_API_KEY GEMINI_API_KEY \
  ANTHROPIC_BASE_URL ANTHROPIC_AUTH_TOKEN XDG_CONFIG_HOME XDG_DATA_HOME \
  XDG_CACHE_HOME XDG_STATE_HOME HTTPS_PROXY HTTP_PROXY https_proxy http_proxy \
  2>/dev/null || :

export ANTHROPIC_API_KEY=sk-ant-api03-cbexec-mock   # read via the provider's env list
export OPENCODE_DISABLE_MODELS_FETCH=1   # no models.opencode.ai download: use the embedded snapshot
export OPENCODE_DISABLE_AUTOUPDATE=1     # no update check
export OPENCODE_DISABLE_SHARE=1          # no session sharing
export OPENCODE_DISABLE_LSP_DOWNLOAD=1   # no language-server downloads
export OPENCODE_DISABLE_CLAUDE_CODE=1    # ignore ~/.claude (CLAUDE.md, skills)

_oc_cfg="$HOME/.config/opencode"
mkdir -p "$_oc_cfg/node_modules"
# Global config: the anthropic provider's baseURL points at the mock.
cat >"$_oc_cfg/opencode.json" <<EOF
{
  "\$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "anthropic/claude-sonnet-4-5",
  "small_model": "anthropic/claude-haiku-4-5",
  "provider": { "anthropic": { "options": { "baseURL": "$MOCK_URL/v1" } } }
}
EOF
# opencode npm-installs @opencode-ai/plugin into every config dir at start-up
# unless node_modules exists and package-lock.json already lists every
# dependency: pre-seed both so it never goes to the registry.
printf '%s\n' '{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}' >"$_oc_cfg/package.json"
printf '%s\n' '{"lockfileVersion":3,"packages":{"":{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}}}' >"$_oc_cfg/package-lock.json"
unset _oc_cfg
