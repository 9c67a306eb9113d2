#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A job's environment is capped (4096 variables, 256 KiB): qsub -V or -v
# past it is refused with one line and nothing is recorded; qpoold
# refuses the same from a client that skips qsub's check; a large
# environment under the cap reaches the job whole.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
qp_start_node n1

w=$QP_T/work/qpuser1
# big_env N: N extra exported variables, then the command.
big_env() {
	local n=$1; shift
	as qpuser1 python3 -c '
import os, sys
n = int(sys.argv[1])
env = dict(os.environ)
env.update(("QP_BIG_%d" % i, "v%d" % i) for i in range(n))
os.execvpe(sys.argv[2], sys.argv[2:], env)' "$n" "$@"
}

note "qsub -V past the variable cap"
out=$(big_env 5000 qsub -V <<<'true' 2>&1) && fail "qsub -V with 5000 variables was accepted: $out"
echo "qsub: $out"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "more than one line: $out"
echo "$out" | grep -q "variables; at most 4096" || fail "unclear refusal: $out"

note "qsub -v past the size cap"
# Three of 100 KB each: one string may not pass 128 KiB in execve.
long=$(head -c 100000 /dev/zero | tr '\0' x)
out=$(as qpuser1 env B1="$long" B2="$long" B3="$long" qsub -v B1,B2,B3 <<<'true' 2>&1) &&
	fail "a 300 KB -v was accepted"
echo "qsub: $out"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "more than one line: $out"
echo "$out" | grep -q "KiB; at most 256 KiB" || fail "unclear refusal: $out"

note "qpoold refuses it without qsub's check"
as qpuser1 python3 - "$QP_T/qpoold.sock" "$w" > "$QP_T/raw.out" <<'PY' || fail "raw submit: $(cat "$QP_T/raw.out")"
import json, socket, struct, sys
env = {"QP_BIG_%d" % i: "v" for i in range(5000)}
msg = json.dumps({"op": "submit", "id": 1, "script": "true\n", "name": "raw",
                  "workdir": sys.argv[2], "env": env}).encode()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(struct.pack(">I", len(msg)) + msg)
data = b""
while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
print(data[4:].decode())
PY
echo "qpoold: $(cat "$QP_T/raw.out")"
grep -q "variables; at most 4096" "$QP_T/raw.out" || fail "qpoold did not refuse: $(cat "$QP_T/raw.out")"
njobs=$("$QP_BIN/qstat" -x --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
[ "$njobs" = 0 ] || fail "$njobs jobs were recorded: $("$QP_BIN/qstat" -x)"

note "4000 variables, under the cap, reach the job"
id=$(big_env 4000 qsub -V -o "$w/env.out" <<<'env | grep -c "^QP_BIG_"') || fail "qsub -V 4000"
qp_wait "$id" completed failed
[ "$(qp_state "$id")" = completed ] || fail "job $id: $(qp_field "$id" reason)"
[ "$(cat "$w/env.out")" = 4000 ] || fail "the job saw $(cat "$w/env.out") of 4000 variables"
echo "env cap ok"
