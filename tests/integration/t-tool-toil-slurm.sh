#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Toil's slurm batch system, as its users run it (--batchSystem slurm): a
# two-job workflow (a child's result added by its parent's follow-on)
# whose jobs go to the pool with sbatch -J --signal=B:INT@30
# --export=ALL --mem --cpus-per-task --time -o -e --wrap=exec ...,
# partitions read from sinfo -a -o "%P %G %l %p %c %m", running jobs
# from squeue -h --format "%i %t %M", and ended ones from sacct -n -j
# IDS --format JobIDRaw,State,ExitCode -P -S 1970-01-01.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tools.sh"
# The newest Toil (its slurm batch system is the one its authors run; the
# Torque one needs 8.0.0, t-tool-toil), in a venv of its own.
tool_venv toil9 "toil==9.6.0"
qp_setup
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1" 0-1
w=$QP_T/work/qpuser1

cat > "$w/toil_slurm.py" <<'PY'
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
    options.batchSystem = "slurm"
    options.clean = "always"
    options.logLevel = "INFO"
    options.workDir = os.path.join(os.getcwd(), "toil-work")
    os.makedirs(options.workDir, exist_ok=True)
    with Toil(options) as toil:
        print("toil total =", toil.start(Job.wrapJobFn(fan_out, cores=1, memory="100M", disk="10M")), flush=True)
PY
chown qpuser1: "$w/toil_slurm.py"
out=$(tool_run qpuser1 400 python toil_slurm.py 2>&1); rc=$?
echo "$out" | tail -30
[ $rc = 0 ] || fail "Toil's slurm batch system failed (exit $rc)"
echo "$out" | grep -qx "toil total = 14" || fail "the workflow did not compute 1+4+9"
# Every job went through sbatch: sacct knows them, each COMPLETED.
states=$(PATH=$QP_BIN:$PATH sacct -X -n -P -u qpuser1 --format=JobName,State -S 1970-01-01) || fail "sacct"
echo "$states"
[ "$(echo "$states" | grep -c '^toil_job_.*|COMPLETED$')" -ge 5 ] || fail "not every Toil job COMPLETED in sacct"
echo "toil slurm ok"
