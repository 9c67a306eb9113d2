#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Sends one request to a qpoold's Unix socket (SO_PEERCRED: the caller's
# uid) and prints the reply as one JSON line: what a standby answers, seen
# whole (standby, active), without a client that would follow it.
# Usage: qpool-ask.py SOCKET OP [JSON-MEMBERS]; exits 1 when no reply comes
# within 5 s.
import json
import socket
import struct
import sys

path, op = sys.argv[1], sys.argv[2]
msg = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
msg.update({"id": 7, "op": op})
body = json.dumps(msg).encode()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
try:
    s.connect(path)
    s.sendall(struct.pack(">I", len(body)) + body)
    buf = b""
    while len(buf) < 4 or len(buf) < 4 + struct.unpack(">I", buf[:4])[0]:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
except OSError as e:
    print(f"qpool-ask: {path}: {e}", file=sys.stderr)
    sys.exit(1)
if len(buf) < 4:
    print(f"qpool-ask: {path}: no reply", file=sys.stderr)
    sys.exit(1)
n = struct.unpack(">I", buf[:4])[0]
print(json.dumps(json.loads(buf[4:4 + n])))
