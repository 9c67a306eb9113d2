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
qp_start_pair
P=${QP_NODE_PREFIX}f
sim() { qp_start_sim "$P" 2 --sim-features "fast,rack9" --sim-topology "pack:1 core:2 pu:1"; }
sim
held=$(as qpuser1 sbatch --parsable --hold --export=QPOOL_SIM_RUNTIME=0.1 -C 'fast&rack9' --wrap=true) ||
	fail "sbatch -C fast&rack9"

note "nodes stopped, the active killed -9: the standby takes over"
qp_stop "$QP_SIM_PID"
kill -KILL "$PID_a"
wait "$PID_a" 2>/dev/null
qp_served
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
