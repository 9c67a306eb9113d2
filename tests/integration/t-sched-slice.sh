#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The daemons' short slice (lib/exe.h, issue 39): qpoold, qnoded, the
# resident launcher and a job's gded run with the fair scheduler's
# shortest slice (0.1 ms: their hops preempt busy jobs at once), and the
# job itself with the host's default, as any process on the host.
# Needs a kernel that takes a slice per task (Linux 6.12+, EEVDF).
. "$(dirname "$0")/lib.sh"
slice_of() { awk '$1 == "se.slice" { print $3 }' "/proc/$1/sched" 2>/dev/null; }
default=$(slice_of self)
[ -n "$default" ] || skip "/proc/PID/sched shows no se.slice (kernel $(uname -r))"
IFS=. read -r major minor _ <<< "$(uname -r)"
((major > 6 || (major == 6 && minor >= 12))) || skip "kernel $(uname -r) takes no slice per task (6.12+)"
[ "$default" != 100000 ] || skip "this shell already runs with a 0.1 ms slice"
qp_setup
qp_start_server
qp_start_node n1
w=$QP_T/work/qpuser1

[ "$(slice_of "$QP_SERVER_PID")" = 100000 ] || fail "qpoold's slice is $(slice_of "$QP_SERVER_PID"), not 100000"
node=$(qp_node_pid n1)
[ "$(slice_of "$node")" = 100000 ] || fail "qnoded's slice is $(slice_of "$node"), not 100000"

cat > "$QP_T/job.sh" <<JOB
awk '\$1 == "se.slice" { print \$3 }' /proc/self/sched > $w/slice.tmp && mv $w/slice.tmp $w/slice
i=0; while [ ! -e $QP_T/go ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
JOB
chmod 644 "$QP_T/job.sh"
a=$(as qpuser1 qsub "$QP_T/job.sh") || fail qsub
qp_wait_file "$w/slice"
gpid=$(qp_wait_gded "$a") || exit 1
[ "$(slice_of "$gpid")" = 100000 ] || fail "job $a's gded has slice $(slice_of "$gpid"), not 100000"
[ "$(cat "$w/slice")" = "$default" ] || fail "job $a runs with slice $(cat "$w/slice"), not the host's default $default"
touch "$QP_T/go"
qp_wait "$a" completed failed
[ "$(qp_state "$a")" = completed ] || fail "job $a ended $(qp_state "$a"): $(qp_field "$a" reason)"
echo ok
