# SPDX-License-Identifier: ISC
# Environment for Kilo (npm @kilocode/cli 7.7.7, command `kilo`, an opencode
# fork) talking to the local mock through its built-in "anthropic" provider.
# POSIX sh, meant to be SOURCED after setting:
#   MOCK_URL   scenario base URL, e.g. http://127.0.0.1:PORT/s/success
#              (mock-anthropic; kilo appends /v1/messages)
#   HOME       a scratch directory (isolated per run)
#   AGENT_BIN  node_modules/.bin of the install (holds `kilo`)
# Optional:
#   CBEXEC_KILO_RETRY=defaults  keep kilo's own retries (as opencode: up to 5,
#              2 s doubling, uncapped with response headers); the default
#              here is KILO_SESSION_RETRY_LIMIT=1, the fewest it accepts.
# Scenario missing_key: source this, then `unset ANTHROPIC_API_KEY`.
# Command lines: kilo run "$PROMPT" / kilo run --format json "$PROMPT"
# (stdin must be /dev/null: `run` reads a stdin that is not a TTY to EOF).
# See ../docs/kilo.md for where each knob is read in the client.

: "${MOCK_URL:?set MOCK_URL}" "${HOME:?set HOME}" "${AGENT_BIN:?set AGENT_BIN}"
PATH="$AGENT_BIN:$PATH"
export PATH HOME

# Nothing from the caller's environment may pick other providers or config.
unset KILO_CONFIG KILO_CONFIG_DIR KILO_API_KEY KILO_ORG_ID KILO_API_URL \
  KILO_PERMISSION KILO_AUTH_CONTENT KILO_MODELS_URL KILO_MODELS_PATH \
  KILO_SERVER_PASSWORD OPENCODE_CONFIG OPENCODE_CONFIG_CONTENT \
  OPENAI_API_KEY GEMINI_API_KEY ANTHROPIC_BASE_URL ANTHROPIC_AUTH_TOKEN \
  XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME XDG_STATE_HOME \
  HTTPS_PROXY HTTP_PROXY https_proxy http_proxy 2>/dev/null || :

export ANTHROPIC_API_KEY=sk-ant-api03-cbexec-mock   # read via the provider's env list
# The whole configuration, inline; no global or project config file is read.
export KILO_CONFIG_CONTENT="{
  \"autoupdate\": false,
  \"share\": \"disabled\",
  \"model\": \"anthropic/claude-sonnet-4-5\",
  \"small_model\": \"anthropic/claude-haiku-4-5\",
  \"enabled_providers\": [\"anthropic\"],
  \"experimental\": { \"openTelemetry\": false },
  \"provider\": { \"anthropic\": { \"options\": { \"baseURL\": \"$MOCK_URL/v1\" } } }
}"
export KILO_PURE=1                    # no external plugins (no npm installs at start)
export KILO_DISABLE_PROJECT_CONFIG=1  # ignore kilo.json/.kilo/ in the work tree
export KILO_DISABLE_DEFAULT_PLUGINS=1
export KILO_NO_DAEMON=1               # never start or join a background server
export KILO_DISABLE_AUTOUPDATE=1
export KILO_DISABLE_MODELS_FETCH=1    # the model list embedded in the binary, no download
export KILO_TELEMETRY_LEVEL=off       # PostHog off
export KILO_DISABLE_SHARE=1 KILO_DISABLE_SESSION_INGEST=1 KILO_DISABLE_PRESENCE=1
export KILO_DISABLE_LSP_DOWNLOAD=1 KILO_DISABLE_CLAUDE_CODE=1
export KILO_DISABLE_CODEBASE_INDEXING=1
if [ "${CBEXEC_KILO_RETRY:-}" != defaults ]; then
	export KILO_SESSION_RETRY_LIMIT=1   # a positive integer; 0 or empty means the default
fi
export TZ="${TZ:-UTC}"
mkdir -p "$HOME"
