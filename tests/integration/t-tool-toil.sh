#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Toil's Torque batch system, as its users run it: a two-job workflow
# (a child's result added by its parent's follow-on) whose jobs go to the
# pool with qsub -S /bin/sh -V -l mem=...K, are watched with qstat's
# table (S column, Time Use) and their exit read from qstat -f's
# Exit_status; pbsnodes --version tells Toil which PBS it has.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tools.sh"
# Toil 9.x's TorqueBatchSystem is broken on its own (the grid engine base
# class passes a walltime its prepareSubmission does not take: TypeError
# before any qsub); 8.0.0 is the newest whose Torque batch system runs.
tool_venv toil "toil==8.0.0"
qp_setup
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1" 0-1
w=$QP_T/work/qpuser1

cat > "$w/toil_sum.py" <<'PY'
import os
from toil.common import Toil
from toil.job import Job

def square(job, n):
    return n * n

def total(job, parts):
    return sum(parts)

def fan_out(job):
    parts = [job.addChildJobFn(square, n, cores=1, memory="100M", disk="10M").rv() for n in (1, 2, 3)]
    return job.addFollowOnJobFn(total, parts, cores=1, memory="100M", disk="10M").rv()

if __name__ == "__main__":
    options = Job.Runner.getDefaultOptions(os.path.join(os.getcwd(), "jobstore"))
    options.batchSystem = "torque"
    options.clean = "always"
    options.logLevel = "INFO"
    options.workDir = os.path.join(os.getcwd(), "toil-work")
    os.makedirs(options.workDir, exist_ok=True)
    with Toil(options) as toil:
        print("toil total =", toil.start(Job.wrapJobFn(fan_out, cores=1, memory="100M", disk="10M")), flush=True)
PY
chown qpuser1: "$w/toil_sum.py"
out=$(tool_run qpuser1 400 python toil_sum.py 2>&1); rc=$?
echo "$out" | tail -30
[ $rc = 0 ] || fail "Toil's Torque batch system failed (exit $rc)"
echo "$out" | grep -qx "toil total = 14" || fail "the workflow did not compute 1+4+9"
echo "toil ok"
