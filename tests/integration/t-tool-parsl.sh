#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Parsl, as its users run it: a HighThroughputExecutor whose block is one
# PBS job, through PBSProProvider (#PBS -S, -m n, -l select=, status by
# qstat -x -f -F json ID) and then TorqueProvider (-l nodes=N:ppn=M,
# status by the qstat table's S column); each runs one python_app.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tools.sh"
tool_venv parsl parsl==2026.10.26
qp_setup
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1" 0-1

cat > "$QP_T/work/qpuser1/parsl_add.py" <<'PY'
import os, sys
import parsl
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.launchers import SingleNodeLauncher
from parsl.providers import PBSProProvider, TorqueProvider

kind = sys.argv[1]
venv = os.environ["TOOL_VENV"]
common = dict(nodes_per_block=1, init_blocks=1, min_blocks=0, max_blocks=1,
              walltime="00:05:00", worker_init=f"source {venv}/bin/activate")
if kind == "pbspro":
    provider = PBSProProvider(cpus_per_node=1, **common)
else:
    # TorqueProvider's default launcher is aprun (Cray); off a Cray one says so.
    provider = TorqueProvider(launcher=SingleNodeLauncher(), **common)
config = Config(executors=[HighThroughputExecutor(label=kind, address="127.0.0.1",
                                                  max_workers_per_node=1, provider=provider)],
                run_dir=os.path.join(os.getcwd(), "runinfo-" + kind), strategy="none")
with parsl.load(config):
    @parsl.python_app
    def add(a, b):
        import socket
        return a + b

    print(kind, "add =", add(2, 3).result(timeout=120), flush=True)
PY
chown qpuser1: "$QP_T/work/qpuser1/parsl_add.py"
for kind in pbspro torque; do
	note "$kind"
	out=$(tool_run qpuser1 200 env TOOL_VENV="$TOOL_VENV" python parsl_add.py "$kind" 2>&1); rc=$?
	echo "$out" | tail -20
	[ $rc = 0 ] || { tail -20 "$QP_T"/work/qpuser1/runinfo-"$kind"/*/submit_scripts/*.submit.std* 2>/dev/null; fail "Parsl with the $kind provider failed (exit $rc)"; }
	echo "$out" | grep -qx "$kind add = 5" || fail "the $kind block did not run the app"
done
echo "parsl ok"
