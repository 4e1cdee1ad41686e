#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Write t/corpus/hand/streams/: agent sessions in each client's stream
format, on both sides of the loop rule (SPEC §10).

    python3 t/corpus/streams.py        (rewrites the directory)

Each session is a list of tool calls with their results; each client's
writer puts them in the shape that client's recordings have (the
t/corpus/recorded/ files named in each case's source line): Claude Code
and Qwen Code stream-json (tool_use and tool_result blocks), Codex exec
--json (command_execution items), Gemini CLI stream-json (tool_use and
tool_result events), opencode run --format json (tool parts).
"""
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "hand", "streams")
STATUS = ("I did the work.\n\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\n"
          "TASKS_COMPLETED_THIS_LOOP: 1\nFILES_MODIFIED: 1\n"
          "EXIT_SIGNAL: false\n---END_RALPH_STATUS---")


def page(i, start, n=2000):
    return "".join("%d\tline %d of big.txt\n" % (k, k)
                   for k in range(start, start + 3)) + "...(%d lines)" % n


# A session: (name, side, class, type, note, turns, end) where turns is a
# list of turns, each a list of calls (tool, input, result, is_error):
# calls in one turn are one message's parallel calls.  end: "ok" (a
# final answer), or "max_turns" (Claude's error_max_turns).
def sessions():
    s = []
    s.append(("paging", "clean", "success", None,
              "reads one 12 000-line file page by page: the same tool and "
              "file, another offset each time",
              [[("read", {"file_path": "/w/big.txt", "offset": o,
                          "limit": 2000}, page(o, o), False)]
               for o in range(1, 12001, 2000)], "ok"))
    s.append(("parallel-reads", "clean", "success", None,
              "five reads of test_1.py ... test_5.py in one message",
              [[("read", {"file_path": "/w/tests/test_%d.py" % k},
                 "def test_%d():\n    assert step(%d)\n" % (k, k), False)
                for k in range(1, 6)]], "ok"))
    s.append(("ls-steps", "clean", "success", None,
              "ls step1 ... ls step12",
              [[("shell", {"command": "ls step%d" % k},
                 "input.txt\noutput_%d.txt\n" % k, False)]
               for k in range(1, 13)], "ok"))
    s.append(("poll-log", "clean", "success", None,
              "the same tail of a build log, six times, while it changes",
              [[("shell", {"command": "tail -n 3 build.log"},
                 "[%d/6] compiling module %d\n" % (k, k), False)]
               for k in range(1, 7)], "ok"))
    turns = []
    for k in range(1, 5):
        turns.append([("edit", {"file_path": "/w/src/cart.js",
                                "old_string": "total %d" % k,
                                "new_string": "total %d" % (k + 1)},
                       "The file /w/src/cart.js has been updated.", False)])
        turns.append([("shell", {"command": "npm test"},
                       "Tests: %d failed, %d passed" % (4 - k, 20 + k)
                       if k < 4 else "Tests: 24 passed", k < 4)])
    s.append(("edit-test", "clean", "success", None,
              "edit, run the tests, edit again: fewer failures each time",
              turns, "ok"))
    s.append(("same-command-dirs", "clean", "success", None,
              "the same make in five different directories",
              [[("shell", {"command": "make -C pkg/%s test" % d},
                 "ok  pkg/%s\n" % d, False)]
               for d in ("auth", "cart", "orders", "users", "search")],
              "ok"))
    s.append(("tool-output-words", "clean", "recoverable", None,
              "tool results that quote a provider's errors (a grep of the "
              "project's own tests), then an ordinary failure",
              [[("shell", {"command": "grep -rn 'x-api-key' test/"},
                 "test/auth.test.js:12:  // 401 invalid x-api-key\n"
                 "test/billing.test.js:4: 'Your credit balance is too low "
                 "to access the Anthropic API'\n"
                 "test/limits.test.js:9: 'Claude usage limit reached|"
                 "1795400000'\n", False)],
               [("read", {"file_path": "/w/test/auth.test.js"},
                 "expect(res.status).toBe(401) // authentication_error\n",
                 False)]], "max_turns"))
    s.append(("loop-same-result", "catch", "recoverable", "loop",
              "the identical call with the identical result, six times",
              [[("shell", {"command": "cat config.yml"},
                 "port: 8080\nhost: localhost\n", False)]
               for _ in range(6)], "ok"))
    s.append(("loop-same-error", "catch", "recoverable", "loop",
              "the identical failing command with the identical error",
              [[("shell", {"command": "npm run build"},
                 "Error: Cannot resolve './routes' in /w/src\n", True)]
               for _ in range(6)], "ok"))
    s.append(("loop-failing-differently", "catch", "recoverable", "loop",
              "the identical command, failing every time, with another "
              "timestamp in each error",
              [[("shell", {"command": "./deploy.sh staging"},
                 "2026-11-25T03:12:%02dZ deploy failed: lock held\n" % k,
                 True)] for k in range(6)], "ok"))
    return s


TOOLNAMES = {
    "claude": {"read": "Read", "shell": "Bash", "edit": "Edit"},
    "qwen": {"read": "read_file", "shell": "run_shell_command",
             "edit": "edit"},
    "gemini": {"read": "read_file", "shell": "run_shell_command",
               "edit": "replace"},
    "opencode": {"read": "read", "shell": "bash", "edit": "edit"},
}


def input_for(client, tool, inp):
    inp = dict(inp)
    if client == "gemini" and tool == "read":
        inp = {"absolute_path": inp["file_path"],
               **({"offset": inp["offset"] - 1, "limit": inp["limit"]}
                  if "offset" in inp else {})}
    if client == "opencode" and "file_path" in inp:
        inp["filePath"] = inp.pop("file_path")
    if client == "qwen" and "file_path" in inp and tool == "read":
        inp["absolute_path"] = inp.pop("file_path")
    return inp


def shell_of(tool, inp):
    if tool == "shell":
        return inp["command"]
    if tool == "read":
        if "offset" in inp:
            return "sed -n '%d,%dp' %s" % (inp["offset"],
                                          inp["offset"] + inp["limit"] - 1,
                                          inp["file_path"])
        return "cat %s" % inp["file_path"]
    return "apply_patch %s" % inp["file_path"]


def claude_like(client, turns, end):
    sid = "5f0c2a8e-1b7d-4c62-9a51-%012d" % 7
    lines = [{"type": "system", "subtype": "init", "session_id": sid,
              "tools": list(TOOLNAMES[client].values()),
              "model": "claude-sonnet-4-5" if client == "claude" else
              "qwen3-coder-plus"}]
    n = 0
    for t, calls in enumerate(turns):
        content, results = [], []
        for tool, inp, res, err in calls:
            n += 1
            cid = ("toolu_%02d" if client == "claude" else "call_%02d") % n
            content.append({"type": "tool_use", "id": cid,
                            "name": TOOLNAMES[client][tool],
                            "input": input_for(client, tool, inp)})
            r = {"tool_use_id": cid, "type": "tool_result", "content": res}
            if err or client == "qwen":
                r["is_error"] = err
            results.append(r)
        lines.append({"type": "assistant", "message": {
            "id": "msg_%02d" % t, "type": "message", "role": "assistant",
            "content": content, "usage": {"input_tokens": 100 + t,
                                          "output_tokens": 20}},
            "session_id": sid})
        lines.append({"type": "user", "message": {"role": "user",
                                                  "content": results},
                      "session_id": sid})
    if end == "ok":
        lines.append({"type": "assistant", "message": {
            "id": "msg_end", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": STATUS}],
            "usage": {"input_tokens": 300, "output_tokens": 40}},
            "session_id": sid})
        lines.append({"type": "result", "subtype": "success",
                      "is_error": False, "num_turns": len(turns) + 1,
                      "result": STATUS, "session_id": sid,
                      "total_cost_usd": 0.02,
                      "usage": {"input_tokens": 300, "output_tokens": 40}})
        return lines, 0
    lines.append({"type": "result", "subtype": "error_max_turns",
                  "is_error": True, "num_turns": len(turns) + 1,
                  "session_id": sid, "total_cost_usd": 0.02,
                  "usage": {"input_tokens": 300, "output_tokens": 40}})
    return lines, 1


def codex(turns, end):
    lines = [{"type": "thread.started",
              "thread_id": "01a20535-48ce-7132-b83b-a96aa6101f97"},
             {"type": "turn.started"}]
    n = 0
    for calls in turns:
        for tool, inp, res, err in calls:
            cmd = "/bin/bash -lc %s" % json.dumps(shell_of(tool, inp))
            item = {"id": "item_%d" % n, "type": "command_execution",
                    "command": cmd, "aggregated_output": "",
                    "exit_code": None, "status": "in_progress"}
            lines.append({"type": "item.started", "item": dict(item)})
            item.update(aggregated_output=res, exit_code=1 if err else 0,
                        status="failed" if err else "completed")
            lines.append({"type": "item.completed", "item": item})
            n += 1
    if end == "ok":
        lines.append({"type": "item.completed", "item": {
            "id": "item_%d" % n, "type": "agent_message", "text": STATUS}})
        lines.append({"type": "turn.completed", "usage": {
            "input_tokens": 8400, "cached_input_tokens": 7000,
            "output_tokens": 560}})
        return lines, 0
    lines.append({"type": "turn.failed", "error": {
        "message": "the model stopped: it reached the turn limit"}})
    return lines, 1


def gemini(turns, end):
    ts = "2026-11-25T03:12:01.000Z"
    lines = [{"type": "init", "timestamp": ts,
              "session_id": "99c6590b-10c3-4ace-bf3b-20754d1eafcb",
              "model": "gemini-2.5-pro"}]
    n = 0
    for calls in turns:
        for tool, inp, res, err in calls:
            tid = "%s-%d" % (TOOLNAMES["gemini"][tool], n)
            lines.append({"type": "tool_use", "timestamp": ts,
                          "tool_name": TOOLNAMES["gemini"][tool],
                          "tool_id": tid,
                          "parameters": input_for("gemini", tool, inp)})
            r = {"type": "tool_result", "timestamp": ts, "tool_id": tid,
                 "status": "error" if err else "success", "output": res}
            if err:
                r["error"] = {"type": "shell_error", "message": res}
            lines.append(r)
            n += 1
    if end == "ok":
        lines.append({"type": "message", "timestamp": ts,
                      "role": "assistant", "content": STATUS,
                      "delta": True})
        lines.append({"type": "result", "timestamp": ts,
                      "status": "success", "stats": {
                          "total_tokens": 1200, "input_tokens": 1100,
                          "output_tokens": 100, "duration_ms": 900,
                          "tool_calls": n}})
        return lines, 0
    lines.append({"type": "result", "timestamp": ts, "status": "error",
                  "error": {"type": "FatalTurnLimitedError",
                            "message": "Reached max session turns"},
                  "stats": {"total_tokens": 1200, "input_tokens": 1100,
                            "output_tokens": 100, "tool_calls": n}})
    return lines, 53


def opencode(turns, end):
    sid = "ses_dfacad26bffeiLtGcuCW371O4w"
    lines = []
    n = 0
    for t, calls in enumerate(turns):
        lines.append({"type": "step_start", "timestamp": 1795383703000 + t,
                      "sessionID": sid, "part": {"type": "step-start"}})
        for tool, inp, res, err in calls:
            state = {"status": "error" if err else "completed",
                     "input": input_for("opencode", tool, inp),
                     "title": shell_of(tool, inp)}
            if err:
                state["error"] = res
            else:
                state["output"] = res
            lines.append({"type": "tool_use",
                          "timestamp": 1795383703100 + t, "sessionID": sid,
                          "part": {"type": "tool",
                                   "tool": TOOLNAMES["opencode"][tool],
                                   "callID": "toolu_%02d" % n,
                                   "state": state, "sessionID": sid}})
            n += 1
        lines.append({"type": "step_finish",
                      "timestamp": 1795383703200 + t, "sessionID": sid,
                      "part": {"type": "step-finish",
                               "reason": "tool-calls",
                               "tokens": {"input": 100, "output": 20,
                                          "reasoning": 0,
                                          "cache": {"read": 0, "write": 0}},
                               "cost": 0.001}})
    if end == "ok":
        lines.append({"type": "text", "timestamp": 1795383709000,
                      "sessionID": sid,
                      "part": {"type": "text", "text": STATUS}})
        return lines, 0
    lines.append({"type": "error", "timestamp": 1795383709000,
                  "sessionID": sid, "error": {
                      "name": "UnknownError",
                      "data": {"message": "Maximum steps reached"}}})
    return lines, 1


SHAPES = {
    "claude": ("claude -p --output-format stream-json --verbose",
               "claude-2.1.330/tools-stream-json"),
    "qwen": ("qwen -p --output-format stream-json --yolo",
             "qwen-0.15.10/tools-stream-json"),
    "codex": ("codex exec --json", "codex-0.169.0/tools-json"),
    "gemini": ("gemini -p --output-format stream-json --yolo",
               "gemini-0.61.0/tools-stream-json"),
    "opencode": ("opencode run --format json",
                 "opencode-1.18.33/tools-json"),
}


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    for client in ("claude", "qwen", "codex", "gemini", "opencode"):
        for name, side, cls, typ, note, turns, end in sessions():
            if client in ("claude", "qwen"):
                lines, code = claude_like(client, turns, end)
            else:
                lines, code = globals()[client](turns, end)
            stem = os.path.join(OUT, "%s-%s" % (client, name))
            with open(stem + ".stdout", "w") as f:
                for line in lines:
                    f.write(json.dumps(line, ensure_ascii=False,
                                       separators=(",", ":")) + "\n")
            if code:
                with open(stem + ".exit", "w") as f:
                    f.write("%d\n" % code)
            cmd, shape = SHAPES[client]
            with open(stem + ".cmd", "w") as f:
                f.write("%s 'Work on the next task.'\n" % cmd)
            with open(stem + ".expect", "w") as f:
                f.write("side: %s\nagent: %s\nclass: %s\n" %
                        (side, client, cls))
                if typ:
                    f.write("type: %s\n" % typ)
                f.write("source: written by t/corpus/streams.py in the "
                        "shape of recorded/%s: %s\n" % (shape, note))


if __name__ == "__main__":
    main()
