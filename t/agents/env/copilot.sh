# SPDX-License-Identifier: ISC
# Environment for GitHub Copilot CLI (npm @github/copilot 1.0.102) talking to
# the local mock as a custom model provider ("BYOK": no GitHub login).  POSIX
# sh, meant to be SOURCED after setting:
#   MOCK_URL   scenario base URL, e.g. http://127.0.0.1:PORT/s/success/v1
#              (mock-openai; Copilot appends /chat/completions)
#   HOME       a scratch directory (isolated per run)
#   AGENT_BIN  node_modules/.bin of the install (holds `copilot`)
# Optional:
#   CBEXEC_COPILOT_PROVIDER=anthropic  the "anthropic" provider type instead
#              (point MOCK_URL at mock-anthropic's /s/SCENARIO root)
#   CBEXEC_COPILOT_PKG_CACHE  where the native binary unpacks its 190 MB
#              package (default: under $HOME; share one between runs so it
#              is unpacked once)
# Scenario missing_key: source this, then `unset COPILOT_PROVIDER_API_KEY`.
# Copilot has NO setting for its model-call retries (5, hard-coded): see
# ../docs/copilot.md for the times that costs.
# Command lines: copilot -p "$PROMPT" --allow-all-tools [--output-format json]

: "${MOCK_URL:?set MOCK_URL}" "${HOME:?set HOME}" "${AGENT_BIN:?set AGENT_BIN}"
PATH="$AGENT_BIN:$PATH"
export PATH HOME

# Nothing from the caller's environment may pick a GitHub account, another
# provider or a proxy.
unset COPILOT_GITHUB_TOKEN GH_TOKEN GITHUB_TOKEN GH_HOST COPILOT_GH_HOST \
  COPILOT_HOME COPILOT_PROVIDER_BEARER_TOKEN COPILOT_PROVIDER_API_KEY_COMMAND \
  COPILOT_PROVIDER_WIRE_API COPILOT_PROVIDER_TRANSPORT COPILOT_PROVIDER_HEADERS \
  COPILOT_PROVIDER_MODEL_ID COPILOT_PROVIDER_WIRE_MODEL COPILOT_ALLOW_ALL \
  COPILOT_CLI_DIST_DIR COPILOT_CLI_VERSION COPILOT_OTEL_ENABLED \
  OTEL_EXPORTER_OTLP_ENDPOINT COPILOT_OTEL_FILE_EXPORTER_PATH \
  HTTPS_PROXY HTTP_PROXY https_proxy http_proxy 2>/dev/null || :

export COPILOT_PROVIDER_BASE_URL="$MOCK_URL"
export COPILOT_PROVIDER_TYPE="${CBEXEC_COPILOT_PROVIDER:-openai}"
export COPILOT_PROVIDER_API_KEY=sk-mock-cbexec-test-key  # Authorization: Bearer (x-api-key for anthropic)
if [ "$COPILOT_PROVIDER_TYPE" = anthropic ]; then
	export COPILOT_MODEL=claude-sonnet-4.5
else
	export COPILOT_MODEL=gpt-5.4
fi
# Offline: no GitHub authentication, telemetry, web tools, GitHub MCP
# server or auto-update (`copilot help environment`).
export COPILOT_OFFLINE=true
export COPILOT_AUTO_UPDATE=false
export NO_COLOR=1
export NO_PROXY="127.0.0.1,localhost" no_proxy="127.0.0.1,localhost"
export TZ="${TZ:-UTC}"
export COPILOT_PKG_CACHE_HOME="${CBEXEC_COPILOT_PKG_CACHE:-$HOME/.cache/copilot}"
mkdir -p "$HOME" "$COPILOT_PKG_CACHE_HOME"
