#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Snakemake's cluster-generic executor, as its users run it on PBS: qsub
# as the submit command (its ID.server taken from the last line), a status
# script reading qstat -x -f -F json, qdel to cancel; a two-rule workflow.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tools.sh"
tool_venv snakemake snakemake snakemake-executor-plugin-cluster-generic
qp_setup
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1" 0-1
w=$QP_T/work/qpuser1

cat > "$w/Snakefile" <<'SMK'
rule all:
    input: "total.txt"

rule numbers:
    output: "numbers.txt"
    shell: "seq 1 10 > {output}"

rule total:
    input: "numbers.txt"
    output: "total.txt"
    threads: 2
    shell: "awk '{{s += $1}} END {{print s}}' {input} > {output}"
SMK
# The status script a PBS user writes: one word for Snakemake.
cat > "$w/pbs-status.py" <<'PY'
import json, subprocess, sys
jid = sys.argv[1]
out = subprocess.run(["qstat", "-x", "-f", "-F", "json", jid], capture_output=True, text=True)
if out.returncode != 0:
    print("running"); sys.exit(0)
job = next(iter(json.loads(out.stdout)["Jobs"].values()))
if job["job_state"] != "F":
    print("running")
elif job.get("Exit_status") == 0:
    print("success")
else:
    print("failed")
PY
chown qpuser1: "$w/Snakefile" "$w/pbs-status.py"
out=$(tool_run qpuser1 240 snakemake --executor cluster-generic --jobs 2 --latency-wait 5 \
	--cluster-generic-submit-cmd "mkdir -p logs && qsub -N smk-{rule} -l ncpus={threads} -l walltime=00:05:00 -j oe -o logs/" \
	--cluster-generic-status-cmd "python pbs-status.py" \
	--cluster-generic-cancel-cmd qdel 2>&1); rc=$?
echo "$out" | tail -25
[ $rc = 0 ] || fail "snakemake failed (exit $rc)"
[ "$(cat "$w/total.txt")" = 55 ] || fail "total.txt is '$(cat "$w/total.txt" 2>/dev/null)', not 55"
[ "$(ls "$w"/logs/smk-* 2>/dev/null | wc -l)" = 2 ] || fail "two jobs' logs expected in logs/: $(ls "$w/logs")"
echo "snakemake ok"
