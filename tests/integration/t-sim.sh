#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A simulated pool: one qnoded --simulate 50 presents 50 nodes of a
# synthetic topology; 2,000 jobs (pipelined submits, plus real qsub ones
# with a walltime and one cancelled) all end as they should, spread over
# the nodes, with their accounting stamps filled, and no cgroup is made.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
"$QP_BIN/qnoded" -f "$QPOOL_CONF" --simulate 50 --name "${QP_NODE_PREFIX}s" \
	--sim-topology "pack:2 numa:2 core:4 pu:2" >> "$QP_T/qnoded-sim.log" 2>&1 &
QP_PIDS+=($!)
for i in $(seq 200); do
	[ "$("$QP_BIN/qstat" --nodes 2>/dev/null | grep -cE "^${QP_NODE_PREFIX}s-[0-9]+ +up")" = 50 ] && break
	sleep 0.05
done
[ "$("$QP_BIN/qstat" --nodes | grep -cE "^${QP_NODE_PREFIX}s-[0-9]+ +up +32 ")" = 50 ] \
	|| fail "50 simulated nodes of 32 PUs are not all up: $("$QP_BIN/qstat" --nodes | head -5)"

note "1,990 jobs through the submit op, 0.05 s each"
out=$("$QP_TOP/bench/submit" 1990 --conns 4 --env QPOOL_SIM_RUNTIME=0.05 --workdir "$QP_T") \
	|| fail "bench/submit: $out"

note "real qsub: a 2 s walltime job, a job of 8 CPUs, and one cancelled"
long=$(as qpuser1 qsub -l walltime=2 <<< 'sleep 100') || fail "qsub"
wide=$(as qpuser2 qsub -l ncpus=8 -v QPOOL_SIM_RUNTIME=0 <<< 'true') || fail "qsub"
gone=$(as qpuser3 qsub <<< 'sleep 100') || fail "qsub"
qp_wait "$gone" running
as qpuser3 qdel "$gone" || fail "qdel"
qp_wait "$gone" cancelled
qp_wait "$wide" completed
start=$(date +%s.%N)
qp_wait "$long" completed
for i in $(seq 600); do
	[ -z "$("$QP_BIN/qstat" | awk 'NR > 2')" ] && break
	sleep 0.05
done
[ -z "$("$QP_BIN/qstat" | awk 'NR > 2')" ] || fail "jobs left: $("$QP_BIN/qstat" | head)"

# Checked in the store: a stat reply of 2,000 jobs is above the wire's 1 MiB.
db=$QP_T/state/qpool.db
q() { sqlite3 "$db" "$1" || fail "sqlite3: $1"; }
[ "$(q "SELECT count(*) FROM jobs")" = 1993 ] || fail "expected 1993 jobs: $(q "SELECT count(*) FROM jobs")"
[ "$(q "SELECT state FROM jobs WHERE id = $gone")" = cancelled ] || fail "job $gone not cancelled"
bad=$(q "SELECT count(*) FROM jobs WHERE id != $gone AND state != 'completed'")
[ "$bad" = 0 ] || fail "$bad jobs not completed: $(q "SELECT id, state, reason FROM jobs WHERE state != 'completed' LIMIT 5")"
n=$(q "SELECT count(DISTINCT node) FROM jobs WHERE node LIKE '${QP_NODE_PREFIX}s-%'")
[ "$n" -ge 10 ] || fail "jobs ran on only $n simulated nodes"
unordered=$(q "SELECT count(*) FROM jobs WHERE NOT (t_submit <= t_dispatch AND t_dispatch <= t_launch
	AND t_launch <= t_exec AND t_exec <= t_exit AND t_exit <= t_released AND t_released <= t_done)")
[ "$unordered" = 0 ] || fail "$unordered jobs with stamps missing or out of order"
ran=$(q "SELECT (t_exit - t_exec) / 1000000 FROM jobs WHERE id = $long")
[ "$ran" -ge 1900 ] && [ "$ran" -le 4000 ] || fail "the 2 s walltime job ran ${ran} ms"
note "$(q "SELECT count(*) FROM jobs") jobs on $n nodes"
# shellcheck disable=SC2010 # ls -d of a glob: "did anything match"
ls -d /sys/fs/cgroup/*/"$QP_CG_PARENT"/"${QP_NODE_PREFIX}"s-* 2>/dev/null | grep -q . && fail "a simulated node made a cgroup"
note "ok"
