#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Caps on waiting jobs (issue 16): a queue's max_queued_per_user and
# max_queued, the server's max_queued_per_user over every queue. A
# submission beyond a cap is refused with one line and a non-zero status,
# creates nothing, and others' submissions still go in; a slot freed
# (qdel, or a job started) takes a new one again. Held jobs count.
. "$(dirname "$0")/lib.sh"
qp_setup "
[queue capped]
max_queued_per_user = 3
max_queued = 5

[server]
max_queued_per_user = 6"
qp_start_server
# No node: every job waits.
n_jobs() { "$QP_BIN/qstat" --table | grep -cE '^[0-9]+ '; }

note "queue capped: 3 per user, 5 in all"
ids=()
for i in 1 2; do ids+=("$(echo true | as qpuser1 qsub -q capped -N c$i)") || fail "qsub $i"; done
ids+=("$(echo true | as qpuser1 qsub -q capped -h -N c3)") || fail "qsub held"
out=$(echo true | as qpuser1 qsub -q capped -N c4 2>&1) && fail "a 4th job of qpuser1 went in: $out"
echo "qsub says: $out"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "not one line: $out"
echo "$out" | grep -q "max_queued_per_user" || fail "the refusal does not name the cap: $out"
[ "$(n_jobs)" = 3 ] || fail "$(n_jobs) jobs after a refused submission, want 3"
for i in 1 2; do echo true | as qpuser2 qsub -q capped -N d$i > /dev/null || fail "qpuser2's qsub $i"; done
out=$(echo true | as qpuser3 qsub -q capped 2>&1) && fail "a 6th job went into a queue of max_queued 5"
echo "qsub says: $out"
echo "$out" | grep -q "max_queued)" || fail "the refusal does not name max_queued: $out"
"$QP_BIN/qdel" "${ids[0]}" || fail qdel
echo true | as qpuser3 qsub -q capped > /dev/null || fail "qsub after a qdel freed a place"

note "server: 6 per user over every queue"
for i in 1 2 3 4; do echo true | as qpuser1 qsub -N b$i > /dev/null || fail "qsub b$i"; done
out=$(echo true | as qpuser1 qsub -N b5 2>&1) && fail "a 7th waiting job of qpuser1 went in"
echo "qsub says: $out"
echo "$out" | grep -q "qpuser1 has 6 jobs waiting" || fail "the refusal does not say: $out"
echo true | as qpuser2 qsub > /dev/null || fail "qpuser2 refused for qpuser1's jobs"

note "a job too big for any reply is refused at submit; one just below works in qstat -f"
cat > "$QP_T/big.py" <<'PY'
import json, socket, struct, sys
def submit(size, env=10):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    script = "true\n" + "#" * (size - 6) + "\n"
    b = json.dumps({"op": "submit", "id": 1, "script": script, "name": "big",
                    "workdir": "/tmp", "env": {"A": "x" * env}}).encode()
    s.sendall(struct.pack(">I", len(b)) + b)
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return json.loads(data[4:])
r = submit((1 << 20) - 4096)
if r.get("ok") or "below" not in r.get("error", ""):
    sys.exit(f"a script of 1 MiB - 4 KiB: {r}")
print("refused:", r["error"])
# The environment counts: 800 KiB of script and 200 KiB of it.
r = submit(800 * 1024, 200 * 1024)
if r.get("ok") or "below" not in r.get("error", ""):
    sys.exit(f"a script of 800 KiB with 200 KiB of environment: {r}")
r = submit(900 * 1024)
if not r.get("ok"):
    sys.exit(f"a script of 900 KiB: {r}")
print(r["jobid"])
PY
out=$(as qpuser3 python3 "$QP_T/big.py" "$QP_T/qpoold.sock") || fail "big submissions: $out"
echo "$out" | head -n 1
big=$(echo "$out" | tail -n 1)
n=$(as qpuser3 "$QP_BIN/qstat" -f --json "$big" | wc -c)
[ "$n" -gt 900000 ] || fail "qstat -f of a 900 KiB job printed $n bytes"
"$QP_BIN/qstat" -f --json > /dev/null || fail "root's qstat -f with a 900 KiB job in the pool"

note "a job whose request is above the wire's 1 MiB is refused by qsub and sbatch themselves"
# A script of 1000 KiB, sent with 100 KiB of environment (qsub -V, and
# sbatch's default --export=ALL): one line, non-zero, no job.
{ echo '#!/bin/sh'; echo true; head -c $((1000 * 1024)) /dev/zero | tr '\0' '#' | fold -w 1000; echo; } > "$QP_T/huge.sh"
chmod 644 "$QP_T/huge.sh"
big_env=$(head -c $((100 * 1024)) /dev/zero | tr '\0' x)
before=$(n_jobs)
for cmd in "qsub -V" "sbatch"; do
	out=$(as qpuser3 env QP_BIG="$big_env" $cmd "$QP_T/huge.sh" 2>&1) && fail "$cmd of a 1100 KiB request went in: $out"
	echo "$cmd says: $out"
	[ "$(echo "$out" | wc -l)" = 1 ] || fail "$cmd: not one line: $out"
	echo "$out" | grep -q "too large to send" || fail "$cmd: the refusal does not say too large: $out"
done
[ "$(n_jobs)" = "$before" ] || fail "$(n_jobs) jobs after two refused submissions, want $before"
kill -0 "$QP_SERVER_PID" || fail "qpoold died on a refused large request"

note "a started job frees its place"
qp_start_node n1
for _ in $(seq 200); do
	out=$(echo true | as qpuser1 qsub -N b6 2>&1) && break
	sleep 0.1
done
echo "$out" | grep -qE '^[0-9]+$' || fail "qsub after jobs started: $out"
kill -0 "$QP_SERVER_PID" || fail "qpoold died"
echo "limits ok"
