#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gded no longer syncs a job's result file (issue 39; docs/ARCHITECTURE.md,
# "The end"): qnoded syncs the results qpoold has not taken within a
# second, and reads as no result what a crash can leave in a result's
# name when the rename reached the disk and the data did not.
#  1. qpoold away: a job ends; its result names its job and its run (the
#     spec's launch stamp); qnoded syncs it while it holds it, and reports
#     it when qpoold is back.
#  2. qnoded away: a job ends, and its result's name is then given
#     another run's text (a kept inode's older content) and, for a second
#     job, a torn one. The new qnoded takes neither as the job's result:
#     the jobs run again and end, each having run twice.
. "$(dirname "$0")/lib.sh"
# The job files on disk: the sync is a disk's matter (on the default jobs
# tmpfs the results held are copied to disk instead: t-jobs-tmpfs).
qp_setup "$(printf '[node]\njobs_tmpfs = no\n')"
qp_start_server
w=$QP_T/work/qpuser1
jobs=$QP_T/state/nodes/n1/jobs
start_node() {
	"$QP_BIN/qnoded" -f "$QPOOL_CONF" --name n1 -v >> "$QP_T/qnoded-n1.log" 2>&1 &
	qp_node_wait n1 $! 100 "qnoded n1"
}
forget_pid() {
	local i
	for i in "${!QP_PIDS[@]}"; do [ "${QP_PIDS[$i]}" = "$1" ] && unset 'QP_PIDS[i]'; done
	QP_PIDS=("${QP_PIDS[@]}")
}
# A job that waits for go.TAG, then adds a line to ran.TAG.
gated() {
	printf 'while [ ! -e %s/go.%s ]; do sleep 0.05; done\necho "$PBS_JOBID" >> %s/ran.%s\n' \
		"$w" "$1" "$w" "$1" | as qpuser1 qsub -N "rs$1"
}
# wait_log TEXT: bounded wait for qnoded's log to hold TEXT (fixed string).
wait_log() {
	local i
	for i in $(seq 600); do
		grep -qF -- "$1" "$QP_T/qnoded-n1.log" && return 0
		sleep 0.05
	done
	fail "qnoded never logged: $1"
}
start_node

note "1. qpoold away when the job ends"
j1=$(gated 1) || fail qsub
qp_wait "$j1" running
qp_wait_gded "$j1" >/dev/null
forget_pid "$QP_SERVER_PID"
qp_stop "$QP_SERVER_PID"
touch "$w/go.1"
qp_wait_file "$jobs/$j1.result"
python3 - "$jobs/$j1.result" "$jobs/$j1.json" "$j1" <<'PY' || fail "job $j1's result does not name its run"
import json, sys
res, spec = (json.load(open(p)) for p in sys.argv[1:3])
assert res["jobid"] == int(sys.argv[3]), res
assert res["times"]["launch"] == spec["times"]["launch"], (res["times"], spec["times"])
PY
wait_log "1 result not yet acknowledged synced"
qp_start_server
qp_wait "$j1" completed
[ "$(qp_field "$j1" Exit_status)" = 0 ] || fail "job $j1 exit status $(qp_field "$j1" Exit_status)"
[ "$(wc -l < "$w/ran.1")" = 1 ] || fail "job $j1 ran $(wc -l < "$w/ran.1") times"

note "2. what a crash can leave in a result's name is no result"
j2=$(gated 2) || fail qsub
j3=$(gated 3) || fail qsub
qp_wait "$j2" running
qp_wait "$j3" running
qp_wait_gded "$j2" >/dev/null
qp_wait_gded "$j3" >/dev/null
pid=$(qp_node_pid n1)
kill -KILL "$pid"
wait "$pid" 2>/dev/null
forget_pid "$pid"
touch "$w/go.2" "$w/go.3"
qp_wait_file "$jobs/$j2.result"
qp_wait_file "$jobs/$j3.result"
# Another run's text: job 1's result, as a kept inode still holds it.
printf '{"jobid": %s, "status": "exited", "exit_status": 0, "times": {"launch": 1}}' "$j1" > "$jobs/$j2.result"
head -c 20 "$jobs/$j3.result" > "$jobs/$j3.result.torn"
mv "$jobs/$j3.result.torn" "$jobs/$j3.result"
start_node
wait_log "job $j2: $j2.result holds job $j1's result of launch 1, not this run's: taken as no result"
wait_log "job $j3: $j3.result"
for j in "$j2" "$j3"; do
	qp_wait "$j" completed
	[ "$(qp_field "$j" Exit_status)" = 0 ] || fail "job $j exit status $(qp_field "$j" Exit_status)"
done
for t in 2 3; do
	[ "$(wc -l < "$w/ran.$t")" = 2 ] || fail "job of ran.$t ran $(wc -l < "$w/ran.$t") times, not twice"
done
note ok
