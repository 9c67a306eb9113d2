#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A client that pipelines requests and never reads the replies (issue 16,
# "the rest of its kind"): qpoold stops handling its requests once 4 MiB of
# replies wait for it, so its memory stays bounded, others are served
# meanwhile, and idle_timeout closes the connection.
. "$(dirname "$0")/lib.sh"
qp_setup "
[server]
idle_timeout = 5"
qp_start_server
rss() { awk '/^VmRSS/ {print $2}' "/proc/$QP_SERVER_PID/status"; }
as qpuser1 python3 "$QP_TOP/bench/submit" 300 --workdir "$QP_T/work/qpuser1" > /dev/null || fail submit
rss0=$(rss)
cat > "$QP_T/unread.py" <<'PY'
import json, socket, struct, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.setblocking(False)
sent = 0
frames = b"".join(struct.pack(">I", len(b)) + b for b in
                  (json.dumps({"op": "stat", "id": i + 1}).encode() for i in range(5000)))
t0 = time.time()
while frames and time.time() - t0 < 20:
    try:
        n = s.send(frames)
        frames = frames[n:]
    except BlockingIOError:
        time.sleep(0.05)
print(f"sent {5000 - frames.count(b'stat')} requests; not reading", flush=True)
# Wait (bounded) for qpoold to close the connection for idleness.
s.setblocking(True)
s.settimeout(60)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
t0 = time.time()
try:
    time.sleep(12)          # past idle_timeout, without reading a byte
    while s.recv(1 << 20):
        pass
    print(f"closed by qpoold", flush=True)
except (ConnectionResetError, socket.timeout) as e:
    # Closed with our requests unread on its side: a reset, also a close.
    print(f"closed by qpoold ({type(e).__name__})" if isinstance(e, ConnectionResetError)
          else f"ended: {e!r}", flush=True)
PY
as qpuser3 python3 "$QP_T/unread.py" "$QP_T/qpoold.sock" > "$QP_T/unread.out" 2>&1 & up=$!
for _ in $(seq 100); do grep -q "not reading" "$QP_T/unread.out" && break; sleep 0.1; done
cat "$QP_T/unread.out"
id=$(echo true | as qpuser2 qsub) || fail "qsub while a client does not read"
as qpuser2 qstat "$id" > /dev/null || fail "qstat while a client does not read"
rss1=$(rss)
echo "qpoold VmRSS: ${rss0} kB before, ${rss1} kB with 5000 unread stat replies asked for"
# Under AddressSanitizer freed memory waits in its quarantine (256 MiB):
# the bound is checked on the plain build (without the cap: ~480 MB).
if qp_sanitized "$QP_BIN/qpoold"; then
	note "sanitized build: VmRSS bound not checked (ASan quarantine)"
else
	[ "$rss1" -lt $((rss0 + 65536)) ] || fail "qpoold grew from ${rss0} to ${rss1} kB for one client's unread replies"
fi
wait "$up" || fail "unread client: $(cat "$QP_T/unread.out")"
cat "$QP_T/unread.out"
grep -q "closed by qpoold" "$QP_T/unread.out" || fail "the connection was not closed: $(cat "$QP_T/unread.out")"
kill -0 "$QP_SERVER_PID" || fail "qpoold died"
echo "unread ok"
