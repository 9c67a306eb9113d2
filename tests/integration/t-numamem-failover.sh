#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Memory by NUMA node across a takeover (docs/RESOURCES.md, "Memory by
# NUMA node"): an active and a standby qpoold on one store (SQLite;
# QP_STORE=postgresql: PostgreSQL), a simulated node of two NUMA nodes of
# 8 GiB and 4 cores each. A job of 1 CPU and 6 GiB runs on NUMA 0; the
# active is killed -9 and the standby takes over: the node object's
# mem_free_numa is what it was (the job's NUMA nodes read back from the
# store, not its memory spread over both), and a second such job goes to
# NUMA 1, the one NUMA node with 6 GiB free.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_pair
P=${QP_NODE_PREFIX}nf
qp_start_sim "$P" 1 --sim-topology "pack:2 numa:1(memory=8GiB) core:4 pu:1"

cpus_of() {
	"$QP_BIN/qstat" --json "$1" | python3 -c '
import json, sys
j = json.load(sys.stdin)
j = j[0] if isinstance(j, list) else j
print(j.get("cpus") or "?")
'
}
numa_free() {
	"$QP_BIN/qstat" --nodes --json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["nodes"]:
    if n["name"] == sys.argv[1]:
        print(",".join(str(v) for v in n.get("mem_free_numa", [])) or "?")
' "$P-0"
}
long=(-l walltime=600 -v QPOOL_SIM_RUNTIME=300)
d=$(echo true | as qpuser1 qsub "${long[@]}" -l ncpus=1,mem=6gb) || fail "qsub d"
qp_wait "$d" running
[ "$(cpus_of "$d")" = 0 ] || fail "d: CPUs $(cpus_of "$d"), not 0 on NUMA 0"
before=$(numa_free)
[ "$before" = 2147483648,8589934592 ] || fail "d's 6 GiB are not counted on NUMA 0: $before"

note "the active killed -9: the standby takes over"
kill -KILL "$PID_a"
wait "$PID_a" 2>/dev/null
qp_served
grep -q "active at epoch" "$QP_T/qpoold-b.log" || fail "b did not take over: $(tail -5 "$QP_T/qpoold-b.log")"
qp_sim_up "$P" 1
[ "$(qp_state "$d")" = running ] || fail "d is $(qp_state "$d") after the takeover"
after=$(numa_free)
[ "$after" = "$before" ] || fail "NUMA free after the takeover $after, before $before"
e=$(echo true | as qpuser1 qsub "${long[@]}" -l ncpus=1,mem=6gb) || fail "qsub e"
qp_wait "$e" running
[ "$(cpus_of "$e")" = 4 ] || fail "e: CPUs $(cpus_of "$e"), not 4 on NUMA 1 where its 6 GiB are free"
as qpuser1 qdel "$d" "$e"
echo PASS
