#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Not Redis: a loopback server that answers HELLO, AUTH, SELECT, PING and
TIME as Redis does and every other command the wrong way, for the store's
reply tests (t/0990-store-faults.t).

    fakeredis.py PORTFILE MODE

MODE: 'integer' answers ':7'; 'status' answers '+OK'; 'huge' answers a
bulk string of 64 MiB (sent as fast as the client takes it; the bytes
sent are counted in PORTFILE.sent when the client goes).
"""
import os
import socket
import sys
import threading
import time

portfile, how = sys.argv[1], sys.argv[2]
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen(16)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % ls.getsockname()[1])
os.rename(portfile + ".tmp", portfile)


def commands(c):
    """Each command c sends, as a list of bytes."""
    buf = b""
    while True:
        while b"\r\n" not in buf:
            b = c.recv(65536)
            if not b:
                return
            buf += b
        assert buf[:1] == b"*", buf[:20]
        line, buf = buf.split(b"\r\n", 1)
        words = []
        for _ in range(int(line[1:])):
            while b"\r\n" not in buf:
                buf += c.recv(65536)
            line, buf = buf.split(b"\r\n", 1)
            n = int(line[1:])
            while len(buf) < n + 2:
                buf += c.recv(65536)
            words.append(buf[:n])
            buf = buf[n + 2:]
        yield words


def serve(c):
    sent = 0
    try:
        for w in commands(c):
            cmd = w[0].upper()
            if cmd in (b"AUTH", b"SELECT", b"PING"):
                c.sendall(b"+OK\r\n")
            elif cmd == b"HELLO":
                f = [b"server", b"redis", b"version", b"7.0.0", b"proto",
                     b"2", b"id", b"1", b"mode", b"standalone", b"role",
                     b"master"]
                c.sendall(b"*%d\r\n" % (len(f) + 2) + b"".join(
                    b"$%d\r\n%s\r\n" % (len(x), x) for x in f) +
                    b"$7\r\nmodules\r\n*0\r\n")
            elif cmd == b"TIME":
                t = time.time()
                s, us = str(int(t)).encode(), str(int(t % 1 * 1e6)).encode()
                c.sendall(b"*2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" %
                          (len(s), s, len(us), us))
            elif how == "integer":
                c.sendall(b":7\r\n")
            elif how == "status":
                c.sendall(b"+OK\r\n")
            else:
                size = 64 << 20
                c.sendall(b"$%d\r\n" % size)
                chunk = b"x" * 65536
                while sent < size:
                    sent += c.send(chunk)
                c.sendall(b"\r\n")
    except OSError:
        pass
    finally:
        with open(portfile + ".sent", "w") as f:
            f.write("%d\n" % sent)
        c.close()


parent = os.getppid()
ls.settimeout(0.2)
while os.getppid() == parent:   # the test gone, so is this server
    try:
        c, _ = ls.accept()
    except socket.timeout:
        continue
    c.settimeout(None)
    threading.Thread(target=serve, args=(c,), daemon=True).start()
