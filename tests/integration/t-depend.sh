#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Job dependencies (-W depend) and qsub -W block=true: afterok chains,
# afternotok, afterany, before*, arrays as ID[], a dependency that can
# never be met (held, with the reason in qstat -f), and across a restart.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
node=${QP_NODE_PREFIX}n1
qp_start_node "$node" 0-1
server=$(hostname -s)
w1=$QP_T/work/qpuser1

script() { printf '%s\n' "$2" > "$w1/$1"; chown qpuser1: "$w1/$1"; }
script gate.sh 'for i in $(seq 1200); do [ -e go ] && exit 0; sleep 0.05; done; exit 9'
script ok.sh 'date +%s%N >> order.txt; echo "$PBS_JOBNAME" >> names.txt'
script bad.sh 'exit 3'

note "afterok chain: held (system hold, a comment) until the one before completes"
g=$(as qpuser1 qsub -N g gate.sh) || fail "qsub gate"
j2=$(as qpuser1 qsub -N two -W depend=afterok:$g.$server ok.sh) || fail "qsub afterok"
j3=$(as qpuser1 qsub -N three -W depend=afterok:$j2 ok.sh) || fail "qsub afterok chain"
qp_wait "$g" running
[ "$(qp_state "$j2")" = held ] || fail "j2 is $(qp_state "$j2"), not held"
[ "$(qp_field "$j2" Hold_Types)" = s ] || fail "Hold_Types $(qp_field "$j2" Hold_Types)"
[ "$(qp_field "$j2" depend)" = "afterok:$g.$server" ] || fail "depend = $(qp_field "$j2" depend)"
qp_field "$j2" comment | grep -q "waiting on dependencies" || fail "comment: $(qp_field "$j2" comment)"
qp_refuse "held for its dependencies" as qpuser1 qrls "$j2"
touch "$w1/go"
qp_wait "$j3" completed
[ "$(cat "$w1/names.txt" | tr '\n' ' ')" = "two three " ] || fail "order: $(cat "$w1/names.txt")"

note "afternotok, afterany; afterok on a failed job can never be met"
b=$(as qpuser1 qsub -N b bad.sh) || fail "qsub bad"
n1=$(as qpuser1 qsub -N notok -W depend=afternotok:$b ok.sh) || fail "qsub afternotok"
n2=$(as qpuser1 qsub -N any -W depend=afterany:$b ok.sh) || fail "qsub afterany"
n3=$(as qpuser1 qsub -N never -W depend=afterok:$b ok.sh) || fail "qsub afterok"
qp_wait "$n1" completed
qp_wait "$n2" completed
for i in $(seq 100); do qp_field "$n3" comment | grep -q "can never be met" && break; sleep 0.05; done
[ "$(qp_state "$n3")" = held ] || fail "never: $(qp_state "$n3")"
qp_field "$n3" comment | grep -qF "dependency afterok:$b can never be met: job $b failed" ||
	fail "comment: $(qp_field "$n3" comment)"
# a job the pool never had (the store keeps every job): refused at submit,
# as PBS Pro refuses it, not held for ever
before=$("$QP_BIN/qstat" -x | grep -c ghost)
qp_refuse "qsub: Unknown Job Id 999999" as qpuser1 qsub -N ghost -W depend=afterok:999999 ok.sh
qp_refuse "qsub: Unknown Job Id 999998" as qpuser1 qsub -N ghost -W depend=afterany:$j3:999998 ok.sh
[ "$("$QP_BIN/qstat" -x | grep -c ghost)" = "$before" ] || fail "a refused qsub left a job: $("$QP_BIN/qstat" -x)"
n5=$(as qpuser1 qsub -N afterok-of-ok -W depend=afternotok:$j3 ok.sh) || fail "qsub afternotok on completed"
for i in $(seq 100); do qp_field "$n5" comment | grep -q "never" && break; sleep 0.05; done
qp_field "$n5" comment | grep -qF "job $j3 completed" || fail "comment: $(qp_field "$n5" comment)"
d=$(as qpuser1 qsub -h -N del ok.sh) || fail "qsub -h"
n6=$(as qpuser1 qsub -N afterdel -W depend=afterok:$d ok.sh) || fail "qsub"
as qpuser1 qdel "$d" || fail "qdel"
for i in $(seq 100); do qp_field "$n6" comment | grep -q "never" && break; sleep 0.05; done
qp_field "$n6" comment | grep -qF "job $d was deleted" || fail "comment: $(qp_field "$n6" comment)"

note "-h with a dependency: still held by its owner once the dependency is met"
h=$(as qpuser1 qsub -h -N held -W depend=afterok:$j3 ok.sh) || fail "qsub -h -W depend"
for i in $(seq 100); do [ -z "$(qp_field "$h" comment)" ] && break; sleep 0.05; done
[ "$(qp_state "$h")" = held ] || fail "-h job is $(qp_state "$h") once its dependency was met"
[ "$(qp_field "$h" Hold_Types)" = u ] || fail "Hold_Types $(qp_field "$h" Hold_Types)"
as qpuser1 qrls "$h" || fail "qrls"
qp_wait "$h" completed

note "beforeok: the named job waits for this one"
rm -f "$w1/go" "$w1/names.txt"
x=$(as qpuser1 qsub -h -N x ok.sh) || fail "qsub -h x"
y=$(as qpuser1 qsub -N y -W depend=beforeok:$x gate.sh) || fail "qsub beforeok"
[ "$(qp_field "$x" depend)" = "afterok:$y.$server" ] || fail "x's depend: $(qp_field "$x" depend)"
qp_wait "$y" running
[ "$(qp_state "$x")" = held ] || fail "x is $(qp_state "$x")"
touch "$w1/go"
qp_wait "$x" completed
qp_refuse "not waiting to start" as qpuser1 qsub -W depend=beforeok:$y ok.sh

note "arrays: afterok:ID[]"
rm -f "$w1/go" "$w1/names.txt"
a=$(as qpuser1 qsub -J 1-3 gate.sh) || fail "qsub -J"
z=$(as qpuser1 qsub -N z -W depend=afterok:$a ok.sh) || fail "qsub afterok:ID[]"
qp_wait "${a%[]}[1]" running
[ "$(qp_state "$z")" = held ] || fail "z is $(qp_state "$z") while the array runs"
touch "$w1/go"
qp_wait "$z" completed

note "restart: a job held on a running one stays held, then runs"
rm -f "$w1/go"
g=$(as qpuser1 qsub -N g2 gate.sh) || fail "qsub"
r=$(as qpuser1 qsub -N r -W depend=afterany:$g ok.sh) || fail "qsub afterany"
qp_wait "$g" running
qp_stop "$QP_SERVER_PID"
qp_start_server
[ "$(qp_state "$r")" = held ] || fail "after restart r is $(qp_state "$r")"
touch "$w1/go"
qp_wait "$r" completed

note "an end decides its own waiters, not every waiting job (issue 29)"
stat_of() { python3 "$QP_TOP/bench/stats" | python3 -c "import json, sys; print(json.load(sys.stdin)['$1'])"; }
g1=$(as qpuser1 qsub -h -N g1 ok.sh) || fail "qsub -h g1"
g2=$(as qpuser1 qsub -h -N g2 ok.sh) || fail "qsub -h g2"
w=()
for i in 1 2 3; do
	j=$(as qpuser1 qsub -N w1 -W depend=afterany:$g1 ok.sh) || fail "qsub afterany:g1"
	w+=("$j")
	as qpuser1 qsub -N w2 -W depend=afterany:$g2 ok.sh >/dev/null || fail "qsub afterany:g2"
done
d0=$(stat_of dep_decided) || fail "stats"
n0=$(stat_of dep_waiting)
as qpuser1 qdel "$g1" || fail "qdel g1"
for j in "${w[@]}"; do qp_wait "$j" completed; done
d1=$(stat_of dep_decided)
[ $((d1 - d0)) = 3 ] || fail "g1's end and its waiters' runs decided $((d1 - d0)) waiting jobs, not its 3"
[ $((n0 - $(stat_of dep_waiting))) = 3 ] || fail "waiting: $n0 before, $(stat_of dep_waiting) after"
as qpuser1 qdel "$g2" || fail "qdel g2"

note "bad input"
qp_refuse "unknown type" as qpuser1 qsub -W depend=sometime:1 ok.sh
qp_refuse "not a job id" as qpuser1 qsub -W depend=afterok:x ok.sh
qp_refuse "expected true or false" as qpuser1 qsub -W block=perhaps ok.sh

note "-W block=true: qsub exits with the job's exit status"
as qpuser1 qsub -W block=true bad.sh >/dev/null; rc=$?
[ $rc = 3 ] || fail "block=true of exit 3: rc $rc"
as qpuser1 qsub -W block=true ok.sh >/dev/null || fail "block=true of exit 0: rc $?"
script half.sh '[ "$PBS_ARRAY_INDEX" != 2 ]'
as qpuser1 qsub -W block=true -J 1-3 half.sh >/dev/null; rc=$?
[ $rc = 1 ] || fail "block=true of an array with a failed subjob: rc $rc"
echo "PASS"
