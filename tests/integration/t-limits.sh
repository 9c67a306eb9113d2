#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Limits in resources (docs/LIMITS.md) on a simulated 8-CPU node: a
# queue's max_cpus_per_user holds a user's third 1-CPU job at 2 CPUs; an
# account's GrpTRES=cpu=4 (sacctmgr) holds its fifth, each saying which
# limit and the count in qstat -f's comment and Slurm's word in squeue
# (QOSMaxCpuPerUserLimit, AssocGrpCpuLimit); across a qpoold restart the
# account's limit and what its jobs hold are the same; lifting the limit
# starts the job; bad limits are refused in one line.
# QP_STORE=postgresql: the same on PostgreSQL (t-limits-pg.sh).
. "$(dirname "$0")/lib.sh"
qp_setup "[queue capped]
max_cpus_per_user = 2
walltime_max = 01:00:00"
qp_start_server
qp_start_sim "${QP_NODE_PREFIX}l" 1 --sim-topology "pack:1 numa:1 core:8 pu:1"
sub() { as "$1" qsub -q "$2" -l walltime=600 -o /dev/null -e /dev/null <<<true || fail "qsub as $1 into $2"; }
note "a queue's max_cpus_per_user: the user's third 1-CPU job waits at 2 CPUs"
c1=$(sub qpuser2 capped); c2=$(sub qpuser2 capped); c3=$(sub qpuser2 capped)
qp_wait "$c1" running; qp_wait "$c2" running
qp_wait_reason "$c3" "max_cpus_per_user=2 of queue capped: the user's jobs hold 2 CPUs, the job asks 1"
[ "$(qp_state "$c3")" = queued ] || fail "c3 is $(qp_state "$c3")"
[ "$("$QP_BIN/squeue" -h -j "$c3" -o %r)" = QOSMaxCpuPerUserLimit ] || fail "squeue %r of c3: $("$QP_BIN/squeue" -h -j "$c3" -o %r)"
"$QP_BIN/qdel" "$c1" "$c2" "$c3" > /dev/null

note "an account's GrpTRES=cpu=4: its fifth 1-CPU job waits"
"$QP_BIN/sacctmgr" -i add account physics GrpTRES=cpu=4 && "$QP_BIN/sacctmgr" -i add user qpuser1 Account=physics &&
	"$QP_BIN/sacctmgr" -i add account other && "$QP_BIN/sacctmgr" -i add user qpuser2 Account=other ||
	fail "sacctmgr: the accounts"
[ "$("$QP_BIN/sacctmgr" -nP show account where name=physics format=account,grptres)" = "physics|cpu=4" ] ||
	fail "show account GrpTRES: $("$QP_BIN/sacctmgr" -nP show account where name=physics format=account,grptres)"
ids=()
for k in 1 2 3 4 5; do ids+=("$(sub qpuser1 batch)"); done
for k in 0 1 2 3; do qp_wait "${ids[$k]}" running; done
qp_wait_reason "${ids[4]}" "account physics: 4/4 CPUs in use, the job asks 1"
[ "$("$QP_BIN/squeue" -h -j "${ids[4]}" -o %r)" = AssocGrpCpuLimit ] || fail "squeue %r: $("$QP_BIN/squeue" -h -j "${ids[4]}" -o %r)"
other=$(sub qpuser2 batch)
qp_wait "$other" running

note "a qpoold restart keeps the limit and what the account holds"
qp_stop "$QP_SERVER_PID"
qp_start_server
qp_sim_up "${QP_NODE_PREFIX}l" 1
qp_wait_reason "${ids[4]}" "account physics: 4/4 CPUs in use"
[ "$(qp_state "${ids[4]}")" = queued ] || fail "the fifth job is $(qp_state "${ids[4]}") after a restart"

note "the limit lifted (GrpTRES=cpu=-1): the fifth job starts"
"$QP_BIN/sacctmgr" -i modify account physics set GrpTRES=cpu=-1 || fail "sacctmgr modify GrpTRES=cpu=-1"
qp_wait "${ids[4]}" running
"$QP_BIN/qdel" "${ids[@]}" "$other" > /dev/null

note "qmgr's form, and bad limits refused in one line"
"$QP_BIN/qmgr" -c "set account physics max_running = 1" || fail "qmgr set account max_running"
"$QP_BIN/qmgr" -c "list account physics" | grep -qx "    max_running = 1" || fail "qmgr list: $("$QP_BIN/qmgr" -c "list account physics")"
out=$("$QP_BIN/sacctmgr" -i modify account physics set GrpTRES=node=3 2>&1) && fail "GrpTRES=node=3 taken"
grep -q "Invalid GrpTRES value" <<<"$out" || fail "GrpTRES=node=3: '$out'"
out=$("$QP_BIN/qmgr" -c "set account physics max_cpus = -5" 2>&1) && fail "max_cpus = -5 taken"
echo PASS
