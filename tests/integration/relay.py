# SPDX-License-Identifier: MIT
# What a hostile local user runs while one qpoold of a server list is down
# (t-relay.sh): it listens at that server's address and passes every
# connection, frame by frame, to another server of the pool, writing each
# frame it sees to LOG ("down" from the server, "up" from the peer, one
# JSON line each). Once the peer sent its first frame after the handshake
# it acts on the authenticated connection itself:
#   - to a command's: it sends its own requests up as that user (a full
#     stat; a release of job HOLD; as root, a queue disabled), reading
#     their answers and passing none down;
#   - to a node's (node.register): it sends the node a job.launch of its
#     own, a script that creates MARKER as whoever runs it.
# It holds a peer whose upstream is not up yet and dials again until it
# is (a rolling restart). Bounded: it stops by itself after 120 s.
# Usage: relay.py LISTEN_PORT UPSTREAM_PORT LOG READY HOLD MARKER
import json
import os
import socket
import sys
import threading
import time

from qpauth import recv, send

listen_port, up_port = int(sys.argv[1]), int(sys.argv[2])
log, ready, hold_id, marker = sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
lock = threading.Lock()
end = time.monotonic() + 120


def note(side, obj):
    with lock, open(log, "a") as f:
        f.write("%s %s\n" % (side, json.dumps(obj, sort_keys=True)))



def launch():
    now = time.time_ns()
    return {"op": "job.launch", "id": 0, "job": {
        "jobid": 9999, "name": "relayed", "queue": "batch", "user": "root", "uid": 0, "gid": 0,
        "workdir": os.path.dirname(marker), "script": "#!/bin/sh\nid > %s\n" % marker, "ncpus": 1,
        "cpus": "0", "mems": "0", "mem": 0, "walltime": 60, "umask": 18, "attrs": {}, "env": {},
        "times": {"submit": now, "dispatch": now}, "server": "relay", "kill_grace": 2,
        "reserve": "none", "rt_policy": "fifo", "rt_priority": 0}}


def upstream():
    while time.monotonic() < end:
        try:
            return socket.create_connection(("127.0.0.1", up_port), timeout=5)
        except OSError:
            time.sleep(0.05)
    return None


def serve(down):
    note("conn", {})
    up = upstream()
    if up is None:
        down.close()
        return
    up.settimeout(None)
    acted = threading.Event()

    def from_server():
        try:
            while True:
                m = recv(up)
                if m is None:
                    break
                note("down", m)
                # The answers to its own requests are the relay's to read.
                if isinstance(m.get("id"), int) and m["id"] >= 7000:
                    continue
                send(down, m)
        except (OSError, ValueError):
            pass
        down.close()

    threading.Thread(target=from_server, daemon=True).start()
    frames = 0
    try:
        while True:
            m = recv(down)
            if m is None:
                break
            note("up", m)
            send(up, m)
            frames += 1
            # Frame 1 is the auth frame; frame 2 the first after the
            # handshake: the connection is authenticated now, if ever.
            if frames == 2 and not acted.is_set():
                acted.set()
                if m.get("op") == "node.register":
                    note("act", {"launch": 9999})
                    send(down, launch())
                else:
                    note("act", {"requests": [7001, 7002, 7003]})
                    send(up, {"op": "stat", "id": 7001, "full": True})
                    send(up, {"op": "release", "id": 7002, "jobid": hold_id})
                    send(up, {"op": "admin", "id": 7003, "action": "disable", "target": "batch",
                              "reason": "relayed"})
    except (OSError, ValueError):
        pass
    up.close()


ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", listen_port))
ls.listen(64)
ls.settimeout(0.5)
open(ready, "w").write("%d\n" % os.getpid())
while time.monotonic() < end:
    try:
        c, _ = ls.accept()
    except socket.timeout:
        continue
    c.settimeout(None)
    threading.Thread(target=serve, args=(c,), daemon=True).start()
