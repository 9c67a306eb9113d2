#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A qpoold that has just started knows the nodes it knew: with its only
# node not back yet (qnoded stopped, qpoold killed -9 and restarted), a
# job that fits that node is accepted at once and waits naming it, a job
# wider than it is refused in one line, pbsnodes shows it down, and the
# job runs once the node registers. A registration that changes nothing
# writes nothing; one with other CPUs replaces the row. qmgr delete node
# forgets a node for good, and is refused while the node is up.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
qp_start_node n1 0
db=$QP_T/state/qpool.db
w=$QP_T/work/qpuser1

# The row as the store holds it, on either backend (QP_STORE, lib.sh).
row() {
	local sql="SELECT ncpus, cpus, rt, t_register FROM nodes WHERE name = '$1'"
	if [ "${QP_STORE:-sqlite}" = postgresql ]; then
		psql -qXAt "$QP_STORE_DSN" -c "$sql"
	else
		sqlite3 "$db" "$sql"
	fi
}
stored=$(row n1)
[ "${stored%%|*}" = 1 ] || fail "n1's row after its registration: '$stored', expected 1 CPU"

# A job on n1 when everything stops: the restarted server knows n1 by
# this job too (the case that refused every submission).
long=$(as qpuser1 qsub -N long <<JOB
for i in \$(seq 600); do [ -e $w/go ] && exit 0; sleep 0.1; done
exit 1
JOB
) || fail "qsub long"
qp_wait "$long" running

note "stop qnoded, kill -9 qpoold, start qpoold alone"
qp_stop "$(qp_node_pid n1)"
kill -KILL "$QP_SERVER_PID"
wait "$QP_SERVER_PID" 2>/dev/null
for i in "${!QP_PIDS[@]}"; do
	[ "${QP_PIDS[$i]}" = "$QP_SERVER_PID" ] && unset 'QP_PIDS[i]'
done
QP_PIDS=("${QP_PIDS[@]}")
qp_start_server

out=$(echo 'echo fits' | as qpuser1 qsub -l ncpus=1 -N fits 2>&1) ||
	fail "a job that fits the known node n1 was refused: $out"
fits=$out
out=$(echo 'echo wide' | as qpuser1 qsub -l ncpus=2 -N wide 2>&1) && fail "ncpus=2 accepted with one 1-CPU node known: $out"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "refusal is not one line: $out"
case $out in
*"more CPUs than any node has (the largest has 1)"*) ;;
*) fail "unexpected refusal of ncpus=2: $out" ;;
esac
st=$("$QP_BIN/pbsnodes" n1 | awk -F' = ' '$1 ~ /^ *state$/ {print $2}')
[ "$st" = down ] || fail "pbsnodes shows n1 '$st' before it is back, expected down"
[ "$(qp_state "$fits")" = queued ] || fail "job $fits is '$(qp_state "$fits")' with its node down"
comment=$(qp_field "$fits" comment)
case $comment in
*"down"*n1*) ;;
*) fail "job $fits waits without naming its down node: comment '$comment'" ;;
esac

note "start n1: the jobs run; an unchanged registration writes nothing"
touch "$w/go"
qp_start_node n1 0
qp_wait "$long" completed --timeout 60
qp_wait "$fits" completed --timeout 60
# rt is the host's: qnoded offers realtime only while other pools leave
# it v1 RT runtime (cpu.rt_runtime_us), so on a shared host the second
# qnoded may differ there, and then its row must be written again.
now=$(row n1)
if [ "$(echo "$now" | cut -d'|' -f3)" = "$(echo "$stored" | cut -d'|' -f3)" ]; then
	[ "$now" = "$stored" ] || fail "n1 registered unchanged, its row changed: '$stored' -> '$now'"
else
	note "n1's rt changed with the host's RT runtime: its row is written again"
	[ "$(echo "$now" | cut -d'|' -f4)" != "$(echo "$stored" | cut -d'|' -f4)" ] ||
		fail "n1 registered with another rt, its row was not written: '$now'"
fi

note "n1 comes back with two CPUs: its row is replaced"
qp_stop "$(qp_node_pid n1)"
qp_start_node n1 0-1
for i in $(seq 100); do
	[ "$(row n1 | cut -d'|' -f1-2)" = "2|0-1" ] && break
	sleep 0.05
done
[ "$(row n1 | cut -d'|' -f1-2)" = "2|0-1" ] || fail "n1's row after it came back wider: '$(row n1)'"

note "qmgr delete node"
out=$("$QP_BIN/qmgr" -c "delete node n1" 2>&1) && fail "deleting n1 while it is up was accepted"
case $out in *"n1 is up"*) ;; *) fail "unexpected refusal to delete n1: $out" ;; esac
out=$("$QP_BIN/qmgr" delete nosuch 2>&1) && fail "deleting an unknown node was accepted"
case $out in *"unknown node"*) ;; *) fail "unexpected error for an unknown node: $out" ;; esac
qp_stop "$(qp_node_pid n1)"
for i in $(seq 200); do
	"$QP_BIN/pbsnodes" n1 | grep -qE '^ *state = down' && break
	sleep 0.05
done
"$QP_BIN/qmgr" -c "delete node n1" || fail "deleting n1, down with no job, was refused"
"$QP_BIN/pbsnodes" -a | grep -qx n1 && fail "pbsnodes still lists n1 after delete"
[ -z "$(row n1)" ] || fail "n1's row is still in the store after delete"
qp_stop "$QP_SERVER_PID"
qp_start_server
"$QP_BIN/pbsnodes" -a | grep -qx n1 && fail "n1 is back after a restart though it was deleted"
echo "known nodes ok"
