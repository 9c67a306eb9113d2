#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# metrics-http.py PORT WHAT: one raw HTTP exchange with qpoold's metrics
# port on 127.0.0.1, printed: the status line ("HTTP/1.1 200 OK"), then the
# body with `get` and `body`; "closed" when qpoold closed without a
# reply. WHAT: get, head, post, root, garbage, big, idle (connects, sends
# nothing, prints the seconds until qpoold closes). Bounded: 20 s.
import socket, sys, time

port, what = int(sys.argv[1]), sys.argv[2]
reqs = {
    "get": b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
    "body": b"GET /metrics?x=1 HTTP/1.0\r\n\r\n",
    "head": b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
    "post": b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
    "root": b"GET / HTTP/1.1\r\n\r\n",
    "garbage": b"\x16\x03\x01 hello\r\n\r\n",
    "big": b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n",
    "idle": b"",
}
s = socket.create_connection(("127.0.0.1", port), timeout=20)
t0 = time.monotonic()
try:
    s.sendall(reqs[what])
except (BrokenPipeError, ConnectionResetError):
    pass
buf = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        buf += b
except ConnectionResetError:
    pass
except socket.timeout:
    print("timeout")
    sys.exit(1)
if what == "idle":
    print("%.1f" % (time.monotonic() - t0))
    sys.exit(0)
if not buf:
    print("closed")
    sys.exit(0)
head, _, body = buf.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode())
if what in ("get", "body"):
    sys.stdout.write(body.decode())
