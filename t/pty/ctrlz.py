#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
# Ctrl-Z at a terminal (t/0610-hangs.t): an interactive bash on a
# pseudo-terminal runs cbexec over a short command, gets ^Z typed, and
# must show its prompt again with the job Stopped; "fg" then lets the
# command finish.  Prints one word per step for the shell test to check.
import os, pty, sys, time, select
cbexec = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    os.environ["PS1"] = "PROMPT$ "
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
buf = b""
def wait_for(pat, secs):
    global buf
    end = time.time() + secs
    while time.time() < end:
        if pat in buf:
            return True
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                d = os.read(fd, 4096)
            except OSError:
                return pat in buf
            buf += d
    return pat in buf
def send(s):
    os.write(fd, s.encode())
wait_for(b"PROMPT$ ", 5)
buf = b""
send("'%s' -q --no-prompt --progress exit --name tz -- sh -c 'sleep 1.5; echo FIN''ISHED'\n" % cbexec)
time.sleep(0.6)
send("\x1a")
print("stopped" if wait_for(b"Stopped", 3) and wait_for(b"PROMPT$ ", 2) else "not-stopped")
print("early" if b"FINISHED" in buf else "not-early")
buf = b""
send("fg\n")
print("finished" if wait_for(b"FINISHED", 6) else "not-finished")
wait_for(b"PROMPT$ ", 3)
buf = b""
send("echo rc=$?\n")
wait_for(b"rc=", 3); wait_for(b"PROMPT$", 2)
import re
m = re.search(rb"rc=(\d+)", buf)
print("rc=" + (m.group(1).decode() if m else "?"))
send("exit\n")
time.sleep(0.2)
try:
    os.kill(pid, 9)
except OSError:
    pass
