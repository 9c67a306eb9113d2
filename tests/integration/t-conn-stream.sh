#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A connection that streams whole messages for longer than qpoold's
# STALL_SEC (10 s) is not "unfinished": a client sends requests back to
# back for 14 s, each write ending mid-frame (as a node link carrying
# many tasks' stdin does), and reads the replies; qpoold answers every
# one and keeps the connection. A message that does stall is still cut
# off (t-hostile).
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server

cat > "$QP_T/stream.py" <<'PY'
import json, socket, struct, sys, threading, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
secs = float(sys.argv[2])
got = {"n": 0, "closed": False}
def reader():
    buf = b""
    while True:
        try:
            d = s.recv(65536)
        except OSError:
            d = b""
        if not d:
            got["closed"] = True
            return
        buf += d
        while len(buf) >= 4 and len(buf) >= 4 + struct.unpack(">I", buf[:4])[0]:
            n = struct.unpack(">I", buf[:4])[0]
            reply = json.loads(buf[4:4 + n])
            assert reply.get("ok"), reply
            buf = buf[4 + n:]
            got["n"] += 1
th = threading.Thread(target=reader, daemon=True)
th.start()
def frame(i):
    body = json.dumps({"op": "queues", "id": i}).encode()
    return struct.pack(">I", len(body)) + body
sent, tail, i = 0, b"", 1
end = time.monotonic() + secs
try:
    while time.monotonic() < end and not got["closed"]:
        f = frame(i)
        # all but its last 3 bytes: every write ends inside a frame
        s.sendall(tail + f[:-3])
        tail = f[-3:]
        sent += 1
        i += 1
        time.sleep(0.01)
    s.sendall(tail)
except OSError as e:
    print("write failed after %d requests: %s" % (sent, e))
    sys.exit(1)
deadline = time.monotonic() + 30
while got["n"] < sent and not got["closed"] and time.monotonic() < deadline:
    time.sleep(0.05)
print("sent %d, answered %d, closed %s" % (sent, got["n"], got["closed"]))
sys.exit(0 if got["n"] == sent and not got["closed"] else 1)
PY
out=$(as qpuser1 python3 "$QP_T/stream.py" "$QP_T/qpoold.sock" 14) || fail "a streaming connection was cut: $out"
echo "$out"
grep -q "unfinished" "$QP_T/qpoold.log" && fail "qpoold called a streaming connection unfinished: $(grep unfinished "$QP_T/qpoold.log")"
echo "PASS"
