#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Local mock of the OpenAI HTTP APIs used by AI coding-agent CLIs (test only).

Standard library only.  Binds 127.0.0.1 only.

    mock-openai.py [--port-file F] [--port 0] [--idle-exit 120] [--log F]

The scenario is chosen by a URL path prefix, so one server serves every
scenario at once.  Point a client at the base URL

    http://127.0.0.1:PORT/s/<scenario>/v1

and its requests arrive as /s/<scenario>/v1/responses (Responses API, used by
Codex CLI), /s/<scenario>/v1/chat/completions (Chat Completions, used by Qwen
Code) or GET /s/<scenario>/v1/models.  A path without the /s/<scenario> prefix
is served as scenario "success".  Both streaming (SSE, "stream": true) and
non-streaming requests are answered.

Scenarios (see docs/codex.md and docs/qwen.md for what each client prints):
  success       answer with the RALPH status block (STATUS: IN_PROGRESS)
  complete      answer with STATUS: COMPLETE / EXIT_SIGNAL: true
  401           HTTP 401 invalid_api_key
  403           HTTP 403 unsupported_country_region_territory
  429           HTTP 429 rate_limit_exceeded with retry-after: 1
  429_stream    HTTP 200, then a response.failed / error chunk with
                rate_limit_exceeded in the stream ("Please try again in 1s")
  500           HTTP 500 server_error
  503           HTTP 503 code server_is_overloaded
  529           HTTP 529 overloaded_error (Anthropic-style status)
  credit        HTTP 429 insufficient_quota ("You exceeded your current quota")
  credit_stream HTTP 200, then response.failed with code insufficient_quota
  usage_limit   HTTP 429 error.type usage_limit_reached, plan_type plus,
                resets_at = now + 1h (ChatGPT-plan usage limit)
  usage_limit_days  same, plan_type pro, resets_at = now + 3 days
  qwen_quota    HTTP 429 insufficient_quota "Free allocated quota exceeded."
                (what the Qwen OAuth free tier answered when used up)
  tools         one shell tool call (echo hi), then the answer
  tools_loop    the same shell tool call (echo hi) 6 times, then the answer
  tools_ask     one shell call that changes the work tree (touch
                src/login.js), which a client asks permission for, then the
                answer
  tools_page    productive paging: 8 shell calls reading big.txt (2 000
                lines) 250 lines at a time (sed -n 'A,Bp'), then the answer
  tools_limit_mid  three different shell calls (ls; echo step-2; wc -l
                README.md), then the ChatGPT-plan usage limit (as usage_limit)
  slow          the answer streamed in 10 pieces, one every 0.3 s
  drop          stream starts, then the connection closes before completion
  cut           the same, chunked, and closed before the body's last chunk:
                a stream cut mid-way, not a clean end of the body
  hang          HTTP 200 headers, then nothing (for idle-timeout tests)
A request without an Authorization/api-key header gets the real API's 401
"You didn't provide an API key" in every scenario.

Every request is appended to --log as one JSON line (method, path, headers,
body) when --log is given.  The server exits by itself after --idle-exit
seconds without a request (in-flight streams count as activity).
"""

import argparse
import json
import os
import re
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "mock-model"

STATUS_IN_PROGRESS = (
    "---RALPH_STATUS---\n"
    "STATUS: IN_PROGRESS\n"
    "TASK: 2.3-login-form\n"
    "TASKS_COMPLETED_THIS_LOOP: 1\n"
    "FILES_MODIFIED: 3\n"
    "TESTS_STATUS: PASSING\n"
    "EXIT_SIGNAL: false\n"
    "---END_RALPH_STATUS---"
)
STATUS_COMPLETE = (
    "---RALPH_STATUS---\n"
    "STATUS: COMPLETE\n"
    "TASK: 2.3-login-form\n"
    "TASKS_COMPLETED_THIS_LOOP: 1\n"
    "FILES_MODIFIED: 3\n"
    "TESTS_STATUS: PASSING\n"
    "EXIT_SIGNAL: true\n"
    "---END_RALPH_STATUS---"
)
ANSWER_SUCCESS = "Implemented the login form and its tests.\n\n" + STATUS_IN_PROGRESS
ANSWER_COMPLETE = "All tasks are done.\n\n" + STATUS_COMPLETE
ANSWER_TOOLS = "I ran the command; it printed hi.\n\n" + STATUS_IN_PROGRESS

TOOL_COMMAND = "echo hi"
LOOP_CALLS = 6
SLOW_PIECES = 10
SLOW_INTERVAL = 0.3
HANG_SECONDS = 300  # "hang" holds the stream open this long (then closes it)

# Fixed usage figures so fixtures are stable: per model request.
USAGE_IN, USAGE_CACHED, USAGE_OUT, USAGE_REASONING = 1200, 1000, 80, 16


def err_body(message, etype, code=None, param=None):
    return {"error": {"message": message, "type": etype, "param": param, "code": code}}


# HTTP error scenarios: status, extra headers, body (a dict or a callable).
HTTP_ERRORS = {
    "401": (401, {}, err_body(
        "Incorrect API key provided: sk-mock-******************-key. You can find your "
        "API key at https://platform.openai.com/account/api-keys.",
        "invalid_request_error", "invalid_api_key")),
    "403": (403, {}, {"error": {
        "code": "unsupported_country_region_territory",
        "message": "Country, region, or territory not supported",
        "param": None, "type": "request_forbidden"}}),
    "429": (429, {"retry-after": "1", "x-ratelimit-limit-requests": "3",
                  "x-ratelimit-remaining-requests": "0",
                  "x-ratelimit-reset-requests": "1s"}, err_body(
        "Rate limit reached for mock-model in organization org-mock on requests per min "
        "(RPM): Limit 3, Used 3, Requested 1. Please try again in 1s. Visit "
        "https://platform.openai.com/account/rate-limits to learn more.",
        "requests", "rate_limit_exceeded")),
    "500": (500, {}, err_body(
        "The server had an error while processing your request. Sorry about that!",
        "server_error")),
    "503": (503, {}, err_body(
        "The server is overloaded or not ready yet.", "server_error",
        "server_is_overloaded")),
    "529": (529, {}, {"type": "error", "error": {
        "type": "overloaded_error", "message": "Overloaded"}}),
    "credit": (429, {}, err_body(
        "You exceeded your current quota, please check your plan and billing details. "
        "For more information on this error, read the docs: "
        "https://platform.openai.com/docs/guides/error-codes/api-errors.",
        "insufficient_quota", "insufficient_quota")),
    "qwen_quota": (429, {}, err_body(
        "Free allocated quota exceeded.", "insufficient_quota", "insufficient_quota")),
    "usage_limit": (429, {}, lambda: {"error": {
        "type": "usage_limit_reached",
        "message": "The usage limit has been reached",
        "plan_type": "plus",
        "resets_at": int(time.time()) + 3600,
        "resets_in_seconds": 3600}}),
    "usage_limit_days": (429, {}, lambda: {"error": {
        "type": "usage_limit_reached",
        "message": "The usage limit has been reached",
        "plan_type": "pro",
        "resets_at": int(time.time()) + 3 * 86400,
        "resets_in_seconds": 3 * 86400}}),
}

# Errors delivered inside a 200 stream (Responses: response.failed).
STREAM_ERRORS = {
    "429_stream": {"code": "rate_limit_exceeded", "message":
                   "Rate limit reached for mock-model in organization org-mock on tokens "
                   "per min (TPM): Limit 30000, Used 30000, Requested 900. Please try "
                   "again in 1s. Visit https://platform.openai.com/account/rate-limits "
                   "to learn more."},
    "credit_stream": {"code": "insufficient_quota", "message":
                      "You exceeded your current quota, please check your plan and "
                      "billing details."},
}

NO_KEY = (401, {}, err_body(
    "You didn't provide an API key. You need to provide your API key in an "
    "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or "
    "as the basic auth username and password (i.e. `curl -u YOUR_KEY:`). You can "
    "obtain an API key from https://platform.openai.com/account/api-keys.",
    "invalid_request_error"))

_last_activity = time.monotonic()
_inflight = 0
_lock = threading.Lock()
_log_lock = threading.Lock()
LOG_PATH = None


def touch(delta=0):
    global _last_activity, _inflight
    with _lock:
        _last_activity = time.monotonic()
        _inflight += delta


def new_id(prefix):
    return prefix + uuid.uuid4().hex[:24]


# ---------------------------------------------------------------- helpers on requests

def tool_results(api, body):
    """How many tool results the conversation already holds."""
    if api == "responses":
        items = body.get("input") or []
        if not isinstance(items, list):
            return 0
        return sum(1 for i in items if isinstance(i, dict)
                   and i.get("type") in ("function_call_output", "custom_tool_call_output"))
    msgs = body.get("messages") or []
    return sum(1 for m in msgs if isinstance(m, dict) and m.get("role") == "tool")


def tool_names(api, body):
    names = []
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        if api == "responses":
            names.append(t.get("name") or (t.get("function") or {}).get("name"))
        else:
            names.append((t.get("function") or {}).get("name") or t.get("name"))
    return [n for n in names if n]


def pick_shell_tool(api, body, command=TOOL_COMMAND):
    """Choose the client's shell tool and arguments that run command."""
    names = tool_names(api, body)
    if "exec_command" in names:             # Codex unified exec
        return "exec_command", {"cmd": command}
    if "shell_command" in names:            # Codex shell_command
        return "shell_command", {"command": command}
    if "shell" in names:                    # Codex classic shell
        return "shell", {"command": ["bash", "-lc", command]}
    if "run_shell_command" in names:        # Qwen Code
        return "run_shell_command", {"command": command,
                                     "description": "Run a step"}
    if "bash" in names:                     # GitHub Copilot CLI, Kilo
        return "bash", {"command": command, "description": "Run a step"}
    if "Bash" in names:                     # Continue
        return "Bash", {"command": command}
    # Fallback: first tool.
    return (names[0] if names else "shell"), {"command": command}


# tools_page: big.txt (2 000 lines) 250 lines at a time
PAGE_CALLS = 8
# tools_limit_mid: three good turns, then the usage limit
MID_COMMANDS = ["ls", "echo step-2", "wc -l README.md"]


def limit_mid_reached(api, body):
    """tools_limit_mid: the agent turn after three tool results."""
    return (side_request_answer(api, body) is None and bool(body.get("tools"))
            and tool_results(api, body) >= len(MID_COMMANDS))


def side_request_answer(api, body):
    """Answers for a client's own side calls, which are not the agent turn.

    Qwen Code runs a "managed memory extraction subagent" after each turn
    (settings memory.enableManagedAutoMemory, default on) and, when enabled,
    a next-speaker check that wants JSON.  They get a short plain answer, so
    they never trigger the scenario's tool calls or errors twice over.
    """
    if api != "chat":
        return None
    msgs = body.get("messages") or []
    system = ""
    if msgs and isinstance(msgs[0], dict) and msgs[0].get("role") == "system":
        system = json.dumps(msgs[0].get("content"))
    if "memory extraction" in system:
        return "No durable memories to save."
    if "next_speaker" in json.dumps(msgs[-1:] if msgs else []):
        return json.dumps({"reasoning": "The model answered; the user speaks next.",
                           "next_speaker": "user"})
    return None


def plan(scenario, api, body):
    """Return ("text", answer) or ("tool", name, args) for a generation request."""
    if scenario == "complete":
        return ("text", ANSWER_COMPLETE)
    if scenario in ("tools", "tools_loop"):
        want = 1 if scenario == "tools" else LOOP_CALLS
        if tool_results(api, body) < want:
            name, args = pick_shell_tool(api, body)
            return ("tool", name, args)
        return ("text", ANSWER_TOOLS)
    n = tool_results(api, body)
    if scenario == "tools_ask" and body.get("tools") and n < 1:
        name, args = pick_shell_tool(api, body, "touch src/login.js")
        return ("tool", name, args)
    if scenario == "tools_ask":
        return ("text", ANSWER_TOOLS)
    if scenario == "tools_page" and body.get("tools") and n < PAGE_CALLS:
        name, args = pick_shell_tool(api, body, "sed -n '%d,%dp' big.txt" %
                                     (250 * n + 1, 250 * (n + 1)))
        return ("tool", name, args)
    if scenario == "tools_limit_mid" and body.get("tools") and n < len(MID_COMMANDS):
        name, args = pick_shell_tool(api, body, MID_COMMANDS[n])
        return ("tool", name, args)
    if scenario in ("tools_page", "tools_limit_mid"):
        return ("text", ANSWER_TOOLS)
    return ("text", ANSWER_SUCCESS)


def usage_responses():
    return {"input_tokens": USAGE_IN,
            "input_tokens_details": {"cached_tokens": USAGE_CACHED},
            "output_tokens": USAGE_OUT,
            "output_tokens_details": {"reasoning_tokens": USAGE_REASONING},
            "total_tokens": USAGE_IN + USAGE_OUT}


def usage_chat():
    return {"prompt_tokens": USAGE_IN, "completion_tokens": USAGE_OUT,
            "total_tokens": USAGE_IN + USAGE_OUT,
            "prompt_tokens_details": {"cached_tokens": USAGE_CACHED},
            "completion_tokens_details": {"reasoning_tokens": USAGE_REASONING}}


def split_pieces(text, n):
    size = max(1, -(-len(text) // n))
    return [text[i:i + size] for i in range(0, len(text), size)]


# ---------------------------------------------------------------- handler

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-openai/1.0"
    sys_version = ""

    def log_message(self, fmt, *args):  # quiet: use --log instead
        pass

    # -- plumbing
    def _log(self, body):
        if not LOG_PATH:
            return
        rec = {"t": round(time.time(), 3), "method": self.command, "path": self.path,
               "headers": {k.lower(): v for k, v in self.headers.items()},
               "body": body}
        with _log_lock, open(LOG_PATH, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")

    def _read_body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        if self.headers.get("content-encoding", "").lower() in ("zstd", "gzip", "br"):
            return {"_encoded": self.headers.get("content-encoding"), "_len": len(raw)}
        try:
            return json.loads(raw.decode("utf-8")) if raw else {}
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}

    def _json(self, status, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("x-request-id", new_id("req_"))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _sse_start(self, chunked=False):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("x-request-id", new_id("req_"))
        if chunked:
            self.send_header("transfer-encoding", "chunked")
        else:
            self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        self._chunked = chunked

    def _sse(self, obj, event=None):
        chunk = ""
        if event:
            chunk += "event: %s\n" % event
        chunk += "data: %s\n\n" % (obj if isinstance(obj, str) else json.dumps(obj))
        b = chunk.encode()
        if getattr(self, "_chunked", False):
            b = b"%x\r\n%s\r\n" % (len(b), b)
        self.wfile.write(b)
        self.wfile.flush()
        touch()

    def _cut(self):
        """Close the connection in the middle of a chunked body."""
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _route(self):
        m = re.match(r"^/s/([^/?]+)(/.*)?$", self.path)
        if m:
            scenario, rest = m.group(1), (m.group(2) or "/")
        else:
            scenario, rest = "success", self.path
        rest = rest.split("?", 1)[0]
        return scenario, rest

    def _has_key(self):
        auth = self.headers.get("authorization", "")
        if auth.lower().startswith("bearer ") and auth[7:].strip():
            return True
        return bool(self.headers.get("api-key") or self.headers.get("x-api-key"))

    # -- verbs
    def do_GET(self):
        touch(+1)
        try:
            self._log(None)
            scenario, rest = self._route()
            if rest.rstrip("/").endswith("/models"):
                return self._models(scenario)
            self._json(404, err_body("Unknown request URL: GET %s" % self.path,
                                     "invalid_request_error", "unknown_url"))
        finally:
            touch(-1)

    def do_HEAD(self):
        touch()
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        touch(+1)
        try:
            body = self._read_body()
            self._log(body)
            scenario, rest = self._route()
            path = rest.rstrip("/")
            if path.endswith("/responses"):
                api = "responses"
            elif path.endswith("/chat/completions"):
                api = "chat"
            else:
                return self._json(404, err_body(
                    "Unknown request URL: POST %s" % self.path,
                    "invalid_request_error", "unknown_url"))
            if not self._has_key():
                status, hdrs, obj = NO_KEY
                return self._json(status, obj, hdrs)
            if scenario in HTTP_ERRORS:
                status, hdrs, obj = HTTP_ERRORS[scenario]
                return self._json(status, obj() if callable(obj) else obj, hdrs)
            if scenario == "tools_limit_mid" and limit_mid_reached(api, body):
                status, hdrs, obj = HTTP_ERRORS["usage_limit"]
                return self._json(status, obj(), hdrs)
            stream = bool(body.get("stream")) if isinstance(body, dict) else False
            if api == "responses":
                return self._responses(scenario, body, stream)
            return self._chat(scenario, body, stream)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            touch(-1)

    def _models(self, scenario):
        if not self._has_key():
            status, hdrs, obj = NO_KEY
            return self._json(status, obj, hdrs)
        if scenario in ("401", "403"):
            status, hdrs, obj = HTTP_ERRORS[scenario]
            return self._json(status, obj, hdrs)
        # OpenAI list shape ("data") plus Codex's own shape ("models": []);
        # an empty "models" list makes Codex keep its built-in model metadata.
        self._json(200, {"object": "list",
                         "data": [{"id": MODEL, "object": "model", "created": 0,
                                   "owned_by": "mock"}],
                         "models": []})

    # -- Responses API (Codex)
    def _responses(self, scenario, body, stream):
        model = body.get("model") or MODEL
        resp_id = new_id("resp_")
        created = int(time.time())
        step = plan(scenario, "responses", body)
        base = {"id": resp_id, "object": "response", "created_at": created,
                "model": model, "error": None, "incomplete_details": None}
        if step[0] == "text":
            item = {"id": new_id("msg_"), "type": "message", "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": step[1],
                                 "annotations": []}]}
        else:
            item = {"id": new_id("fc_"), "type": "function_call", "status": "completed",
                    "call_id": new_id("call_"), "name": step[1],
                    "arguments": json.dumps(step[2])}
        if not stream:
            return self._json(200, dict(base, status="completed", output=[item],
                                        usage=usage_responses()))
        self._sse_start(chunked=scenario == "cut")
        seq = [0]

        def ev(kind, **fields):
            obj = {"type": kind, "sequence_number": seq[0]}
            obj.update(fields)
            seq[0] += 1
            self._sse(obj, event=kind)

        ev("response.created", response=dict(base, status="in_progress", output=[]))
        ev("response.in_progress", response=dict(base, status="in_progress", output=[]))
        if scenario == "hang":
            time.sleep(HANG_SECONDS)
            return
        if scenario in STREAM_ERRORS:
            err = STREAM_ERRORS[scenario]
            ev("response.failed", response=dict(base, status="failed", output=[],
                                                error=err))
            return
        if item["type"] == "message":
            text = step[1]
            added = dict(item, status="in_progress", content=[])
            ev("response.output_item.added", output_index=0, item=added)
            ev("response.content_part.added", item_id=item["id"], output_index=0,
               content_index=0, part={"type": "output_text", "text": "",
                                      "annotations": []})
            n = SLOW_PIECES if scenario in ("slow", "drop", "cut") else 4
            for i, piece in enumerate(split_pieces(text, n)):
                if scenario in ("drop", "cut") and i == 3:
                    if scenario == "cut":
                        self._cut()
                    return  # close the connection mid-stream
                if scenario == "slow":
                    time.sleep(SLOW_INTERVAL)
                ev("response.output_text.delta", item_id=item["id"], output_index=0,
                   content_index=0, delta=piece)
            ev("response.output_text.done", item_id=item["id"], output_index=0,
               content_index=0, text=text)
            ev("response.content_part.done", item_id=item["id"], output_index=0,
               content_index=0, part=item["content"][0])
        else:
            added = dict(item, status="in_progress", arguments="")
            ev("response.output_item.added", output_index=0, item=added)
            ev("response.function_call_arguments.delta", item_id=item["id"],
               output_index=0, delta=item["arguments"])
            ev("response.function_call_arguments.done", item_id=item["id"],
               output_index=0, arguments=item["arguments"])
        ev("response.output_item.done", output_index=0, item=item)
        ev("response.completed", response=dict(base, status="completed", output=[item],
                                               usage=usage_responses()))

    # -- Chat Completions (Qwen Code)
    def _chat(self, scenario, body, stream):
        model = body.get("model") or MODEL
        cid = new_id("chatcmpl-")
        created = int(time.time())
        side = side_request_answer("chat", body)
        step = ("text", side) if side else plan(scenario, "chat", body)
        if step[0] == "text":
            message = {"role": "assistant", "content": step[1]}
            finish = "stop"
        else:
            call = {"id": new_id("call_"), "type": "function",
                    "function": {"name": step[1], "arguments": json.dumps(step[2])}}
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        if not stream:
            return self._json(200, {
                "id": cid, "object": "chat.completion", "created": created,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish,
                             "logprobs": None}],
                "usage": usage_chat()})
        self._sse_start(chunked=scenario == "cut")

        def chunk(delta, finish_reason=None, **extra):
            obj = {"id": cid, "object": "chat.completion.chunk", "created": created,
                   "model": model,
                   "choices": [{"index": 0, "delta": delta,
                                "finish_reason": finish_reason, "logprobs": None}]}
            obj.update(extra)
            self._sse(obj)

        chunk({"role": "assistant", "content": ""})
        if scenario == "hang":
            time.sleep(HANG_SECONDS)
            return
        if scenario in STREAM_ERRORS:
            self._sse({"error": dict(STREAM_ERRORS[scenario], type="requests")})
            return
        if step[0] == "text":
            n = SLOW_PIECES if scenario in ("slow", "drop", "cut") else 4
            for i, piece in enumerate(split_pieces(step[1], n)):
                if scenario in ("drop", "cut") and i == 3:
                    if scenario == "cut":
                        self._cut()
                    return
                if scenario == "slow":
                    time.sleep(SLOW_INTERVAL)
                chunk({"content": piece})
        else:
            call = message["tool_calls"][0]
            chunk({"tool_calls": [{"index": 0, "id": call["id"], "type": "function",
                                   "function": {"name": call["function"]["name"],
                                                "arguments": ""}}]})
            chunk({"tool_calls": [{"index": 0, "function": {
                "arguments": call["function"]["arguments"]}}]})
        chunk({}, finish)
        # Final usage chunk, as OpenAI sends with stream_options.include_usage.
        self._sse({"id": cid, "object": "chat.completion.chunk", "created": created,
                   "model": model, "choices": [], "usage": usage_chat()})
        self._sse("[DONE]")


def main():
    global LOG_PATH
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--idle-exit", type=float, default=120.0)
    ap.add_argument("--log")
    args = ap.parse_args()
    LOG_PATH = args.log

    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    httpd.daemon_threads = True
    port = httpd.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    print("mock-openai listening on http://127.0.0.1:%d" % port, file=sys.stderr,
          flush=True)

    def watchdog():
        while True:
            time.sleep(0.5)
            with _lock:
                idle = time.monotonic() - _last_activity
                busy = _inflight > 0
            if not busy and idle >= args.idle_exit:
                httpd.shutdown()
                return

    threading.Thread(target=watchdog, daemon=True).start()
    try:
        httpd.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    httpd.server_close()


if __name__ == "__main__":
    main()
