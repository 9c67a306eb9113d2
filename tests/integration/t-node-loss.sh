#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A node that stops heartbeating is down after node_timeout: its rerunnable
# job is requeued and runs elsewhere, the other fails with the reason; when
# the node comes back, its copies are killed and nothing is counted twice.
# Then the same when qpoold restarts while the node is away and the node
# does not return within node_timeout; and qsub -r defaults to the queue's
# rerunnable key. Last, a lost node that returns as the only node reruns its
# requeued job: the stale copy's report (cancelled) is not taken for the
# new run's.
. "$(dirname "$0")/lib.sh"
qp_setup "
[queue norerun]
rerunnable = no"
qp_start_server
qp_start_node n1

w=$QP_T/work/qpuser1
# job NODE: on NODE the job outlives the whole test, so only a kill can
# stop it there; elsewhere it takes 2 s.
job() {
	printf '%s\n' 'node=$(sort -u "$PBS_NODEFILE"); echo $$ > '"$w"'/pid.$QPOOL_JOBID.$node' \
		'if [ "$node" = '"$1"' ]; then sleep 30; else sleep 2; fi' \
		'echo done.$node >> '"$w"'/out.$QPOOL_JOBID'
}
job1=$(job n1)
rerun=$(echo "$job1" | as qpuser1 qsub -N rerun) || fail qsub
norerun=$(echo "$job1" | as qpuser1 qsub -N norerun -r n) || fail qsub
qp_wait "$rerun" running
qp_wait "$norerun" running
qp_wait_file "$w/pid.$rerun.n1"
qp_wait_file "$w/pid.$norerun.n1"

note "n1 stops (SIGSTOP): no heartbeat, its jobs keep running"
kill -STOP "$(qp_node_pid n1)"
qp_start_node n2 1
qp_wait "$norerun" failed --timeout 20
qp_field "$norerun" reason | grep -q "node n1 was lost" || fail "no reason for $norerun: $(qp_field "$norerun" reason)"
"$QP_BIN/qstat" --nodes | grep -E '^n1[[:space:]].*down' || fail "n1 not down"
qp_wait "$rerun" running --timeout 20
[ "$(qp_field "$rerun" exec_host)" = n2 ] || fail "requeued job $rerun not on n2"

note "n1 comes back: its stale copies are killed, not reported"
kill -CONT "$(qp_node_pid n1)"
for _ in $(seq 100); do "$QP_BIN/qstat" --nodes | grep -qE '^n1[[:space:]].*up' && break; sleep 0.1; done
"$QP_BIN/qstat" --nodes | grep -qE '^n1[[:space:]].*up' || fail "n1 did not come back"
for id in "$rerun" "$norerun"; do
	pid=$(cat "$w/pid.$id.n1")
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && fail "stale copy of job $id on n1 (pid $pid) still runs"
done
qp_wait "$rerun" completed --timeout 30
[ "$(qp_field "$rerun" exec_host)" = n2 ] || fail "job $rerun recorded on $(qp_field "$rerun" exec_host)"
[ "$(qp_state "$norerun")" = failed ] || fail "job $norerun changed to $(qp_state "$norerun") after n1 returned"
grep -q done.n1 "$w/out.$rerun" 2>/dev/null && fail "n1's copy of $rerun ran to the end"
# shellcheck disable=SC1010 # "done" is grep's pattern
[ "$(grep -c done "$w/out.$rerun")" = 1 ] || fail "job $rerun finished more than once"

note "qpoold restarts while node n3 is away; n3 stays away past node_timeout"
qp_stop "$(qp_node_pid n1)"
qp_stop "$(qp_node_pid n2)"
# (Not ${job//n1/n3}: the test's directory's random name can hold "n1".)
job3=$(job n3)
qp_start_node n3
# (batch's default, rerunnable = yes, is the job "rerun" above, submitted without -r.)
qnorr=$(echo "$job3" | as qpuser1 qsub -N qnorr -q norerun) || fail qsub  # queue says no
forced=$(echo "$job3" | as qpuser1 qsub -N forced -q norerun -r y) || fail qsub
for id in "$qnorr" "$forced"; do
	qp_wait "$id" running
	qp_wait_file "$w/pid.$id.n3"
done
kill -STOP "$(qp_node_pid n3)"
qp_stop "$QP_SERVER_PID"
qp_start_server
restarted=$SECONDS
for id in "$qnorr" "$forced"; do
	[ "$(qp_state "$id")" = running ] || fail "job $id is $(qp_state "$id") right after the restart"
done
qp_start_node n4 1
qp_wait "$qnorr" failed --timeout 20
[ $((SECONDS - restarted)) -ge 4 ] || fail "job $qnorr failed $((SECONDS - restarted))s after the restart, before node_timeout (5s)"
qp_field "$qnorr" reason | grep -q "node n3 was lost" || fail "no reason for $qnorr: $(qp_field "$qnorr" reason)"
# shellcheck disable=SC2066 # one job, in the loop shape of its neighbours
for id in "$forced"; do
	qp_wait "$id" completed --timeout 30
	[ "$(qp_field "$id" exec_host)" = n4 ] || fail "requeued job $id ran on $(qp_field "$id" exec_host), not n4"
	[ "$(grep -c done.n4 "$w/out.$id")" = 1 ] || fail "job $id did not finish exactly once on n4"
done

note "n3 returns after the timeout: its copies are killed"
kill -CONT "$(qp_node_pid n3)"
for id in "$qnorr" "$forced"; do
	pid=$(cat "$w/pid.$id.n3")
	for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && fail "stale copy of job $id on n3 (pid $pid) still runs"
	grep -q done.n3 "$w/out.$id" 2>/dev/null && fail "n3's copy of $id ran to the end"
done
[ "$(qp_state "$qnorr")" = failed ] || fail "job $qnorr changed to $(qp_state "$qnorr") after n3 returned"
# The copies' groups go when their gded has torn down, after their last
# process: only with none left does n3, stopping, remove its node group
# (a job's group outlives qnoded by design).
for _ in $(seq 100); do
	[ -z "$(qp_cgroups_left | grep "/n3/job\.")" ] && break
	sleep 0.1
done
[ -z "$(qp_cgroups_left | grep "/n3/job\.")" ] || fail "n3's stale copies left groups: $(qp_cgroups_left | grep "/n3/job\.")"
note "a lost node returns as the only node: its requeued job reruns there, not 'cancelled'"
qp_stop "$(qp_node_pid n3)"
qp_stop "$(qp_node_pid n4)"
qp_start_node n5
# The first run outlives the loss; the rerun, seeing it ran before, is short.
job5='if [ -e '"$w"'/first.$QPOOL_JOBID ]; then echo rerun >> '"$w"'/out.$QPOOL_JOBID
else echo $$ > '"$w"'/first.$QPOOL_JOBID; sleep 60; fi'
again=$(echo "$job5" | as qpuser1 qsub -N again) || fail qsub
qp_wait "$again" running
qp_wait_file "$w/first.$again"
kill -STOP "$(qp_node_pid n5)"
qp_wait "$again" queued --timeout 20
qp_field "$again" reason | grep -q "requeued: node n5 was lost" || fail "job $again not requeued: $(qp_field "$again" reason)"
kill -CONT "$(qp_node_pid n5)"
qp_wait "$again" completed failed cancelled --timeout 30
[ "$(qp_state "$again")" = completed ] ||
	fail "requeued job $again ended $(qp_state "$again") ($(qp_field "$again" reason)), not rerun to completion"
[ "$(cat "$w/out.$again")" = rerun ] || fail "job $again's rerun output: $(cat "$w/out.$again" 2>&1)"
pid=$(cat "$w/first.$again")
kill -0 "$pid" 2>/dev/null && fail "the stale first run of $again (pid $pid) still runs"

note "a qdel while the new run waits for the stale copy to go cancels the new run"
# The first run ignores SIGTERM, so its gded needs kill_grace to end it.
job6='if [ -e '"$w"'/first.$QPOOL_JOBID ]; then sleep 30; echo rerun-ended >> '"$w"'/out.$QPOOL_JOBID
else echo $$ > '"$w"'/first.$QPOOL_JOBID; trap "" TERM; while :; do sleep 0.2; done; fi'
late=$(echo "$job6" | as qpuser1 qsub -N late) || fail qsub
qp_wait_file "$w/first.$late"
kill -STOP "$(qp_node_pid n5)"
qp_wait "$late" queued --timeout 20
kill -CONT "$(qp_node_pid n5)"
for _ in $(seq 200); do
	grep -q "job $late: new run waits until the stale copy here is gone" "$QP_T/qnoded-n5.log" && break
	sleep 0.05
done
grep -q "job $late: new run waits" "$QP_T/qnoded-n5.log" || fail "n5 did not hold the new run of $late"
as qpuser1 qdel "$late" || fail "qdel $late"
qp_wait "$late" cancelled completed failed --timeout 30
[ "$(qp_state "$late")" = cancelled ] || fail "job $late ended $(qp_state "$late") ($(qp_field "$late" reason)) after qdel"
grep -q rerun-ended "$w/out.$late" 2>/dev/null && fail "the new run of $late ran to its end after qdel"
echo "node loss ok"
