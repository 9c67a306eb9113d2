#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A job over its memory limit is killed by the kernel and ends "oom", with
# the reason in qstat and a line in its own stderr file (written as the
# user), while a neighbour job of another user completes; one whose limit
# is too small to start (4 KiB) ends "oom" too, not with its wrapper.
. "$(dirname "$0")/lib.sh"
[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no memory controller"
command -v python3 >/dev/null || skip "python3 missing"
qp_setup "[queue mem64]
mem_max = 1G"
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1"  # own name: other pools on this host may run an n1

hog=$(as qpuser1 qsub -q mem64 -l mem=64M -N hog <<'JOB'
echo start
python3 -c 'b = []
while True: b.append(bytearray(16 << 20))'
echo "python ended $?"
JOB
) || fail "qsub hog"
neighbour=$(as qpuser2 qsub -q mem64 -l mem=64M -N calm <<'JOB'
python3 -c 'b = bytearray(16 << 20); print("calm", len(b))'
JOB
) || fail "qsub neighbour"
qp_wait "$hog" oom --timeout 60
qp_wait "$neighbour" completed --timeout 60
reason=$(qp_field "$hog" reason)
note "hog: state $(qp_state "$hog"), reason: $reason"
[ "$reason" = "killed: it exceeded its memory limit of 64M" ] || fail "reason is '$reason'"
err=$QP_T/work/qpuser1/hog.e$hog
qp_wait_file "$err"
cat "$err"
grep -qx "qpool: job $hog was killed: it exceeded its memory limit of 64M" "$err" || fail "no OOM line in $err"
[ "$(stat -c %U "$err")" = qpuser1 ] || fail "$err belongs to $(stat -c %U "$err")"
grep -qx "calm 16777216" "$QP_T/work/qpuser2/calm.o$neighbour" || fail "the neighbour's output is wrong"
[ "$(qp_field "$neighbour" reason)" = "" ] || fail "the neighbour has a reason: $(qp_field "$neighbour" reason)"

# The note follows the user's rights: a stderr file the user cannot write
# (made read-only before the kill) gets no line from root either.
hog2=$(as qpuser1 qsub -q mem64 -l mem=64M -N hog2 <<'JOB'
chmod 444 "$PBS_O_WORKDIR/hog2.e$QPOOL_JOBID"
python3 -c 'b = []
while True: b.append(bytearray(16 << 20))'
JOB
) || fail "qsub hog2"
qp_wait "$hog2" oom --timeout 60
grep -q "^qpool: job" "$QP_T/work/qpuser1/hog2.e$hog2" && fail "root wrote into a file the user had made read-only"
# A limit of one page: the job cannot even start its shell. Its start is
# forked (gded's spawn would share its memory with the killed child) and
# it ends "oom" like any other, with gded's own result.
tiny=$(as qpuser1 qsub -q mem64 -l mem=4kb -N tiny <<<'echo hi') || fail "qsub tiny"
qp_wait "$tiny" oom failed --timeout 60
note "tiny: state $(qp_state "$tiny"), reason: $(qp_field "$tiny" reason)"
[ "$(qp_state "$tiny")" = oom ] || fail "a 4 KiB job ended $(qp_state "$tiny"): $(qp_field "$tiny" reason)"
echo "oom ok"
