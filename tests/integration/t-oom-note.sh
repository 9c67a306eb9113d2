#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The OOM note gded appends after teardown cannot be made to block it: a
# job that swaps its stderr file for a FIFO (or a symlink) before it runs
# out of memory still ends "oom" at once, and nothing is written through
# the link.
. "$(dirname "$0")/lib.sh"
[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no memory controller"
command -v python3 >/dev/null || skip "python3 missing"
qp_setup "[queue mem64]
mem_max = 1G
[server]
name = qp$$"
# Undelivered output is kept in the owner's HOME as ID.SERVER.ER.
home1=$(getent passwd qpuser1 | cut -d: -f6)
kept_remove() { rm -f "$home1"/*."qp$$".OU "$home1"/*."qp$$".ER; }
QP_ATEXIT+=(kept_remove)
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1"  # own name: other pools on this host may run an n1

w=$QP_T/work/qpuser1
note "stderr swapped for a FIFO nobody reads"
id=$(as qpuser1 qsub -q mem64 -l mem=64M -N fifo <<'JOB'
rm -f "$PBS_O_WORKDIR/fifo.e$QPOOL_JOBID"
mkfifo "$PBS_O_WORKDIR/fifo.e$QPOOL_JOBID"
python3 -c 'b = []
while True: b.append(bytearray(16 << 20))'
JOB
) || fail "qsub fifo"
qp_wait "$id" oom --timeout 60
[ -p "$w/fifo.e$id" ] || fail "the FIFO was replaced"

note "stderr swapped for a symlink to a private file"
runuser -u qpuser1 -- sh -c "umask 077; echo private > '$w/private'"
id=$(as qpuser1 qsub -q mem64 -l mem=64M -N link <<JOB
ln -sf "$w/private" "\$PBS_O_WORKDIR/link.e\$QPOOL_JOBID"
python3 -c 'b = []
while True: b.append(bytearray(16 << 20))'
JOB
) || fail "qsub link"
qp_wait "$id" oom --timeout 60
[ "$(cat "$w/private")" = private ] || fail "the note went through the symlink: $(cat "$w/private")"

note "stderr undelivered (its directory missing): the note goes where it was kept"
id=$(as qpuser1 qsub -q mem64 -l mem=64M -N lost -e "/nonexistent-qp$$/err" <<'JOB'
python3 -c 'b = []
while True: b.append(bytearray(16 << 20))'
JOB
) || fail "qsub lost"
qp_wait "$id" oom --timeout 60
kept="$home1/$id.qp$$.ER"
grep -qx "qpool: job $id was killed: it exceeded its memory limit of 64M" "$kept" ||
	fail "no OOM note in $kept: $(cat "$kept" 2>&1)"
want="killed: it exceeded its memory limit of 64M; error undelivered (/nonexistent-qp$$/err: No such file or directory): kept in $kept on ${QP_NODE_PREFIX}n1"
[ "$(qp_field "$id" comment)" = "$want" ] || fail "comment: $(qp_field "$id" comment)"
echo "oom note ok"
