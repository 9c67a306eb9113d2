#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# FireWorks' PBS queue adapter (CommonAdapter, q_type PBS), as qlaunch
# drives it: its PBS template filled and submitted with qsub, the job id
# read from what qsub printed, and the user's jobs in the queue counted
# from qstat -u's S and Queue columns until the job is done. A whole
# rocket needs a MongoDB LaunchPad, which this machine does not run, so
# the job runs a stand-in for rlaunch that leaves a file.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tools.sh"
tool_venv fireworks FireWorks
qp_setup
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1" 0-1
w=$QP_T/work/qpuser1

cat > "$w/fw_qadapter.py" <<'PY'
import os, time
from fireworks.user_objects.queue_adapters.common_adapter import CommonAdapter

launch_dir = os.getcwd()
qa = CommonAdapter(q_type="PBS", q_name="qpool", queue="batch", nnodes=1, ppnode=1,
                   walltime="00:05:00", job_name="fw_rocket",
                   rocket_launch="sleep 2; echo rocket launched > rocket.txt")
script = os.path.join(launch_dir, "FW_submit.script")
with open(script, "w") as f:
    f.write(qa.get_script_str(launch_dir))
jobid = qa.submit_to_queue(script)
print("job id", jobid, flush=True)
assert jobid is not None
seen = qa.get_njobs_in_queue()
print("jobs in queue", seen, flush=True)
assert seen == 1, seen
deadline = time.time() + 90
while qa.get_njobs_in_queue() != 0:
    assert time.time() < deadline, "the job never left the queue"
    time.sleep(0.5)
assert open("rocket.txt").read().strip() == "rocket launched"
print("fireworks qadapter ok", flush=True)
PY
chown qpuser1: "$w/fw_qadapter.py"
out=$(tool_run qpuser1 150 python fw_qadapter.py 2>&1); rc=$?
echo "$out" | tail -20
[ $rc = 0 ] || fail "FireWorks' PBS adapter failed (exit $rc): $(cat "$w"/FW_job.error 2>/dev/null)"
echo "$out" | grep -qx "fireworks qadapter ok" || fail "FireWorks' PBS adapter did not finish"
echo "fireworks ok"
