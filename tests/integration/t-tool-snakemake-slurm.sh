#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Snakemake with snakemake-executor-plugin-slurm, as its users run it:
# --executor slurm on a two-rule workflow; each rule's job is an sbatch
# script (its run's uuid as --job-name, --comment, -o with %j, --time,
# --mem, --cpus-per-task), its states read with sacct -X --parsable2
# --noheader --format=JobIdRaw,State --name UUID, and each job runs its
# rule with srun inside (snakemake-executor-plugin-slurm-jobstep).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tools.sh"
tool_venv snakemake-slurm snakemake==9.27.1 snakemake-executor-plugin-slurm==2.8.0 \
	snakemake-executor-plugin-slurm-jobstep==0.6.1
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
    shell: "awk '{{s += $1}} END {{print s}}' {input} > {output}; echo $SLURM_JOB_ID $SLURM_CPUS_PER_TASK ${{SLURM_STEP_ID:-none}} >> {output}.where"
SMK
chown qpuser1: "$w/Snakefile"
# Status checks every 5 s rather than the plugin's first 40 s, to keep the
# test short; the logs of successful jobs kept, to be looked at.
out=$(tool_run qpuser1 300 snakemake --executor slurm --jobs 2 --latency-wait 5 \
	--slurm-init-seconds-before-status-checks 5 --slurm-keep-successful-logs \
	--default-resources runtime=5 mem_mb=1000 slurm_partition=batch 2>&1); rc=$?
echo "$out" | tail -40
[ $rc = 0 ] || { tail -n 20 "$w"/.snakemake/slurm_logs/*/*/*.log 2>/dev/null; fail "snakemake failed (exit $rc)"; }
[ "$(cat "$w/total.txt")" = 55 ] || fail "total.txt is '$(cat "$w/total.txt" 2>/dev/null)', not 55"
read -r jobid cpus step < "$w/total.txt.where" || fail "the total rule left no total.txt.where"
[ "$cpus" = 2 ] || fail "the total rule's job had $cpus CPUs per task, not its 2 threads"
# The jobstep plugin ran the rule in the job through srun: a step.
[ "$step" != none ] || fail "the total rule did not run in an srun step"
# Each rule was a job of the pool, COMPLETED in sacct.
states=$(PATH=$QP_BIN:$PATH sacct -X -n -P -u qpuser1 --format=JobID,State -S 1970-01-01) || fail "sacct"
echo "$states"
[ "$(echo "$states" | grep -c '|COMPLETED$')" = 2 ] || fail "two COMPLETED jobs expected in sacct"
echo "$states" | grep -qx "$jobid|COMPLETED" || fail "the total rule's job $jobid is not in sacct"
ls "$w"/.snakemake/slurm_logs/rule_total/"$jobid".log > /dev/null || fail "no slurm log for the total rule's job"
echo "snakemake slurm ok"
