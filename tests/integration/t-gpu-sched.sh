#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GPU jobs end to end (docs/GPUS.md), with GPUs the test makes (mknod,
# numbers no driver serves) listed in qnoded's `gpus =`: two 1-GPU jobs
# on one 2-GPU node run at once holding different GPUs, each opening its
# own (ENXIO) and not the other's (EPERM) and seeing
# CUDA_VISIBLE_DEVICES=0; a 2-GPU job waits while one is busy and starts
# when it ends; a request larger than any node, and one above a queue's
# max_ngpus (qsub and qmove), are refused with the reason; GPUs are free
# again after qdel, walltime and node loss, and held across a qpoold
# restart; select=2:ncpus=1:ngpus=1 on
# two nodes gets one GPU on each; on a synthetic topology whose GPU sits
# on NUMA node 1, the job's CPU is NUMA node 1's.
. "$(dirname "$0")/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
qp_setup "[queue gq]
max_ngpus = 1"
d=$QP_T/dev
mkdir -p "$d"
chmod 755 "$d"
# Majors 240-254 are for local use (Documentation/admin-guide/devices.txt).
mknod -m 666 "$d/gpu0" c 240 0 && mknod -m 666 "$d/gpu1" c 240 1 || skip "cannot mknod"
printf '[node]\ngpus = %s/gpu*\n' "$d" >> "$QPOOL_CONF"
note "store: $(sed -n 's/^store = //p' "$QPOOL_CONF" | tail -n 1)"
fenced=no
[ -d /sys/fs/cgroup/devices ] || [ -f /sys/fs/cgroup/cgroup.controllers ] && fenced=yes
qp_start_server
qp_start_node n1
w=$QP_T/work/qpuser1

# The job: says what opening each GPU gives and its GPU variables, then
# waits (bounded) for its release file, named by its TAG.
cat > "$QP_T/probe.py" <<'PY'
import errno, os, sys
for f in sys.argv[1:]:
    try:
        os.close(os.open(f, os.O_RDONLY))
        print(os.path.basename(f), "opened")
    except OSError as e:
        print(os.path.basename(f), errno.errorcode[e.errno])
print("CUDA_VISIBLE_DEVICES", os.environ.get("CUDA_VISIBLE_DEVICES", "-"))
PY
chmod 644 "$QP_T/probe.py"
job() {  # TAG: the script of a job that probes, then waits for $w/release.TAG
	cat <<JOB
python3 $QP_T/probe.py $d/gpu0 $d/gpu1 > $w/probe.$1.tmp && mv $w/probe.$1.tmp $w/probe.$1
for i in \$(seq 1200); do [ -e $w/release.$1 ] && exit 0; sleep 0.1; done
JOB
}
release() { touch "$w/release.$1"; }

# The job's GPUs as its JSON has them: "NODE:I,J" per node, blank-separated.
job_gpus() {
	"$QP_BIN/qstat" -x --json "$1" | python3 -c '
import json, sys
j = json.load(sys.stdin)
j = j[0] if isinstance(j, list) else j
print(" ".join("%s:%s" % (e["node"], ",".join(str(g) for g in e.get("gpus", []))) for e in j.get("alloc", [])))
'
}
# A node's field from qstat --nodes --json: ngpus, gpus_free, gpus.I.job.
node_field() {
	"$QP_BIN/qstat" --nodes --json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["nodes"]:
    if n["name"] == sys.argv[1]:
        v = n
        for k in sys.argv[2].split("."):
            v = v[int(k)] if isinstance(v, list) else v.get(k)
        print("" if v is None else v)
' "$1" "$2"
}
wait_free() {  # NODE COUNT: waits (bounded) until NODE has COUNT GPUs free
	local i
	for i in $(seq 1200); do
		[ "$(node_field "$1" gpus_free)" = "$2" ] && return 0
		sleep 0.1
	done
	fail "$1 has $(node_field "$1" gpus_free) GPUs free, expected $2"
}
refused() {  # WANT CMD...: CMD fails with WANT in its message
	local want=$1 out; shift
	out=$(echo true | "$@" 2>&1) && fail "accepted: $*"
	grep -qF "$want" <<< "$out" || fail "$*: '$out' does not say '$want'"
}

[ "$(node_field n1 ngpus)" = 2 ] || fail "n1 has $(node_field n1 ngpus) GPUs, not the 2 it was given"

note "two 1-GPU jobs at once, on different GPUs"
a=$(job a | as qpuser1 qsub -N a -l ngpus=1) || fail "qsub a"
b=$(job b | as qpuser1 qsub -N b -l ngpus=1) || fail "qsub b"
qp_wait "$a" running
qp_wait "$b" running
ga=$(job_gpus "$a") gb=$(job_gpus "$b")
[ -n "$ga" ] && [ -n "$gb" ] && [ "$ga" != "$gb" ] || fail "jobs $a and $b hold '$ga' and '$gb'"
[ "$(node_field n1 gpus_free)" = 0 ] || fail "n1 has $(node_field n1 gpus_free) GPUs free with two jobs"
holders="$(node_field n1 gpus.0.job) $(node_field n1 gpus.1.job)"
[ "$holders" = "$a $b" ] || [ "$holders" = "$b $a" ] || fail "n1's GPUs are held by '$holders'"
qp_field "$a" Resource_List.ngpus | grep -qx 1 || fail "qstat -f: Resource_List.ngpus of $a: $(qp_field "$a" Resource_List.ngpus)"
note "job $a holds $ga, job $b holds $gb"
if [ "$fenced" = yes ]; then
	qp_wait_file "$w/probe.a" 60
	qp_wait_file "$w/probe.b" 60
	for t in a b; do
		own=${ga#n1:}
		[ "$t" = b ] && own=${gb#n1:}
		other=$((1 - own))
		grep -qx "gpu$own ENXIO" "$w/probe.$t" || fail "job $t does not open its GPU $own: $(cat "$w/probe.$t")"
		grep -qx "gpu$other EPERM" "$w/probe.$t" || fail "job $t opens GPU $other: $(cat "$w/probe.$t")"
		grep -qx "CUDA_VISIBLE_DEVICES 0" "$w/probe.$t" || fail "job $t: $(cat "$w/probe.$t")"
	done
	note "each opens its own GPU only, CUDA_VISIBLE_DEVICES=0"
fi

note "qpoold restarted: the running jobs keep their GPUs"
qp_stop "$QP_SERVER_PID"
qp_start_server
for _ in $(seq 1200); do [ "$(node_field n1 state)" = up ] && break; sleep 0.1; done
[ "$(node_field n1 state)" = up ] || fail "n1 did not come back to the restarted qpoold"
[ "$(job_gpus "$a")" = "$ga" ] && [ "$(job_gpus "$b")" = "$gb" ] ||
	fail "after a restart jobs $a and $b hold '$(job_gpus "$a")' and '$(job_gpus "$b")'"
[ "$(node_field n1 gpus_free)" = 0 ] || fail "after a restart n1 has $(node_field n1 gpus_free) GPUs free"
e=$(job e | as qpuser1 qsub -N e -l ngpus=1) || fail "qsub e"
for _ in $(seq 20); do
	[ "$(qp_state "$e")" = queued ] || fail "job $e is $(qp_state "$e") while both GPUs are held"
	sleep 0.1
done
as qpuser1 qdel "$e" || fail "qdel $e"

note "a 2-GPU job waits while one is busy, starts when it ends"
c=$(job c | as qpuser1 qsub -N c -l ngpus=2) || fail "qsub c"
release a
qp_wait "$a" completed
# Job b still holds a GPU: c must not start, though CPUs are free.
for _ in $(seq 20); do
	[ "$(qp_state "$c")" = queued ] || fail "job $c is $(qp_state "$c") while job $b holds a GPU"
	sleep 0.1
done
release b
qp_wait "$c" running --timeout 60
[ "$(job_gpus "$c")" = "n1:0,1" ] || fail "job $c holds $(job_gpus "$c")"

note "GPUs back after qdel"
as qpuser1 qdel "$c" || fail "qdel $c"
qp_wait "$c" cancelled --timeout 60
wait_free n1 2

note "refusals: more than any node has, the queue's max_ngpus"
refused "ngpus=3: more GPUs than any node has (the largest has 2)" as qpuser1 qsub -l ngpus=3
refused "ngpus=2: above queue gq's limit of 1" as qpuser1 qsub -q gq -l ngpus=2
refused "not a number of GPUs" as qpuser1 qsub -l ngpus=-1
h=$(job h | as qpuser1 qsub -h -N h -l ngpus=2) || fail "qsub h"
refused "above queue gq's limit of 1" as qpuser1 qmove gq "$h"
refused "qalter cannot change a job's GPUs" as qpuser1 qalter -l ngpus=1 "$h"
as qpuser1 qdel "$h" || fail "qdel $h"
g=$(job g | as qpuser1 qsub -q gq -N g -l ngpus=1) || fail "qsub -q gq ngpus=1"
qp_wait "$g" running
release g
qp_wait "$g" completed

note "GPUs back after walltime"
t=$(job t | as qpuser1 qsub -N t -l ngpus=2,walltime=2) || fail "qsub t"
qp_wait "$t" running
qp_wait "$t" timeout --timeout 60
wait_free n1 2

note "GPUs back after node loss"
l=$(job l | as qpuser1 qsub -N l -r n -l ngpus=2) || fail "qsub l"
qp_wait "$l" running
kill -STOP "$(qp_node_pid n1)"
qp_wait "$l" failed --timeout 60
wait_free n1 2
kill -CONT "$(qp_node_pid n1)"
release l
# Back and registered: nothing is held for the lost job's stale copy.
for _ in $(seq 600); do [ "$(node_field n1 state)" = up ] && break; sleep 0.1; done
wait_free n1 2

note "select=2:ncpus=1:ngpus=1 on two nodes: one GPU on each"
qp_start_node n2 1
m=$(job m | as qpuser1 qsub -N m -l select=2:ncpus=1:ngpus=1 -l place=scatter) || fail "qsub m"
qp_wait "$m" running --timeout 60
gm=$(job_gpus "$m")
case "$gm" in
"n1:0 n2:0"|"n2:0 n1:0") ;;
*) fail "job $m holds '$gm', not GPU 0 on each of n1 and n2" ;;
esac
release m
qp_wait "$m" completed --timeout 60
wait_free n1 2
wait_free n2 2
note "job $m held $gm"
acct=$("$QP_BIN/qacct" -j "$m") || fail "qacct -j $m"
grep -qE '^ *ngpus +2( |$)' <<< "$acct" || fail "qacct -j $m: no ngpus 2: $acct"
grep -qE '^ *gpus +(n1:0 n2:0|n2:0 n1:0)( |$)' <<< "$acct" || fail "qacct -j $m: no gpus of both nodes: $acct"
grep -qE '^ *gpu_hours +[0-9]+\.[0-9]{4} +h' <<< "$acct" || fail "qacct -j $m: no gpu_hours: $acct"
util=$("$QP_BIN/qacct" --utilization --from -1h) || fail "qacct --utilization"
grep -qE '^ *GPUs held +[0-9]' <<< "$util" && grep -qE '^ *GPUs idle +[0-9]' <<< "$util" ||
	fail "qacct --utilization has no GPU rows: $util"
# --svg: a lane per GPU of n1 and n2 (each row one line), job m's bar in
# the lane of GPU 0 of each node, not in GPU 1's.
"$QP_BIN/qacct" --svg "$QP_T/gpus.svg" --from -1h || fail "qacct --svg"
lanes=$(grep -c '<g class="gpu"' "$QP_T/gpus.svg") || true
[ "$lanes" = 4 ] || fail "qacct --svg: $lanes GPU lanes, not 4 (n1, n2: 2 each)"
for lane in n1:gpu0 n2:gpu0; do
	grep -F "data-gpu=\"$lane\"" "$QP_T/gpus.svg" | grep -qF "<title>job ${m%%.*} (" ||
		fail "qacct --svg: job $m not in lane $lane"
done
if grep -F 'data-gpu="n2:gpu1"' "$QP_T/gpus.svg" | grep -qF "<title>job ${m%%.*} ("; then
	fail "qacct --svg: job $m in lane n2:gpu1, a GPU it did not hold"
fi

note "locality: a GPU on NUMA node 1 gives the job NUMA node 1's CPU"
# A synthetic topology: two packages, each one NUMA node, one PU and one
# GPU (nvidia0 on NUMA 0, nvidia1 on NUMA 1); the node is given only
# nvidia1, which takes its locality (CPU 1) from the OS device of that name.
qp_stop "$(qp_node_pid n2)"
qp_stop "$(qp_node_pid n1)"
xml=$QP_T/topo.xml
qp_gpu_topology "$xml"
mknod -m 666 "$d/nvidia1" c 240 1 || fail "mknod"
# Unfenced (an empty cgroup root): this host has one NUMA node, not the
# topology's two; only where the job is placed is looked at.
mkdir "$QP_T/nocg"
grep -v '^gpus = ' "$QPOOL_CONF" > "$QP_T/x1.conf"
printf '[node]\ngpus = %s/nvidia1\ncgroup_root = %s\n' "$d" "$QP_T/nocg" >> "$QP_T/x1.conf"
HWLOC_XMLFILE=$xml "$QP_BIN/qnoded" -f "$QP_T/x1.conf" --name x1 >> "$QP_T/qnoded-x1.log" 2>&1 &
x1=$!
QP_PIDS+=("$x1")
for _ in $(seq 1200); do
	[ "$(node_field x1 state)" = up ] && break
	kill -0 "$x1" 2>/dev/null || fail "qnoded x1 died at start"
	sleep 0.1
done
[ "$(node_field x1 gpus.0.numa)" = 1 ] || fail "x1's GPU 0 is not on NUMA node 1: numa $(node_field x1 gpus.0.numa)"
x=$(job x | as qpuser1 qsub -N x -l ncpus=1,ngpus=1) || fail "qsub x"
qp_wait "$x" running completed failed --timeout 60
cpus=$("$QP_BIN/qstat" -x --json "$x" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print((j[0] if isinstance(j, list) else j)["cpus"])')
[ "$cpus" = 1 ] || fail "job $x got CPU '$cpus', not CPU 1 (its GPU's NUMA node)"
release x
qp_wait "$x" completed failed --timeout 60
note "job $x: GPU on NUMA 1, CPU $cpus"
echo "gpu sched ok"
