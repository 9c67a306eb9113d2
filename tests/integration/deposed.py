#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A protocol fixture for a deposed active that does not know it yet (what
# a real qpoold cannot be made to be on cue: its lease timer runs before
# any request): on its Unix socket it takes a node's node.register, sends
# job.signal SIGKILL for each job the node reports running, then replies
# ok with EPOCH. Each thing it does is appended to LOG. Stops after
# LIFETIME seconds. Usage: deposed.py SOCKET EPOCH LOG LIFETIME
import json, os, socket, struct, sys, threading

path, epoch, log, life = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])


def send(s, obj):
    b = json.dumps(obj).encode()
    s.sendall(struct.pack(">I", len(b)) + b)


def recv(s):
    def exact(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            if not c:
                return None
            b += c
        return b
    h = exact(4)
    return None if h is None else json.loads(exact(struct.unpack(">I", h)[0]) or b"null")


def note(text):
    with open(log, "a") as f:
        f.write(text + "\n")


def serve(c):
    try:
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
