#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The launch before its commit (issue 39; docs/ARCHITECTURE.md, "The
# launch before its commit"): qpoold sends a job's launch held, before
# its dispatch's commit; the node writes its files and gded makes its
# fence, and nothing of the job runs until the commit is done and job.go
# comes. A commit made slow for real (qpoold's writes to the state
# directory's disk throttled by the blkio controller to 512 bytes a
# second) shows the hold:
#  - the commit done (the throttle lifted): the job runs, once;
#  - qpoold killed while its commit waits: qnoded drops the held launch,
#    gded ends it unstarted, and the restarted qpoold runs the job once
#    (or has no such job, if its row never reached the disk);
#  - qnoded killed while the commit waits: the go cannot reach the held
#    gded any more, which ends the job unstarted; the commit done, the
#    next qnoded reports that and the job runs once.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 > /dev/null || skip "no sqlite3"
# The commit throttled must be qpoold's own, to the store's file.
[ "${QP_STORE:-sqlite}" = sqlite ] || skip "QP_STORE=$QP_STORE: the store's commit is not qpoold's write"
# qpoold blocks in its throttled commits, and after each hold its fdatasync
# waits for what every other writer of the disk left in the journal: on a
# machine writing hard (a root file system unpacked beside this test, CI
# 2026-12-01) that was past the 5 s after which a silent node is lost.
# Losing it is not what this test is about: 60 s.
QP_NODE_TIMEOUT=60
# Nor is the lease: its renewal is a commit every lease_renew (1 s), and
# one throttled takes ~16 s (a WAL frame spans two 4 KiB blocks at 512
# bytes a second), before which a submit waits (docs/HA.md, "A slow
# store"). No renewal in this test's minute: 30 min.
qp_setup "[server]
lease_time = 01:00:00
lease_renew = 00:30:00"
qp_disk_throttle
qp_start_server
qp_start_node n1
w=$QP_T/work/qpuser1
starts=$w/starts
jobs=$QP_T/state/nodes/n1/jobs
submit() { as qpuser1 qsub -N "$1" <<JOB
echo \$PBS_JOBID >> $starts
JOB
}
started() { cut -d. -f1 "$starts" 2>/dev/null | grep -cxF "$1"; }
db=$QP_T/state/qpool.db
# held_submit NAME ID: qpoold's commits held, job NAME (to be ID)
# submitted in the background (qsub_pid, its output qsub-NAME.out) and
# its gded up (gpid). Every earlier job's end is in the store first: a
# commit still on its way when the throttle starts (an end shown
# completed but held up to 2 ms to share a dispatch's commit) would hold
# qpoold before it reads the submit (seen under ASan).
held_submit() {
	local i
	for ((i = 0; i < 600; i++)); do
		[ "$(sqlite3 -readonly "$db" "SELECT count(*) FROM jobs WHERE t_done IS NULL")" = 0 ] && break
		sleep 0.05
	done
	[ $i -lt 600 ] || fail "jobs' ends not in the store: $(sqlite3 -readonly "$db" "SELECT id, state FROM jobs WHERE t_done IS NULL")"
	qp_disk_hold 512
	submit "$1" > "$QP_T/qsub-$1.out" 2>&1 &
	qsub_pid=$!
	gpid=$(qp_wait_gded "$2")
}

note "a job runs as before: its launch held and released at once"
id=$(submit plain) || fail "qsub"
qp_wait "$id" completed
[ "$(started "${id%%.*}")" = 1 ] || fail "job $id did not start once"

note "its commit held: the launch is there, gded fenced, the job not started"
next=$((${id%%.*} + 1))
held_submit held "$next"
# While qsub waits for the commit (its reply follows it), the job must not
# start, however long the wrapper has been up.
for _ in $(seq 20); do
	kill -0 "$qsub_pid" 2>/dev/null || fail "qsub returned while its commit was throttled: $(cat "$QP_T/qsub-held.out")"
	[ "$(started "$next")" = 0 ] || fail "job $next started before its dispatch was committed"
	[ -e "$jobs/$next.json" ] || fail "the held job's spec is gone"
	sleep 0.05
done
kill -0 "$gpid" || fail "the held job's gded ended"
qp_disk_unhold
wait "$qsub_pid" || fail "qsub failed after the commit: $(cat "$QP_T/qsub-held.out")"
qp_wait "$(cat "$QP_T/qsub-held.out")" completed
[ "$(started "$next")" = 1 ] || fail "job $next started $(started "$next") times"

note "qnoded killed while the commit is held: the job ends unstarted, then runs once"
kid=$((next + 1))
held_submit orphan "$kid"
node=$(qp_node_pid n1)
kill -KILL "$node"
wait "$node" 2>/dev/null
for _ in $(seq 600); do kill -0 "$gpid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$gpid" 2>/dev/null && fail "the held gded of job $kid outlived its qnoded"
[ "$(started "$kid")" = 0 ] || fail "job $kid started with its go lost"
qp_disk_unhold
wait "$qsub_pid" || fail "qsub failed after the commit: $(cat "$QP_T/qsub-orphan.out")"
qp_start_node n1
qp_wait "$kid" completed
[ "$(started "$kid")" = 1 ] || fail "job $kid started $(started "$kid") times"
next=$kid

note "qpoold killed while its commit is held: the launch dropped, the job runs once"
last=$((next + 1))
held_submit dropped "$last"
[ "$(started "$last")" = 0 ] || fail "job $last started before its dispatch was committed"
# Killed in its commit's fdatasync, it dies once that returns: the throttle
# is lifted for it to return, and it dies before it can send the go.
kill -KILL "$QP_SERVER_PID"
qp_disk_unhold
wait "$QP_SERVER_PID" 2>/dev/null
# The link closed: qnoded drops the held launch; gded ends it unstarted.
for _ in $(seq 600); do kill -0 "$gpid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$gpid" 2>/dev/null && fail "the dropped job's gded still runs"
grep -q "job $last: dropped before its start: the link to qpoold was lost first" "$QP_T/qnoded-n1.log" ||
	fail "qnoded did not drop the held launch: $(tail -n 5 "$QP_T/qnoded-n1.log")"
[ "$(started "$last")" = 0 ] || fail "the dropped job $last started"
wait "$qsub_pid" 2>/dev/null
qp_start_server
if [ -n "$(sqlite3 -readonly "$db" "SELECT id FROM jobs WHERE id = $last")" ]; then
	for _ in $(seq 600); do
		[ "$(sqlite3 -readonly "$db" "SELECT state FROM jobs WHERE id = $last")" = completed ] && break
		sleep 0.05
	done
	[ "$(sqlite3 -readonly "$db" "SELECT state FROM jobs WHERE id = $last")" = completed ] ||
		fail "job $last is $(sqlite3 -readonly "$db" "SELECT state FROM jobs WHERE id = $last"), not completed"
	[ "$(started "$last")" = 1 ] || fail "job $last started $(started "$last") times"
	# Its requeue was not for room: qpoold did not stop for one.
	grep -q "is full: no submissions or dispatches" "$QP_T/qpoold.log" &&
		fail "a dropped launch's requeue made qpoold wait for room"
	echo "job $last: its dispatch was on disk; requeued by its unstarted result, then run once"
else
	[ "$(started "$last")" = 0 ] || fail "job $last, which the store does not have, started"
	echo "job $last: its row never reached the disk; it never ran"
fi
echo "launch-gate ok"
