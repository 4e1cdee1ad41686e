# SPDX-License-Identifier: ISC
# Environment for pi (npm @mariozechner/pi-coding-agent 0.73.1) talking to the
# local mock through its built-in "anthropic" provider.  POSIX sh, meant to be
# SOURCED after setting:
#   MOCK_URL   scenario base URL, e.g. http://127.0.0.1:PORT/s/success
#              (the mock-anthropic root; pi appends /v1/messages)
#   HOME       a scratch directory (isolated per run)
#   AGENT_BIN  node_modules/.bin of the install (holds `pi`)
# Optional:
#   CBEXEC_PI_RETRY=defaults  keep pi's own retries (3 agent-level retries,
#              2 s doubling, and the Anthropic SDK's 2 retries under each);
#              the default here is none at all.
#   CBEXEC_PI_PROVIDER=openai-codex  the ChatGPT-plan provider instead
#              (OAuth, Responses API at $MOCK_URL/codex/responses: point
#              MOCK_URL at mock-openai's /s/SCENARIO root); it is the one
#              provider whose usage limit pi words with a reset time.
# Scenario missing_key: source this, then `unset ANTHROPIC_API_KEY`.
# Command lines: pi --no-session -p "$PROMPT" [--mode json]
# See ../docs/pi.md for where each knob is read in the client.

: "${MOCK_URL:?set MOCK_URL}" "${HOME:?set HOME}" "${AGENT_BIN:?set AGENT_BIN}"
PATH="$AGENT_BIN:$PATH"
export PATH HOME

# Nothing from the caller's environment may pick another provider or config.
unset ANTHROPIC_OAUTH_TOKEN ANTHROPIC_BASE_URL OPENAI_API_KEY GEMINI_API_KEY \
  OPENROUTER_API_KEY PI_CODING_AGENT_SESSION_DIR PI_PACKAGE_DIR PI_TELEMETRY \
  HTTPS_PROXY HTTP_PROXY https_proxy http_proxy 2>/dev/null || :

export PI_CODING_AGENT_DIR="$HOME/.pi/agent"  # settings.json, models.json, auth.json
export PI_OFFLINE=1            # no version check, package checks or install ping
export PI_SKIP_VERSION_CHECK=1 # belt and braces (pi.dev/api/latest-version)
export ANTHROPIC_API_KEY=sk-ant-api03-cbexec-mock   # sent as x-api-key
export TZ="${TZ:-UTC}"

mkdir -p "$PI_CODING_AGENT_DIR"
if [ "${CBEXEC_PI_RETRY:-}" = defaults ]; then
	_pi_retry='{ "enabled": true }'
else
	# agent-level retries off; the SDK's own (maxRetries) off too
	_pi_retry='{ "enabled": false, "maxRetries": 0, "provider": { "maxRetries": 0 } }'
fi
if [ "${CBEXEC_PI_PROVIDER:-anthropic}" = openai-codex ]; then
	_pi_provider=openai-codex _pi_model=gpt-5.1
	# An OAuth login as pi stores it: the access token is a JWT whose
	# payload carries the ChatGPT account id (pi reads it, never checks
	# the signature); it does not expire, so nothing is refreshed.
	_pi_jwt="eyJhbGciOiJub25lIn0.$(printf '%s' \
	    '{"https://api.openai.com/auth":{"chatgpt_account_id":"acct_cbexec_mock"}}' |
	    base64 | tr -d '\n=' | tr '+/' '-_').sig"
	cat >"$PI_CODING_AGENT_DIR/auth.json" <<EOF
{ "openai-codex": { "type": "oauth", "access": "$_pi_jwt", "refresh": "rt-cbexec-mock",
  "expires": 4102444800000, "accountId": "acct_cbexec_mock" } }
EOF
	unset _pi_jwt
else
	_pi_provider=anthropic _pi_model=claude-sonnet-4-5
fi
cat >"$PI_CODING_AGENT_DIR/settings.json" <<EOF
{
  "defaultProvider": "$_pi_provider",
  "defaultModel": "$_pi_model",
  "transport": "sse",
  "quietStartup": true,
  "enableInstallTelemetry": false,
  "retry": $_pi_retry
}
EOF
cat >"$PI_CODING_AGENT_DIR/models.json" <<EOF
{ "providers": { "$_pi_provider": { "baseUrl": "$MOCK_URL" } } }
EOF
unset _pi_retry _pi_provider _pi_model
