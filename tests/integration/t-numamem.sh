#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Memory by NUMA node in placement (docs/RESOURCES.md, "Memory by NUMA
# node"), on a simulated node of two NUMA nodes of 8 GiB and 4 cores
# each: a first job of 2 CPUs and 6 GiB holds most of NUMA 0; a second of
# 1 CPU and 6 GiB gets a CPU on NUMA 1 (best fit alone would put it in
# NUMA 0's free cores); a third of 1 CPU and 3 GiB fits the node's count
# (4 GiB free) but no NUMA node's (2 GiB each): it starts all the same,
# on the CPU placement alone gives (NUMA 0), bound to both NUMA nodes.
# Then across a qpoold restart: a job of 1 CPU and 6 GiB on NUMA 0 is
# counted there again (the node object's mem_free_numa equals what it was
# before), so a second such job goes to NUMA 1, the one that has its
# memory free (counted over both NUMA nodes, 5 GiB free on each, it would
# fit neither and go where placement alone puts it, NUMA 0).
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
N=${QP_NODE_PREFIX}numa
"$QP_BIN/qnoded" -f "$QPOOL_CONF" --simulate 1 --name "$N" \
	--sim-topology "pack:2 numa:1(memory=8GiB) core:4 pu:1" >> "$QP_T/qnoded-$N.log" 2>&1 &
QP_PIDS+=($!)
for _ in $(seq 200); do
	"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^$N-0 +up" && break
	sleep 0.05
done
"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^$N-0 +up" || fail "the simulated node is not up: $("$QP_BIN/qstat" --nodes)"

# A job's CPUs as the server keeps them (qstat --json "cpus"). Its
# cpuset.mems is not shown for a one-node job: tests/unit/test_pool_mem.c
# checks it.
cpus_of() {
	"$QP_BIN/qstat" --json "$1" | python3 -c '
import json, sys
j = json.load(sys.stdin)
j = j[0] if isinstance(j, list) else j
print(j.get("cpus") or "?")
'
}
long=(-l walltime=600 -v QPOOL_SIM_RUNTIME=300)
a=$(echo true | as qpuser1 qsub "${long[@]}" -l ncpus=2,mem=6gb) || fail "qsub a"
qp_wait "$a" running
note "a: $(cpus_of "$a")"
b=$(echo true | as qpuser1 qsub "${long[@]}" -l ncpus=1,mem=6gb) || fail "qsub b"
qp_wait "$b" running
note "b: $(cpus_of "$b")"
c=$(echo true | as qpuser1 qsub "${long[@]}" -l ncpus=1,mem=3gb) || fail "qsub c"
qp_wait "$c" running
note "c: $(cpus_of "$c")"
[ "$(cpus_of "$a")" = 0-1 ] || fail "a: CPUs $(cpus_of "$a"), not 0-1 on NUMA 0"
[ "$(cpus_of "$b")" = 4 ] || fail "b: CPUs $(cpus_of "$b"), not 4 on NUMA 1 where its 6 GiB are free"
[ "$(cpus_of "$c")" = 2 ] || fail "c: CPUs $(cpus_of "$c"), not 2 (where placement alone puts it)"
as qpuser1 qdel "$a" "$b" "$c"

# The node object's mem_free_numa (bytes free of each NUMA node's part).
numa_free() {
	"$QP_BIN/qstat" --nodes --json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["nodes"]:
    if n["name"] == sys.argv[1]:
        print(",".join(str(v) for v in n.get("mem_free_numa", [])) or "?")
' "$N-0"
}
for _ in $(seq 200); do
	[ "$(numa_free)" = 8589934592,8589934592 ] && break
	sleep 0.05
done
[ "$(numa_free)" = 8589934592,8589934592 ] || fail "after qdel: NUMA free $(numa_free), not 8 GiB each"
d=$(echo true | as qpuser1 qsub "${long[@]}" -l ncpus=1,mem=6gb) || fail "qsub d"
qp_wait "$d" running
[ "$(cpus_of "$d")" = 0 ] || fail "d: CPUs $(cpus_of "$d"), not 0 on NUMA 0"
before=$(numa_free)
[ "$before" = 2147483648,8589934592 ] || fail "d's 6 GiB are not counted on NUMA 0: $before"
note "qpoold restarts with d on NUMA 0"
qp_stop "$QP_SERVER_PID"
qp_start_server
for _ in $(seq 200); do
	"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^$N-0 +up" && break
	sleep 0.05
done
"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^$N-0 +up" || fail "the simulated node is not back: $("$QP_BIN/qstat" --nodes)"
[ "$(qp_state "$d")" = running ] || fail "d is $(qp_state "$d") after the restart"
after=$(numa_free)
[ "$after" = "$before" ] || fail "NUMA free after the restart $after, before $before"
e=$(echo true | as qpuser1 qsub "${long[@]}" -l ncpus=1,mem=6gb) || fail "qsub e"
qp_wait "$e" running
[ "$(cpus_of "$e")" = 4 ] || fail "e: CPUs $(cpus_of "$e"), not 4 on NUMA 1 where its 6 GiB are free"
as qpuser1 qdel "$d" "$e"
echo PASS
