#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A job whose gded is killed (kill -9) is not orphaned: qnoded kills every
# process in the job's groups, setsid'ed ones included, removes the groups,
# and only then reports the job failed ("wrapper lost"); the next job on
# the same CPU runs.
. "$(dirname "$0")/lib.sh"
[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no memory controller"
qp_setup
qp_start_server
qp_start_node n1 0
w=$QP_T/work/qpuser1

cat > "$QP_T/orphan.sh" <<JOB
sleep 300 &
echo \$! > $w/pids
setsid sleep 300 &
echo \$! >> $w/pids
echo ready > $w/ready
wait
JOB
chmod 644 "$QP_T/orphan.sh"
a=$(as qpuser1 qsub -N orphan "$QP_T/orphan.sh") || fail "qsub"
qp_wait_file "$w/ready"
spec="$QP_T/state/nodes/n1/jobs/$a.json"
gpid=$(pgrep -f "gded --spec $spec") || fail "no gded for job $a"
pids=$(cat "$w/pids")
note "job $a: gded $gpid, processes $(echo $pids)"
kill -KILL "$gpid"

qp_wait "$a" failed
reason=$(qp_field "$a" reason)
note "job $a: $reason"
case $reason in *"wrapper lost"*) ;; *) fail "job $a failed with '$reason', not 'wrapper lost'" ;; esac
# Gone, or dead and not yet reaped by init (a zombie runs nothing).
for p in $pids; do
	st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ] || fail "process $p of job $a (state $st) outlived its reported end"
done
left=$(find /sys/fs/cgroup -maxdepth 4 -type d -path "*/$QP_CG_PARENT/n1/job.$a")
[ -z "$left" ] || fail "groups of job $a left: $left"

# The same CPU takes the next job.
echo "echo next" > "$QP_T/next.sh"
chmod 644 "$QP_T/next.sh"
b=$(as qpuser1 qsub -N next "$QP_T/next.sh") || fail "qsub next"
qp_wait "$b" completed
echo PASS
