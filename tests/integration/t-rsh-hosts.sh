#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Remote starts between namespaced hosts (tests/integration/hosts.sh):
# qpool-rsh from a job's primary to its sister and back, a task that
# outlives its node's qnoded (killed: the agent hears the end and exits
# 137 with one line), the same node taking tasks again once its qnoded
# is back (gded's control socket reconnected), and qpoold's routing
# refusing malformed and unrouted task frames without harm.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
qp_hosts_reexec "$@"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
qp_setup
# The job must outlive its sister's qnoded being away for a while.
sed -i 's/^node_timeout = .*/node_timeout = 30/' "$QPOOL_CONF"
qp_hosts_init
p=h$$
srv=${p}s a=${p}a b=${p}b
qp_host "$srv" 1
qp_host "$a" 2
qp_host "$b" 3
qp_pool_start "$srv" 7001
cp "$QP_T/node.conf" "$QP_T/node.conf.pool"
for n in "$a" "$b"; do
	mkdir -m 1777 "$QP_T/tmp-$n"
	{ cat "$QP_T/node.conf.pool"; printf '[node]\ntmpdir = %s\n' "$QP_T/tmp-$n"; } > "$QP_T/node-$n.conf"
	cp "$QP_T/node-$n.conf" "$QP_T/node.conf"
	qp_node_on "$n" 0-1
done
w=$QP_T/work/qpuser1
go=$w/go
id=$(as qpuser1 qsub -N rh -l select=2:ncpus=1 -l place=scatter <<JOB
cd "\$PBS_O_WORKDIR"
a=\$(head -n 1 "\$PBS_NODEFILE"); b=\$(tail -n 1 "\$PBS_NODEFILE")
echo "hosts=\$a,\$b"
echo "there=\$(qpool-rsh "\$b" hostname)"
echo "back=\$(qpool-rsh "\$b" qpool-rsh "\$a" hostname)"
echo "pipe=\$(seq 1 20000 | qpool-rsh "\$b" 'md5sum' | cut -c1-32)"
echo "local=\$(seq 1 20000 | md5sum | cut -c1-32)"
qpool-rsh "\$b" 'echo \$\$ > long.pid; exec sleep 120' 2> long.err; echo "long=\$?"
for i in \$(seq 600); do [ -e "$go" ] && break; sleep 0.05; done
echo "again=\$(qpool-rsh "\$b" hostname)"
JOB
) || fail "qsub"
qp_wait "$id" running
qp_wait_file "$w/long.pid"
lpid=$(cat "$w/long.pid")

note "qpoold refuses malformed and unrouted task frames and stays up"
out=$(python3 - "$QP_T/qpoold.sock" "$id" "$a" "$b" <<'PY'
import json, socket, struct, sys
path, jobid, a, b = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(path)
def send(o):
    d = json.dumps(o).encode(); s.sendall(struct.pack(">I", len(d)) + d)
def recv():
    h = b""
    while len(h) < 4:
        c = s.recv(4 - len(h))
        if not c: return None
        h += c
    n = struct.unpack(">I", h)[0]; d = b""
    while len(d) < n:
        c = s.recv(n - len(d))
        if not c: return None
        d += c
    return json.loads(d)
send({"op": "node.register", "id": 1, "name": "intruder", "cpus": "0"}); print("register", recv().get("ok"))
for i, f in enumerate([
    {"op": "task.start"},
    {"op": "task.start", "jobid": "x", "to": 5, "task": [], "argv": "sh"},
    {"op": "task.start", "jobid": jobid, "dispatch": 1, "to": b, "task": "i/1", "argv": ["true"]},
    {"op": "task.out", "jobid": jobid, "to": a, "task": "i/1", "fd": 1, "data": "aGk="},
    {"op": "task.exit", "jobid": jobid, "to": a, "task": "nosuch", "status": 0},
    {"op": "task.bogus", "jobid": jobid, "to": a, "task": "t"},
], start=2):
    f["id"] = i; send(f); r = recv(); print(f["op"], r.get("ok"), r.get("error"))
PY
) || fail "the raw client failed: $out"
echo "$out"
[ "$(echo "$out" | grep -c ' False ')" = 6 ] || fail "qpoold accepted a frame it should refuse"
echo "$out" | grep -q "^task.start False node intruder runs no share of job $id" || fail "a node routed a job it does not run"
"$QP_BIN/qstat" >/dev/null || fail "qpoold is gone"

note "a task on a node whose qnoded stops ends; its agent says so"
qp_stop "$(qp_node_pid "$b")"
kill -KILL "$(qp_node_pid "$b")" 2>/dev/null
for ((i = 0; i < 400; i++)); do grep -q "^long=" "$w/rh.o$id" 2>/dev/null && break; sleep 0.05; done
sed -n 1,20p "$w/rh.o$id" 2>/dev/null
grep -qx "long=137" "$w/rh.o$id" || fail "the agent of a task on a lost qnoded did not exit 137: $(cat "$w/rh.o$id" "$w/long.err")"
grep -q "qpool-rsh: lost node $b" "$w/long.err" || fail "no 'lost node' line: $(cat "$w/long.err")"
for ((i = 0; i < 200; i++)); do on "$b" kill -0 "$lpid" 2>/dev/null || break; sleep 0.05; done
on "$b" kill -0 "$lpid" 2>/dev/null && fail "the task (pid $lpid on $b) outlived its agent"

note "the node's qnoded is back: tasks start there again"
cp "$QP_T/node-$b.conf" "$QP_T/node.conf"
qp_node_on "$b" 0-1
touch "$go"
qp_wait "$id" completed --timeout 60
out=$w/rh.o$id
cat "$out"
grep -qx "hosts=$a,$b" "$out" || fail "job not on $a,$b"
grep -qx "there=$b" "$out" || fail "qpool-rsh to the sister"
grep -qx "back=$a" "$out" || fail "qpool-rsh from the sister back to the primary"
grep -qx "pipe=$(seq 1 20000 | md5sum | cut -c1-32)" "$out" || fail "stdin through two nodes was not relayed whole"
grep -qx "again=$b" "$out" || fail "no task on $b after its qnoded came back"
echo "rsh hosts ok"
