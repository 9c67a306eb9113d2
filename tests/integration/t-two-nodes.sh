#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two qnoded on one host, each on its own CPU: every job runs only on the
# CPUs of the node it was placed on.
. "$(dirname "$0")/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
qp_setup
qp_start_server
qp_start_node na 0
qp_start_node nb 1

ids=()
for i in 1 2 3 4 5 6; do
	ids+=("$(as qpuser1 qsub -N cpus <<'JOB'
grep Cpus_allowed_list /proc/self/status | awk '{print $2}'
sleep 0.5
JOB
)") || fail "qsub"
done
seen=""
for id in "${ids[@]}"; do
	qp_wait "$id" completed
	out=$QP_T/work/qpuser1/cpus.o$id
	qp_wait_file "$out"
	node=$(qp_field "$id" exec_host)
	cpus=$(cat "$out")
	note "job $id on $node: cpus $cpus"
	case "$node" in
	na) [ "$cpus" = 0 ] || fail "job $id on na ran on CPUs $cpus" ;;
	nb) [ "$cpus" = 1 ] || fail "job $id on nb ran on CPUs $cpus" ;;
	*) fail "job $id ran on unknown node '$node'" ;;
	esac
	seen="$seen $node"
done
# Two 1-CPU nodes, six concurrent jobs: both nodes must have been used.
echo "$seen" | grep -q na && echo "$seen" | grep -q nb || fail "jobs did not use both nodes:$seen"
"$QP_BIN/qstat" --nodes
echo "two nodes ok"
