#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Local mock of the Anthropic Messages API for recording AI coding-agent CLIs.

Python 3 standard library only. Binds 127.0.0.1 only, on an OS-chosen port.

    mock-anthropic.py [--port-file F] [--port N] [--idle-exit SECONDS] [--log F]
                      [--parent-pid PID] [--reset-epoch N] [--dump DIR]

The scenario is chosen by a URL path prefix: point the client at
    http://127.0.0.1:PORT/s/<scenario>
so its POST goes to /s/<scenario>/v1/messages.  A path without the /s/ prefix
is served as scenario "success".

Scenarios (see ../docs/claude.md and ../docs/opencode.md):
  success      text answer with a RALPH_STATUS block (STATUS: IN_PROGRESS)
  complete     same block with STATUS: COMPLETE / EXIT_SIGNAL: true
  401          authentication_error "invalid x-api-key"
  403          permission_error
  429          rate_limit_error + retry-after header
  529          overloaded_error
  503          api_error (Service Unavailable)
  500          api_error (Internal server error)
  credit       400 invalid_request_error "Your credit balance is too low ..."
  usage_limit  429 rate_limit_error + anthropic-ratelimit-unified-* headers,
               status "rejected", reset epoch (subscription usage limit)
  usage_warning  the success answer (streaming) with unified headers saying
               "allowed_warning" (92 % of the 5-hour limit used)
  tools        3 model turns: text + two parallel tool calls (Read README.md in
               the client's working directory, Bash "echo cbexec-tool-test"),
               then Bash "ls", then the final answer; usage figures every turn
  tools_loop   the SAME tool call (Bash "echo cbexec-loop") 6 turns in a row,
               then the final answer
  tools_page   productive paging: big.txt (2 000 lines) read 250 lines at a
               time, 8 turns (Read with offset and limit, or Bash sed -n
               'A,Bp' where the read tool takes no offset), then the answer
  tools_limit_mid  three different Bash calls (ls; echo step-2; wc -l
               README.md), then the subscription usage limit (as usage_limit)
  tools_loop_burst  ONE model turn with the same Bash call 3 times (opencode's
               doom-loop check looks at the last 3 tool parts of a message)
  tools_ask    one Bash call outside the usual read-only allow lists
               ("make test"; kilo asks permission for it, and `kilo run`
               rejects the request), then the final answer
  cut          the success answer starts streaming (chunked), then the
               connection closes before message_stop and before the body's
               last chunk: a stream cut mid-way (a non-streaming request is
               cut inside its body)
  slow         the success answer streamed as 11 SSE events 0.3 s apart (~3.3 s;
               non-streaming: one answer after 3 s)
  (refused and missing_key need no mock support: a closed port / no key.
   Any request without x-api-key or Authorization gets the real API's 401
   "x-api-key header is required"; one whose x-api-key is a placeholder a
   client sends when it has no key ("undefined", an unresolved
   "${{ secrets.NAME }}") gets 401 "invalid x-api-key".)

Exits by itself after --idle-exit seconds (default 120) without requests,
and when its parent process (or --parent-pid) dies.
"""
import argparse
import json
import os
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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
STATUS_COMPLETE = (STATUS_IN_PROGRESS.replace("STATUS: IN_PROGRESS", "STATUS: COMPLETE")
                   .replace("EXIT_SIGNAL: false", "EXIT_SIGNAL: true"))
ANSWER = "I added the login form and its tests; all tests pass.\n\n" + STATUS_IN_PROGRESS
ANSWER_COMPLETE = "All tasks are done; the login form is finished.\n\n" + STATUS_COMPLETE

# status, error type, message, extra headers
ERRORS = {
    "401": (401, "authentication_error", "invalid x-api-key", {}),
    "403": (403, "permission_error",
            "Your API key does not have permission to use the specified resource.", {}),
    "429": (429, "rate_limit_error",
            "This request would exceed the rate limit for your organization of 50 requests "
            "per minute. Please try again later.",
            {"retry-after": "2", "anthropic-ratelimit-requests-limit": "50",
             "anthropic-ratelimit-requests-remaining": "0"}),
    "529": (529, "overloaded_error", "Overloaded", {}),
    "503": (503, "api_error", "Service Unavailable", {}),
    "500": (500, "api_error", "Internal server error", {}),
    "credit": (400, "invalid_request_error",
               "Your credit balance is too low to access the Anthropic API. "
               "Please go to Plans & Billing to upgrade or purchase credits.", {}),
    # headers added per request (usage_limit_headers)
    "usage_limit": (429, "rate_limit_error",
                    "This request would exceed your account's rate limit. Please try again later.",
                    {}),
}

ARGS = None
LAST_REQUEST = [time.monotonic()]
COUNTER = [0]
LOCK = threading.Lock()


def usage_limit_headers():
    reset = ARGS.reset_epoch or (int(time.time()) // 60 + 150) * 60  # 2.5 h ahead, whole minute
    return {
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-reset": str(reset),
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
        "anthropic-ratelimit-unified-5h-status": "rejected",
        "anthropic-ratelimit-unified-5h-utilization": "1.0",
        "anthropic-ratelimit-unified-5h-reset": str(reset),
        "anthropic-ratelimit-unified-7d-status": "allowed",
        "anthropic-ratelimit-unified-7d-utilization": "0.42",
        "anthropic-ratelimit-unified-7d-reset": str(reset + 4 * 86400),
        "anthropic-ratelimit-unified-fallback-percentage": "0.5",
        "anthropic-ratelimit-unified-overage-status": "rejected",
        "anthropic-ratelimit-unified-overage-disabled-reason": "org_level_disabled",
    }


def usage_warning_headers():
    """A successful answer that carries 'approaching your limit' headers."""
    reset = ARGS.reset_epoch or (int(time.time()) // 60 + 150) * 60
    return {
        "anthropic-ratelimit-unified-status": "allowed_warning",
        "anthropic-ratelimit-unified-reset": str(reset),
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
        "anthropic-ratelimit-unified-5h-status": "allowed_warning",
        "anthropic-ratelimit-unified-5h-utilization": "0.92",
        "anthropic-ratelimit-unified-5h-reset": str(reset),
        "anthropic-ratelimit-unified-5h-surpassed-threshold": "0.9",
        "anthropic-ratelimit-unified-7d-status": "allowed",
        "anthropic-ratelimit-unified-7d-utilization": "0.42",
        "anthropic-ratelimit-unified-7d-reset": str(reset + 4 * 86400),
    }


# ---------------------------------------------------------------- model turns
def find_tool(req, *names):
    """(name, schema properties) of the first advertised tool matching one of names."""
    for n in names:
        for t in req.get("tools") or []:
            if t.get("name", "").lower() == n.lower():
                return t["name"], (t.get("input_schema") or {}).get("properties") or {}
    return None, {}


def n_assistant_turns(req):
    return sum(1 for m in req.get("messages") or [] if m.get("role") == "assistant")


def workdir(req):
    """The client's working directory, as its prompt states it (else '.')."""
    m = re.search(r"(?:[Ww]orking directory|cwd): *(/[^\s\"\\<]+)", json.dumps(req))
    return m.group(1) if m else "."


def bash_call(req, i, command):
    name, props = find_tool(req, "Bash", "run_commands")
    if not name:
        return None
    # Cline's shell tool runs a list of commands
    if "commands" in props and "command" not in props:
        return {"type": "tool_use", "id": "toolu_mock_%02d" % i, "name": name,
                "input": {"commands": [command]}}
    return {"type": "tool_use", "id": "toolu_mock_%02d" % i, "name": name,
            "input": {"command": command, "description": "Print a marker"}}


def read_call(req, i, fname):
    name, props = find_tool(req, "Read")
    if not name:
        return None
    key = next((k for k in ("filePath", "filepath", "path") if k in props), "file_path")
    return {"type": "tool_use", "id": "toolu_mock_%02d" % i, "name": name,
            "input": {key: workdir(req) + "/" + fname}}


PAGE_CALLS = 8
MID_COMMANDS = ["ls", "echo step-2", "wc -l README.md"]


def page_call(req, i, page):
    """Page `page` of big.txt: the read tool with offset and limit when it
    takes them, else the shell."""
    name, props = find_tool(req, "Read")
    if name and "offset" in props:
        key = next((k for k in ("filePath", "filepath", "path") if k in props), "file_path")
        return {"type": "tool_use", "id": "toolu_mock_%02d" % i, "name": name,
                "input": {key: workdir(req) + "/big.txt", "offset": 250 * page + 1,
                          "limit": 250}}
    return bash_call(req, i, "sed -n '%d,%dp' big.txt" % (250 * page + 1, 250 * (page + 1)))


def plan_reply(scenario, req):
    """Return (content_blocks, stop_reason, usage) for a successful turn.

    The turn number is the count of assistant messages already in the history
    (clients resend the whole conversation).  Tool names and argument names are
    taken from the request's own tool list, so this works for any client.
    """
    turn = n_assistant_turns(req)
    has_tools = bool(req.get("tools"))
    usage = {"input_tokens": 1200 + 100 * turn, "cache_creation_input_tokens": 300,
             "cache_read_input_tokens": 5000 + 1000 * turn, "output_tokens": 150 + 10 * turn}
    text = ANSWER_COMPLETE if scenario == "complete" else ANSWER
    if not has_tools and scenario.startswith("tools"):
        # side request (title, summary, ...) in a tool scenario: answer briefly
        return [{"type": "text", "text": "Login form work"}], "end_turn", usage
    if scenario == "tools" and has_tools:
        if turn == 0:  # text + two tool calls in parallel
            calls = [c for c in (read_call(req, 1, "README.md"),
                                 bash_call(req, 2, "echo cbexec-tool-test")) if c]
            if calls:
                return ([{"type": "text", "text": "Let me look at the project first."}]
                        + calls, "tool_use", usage)
        if turn == 1:
            c = bash_call(req, 3, "ls")
            if c:
                return [c], "tool_use", usage
    if scenario == "tools_loop_burst" and has_tools and turn == 0:
        calls = [bash_call(req, 20 + k, "echo cbexec-loop") for k in range(3)]
        if calls[0]:
            return calls, "tool_use", usage
    if scenario == "tools_ask" and has_tools and turn == 0:
        c = bash_call(req, 30, "make test")
        if c:
            return [c], "tool_use", usage
    if scenario == "tools_page" and has_tools and turn < PAGE_CALLS:
        c = page_call(req, 40 + turn, turn)
        if c:
            return [c], "tool_use", usage
    if scenario == "tools_limit_mid" and has_tools and turn < len(MID_COMMANDS):
        c = bash_call(req, 50 + turn, MID_COMMANDS[turn])
        if c:
            return [c], "tool_use", usage
    if scenario == "tools_loop" and has_tools and turn < 6:
        c = bash_call(req, 10 + turn, "echo cbexec-loop")
        if c:
            return [c], "tool_use", usage
    return [{"type": "text", "text": text}], "end_turn", usage


def placeholder_key(key):
    """A key a client sends when it has none: Continue's cn sends the literal
    "undefined", or its config's unresolved "${{ secrets.NAME }}".  The real
    API rejects them like any wrong key (401 "invalid x-api-key")."""
    return bool(key) and (key == "undefined" or "${{" in key)


# ---------------------------------------------------------------- HTTP
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-anthropic/1"

    def log_message(self, fmt, *a):  # silence default stderr logging
        pass

    def _log(self, **kw):
        if ARGS.log:
            kw["t"] = round(time.time(), 3)
            with LOCK, open(ARGS.log, "a") as f:
                f.write(json.dumps(kw) + "\n")

    def _split(self):
        path = self.path.split("?", 1)[0]
        if path.startswith("/s/"):
            rest = path[3:]
            scen, _, sub = rest.partition("/")
            return scen, "/" + sub
        return "success", path

    def _send(self, code, body, ctype="application/json", headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", self._rid)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("content-encoding") == "gzip":
            import gzip
            raw = gzip.decompress(raw)
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            return {}

    def _common(self):
        LAST_REQUEST[0] = time.monotonic()
        with LOCK:
            COUNTER[0] += 1
            self._rid = "req_mock_%06d" % COUNTER[0]

    def do_HEAD(self):
        self._common()
        self._log(method="HEAD", path=self.path)
        self._send(200, b"", "text/plain")

    def do_GET(self):
        self._common()
        scen, sub = self._split()
        self._log(method="GET", path=self.path, ua=self.headers.get("user-agent"))
        if sub.startswith("/v1/models"):
            models = ["claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805",
                      "claude-haiku-4-5-20251001"]
            data = [{"type": "model", "id": m, "display_name": m,
                     "created_at": "2025-01-01T00:00:00Z"} for m in models]
            return self._send(200, {"data": data, "has_more": False,
                                    "first_id": models[0], "last_id": models[-1]})
        if sub.startswith("/api/"):
            return self._send(200, {})
        return self._send(404, {"type": "error", "error": {"type": "not_found_error",
                                                          "message": "Not found"}})

    def do_POST(self):
        self._common()
        scen, sub = self._split()
        req = self._body()
        if ARGS.dump:
            with open(os.path.join(ARGS.dump, "%s.json" % self._rid), "w") as f:
                json.dump({"path": self.path, "headers": dict(self.headers), "body": req}, f,
                          indent=1)
        self._log(method="POST", path=self.path, scenario=scen,
                  stream=bool(req.get("stream")), model=req.get("model"),
                  n_messages=len(req.get("messages") or []),
                  tools=[t.get("name") for t in req.get("tools") or []][:80],
                  has_key=bool(self.headers.get("x-api-key")),
                  has_auth=bool(self.headers.get("authorization")),
                  ua=self.headers.get("user-agent"),
                  beta=self.headers.get("anthropic-beta"))
        if not sub.startswith("/v1/messages"):
            if sub.startswith("/api/"):
                return self._send(200, {})
            return self._send(404, {"type": "error", "error": {"type": "not_found_error",
                                                              "message": "Not found"}})
        if not (self.headers.get("x-api-key") or self.headers.get("authorization")):
            return self._error(401, "authentication_error", "x-api-key header is required")
        if placeholder_key(self.headers.get("x-api-key")):
            return self._error(401, "authentication_error", "invalid x-api-key")
        if (scen == "tools_limit_mid" and req.get("tools")
                and n_assistant_turns(req) >= len(MID_COMMANDS)):
            scen = "usage_limit"
        if scen in ERRORS:
            code, etype, msg, hdrs = ERRORS[scen]
            if scen == "usage_limit":
                hdrs = usage_limit_headers()
            return self._error(code, etype, msg, hdrs)
        if sub.startswith("/v1/messages/count_tokens"):
            return self._send(200, {"input_tokens": 1234})
        blocks, stop, usage = plan_reply(scen, req)
        if req.get("stream"):
            try:
                return self._stream(scen, req, blocks, stop, usage)
            except (BrokenPipeError, ConnectionResetError):
                return None  # the client went away mid-stream
        if scen == "slow":
            time.sleep(3)
        if scen == "cut":
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "4096")
            self.end_headers()
            self.wfile.write(b'{"id":"msg_mock_drop","type":"message",')
            self.wfile.flush()
            self.close_connection = True
            return None
        msg = self._message(req, blocks, stop, usage)
        self._send(200, msg)

    def _error(self, code, etype, msg, hdrs=None):
        self._send(code, {"type": "error", "error": {"type": etype, "message": msg}},
                   headers=hdrs)

    def _message(self, req, blocks, stop, usage):
        return {"id": "msg_mock_%s" % self._rid[9:], "type": "message", "role": "assistant",
                "model": req.get("model") or "claude-sonnet-4-5", "content": blocks,
                "stop_reason": stop, "stop_sequence": None, "usage": usage}

    def _stream(self, scen, req, blocks, stop, usage):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", self._rid)
        # cut: chunked, as a proxy or the API sends it, so that the cut
        # leaves a body without its last chunk (not a clean end)
        if scen == "cut":
            self.send_header("transfer-encoding", "chunked")
        else:
            self.send_header("connection", "close")
        for k, v in (usage_warning_headers() if scen == "usage_warning" else {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.close_connection = True
        pause = 0.3 if scen == "slow" else 0.0

        def ev(name, data):
            b = ("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode()
            if scen == "cut":
                b = b"%x\r\n%s\r\n" % (len(b), b)
            self.wfile.write(b)
            self.wfile.flush()
            LAST_REQUEST[0] = time.monotonic()
            if pause:
                time.sleep(pause)

        start = self._message(req, [], None, dict(usage, output_tokens=1))
        ev("message_start", {"type": "message_start", "message": start})
        ev("ping", {"type": "ping"})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                ev("content_block_start", {"type": "content_block_start", "index": i,
                                           "content_block": {"type": "text", "text": ""}})
                text = b["text"]
                n = 5 if scen == "slow" else 3
                step = max(1, -(-len(text) // n))
                for j in range(0, len(text), step):
                    if scen == "cut" and j >= step:
                        # close the connection mid-stream
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                               "delta": {"type": "text_delta",
                                                         "text": text[j:j + step]}})
            else:
                ev("content_block_start", {"type": "content_block_start", "index": i,
                                           "content_block": dict(b, input={})})
                ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                           "delta": {"type": "input_json_delta",
                                                     "partial_json": json.dumps(b["input"])}})
            ev("content_block_stop", {"type": "content_block_stop", "index": i})
        ev("message_delta", {"type": "message_delta",
                             "delta": {"stop_reason": stop, "stop_sequence": None},
                             "usage": {"output_tokens": usage["output_tokens"]}})
        ev("message_stop", {"type": "message_stop"})


def watchdog(idle, ppid):
    while True:
        time.sleep(0.5)
        if time.monotonic() - LAST_REQUEST[0] > idle:
            os._exit(0)
        if ppid > 1:
            try:
                os.kill(ppid, 0)  # parent still there?
            except ProcessLookupError:
                os._exit(0)
            except PermissionError:
                pass


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port-file", help="write the chosen port here")
    ap.add_argument("--port", type=int, default=0,
                    help="port to bind (default 0: the OS chooses; a busy port falls back to 0)")
    ap.add_argument("--idle-exit", type=float, default=120.0,
                    help="exit after this many seconds without requests (default 120)")
    ap.add_argument("--log", help="append one JSON line per request to this file")
    ap.add_argument("--parent-pid", type=int, default=-1,
                    help="exit when this process dies (default: the parent; 0: never)")
    ap.add_argument("--dump", help="save every POST (headers+body) as DIR/<request-id>.json")
    ap.add_argument("--reset-epoch", type=int, default=0,
                    help="usage_limit reset time (epoch s); default: 2.5 h ahead")
    ARGS = ap.parse_args()
    try:
        srv = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    except OSError:
        srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    if ARGS.port_file:
        tmp = ARGS.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, ARGS.port_file)
    else:
        print(port, flush=True)
    threading.Thread(target=watchdog, args=(ARGS.idle_exit, os.getppid() if ARGS.parent_pid < 0 else ARGS.parent_pid),
                     daemon=True).start()
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
