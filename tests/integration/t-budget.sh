#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CPU-minute budgets (GrpTRESMins, docs/QOS.md) on a simulated 4-CPU node:
# account physics gets GrpTRESMins=cpu=1 (60 CPU-seconds). A 4-CPU job of
# walltime 15 s commits all of it and runs 10 s; a second 4-CPU job of
# walltime 10 s waits while it runs (the first's committed time) and after
# it (40 of 60 CPU-seconds used, it asks 40), saying so with Slurm's
# AssocGrpCPUMinutesLimit and the counts, also after a qpoold restart (the
# use read back from the store); a budget of 2 minutes lets it start.
# A user's budget (GrpTRESMins on a user) holds its job the same way.
# qmgr's form; bad budgets refused in one line.
# QP_STORE=postgresql: the same on PostgreSQL (t-budget-pg.sh).
. "$(dirname "$0")/lib.sh"
qp_setup ""
qp_start_server
qp_start_sim "${QP_NODE_PREFIX}b" 1 --sim-topology "pack:1 numa:1 core:4 pu:1"
SM=$QP_BIN/sacctmgr
note "account physics with a budget of 1 CPU-minute"
"$SM" -i add account physics && "$SM" -i add user qpuser1 Account=physics &&
	"$SM" -i modify account physics set GrpTRESMins=cpu=1 || fail "sacctmgr: the account and its budget"
[ "$("$SM" -nP show account where name=physics format=account,grptresmins)" = "physics|cpu=1" ] ||
	fail "show account GrpTRESMins: $("$SM" -nP show account where name=physics format=account,grptresmins)"

note "a 4-CPU job of 15 s commits the budget; a second waits while it runs and after"
a=$(as qpuser1 qsub -l ncpus=4 -l walltime=15 -v QPOOL_SIM_RUNTIME=10 -o /dev/null -e /dev/null <<<true) || fail "qsub a"
qp_wait "$a" running
b=$(as qpuser1 qsub -l ncpus=4 -l walltime=10 -v QPOOL_SIM_RUNTIME=1 -o /dev/null -e /dev/null <<<true) || fail "qsub b"
qp_wait_reason "$b" "AssocGrpCPUMinutesLimit: account physics: "
qp_field "$b" comment | grep -qE "running jobs commit [0-9.]+ more, the job asks 0\.7" || fail "b while a runs: $(qp_field "$b" comment)"
[ "$("$QP_BIN/squeue" -h -j "$b" -o %r)" = AssocGrpCPUMinutesLimit ] || fail "squeue %r: $("$QP_BIN/squeue" -h -j "$b" -o %r)"
qp_wait "$a" completed --timeout 30
qp_wait_reason "$b" "running jobs commit 0.0 more"
qp_field "$b" comment | grep -qE "account physics: 0\.(6|7)/1 CPU-minutes used" || fail "b after a: $(qp_field "$b" comment)"
[ "$(qp_state "$b")" = queued ] || fail "b is $(qp_state "$b") with the budget spent"

note "a qpoold restart reads the use back from the store: b still waits"
qp_stop "$QP_SERVER_PID"
qp_start_server
qp_sim_up "${QP_NODE_PREFIX}b" 1
qp_wait_reason "$b" "AssocGrpCPUMinutesLimit: account physics: 0."
qp_field "$b" comment | grep -qE "account physics: 0\.(6|7)/1 CPU-minutes used" || fail "b after a restart: $(qp_field "$b" comment)"
[ "$(qp_state "$b")" = queued ] || fail "b is $(qp_state "$b") after a restart"

note "a budget of 2 CPU-minutes: b starts"
"$SM" -i modify account physics set GrpTRESMins=cpu=2 || fail "sacctmgr GrpTRESMins=cpu=2"
qp_wait "$b" running completed --timeout 30

note "a user's budget: GrpTRESMins=cpu=1 on qpuser2 holds its 80 CPU-second job; -1 lifts it"
"$SM" -i add account other && "$SM" -i add user qpuser2 Account=other &&
	"$SM" -i modify user qpuser2 set GrpTRESMins=cpu=1 || fail "sacctmgr: qpuser2's budget"
[ "$("$SM" -nP show user qpuser2 format=user,grptresmins)" = "qpuser2|cpu=1" ] ||
	fail "show user GrpTRESMins: $("$SM" -nP show user qpuser2 format=user,grptresmins)"
c=$(as qpuser2 qsub -l ncpus=4 -l walltime=20 -v QPOOL_SIM_RUNTIME=1 -o /dev/null -e /dev/null <<<true) || fail "qsub c"
qp_wait_reason "$c" "AssocGrpCPUMinutesLimit: user qpuser2: 0.0/1 CPU-minutes used, running jobs commit 0.0 more, the job asks 1.3"
"$SM" -i modify user qpuser2 set GrpTRESMins=cpu=-1 || fail "lift qpuser2's budget"
qp_wait "$c" running completed --timeout 30
out=$("$SM" -i modify user qpuser2 set GrpTRESMins=gres/gpu=5 2>&1) && fail "a user's GPU budget taken"
grep -q "not made" <<<"$out" || fail "a user's GPU budget: '$out'"

note "qmgr's form; bad budgets refused in one line, nothing changed"
"$QP_BIN/qmgr" -c "set account physics cpu_minutes = 5" || fail "qmgr set account cpu_minutes"
"$QP_BIN/qmgr" -c "list account physics" | grep -qx "    cpu_minutes = 5" || fail "qmgr list: $("$QP_BIN/qmgr" -c "list account physics")"
for v in cpu=-5 node=3 cpu=x; do
	out=$("$SM" -i modify account physics set GrpTRESMins=$v 2>&1) && fail "GrpTRESMins=$v taken"
	[ "$(wc -l <<<"$out")" = 1 ] && grep -q "Invalid GrpTRESMins value" <<<"$out" || fail "GrpTRESMins=$v: '$out'"
done
out=$("$QP_BIN/qmgr" -c "set account physics cpu_minutes = -7" 2>&1) && fail "cpu_minutes = -7 taken"
[ "$("$SM" -nP show account where name=physics format=account,grptresmins)" = "physics|cpu=5" ] ||
	fail "a refused budget changed it: $("$SM" -nP show account where name=physics format=account,grptresmins)"
echo PASS
