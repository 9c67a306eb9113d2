#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Resource faults. The state directory on a 1 MiB tmpfs that fills up:
# qsub fails with one clear line and a non-zero status, the store stays
# intact, and after space is freed the pool works with every earlier job
# intact. A job that fills the daemons' file system, and a job that forks
# up to its pids limit, do not take qpoold or qnoded down.
. "$(dirname "$0")/lib.sh"
# Room below which qpoold stops taking and dispatching jobs: small, for a
# 1 MiB file system.
qp_setup "
[server]
state_min_free = 64K"
qp_state_tmpfs
st=$QP_STATE_MNT
qp_start_server
qp_start_node n1
w=$QP_T/work/qpuser1

early=()
for i in 1 2 3; do
	early+=("$(echo "echo early$i" | as qpuser1 qsub -N early$i)") || fail qsub
done
for id in "${early[@]}"; do qp_wait "$id" completed; done

note "fill the state directory"
dd if=/dev/zero of="$st/filler" bs=4k 2>/dev/null
df -k "$st" | tail -n 1
big=$(head -c 300000 /dev/zero | tr '\0' 'x' | fold -w 100 | sed 's/^/# /')
refused=0
for i in 1 2 3 4 5; do
	if out=$(printf 'echo big\n%s\n' "$big" | as qpuser1 qsub -N big 2>&1); then
		echo "qsub succeeded on a full disk (id $out): the WAL had room; again"
		continue
	fi
	refused=1
	break
done
[ $refused = 1 ] || fail "qsub never failed on a full state directory"
echo "qsub says: $out"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "qsub's error is not one line: $out"
echo "$out" | grep -qi "no space\|full" || fail "qsub's error does not say the disk is full: $out"
kill -0 "$QP_SERVER_PID" || fail "qpoold died on a full disk"
as qpuser2 qstat -x > /dev/null || fail "qstat fails on a full disk"

note "free the space"
rm -f "$st/filler"
id=$(echo 'echo after' | as qpuser1 qsub -N after) || fail "qsub after freeing space"
qp_wait "$id" completed
for i in 1 2 3; do
	[ "$(qp_state "${early[$((i - 1))]}")" = completed ] || fail "early job ${early[$((i - 1))]} lost its state"
	[ "$(cat "$w/early$i.o${early[$((i - 1))]}")" = early$i ] || fail "early job output"
done
qp_stop "$QP_SERVER_PID"
[ "$(sqlite3 "$st/qpool.db" 'pragma integrity_check')" = ok ] || fail "store damaged"
qp_start_server
n=$("$QP_BIN/qstat" --table -x | grep -cE '^[0-9]+ ')
echo "after restart: $n jobs in the store"
[ "$n" -ge 4 ] || fail "jobs lost after the full disk and a restart"

note "a job fills the daemons' file system, then frees it"
mkdir -m 1777 "$st/tmp"
fill=$(as qpuser1 qsub -N fill <<JOB
dd if=/dev/zero of=$st/tmp/junk bs=4k 2>/dev/null
df -k $st | tail -n 1
sleep 3
rm -f $st/tmp/junk
echo filled-and-freed
JOB
) || fail qsub
qp_wait "$fill" running
for _ in $(seq 50); do [ -s "$st/tmp/junk" ] && break; sleep 0.1; done
sleep 0.5
"$QP_BIN/qstat" --nodes | grep -qE '^n1[[:space:]].*up' || fail "n1 not up while its disk is full"
as qpuser2 qstat > /dev/null || fail "qstat fails while a job fills the disk"
qp_wait "$fill" completed --timeout 30
grep -q filled-and-freed "$w/fill.o$fill" || fail "fill job output: $(cat "$w/fill.o$fill")"

note "a job fills the disk and ends: queued jobs stay queued and run when space returns"
go=$QP_T/go
fill2=$(as qpuser1 qsub -N fill2 -l ncpus=2 <<JOB
for i in \$(seq 600); do [ -e $go ] && break; sleep 0.1; done
dd if=/dev/zero of=$st/tmp/junk2 bs=4k 2>/dev/null
echo filled
JOB
) || fail qsub
qp_wait "$fill2" running
waiting=()
for i in 1 2 3; do
	waiting+=("$(echo "echo waited$i" | as qpuser2 qsub -N waited$i)") || fail "qsub waited$i"
done
for id in "${waiting[@]}"; do [ "$(qp_state "$id")" = queued ] || fail "job $id is $(qp_state "$id"), not queued"; done
full_lines() { grep -c "state directory .*\(below state_min_free\|is full\)" "$QP_T/qpoold.log"; }
n0=$(full_lines)
touch "$go"
qp_wait_file "$QP_T/work/qpuser1/fill2.o$fill2" 60
for _ in $(seq 300); do
	[ "$(full_lines)" -gt "$n0" ] && break
	sleep 0.1
done
[ "$(full_lines)" -gt "$n0" ] || fail "qpoold did not notice the full disk"
df -k "$st" | tail -n 1
# The filler is done and its CPUs are free: a pass would dispatch now.
# For 3 s (bounded), every waiting job must stay queued.
for _ in $(seq 30); do
	for id in "${waiting[@]}"; do
		st_now=$(qp_state "$id")
		[ "$st_now" = queued ] || fail "job $id went $st_now while the disk was full"
	done
	sleep 0.1
done
out=$(echo true | as qpuser3 qsub 2>&1) && fail "qsub accepted a job on a full disk: $out"
echo "qsub says: $out"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "qsub's error is not one line: $out"
echo "$out" | grep -q "state directory is full" || fail "qsub's error does not say the state directory is full: $out"
rm -f "$st/tmp/junk2"
for i in 1 2 3; do
	qp_wait "${waiting[$((i - 1))]}" completed --timeout 60
	[ "$(cat "$QP_T/work/qpuser2/waited$i.o${waiting[$((i - 1))]}")" = waited$i ] || fail "waited$i output"
done
qp_wait "$fill2" completed failed --timeout 30
echo "the job that filled the disk ended $(qp_state "$fill2"); the three behind it completed"

note "a job forks up to its pids limit"
bomb=$(as qpuser1 qsub -N bomb -l walltime=60 <<'JOB'
# The bomb runs in a subshell: bash gives up on a failed fork after some
# retries and exits; the job itself then waits by exec, which needs no fork.
( n=0; while [ $n -lt 20000 ]; do sleep 60 & n=$((n + 1)); done ) 2>/dev/null
echo "forked up to the limit"
exec sleep 60
JOB
) || fail qsub
qp_wait "$bomb" running
sleep 4
echo "processes in the bomb's cgroup: $(cat /sys/fs/cgroup/pids/$QP_CG_PARENT/n1/job.$bomb/pids.current 2>/dev/null || echo ?)"
t0=$(date +%s%N)
probe=$(echo 'echo probe' | as qpuser2 qsub -N probe) || fail "qsub during the fork bomb"
as qpuser2 qstat "$probe" > /dev/null || fail "qstat during the fork bomb"
echo "qsub+qstat during the fork bomb: $((($(date +%s%N) - t0) / 1000000)) ms"
kill -0 "$QP_SERVER_PID" || fail "qpoold died during the fork bomb"
kill -0 "$(qp_node_pid n1)" || fail "qnoded died during the fork bomb"
as qpuser1 qdel "$bomb" || fail "qdel of the fork bomb"
qp_wait "$bomb" cancelled --timeout 30
qp_wait "$probe" completed --timeout 30
left=$(pgrep -u qpuser1 -x sleep | wc -l)
echo "sleep processes of qpuser1 left: $left"
echo "faults ok"
