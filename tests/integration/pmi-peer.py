#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# A stranger at qpool-pmi's doors (t-pmi-gate.sh). Modes:
#   silent HOST PORT N READY CHECK OUT: N connections that never speak;
#     READY once all are open; when CHECK appears, OUT gets how many the
#     server has not closed.
#   root HOST PORT READY CHECK: connections to the root server that send,
#     as their first frame, fail (status 9), done, dmodex, a hello with a
#     wrong token, and one that stays silent; held until CHECK appears.
#   initack HOST PORT RANK OUT: says "cmd=initack pmiid=RANK", then init
#     and abort (exit code 7); OUT gets every reply line, or "closed".
# Every wait is bounded (120 s): the test's cleanup never waits on it.
import json
import os
import select
import socket
import struct
import sys
import time


def wait_file(path, limit=120):
    end = time.monotonic() + limit
    while not os.path.exists(path) and time.monotonic() < end:
        time.sleep(0.05)


def frame(obj):
    body = json.dumps(obj).encode()
    return struct.pack(">I", len(body)) + body


def still_open(s):
    r, _, _ = select.select([s], [], [], 0)
    if not r:
        return True
    try:
        return s.recv(4096, socket.MSG_PEEK) != b""
    except OSError:
        return False


def main():
    mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "silent":
        n, ready, check, out = int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
        socks = [socket.create_connection((host, port)) for _ in range(n)]
        open(ready, "w").close()
        wait_file(check)
        with open(out, "w") as f:
            f.write("%d\n" % sum(still_open(s) for s in socks))
    elif mode == "root":
        ready, check = sys.argv[4], sys.argv[5]
        socks = []
        for msg in ({"op": "fail", "status": 9}, {"op": "done", "node": 1},
                    {"op": "dmodex", "id": 1, "rank": 1, "from": 0, "to": 1},
                    {"op": "hello", "node": 1, "token": "guess"}, None):
            s = socket.create_connection((host, port))
            if msg:
                s.sendall(frame(msg))
            socks.append(s)
        open(ready, "w").close()
        wait_file(check)
    elif mode == "initack":
        rank, out = int(sys.argv[4]), sys.argv[5]
        s = socket.create_connection((host, port))
        s.settimeout(5)
        got = b""
        try:
            # as MPICH's client does: the initack, its answer, then the rest
            s.sendall(b"cmd=initack pmiid=%d\n" % rank)
            while b"\n" not in got:
                b = s.recv(4096)
                if not b:
                    break
                got += b
            if b"rc=0" in got:
                s.sendall(b"cmd=init pmi_version=1 pmi_subversion=1\n")
                s.sendall(b"cmd=abort exitcode=7\n")
                while True:
                    b = s.recv(4096)
                    if not b:
                        break
                    got += b
        except OSError:
            pass
        with open(out, "w") as f:
            f.write(got.decode(errors="replace") or "closed\n")

main()
