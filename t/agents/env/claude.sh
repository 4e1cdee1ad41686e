# SPDX-License-Identifier: ISC
# Environment for Claude Code (npm @anthropic-ai/claude-code 2.1.332) talking to
# the local mock.  POSIX sh, meant to be SOURCED after setting:
#   MOCK_URL   scenario base URL, e.g. http://127.0.0.1:PORT/s/success
#   HOME       a scratch directory (isolated per run)
#   AGENT_BIN  node_modules/.bin of the install (holds `claude`)
# Optional: CLAUDE_AUTH=oauth  authenticate as a claude.ai subscriber
#   (CLAUDE_CODE_OAUTH_TOKEN) instead of an API key; needed for the
#   subscription usage-limit message ("You've hit your 5-hour limit · resets ...").
# Scenario missing_key: source this, then `unset ANTHROPIC_API_KEY`.
# See ../docs/claude.md for where each knob is read in the client.

: "${MOCK_URL:?set MOCK_URL}" "${HOME:?set HOME}" "${AGENT_BIN:?set AGENT_BIN}"
PATH="$AGENT_BIN:$PATH"
export PATH HOME

# Nothing from the caller's environment may pick another provider/account.
unset ANTHROPIC_AUTH_TOKEN ANTHROPIC_MODEL ANTHROPIC_SMALL_FAST_MODEL \
  ANTHROPIC_CUSTOM_HEADERS CLAUDE_CODE_USE_BEDROCK CLAUDE_CODE_USE_VERTEX \
  CLAUDE_CODE_USE_FOUNDRY CLAUDE_CODE_USE_GATEWAY CLAUDE_CODE_OAUTH_TOKEN \
  CLAUDECODE CLAUDE_CODE_ENTRYPOINT CLAUDE_CONFIG_DIR HTTPS_PROXY HTTP_PROXY \
  https_proxy http_proxy 2>/dev/null || :

export ANTHROPIC_BASE_URL="$MOCK_URL"          # POST $MOCK_URL/v1/messages?beta=true
if [ "${CLAUDE_AUTH:-}" = oauth ]; then
  unset ANTHROPIC_API_KEY
  export CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-cbexec-mock   # sent as Authorization: Bearer
else
  export ANTHROPIC_API_KEY=sk-ant-api03-cbexec-mock         # sent as x-api-key
fi

export CLAUDE_CODE_MAX_RETRIES=0   # API retries (default 10, clamped to 15); 0 = fail at once
export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1  # no telemetry/update/feature-flag/plugin fetches
export DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
export CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1 DISABLE_COST_WARNINGS=1
export TZ=UTC   # usage-limit reset times print in local time: pin the zone

# No config file is needed: -p runs work with an empty $HOME (the client
# creates ~/.claude.json and ~/.claude/ itself).
mkdir -p "$HOME"
