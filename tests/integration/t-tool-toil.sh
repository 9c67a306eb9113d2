#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Toil's Torque batch system, as its users run it: a two-job workflow
# (a child's result added by its parent's follow-on) whose jobs go to the
# pool with qsub -S /bin/sh -V -l mem=...K, are watched with qstat's
# table (S column, Time Use) and their exit read from qstat -f's
# Exit_status; pbsnodes --version tells Toil which PBS it has.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tools.sh"
# Toil 9.x's TorqueBatchSystem is broken on its own (the grid engine base
# class passes a walltime its prepareSubmission does not take: TypeError
# before any qsub); 8.0.0 is the newest whose Torque batch system runs.
tool_venv toil "toil==8.0.0"
qp_setup
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1" 0-1
toil_sum torque
echo "toil ok"
