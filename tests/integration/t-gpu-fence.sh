#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU fence of gded (docs/GPUS.md), driven by specs written as qnoded
# writes them, with GPUs the test makes (mknod, numbers no driver serves):
# a job given GPU 0 of two opens its own (ENXIO: the fence let it through)
# and not the other (EPERM), sees CUDA_VISIBLE_DEVICES=0 and its
# PBS_GPUFILE (gone with the job), and leaves no group; a job with no GPU of its own opens
# neither; on a node without GPUs a job gets no devices group at all; the
# same fence on cgroup v2 (a device BPF program), on the unified mount of
# a hybrid host; a task started on a sister gets the sister's GPU and
# variables, not the first node's; a bad gpus member is refused in one
# line.
. "$(dirname "$0")/lib.sh"
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	mode=v2
elif [ -d /sys/fs/cgroup/devices ]; then
	mode=v1
else
	skip "no devices controller and no cgroup v2"
fi
qp_setup
qp_start_server
node=${QP_NODE_PREFIX}n1
qp_start_node "$node"

d=$QP_T/gpu
mkdir -p "$d/jobs" "$d/dev"
chmod 755 "$d" "$d/dev"
chmod 711 "$d/jobs"
# A file system mounted nodev (systemd's tmp.mount: /tmp on Debian 13)
# makes every open of a device on it EACCES, fence or not: the devices
# go in a directory of this test's own under /dev then.
if findmnt -no OPTIONS -T "$d/dev" | tr , '\n' | grep -qx nodev; then
	devdir=$(mktemp -d /dev/qpool-gpu.XXXXXX) || fail "cannot make a directory under /dev"
	gpu_devdir_remove() { rm -rf "$devdir"; }
	QP_ATEXIT+=(gpu_devdir_remove)
	chmod 755 "$devdir"
	rmdir "$d/dev"
	ln -s "$devdir" "$d/dev"
fi
mknod -m 666 "$d/dev/nvidia0" c 195 0 || skip "mknod: cannot make device files here"
mknod -m 666 "$d/dev/nvidia1" c 195 1
uid=$(id -u qpuser1) gid=$(id -g qpuser1)
base=$((910000 + $$ % 1000))
parent=$QP_CG_PARENT/$node
# On v2 under systemd the node groups live in qpool-cgroup.service's
# delegated tree (make vm-check's guests): the parent is where qnoded
# made them, relative to the mount.
if [ "$mode" = v2 ]; then
	grp=$(find /sys/fs/cgroup -maxdepth 5 -type d -path "*/$parent" | head -n 1)
	[ -n "$grp" ] || fail "no node group $parent under /sys/fs/cgroup"
	parent=${grp#/sys/fs/cgroup/}
fi
w=$QP_T/work/qpuser1

# spec JOBID GPUS GPUS_NODE [MODE ROOT PARENT]: a one-node job's spec.
spec() {
	cat <<SPEC
{"jobid": $1, "name": "gpu", "queue": "batch", "user": "qpuser1", "uid": $uid, "gid": $gid,
 "workdir": "$QP_T/work/qpuser1", "home": "/home/qpuser1", "shell": "/bin/bash",
 "script": "$d/jobs/$1.sh", "stdout": "$w/$1.out", "stderr": "$w/$1.err",
 "nodefile": "$d/jobs/$1.nodes", "result": "$d/jobs/$1.result", "node": "$node",
 "ncpus": 1, "walltime": 120, "kill_grace": 1,
 "env": {"CUDA_VISIBLE_DEVICES": "0,1"},
 "gpus": $2, "gpus_node": $3,
 "cgroup": {"mode": "${4:-$mode}", "root": "${5:-/sys/fs/cgroup}", "parent": "${6:-$parent}"}}
SPEC
}
both='[{"major": 195, "minor": 0}, {"major": 195, "minor": 1}]'
gpu0='[{"index": 0, "file": "'$d'/dev/nvidia0", "major": 195, "minor": 0}]'

# The job: opens each device file, says what it got, and its variables.
cat > "$d/probe.py" <<'PY'
import errno, os, sys
for f in sys.argv[1:]:
    try:
        os.close(os.open(f, os.O_RDONLY))
        print(os.path.basename(f), "opened")
    except OSError as e:
        print(os.path.basename(f), errno.errorcode[e.errno])
for v in ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "QPOOL_GPUS",
          "SLURM_JOB_GPUS", "PBS_GPUFILE"):
    print(v, os.environ.get(v, "-"))
print("devices", " ".join(l.split(":", 2)[2] for l in open("/proc/self/cgroup") if ":devices:" in l) or "-")
# PBS_GPUFILE as the job sees it: gded removes it at the job's end.
g = os.environ.get("PBS_GPUFILE")
if g:
    import pwd
    print("gpufile", ",".join(open(g).read().split()))
    print("gpufile-owner", pwd.getpwuid(os.stat(g).st_uid).pw_name)
PY
chmod 644 "$d/probe.py"

# run JOBID: gded runs the spec $d/JOBID.json to its end; its output.
run() {
	printf 'exec python3 %s %s %s\n' "$d/probe.py" "$d/dev/nvidia0" "$d/dev/nvidia1" > "$d/jobs/$1.sh"
	chown qpuser1 "$d/jobs/$1.sh"
	chmod 500 "$d/jobs/$1.sh"
	timeout 120 "$QP_BIN/gded" --spec "$d/$1.json" 2> "$d/$1.gded" || fail "gded $1 exited $?: $(cat "$d/$1.gded")"
	python3 - "$d/jobs/$1.result" <<'PY' || fail "job $1: $(cat "$d/jobs/$1.result") $(cat "$w/$1.err" 2>/dev/null)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "exited" and r["exit_status"] == 0, r
PY
	left=$(find /sys/fs/cgroup -path "*/job.$1" -type d 2>/dev/null)
	[ -z "$left" ] || fail "job $1 left its groups: $left"
}

# want JOBID LINE...: each line is in the job's output.
want() {
	local id=$1 l; shift
	for l in "$@"; do
		grep -qxF "$l" "$w/$id.out" || fail "job $id: no line '$l' in: $(cat "$w/$id.out")"
	done
}

# 1. GPU 0 of two.
id=$base
spec "$id" "$gpu0" "$both" > "$d/$id.json"
run "$id"
want "$id" "nvidia0 ENXIO" "nvidia1 EPERM" "CUDA_VISIBLE_DEVICES 0" "ROCR_VISIBLE_DEVICES 0" \
	"GPU_DEVICE_ORDINAL 0" "QPOOL_GPUS 0" "SLURM_JOB_GPUS 0" "PBS_GPUFILE $d/jobs/$id.gpus"
want "$id" "gpufile $node-gpu0" "gpufile-owner qpuser1"
[ ! -e "$d/jobs/$id.gpus" ] || fail "gded left PBS_GPUFILE $d/jobs/$id.gpus after the job"
[ "$mode" = v1 ] && want "$id" "devices /$parent/job.$id"
note "GPU 0 of 2 ($mode): $(tr '\n' ' ' < "$w/$id.out")"

# 2. No GPU of its own on a GPU node: neither opens; no variable, no file.
id=$((base + 1))
spec "$id" '[]' "$both" > "$d/$id.json"
run "$id"
want "$id" "nvidia0 EPERM" "nvidia1 EPERM" "CUDA_VISIBLE_DEVICES -" "QPOOL_GPUS -" "PBS_GPUFILE -"
[ -e "$d/jobs/$id.gpus" ] && fail "a GPU file for a job without GPUs"
note "no GPU of its own: both EPERM, no variable"

# 3. A node without GPUs: no fence and no devices group made for it.
id=$((base + 2))
spec "$id" null null > "$d/$id.json"
run "$id"
want "$id" "nvidia0 ENXIO" "nvidia1 ENXIO" "CUDA_VISIBLE_DEVICES -"
if [ "$mode" = v1 ]; then
	grep -q "job.$id" "$w/$id.out" && fail "a job without a device fence joined a devices group: $(cat "$w/$id.out")"
fi
note "node without GPUs: no fence, $(grep '^devices' "$w/$id.out")"

# 4. cgroup v2: the device program, on the unified mount of a hybrid host
# (the kernel runs its device programs for every open there too).
if [ "$mode" = v1 ] && [ -f /sys/fs/cgroup/unified/cgroup.procs ]; then
	v2parent=$QP_CG_PARENT-v2/$node
	mkdir -p "/sys/fs/cgroup/unified/$v2parent"
	id=$((base + 3))
	spec "$id" "$gpu0" "$both" v2 /sys/fs/cgroup/unified "$v2parent" > "$d/$id.json"
	run "$id"
	want "$id" "nvidia0 ENXIO" "nvidia1 EPERM" "CUDA_VISIBLE_DEVICES 0"
	rmdir "/sys/fs/cgroup/unified/$v2parent" "/sys/fs/cgroup/unified/$QP_CG_PARENT-v2" ||
		fail "the v2 job's parent is not empty"
	note "v2 device program (hybrid host's unified mount): own ENXIO, other EPERM, group gone"
elif [ "$mode" = v1 ]; then
	note "no cgroup2 mount beside v1: the v2 fence is held by make vm-check's guests"
fi

# 5. A task on a sister, as qpool-rsh, pbsdsh or qexec start one from the
# first node: in the sister's fence, with the sister's GPU variables
# whatever the first node's environment sent.
id=$((base + 5))
python3 - "$d/$base.json" "$d/$id.json" "$id" "$node" "$d" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
jid, node, d = int(sys.argv[3]), sys.argv[4], sys.argv[5]
s.update(jobid=jid, script="%s/jobs/%d.sh" % (d, jid), nodefile="%s/jobs/%d.nodes" % (d, jid),
         result="%s/jobs/%d.result" % (d, jid), ctl="%s/jobs/%d.ctl" % (d, jid), node_index=1,
         alloc=[{"node": "n0", "ncpus": 1, "gpus": [0], "ngpus": 1},
                {"node": node, "ncpus": 1, "gpus": [1], "ngpus": 1}],
         gpus=[{"index": 1, "file": d + "/dev/nvidia1", "major": 195, "minor": 1}])
json.dump(s, open(sys.argv[2], "w"))
PY
"$QP_BIN/gded" --spec "$d/$id.json" 2> "$d/$id.gded" &
gpid=$!
for _ in $(seq 600); do
	[ -S "$d/jobs/$id.ctl" ] && break
	kill -0 "$gpid" 2>/dev/null || break
	sleep 0.1
done
[ -S "$d/jobs/$id.ctl" ] || fail "the sister made no control socket: $(cat "$d/$id.gded")"
PYTHONPATH=$(dirname "$0") python3 - "$d/jobs/$id.ctl" "$d" "$gpid" > "$d/$id.task" <<'PY' || fail "sister task: $(cat "$d/$id.task")"
import os, signal, sys
from gdedctl import Ctl
ctl, d, gpid = sys.argv[1:]
c = Ctl(ctl, timeout=60)
first = {"CUDA_VISIBLE_DEVICES": "0,1", "QPOOL_GPUS": "0", "SLURM_JOB_GPUS": "0", "GPU_DEVICE_ORDINAL": "0,1"}
r = c.start("n0/1", ["python3", d + "/probe.py", d + "/dev/nvidia0", d + "/dev/nvidia1"], env=first)
assert r["ok"], r
assert c.wait_exit("n0/1", timeout=60).get("status") == 0, c.output("n0/1", 2)
sys.stdout.write(c.output("n0/1"))
os.kill(int(gpid), signal.SIGTERM)
PY
wait "$gpid" || fail "the sister's gded exited $?: $(cat "$d/$id.gded")"
for l in "nvidia0 EPERM" "nvidia1 ENXIO" "CUDA_VISIBLE_DEVICES 0" "QPOOL_GPUS 1" "SLURM_JOB_GPUS 1" \
	"PBS_GPUFILE $d/jobs/$id.gpus"; do
	grep -qxF "$l" "$d/$id.task" || fail "sister task: no line '$l' in: $(cat "$d/$id.task")"
done
grep -qxF "gpufile n0-gpu0,$node-gpu1" "$d/$id.task" || fail "sister's PBS_GPUFILE: $(cat "$d/$id.task")"
left=$(find /sys/fs/cgroup -path "*/job.$id" -type d 2>/dev/null)
[ -z "$left" ] || fail "the sister left its groups: $left"
note "sister task: the sister's GPU 1 (ENXIO), not the first node's 0 (EPERM), its variables"

# 6. A bad member: one line naming it, nothing made.
id=$((base + 4))
spec "$id" '[{"index": 1, "file": "/dev/nvidia1", "major": 195, "minor": 7}]' "$both" > "$d/$id.json"
out=$("$QP_BIN/gded" --spec "$d/$id.json" 2>&1)
rc=$?
[ "$rc" = 2 ] || fail "gded took an own GPU the node does not list (exit $rc)"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "not one line: $out"
case $out in *'gpus[0]: device 195:7 is not in "gpus_node"'*) ;; *) fail "refusal: $out" ;; esac
[ -e "$d/jobs/$id.result" ] && fail "a result for a refused spec"
left=$(find /sys/fs/cgroup -path "*/job.$id" -type d 2>/dev/null)
[ -z "$left" ] || fail "a refused spec made groups: $left"
note "refused: $out"
echo "gpu fence ok"
