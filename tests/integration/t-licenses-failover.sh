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
A=$QP_T/a.sock
B=$QP_T/b.sock
sed "s|^socket = .*|socket = $A|" "$QPOOL_CONF" > "$QP_T/a.conf"
sed "s|^socket = .*|socket = $B|" "$QPOOL_CONF" > "$QP_T/b.conf"
printf '[server]\nserver = %s,%s\n' "$A" "$B" >> "$QPOOL_CONF"
start_qpoold() {  # NAME
	"$QP_BIN/qpoold" -f "$QP_T/$1.conf" >> "$QP_T/qpoold-$1.log" 2>&1 &
	QP_PIDS+=("$!")
	eval "PID_$1=$!"
}
served() {
	local i
	for i in $(seq 300); do
		"$QP_BIN/qstat" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	fail "no active qpoold"
}
start_qpoold a
served
start_qpoold b
P=${QP_NODE_PREFIX}l
"$QP_BIN/qnoded" -f "$QPOOL_CONF" --simulate 1 --name "$P" --sim-topology "pack:1 core:4 pu:1" \
	>> "$QP_T/qnoded-sim.log" 2>&1 &
QP_PIDS+=("$!")
for i in $(seq 200); do
	"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^$P-0 +up" && break
	sleep 0.05
done
"$QP_BIN/qstat" --nodes | grep -qE "^$P-0 +up" || fail "the simulated node is not up"

a=$(as qpuser1 sbatch --parsable --export=QPOOL_SIM_RUNTIME=10 -L matlab --wrap=true) || fail "sbatch -L matlab"
qp_wait "$a" running

note "the active killed -9: the standby counts the running job's license"
kill -KILL "$PID_a"
wait "$PID_a" 2>/dev/null
served
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
