#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host-wide safety: a host-wide OOM takes jobs first (qpoold, qnoded and
# gded run with oom_score_adj -900, the job's processes with 0, which they
# cannot lower); a node's group caps its jobs' tasks together (pids.max) and
# their memory at the node's memory less [node] mem_reserve; a reserve
# larger than the node is refused at start with one line.
. "$(dirname "$0")/lib.sh"
[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no memory controller"
qp_setup
sed -i "s/^cgroup_parent = .*/&\nnode_pids_max = 5000\nmem_reserve = 256M/" "$QPOOL_CONF"
qp_start_server
qp_start_node n1
w=$QP_T/work/qpuser1

adj() { cat "/proc/$1/oom_score_adj"; }
# Lowering an oom_score_adj needs CAP_SYS_RESOURCE, which a container's
# root may lack: then the daemons keep 0 and say so.
if sh -c 'echo -1 > /proc/self/oom_score_adj' 2>/dev/null; then
	daemon_adj=-900
else
	daemon_adj=0
	note "root lacks CAP_SYS_RESOURCE here: the daemons cannot lower their oom_score_adj"
	grep -q "cannot set oom_score_adj -900" "$QP_T/qnoded-n1.log" || fail "qnoded did not say it cannot set oom_score_adj"
fi
[ "$(adj "$QP_SERVER_PID")" = $daemon_adj ] || fail "qpoold's oom_score_adj is $(adj "$QP_SERVER_PID"), not $daemon_adj"
[ "$(adj "$(qp_node_pid n1)")" = $daemon_adj ] || fail "qnoded's oom_score_adj is $(adj "$(qp_node_pid n1)"), not $daemon_adj"

cat > "$QP_T/adj.sh" <<JOB
echo "job \$(cat /proc/self/oom_score_adj)"
echo -500 > /proc/self/oom_score_adj 2>/dev/null && echo "lowered"
echo started > $w/adj-started
sleep 30
JOB
chmod 644 "$QP_T/adj.sh"
id=$(as qpuser1 qsub -N adj "$QP_T/adj.sh") || fail qsub
gpid=$(qp_wait_gded "$id") || exit 1
[ "$(adj "$gpid")" = $daemon_adj ] || fail "gded's oom_score_adj is $(adj "$gpid"), not $daemon_adj"
qp_wait_file "$w/adj-started"
as qpuser1 qdel "$id" || fail qdel
qp_wait "$id" cancelled
cat "$w/adj.o$id"
grep -qx "job 0" "$w/adj.o$id" || fail "the job's oom_score_adj is not 0: $(cat "$w/adj.o$id")"
grep -q lowered "$w/adj.o$id" && fail "the job could lower its own oom_score_adj"

# The node's group: its jobs' tasks and memory together.
if [ -d /sys/fs/cgroup/memory ]; then
	mem=/sys/fs/cgroup/memory/$QP_CG_PARENT/n1/memory.limit_in_bytes
	pids=/sys/fs/cgroup/pids/$QP_CG_PARENT/n1/pids.max
else
	mem=/sys/fs/cgroup/$QP_CG_PARENT/n1/memory.max
	pids=/sys/fs/cgroup/$QP_CG_PARENT/n1/pids.max
fi
total=$(($(awk '$1 == "MemTotal:" {print $2}' /proc/meminfo) * 1024))
limit=$(cat "$mem")
# qnoded logs the limit it set: the node's memory (its share of its NUMA
# nodes, as hwloc sees it) less the reserve.
logged=$(sed -n 's/.*node group .*: memory limit \([0-9]*\) MiB (reserve 256 MiB).*/\1/p' "$QP_T/qnoded-n1.log")
note "node group memory limit $limit (logged ${logged:-?} MiB) of $total bytes; pids.max $(cat "$pids" 2>/dev/null)"
[ -n "$logged" ] || fail "qnoded did not log its node group's limits with the 256 MiB reserve"
[ $((limit >> 20)) = "$logged" ] || fail "node memory limit $limit is not the logged $logged MiB"
[ "$limit" -le $((total - 256 * 1024 * 1024)) ] || fail "node memory limit $limit is not below total $total less the 256M reserve"
if [ -f "$pids" ]; then
	[ "$(cat "$pids")" = 5000 ] || fail "node pids.max is $(cat "$pids"), not 5000"
fi

# A reserve above the node's memory: refused, one clear line.
conf2=$QP_T/big.conf
sed -e "s/^mem_reserve = .*/mem_reserve = 100T/" "$QPOOL_CONF" > "$conf2"
out=$("$QP_BIN/qnoded" -f "$conf2" --name n2 2>&1) && fail "qnoded started with mem_reserve = 100T"
echo "$out"
echo "$out" | grep -q "mem_reserve .* leaves nothing" || fail "no clear error for mem_reserve = 100T: $out"
[ -z "$(find /sys/fs/cgroup -maxdepth 3 -type d -path "*/$QP_CG_PARENT/n2")" ] || fail "the refused qnoded left its node group"
echo PASS
