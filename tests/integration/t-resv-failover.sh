#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Reservations across a takeover (docs/RESERVATIONS.md): an active and a
# standby qpoold on one store (SQLite; QP_STORE=postgresql: PostgreSQL),
# two simulated nodes. A reservation of one node for qpuser1 and a daily
# one are made; the active is killed -9; the standby takes over and keeps
# both: qpuser1's job waits for its reservation's start and runs on its
# node, qpuser2's job keeps off it, and the daily one moves on to its next
# day under the new active.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_pair
P=${QP_NODE_PREFIX}f
qp_start_sim "$P" 2 --sim-topology "pack:1 core:1 pu:1"
SC=$QP_BIN/scontrol
epoch() { date -d "${1/T/ }" +%s; }
start_of() { "$SC" show reservation "$1" -o | sed -n 's/.*StartTime=\([^ ]*\).*/\1/p'; }

"$SC" create reservation ReservationName=course StartTime=now+8 Duration=5 Nodes="$P-0" Users=qpuser1 >/dev/null ||
	fail "create course"
"$SC" create reservation ReservationName=nightly StartTime=now+3 EndTime=now+6 Nodes="$P-1" Flags=MAINT,DAILY >/dev/null ||
	fail "create nightly"
s0=$(epoch "$(start_of nightly)")
mine=$(as qpuser1 sbatch --parsable --reservation=course -t 1 --export=QPOOL_SIM_RUNTIME=1 --wrap=true) || fail "sbatch in course"

note "the active killed -9: the standby keeps the reservations"
kill -KILL "$PID_a"
wait "$PID_a" 2>/dev/null
qp_served
grep -q "active at epoch" "$QP_T/qpoold-b.log" || fail "b did not take over: $(tail -5 "$QP_T/qpoold-b.log")"
out=$("$SC" show reservation -o)
grep -q "^ReservationName=course .*Nodes=$P-0 .*Users=qpuser1 " <<<"$out" &&
	grep -q "^ReservationName=nightly .*Flags=MAINT,DAILY " <<<"$out" || fail "after the takeover: $out"
[ "$(qp_state "$mine")" = queued ] || fail "course's job is $(qp_state "$mine") before course starts"
other=$(as qpuser2 sbatch --parsable -t 1 --export=QPOOL_SIM_RUNTIME=100 --wrap=true) || fail "sbatch other"
qp_wait "$mine" running completed --timeout 20
[ "$(qp_field "$mine" exec_host)" = "$P-0" ] || fail "course's job ran on $(qp_field "$mine" exec_host)"
for i in $(seq 200); do
	[ "$(epoch "$(start_of nightly)")" != "$s0" ] && break
	sleep 0.05
done
[ "$(epoch "$(start_of nightly)")" = $((s0 + 86400)) ] || fail "nightly's next start under b: $(start_of nightly)"
qp_wait "$other" running
[ "$(qp_field "$other" exec_host)" = "$P-1" ] || fail "qpuser2's job runs on $(qp_field "$other" exec_host), in course"
as qpuser2 scancel "$other"
echo "reservations across a takeover ok"
