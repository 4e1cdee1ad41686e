# SPDX-License-Identifier: ISC
# Environment for Continue's CLI `cn` (npm @continuedev/cli 1.5.47) talking to
# the local mock through an "anthropic" model in a config file of its own.
# POSIX sh, meant to be SOURCED after setting:
#   MOCK_URL   scenario base URL, e.g. http://127.0.0.1:PORT/s/success
#              (mock-anthropic; cn appends /v1/messages)
#   HOME       a scratch directory (isolated per run)
#   AGENT_BIN  node_modules/.bin of the install (holds `cn`)
# Sets CN_CONFIG, the config file to pass as `cn --config "$CN_CONFIG"`.
# Scenario missing_key: source this, then `unset ANTHROPIC_API_KEY` (the
# config takes the key from it).
# cn has NO setting for its model-call retries (10, hard-coded, for 502,
# 503, 504, "overloaded" and refused connections): see ../docs/cn.md.
# Command lines: cn --config "$CN_CONFIG" -p "$PROMPT" [--format json]

: "${MOCK_URL:?set MOCK_URL}" "${HOME:?set HOME}" "${AGENT_BIN:?set AGENT_BIN}"
PATH="$AGENT_BIN:$PATH"
export PATH HOME

# Nothing from the caller's environment may pick another account, hub or
# config directory.
unset CONTINUE_API_KEY CONTINUE_API_BASE CONTINUE_GLOBAL_DIR CONTINUE_USE_BEDROCK \
  CONTINUE_USE_AI_SDK OPENAI_API_KEY OTEL_EXPORTER_OTLP_ENDPOINT \
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT OTEL_METRICS_EXPORTER \
  HTTPS_PROXY HTTP_PROXY https_proxy http_proxy 2>/dev/null || :

export ANTHROPIC_API_KEY=sk-ant-api03-cbexec-mock   # sent as x-api-key
export CONTINUE_CLI_ENABLE_TELEMETRY=0 CONTINUE_METRICS_ENABLED=0
export NO_COLOR=1 FORCE_NO_TTY=1
export TZ="${TZ:-UTC}"
# Every start fetches https://api.continue.dev/cn/info (a version check no
# setting turns off): a preload makes fetch() to any host but the loopback
# fail at once, as on a machine without a network, so nothing -- not even a
# DNS query -- leaves the machine.  Requests to the mock are untouched.
mkdir -p "$HOME/.continue"
cat >"$HOME/.continue/loopback-only.cjs" <<'EOF'
"use strict";
const real = globalThis.fetch;
if (typeof real === "function") {
	const loopback = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);
	globalThis.fetch = function fetch(input, init) {
		let host;
		try {
			host = new URL(typeof input === "string" || input instanceof URL ?
			    input : input.url).hostname;
		} catch (e) {
			return real.call(this, input, init);
		}
		if (loopback.has(host))
			return real.call(this, input, init);
		const cause = new Error("getaddrinfo ENOTFOUND " + host);
		cause.code = "ENOTFOUND";
		return Promise.reject(new TypeError("fetch failed", { cause }));
	};
}
EOF
export NODE_OPTIONS="--require $HOME/.continue/loopback-only.cjs"

export CN_CONFIG="$HOME/.continue/cbexec-mock.yaml"
cat >"$CN_CONFIG" <<EOF
name: cbexec mock
version: 0.0.1
schema: v1
models:
  - name: claude-sonnet-4-5
    provider: anthropic
    model: claude-sonnet-4-5
    apiKey: \${{ secrets.ANTHROPIC_API_KEY }}
    apiBase: $MOCK_URL/v1/
    roles: [chat, edit, apply]
EOF
