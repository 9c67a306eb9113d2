#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gded as a sister of a job across nodes (docs/PARALLEL.md), driven by a
# spec written as qnoded writes it: it fences its share (cpuset, memory),
# writes PBS_NODEFILE from the allocation and makes TMPDIR, runs no script
# and opens no output file, holds until SIGTERM, then kills what runs in
# its group and leaves no process, group or TMPDIR; its result says
# exited 0, sister. A sister that cannot fence fails with the reason.
. "$(dirname "$0")/lib.sh"
[ -d /sys/fs/cgroup/cpuset ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no cpuset controller"
qp_setup
qp_start_server
node=${QP_NODE_PREFIX}n1
qp_start_node "$node"

d=$QP_T/sister
mkdir -p "$d" "$QP_T/tmp"
chmod 755 "$d" "$QP_T/tmp"
uid=$(id -u qpuser1) gid=$(id -g qpuser1)
jobid=$((900000 + $$ % 1000))
parent=$QP_CG_PARENT/$node
mode=v1
[ -f /sys/fs/cgroup/cgroup.controllers ] && mode=v2

# spec JOBID NODE_INDEX [CGROUP_PARENT]: a sister's spec of a three-node job.
spec() {
	cat <<SPEC
{"jobid": $1, "name": "wide", "queue": "batch", "user": "qpuser1", "uid": $uid, "gid": $gid,
 "workdir": "$QP_T/work/qpuser1", "home": "/home/qpuser1", "shell": "/bin/bash",
 "script": "$d/$1.sh", "stdout": "$d/$1.out", "stderr": "$d/$1.err",
 "nodefile": "$d/$1.nodes", "result": "$d/$1.result", "node": "$node",
 "ncpus": 1, "cpus": "0", "mems": "0", "mem": 67108864, "walltime": 600, "kill_grace": 1,
 "tmpdir_base": "$QP_T/tmp", "server": "srv", "ctl": "$d/$1.ctl", "task_socket": "$d/task.sock",
 "alloc": [{"node": "p0", "ncpus": 2, "mpiprocs": 2}, {"node": "$node", "ncpus": 1},
           {"node": "p2", "ncpus": 2, "mpiprocs": 1}],
 "node_index": $2,
 "cgroup": {"mode": "$mode", "root": "/sys/fs/cgroup", "parent": "${3:-$parent}"}}
SPEC
}
spec "$jobid" 1 > "$d/$jobid.json"
printf 'echo the script ran > %s/ran\n' "$d" > "$d/$jobid.sh"
# A control socket left by an earlier run of this id (its gded killed):
# replaced, so that tasks reach this run's.
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$d/$jobid.ctl"
[ -S "$d/$jobid.ctl" ] || fail "no stale control socket made"
"$QP_BIN/gded" --spec "$d/$jobid.json" 2> "$d/gded.err" &
gpid=$!

# Fenced: its group holds CPU 0 and 64 MiB, its nodefile and TMPDIR exist.
if [ "$mode" = v1 ]; then
	cpuset=/sys/fs/cgroup/cpuset/$parent/job.$jobid
	memgrp=/sys/fs/cgroup/memory/$parent/job.$jobid
	memfile=$memgrp/memory.limit_in_bytes
else
	cpuset=/sys/fs/cgroup/$parent/job.$jobid
	memgrp=$cpuset
	memfile=$memgrp/memory.max
fi
for _ in $(seq 100); do
	[ -s "$d/$jobid.nodes" ] && [ -d "$QP_T/tmp/pbs.$jobid.srv.$node" ] && break
	kill -0 "$gpid" 2>/dev/null || fail "gded ended early: $(cat "$d/gded.err")"
	sleep 0.05
done
[ -d "$cpuset" ] || fail "no cpuset group $cpuset"
cpus=$(cat "$cpuset/cpuset.cpus" 2>/dev/null || cat "$cpuset/cpuset.cpus.effective")
[ "$cpus" = 0 ] || fail "the sister's cpuset is '$cpus', not 0"
[ "$(cat "$memfile")" = 67108864 ] || fail "the sister's memory limit is $(cat "$memfile")"
want=$(printf 'p0\np0\n%s\np2\n' "$node")
[ "$(cat "$d/$jobid.nodes")" = "$want" ] || fail "nodefile: $(cat "$d/$jobid.nodes")"
[ "$(stat -c %U "$d/$jobid.nodes")" = qpuser1 ] || fail "the nodefile is not the owner's"
[ "$(stat -c '%U %a' "$QP_T/tmp/pbs.$jobid.srv.$node")" = "qpuser1 700" ] || fail "TMPDIR is $(stat -c '%U %a' "$QP_T/tmp/pbs.$jobid.srv.$node")"
note "fenced: cpuset $cpus, memory $(cat "$memfile"), nodefile and TMPDIR made"

# It holds: no script, no output file, and it is still there.
kill -0 "$gpid" 2>/dev/null || fail "the sister did not hold"
[ -e "$d/ran" ] && fail "a sister ran the script"
[ -e "$d/$jobid.out" ] || [ -e "$d/$jobid.err" ] && fail "a sister opened output files"
[ -e "$d/$jobid.result" ] && fail "a result while it holds"

# Something of the job runs in its group, not a task of gded's, as the
# owner, ignoring SIGTERM: the kill must come.
setpriv --reuid qpuser1 --regid "$gid" --clear-groups sh -c 'trap "" TERM; exec sleep 1000' &
task=$!
echo "$task" > "$cpuset/tasks" 2>/dev/null || echo "$task" > "$cpuset/cgroup.procs" || fail "cannot put $task in the group"
[ "$mode" = v1 ] && { echo "$task" > "$memgrp/tasks" || fail "cannot put $task in the memory group"; }
# Its freezer and pids groups too, where they are, as cgroup_job_attach does.
for h in freezer pids cpuacct; do
	g=/sys/fs/cgroup/$h/$parent/job.$jobid
	[ "$mode" = v1 ] && [ -d "$g" ] && echo "$task" > "$g/tasks"
done

# Tasks through its control socket, as qnoded starts them: one in its
# fence that ends on SIGTERM, one that ignores it. SIGTERM to gded: the
# first is told signal 15, the second signal 9 after the grace; then the
# result.
[ -S "$d/$jobid.ctl" ] || fail "no control socket"
PYTHONPATH=$(dirname "$0") python3 - "$d/$jobid.ctl" "$gpid" "$d/$jobid.nodes" "$cpus" <<'PY' || fail "sister tasks"
import os, signal, sys, time
from gdedctl import Ctl
path, gpid, nodefile, cpus = sys.argv[1:]
c = Ctl(path)
r = c.start("p0/1", ["sh", "-c", "grep Cpus_allowed_list /proc/self/status; echo $PBS_NODENUM $PBS_NP $PBS_NODEFILE $QPOOL_TASK_SOCKET"])
assert r["ok"], r
assert c.wait_exit("p0/1").get("status") == 0
out = c.output("p0/1").split()
assert out[1] == cpus and out[2:5] == ["1", "4", nodefile], out
assert out[5].endswith("/task.sock"), out
r1 = c.start("p0/2", ["sleep", "300"])
r2 = c.start("p0/3", ["sh", "-c", "trap '' TERM; echo ready; sleep 300"])
assert r1["ok"] and r2["ok"], (r1, r2)
c.wait_output("p0/3", "ready")
t0 = time.monotonic()
os.kill(int(gpid), signal.SIGTERM)
e = c.wait_exit("p0/2")
assert e.get("signal") == 15, e
e = c.wait_exit("p0/3")
assert e.get("signal") == 9, e
print("--- sister tasks: cpus %s, PBS_NODENUM 1, PBS_NP 4; on SIGTERM one told 15, the other 9 after %.1f s" %
      (out[1], time.monotonic() - t0))
PY
wait "$gpid"
rc=$?
[ "$rc" = 0 ] || fail "gded exited $rc: $(cat "$d/gded.err")"
[ -e "$d/$jobid.ctl" ] && fail "the control socket is left"
# A child of this shell: gone, or a zombie once killed.
for _ in $(seq 100); do
	st=$(ps -o stat= -p "$task" 2>/dev/null)
	case $st in ''|Z*) break ;; esac
	sleep 0.05
done
case $st in ''|Z*) wait "$task" 2>/dev/null ;; *) kill -KILL "$task"; fail "the job's process $task outlived the sister" ;; esac
res=$(cat "$d/$jobid.result")
note "result: $res"
python3 - "$d/$jobid.result" <<'PY' || fail "result: $res"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "exited" and r["exit_status"] == 0, r
assert r.get("sister") is True, r
assert not r["cancelled"] and not r["timeout"], r
assert "wrap" in r["times"] and "fenced" in r["times"], r
assert "exec" not in r["times"], r
PY
[ -d "$cpuset" ] && fail "the sister's group $cpuset is left"
left=$(find /sys/fs/cgroup -path "*/$parent/job.$jobid" -type d 2>/dev/null)
[ -z "$left" ] || fail "groups left: $left"
[ -e "$QP_T/tmp/pbs.$jobid.srv.$node" ] && fail "TMPDIR is left"
note "on SIGTERM: process killed, groups and TMPDIR removed, result exited 0 sister"

# A sister that cannot fence (its parent group does not exist) fails
# with the reason and leaves nothing.
bad=$((jobid + 1))
spec "$bad" 2 "$QP_CG_PARENT/no-such-node" > "$d/$bad.json"
"$QP_BIN/gded" --spec "$d/$bad.json" 2>> "$d/gded.err"
rc=$?
[ "$rc" = 0 ] || fail "gded exited $rc for an unfenceable sister"
python3 - "$d/$bad.result" <<'PY' || fail "result: $(cat "$d/$bad.result")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "failed", r
assert r["reason"].startswith("cgroup:") and "no-such-node" in r["reason"], r
PY
[ -e "$QP_T/tmp/pbs.$bad.srv.$node" ] && fail "TMPDIR of the failed sister is left"
note "unfenceable sister: failed, $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["reason"])' "$d/$bad.result")"

# A bad allocation is refused before anything is made.
python3 - "$d/$jobid.json" "$d/bad.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["node_index"] = 5
json.dump(s, open(sys.argv[2], "w"))
PY
out=$("$QP_BIN/gded" --spec "$d/bad.json" 2>&1)
rc=$?
[ "$rc" = 2 ] || fail "gded took a node_index outside alloc (exit $rc)"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "not one line: $out"
case $out in *'"node_index" 5 is outside "alloc" (3 nodes)'*) ;; *) fail "refusal: $out" ;; esac
note "refused: $out"
echo "sister ok"
