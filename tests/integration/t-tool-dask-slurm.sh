#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Dask-jobqueue's SLURMCluster, as its users run it: two workers started
# as Slurm jobs (#SBATCH -J -n 1 --cpus-per-task= --mem= -t, -e/-o in a
# log directory, sbatch's "Submitted batch job ID" read back), a sum
# computed across them, the cluster closed (scancel) and no job left.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tools.sh"
tool_venv dask dask-jobqueue==0.9.0 distributed==2026.8.0
qp_setup
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1" 0-1
export PATH=$QP_BIN:$PATH

cat > "$QP_T/work/qpuser1/dask_slurm.py" <<'PY'
import os
from dask_jobqueue import SLURMCluster
from distributed import Client

logs = os.path.join(os.getcwd(), "dask-logs")
os.makedirs(logs, exist_ok=True)
with SLURMCluster(cores=1, processes=1, memory="1GB", walltime="00:05:00",
                  log_directory=logs) as cluster:
    print(cluster.job_script(), flush=True)
    cluster.scale(2)
    with Client(cluster) as client:
        client.wait_for_workers(2, timeout=120)
        futs = client.map(lambda x: x * x, range(10))
        total = client.submit(sum, futs).result(timeout=60)
        workers = len(client.scheduler_info()["workers"])
        print("workers =", workers, flush=True)
        print("sum =", total, flush=True)
PY
chown qpuser1: "$QP_T/work/qpuser1/dask_slurm.py"
out=$(tool_run qpuser1 300 python dask_slurm.py 2>&1); rc=$?
echo "$out" | tail -40
[ $rc = 0 ] || fail "SLURMCluster run failed (exit $rc)"
echo "$out" | grep -qx "#SBATCH -J dask-worker" || fail "the worker's script is not an #SBATCH script"
echo "$out" | grep -qx "workers = 2" || fail "two workers were not up"
echo "$out" | grep -qx "sum = 285" || fail "the workers did not compute the sum"
# Closing the cluster cancelled its jobs: none is left unfinished.
left=""
for _ in $(seq 120); do
	left=$(squeue -h -u qpuser1 -o %i) || fail "squeue"
	[ -z "$left" ] && break
	sleep 0.5
done
[ -z "$left" ] || fail "jobs left after the cluster closed: $left"
ls "$QP_T"/work/qpuser1/dask-logs/dask-worker-*.err > /dev/null 2>&1 || fail "no worker log in the log directory"
echo "dask slurm ok"
