# SPDX-License-Identifier: MIT
# Sourced after lib.sh: a private munged with a test key in the test's
# directory (its own socket, key, pid, log and seed files; the system's
# munged and its files are never touched), a free TCP port, and a raw
# frame client for refusals. Each munged started here is in QP_PIDS, so
# lib.sh's cleanup stops it (last, as it started first).

command -v munged >/dev/null && command -v munge >/dev/null || skip "munge is not installed (apt-get install munge)"

# qp_munged_start NAME: starts munged with key $QP_T/NAME.key (made if
# missing) on socket $QP_T/NAME.sock, and waits until it makes credentials.
qp_munged_start() {
	local n=$1 d=$QP_T i
	[ -f "$d/$n.key" ] || { head -c 1024 /dev/urandom > "$d/$n.key" && chmod 600 "$d/$n.key"; } || fail "munge key"
	munged -F --socket="$d/$n.sock" --key-file="$d/$n.key" --pid-file="$d/$n.pid" \
		--log-file="$d/$n.munged.log" --seed-file="$d/$n.seed" --num-threads=2 \
		>> "$d/$n.munged.log" 2>&1 &
	QP_PIDS+=("$!")
	for i in $(seq 100); do
		munge -S "$d/$n.sock" -n > /dev/null 2>&1 && return 0
		kill -0 "$!" 2>/dev/null || fail "munged $n died at start (see $d/$n.munged.log)"
		sleep 0.05
	done
	fail "munged $n did not answer"
}

# qp_free_port: a TCP port nobody listens on now, on 127.0.0.1.
qp_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# qp_raw ADDR PORT FRAME...: reads qpoold's hello (its nonce), then sends
# each FRAME (a JSON text; @FILE: the credential in FILE, as it is, in an
# auth frame; %SOCK [MUNGE-ARGS]: a credential the munged at SOCK makes
# now with qpool's payload for this connection, saved in $QP_RAW_SAVE when
# set) on one TCP connection, prints each answer line, and "closed" when
# qpoold hangs up (else "open" at the end); WAIT sends nothing and waits
# for an answer. A first frame that is no hello is printed as an answer.
# Bounded: 30 s a step.
qp_raw() {
	QP_INTEG_DIR=$(dirname "${BASH_SOURCE[0]}") python3 - "$@" <<'PY2'
import json, os, secrets, shlex, socket, struct, subprocess, sys
sys.path.insert(0, os.environ["QP_INTEG_DIR"])
import qpauth
host, port, frames = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
s = socket.create_connection((host, port), timeout=30)
def send(obj):
    b = json.dumps(obj).encode()
    s.sendall(struct.pack(">I", len(b)) + b)
def recv():
    h = b""
    while len(h) < 4:
        c = s.recv(4 - len(h))
        if not c:
            return None
        h += c
    n = struct.unpack(">I", h)[0]
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            return None
        b += c
    return json.loads(b)
nonce = None
try:
    hello = recv()
except OSError:
    hello = None
if hello is None:
    print("closed"); sys.exit(0)
if hello.get("op") == "hello":
    nonce = hello.get("nonce")
else:
    print(json.dumps(hello, sort_keys=True))
for f in frames:
    if f == "WAIT":
        r = recv()
        print("closed" if r is None else json.dumps(r, sort_keys=True))
        if r is None:
            sys.exit(0)
        continue
    if f.startswith("@"):
        obj = {"op": "auth", "id": 0, "cred": open(f[1:]).read().strip()}
    elif f.startswith("%"):
        args = shlex.split(f[1:])
        payload = qpauth.client_payload(s, nonce, secrets.token_hex(16))
        cred = subprocess.run(["munge", "-S", args[0], "-s", payload] + args[1:], check=True,
                              capture_output=True, text=True, timeout=10).stdout.strip()
        if os.environ.get("QP_RAW_SAVE"):
            open(os.environ["QP_RAW_SAVE"], "w").write(cred + "\n")
        obj = {"op": "auth", "id": 0, "cred": cred}
    else:
        obj = json.loads(f)
    try:
        send(obj)
    except OSError:
        print("closed"); sys.exit(0)
    try:
        r = recv()
    except OSError:
        r = None
    if r is None:
        print("closed"); sys.exit(0)
    print(json.dumps(r, sort_keys=True))
# Then: did qpoold hang up ("closed"), or keep the connection ("open")?
s.settimeout(1)
try:
    r = recv()
    print("closed" if r is None else json.dumps(r, sort_keys=True))
except socket.timeout:
    print("open")
except OSError:
    print("closed")
PY2
}
