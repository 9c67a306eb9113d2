#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cgroup v2: the CPUs a job really got. A delegated v2 tree takes any
# cpuset.cpus and grants its intersection with the parent's (the parent's
# whole set when that is empty), silently. When the node's group holds
# less than qnoded offers (an admin's AllowedCPUs=, or a hand edit), gded
# reads back cpuset.cpus.effective after the fence and fails the launch:
# the job goes back to the queue, and the node is drained with one line
# naming the mismatch. On v1 the kernel refuses such a write outright
# (EINVAL), so this is a v2 test (make vm-check's guests).
. "$(dirname "$0")/lib.sh"
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || skip "cgroup v2 only (v1 refuses a cpuset outside the parent's)"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
qp_setup
qp_start_server
node=${QP_NODE_PREFIX}n1
# The node offers CPU 1 alone...
qp_start_node "$node" 1
grp=$(find /sys/fs/cgroup -maxdepth 5 -type d -path "*/$QP_CG_PARENT/$node" | head -n 1)
[ -n "$grp" ] || fail "no node group $QP_CG_PARENT/$node under /sys/fs/cgroup"
[ "$(cat "$grp/cpuset.cpus")" = 1 ] || fail "node group $grp has cpuset.cpus '$(cat "$grp/cpuset.cpus")', not 1"
# ...and its group is given CPU 0 instead, behind qnoded's back.
echo 0 > "$grp/cpuset.cpus" || fail "cannot write $grp/cpuset.cpus"
note "node $node offers CPU 1; its group $grp now has CPU 0"

id=$(as qpuser1 qsub -l ncpus=1 <<<"echo ran > \$PBS_O_WORKDIR/ran") || fail "qsub"
end=$((SECONDS + 120))
while [ $SECONDS -lt $end ]; do
	"$QP_BIN/qstat" --nodes | grep -qE "^${node}[[:space:]].*drained" && break
	sleep 0.2
done
"$QP_BIN/qstat" --nodes | grep -qE "^${node}[[:space:]].*drained" ||
	fail "node $node not drained after the mismatch: $("$QP_BIN/qstat" --nodes)"
reason=$("$QP_BIN/qmgr" nodes | grep "node $node drained")
note "$reason"
echo "$reason" | grep -q "got cpus 0 (cpuset.cpus.effective), not 1 as allocated" ||
	fail "the drain reason does not name the mismatch: '$reason'"
# The job is not the node's victim: back in the queue, it never ran.
qp_wait "$id" queued --timeout 60
[ ! -e "$QP_T/work/qpuser1/ran" ] || fail "job $id ran on the mismatched CPUs"
echo 1 > "$grp/cpuset.cpus"
"$QP_BIN/qdel" "$id" > /dev/null 2>&1
echo "cpuset read-back ok"
