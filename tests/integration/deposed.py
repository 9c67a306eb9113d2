#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A protocol fixture for a deposed active that does not know it yet (what
# a real qpoold cannot be made to be on cue: its lease timer runs before
# any request): on its Unix socket it takes a node's node.register, sends
# job.signal SIGKILL for each job the node reports running, then replies
# ok with EPOCH. Each thing it does is appended to LOG. Stops after
# LIFETIME seconds. Usage: deposed.py SOCKET EPOCH LOG LIFETIME; or
# deposed.py HOST:PORT EPOCH LOG LIFETIME MUNGE_SOCKET, on TCP, where it
# greets and proves itself as qpoold does (root's credential for the
# connection's two nonces: docs/PROTOCOL.md, "The auth frame").
import os, secrets, socket, subprocess, sys, threading

import qpauth
from qpauth import recv, send

path, epoch, log, life = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
munge = sys.argv[5] if len(sys.argv) > 5 else None


def note(text):
    with open(log, "a") as f:
        f.write(text + "\n")


def prove(c):
    server = secrets.token_hex(16)
    send(c, {"op": "hello", "id": 0, "nonce": server})
    m = recv(c)
    if not m or m.get("op") != "auth":
        return False
    out = subprocess.run(["unmunge", "-S", munge, "-m", "/dev/null"], input=m.get("cred", ""),
                         capture_output=True, text=True, timeout=10)
    words = out.stdout.split()
    if out.returncode != 0 or not qpauth.client_words_ok(c, words, server):
        return False
    cred = subprocess.run(["munge", "-S", munge, "-s", qpauth.server_payload(c, words[3], server)],
                          check=True, capture_output=True, text=True, timeout=10).stdout.strip()
    send(c, {"id": 0, "ok": True, "cred": cred})
    return True


def serve(c):
    try:
        if munge and not prove(c):
            return
        while True:
            m = recv(c)
            if m is None:
                return
            if m.get("op") == "node.register":
                for r in m.get("running") or []:
                    jobid = r.get("jobid") if isinstance(r, dict) else r
                    send(c, {"op": "job.signal", "jobid": jobid, "signal": 9})
                    note(f"sent job.signal 9 for job {jobid}")
                send(c, {"id": m.get("id"), "ok": True, "epoch": epoch})
                note(f"registered {m.get('name')} at epoch {epoch}")
            elif "id" in m:
                send(c, {"id": m["id"], "ok": True})
    except OSError:
        return


if munge:
    host, port = path.rsplit(":", 1)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, int(port)))
else:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
srv.listen(8)
threading.Timer(life, lambda: os._exit(0)).start()
note("listening")
while True:
    conn, _ = srv.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
