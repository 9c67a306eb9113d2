#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# PSI/J, as its users run it: a job submitted with the "pbs" executor
# (PBS Pro: #PBS -N="name", -l select=...:mpiprocs=, place=scatter:shared,
# -V) and with "pbs_classic" (-l nodes=N:ppn=M, -n), each waited for
# through qstat -f -F json -x ID; a failing job is seen as FAILED and a
# cancelled one as CANCELED.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tools.sh"
tool_venv psij psij-python==0.9.11
qp_setup
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1" 0-1

cat > "$QP_T/work/qpuser1/psij_run.py" <<'PY'
import os, sys, time
from datetime import timedelta
from pathlib import Path
from psij import Job, JobExecutor, JobSpec, JobState
from psij.executors.batch.pbs_base import PBSExecutorConfig

name = sys.argv[1]
# Poll qstat every 2 s rather than PSI/J's default 30, to keep the test short.
ex = JobExecutor.get_instance(name, config=PBSExecutorConfig(queue_polling_interval=2))
out = Path(os.getcwd()) / f"{name}.out"
job = Job(JobSpec(executable="/bin/echo", arguments=["hello", name], stdout_path=out))
ex.submit(job)
print(name, "native id", job.native_id, flush=True)
st = job.wait(timeout=timedelta(seconds=90))
print(name, "state", st.state if st else None, flush=True)
assert st and st.state == JobState.COMPLETED, st
assert out.read_text().strip() == f"hello {name}", out.read_text()

bad = Job(JobSpec(executable="/bin/false"))
ex.submit(bad)
st = bad.wait(timeout=timedelta(seconds=90))
print(name, "false:", st.state if st else None, flush=True)
assert st and st.state == JobState.FAILED, st

slow = Job(JobSpec(executable="/bin/sleep", arguments=["120"]))
ex.submit(slow)
slow.wait(timeout=timedelta(seconds=60), target_states=[JobState.ACTIVE])
slow.cancel()
st = slow.wait(timeout=timedelta(seconds=60))
print(name, "cancelled:", st.state if st else None, flush=True)
assert st and st.state == JobState.CANCELED, st
print(name, "ok", flush=True)
PY
chown qpuser1: "$QP_T/work/qpuser1/psij_run.py"
for ex in pbs pbs_classic; do
	note "$ex"
	out=$(tool_run qpuser1 300 python psij_run.py "$ex" 2>&1); rc=$?
	echo "$out" | tail -20
	[ $rc = 0 ] || fail "PSI/J's $ex executor failed (exit $rc)"
	echo "$out" | grep -qx "$ex ok" || fail "PSI/J's $ex executor did not finish its jobs"
done
echo "psij ok"
