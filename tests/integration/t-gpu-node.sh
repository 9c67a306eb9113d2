#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A node's GPUs as the pool sees them (docs/GPUS.md): a qnoded given
# `gpus = DIR/gpu*` (two mknod'd character devices) shows ngpus 2, free
# 2 in qstat --nodes (JSON and table) and pbsnodes; one on a synthetic
# hwloc topology with GPU OS devices nvidia0/nvidia1 on NUMA nodes 0/1
# shows each GPU's NUMA node and CPUs; a listed regular file, a glob that
# matches nothing and the same device twice stop qnoded with one line
# naming it; a qpoold restarted while qnoded is stopped still lists the
# node's 2 GPUs, from the store.
. "$(dirname "$0")/lib.sh"
qp_setup
# Majors 240-254 are for local use (Documentation/admin-guide/devices.txt).
mknod "$QP_T/gpu0" c 240 0 && mknod "$QP_T/gpu1" c 240 1 || skip "cannot mknod"
printf '[node]\ngpus = %s/gpu*\n' "$QP_T" >> "$QPOOL_CONF"
qp_start_server
qp_start_node n1

# The node object of NAME as qstat --nodes --json has it.
node_json() {
	"$QP_BIN/qstat" --nodes --json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["nodes"]:
    if n["name"] == sys.argv[1]:
        print(json.dumps(n, sort_keys=True))
' "$1"
}
# One field of it: ngpus, gpus_free, gpus.I.KEY.
node_field() {
	node_json "$1" | python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[int(k)] if isinstance(v, list) else v.get(k)
print("" if v is None else v)
' "$2"
}

note "n1: ngpus 2, free 2, the files and device numbers it was given"
[ "$(node_field n1 ngpus)" = 2 ] || fail "n1's ngpus: $(node_json n1)"
[ "$(node_field n1 gpus_free)" = 2 ] || fail "n1's gpus_free: $(node_json n1)"
for i in 0 1; do
	[ "$(node_field n1 gpus.$i.file)" = "$QP_T/gpu$i" ] || fail "n1's GPU $i file: $(node_json n1)"
	[ "$(node_field n1 gpus.$i.major):$(node_field n1 gpus.$i.minor)" = "240:$i" ] ||
		fail "n1's GPU $i device number: $(node_json n1)"
	[ "$(node_field n1 gpus.$i.job)" = "" ] || fail "n1's GPU $i is held: $(node_json n1)"
done
out=$("$QP_BIN/pbsnodes" n1) || fail "pbsnodes n1: $out"
grep -qx ' *resources_available.ngpus = 2' <<< "$out" || fail "pbsnodes: no resources_available.ngpus = 2: $out"
grep -qx ' *resources_assigned.ngpus = 0' <<< "$out" || fail "pbsnodes: no resources_assigned.ngpus = 0: $out"
out=$("$QP_BIN/pbsnodes" -F json n1) || fail "pbsnodes -F json"
python3 -c '
import json, sys
n = json.load(sys.stdin)["nodes"]["n1"]
assert n["resources_available"]["ngpus"] == 2, n
assert n["resources_assigned"]["ngpus"] == 0, n
' <<< "$out" || fail "pbsnodes -F json: $out"
out=$("$QP_BIN/qstat" --nodes) || fail "qstat --nodes"
head -1 <<< "$out" | grep -qw GPUs || fail "qstat --nodes has no GPUs column: $out"
grep -qE '^n1 .* 2/2 ' <<< "$out" || fail "qstat --nodes does not show n1's GPUs free/total 2/2: $out"

note "a synthetic topology: GPUs nvidia0, nvidia1 under NUMA nodes 0 and 1"
# One PU per package, so the node has the CPUs of this 2-CPU host's
# numbering; qnoded runs unfenced (an empty cgroup root): only its
# registration is looked at.
xml=$QP_T/topo.xml
qp_gpu_topology "$xml"
mkdir "$QP_T/dev" "$QP_T/nocg"
mknod "$QP_T/dev/nvidia0" c 241 0 && mknod "$QP_T/dev/nvidia1" c 241 1 || fail "mknod"
# A config of its own: the pool's with other [node] keys.
node_conf() {  # FILE GPUS: the pool's config, this node unfenced, gpus = GPUS
	grep -v '^gpus = ' "$QPOOL_CONF" > "$1"
	printf '[node]\ngpus = %s\ncgroup_root = %s\n' "$2" "$QP_T/nocg" >> "$1"
}
node_conf "$QP_T/x1.conf" "$QP_T/dev/nvidia*"
HWLOC_XMLFILE=$xml "$QP_BIN/qnoded" -f "$QP_T/x1.conf" --name x1 >> "$QP_T/qnoded-x1.log" 2>&1 &
x1=$!
QP_PIDS+=("$x1")
for _ in $(seq 1200); do
	[ "$(node_field x1 state)" = up ] && break
	kill -0 "$x1" 2>/dev/null || fail "qnoded x1 died at start"
	sleep 0.1
done
[ "$(node_field x1 state)" = up ] || fail "qnoded x1 did not register"
[ "$(node_field x1 ngpus)" = 2 ] || fail "x1's ngpus: $(node_json x1)"
for i in 0 1; do
	[ "$(node_field x1 gpus.$i.file)" = "$QP_T/dev/nvidia$i" ] || fail "x1's GPU $i file: $(node_json x1)"
	[ "$(node_field x1 gpus.$i.numa)" = "$i" ] || fail "x1's GPU $i is not on NUMA node $i: $(node_json x1)"
	[ "$(node_field x1 gpus.$i.cpus)" = "$i" ] || fail "x1's GPU $i is not near CPU $i: $(node_json x1)"
done
qp_stop "$x1"

note "bad configs: qnoded stops with one line naming the file"
: > "$QP_T/regular"
bad_node() {  # NAME GPUS EXPECTED: qnoded exits non-zero, one error line with EXPECTED
	local name=$1 gpus=$2 want=$3 out rc
	node_conf "$QP_T/$name.conf" "$gpus"
	out=$(timeout 120 "$QP_BIN/qnoded" -f "$QP_T/$name.conf" --name "$name" 2>&1)
	rc=$?
	[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "qnoded with gpus = $gpus exited $rc: $out"
	[ "$(wc -l <<< "$out")" = 1 ] || fail "qnoded with gpus = $gpus: not one line: $out"
	grep ' error: ' <<< "$out" | grep -qF "$want" || fail "qnoded with gpus = $gpus: '$out', expected '$want'"
	[ -z "$(node_json "$name")" ] || fail "qnoded with gpus = $gpus registered"
}
bad_node b1 "$QP_T/regular" "gpus: $QP_T/regular is not a character device"
bad_node b2 "$QP_T/nothing*" "gpus: $QP_T/nothing* matches no file"
bad_node b3 "$QP_T/gpu0 $QP_T/gpu*" "gpus: $QP_T/gpu0 is the same device as $QP_T/gpu0"
bad_node b4 "$QP_T/missing" "gpus: $QP_T/missing: No such file or directory"

note "a registration with a bad GPU entry is refused in one line; qpoold carries on"
ask() { python3 "$QP_TOP/tests/integration/qpool-ask.py" "$QP_T/qpoold.sock" node.register "$1"; }
gpu='"index":0,"file":"/dev/x0","major":240,"minor":0,"cpus":"","numa":-1'
for c in '"major":4096|gpus[0]: major must be 0-4095' '"index":1|gpus[0]: index must be 0' \
	'"cpus":"0-9"|gpus[0]: cpus 0-9 are not all the node' '"file":"x0"|gpus[0]: file must be an absolute path'; do
	entry="{$gpu,${c%%|*}}"
	out=$(ask "{\"name\":\"evil\",\"cpus\":\"0-1\",\"gpus\":[$entry]}") || fail "no reply to a bad registration"
	python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r.get("ok") is False and sys.argv[2] in r.get("error", "") and "\n" not in r["error"], r
' "$out" "${c#*|}" || fail "registration with gpus [$entry]: $out"
done
[ -z "$(node_json evil)" ] || fail "a refused registration made a node: $(node_json evil)"
kill -0 "$QP_SERVER_PID" || fail "qpoold died"

note "qpoold restarted while qnoded is stopped: n1's 2 GPUs from the store"
qp_stop "$(qp_node_pid n1)"
qp_stop "$QP_SERVER_PID"
qp_start_server
[ "$(node_field n1 back)" = False ] || fail "n1 is back without its qnoded: $(node_json n1)"
[ "$(node_field n1 ngpus)" = 2 ] || fail "n1's GPUs were not kept across the restart: $(node_json n1)"
[ "$(node_field n1 gpus_free)" = 2 ] || fail "n1's free GPUs after the restart: $(node_json n1)"
[ "$(node_field n1 gpus.1.file)" = "$QP_T/gpu1" ] || fail "n1's GPU 1 after the restart: $(node_json n1)"
[ -z "$(node_field n1 topology.gpus)" ] || fail "n1's topology shows its GPUs: $(node_json n1)"
echo "PASS"
