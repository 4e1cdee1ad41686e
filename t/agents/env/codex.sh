# SPDX-License-Identifier: ISC
# shellcheck shell=sh
# Source me (POSIX sh) to point Codex CLI (npm @openai/codex 0.171.0) at the
# local mock.  Set first:
#   MOCK_URL   scenario base URL, e.g. http://127.0.0.1:PORT/s/success/v1
#   HOME       a scratch directory (config goes to $HOME/.codex)
#   AGENT_BIN  node_modules/.bin of the install (holds `codex`)
# For the missing_key scenario: `unset OPENAI_API_KEY` after sourcing.
# Optional overrides (defaults = retries off; Codex's own defaults in brackets):
#   CBEXEC_REQUEST_MAX_RETRIES [4]  CBEXEC_STREAM_MAX_RETRIES [5]
#   CBEXEC_UNBOUNDED_CONNECTION_RETRIES [true]  CBEXEC_STREAM_IDLE_TIMEOUT_MS [300000]
# See docs/codex.md for where each setting comes from.

: "${MOCK_URL:?set MOCK_URL}" "${HOME:?set HOME}" "${AGENT_BIN:?set AGENT_BIN}"

export CODEX_HOME="$HOME/.codex"     # config, sessions, logs live here
export PATH="$AGENT_BIN:$PATH"
export OPENAI_API_KEY="sk-mock-cbexec-test-key"  # read via env_key below
unset OPENAI_BASE_URL CODEX_API_KEY OPENAI_ORG_ID OPENAI_PROJECT_ID
export NO_COLOR=1                    # no ANSI colours in `codex exec` output
unset RUST_LOG                       # keep Codex's default log filter
export TZ="${TZ:-UTC}"               # usage-limit reset times are local time
# The network proxy env must not hijack 127.0.0.1.
export NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}" no_proxy="127.0.0.1,localhost"

mkdir -p "$CODEX_HOME"
cat > "$CODEX_HOME/config.toml" <<EOF
model = "gpt-5.5"
model_provider = "cbexec_mock"
approval_policy = "never"          # exec never prompts
sandbox_mode = "danger-full-access" # no bwrap/landlock needed for tool calls
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[history]
persistence = "none"

[features]
# Default on in 0.169: a connection failure is retried forever
# ("Reconnecting... waiting for network", 5 s doubling to 60 s).
unbounded_connection_retries = ${CBEXEC_UNBOUNDED_CONNECTION_RETRIES:-false}

[model_providers.cbexec_mock]
name = "cbexec mock"
base_url = "$MOCK_URL"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = ${CBEXEC_REQUEST_MAX_RETRIES:-0}  # HTTP-level retries
stream_max_retries = ${CBEXEC_STREAM_MAX_RETRIES:-0}   # turn-level retries
stream_idle_timeout_ms = ${CBEXEC_STREAM_IDLE_TIMEOUT_MS:-10000}
EOF
