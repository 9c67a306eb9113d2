#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Holds N idle TCP connections to HOST:PORT from source address SRC, sending
# nothing (a peer with no MUNGE key), and opens a closed one again after
# 1 s, as a client that reconnects would. Writes "open K closed C" to
# STATUS after each round (K: connections open now; C: closed by the
# server so far). Runs until killed. For t-server-auth.sh.
# Usage: idle-flood.py SRC HOST PORT N STATUS
import os
import select
import socket
import sys
import time

src, host, port, n, status = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
socks = [None] * n
down_since = [0.0] * n
closed = 0


def connect():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    s.bind((src, 0))
    try:
        s.connect((host, port))
    except BlockingIOError:
        pass
    except OSError:
        s.close()
        return None
    return s


while True:
    now = time.monotonic()
    for i in range(n):
        if socks[i] is None and now - down_since[i] >= 1.0:
            socks[i] = connect()
            if socks[i] is None:
                down_since[i] = now
    live = [s for s in socks if s is not None]
    r, _, _ = select.select(live, [], [], 0.2) if live else ([], [], [])
    for s in r:
        try:
            data = s.recv(65536)
        except OSError:
            data = b""
        if not data:
            i = socks.index(s)
            s.close()
            socks[i] = None
            down_since[i] = time.monotonic()
            closed += 1
    with open(status + ".tmp", "w") as f:
        f.write("open %d closed %d\n" % (sum(s is not None for s in socks), closed))
    os.replace(status + ".tmp", status)
