#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A fake qpoold for t-server-auth.sh, run as an unprivileged user on the
# server's TCP port (while qpoold is down) or at its Unix socket path.
# It records every frame a peer sends it (one JSON line each in CAPTURE),
# answers as a server would (over TCP: a hello, then an "ok" with the best
# credential a user can make: its own uid, qpool's payload with made-up
# nonces), acknowledges a node.register, and sends a job.launch of a root
# job that would create MARKER. A client that obeys or trusts it is broken.
# Usage: impostor.py tcp HOST PORT CAPTURE READY MARKER MUNGE_SOCK
#        impostor.py unix PATH CAPTURE READY MARKER
# Writes READY once it listens; runs until killed, a connection at a time,
# each bounded to 3 s.
import json
import os
import secrets
import socket
import struct
import subprocess
import sys
import time

import qpauth

mode = sys.argv[1]
if mode == "tcp":
    host, port, capture, ready, marker, munge_sock = sys.argv[2], int(sys.argv[3]), *sys.argv[4:8]
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, port))
else:
    path, capture, ready, marker = sys.argv[2:6]
    munge_sock = None
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ls.bind(path)
    os.chmod(path, 0o777)   # everyone may connect, as to qpoold's
ls.listen(64)
with open(ready, "w") as f:
    f.write("listening\n")


def frame(obj):
    b = json.dumps(obj).encode()
    return struct.pack(">I", len(b)) + b


def launch():
    now = time.time_ns()
    script = "#!/bin/sh\ntouch %s\n" % marker
    return {"op": "job.launch", "id": 0, "job": {
        "jobid": 9999, "name": "impostor", "queue": "batch", "user": "root", "uid": 0, "gid": 0,
        "workdir": os.path.dirname(marker), "script": script, "ncpus": 1, "cpus": "0",
        "mems": "0", "mem": 0, "walltime": 60, "umask": 18, "attrs": {}, "env": {},
        "times": {"submit": now, "dispatch": now}, "server": "impostor", "kill_grace": 2,
        "reserve": "none", "rt_policy": "fifo", "rt_priority": 0}}


def fake_proof():
    # A user can mint only its own uid's credential.
    payload = "%s server %s %s 127.0.0.1:1" % (qpauth.TAG, secrets.token_hex(16), secrets.token_hex(16))
    try:
        cred = subprocess.run(["munge", "-S", munge_sock, "-s", payload], capture_output=True,
                              text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        cred = "MUNGE:none:"
    return {"id": 0, "ok": True, "cred": cred}


def serve(c):
    c.settimeout(0.2)
    end = time.monotonic() + 3
    buf = b""
    if mode == "tcp":
        c.sendall(frame({"op": "hello", "id": 0, "nonce": secrets.token_hex(16)}))
    else:
        # A socket client may start with its request: give it orders at once.
        c.sendall(frame(launch()))
    while time.monotonic() < end:
        try:
            data = c.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            return
        if not data:
            return
        buf += data
        while len(buf) >= 4:
            n = struct.unpack(">I", buf[:4])[0]
            if len(buf) < 4 + n:
                break
            try:
                msg = json.loads(buf[4:4 + n])
            except ValueError:
                msg = {"raw": buf[4:4 + n].hex()}
            buf = buf[4 + n:]
            with open(capture, "a") as f:
                f.write(json.dumps(msg) + "\n")
            out = b""
            if msg.get("op") == "auth" and mode == "tcp":
                out += frame(fake_proof())
            elif "op" in msg:
                out += frame({"id": msg.get("id", 0), "ok": True, "jobid": 9999, "server": "impostor",
                              "jobs": [], "nodes": [], "queues": []})
            if msg.get("op") in ("auth", "node.register"):
                out += frame(launch())
            try:
                c.sendall(out)
            except OSError:
                return


while True:
    c, _ = ls.accept()
    try:
        serve(c)
    except OSError:
        pass   # the peer hung up on it: the next one
    finally:
        c.close()
