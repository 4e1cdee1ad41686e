#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Local mock of the Gemini API (generativelanguage v1beta) for cbexec fixtures.

Standard library only.  Binds 127.0.0.1 on an ephemeral port, writes the port
to --port-file, and exits by itself after --idle-exit seconds without requests.

The scenario is chosen by a URL path prefix, so point the client at
    GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT/s/<scenario>
(an optional "+tag" after the scenario, /s/429+run7, only labels the log lines)
and its requests arrive as
    POST /s/<scenario>/v1beta/models/<model>:streamGenerateContent?alt=sse
    POST /s/<scenario>/v1beta/models/<model>:generateContent
    POST /s/<scenario>/v1beta/models/<model>:countTokens
    POST /s/<scenario>/v1beta/models/<model>:embedContent / :batchEmbedContents
    GET  /s/<scenario>/v1beta/models[/<model>]

Scenarios (see SCENARIOS below / --list):
  success complete tools tool_loop slow          -> 200 answers
  tools_page       productive paging: read_file of big.txt (2 000 lines),
                   250 lines at a time (offset, limit) 8 times, then the answer
  tools_limit_mid  three different shell calls, then the daily quota (as
                   quota_daily)
  cut              the answer streams, then the connection closes before its
                   last chunk (a stream cut mid-way)
  400 401 403 429 429_bare quota_daily credit credit_g1
  503 503_overloaded 500                         -> Google-style error bodies
  capacity         429: the Code Assist quota, "You have exhausted your
                   capacity on this model. Your quota will reset after
                   2h52m39s." (QUOTA_EXHAUSTED, RetryInfo 10359s)
  key_expired      400: "API key expired. Please renew the API key."
  (refused = a closed port, missing_key = no key: handled by the caller)

Every request is appended as one JSON line to --log FILE (if given):
  {"t":..., "scenario":..., "method":..., "path":..., "rpc":..., "model":...,
   "status":..., "api_key":..., "kind": "chat"|"utility"|...}
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
from urllib.parse import urlsplit, parse_qs

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
SUCCESS_TEXT = "Implemented the login form validation and its tests.\n\n" + STATUS_IN_PROGRESS
COMPLETE_TEXT = "All tasks in the plan are done.\n\n" + STATUS_COMPLETE
TOOLS_TEXT = "The command printed `hi`.\n\n" + STATUS_IN_PROGRESS

# Split points chosen so that chunks cut through lines, like the real API.
def split_text(text, sizes=(11, 17, 9, 23, 14, 19, 8, 26, 13)):
    out, i, k = [], 0, 0
    while i < len(text):
        n = sizes[k % len(sizes)]
        out.append(text[i:i + n])
        i += n
        k += 1
    return out

# ---------------------------------------------------------------- errors ---
HELP_RATE = {"@type": "type.googleapis.com/google.rpc.Help",
             "links": [{"description": "Learn more about Gemini API quotas",
                        "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]}

def err_body(code, status, message, details=None):
    e = {"code": code, "message": message, "status": status}
    if details is not None:
        e["details"] = details
    return {"error": e}

def quota_429(model, per):
    """per = 'minute' or 'day' (Gemini API free tier wording)."""
    if per == "minute":
        metric = "generativelanguage.googleapis.com/generate_content_free_tier_requests"
        qid = "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
        limit, delay = "10", "12s"
        retry_text = "Please retry in 12.345678901s."
    else:
        metric = "generativelanguage.googleapis.com/generate_content_free_tier_requests"
        qid = "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
        limit, delay = "250", "37s"
        retry_text = "Please retry in 37.123456789s."
    msg = ("You exceeded your current quota, please check your plan and billing details. "
           "For more information on this error, head to: "
           "https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, "
           "head to: https://ai.dev/usage?tab=rate-limit. \n"
           "* Quota exceeded for metric: %s, limit: %s, model: %s\n%s" % (metric, limit, model, retry_text))
    return err_body(429, "RESOURCE_EXHAUSTED", msg, [
        HELP_RATE,
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
         "violations": [{"quotaMetric": metric, "quotaId": qid,
                         "quotaDimensions": {"location": "global", "model": model},
                         "quotaValue": limit}]},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay},
    ])

def error_for(scenario, model):
    """Return (http_status, body) for an error scenario, or None."""
    if scenario == "400":
        return 400, err_body(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
             "domain": "googleapis.com",
             "metadata": {"service": "generativelanguage.googleapis.com"}},
            {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
             "message": "API key not valid. Please pass a valid API key."}])
    if scenario == "key_expired":
        return 400, err_body(400, "INVALID_ARGUMENT", "API key expired. Please renew the API key.", [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
             "domain": "googleapis.com",
             "metadata": {"service": "generativelanguage.googleapis.com"}},
            {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
             "message": "API key expired. Please renew the API key."}])
    if scenario == "capacity":
        # The Code Assist backend's per-user quota (gemini-cli's
        # googleQuotaErrors.test.ts has the same body with other times).
        return 429, err_body(429, "RESOURCE_EXHAUSTED",
            "You have exhausted your capacity on this model. Your quota will reset after 2h52m39s.", [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "QUOTA_EXHAUSTED",
             "domain": "cloudcode-pa.googleapis.com",
             "metadata": {"uiMessage": "true", "model": model}},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "10359s"}])
    if scenario == "401":
        return 401, err_body(401, "UNAUTHENTICATED",
            "Request had invalid authentication credentials. Expected OAuth 2 access token, "
            "login cookie or other valid authentication credential. See "
            "https://developers.google.com/identity/sign-in/web/devconsole-project.", [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "ACCESS_TOKEN_TYPE_UNSUPPORTED",
             "metadata": {"service": "generativelanguage.googleapis.com",
                          "method": "google.ai.generativelanguage.v1beta.GenerativeService.StreamGenerateContent"}}])
    if scenario == "403":
        return 403, err_body(403, "PERMISSION_DENIED",
            "Generative Language API has not been used in project 123456789012 before or it is "
            "disabled. Enable it by visiting https://console.developers.google.com/apis/api/"
            "generativelanguage.googleapis.com/overview?project=123456789012 then retry. If you "
            "enabled this API recently, wait a few minutes for the action to propagate to our "
            "systems and retry.", [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "SERVICE_DISABLED",
             "domain": "googleapis.com",
             "metadata": {"consumer": "projects/123456789012",
                          "service": "generativelanguage.googleapis.com"}}])
    if scenario == "429":
        return 429, quota_429(model, "minute")
    if scenario == "quota_daily":
        return 429, quota_429(model, "day")
    if scenario == "credit":
        # Gemini API prepay billing with a zero balance (wording as reported by
        # users since the 2026 prepay/postpay plans): 429, no details at all.
        return 429, err_body(429, "RESOURCE_EXHAUSTED",
            "Your prepayment credits are depleted. Please go to AI Studio at "
            "https://ai.studio/projects to manage your project and billing.")
    if scenario == "credit_g1":
        # Google One AI credits (login-with-Google / Code Assist backend); the
        # only reason the CLI classifies as a credit problem.
        return 429, err_body(429, "RESOURCE_EXHAUSTED",
            "You have insufficient AI credits to complete this request.", [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "INSUFFICIENT_G1_CREDITS_BALANCE",
             "domain": "cloudcode-pa.googleapis.com", "metadata": {}}])
    if scenario == "429_bare":
        # paid tier / shared capacity: no QuotaFailure, no RetryInfo
        return 429, err_body(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")
    if scenario == "503":
        return 503, err_body(503, "UNAVAILABLE",
            "This model is currently experiencing high demand. Spikes in demand are usually "
            "temporary. Please try again later.")
    if scenario == "503_overloaded":
        return 503, err_body(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
    if scenario == "500":
        return 500, err_body(500, "INTERNAL",
            "An internal error has occurred. Please retry or report in "
            "https://developers.generativeai.google/guide/troubleshooting")
    return None

ERROR_SCENARIOS = ["400", "401", "403", "429", "429_bare", "quota_daily", "credit", "credit_g1",
                   "503", "503_overloaded", "500", "capacity", "key_expired"]
OK_SCENARIOS = ["success", "complete", "tools", "tool_loop", "slow", "cut",
                "tools_page", "tools_limit_mid"]
PAGE_CALLS = 8
MID_COMMANDS = ["ls", "echo step-2", "wc -l README.md"]
SCENARIOS = OK_SCENARIOS + ERROR_SCENARIOS

# ---------------------------------------------------------------- bodies ---
def usage(prompt, cand, thoughts=0, cached=0):
    u = {"promptTokenCount": prompt, "totalTokenCount": prompt + cand + thoughts,
         "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}]}
    if cand:
        u["candidatesTokenCount"] = cand
    if thoughts:
        u["thoughtsTokenCount"] = thoughts
    if cached:
        u["cachedContentTokenCount"] = cached
    return u

def chunk(model, parts, resp_id, finish=None, use=None):
    cand = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    d = {"candidates": [cand], "modelVersion": model, "responseId": resp_id}
    if use:
        d["usageMetadata"] = use
    return d

def count_function_responses(req):
    n = 0
    for c in req.get("contents", []) or []:
        for p in c.get("parts", []) or []:
            if isinstance(p, dict) and "functionResponse" in p:
                n += 1
    return n

def chat_plan(scenario, model, req):
    """Return list of (delay_seconds, chunk_dict) for a chat turn."""
    rid = "mock-%s-%d" % (scenario, int(time.time() * 1000) % 10**8)
    prompt_tokens = 8000 + 50 * len(req.get("contents", []) or [])
    if scenario in ("success", "complete", "slow", "cut"):
        text = COMPLETE_TEXT if scenario == "complete" else SUCCESS_TEXT
        pieces = split_text(text)
        if scenario == "slow":
            # ~10 chunks, one every 0.3 s -> about 3 s of streaming
            pieces = split_text(text, sizes=(len(text) // 10 + 1,))
        plan = []
        # a thought part first (Gemini 2.5/3 with includeThoughts): not printed by the CLI
        plan.append((0.0, chunk(model, [{"text": "**Writing the status block**\n\nI will report progress.",
                                         "thought": True}], rid, use=usage(prompt_tokens, 0))))
        for i, p in enumerate(pieces):
            last = i == len(pieces) - 1
            use = usage(prompt_tokens, 61, thoughts=37, cached=0) if last else usage(prompt_tokens, 0)
            plan.append((0.3 if scenario == "slow" else 0.02,
                         chunk(model, [{"text": p}], rid, finish="STOP" if last else None, use=use)))
        return plan
    if scenario in ("tools", "tool_loop", "tools_page", "tools_limit_mid"):
        done = count_function_responses(req)
        wanted = {"tools": 1, "tool_loop": 6, "tools_page": PAGE_CALLS,
                  "tools_limit_mid": len(MID_COMMANDS)}[scenario]
        if done < wanted:
            if scenario == "tools":
                call = {"name": "run_shell_command",
                        "args": {"command": "echo hi", "description": "Print hi"}}
            elif scenario == "tools_page":
                call = {"name": "read_file", "args": {"file_path": "big.txt",
                                                      "offset": 250 * done, "limit": 250}}
            elif scenario == "tools_limit_mid":
                call = {"name": "run_shell_command",
                        "args": {"command": MID_COMMANDS[done], "description": "Run a step"}}
            else:
                call = {"name": "read_file", "args": {"file_path": "README.md"}}
            pre = [] if done else [(0.0, chunk(model, [{"text": "Let me check."}], rid,
                                                use=usage(prompt_tokens, 0)))]
            return pre + [(0.02, chunk(model, [{"functionCall": call,
                                                 "thoughtSignature": "bW9jay1zaWduYXR1cmU="}], rid,
                                        finish="STOP", use=usage(prompt_tokens, 24, thoughts=12)))]
        pieces = split_text(TOOLS_TEXT)
        plan = []
        for i, p in enumerate(pieces):
            last = i == len(pieces) - 1
            plan.append((0.02, chunk(model, [{"text": p}], rid, finish="STOP" if last else None,
                                     use=usage(prompt_tokens, 58, thoughts=20) if last else usage(prompt_tokens, 0))))
        return plan
    return [(0.0, chunk(model, [{"text": "OK"}], rid, finish="STOP", use=usage(prompt_tokens, 1)))]

def fill_schema(schema):
    """Produce a minimal JSON value matching a (JSON/OpenAPI) schema."""
    if not isinstance(schema, dict):
        return None
    t = schema.get("type")
    if isinstance(t, str):
        t = t.lower()
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if t == "object" or "properties" in schema:
        out = {}
        for k, v in (schema.get("properties") or {}).items():
            if k == "next_speaker":
                out[k] = "user"
            elif k == "model_choice":
                out[k] = "flash"
            elif k == "complexity_score":
                out[k] = 75   # numerical router (Gemini 3): >threshold keeps the Pro model
            else:
                out[k] = fill_schema(v)
        return out
    if t == "array":
        return []
    if t in ("integer", "number"):
        return schema.get("minimum", 0)
    if t == "boolean":
        return False
    return "mock"

def utility_response(model, req):
    gc = req.get("generationConfig") or req.get("generation_config") or {}
    schema = gc.get("responseJsonSchema") or gc.get("responseSchema")
    if schema is not None:
        text = json.dumps(fill_schema(schema))
    else:
        text = "OK"
    return chunk(model, [{"text": text}], "mock-utility", finish="STOP", use=usage(100, 5))

# --------------------------------------------------------------- server ---
PATH_RE = re.compile(r"^/s/(?P<scenario>[^/]+)(?P<rest>/.*)$")
RPC_RE = re.compile(r"^/(?P<ver>v1(?:alpha|beta)?)/models/(?P<model>[^/:]+):(?P<rpc>[A-Za-z]+)$")


class State:
    last_request = time.time()
    log_path = None
    lock = threading.Lock()


def log(entry):
    if not State.log_path:
        return
    entry["t"] = round(time.time(), 3)
    with State.lock:
        with open(State.log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-gemini/1"

    def log_message(self, fmt, *args):  # silence default stderr logging
        pass

    def _send_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {}

    def do_GET(self):
        State.last_request = time.time()
        u = urlsplit(self.path)
        m = PATH_RE.match(u.path)
        scenario = m.group("scenario") if m else None
        log({"scenario": scenario, "method": "GET", "path": self.path})
        rest = m.group("rest") if m else u.path
        if re.match(r"^/v1(alpha|beta)?/models/?$", rest):
            return self._send_json(200, {"models": [
                {"name": "models/" + n, "displayName": n,
                 "supportedGenerationMethods": ["generateContent", "countTokens"]}
                for n in ("gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite")]})
        mm = re.match(r"^/v1(alpha|beta)?/models/([^/:]+)$", rest)
        if mm:
            return self._send_json(200, {"name": "models/" + mm.group(2),
                                         "inputTokenLimit": 1048576, "outputTokenLimit": 65536})
        return self._send_json(404, err_body(404, "NOT_FOUND", "Mock: unknown path %s" % u.path))

    def do_POST(self):
        State.last_request = time.time()
        u = urlsplit(self.path)
        qs = parse_qs(u.query)
        body = self._read_body()
        m = PATH_RE.match(u.path)
        if not m:
            log({"scenario": None, "method": "POST", "path": self.path, "status": 404})
            return self._send_json(404, err_body(404, "NOT_FOUND", "Mock: no /s/<scenario> prefix"))
        tagged, rest = m.group("scenario"), m.group("rest")
        scenario = tagged.split("+", 1)[0]   # "/s/429+run7/..." -> scenario 429, tag kept in the log
        r = RPC_RE.match(rest)
        if not r:
            log({"scenario": tagged, "method": "POST", "path": self.path, "status": 404})
            return self._send_json(404, err_body(404, "NOT_FOUND", "Mock: unknown path %s" % rest))
        model, rpc = r.group("model"), r.group("rpc")
        is_chat = bool(body.get("tools"))  # the main agent turn carries tool declarations
        entry = {"scenario": tagged, "method": "POST", "path": self.path, "rpc": rpc,
                 "model": model, "api_key": self.headers.get("x-goog-api-key"),
                 "user_agent": self.headers.get("User-Agent"),
                 "kind": "chat" if is_chat else "utility",
                 "contents": len(body.get("contents", []) or []),
                 "function_responses": count_function_responses(body)}

        if scenario not in SCENARIOS:
            entry["status"] = 404
            log(entry)
            return self._send_json(404, err_body(404, "NOT_FOUND", "Mock: unknown scenario %s" % scenario))

        err = error_for(scenario, model)
        if (scenario == "tools_limit_mid" and is_chat
                and count_function_responses(body) >= len(MID_COMMANDS)):
            err = error_for("quota_daily", model)
        if err and rpc in ("generateContent", "streamGenerateContent", "countTokens"):
            entry["status"] = err[0]
            log(entry)
            return self._send_json(err[0], err[1])

        if rpc == "countTokens":
            n = sum(len(json.dumps(c)) // 4 for c in (body.get("contents") or []))
            entry["status"] = 200
            log(entry)
            return self._send_json(200, {"totalTokens": n})
        if rpc in ("embedContent", "batchEmbedContents"):
            entry["status"] = 200
            log(entry)
            emb = {"values": [0.0] * 8}
            if rpc == "embedContent":
                return self._send_json(200, {"embedding": emb})
            return self._send_json(200, {"embeddings": [emb for _ in body.get("requests", [])]})

        if rpc == "streamGenerateContent":
            plan = chat_plan(scenario, model, body) if is_chat else [(0.0, utility_response(model, body))]
            entry["status"] = 200
            entry["chunks"] = len(plan)
            log(entry)
            sse = qs.get("alt", [""])[0] == "sse"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream" if sse else "application/json; charset=UTF-8")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                if not sse:
                    self._write_chunk(b"[")
                for i, (delay, c) in enumerate(plan):
                    if scenario == "cut" and i == 3:
                        # close the connection mid-stream, no last chunk
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    if delay:
                        time.sleep(delay)
                    if sse:
                        self._write_chunk(b"data: " + json.dumps(c).encode() + b"\r\n\r\n")
                    else:
                        self._write_chunk((b"," if i else b"") + json.dumps(c).encode())
                if not sse:
                    self._write_chunk(b"]")
                self._write_chunk(b"")
            except (BrokenPipeError, ConnectionResetError):
                pass
            return

        if rpc == "generateContent":
            if is_chat:
                # non-streaming chat turn: concatenate the planned chunks
                plan = chat_plan(scenario, model, body)
                parts, use = [], None
                for _, c in plan:
                    for p in c["candidates"][0]["content"]["parts"]:
                        if "text" in p and parts and "text" in parts[-1] and \
                                bool(p.get("thought")) == bool(parts[-1].get("thought")):
                            parts[-1] = dict(parts[-1], text=parts[-1]["text"] + p["text"])
                        else:
                            parts.append(dict(p))
                    use = c.get("usageMetadata") or use
                resp = chunk(model, parts, "mock-%s" % scenario, finish="STOP", use=use)
            else:
                resp = utility_response(model, body)
            entry["status"] = 200
            log(entry)
            return self._send_json(200, resp)

        entry["status"] = 404
        log(entry)
        return self._send_json(404, err_body(404, "NOT_FOUND", "Mock: unsupported method %s" % rpc))

    def _write_chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port-file", help="write the bound port number to this file")
    ap.add_argument("--idle-exit", type=float, default=120.0,
                    help="exit after this many seconds without requests (default 120)")
    ap.add_argument("--log", help="append one JSON line per request to this file")
    ap.add_argument("--list", action="store_true", help="print the scenario names and exit")
    a = ap.parse_args()
    if a.list:
        print("\n".join(SCENARIOS))
        return 0
    State.log_path = a.log
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, a.port_file)
    else:
        print(port, flush=True)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    t.start()
    try:
        while time.time() - State.last_request < a.idle_exit:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    srv.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
