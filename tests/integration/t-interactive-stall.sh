#!/bin/bash
# SPDX-License-Identifier: MIT
# qsub -I whose owner's end stops reading (a stopped qsub) while the job
# prints without end: gded's relay never blocks its own loop, so the
# job still ends at its walltime, qdel -W force still ends it, gded tears
# down and the node's only CPU is free for another user's job. The job
# blocks on its own terminal meanwhile (backpressure), not gded.
. "$(dirname "$0")/lib.sh"

qp_setup
qp_start_server
qp_start_node n1 0
W=$QP_T/work/qpuser1
STALL_PGIDS=()
# the stopped qsubs are ours: continue and end them, however the test ends
stall_cleanup() {
	local p
	for p in "${STALL_PGIDS[@]}"; do
		kill -CONT -- "-$p" 2>/dev/null
		kill -KILL -- "-$p" 2>/dev/null
	done
}
QP_ATEXIT+=(stall_cleanup)

# stall NAME WALLTIME: qsub -I running `yes` (its pid in $W/NAME.pid), its
# qsub stopped once the job runs, back when the job is blocked on its
# terminal (it wrote nothing for a second); the job's id in STALL_ID.
stall() {
	local name=$1 i w0 w1 pid
	# setpriv execs (runuser would fork, stop itself with its stopped
	# child and stay stopped): the group stopped is qsub alone
	setsid setpriv --reuid=qpuser1 --regid=qpuser1 --init-groups \
		env -C "$W" HOME="$W" USER=qpuser1 QPOOL_CONF="$QPOOL_CONF" PATH="$QP_BIN:/usr/bin:/bin" \
		qsub -I -l "walltime=$2" -- sh -c "echo \$\$ > $W/$name.pid; exec yes $name-fills-the-terminal" \
		</dev/null >/dev/null 2>"$QP_T/$name.err" &
	STALL_PGIDS+=("$!")
	for ((i = 0; i < 1200; i++)); do
		[ -s "$W/$name.pid" ] && break
		sleep 0.05
	done
	[ -s "$W/$name.pid" ] || fail "$name: the job did not start: $(cat "$QP_T/$name.err")"
	STALL_ID=$(sed -n 's/.*waiting for job \([0-9]*\)\..*/\1/p' "$QP_T/$name.err")
	[ -n "$STALL_ID" ] || fail "$name: no job id: $(cat "$QP_T/$name.err")"
	kill -STOP -- "-$!"
	pid=$(cat "$W/$name.pid")
	# blocked: its written bytes stay the same for a second (60 s at most)
	w0=-1
	for ((i = 0; i < 60; i++)); do
		w1=$(awk '$1 == "wchar:" {print $2}' "/proc/$pid/io" 2>/dev/null) || break
		[ "$w1" = "$w0" ] && break
		w0=$w1
		sleep 1
	done
	[ "$w1" = "$w0" ] || fail "$name: the job never blocked on its terminal"
	note "$name: job $STALL_ID blocked on its terminal after $w1 bytes"
}

# next_job: another user's job needs the node's only CPU; it runs and ends.
next_job() {
	local id
	id=$(as qpuser2 qsub -l walltime=00:00:30 -o /dev/null -j oe <<<'true') || fail "qsub of the next job"
	qp_wait "$id" completed failed --timeout 60
	[ "$(qp_state "$id")" = completed ] || fail "the next job $id: $(qp_field "$id" reason)"
}

note "walltime: a job whose qsub stopped reading still ends at its walltime (3 s)"
stall wall 00:00:03
qp_wait "$STALL_ID" timeout completed failed cancelled --timeout 60
[ "$(qp_state "$STALL_ID")" = timeout ] || fail "job $STALL_ID: $(qp_state "$STALL_ID"), not timeout"
[ ! -e "$QP_T/state/nodes/n1/jobs/$STALL_ID.pty" ] || fail "the terminal socket was left behind"
next_job

note "qdel -W force: a job whose qsub stopped reading ends"
stall force 00:10:00
"$QP_BIN/qdel" -W force "$STALL_ID" || fail "qdel -W force $STALL_ID"
qp_wait "$STALL_ID" cancelled completed failed timeout --timeout 60
[ "$(qp_state "$STALL_ID")" = cancelled ] || fail "job $STALL_ID: $(qp_state "$STALL_ID"), not cancelled"
next_job

note "qdel: the same with plain qdel"
stall del 00:10:00
"$QP_BIN/qdel" "$STALL_ID" || fail "qdel $STALL_ID"
qp_wait "$STALL_ID" cancelled completed failed timeout --timeout 60
[ "$(qp_state "$STALL_ID")" = cancelled ] || fail "job $STALL_ID: $(qp_state "$STALL_ID"), not cancelled"
next_job

note "a stopped qsub let go again: it sees its socket end and exits"
for p in "${STALL_PGIDS[@]}"; do
	kill -CONT -- "-$p" 2>/dev/null
done
for p in "${STALL_PGIDS[@]}"; do
	for ((i = 0; i < 600; i++)); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$p" 2>/dev/null && fail "qsub (pid $p) did not exit once its job ended:
$(ps -o pid,stat,wchan:24,cmd -g "$p"; for q in $(pgrep -g "$p"); do cat /proc/$q/stack; done)"
done
STALL_PGIDS=()
echo PASS
