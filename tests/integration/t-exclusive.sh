#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sbatch --exclusive gives the job its node whole, as Slurm does: every
# free CPU of the node in its cpuset, SLURM_CPUS_ON_NODE and scontrol's
# NumCPUs counting them, its tasks as it asked, and no other job beside it
# until it ends (also across a qpoold restart). PBS's place=excl keeps the
# node to the job with the CPUs it asked for, as PBS Pro does.
. "$(dirname "$0")/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
[ -d /sys/fs/cgroup/cpuset ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no cpuset controller"
qp_setup
qp_start_server
qp_start_node ex1 0-1
W=$QP_T/work/qpuser1

# The job reports what it holds, then waits for its go file ($G.go).
cat > "$W/held.sh" <<'EOF2'
#!/bin/bash
echo "cpus=$(awk '/Cpus_allowed_list/ {print $2}' /proc/self/status)"
echo "on_node=${SLURM_CPUS_ON_NODE:-} per_node=${SLURM_JOB_CPUS_PER_NODE:-} tasks=${SLURM_TASKS_PER_NODE:-} ncpus=${NCPUS:-}"
echo started > "$G.started"
for i in $(seq 1200); do [ -e "$G.go" ] && exit 0; sleep 0.1; done
exit 1
EOF2
chmod +x "$W/held.sh"

note "sbatch --exclusive -n1 on a 2-CPU node: both CPUs, one task"
id=$(as qpuser1 sbatch --parsable --exclusive -n1 -o "$W/ex.out" --export=ALL,G="$W/ex" "$W/held.sh") || fail "sbatch --exclusive: $id"
qp_wait "$id" running
qp_wait_file "$W/ex.started"
grep -qx "cpus=0-1" "$W/ex.out" || fail "the exclusive job's cpuset: $(cat "$W/ex.out")"
grep -q "on_node=2 per_node=2 tasks=1 " "$W/ex.out" || fail "the exclusive job's SLURM_* counts: $(cat "$W/ex.out")"
out=$("$QP_BIN/scontrol" show job "$id")
grep -q "NumCPUs=2 " <<<"$out" || fail "scontrol NumCPUs: $(grep -o 'NumCPUs=[^ ]*' <<<"$out")"
[ "$("$QP_BIN/squeue" -h -j "$id" -o %C)" = 2 ] || fail "squeue %C: $("$QP_BIN/squeue" -h -j "$id" -o %C)"

note "another job waits while the node is the exclusive job's, across a qpoold restart"
other=$(as qpuser2 qsub -l ncpus=1 -o /dev/null -e /dev/null <<<true) || fail "qsub: $other"
qp_wait "$other" queued
qp_stop "$QP_SERVER_PID"
qp_start_server
qp_wait "$id" running
"$QP_BIN/scontrol" show job "$id" | grep -q "NumCPUs=2 " || fail "NumCPUs after a restart: $("$QP_BIN/scontrol" show job "$id" | grep -o 'NumCPUs=[^ ]*')"
# A pass has run since the restart once the node is up again.
for i in $(seq 200); do "$QP_BIN/qstat" --nodes | grep -qE "^ex1[[:space:]].*up" && break; sleep 0.05; done
qp_wait "$other" queued
: > "$W/ex.go"
qp_wait "$id" completed
qp_wait "$other" completed

note "PBS place=excl: the node alone, with the CPUs asked for"
id=$(as qpuser1 qsub -l select=1:ncpus=1 -l place=excl -o "$W/pbs.out" -j oe -v G="$W/pbs" "$W/held.sh") || fail "qsub place=excl: $id"
qp_wait "$id" running
qp_wait_file "$W/pbs.started"
qp_wait_file "$W/pbs.out"
grep -qx "cpus=[01]" "$W/pbs.out" || fail "place=excl's cpuset: $(cat "$W/pbs.out")"
grep -q "ncpus=1$" "$W/pbs.out" || fail "place=excl's NCPUS: $(cat "$W/pbs.out")"
other=$(as qpuser2 qsub -l ncpus=1 -o /dev/null -e /dev/null <<<true) || fail "qsub: $other"
qp_wait "$other" queued
: > "$W/pbs.go"
qp_wait "$id" completed
qp_wait "$other" completed
echo PASS
