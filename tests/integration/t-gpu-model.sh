#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GPU models (docs/GPUS.md). A real qnoded given `gpus = a100:DEV/nvidia0
# v100:DEV/nvidia1` (mknod'd devices no driver serves): the node lists
# each GPU's model, pbsnodes resources_available.gpu_model, sinfo %G and
# scontrol's Gres= say gpu:a100:1,gpu:v100:1. A PBS job of
# select=...:gpu_model=v100 opens nvidia1 (ENXIO: the fence let it
# through) and not nvidia0 (EPERM); sbatch --gres=gpu:a100:1 the other
# way round. With the v100 held, a second v100 job waits though the a100
# is free, and an a100 job runs past it. A model no node has, more GPUs
# of a model than a node has, and bad forms are refused in one line, no
# job made; `gpus = :` stops qnoded in one line; a held job keeps its
# model across a qpoold restart. Simulated nodes
# (--sim-gpus a100:2,v100:2 and v100:4) take jobs by model: each lands on
# a node that has them and holds GPUs of that model there.
. "$(dirname "$0")/lib.sh"
if [ -f /sys/fs/cgroup/cgroup.controllers ] || [ -d /sys/fs/cgroup/devices ]; then
	:
else
	skip "no devices controller and no cgroup v2"
fi
qp_setup
d=$QP_T/gpu
mkdir -p "$d/dev"
chmod 755 "$d" "$d/dev"
# On a file system mounted nodev every open of a device is EACCES, fence
# or not (t-gpu-fence.sh): the devices go under /dev then.
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
printf '[node]\ngpus = A100:%s v100:%s\n' "$d/dev/nvidia0" "$d/dev/nvidia1" >> "$QPOOL_CONF"
qp_start_server
P=$QP_NODE_PREFIX
node=${P}n1
qp_start_node "$node"
w=$QP_T/work/qpuser1

cat > "$d/probe.py" <<'PY'
import errno, os, sys
for f in sys.argv[1:]:
    try:
        os.close(os.open(f, os.O_RDONLY))
        print(os.path.basename(f), "opened")
    except OSError as e:
        print(os.path.basename(f), errno.errorcode[e.errno])
print("QPOOL_GPUS", os.environ.get("QPOOL_GPUS", "-"))
PY
chmod 644 "$d/probe.py"
probe="python3 $d/probe.py $d/dev/nvidia0 $d/dev/nvidia1"

# The node object of NAME as qstat --nodes --json has it.
node_json() {
	"$QP_BIN/qstat" --nodes --json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["nodes"]:
    if n["name"] == sys.argv[1]:
        print(json.dumps(n, sort_keys=True))
' "$1"
}
# want FILE LINE...: each line is in FILE.
want() {
	local f=$1 l; shift
	for l in "$@"; do
		grep -qxF "$l" "$f" || fail "no line '$l' in $f: $(cat "$f")"
	done
}
# refused CMD...: as qpuser1, exits non-zero with one line; prints it.
refused() {
	local out rc
	out=$(printf '#!/bin/sh\ntrue\n' | as qpuser1 "$@" 2>&1)
	rc=$?
	[ "$rc" != 0 ] || fail "$* was accepted: $out"
	[ "$(wc -l <<< "$out")" = 1 ] || fail "$*: not one line: $out"
	printf '%s\n' "$out"
}

note "the node: its GPUs' models, in pbsnodes, sinfo and scontrol"
node_json "$node" | python3 -c '
import json, sys
n = json.load(sys.stdin)
assert [g["model"] for g in n["gpus"]] == ["a100", "v100"], n["gpus"]
' || fail "models: $(node_json "$node")"
out=$("$QP_BIN/pbsnodes" "$node") || fail "pbsnodes: $out"
grep -qx ' *resources_available.gpu_model = a100,v100' <<< "$out" || fail "pbsnodes: $out"
out=$("$QP_BIN/sinfo" -h -n "$node" -o '%G') || fail "sinfo: $out"
[ "$out" = gpu:a100:1,gpu:v100:1 ] || fail "sinfo %G: '$out'"
out=$("$QP_BIN/scontrol" show node "$node") || fail "scontrol: $out"
grep -qw 'Gres=gpu:a100:1,gpu:v100:1' <<< "$out" || fail "scontrol show node: $out"

note "PBS gpu_model=v100: its GPU opens, the a100 does not"
id=$(as qpuser1 qsub -N pv -l select=1:ncpus=1:ngpus=1:gpu_model=V100 -o "$w/pv.out" -j oe <<< "$probe") ||
	fail "qsub: $id"
qp_wait "$id" completed
want "$w/pv.out" "nvidia0 EPERM" "nvidia1 ENXIO" "QPOOL_GPUS 1"
[ "$(qp_field "$id" Resource_List.gpu_model)" = v100 ] || fail "qstat -f: $("$QP_BIN/qstat" -x -f "$id")"

note "sbatch --gres=gpu:a100:1: the a100 opens, the v100 does not"
id=$(as qpuser1 sbatch --parsable -o "$w/sa.out" --gres=gpu:a100:1 --wrap "$probe") || fail "sbatch: $id"
qp_wait "$id" completed
want "$w/sa.out" "nvidia0 ENXIO" "nvidia1 EPERM" "QPOOL_GPUS 0"

note "the v100 held: a second v100 job waits, an a100 job runs past it"
hold=$(as qpuser1 sbatch --parsable -o /dev/null --gpus=v100:1 \
	--wrap "for i in \$(seq 1200); do [ -e $d/go ] && exit 0; sleep 0.1; done; exit 1") || fail "sbatch: $hold"
qp_wait "$hold" running
second=$(as qpuser1 qsub -l ngpus=1,gpu_model=v100 -o /dev/null -j oe <<< true) || fail "qsub: $second"
third=$(as qpuser1 sbatch --parsable -o "$w/third.out" --gpus-per-node=a100:1 --wrap "$probe") ||
	fail "sbatch: $third"
qp_wait "$third" completed
want "$w/third.out" "nvidia0 ENXIO" "nvidia1 EPERM"
[ "$(qp_state "$second")" = queued ] || fail "the second v100 job is $(qp_state "$second") while the v100 is held"
touch "$d/go"
qp_wait "$hold" completed
qp_wait "$second" completed

note "a held v100 job keeps its model across a qpoold restart"
held=$(as qpuser1 qsub -h -l select=1:ncpus=1:ngpus=1:gpu_model=v100 -o "$w/held.out" -j oe <<< "$probe") ||
	fail "qsub -h: $held"
qp_wait "$held" held
qp_stop "$QP_SERVER_PID"
qp_start_server
for _ in $(seq 400); do
	"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^${node}[[:space:]].*up" && break
	sleep 0.05
done
[ "$(qp_field "$held" Resource_List.gpu_model)" = v100 ] || fail "after the restart: $("$QP_BIN/qstat" -x -f "$held")"
as qpuser1 qrls "$held" || fail "qrls $held"
qp_wait "$held" completed
want "$w/held.out" "nvidia0 EPERM" "nvidia1 ENXIO" "QPOOL_GPUS 1"

note "refused in one line: a model no node has, too many of one, bad forms"
n_before=$("$QP_BIN/qstat" -x --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
out=$(refused sbatch --gres=gpu:nosuch:1)
grep -q 'Invalid generic resource (gres) specification.*gpu_model=nosuch: no node of this pool has GPUs of that model' <<< "$out" ||
	fail "sbatch --gres=gpu:nosuch:1: $out"
out=$(refused sbatch --gres=gpu:a100:2)
grep -q 'Requested node configuration is not available.*more GPUs of that model than any node has' <<< "$out" ||
	fail "sbatch --gres=gpu:a100:2: $out"
out=$(refused qsub -l ngpus=1,gpu_model=h100)
grep -q 'gpu_model=h100: no node of this pool has GPUs of that model' <<< "$out" || fail "qsub gpu_model=h100: $out"
out=$(refused qsub -l gpu_model=a100)
grep -q 'gpu_model=a100: the job asks for no GPU (give ngpus)' <<< "$out" || fail "qsub without ngpus: $out"
out=$(refused sbatch --gpus=a100:-1)
grep -q -- '--gpus=a100:-1: not a number of GPUs' <<< "$out" || fail "sbatch --gpus=a100:-1: $out"
out=$(refused sbatch --gres=gpu:a/b:1)
grep -q 'Invalid generic resource (gres) specification' <<< "$out" || fail "sbatch --gres=gpu:a/b:1: $out"
n_after=$("$QP_BIN/qstat" -x --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
[ "$n_before" = "$n_after" ] || fail "a refused submission made a job ($n_before jobs, now $n_after)"

note "gpus = : stops qnoded in one line"
grep -v '^gpus = ' "$QPOOL_CONF" > "$QP_T/bad.conf"
printf '[node]\ngpus = :\n' >> "$QP_T/bad.conf"
out=$(timeout 60 "$QP_BIN/qnoded" -f "$QP_T/bad.conf" --name "${P}bad" 2>&1)
rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "qnoded with gpus = : exited $rc: $out"
[ "$(wc -l <<< "$out")" = 1 ] || fail "qnoded with gpus = : not one line: $out"
grep -qF 'a GPU model cannot be empty' <<< "$out" || fail "qnoded with gpus = : $out"
out=$("$QP_BIN/qnoded" -f "$QPOOL_CONF" --simulate 1 --sim-gpus a100:0 2>&1) &&
	fail "qnoded --sim-gpus a100:0 started: $out"
[ "$(wc -l <<< "$out")" = 1 ] && grep -q -- '--sim-gpus a100:0' <<< "$out" || fail "qnoded --sim-gpus a100:0: $out"

note "simulated GPU nodes: jobs land where their model is"
sim() {  # NAME COUNT GPUS
	"$QP_BIN/qnoded" -f "$QPOOL_CONF" --simulate "$2" --name "$1" --sim-gpus "$3" \
		--sim-topology "pack:1 core:4 pu:1" >> "$QP_T/qnoded-$1.log" 2>&1 &
	QP_PIDS+=($!)
}
sim "${P}sa" 3 a100:2,v100:2
sim "${P}sv" 3 v100:4
for _ in $(seq 400); do
	[ "$("$QP_BIN/qstat" --nodes 2>/dev/null | grep -cE "^${P}s[av]-[0-9]+ +up")" = 6 ] && break
	sleep 0.05
done
[ "$("$QP_BIN/qstat" --nodes | grep -cE "^${P}s[av]-[0-9]+ +up")" = 6 ] ||
	fail "the simulated nodes are not all up: $("$QP_BIN/qstat" --nodes)"
out=$("$QP_BIN/sinfo" -h -n "${P}sa-0" -o '%G')
[ "$out" = gpu:a100:2,gpu:v100:2 ] || fail "sinfo %G of a simulated node: '$out'"
# Each job runs 60 s (QPOOL_SIM_RUNTIME) so all are seen at once.
slow=(--export=QPOOL_SIM_RUNTIME=60)
j1=$(as qpuser1 sbatch --parsable "${slow[@]}" -o /dev/null --gres=gpu:a100:2 --wrap true) || fail "sbatch: $j1"
j2=$(as qpuser1 sbatch --parsable "${slow[@]}" -o /dev/null -N 2 --gpus-per-node=a100:2 --wrap true) ||
	fail "sbatch: $j2"
j3=$(as qpuser1 qsub -v QPOOL_SIM_RUNTIME=60 -o /dev/null -j oe -l select=1:ncpus=1:ngpus=3:gpu_model=v100 <<< true) ||
	fail "qsub: $j3"
j4=$(as qpuser1 qsub -v QPOOL_SIM_RUNTIME=60 -o /dev/null -j oe -l select=1:ncpus=1:ngpus=2:gpu_model=v100 <<< true) ||
	fail "qsub: $j4"
for j in "$j1" "$j2" "$j3" "$j4"; do qp_wait "$j" running; done
# held MODEL JOB: what each node holding JOB's GPUs says of them, one
# "node model" line per GPU, and checks JOB holds only MODEL there.
"$QP_BIN/qstat" --nodes --json > "$QP_T/nodes.json"
held() {
	python3 - "$QP_T/nodes.json" "$2" "$1" <<'PY'
import json, sys
nodes, job, model = json.load(open(sys.argv[1]))["nodes"], int(sys.argv[2]), sys.argv[3]
got = [(n["name"], g["model"]) for n in nodes for g in n.get("gpus", []) if g.get("job") == job]
for name, m in got:
    print(name, m)
assert got and all(m == model for _, m in got), got
PY
}
h1=$(held a100 "$j1") || fail "job $j1 (--gres=gpu:a100:2): $h1"
grep -q "^${P}sa-" <<< "$h1" || fail "job $j1 is not on a simulated a100 node: $h1"
h2=$(held a100 "$j2") || fail "job $j2: $h2"
[ "$(cut -d' ' -f1 <<< "$h2" | sort -u | grep -c "^${P}sa-")" = 2 ] || fail "job $j2 is not on two a100 nodes: $h2"
h3=$(held v100 "$j3") || fail "job $j3: $h3"
grep -q "^${P}sv-" <<< "$h3" || fail "job $j3 (3 v100) is not on a v100:4 node: $h3"
h4=$(held v100 "$j4") || fail "job $j4: $h4"
[ "$(wc -l <<< "$h4")" = 2 ] || fail "job $j4 holds other than 2 GPUs: $h4"
# squeue and qstat name the node each holds.
out=$("$QP_BIN/squeue" -h -j "$j1" -o '%N %b')
[ "$out" = "$(cut -d' ' -f1 <<< "$h1" | sort -u) gres/gpu:a100:2" ] || fail "squeue %N %b of $j1: '$out', holds $h1"
[ "$(qp_field "$j3" exec_host)" = "$(cut -d' ' -f1 <<< "$h3" | sort -u)" ] ||
	fail "qstat exec_host of $j3: $(qp_field "$j3" exec_host), holds $h3"
note "placed by model: $j1 on $(cut -d' ' -f1 <<< "$h1" | sort -u | tr '\n' ' ')$j3 on $(cut -d' ' -f1 <<< "$h3" | sort -u)"
for j in "$j1" "$j2" "$j3" "$j4"; do as qpuser1 qdel "$j" >/dev/null 2>&1; done
echo "PASS"
