# SPDX-License-Identifier: ISC
# shellcheck shell=sh
# Source me (POSIX sh) to point Qwen Code (npm @qwen-code/qwen-code 0.15.10)
# at the local mock through its OpenAI-compatible provider.  Set first:
#   MOCK_URL   scenario base URL, e.g. http://127.0.0.1:PORT/s/success/v1
#   HOME       a scratch directory (settings go to $HOME/.qwen)
#   AGENT_BIN  node_modules/.bin of the install (holds `qwen`)
# For the missing_key scenario: `unset OPENAI_API_KEY` after sourcing.
# Optional: CBEXEC_QWEN_SKIP_LOOP_DETECTION=false turns Qwen's loop detection
# on (its default, true, leaves it off).
# See docs/qwen.md for where each setting comes from.

: "${MOCK_URL:?set MOCK_URL}" "${HOME:?set HOME}" "${AGENT_BIN:?set AGENT_BIN}"

export PATH="$AGENT_BIN:$PATH"
export OPENAI_API_KEY="sk-mock-cbexec-test-key"
export OPENAI_BASE_URL="$MOCK_URL"
export OPENAI_MODEL="qwen3-coder-plus"
unset DASHSCOPE_API_KEY QWEN_CODE_UNATTENDED_RETRY QWEN_SANDBOX SANDBOX \
      QWEN_TELEMETRY_ENABLED OTEL_EXPORTER_OTLP_ENDPOINT HTTPS_PROXY HTTP_PROXY \
      https_proxy http_proxy ALL_PROXY all_proxy
export NO_COLOR=1
export NO_PROXY="127.0.0.1,localhost" no_proxy="127.0.0.1,localhost"

mkdir -p "$HOME/.qwen"
cat > "$HOME/.qwen/settings.json" <<EOF
{
  "security": { "auth": { "selectedType": "openai" } },
  "model": {
    "generationConfig": { "maxRetries": 0 },
    "skipLoopDetection": ${CBEXEC_QWEN_SKIP_LOOP_DETECTION:-true},
    "name": "qwen3-coder-plus"
  },
  "general": { "enableAutoUpdate": false },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false }
}
EOF
