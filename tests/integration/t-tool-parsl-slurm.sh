#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Parsl's SlurmProvider, as its users run it: a HighThroughputExecutor
# whose block is one Slurm job (#SBATCH --job-name --output --error
# --nodes --time --ntasks-per-node --exclusive, "Submitted batch job ID"
# read back), its state read with sacct -X --noheader
# --format=jobid,state%20 --job ID (Parsl probes sacct -X first); a
# python_app and a bash_app run in it, and the block is cancelled with
# scancel when Parsl stops.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tools.sh"
tool_venv parsl parsl==2026.10.26
qp_setup
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1" 0-1
export PATH=$QP_BIN:$PATH
w=$QP_T/work/qpuser1

cat > "$w/parsl_slurm.py" <<'PY'
import os
import parsl
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.providers import SlurmProvider

venv = os.environ["TOOL_VENV"]
provider = SlurmProvider(nodes_per_block=1, init_blocks=1, min_blocks=0, max_blocks=1,
                         walltime="00:05:00", worker_init=f"source {venv}/bin/activate")
config = Config(executors=[HighThroughputExecutor(label="slurm", address="127.0.0.1",
                                                  max_workers_per_node=1, provider=provider)],
                run_dir=os.path.join(os.getcwd(), "runinfo"), strategy="none")
with parsl.load(config):
    @parsl.python_app
    def add(a, b):
        return a + b

    @parsl.bash_app
    def where(stdout=None):
        return 'echo "job $SLURM_JOB_ID on $SLURM_JOB_NODELIST"'

    print("add =", add(2, 3).result(timeout=120), flush=True)
    print("bash exit =", where(stdout=os.path.join(os.getcwd(), "where.out")).result(timeout=120), flush=True)
    status = provider.status(list(provider.resources))
    print("block state =", status[0].state.name, flush=True)
PY
chown qpuser1: "$w/parsl_slurm.py"
out=$(tool_run qpuser1 240 env TOOL_VENV="$TOOL_VENV" python parsl_slurm.py 2>&1); rc=$?
echo "$out" | tail -20
[ $rc = 0 ] || { tail -20 "$w"/runinfo/*/submit_scripts/*.submit.std* 2>/dev/null; fail "Parsl with SlurmProvider failed (exit $rc)"; }
echo "$out" | grep -qx "add = 5" || fail "the block did not run the python_app"
echo "$out" | grep -qx "bash exit = 0" || fail "the bash_app did not exit 0"
echo "$out" | grep -qx "block state = RUNNING" || fail "sacct did not show the block RUNNING"
grep -qE "^job [0-9]+ on ${QP_NODE_PREFIX}n1$" "$w/where.out" || fail "the bash_app's output: $(cat "$w/where.out")"
# Parsl reads sacct when its probe (sacct -X) succeeds, else squeue.
grep -q "Executing sacct -X --noheader --format=jobid,state%20 --job" "$w"/runinfo/*/parsl.log || fail "Parsl fell back from sacct to squeue"
# Parsl's exit cancelled the block.
left=""
for _ in $(seq 120); do
	left=$(squeue -h -u qpuser1 -o %i) || fail "squeue"
	[ -z "$left" ] && break
	sleep 0.5
done
[ -z "$left" ] || fail "the block is left after Parsl stopped: $left"
echo "parsl slurm ok"
