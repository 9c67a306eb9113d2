#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Node features across a failover (docs/RESOURCES.md): an active and a
# standby qpoold on one store (SQLite; QP_STORE=postgresql: PostgreSQL),
# two simulated nodes with features. With the nodes stopped and the
# active killed -9, the standby takes over knowing the nodes' features
# from the store: pbsnodes shows them while the nodes are down, sbatch
# -C with them is accepted (one no node has is refused), and a held job
# with a constraint runs on them once they are back.
. "$(dirname "$0")/lib.sh"
qp_setup
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
served() {  # waits until the pool's commands are served (by whichever is active)
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
P=${QP_NODE_PREFIX}f
sim() {
	"$QP_BIN/qnoded" -f "$QPOOL_CONF" --simulate 2 --name "$P" --sim-features "fast,rack9" \
		--sim-topology "pack:1 core:2 pu:1" >> "$QP_T/qnoded-sim.log" 2>&1 &
	SIM_PID=$!
	QP_PIDS+=("$SIM_PID")
	for i in $(seq 200); do
		[ "$("$QP_BIN/qstat" --nodes 2>/dev/null | grep -cE "^$P-[01] +up")" = 2 ] && return 0
		sleep 0.05
	done
	fail "the simulated nodes are not up: $("$QP_BIN/qstat" --nodes 2>&1)"
}
sim
held=$(as qpuser1 sbatch --parsable --hold --export=QPOOL_SIM_RUNTIME=0.1 -C 'fast&rack9' --wrap=true) ||
	fail "sbatch -C fast&rack9"

note "nodes stopped, the active killed -9: the standby takes over"
qp_stop "$SIM_PID"
kill -KILL "$PID_a"
wait "$PID_a" 2>/dev/null
served
grep -q "active at epoch" "$QP_T/qpoold-b.log" || fail "b did not take over: $(tail -5 "$QP_T/qpoold-b.log")"
"$QP_BIN/pbsnodes" "$P-1" | grep -q "properties = fast,rack9" ||
	fail "the new active does not know $P-1's features: $("$QP_BIN/pbsnodes" "$P-1")"
"$QP_BIN/pbsnodes" "$P-1" | grep -qE "^ *state = down" || fail "$P-1 is not down"
id=$(as qpuser1 sbatch --parsable --export=QPOOL_SIM_RUNTIME=0.1 -C rack9 --wrap=true) ||
	fail "-C rack9 refused by the new active"
out=$(as qpuser1 sbatch -C rack8 --wrap=true 2>&1) && fail "-C rack8 accepted: $out"
case $out in *"Invalid feature specification"*) ;; *) fail "-C rack8: $out" ;; esac

note "the nodes come back: the jobs run there"
sim
as qpuser1 scontrol release "$held" || fail "scontrol release"
qp_wait "$held" completed
qp_wait "$id" completed
for j in "$held" "$id"; do
	case $(qp_field "$j" exec_host) in "$P"-[01]) ;; *) fail "job $j ran on '$(qp_field "$j" exec_host)'" ;; esac
done
echo "node features across a failover ok"
