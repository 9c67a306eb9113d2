#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Dask-jobqueue's PBSCluster, as its users run it: one worker started as a
# PBS job (#PBS -l select=1:ncpus=1:mem=..., -o DIR/ -e DIR/), a sum
# computed on it, the cluster closed (qdel).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tools.sh"
tool_venv dask dask-jobqueue==0.9.0 distributed==2026.8.0
qp_setup
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1" 0-1

cat > "$QP_T/work/qpuser1/dask_sum.py" <<'PY'
import os
from dask_jobqueue import PBSCluster
from distributed import Client

logs = os.path.join(os.getcwd(), "dask-logs")
os.makedirs(logs, exist_ok=True)
with PBSCluster(cores=1, processes=1, memory="1GB", walltime="00:05:00",
                log_directory=logs) as cluster:
    print(cluster.job_script(), flush=True)
    cluster.scale(1)
    with Client(cluster) as client:
        client.wait_for_workers(1, timeout=90)
        total = client.submit(sum, [1, 2, 3, 4]).result(timeout=60)
        print("sum =", total, flush=True)
PY
chown qpuser1: "$QP_T/work/qpuser1/dask_sum.py"
out=$(tool_run qpuser1 240 python dask_sum.py 2>&1); rc=$?
echo "$out" | tail -40
[ $rc = 0 ] || fail "PBSCluster run failed (exit $rc)"
echo "$out" | grep -qx "sum = 10" || fail "the worker did not compute the sum"
echo "dask ok"
