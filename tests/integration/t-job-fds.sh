#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A descriptor qnoded inherited (left open by the shell that started it)
# reaches neither gded's job nor its stray children: the job's
# /proc/self/fd holds only its stdin, stdout and stderr.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
# Opened without close-on-exec here, so qnoded inherits it as fd 7, as
# from an admin's shell or a careless init script.
exec 7> "$QP_T/inherited"
qp_start_node n1
exec 7>&-
pid=$(qp_node_pid n1)
[ -e "/proc/$pid/fd/7" ] || fail "qnoded did not inherit fd 7; the test proves nothing"

w=$QP_T/work/qpuser1
id=$(as qpuser1 qsub -o "$w/fds.out" <<'JOB'
# ls opens the directory it lists: that one is the highest.
ls /proc/self/fd | sort -n | tr '\n' ' '
JOB
) || fail "qsub"
qp_wait "$id" completed failed
[ "$(qp_state "$id")" = completed ] || fail "job $id: $(qp_field "$id" reason)"
fds=$(cat "$w/fds.out")
echo "job's fds: $fds"
[ "$fds" = "0 1 2 3 " ] || fail "the job has descriptors beyond stdio: $fds"

# gded itself, root, holds none of qnoded's either.
id=$(as qpuser1 qsub -o /dev/null <<<"touch $w/started; sleep 300") || fail "qsub sleeper"
qp_wait "$id" running
qp_wait_file_exists() { local i; for ((i = 0; i < 600; i++)); do [ -e "$1" ] && return 0; sleep 0.05; done; fail "$1 did not appear"; }
qp_wait_file_exists "$w/started"
gded=$(pgrep -f "gded --spec $QP_T/state/nodes/n1/jobs/$id.json") || fail "no gded for job $id"
for fd in /proc/"$gded"/fd/*; do
	[ "$(readlink "$fd")" = "$QP_T/inherited" ] && fail "gded $gded holds qnoded's fd $fd"
done
as qpuser1 qdel "$id" || fail "qdel"
qp_wait "$id" cancelled
echo "job fds ok"
