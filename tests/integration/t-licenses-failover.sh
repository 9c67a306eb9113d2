#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Licenses across a failover (docs/RESOURCES.md, "Licenses"): an active
# and a standby qpoold on one store (SQLite; QP_STORE=postgresql:
# PostgreSQL), [licenses] matlab = 1, a simulated node. A job holds the
# license; the active is killed -9; the standby takes over, counts the
# running job's license from the store, and a second job waits (squeue
# Licenses) until the first ends.
. "$(dirname "$0")/lib.sh"
qp_setup "
[licenses]
matlab = 1"
qp_start_pair
P=${QP_NODE_PREFIX}l
qp_start_sim "$P" 1 --sim-topology "pack:1 core:4 pu:1"

a=$(as qpuser1 sbatch --parsable --export=QPOOL_SIM_RUNTIME=10 -L matlab --wrap=true) || fail "sbatch -L matlab"
qp_wait "$a" running

note "the active killed -9: the standby counts the running job's license"
kill -KILL "$PID_a"
wait "$PID_a" 2>/dev/null
qp_served
grep -q "active at epoch" "$QP_T/qpoold-b.log" || fail "b did not take over: $(tail -5 "$QP_T/qpoold-b.log")"
out=$(as qpuser1 scontrol show licenses matlab | tr '\n' ' ')
[[ "$out" == *"Total=1 Used=1 Free=0"* ]] || fail "after the takeover: $out ($(qp_state "$a"))"
b=$(as qpuser1 sbatch --parsable --export=QPOOL_SIM_RUNTIME=0.1 -L matlab --wrap=true) || fail "sbatch after takeover"
for i in $(seq 40); do [ "$(as qpuser1 squeue -h -j "$b" -o %r)" = Licenses ] && break; sleep 0.05; done
[ "$(qp_state "$b")" = queued ] && [ "$(as qpuser1 squeue -h -j "$b" -o %r)" = Licenses ] ||
	fail "job $b is $(qp_state "$b") ($(as qpuser1 squeue -h -j "$b" -o %r)) while $a holds the license"
qp_wait "$a" completed --timeout 40
qp_wait "$b" completed --timeout 40
echo "licenses across a failover ok"
