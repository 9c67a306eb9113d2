#!/bin/bash
# SPDX-License-Identifier: MIT
# PBS scripts that Python workflow packages generate, submitted as they
# come: dask-jobqueue's PBSCluster.job_script() and Parsl's PBS Pro and
# Torque templates (filled as its providers fill them). Installed at test
# time into a venv under the build directory (nothing of theirs is kept
# in the tree); without PyPI this is a SKIP with the reason. Acceptance
# and a start are checked here; the tools' own end-to-end runs are
# elsewhere.
. "$(dirname "$0")/lib.sh"

# build/ for every build (SANITIZE's too): the venv holds Python only.
venv=$QP_TOP/build/pbs-venv
mkdir -p "$QP_TOP/build" || fail "mkdir $QP_TOP/build"
# One maker at a time (another suite on this tree may be at this point).
exec {lock}> "$venv.lock" && flock "$lock" || fail "lock $venv.lock"
if ! "$venv/bin/python" -c 'import dask_jobqueue, parsl' 2>/dev/null; then
	python3 -m venv "$venv" >/dev/null 2>&1 || skip "python3 -m venv failed"
	out=$(timeout 600 "$venv/bin/pip" install -q dask-jobqueue parsl 2>&1) ||
		skip "pip install dask-jobqueue parsl failed: $(tail -1 <<<"$out")"
fi
exec {lock}>&-

qp_setup
qp_start_server
qp_start_node n1 0-1
w=$QP_T/work/qpuser1

"$venv/bin/python" - "$w" <<'PY' || fail "generating the scripts"
import string, sys, os, warnings
warnings.simplefilter("ignore")
w = sys.argv[1]
import parsl.providers.pbspro.template as pro
import parsl.providers.torque.template as torque
common = dict(jobname="parsl.block", walltime="00:05:00", nodes_per_block=1, ncpus=2,
              tasks_per_node=2, select_options="", scheduler_options="", worker_init="",
              submit_script_dir=w, job_stdout_path=w + "/parsl-pro.out",
              job_stderr_path=w + "/parsl-pro.err", user_script="echo parsl ran on $PBS_NP cpus")
for name, t in (("parsl-pbspro.sh", pro.template_string), ("parsl-torque.sh", torque.template_string)):
    with open(os.path.join(w, name), "w") as f:
        f.write(string.Template(t).substitute(common))
from dask_jobqueue import PBSCluster
c = PBSCluster(cores=2, memory="200MB", walltime="00:05:00", processes=1,
               scheduler_options={"dashboard_address": ":0"})
with open(os.path.join(w, "dask-jobqueue.sh"), "w") as f:
    f.write(c.job_script())
c.close()
PY
chown qpuser1: "$w"/*.sh

accepted=0 started=0 total=0
for s in parsl-pbspro.sh parsl-torque.sh dask-jobqueue.sh; do
	total=$((total + 1))
	note "$s: $(grep -c '^#PBS' "$w/$s") directives: $(grep '^#PBS' "$w/$s" | tr '\n' ' ')"
	if ! id=$(as qpuser1 qsub "$s" 2>"$QP_T/err"); then
		echo "REFUSED $s: $(cat "$QP_T/err")"
		continue
	fi
	accepted=$((accepted + 1))
	if [ "$s" = dask-jobqueue.sh ]; then
		# A worker for a scheduler that is gone: it ran once it is running.
		qp_wait "$id" running completed failed
		for ((i = 0; i < 200; i++)); do
			"$QP_BIN/qstat" -x --json "$id" | grep -q '"exec"' && break
			[ "$(qp_state "$id")" != running ] && break
			sleep 0.05
		done
		[ "$(qp_state "$id")" = running ] && as qpuser1 qdel "$id" >/dev/null
		qp_wait "$id" completed failed cancelled
		"$QP_BIN/qstat" -x --json "$id" | grep -q '"exec"' ||
			{ echo "FAILED $s: never started: $(qp_field "$id" reason)"; continue; }
	else
		qp_wait "$id" completed failed --timeout 60
		[ "$(qp_state "$id")" = completed ] || { echo "FAILED $s: $(qp_field "$id" reason)"; continue; }
	fi
	started=$((started + 1))
done
grep -q "parsl ran on 2 cpus" "$w/parsl-pro.out" || fail "Parsl PBS Pro job output: $(cat "$w"/parsl-pro.* 2>&1)"
grep -q "parsl ran on 2 cpus" "$w/parsl.block.submit.stdout" || fail "Parsl Torque job output"
echo "--- generated: $total scripts, $accepted accepted as written, $started ran"
[ "$accepted" = "$total" ] && [ "$started" = "$total" ] || fail "not every generated script ran"
echo PASS
