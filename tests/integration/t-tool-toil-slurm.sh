#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Toil's slurm batch system, as its users run it (--batchSystem slurm): a
# two-job workflow (a child's result added by its parent's follow-on)
# whose jobs go to the pool with sbatch -J --signal=B:INT@30
# --export=ALL --mem --cpus-per-task --time -o -e --wrap=exec ...,
# partitions read from sinfo -a -o "%P %G %l %p %c %m", running jobs
# from squeue -h --format "%i %t %M", and ended ones from sacct -n -j
# IDS --format JobIDRaw,State,ExitCode -P -S 1970-01-01.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tools.sh"
# The newest Toil (its slurm batch system is the one its authors run; the
# Torque one needs 8.0.0, t-tool-toil), in a venv of its own.
tool_venv toil9 "toil==9.6.0"
qp_setup
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1" 0-1
toil_sum slurm
# Every job went through sbatch: sacct knows them, each COMPLETED.
states=$(PATH=$QP_BIN:$PATH sacct -X -n -P -u qpuser1 --format=JobName,State -S 1970-01-01) || fail "sacct"
echo "$states"
[ "$(echo "$states" | grep -c '^toil_job_.*|COMPLETED$')" -ge 5 ] || fail "not every Toil job COMPLETED in sacct"
echo "toil slurm ok"
