#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A loopback TCP proxy in front of the tests' Redis that misbehaves on
demand, for the store's fault tests (t/0990-store-faults.t,
t/0995-store-chaos.t).

    storeproxy.py PORTFILE UPSTREAM_PORT MODEFILE

It listens on a free loopback port, writes it to PORTFILE, and forwards
to 127.0.0.1:UPSTREAM_PORT.  MODEFILE, read every 10 ms, holds one word (MODEFILE.now says which
mode is in force, MODEFILE.conns how many connections came):

    pass        forward as it comes
    delay MS    deliver every chunk MS milliseconds late, both ways
    hold        deliver nothing, keep it all; deliver it when healed
                (a partition whose requests arrive late), even for a
                client that has gone meanwhile
    drop        read and throw away, both ways (a black hole)
    reset       reset every connection, and each new one at once
    trickle     the store's replies one byte per 50 ms
"""
import os
import select
import socket
import struct
import sys
import time

portfile, upstream, modefile = sys.argv[1], int(sys.argv[2]), sys.argv[3]

ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen(128)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % ls.getsockname()[1])
os.rename(portfile + ".tmp", portfile)


def mode():
    try:
        with open(modefile) as f:
            w = f.read().split()
    except OSError:
        return ("pass", 0)
    if not w:
        return ("pass", 0)
    return (w[0], int(w[1]) if len(w) > 1 else 0)


def rst(s):
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))
        s.close()
    except OSError:
        pass


class Pipe:
    """One client and its upstream connection; q[d] is what waits to go
    the way d (0: to the store, 1: to the client) as (due, bytes)."""

    def __init__(self, c, u):
        self.s = [c, u]
        self.q = [[], []]
        self.eof = [False, False]    # the side that sent it has closed
        self.last = 0.0              # trickle's last byte

    def close(self):
        for s in self.s:
            if s is not None:
                rst(s)
        self.s = [None, None]


pipes = []
parent = os.getppid()
cur, said, last_read = ("pass", 0), None, 0.0
accepted = 0
while True:
    now = time.monotonic()
    if os.getppid() != parent:
        sys.exit(0)     # the test is gone: so is its proxy
    if now - last_read >= 0.01:
        m, last_read = mode(), now
        if m != said:
            cur = said = m
            # said back, so that a test knows the fault is on
            with open(modefile + ".now.tmp", "w") as f:
                f.write("%s\n" % " ".join(str(x) for x in m if x))
            os.rename(modefile + ".now.tmp", modefile + ".now")
    socks = [ls] + [s for p in pipes for s in p.s if s is not None]
    r, _, _ = select.select(socks, [], [], 0.01)
    now = time.monotonic()
    if ls in r:
        c, _ = ls.accept()
        accepted += 1
        with open(modefile + ".conns.tmp", "w") as f:
            f.write("%d\n" % accepted)
        os.rename(modefile + ".conns.tmp", modefile + ".conns")
        if cur[0] == "reset":
            rst(c)
        else:
            u = socket.socket()
            try:
                u.connect(("127.0.0.1", upstream))
                pipes.append(Pipe(c, u))
            except OSError:
                rst(c)
                u.close()
    if cur[0] == "reset":
        for p in pipes:
            p.close()
        pipes = []
    for p in pipes:
        for d in (0, 1):
            s = p.s[d]
            if s is None or s not in r:
                continue
            try:
                b = s.recv(65536)
            except OSError:
                b = b""
            if not b:
                p.eof[d] = True
                s.close()
                p.s[d] = None
                continue
            if cur[0] == "drop":
                continue
            due = now + (cur[1] / 1000.0 if cur[0] == "delay" else 0)
            p.q[d].append((due, bytearray(b)))
    if cur[0] not in ("hold", "drop"):
        for p in pipes:
            for d in (0, 1):
                to = p.s[1 - d]
                q = p.q[d]
                while q and q[0][0] <= now:
                    if to is None:
                        q.clear()
                        break
                    if cur[0] == "trickle" and d == 1:
                        if now - p.last < 0.05:
                            break
                        p.last = now
                        chunk = bytes(q[0][1][:1])
                        del q[0][1][:1]
                        if not q[0][1]:
                            q.pop(0)
                    else:
                        chunk = bytes(q.pop(0)[1])
                    try:
                        to.sendall(chunk)
                    except OSError:
                        q.clear()
                        break
    keep = []
    for p in pipes:
        # a side gone: once what it sent has been delivered, the other
        # side is closed too
        for d in (0, 1):
            if p.eof[d] and not p.q[d] and p.s[1 - d] is not None:
                p.s[1 - d].close()
                p.s[1 - d] = None
        if p.s[0] is None and p.s[1] is None:
            continue
        keep.append(p)
    pipes = keep
