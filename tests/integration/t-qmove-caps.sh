#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qmove admits a job into a queue as qsub would (issue 29, item 12): the
# queue's max_queued and max_queued_per_user, its ncpus/mem/walltime
# maxima and whether it is enabled. A refused move says why in one line,
# exits non-zero, and the job stays where it was; a job moved within its
# own queue, or into a queue with room, is not refused for itself.
. "$(dirname "$0")/lib.sh"
qp_setup "
[queue capped]
max_queued = 2

[queue mine]
max_queued_per_user = 1

[queue small]
walltime_default = 00:00:30
walltime_max = 00:01:00"
qp_start_server
# No node: every job waits.
queue_of() { "$QP_BIN/qstat" --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["queue"])'; }
refused() {   # refused WHAT PATTERN JOB: the last qmove's $out
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "$1: not one line: $out"
	echo "$out" | grep -q "$2" || fail "$1: the refusal does not say $2: $out"
	[ "$(queue_of "$3")" = batch ] || fail "$1: job $3 left its queue"
	echo "qmove says: $out"
}

note "max_queued: a full queue takes no job by qmove"
for i in 1 2; do echo true | as qpuser1 qsub -q capped -N c$i > /dev/null || fail "qsub c$i"; done
j=$(echo true | as qpuser2 qsub -N mover) || fail "qsub mover"
j=${j%%.*}
out=$(as qpuser2 "$QP_BIN/qmove" capped "$j" 2>&1) && fail "qmove into a full queue worked: $out"
refused "max_queued" "max_queued" "$j"
h=$(echo true | as qpuser2 qsub -h -N heldmover) || fail "qsub held"
h=${h%%.*}
out=$("$QP_BIN/qmove" capped "$h" 2>&1) && fail "root's qmove of a held job into a full queue worked: $out"
refused "max_queued, held" "max_queued" "$h"
c1=$("$QP_BIN/qselect" -q capped | head -n 1)
"$QP_BIN/qmove" capped "${c1%%.*}" || fail "a job moved within its own full queue was refused"

note "max_queued_per_user: one waiting job of each user"
echo true | as qpuser1 qsub -q mine -N m1 > /dev/null || fail "qsub m1"
k=$(echo true | as qpuser1 qsub -N m2) || fail "qsub m2"
k=${k%%.*}
out=$(as qpuser1 "$QP_BIN/qmove" mine "$k" 2>&1) && fail "a 2nd job of qpuser1 moved into mine: $out"
refused "max_queued_per_user" "max_queued_per_user" "$k"
as qpuser2 "$QP_BIN/qmove" mine "$j" || fail "qpuser2's job refused for qpuser1's"
[ "$(queue_of "$j")" = mine ] || fail "the job that fits did not move"

note "an array counts each subjob"
a=$(echo true | as qpuser3 qsub -J 1-3 -N arr) || fail "qsub array"
a=${a%%.*}
a=${a%%\[*}
"$QP_BIN/qdel" "${c1%%.*}" || fail "qdel c1"
out=$(as qpuser3 "$QP_BIN/qmove" capped "$a" 2>&1) && fail "3 subjobs moved into a queue with room for 1: $out"
refused "array" "max_queued" "$a"

note "the queue's other limits, as at qsub"
w=$(echo true | as qpuser3 qsub -l walltime=00:05:00 -N long) || fail "qsub long"
w=${w%%.*}
out=$(as qpuser3 "$QP_BIN/qmove" small "$w" 2>&1) && fail "a 5-minute job moved into a queue of 1 minute: $out"
refused "walltime_max" "walltime" "$w"
"$QP_BIN/qmgr" disable small "maintenance" > /dev/null || fail "qmgr disable"
v=$(echo true | as qpuser3 qsub -l walltime=00:00:30 -N quick) || fail "qsub quick"
v=${v%%.*}
out=$(as qpuser3 "$QP_BIN/qmove" small "$v" 2>&1) && fail "a job moved into a disabled queue: $out"
refused "disabled" "disabled" "$v"
kill -0 "$QP_SERVER_PID" || fail "qpoold died"
echo "qmove caps ok"
