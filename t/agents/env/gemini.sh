# SPDX-License-Identifier: ISC
# Gemini CLI (@google/gemini-cli 0.61.0) -> local mock.  POSIX sh, to be SOURCED.
#
# Needs, set by the caller before sourcing:
#   MOCK_URL   scenario base URL, e.g. http://127.0.0.1:PORT/s/success
#   HOME       a scratch directory (settings are written to $HOME/.gemini)
#   AGENT_BIN  the node_modules/.bin dir holding `gemini`
# Optional:
#   GEMINI_MOCK_KEY  the API key to send (default "mock-key").  For the
#                    `missing_key` scenario source this file, then
#                    `unset GEMINI_API_KEY` (exit 41, see docs/gemini.md).
#
# Run afterwards e.g.:  "$AGENT_BIN/gemini" -p "..." --output-format json </dev/null

: "${MOCK_URL:?MOCK_URL must be set}" "${HOME:?HOME must be set}" "${AGENT_BIN:?AGENT_BIN must be set}"
PATH="$AGENT_BIN:$PATH"; export PATH

# --- where to talk, and with which key -------------------------------------
# The @google/genai SDK uses GOOGLE_GEMINI_BASE_URL as httpOptions.baseUrl and
# appends /v1beta/models/<model>:streamGenerateContent?alt=sse.  NOTE: with this
# variable set and no security.auth.selectedType, 0.61 picks auth type
# "gateway" (not "gemini-api-key"); the settings below pin "gemini-api-key" so
# the client takes the real API-key path (key sent as `x-goog-api-key`, exit 41
# when GEMINI_API_KEY is missing).
GOOGLE_GEMINI_BASE_URL="$MOCK_URL"; export GOOGLE_GEMINI_BASE_URL
GEMINI_API_KEY="${GEMINI_MOCK_KEY:-mock-key}"; export GEMINI_API_KEY
# Never pick Vertex / Code Assist / ADC from the caller's environment.
unset GOOGLE_API_KEY GOOGLE_GENAI_USE_VERTEXAI GOOGLE_GENAI_USE_GCA GOOGLE_VERTEX_BASE_URL \
      GOOGLE_CLOUD_PROJECT GOOGLE_CLOUD_PROJECT_ID GOOGLE_CLOUD_LOCATION CLOUD_SHELL \
      GEMINI_CLI_USE_COMPUTE_ADC GEMINI_CLI_HOME GEMINI_CLI_EXP_AGENT \
      GOOGLE_APPLICATION_CREDENTIALS HTTPS_PROXY HTTP_PROXY https_proxy http_proxy 2>/dev/null

# --- model: pinned, so no router call -------------------------------------
# Default model "auto" makes a classifier call (generateContent on a flash-lite
# model) before every turn; that utility call has its OWN retry loop (5
# attempts, not capped by general.maxAttempts): a persistent 429 costs ~2 min.
# A concrete model bypasses the router.  GEMINI_MOCK_MODEL= (empty) keeps auto.
GEMINI_MODEL="${GEMINI_MOCK_MODEL-gemini-3.1-pro-preview}"; export GEMINI_MODEL
[ -n "$GEMINI_MODEL" ] || unset GEMINI_MODEL

# --- headless behaviour ----------------------------------------------------
# Folder trust is ON by default in 0.61; an untrusted cwd in headless mode is a
# FatalUntrustedWorkspaceError (exit 55).  This env var (= --skip-trust) trusts it.
GEMINI_CLI_TRUST_WORKSPACE=true; export GEMINI_CLI_TRUST_WORKSPACE
# Deliberately NOT set (fixtures show the default behaviour):
#   NO_COLOR=1              would drop the \033[31m..\033[0m around fatal errors
#   GEMINI_CLI_NO_RELAUNCH  would skip the parent->child node relaunch

# --- settings ~/.gemini/settings.json ---------------------------------------
#  security.auth.selectedType  "gemini-api-key": REQUIRED with a base URL, else
#                           0.61 picks "gateway" -> "Invalid auth method selected." (41)
#  general.maxAttempts: 1   main-chat attempts (default 10, clamped to <=10);
#                           with defaults a persistent 429/503 takes ~4-5 min
#  general.retryFetchErrors: false   no retries on "fetch failed" (refused etc.)
#  telemetry / usage statistics / auto update / IDE: off
mkdir -p "$HOME/.gemini"
cat > "$HOME/.gemini/settings.json" <<'EOF'
{
  "security": { "auth": { "selectedType": "gemini-api-key" } },
  "general": {
    "maxAttempts": 1,
    "retryFetchErrors": false,
    "enableAutoUpdate": false,
    "enableAutoUpdateNotification": false,
    "enableNotifications": false,
    "checkpointing": { "enabled": false }
  },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false },
  "ide": { "enabled": false, "hasSeenNudge": true },
  "ui": { "hideBanner": true, "hideTips": true }
}
EOF
