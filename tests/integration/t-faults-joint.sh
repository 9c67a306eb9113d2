#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A joint commit that fails (issue 39): jobs end while the state directory
# (a 1 MiB tmpfs) is full, the pass that runs with their results places
# the queued jobs behind them, and the one transaction of results and
# dispatches fails with ENOSPC, again at every retry. Memory and store
# must stay the same: the ended jobs still running in both, the queued
# ones still queued in both (their dispatches undone in memory), none
# started. When space returns every job ends once, with its own exit.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 > /dev/null || skip "no sqlite3"
# The store must be the file on the full state directory.
[ "${QP_STORE:-sqlite}" = sqlite ] || skip "QP_STORE=$QP_STORE: the store is not in the state directory"
# state_min_free 0: the floor never stops the pass, so the joint commit
# itself is what meets the full disk.
qp_setup "
[server]
state_min_free = 0"
qp_state_tmpfs
st=$QP_STATE_MNT
qp_start_server
# The node's job files elsewhere: a job's result file is qnoded's, and
# this test is about qpoold's store (t-faults fills both).
qp_start_node_apart n1
w=$QP_T/work/qpuser1
go=$QP_T/go
starts=$w/starts
db=$st/qpool.db

# Two jobs hold both CPUs until $go; four wait behind them. Each job
# notes its start (outside the tmpfs) and exits with its own status.
declare -A want=()
first=()
for i in 1 2; do
	id=$(as qpuser1 qsub -N a$i <<JOB
echo \$PBS_JOBID >> $starts
for i in \$(seq 600); do [ -e $go ] && break; sleep 0.1; done
exit $((2 + i))
JOB
) || fail "qsub a$i"
	first+=("$id")
	want[$id]=$((2 + i))
done
for id in "${first[@]}"; do qp_wait "$id" running; done
behind=()
for i in 1 2 3 4; do
	id=$(as qpuser1 qsub -N b$i <<JOB
echo \$PBS_JOBID >> $starts
exit $((10 + i))
JOB
) || fail "qsub b$i"
	behind+=("$id")
	want[$id]=$((10 + i))
done
for id in "${behind[@]}"; do [ "$(qp_state "$id")" = queued ] || fail "job $id is $(qp_state "$id"), not queued"; done

stat_of() { python3 "$QP_TOP/bench/stats" | python3 -c "import json, sys; print(json.load(sys.stdin)['$1'])"; }
store_count() { sqlite3 -readonly "$db" "SELECT count(*) FROM jobs WHERE state = '$1'"; }
joint_fails() { grep -cE "cannot commit results with [0-9]+ dispatches: No space" "$QP_T/qpoold.log"; }
# Memory (qpoold's stats) and store (its rows) agree on what runs and
# what waits, and no job behind has started.
consistent() {
	local mr mq sr sq
	mr=$(stat_of running) mq=$(stat_of queued) sr=$(store_count running) sq=$(store_count queued)
	if [ "$mr/$mq/$sr/$sq" != 2/4/2/4 ]; then
		fail "memory: $mr running, $mq queued; store: $sr running, $sq queued (want 2 and 4 in both)"
	fi
	[ "$(sort -u "$starts" | wc -l)" = 2 ] || fail "a job started while nothing could be recorded: $(cat "$starts")"
}

note "fill the state directory, then end the two running jobs"
dd if=/dev/zero of="$st/filler" bs=4k 2>/dev/null
df -k "$st" | tail -n 1
touch "$go"
for _ in $(seq 300); do
	[ "$(joint_fails)" -ge 1 ] && break
	kill -0 "$QP_SERVER_PID" || fail "qpoold died on the full disk"
	sleep 0.1
done
[ "$(joint_fails)" -ge 1 ] || fail "no joint commit of results and dispatches failed: $(tail -n 5 "$QP_T/qpoold.log")"
grep -E "cannot commit results with" "$QP_T/qpoold.log" | head -n 1
# The first failed commit's launches went before it, held (issue 39): the
# node dropped them, and none started (consistent, below). After a
# failed commit none go early, so the retries drop no more.
dropped() { grep -c "dropped before its start: its dispatch was not recorded" "$QP_T/qnoded-n1.log"; }
for _ in $(seq 100); do [ "$(dropped)" -ge 1 ] && break; sleep 0.1; done
held=$(dropped)
[ "$held" -ge 1 ] || fail "no held launch was dropped: $(tail -n 5 "$QP_T/qnoded-n1.log")"
consistent
# Retried each second (the results wait, space.c): each retry fails the
# same way and leaves the same state.
n0=$(joint_fails)
for _ in $(seq 100); do
	consistent
	[ "$(joint_fails)" -ge $((n0 + 2)) ] && break
	sleep 0.1
done
[ "$(joint_fails)" -ge $((n0 + 2)) ] || fail "the joint commit was not retried"
[ "$(dropped)" = "$held" ] || fail "a retry after a failed commit sent its launches early"
echo "joint commits failed: $(joint_fails)"
kill -0 "$QP_SERVER_PID" || fail "qpoold died on the full disk"

note "free the space: every job ends once, with its own exit status"
rm -f "$st/filler"
for id in "${first[@]}" "${behind[@]}"; do qp_wait "$id" completed failed --timeout 60; done
for id in "${!want[@]}"; do
	got=$(sqlite3 -readonly "$db" "SELECT exit_status FROM jobs WHERE id = ${id%%.*}")
	[ "$got" = "${want[$id]}" ] || fail "job $id ended with '$got', want ${want[$id]}"
	n=$(cut -d. -f1 "$starts" | grep -cxF "${id%%.*}")
	[ "$n" = 1 ] || fail "job $id started $n times"
done
[ "$(stat_of running)/$(stat_of queued)" = 0/0 ] || fail "memory still counts jobs running or queued"
qp_stop "$QP_SERVER_PID"
[ "$(sqlite3 "$db" 'pragma integrity_check')" = ok ] || fail "store damaged"
echo "faults-joint ok"
