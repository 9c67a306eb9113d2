#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Restarting qpoold with jobs queued and running loses nothing; restarting
# qnoded never kills a job: the running job finishes and is recorded, and
# a task it starts after the restart runs (its gded makes its control
# socket when the qnoded it was launched by goes, for the next one).
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
qp_start_node n1 0

w=$QP_T/work/qpuser1
# The job runs until both restarts are done (bounded), not for a fixed
# time a slow host (a TCG guest of make vm-check) outlasts.
run=$(as qpuser1 qsub -N long <<JOB
echo begin > $w/long.mark
for i in \$(seq 1200); do [ -e $w/go ] && break; sleep 0.1; done
echo "rsh=\$(qpool-rsh "\$(head -n 1 "\$PBS_NODEFILE")" echo after)" >> $w/long.mark
echo end >> $w/long.mark
JOB
) || fail "qsub"
qp_wait "$run" running
queued=()
for i in 1 2 3; do
	queued+=("$(echo "echo q$i" | as qpuser2 qsub -N q$i)") || fail "qsub"
done
held=$(echo 'echo held' | as qpuser2 qsub -h) || fail "qsub -h"
qp_wait_file "$w/long.mark"

note "restart qpoold while job $run runs and ${queued[*]} wait"
qp_stop "$QP_SERVER_PID"
qp_start_server
[ "$(qp_state "$run")" = running ] || fail "running job $run is '$(qp_state "$run")' after qpoold restart"
[ "$(qp_state "$held")" = held ] || fail "held job lost its hold"

note "restart qnoded while job $run runs"
ctl=$QP_T/state/nodes/n1/jobs/$run.ctl
[ -e "$ctl" ] && fail "a control socket before any task: $ctl"
qp_stop "$(qp_node_pid n1)"
grep -q begin "$w/long.mark" || fail "job did not start"
for _ in $(seq 600); do [ -S "$ctl" ] && break; sleep 0.05; done
[ -S "$ctl" ] || fail "job $run's gded made no control socket when its qnoded went"
qp_start_node n1 0
touch "$w/go"
qp_wait "$run" completed --timeout 30
grep -qx end "$w/long.mark" || fail "job $run was cut short by the restarts"
grep -qx rsh=after "$w/long.mark" || fail "a task after qnoded's restart: $(cat "$w/long.mark" "$w/long.e$run" 2>/dev/null)"
for id in "${queued[@]}"; do
	qp_wait "$id" completed --timeout 30
done
[ "$(qp_state "$held")" = held ] || fail "held job ran"
n=$("$QP_BIN/qstat" --table -x | grep -cE '^[0-9]+ ')
[ "$n" = 5 ] || fail "expected 5 jobs after restarts, qstat -x shows $n"
echo "restart ok"
