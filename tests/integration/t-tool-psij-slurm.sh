#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# PSI/J's slurm executor, as its users run it: sbatch of its script
# (#SBATCH --job-name --nodes --ntasks --time -e/-o /dev/null
# --export=NONE; the node file made with scontrol show hostnames), its
# jobs watched with squeue -O JobArrayID,StateCompact,Reason -t all --me
# and cancelled with scancel -Q, listed with squeue --me -o %i -h -r -t
# all. A job runs and is COMPLETED with its output and node file, one
# that fails is FAILED with its exit code, one past its time limit FAILED
# with Slurm's reason, a cancelled one CANCELED.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tools.sh"
tool_venv psij psij-python==0.9.11
qp_setup
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1" 0-1

cat > "$QP_T/work/qpuser1/psij_slurm.py" <<'PY'
import os, sys
from datetime import timedelta
from pathlib import Path
from psij import Job, JobAttributes, JobExecutor, JobSpec, JobState, ResourceSpecV1
from psij.executors.batch.slurm import SlurmExecutorConfig

# Poll squeue every 2 s rather than PSI/J's default 30, to keep the test short.
ex = JobExecutor.get_instance("slurm", config=SlurmExecutorConfig(queue_polling_interval=2))
node = sys.argv[1]
out = Path(os.getcwd()) / "slurm.out"
job = Job(JobSpec(executable="/bin/sh", arguments=["-c", 'echo "hello $SLURM_JOB_ID"; cat "$PSIJ_NODEFILE"'],
                  stdout_path=out, resources=ResourceSpecV1(process_count=2)))
ex.submit(job)
print("native id", job.native_id, flush=True)
st = job.wait(timeout=timedelta(seconds=90))
print("state", st.state if st else None, flush=True)
assert st and st.state == JobState.COMPLETED, st
# Two processes on one node: PSI/J's node file lists the node twice.
assert out.read_text().split("\n") == [f"hello {job.native_id}", node, node, ""], out.read_text()

bad = Job(JobSpec(executable="/bin/sh", arguments=["-c", "exit 3"]))
ex.submit(bad)
st = bad.wait(timeout=timedelta(seconds=90))
print("exit 3:", st.state if st else None, st.exit_code if st else None, flush=True)
assert st and st.state == JobState.FAILED and st.exit_code == 3, st

# Past its time limit the job is TO in squeue, FAILED for PSI/J, which
# reads the reason (TimeLimit) as its message: an unknown one fails its poll.
late = Job(JobSpec(executable="/bin/sleep", arguments=["120"],
                   attributes=JobAttributes(duration=timedelta(seconds=3))))
ex.submit(late)
st = late.wait(timeout=timedelta(seconds=90))
print("timed out:", st.state if st else None, st.message if st else None, flush=True)
assert st and st.state == JobState.FAILED and "time limit" in (st.message or ""), st

slow = Job(JobSpec(executable="/bin/sleep", arguments=["120"]))
ex.submit(slow)
slow.wait(timeout=timedelta(seconds=60), target_states=[JobState.ACTIVE])
# PSI/J's list: squeue --me -o %i -h -r -t all, the user's jobs, ended ones too.
listed = ex.list()
print("listed", listed, flush=True)
assert slow.native_id in listed and job.native_id in listed, listed
slow.cancel()
st = slow.wait(timeout=timedelta(seconds=60))
print("cancelled:", st.state if st else None, flush=True)
assert st and st.state == JobState.CANCELED, st
print("slurm ok", flush=True)
PY
chown qpuser1: "$QP_T/work/qpuser1/psij_slurm.py"
out=$(tool_run qpuser1 300 python psij_slurm.py "${QP_NODE_PREFIX}n1" 2>&1); rc=$?
echo "$out" | tail -30
[ $rc = 0 ] || fail "PSI/J's slurm executor failed (exit $rc)"
echo "$out" | grep -qx "slurm ok" || fail "PSI/J's slurm executor did not finish its jobs"
echo "psij slurm ok"
