#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A node with no room for a job's files: qnoded cannot write them, its
# report says "requeue" and "no_room", and qpoold puts the job back in
# the queue and makes no pass until its next check of room (the pause is
# for room alone: a requeue for another cause takes none, t-launch-gate).
# Room back, the job runs once. The node's state is on its own 1 MiB
# tmpfs, filled; qpoold's is not.
. "$(dirname "$0")/lib.sh"
grep -qw tmpfs /proc/filesystems || skip "no tmpfs"
# The job files on the node's state disk, which is what fills (not on the
# jobs tmpfs that is the default).
qp_setup "$(printf '[node]\njobs_tmpfs = no\n')"
mnt=$QP_T/nodestate
mkdir -p "$mnt"
mount -t tmpfs -o size=1m,mode=0755 tmpfs "$mnt" || skip "cannot mount a tmpfs"
noroom_umount() { umount "$mnt" 2>/dev/null || umount -l "$mnt"; }
QP_ATEXIT_LAST+=(noroom_umount)
qp_start_server
qp_start_node_apart n1
w=$QP_T/work/qpuser1
starts=$w/starts
submit() { as qpuser1 qsub -N "$1" <<JOB
echo \$PBS_JOBID >> $starts
JOB
}
started() { cut -d. -f1 "$starts" 2>/dev/null | grep -cxF "$1"; }
paused() { grep -c "is full: no submissions or dispatches until there is room" "$QP_T/qpoold.log"; }

id=$(submit first) || fail "qsub"
qp_wait "$id" completed

note "the node's state full: the launch fails for lack of room and is requeued, with a pause"
dd if=/dev/zero of="$mnt/filler" bs=4k 2>/dev/null
id=$(submit noroom) || fail "qsub"
for _ in $(seq 200); do
	grep -q "job ${id%%.*} requeued: .*No space left on device" "$QP_T/qpoold.log" && break
	sleep 0.05
done
grep -q "job ${id%%.*} requeued: .*No space left on device" "$QP_T/qpoold.log" ||
	fail "job $id was not requeued for lack of room: $(tail -n 5 "$QP_T/qpoold.log")"
[ "$(paused)" -ge 1 ] || fail "qpoold did not wait for room after a launch that found none"
[ "$(started "${id%%.*}")" = 0 ] || fail "job $id started without its files"

note "room back: the job runs once"
rm -f "$mnt/filler"
qp_wait "$id" completed --timeout 60
[ "$(started "${id%%.*}")" = 1 ] || fail "job $id started $(started "${id%%.*}") times"
echo "noroom-requeue ok"
