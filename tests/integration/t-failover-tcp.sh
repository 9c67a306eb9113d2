#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A standby qpoold on TCP authenticates exactly as the active does (the
# MUNGE auth frame of docs/PROTOCOL.md) before it says anything: a peer
# with a bad credential is refused with the usual line and no standby
# reply; one with a good credential gets the standby reply for client and
# node ops, naming the active's advertised address and epoch; a command
# sent to the standby follows it to the active. Then the takeover over
# TCP: the pool's config lists both (`server = A,B`), a node on it runs a
# job, kill -9 of A: qnoded follows to B by itself, the job finishes once,
# commands and a new job need nothing changed (the times are printed).
# Then a stall over TCP: B, now active, stopped past twice node_timeout
# with a job running; its kernel still acknowledges the node's bytes, so
# only qnoded's deadline on the server's answers moves the node to A, the
# restarted standby, within A's grace: the job is the same run, once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
qp_setup
qp_munged_start m
qp_munged_start other
PA=$(qp_free_port)
PB=$(qp_free_port)
for x in a b; do
	p=$PA; [ $x = b ] && p=$PB
	sed "s|^socket = .*|socket = $QP_T/$x.sock\nlisten = 127.0.0.1:$p\nmunge_socket = $QP_T/m.sock\nadvertise = 127.0.0.1:$p|" \
		"$QPOOL_CONF" > "$QP_T/$x.conf"
done
"$QP_BIN/qpoold" -f "$QP_T/a.conf" >> "$QP_T/qpoold-a.log" 2>&1 &
QP_PIDS+=("$!")
QP_SERVER_PID=$!
for ((i = 0; i < 200; i++)); do QPOOL_CONF=$QP_T/a.conf "$QP_BIN/qstat" >/dev/null 2>&1 && break; sleep 0.05; done
QPOOL_CONF=$QP_T/a.conf "$QP_BIN/qstat" >/dev/null || fail "A did not become active"
PID_A=$!
"$QP_BIN/qpoold" -f "$QP_T/b.conf" >> "$QP_T/qpoold-b.log" 2>&1 &
QP_PIDS+=("$!")
PID_B=$!

note "a good credential gets the standby reply, for client and node ops"
for ((i = 0; i < 200; i++)); do
	out=$(qp_raw 127.0.0.1 "$PB" "%$QP_T/m.sock" '{"op":"stat","id":1}' 2>/dev/null) && echo "$out" | grep -q standby && break
	sleep 0.05
done
echo "$out"
echo "$out" | sed -n 2p | python3 -c '
import json, sys
r = json.load(sys.stdin)
want = {"id": 1, "ok": False, "errno": 11, "standby": True, "active": "127.0.0.1:'"$PA"'"}
bad = {k: r.get(k) for k in want if r.get(k) != want[k]}
sys.exit("standby reply: %r, expected %r" % (r, want) if bad else 0)' || fail "stat at the standby over TCP"
echo "$out" | grep -q "is a standby; the active is 127.0.0.1:$PA (epoch 1)" || fail "standby text: $out"
out=$(qp_raw 127.0.0.1 "$PB" "%$QP_T/m.sock" '{"op":"node.heartbeat","id":2,"node":"n1"}')
echo "$out" | grep -q '"standby": true' || fail "node op at the standby: $out"

note "a bad credential is refused before any standby reply"
munge -S "$QP_T/other.sock" -n > "$QP_T/c.other" || fail munge
out=$(qp_raw 127.0.0.1 "$PB" "@$QP_T/c.other" '{"op":"stat","id":1}')
echo "$out"
echo "$out" | grep -q "qpoold refused the connection: Invalid credential" || fail "bad credential at the standby: $out"
echo "$out" | grep -q standby && fail "a peer without a credential got the standby reply: $out"
grep -q "connection from 127.0.0.1:[0-9]* refused: Invalid credential" "$QP_T/qpoold-b.log" ||
	fail "the standby did not log the refusal"

note "a command at the standby: one line, non-zero"
note "a command sent to the standby follows it to the active"
# B cannot answer a stat: a qstat that succeeds was answered by A.
out=$(as qpuser1 env QPOOL_SERVER="127.0.0.1:$PB" QPOOL_CONF="$QP_T/b.conf" qstat 2>&1) ||
	fail "qstat at the standby did not follow it to the active: $out"
note "no server answers: one line, non-zero"
out=$(as qpuser1 env QPOOL_SERVER="127.0.0.1:$(qp_free_port)" QPOOL_CONF="$QP_T/b.conf" qstat 2>&1) &&
	fail "qstat with no server succeeded: $out"
echo "$out"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "not one line: $out"

note "kill -9 of the active over TCP: the node and the commands follow by the list"
printf '[server]\nmunge_socket = %s\nserver = 127.0.0.1:%s,127.0.0.1:%s\n' "$QP_T/m.sock" "$PA" "$PB" >> "$QPOOL_CONF"
w=$QP_T/work/qpuser1
qp_start_node n1 0-1   # two CPUs: a job runs beside the long one
grep -q "connected to qpoold at 127.0.0.1:$PA" "$QP_T/qnoded-n1.log" || fail "qnoded is not on A"
qp_long_job "$w"
long=$QP_LONG
nl0=$(wc -l < "$QP_T/qnoded-n1.log")
t0=$(date +%s%3N)
kill -KILL "$PID_A"
wait "$PID_A" 2>/dev/null
for ((i = 0; i < 300; i++)); do as qpuser1 qstat > /dev/null 2>&1 && break; sleep 0.05; done
t1=$(date +%s%3N)
out=$(as qpuser1 qstat 2>&1) || fail "no command served through the list 15 s after the kill: $out"
QP_SERVER_PID=$PID_B
echo "takeover over TCP: a command is served $((t1 - t0)) ms after kill -9 of A"
first=$(echo "touch $w/first.ran" | as qpuser1 qsub -N first 2>&1) || fail "qsub at the new active: $first"
for ((i = 0; i < 600; i++)); do [ -e "$w/first.ran" ] && break; sleep 0.05; done
t2=$(date +%s%3N)
[ -e "$w/first.ran" ] || fail "the job submitted after the takeover did not run within 30 s"
echo "takeover over TCP: a new job runs $((t2 - t0)) ms after kill -9 of A"
# Since the kill: connected to B, then registered there.
tail -n +$((nl0 + 1)) "$QP_T/qnoded-n1.log" | grep -A3 "connected to qpoold at 127.0.0.1:$PB\$" | grep -q "registered with qpoold" ||
	fail "qnoded did not follow to B: $(tail -n +$((nl0 + 1)) "$QP_T/qnoded-n1.log")"
touch "$w/go"
qp_wait "$long" completed --timeout 60
[ "$(qp_field "$long" Exit_status)" = 0 ] || fail "long's exit status: $(qp_field "$long" Exit_status)"
[ "$(wc -l < "$w/long.ran")" = 1 ] || fail "long ran $(wc -l < "$w/long.ran") times"

note "a stall over TCP: B stopped past twice node_timeout, a job running; the node leaves it for A"
nt=5   # lib.sh's node_timeout
cont_b() { kill -CONT "$PID_B" 2>/dev/null; return 0; }
QP_ATEXIT+=(cont_b)
"$QP_BIN/qpoold" -f "$QP_T/a.conf" >> "$QP_T/qpoold-a.log" 2>&1 &
QP_PIDS+=("$!")
PID_A=$!
for ((i = 0; i < 200; i++)); do
	qp_raw 127.0.0.1 "$PA" "%$QP_T/m.sock" '{"op":"stat","id":1}' 2>/dev/null | grep -q standby && break
	sleep 0.05
done
s4=$w/stall
mkdir -p "$s4" && chown qpuser1: "$s4"
qp_long_job "$s4"
stalled=$QP_LONG
stime0=$(qp_field "$stalled" stime)
nl0=$(wc -l < "$QP_T/qnoded-n1.log")
na0=$(wc -l < "$QP_T/qpoold-a.log")
# Between two commits (t-failover.sh: one stopped inside its commit
# holds SQLite's write lock, and nobody can take the lease).
for ((i = 0; i < 200; i++)); do
	kill -STOP "$PID_B"
	for _ in $(seq 100); do [ "$(awk '{ print $3 }' "/proc/$PID_B/stat")" = T ] && break; sleep 0.01; done
	[ "${QP_STORE:-sqlite}" = postgresql ] && break
	grep -qE "POSIX +ADVISORY +WRITE +$PID_B " /proc/locks || break
	kill -CONT "$PID_B"
	sleep 0.02
done
t0=$(date +%s%3N)
# Asked of A alone, on its socket, with no standby reply followed: a
# command through the list may be taken by the stopped B's kernel and
# wait for a hello that does not come.
a_serves() {
	"$QP_TOP/tests/integration/qpool-ask.py" "$QP_T/a.sock" stat 2>/dev/null |
		python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("ok") else 1)' 2>/dev/null
}
for ((i = 0; i < 300; i++)); do a_serves && break; sleep 0.05; done
t1=$(date +%s%3N)
a_serves || fail "A did not take over from the stopped B within 15 s"
QP_SERVER_PID=$PID_A
echo "stall over TCP: A serves $((t1 - t0)) ms after B stopped"
for ((i = 0; i < 20 * 4 * nt; i++)); do
	tail -n +$((nl0 + 1)) "$QP_T/qnoded-n1.log" | grep -A3 "connected to qpoold at 127.0.0.1:$PA\$" | grep -q "registered with qpoold" && break
	sleep 0.05
done
t2=$(date +%s%3N)
tail -n +$((nl0 + 1)) "$QP_T/qnoded-n1.log" | grep -A3 "connected to qpoold at 127.0.0.1:$PA\$" | grep -q "registered with qpoold" ||
	fail "qnoded did not leave the stopped B for A: $(tail -n +$((nl0 + 1)) "$QP_T/qnoded-n1.log")"
echo "stall over TCP: the node registered at A $((t2 - t0)) ms after B stopped"
tail -n +$((nl0 + 1)) "$QP_T/qnoded-n1.log" | grep -q "lost qpoold: no answer for ${nt}s" ||
	fail "qnoded did not say why it left B"
# Past A's grace for the node (twice node_timeout from its takeover).
while [ $(($(date +%s%3N) - t1)) -lt $((2 * nt * 1000 + 2000)) ]; do sleep 0.2; done
st=$(QPOOL_CONF=$QP_T/a.conf qp_state "$stalled")
[ "$st" = running ] || fail "the stalled job is '$st' at A, expected running"
st=$(QPOOL_CONF=$QP_T/a.conf qp_field "$stalled" stime)
[ "$st" = "$stime0" ] || fail "the stalled job started again: stime $stime0, now $st"
tail -n +$((na0 + 1)) "$QP_T/qpoold-a.log" | grep -E "node n1 lost|job ${stalled%%.*} requeued" &&
	fail "A lost n1 or requeued the job while n1 lived"
kill -CONT "$PID_B"
for ((i = 0; i < 200; i++)); do grep -q "stepping down to standby" "$QP_T/qpoold-b.log" && break; sleep 0.05; done
grep -q "stepping down to standby" "$QP_T/qpoold-b.log" || fail "B did not step down once continued"
touch "$s4/go"
qp_wait "$stalled" completed --timeout 60
[ "$(qp_field "$stalled" Exit_status)" = 0 ] || fail "the stalled job's exit status: $(qp_field "$stalled" Exit_status)"
[ "$(wc -l < "$s4/long.ran")" = 1 ] || fail "the stalled job ran $(wc -l < "$s4/long.ran") times"
echo "PASS"
