#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Teardown: a double-forked, setsid'ed straggler dies with its job; a fork
# bomb stops at the pids limit and the node still runs jobs after it; with
# memcg_reclaim_threshold = 0, 50 jobs that leave page cache do not pile up
# dying memory cgroups; below the default threshold a job's file stays in
# the page cache after its teardown; no job group is left.
. "$(dirname "$0")/lib.sh"
[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no memory controller"
command -v setsid >/dev/null || skip "setsid missing"
# v1: every job's memory group is emptied of page cache before rmdir.
qp_setup "$(printf '[node]\nmemcg_reclaim_threshold = 0')"
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1"  # own name: other pools on this host may run an n1

# A straggler that left the job's session and process group.
id=$(as qpuser1 qsub -N strag <<'JOB'
setsid sh -c 'sleep 300 & echo "straggler $!"' > "$PBS_O_WORKDIR/strag.pid"
sleep 0.3
JOB
) || fail "qsub straggler"
qp_wait "$id" completed
pid=$(awk '{print $2}' "$QP_T/work/qpuser1/strag.pid")
[[ $pid =~ ^[0-9]+$ ]] || fail "no straggler pid"
if kill -0 "$pid" 2>/dev/null && grep -q "sleep" "/proc/$pid/cmdline" 2>/dev/null; then
	fail "straggler $pid (setsid, double fork) outlived its job"
fi
note "straggler $pid is gone"

# A fork bomb by hand, with a task limit of 64: forks fail past it, the
# stragglers die at teardown, and the node still works afterwards.
# The bomb's sleeps are found by a duration no other test uses: its pid.
tok=300.$$
"$QP_BIN/gded" --cpus 0 --pids 64 -- bash -c 'for i in $(seq 200); do sleep "$0" & done; sleep 3' "$tok" 2>/dev/null &
gpid=$!
grp=/sys/fs/cgroup/pids/qpool/manual/job.$gpid
[ -d /sys/fs/cgroup/pids ] || grp=/sys/fs/cgroup/qpool/manual/job.$gpid
cur=0 events=0
# Until the group is full and a fork past it was refused: the bomb's
# 65th fork comes a moment after its 64th task.
for i in $(seq 100); do
	[ -f "$grp/pids.current" ] && cur=$(cat "$grp/pids.current" 2>/dev/null || echo 0)
	events=$(awk '$1 == "max" {print $2}' "$grp/pids.events" 2>/dev/null)
	[ "${cur:-0}" -ge 64 ] && [ "${events:-0}" -gt 0 ] && break
	sleep 0.05
done
max=$(cat "$grp/pids.max" 2>/dev/null)
note "bomb: $cur tasks, pids.max $max, refused forks $events"
[ "$max" = 64 ] || fail "pids.max of the bomb is '$max', not 64"
[ "$cur" = 64 ] || fail "the bomb reached $cur tasks, not its limit of 64"
[ "${events:-0}" -gt 0 ] || fail "no fork was refused: the test did not bomb"
wait "$gpid"
note "gded exited with status $?"
# A survivor sleeps 300 s; a process still exiting is gone within moments.
for _ in $(seq 40); do
	left=$(pgrep -cx -f "sleep $tok" || true)
	[ "$left" = 0 ] && break
	sleep 0.05
done
if [ "$left" != 0 ]; then
	for p in $(pgrep -x -f "sleep $tok"); do
		note "survivor $p: $(ps -o ppid=,stat=,etimes= -p "$p") $(grep -E ':(pids|freezer):' "/proc/$p/cgroup" | tr '\n' ' ')"
	done
	fail "$left processes of the bomb outlived it"
fi
id=$(as qpuser2 qsub <<<"echo alive") || fail "qsub after the bomb"
qp_wait "$id" completed

# Dead memory cgroups: 50 jobs each leave 4 MiB of page cache. On a disk:
# a file a job leaves on a tmpfs is shmem, which no reclaim can take
# without swap, so its pages keep the job's group dying for as long as the
# file is there, whatever qpool does (Debian 13's /tmp is a tmpfs: 50 of
# 50 groups stayed). That is the kernel's, not this test's subject.
ddir=$QP_T/work/qpuser1
if [ "$(stat -fc %T "$ddir")" = tmpfs ]; then
	ddir=$(mktemp -d /var/tmp/qpool-teardown.XXXXXX) || fail "mktemp in /var/tmp"
	qp_rm_ddir() { rm -rf "$ddir"; }
	QP_ATEXIT+=(qp_rm_ddir)
	chown qpuser1: "$ddir"
	[ "$(stat -fc %T "$ddir")" != tmpfs ] || skip "no disk-backed directory for the page cache test"
	note "the work directory is a tmpfs: the jobs write in $ddir"
fi
before=$(awk '$1 == "memory" {print $3}' /proc/cgroups)
ids=()
for i in $(seq 50); do
	ids+=("$(as qpuser1 qsub -N dd <<<"dd if=/dev/zero of=$ddir/dd.\$QPOOL_JOBID bs=1M count=4 status=none")") ||
		fail "qsub dd $i"
done
for id in "${ids[@]}"; do qp_wait "$id" completed --timeout 60; done
# /proc/cgroups counts the whole host's groups, dying ones included: any
# other process's group that ends with page cache meanwhile counts too.
# Without the reclaim before rmdir every job's group would stay dying
# (+50); a few from elsewhere are not this test's. A removed group leaves
# the count once the kernel has freed it, a moment after rmdir (longer on
# a slow host: up to 30 s are waited for). v1's force_empty waits for the
# job's dirty pages to be written back; v2's memory.reclaim evicts clean
# cache only, so a job's last dirty pages keep its group dying until the
# kernel reclaims them (memory pressure): Debian 12 keeps 10-16 of 50 (a
# wait of 2 s per job for writeback changed nothing: reclaim does not
# start it). On v2 the bound is half the jobs, which a missing reclaim
# still exceeds (+50 measured on Debian 12 before it).
bound=10
[ -f /sys/fs/cgroup/cgroup.controllers ] && bound=25
for _ in $(seq 600); do
	after=$(awk '$1 == "memory" {print $3}' /proc/cgroups)
	[ $((after - before)) -le $bound ] && break
	sleep 0.05
done
note "memory cgroups: $before before, $after after 50 jobs (at most $bound more allowed)"
[ $((after - before)) -le $bound ] || fail "memory cgroups grew by $((after - before)) over 50 jobs"

# Below the threshold (gded by hand has the default, 4096), the page cache
# a job leaves is not reclaimed at its teardown: the file it wrote is
# still in memory afterwards, and its groups are gone all the same.
if [ -d /sys/fs/cgroup/memory ] && command -v fincore >/dev/null; then
	f=$QP_T/work/cached.$$
	n=$(awk '$1 == "memory" {print $3}' /proc/cgroups)
	"$QP_BIN/gded" --cpus 0 -- dd if=/dev/zero of="$f" bs=1M count=4 status=none &
	gpid=$!
	wait "$gpid" || fail "gded by hand (dd) exited with $?"
	[ ! -d "/sys/fs/cgroup/memory/qpool/manual/job.$gpid" ] || fail "gded left its memory group job.$gpid"
	res=$(fincore --noheadings --bytes --output RES "$f")
	note "a 4 MiB file after its job, $n memory cgroups on the host: $res bytes in the page cache"
	if [ "$n" -lt 4096 ]; then
		[ "${res:-0}" -ge $((2 << 20)) ] || fail "the job's file was evicted at teardown below the threshold ($res bytes left)"
	else
		[ "${res:-0}" -lt $((2 << 20)) ] || fail "the host has $n memory cgroups, yet the job's cache was not reclaimed"
	fi
	rm -f "$f"
fi
left=$(find /sys/fs/cgroup -path "*$QP_CG_PARENT/${QP_NODE_PREFIX}n1/job.*" -type d 2>/dev/null)
[ -z "$left" ] || fail "job groups left: $left"
echo "teardown ok"
