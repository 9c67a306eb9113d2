#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A node that stops heartbeating is down after node_timeout: its rerunnable
# job is requeued and runs elsewhere, the other fails with the reason; when
# the node comes back, its copies are killed and nothing is counted twice.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
qp_start_node n1

w=$QP_T/work/qpuser1
# On n1 the job outlives the whole test, so only a kill can stop it there.
job='node=$(sort -u "$PBS_NODEFILE"); echo $$ > '"$w"'/pid.$PBS_JOBID.$node
if [ "$node" = n1 ]; then sleep 30; else sleep 2; fi
echo done.$node >> '"$w"'/out.$PBS_JOBID'
rerun=$(echo "$job" | as qpuser1 qsub -N rerun) || fail qsub
norerun=$(echo "$job" | as qpuser1 qsub -N norerun -r n) || fail qsub
qp_wait "$rerun" running
qp_wait "$norerun" running
qp_wait_file "$w/pid.$rerun.n1"
qp_wait_file "$w/pid.$norerun.n1"

note "n1 stops (SIGSTOP): no heartbeat, its jobs keep running"
kill -STOP "$(qp_node_pid n1)"
qp_start_node n2 1
qp_wait "$norerun" failed --timeout 20
qp_field "$norerun" reason | grep -q "node n1 was lost" || fail "no reason for $norerun: $(qp_field "$norerun" reason)"
"$QP_BIN/qstat" -n | grep -E '^n1[[:space:]].*down' || fail "n1 not down"
qp_wait "$rerun" running --timeout 20
[ "$(qp_field "$rerun" exec_host)" = n2 ] || fail "requeued job $rerun not on n2"

note "n1 comes back: its stale copies are killed, not reported"
kill -CONT "$(qp_node_pid n1)"
for _ in $(seq 100); do "$QP_BIN/qstat" -n | grep -qE '^n1[[:space:]].*up' && break; sleep 0.1; done
"$QP_BIN/qstat" -n | grep -qE '^n1[[:space:]].*up' || fail "n1 did not come back"
for id in "$rerun" "$norerun"; do
	pid=$(cat "$w/pid.$id.n1")
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && fail "stale copy of job $id on n1 (pid $pid) still runs"
done
qp_wait "$rerun" completed --timeout 30
[ "$(qp_field "$rerun" exec_host)" = n2 ] || fail "job $rerun recorded on $(qp_field "$rerun" exec_host)"
[ "$(qp_state "$norerun")" = failed ] || fail "job $norerun changed to $(qp_state "$norerun") after n1 returned"
grep -q done.n1 "$w/out.$rerun" 2>/dev/null && fail "n1's copy of $rerun ran to the end"
[ "$(grep -c done "$w/out.$rerun")" = 1 ] || fail "job $rerun finished more than once"
echo "node loss ok"
