# SPDX-License-Identifier: MIT
# A protocol fixture for what a real standby qpoold cannot be made to do
# on cue (t-servers.sh: standbys naming no active, a step-down exactly at
# one job.done; the real standby is tested there and in t-failover): speaks
# qpoold's TCP handshake (docs/PROTOCOL.md, "The auth frame") with the
# test's munged, then answers every request as a standby does ("Standby,
# and the client's rules"), naming ACTIVE ("-": none). Each request's op
# is appended to LOG, one a line. Usage: standby.py PORTFILE MUNGESOCK ACTIVE LOG
#
# With RELAY TRIGGER after them it is first an active that steps down: it
# relays each connection to the qpoold at RELAY (authenticated there as
# root, as a node is) until TRIGGER exists and a job.done comes, the
# moment a fenced commit fails; that job.done and all after it get the
# standby reply, and the relayed connection is closed.
import json, os, secrets, socket, struct, subprocess, sys, threading

import qpauth
from qpauth import recv, send

portfile, msock, active, log = sys.argv[1:5]
relay, trigger = (sys.argv[5], sys.argv[6]) if len(sys.argv) > 6 else (None, None)
lock = threading.Lock()


def upstream(down):
    """A connection to RELAY as root; what it sends goes to down."""
    up = socket.create_connection(tuple(relay.rsplit(":", 1)), timeout=10)
    hello = recv(up)
    nc = secrets.token_hex(16)
    cred = subprocess.run(["munge", "-S", msock, "-u", "0", "-s",
                           qpauth.client_payload(up, hello["nonce"], nc)],
                          capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    send(up, {"op": "auth", "id": 0, "cred": cred})
    if not recv(up).get("ok"):
        raise OSError("refused by the relayed qpoold")
    up.settimeout(None)

    def pump():
        try:
            while True:
                msg = recv(up)
                if msg is None:
                    return
                send(down, msg)
        except OSError:
            pass
    threading.Thread(target=pump, daemon=True).start()
    return up


def serve(s):
    up = None
    try:
        ns = secrets.token_hex(16)
        send(s, {"op": "hello", "id": 0, "nonce": ns})
        auth = recv(s)
        if not auth or auth.get("op") != "auth":
            return
        out = subprocess.run(["unmunge", "-S", msock, "-k", "UID"], input=auth["cred"], capture_output=True,
                             text=True, timeout=10).stdout
        meta, _, payload = out.partition("\n\n")
        uid = meta.split("(")[1].split(")")[0]
        words = payload.strip().split()
        if not qpauth.client_words_ok(s, words, ns):
            return
        cred = subprocess.run(["munge", "-S", msock, "-u", uid, "-s", qpauth.server_payload(s, words[3], ns)],
                              capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        send(s, {"id": 0, "ok": True, "cred": cred})
        up = upstream(s) if relay else None
        while True:
            req = recv(s)
            if req is None:
                return
            if up and not (os.path.exists(trigger) and req.get("op") == "job.done"):
                send(up, req)
                continue
            if up:
                up.close()
                up = None
            with lock, open(log, "a") as f:
                f.write("%s\n" % req.get("op"))
            if req.get("id", 0) == 0:
                continue   # a notification: nothing to answer
            reply = {"id": req.get("id"), "ok": False, "errno": 11, "standby": True,
                     "error": "qpoold on fixture is a standby; the active is %s (epoch 2)" % active}
            if active != "-":
                reply["active"] = active
            send(s, reply)
    except (OSError, ValueError, IndexError, KeyError, AttributeError, subprocess.SubprocessError):
        pass
    finally:
        if up:
            up.close()
        s.close()


ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen(16)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % ls.getsockname()[1])
os.rename(portfile + ".tmp", portfile)
while True:
    c, _ = ls.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
