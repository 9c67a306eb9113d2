#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# submitit, as its users run it: AutoExecutor finds Slurm (srun on PATH)
# and submits a function as an sbatch script (#SBATCH --signal=USR2@90
# --open-mode=append --output/--error with %j, srun --unbuffered --output
# ... inside); its result comes back, and a map_array over three inputs
# is one --array=0-2%3 job whose tasks' results come back in order; an
# exception comes back too; a running job is cancelled (scancel) and
# seen CANCELLED; states are read with sacct -o JobID,State,NodeList
# --parsable2 -j ID.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tools.sh"
tool_venv submitit submitit==1.5.4
qp_setup
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1" 0-1
w=$QP_T/work/qpuser1

cat > "$w/submitit_run.py" <<'PY'
import os, time
import submitit

def add(a, b):
    return a + b, os.environ.get("SLURM_JOB_ID"), os.environ.get("SUBMITIT_EXECUTOR")

def square(x):
    return x * x

ex = submitit.AutoExecutor(folder=os.path.join(os.getcwd(), "submitit-logs/%j"))
print("cluster", ex.cluster, flush=True)
ex.update_parameters(timeout_min=5, cpus_per_task=1, mem_gb=1)
job = ex.submit(add, 2, 3)
print("job id", job.job_id, flush=True)
total, jobid, executor = job.result()
print("add =", total, flush=True)
assert jobid == job.job_id and executor == "slurm", (jobid, job.job_id, executor)
print("state", job.state, flush=True)
jobs = ex.map_array(square, [1, 2, 3])
print("array ids", [j.job_id for j in jobs], flush=True)
print("squares =", [j.result() for j in jobs], flush=True)
# A function that raises: submitit's FailedJobError carries its trace.
bad = ex.submit(int, "x")
exc = bad.exception()
print("raised", type(exc).__name__, "ValueError" in str(exc), flush=True)
# Cancelled while it runs: scancel, then sacct's "CANCELLED by UID".
slow = ex.submit(time.sleep, 120)
deadline = time.time() + 90
while slow.state != "RUNNING":
    assert time.time() < deadline, slow.state
    time.sleep(0.5)
slow.cancel()
while not slow.done():
    assert time.time() < deadline + 60, slow.state
    time.sleep(0.5)
print("cancelled state", slow.state, flush=True)
assert slow.state.startswith("CANCELLED"), slow.state
print("submitit ok", flush=True)
PY
chown qpuser1: "$w/submitit_run.py"
out=$(tool_run qpuser1 240 python submitit_run.py 2>&1); rc=$?
echo "$out" | tail -30
[ $rc = 0 ] || { tail -n 20 "$w"/submitit-logs/*/*.err 2>/dev/null; fail "submitit failed (exit $rc)"; }
echo "$out" | grep -qx "cluster slurm" || fail "AutoExecutor did not pick Slurm"
echo "$out" | grep -qx "add = 5" || fail "the function's result did not come back"
echo "$out" | grep -qx "squares = \[1, 4, 9\]" || fail "the array's results did not come back"
echo "$out" | grep -qx "raised FailedJobError True" || fail "the function's exception did not come back"
echo "$out" | grep -qx "submitit ok" || fail "submitit did not see its job cancelled"
echo "submitit ok"
