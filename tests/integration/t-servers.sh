#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A list of servers (`server = H1:P1,H2:P2`, QPOOL_SERVER alike): commands
# and qnoded try each in turn, over TCP with MUNGE. The first listed server
# down, a listed server that drops every SYN, none answering, the server
# moving from one listed qpoold to another with a job running, a real
# standby qpoold naming the active outside the list; then, with standby.py
# (the standby's side of the wire, where a real server cannot be made to
# do it on cue): standbys naming none, and a server stepping down at a
# job's result. servers.sh starts N qpoold on one host.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/servers.sh"
qp_setup
qp_munged_start a
qp_servers_setup 2
P1=$QP_SERVER_PORT_1
P2=$QP_SERVER_PORT_2

note "the first server is down: the node and the commands use the second"
qp_server_start 2
N=${QP_NODE_PREFIX}srv
qp_start_node $N 0
grep -q "connected to qpoold at 127.0.0.1:$P2" "$QP_T/qnoded-$N.log" || fail "qnoded did not reach the second server"
id=$(as qpuser1 qsub -N one <<<'id -un') || fail "qsub with the first server down"
qp_wait "$id" completed
qp_wait_file "$QP_T/work/qpuser1/one.o$id"
[ "$(cat "$QP_T/work/qpuser1/one.o$id")" = qpuser1 ] || fail "job $id: $(cat "$QP_T/work/qpuser1/one.o$id")"
[ "$("$QP_BIN/qstat" -x --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 1 ] ||
	fail "not exactly one job after one qsub"

note "QPOOL_SERVER is a list too, and wins over the config"
out=$(as qpuser2 env QPOOL_SERVER="127.0.0.1:$P1, 127.0.0.1:$P2" qstat -x "$id") || fail "qstat by QPOOL_SERVER list"
echo "$out" | grep -q one || fail "qstat by QPOOL_SERVER list: $out"

note "no server answers: one line naming each, non-zero"
P3=$(qp_free_port)
while [ "$P3" = "$P1" ] || [ "$P3" = "$P2" ]; do P3=$(qp_free_port); done
out=$(as qpuser1 env QPOOL_SERVER="127.0.0.1:$P1,127.0.0.1:$P3" qstat 2>&1) && fail "qstat worked with no server up"
echo "$out"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "not one line: $out"
echo "$out" | grep -q "127.0.0.1:$P1 (Connection refused), 127.0.0.1:$P3 (Connection refused)" ||
	fail "the line does not name each server and why: $out"
out=$(as qpuser1 env QPOOL_SERVER="127.0.0.1:$P1,,x" qstat 2>&1) && fail "a bad list was accepted"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "QPOOL_SERVER" || fail "bad list: $out"
echo "$out"
out=$(QPOOL_SERVER="127.0.0.1:$P1,,x" timeout 30 "$QP_BIN/qnoded" -f "$QPOOL_CONF" --name ${QP_NODE_PREFIX}bad 2>&1) &&
	fail "qnoded started with a bad list"
echo "$out"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "QPOOL_SERVER: .*an empty entry" || fail "qnoded, bad list: $out"

note "a listed server that drops every SYN costs its connect timeout, then the next answers"
# A listener whose accept queue is full: the kernel drops new SYNs, as a
# host that is gone would. Its own two connections fill the queue.
python3 - "$QP_T/hole.port" <<'PY' &
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
fill = []
for _ in range(2):
    c = socket.socket(); c.setblocking(False)
    try:
        c.connect(s.getsockname())
    except BlockingIOError:
        pass
    fill.append(c)
time.sleep(0.3)
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1])
__import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(3600)
PY
QP_PIDS+=("$!")
qp_wait_file "$QP_T/hole.port"
PH=$(cat "$QP_T/hole.port")
# Bounded by the list's 5 s a server, far below one server's 30 s: a
# command stuck on the first would be killed by the timeout.
out=$(as qpuser1 env QPOOL_SERVER="127.0.0.1:$PH,127.0.0.1:$P2" timeout 25 qstat -x "$id") ||
	fail "qstat with a silent first server: $out"
echo "$out" | grep -q one || fail "qstat with a silent first server: $out"
out=$(as qpuser1 env QPOOL_SERVER="127.0.0.1:$PH,127.0.0.1:$P1" timeout 25 qstat 2>&1)
rc=$?
echo "$out"
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "qstat with no server answering: exit $rc"
echo "$out" | grep -q "127.0.0.1:$PH (Connection timed out), 127.0.0.1:$P1 (Connection refused)" ||
	fail "the line does not name the silent server: $out"

note "the server moves to another listed qpoold: the node follows, its job's result is kept"
id=$(as qpuser1 qsub -N moved <<'JOB'
sleep 3
echo ran
JOB
) || fail "qsub"
qp_wait "$id" running
gded=$(qp_wait_gded "$id" $N)
qp_server_kill 2
# The job ends while no server is up: its result waits in the node's job
# file for the next server to acknowledge it.
for i in $(seq 600); do kill -0 "$gded" 2>/dev/null || break; sleep 0.05; done
kill -0 "$gded" 2>/dev/null && fail "job $id's gded still runs"
qp_server_start 1
for i in $(seq 200); do
	grep -q "connected to qpoold at 127.0.0.1:$P1" "$QP_T/qnoded-$N.log" && break
	sleep 0.05
done
grep -q "connected to qpoold at 127.0.0.1:$P1" "$QP_T/qnoded-$N.log" || fail "qnoded did not move to the first server"
qp_wait "$id" completed --timeout 30
qp_wait_file "$QP_T/work/qpuser1/moved.o$id"
[ "$(cat "$QP_T/work/qpuser1/moved.o$id")" = ran ] || fail "job $id output: $(cat "$QP_T/work/qpuser1/moved.o$id")"
[ "$(qp_field "$id" Exit_status)" = 0 ] || fail "job $id exit status $(qp_field "$id" Exit_status)"
kill -0 "$(qp_node_pid $N)" || fail "qnoded died"

note "a standby names the active, outside the list: commands and a node go there"
# A real standby qpoold (server 3, on the pool's store, listed nowhere):
# server 1 is the active; QPOOL_SERVER lists only the standby.
PS=$(qp_free_port)
while [ "$PS" = "$P1" ] || [ "$PS" = "$P2" ]; do PS=$(qp_free_port); done
sed "s|^socket = .*|socket = $QP_T/qpoold-3.sock|; s|^listen = 127.0.0.1:$P2\$|listen = 127.0.0.1:$PS|" \
	"$QP_T/server-2.conf" > "$QP_T/server-3.conf"
grep -q "^listen = 127.0.0.1:$PS\$" "$QP_T/server-3.conf" || fail "server-3.conf: $(cat "$QP_T/server-3.conf")"
"$QP_BIN/qpoold" -f "$QP_T/server-3.conf" >> "$QP_T/qpoold-3.log" 2>&1 &
QP_PIDS+=("$!")
for i in $(seq 200); do
	out=$(qp_raw 127.0.0.1 "$PS" "%$QP_T/a.sock" '{"op":"stat","id":1}' 2>/dev/null) && echo "$out" | grep -q '"standby": true' && break
	sleep 0.05
done
echo "$out" | grep -q '"standby": true' || fail "server 3 is not a standby: $out"
echo "$out" | grep -q "the active is [^ ]*:$P1 " || fail "server 3 does not name server 1: $out"
export QPOOL_SERVER=127.0.0.1:$PS
n0=$("$QP_BIN/qstat" -x --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))') ||
	fail "qstat through the standby"
id=$(as qpuser2 qsub -N via <<<'id -un') || fail "qsub through a standby"
qp_wait "$id" completed
n1=$("$QP_BIN/qstat" -x --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[ "$n1" = $((n0 + 1)) ] || fail "one qsub through a standby made $((n1 - n0)) jobs"
N2=${QP_NODE_PREFIX}sb
qp_start_node $N2 0
grep -q "connected to qpoold at 127.0.0.1:$PS" "$QP_T/qnoded-$N2.log" || fail "qnoded did not ask the standby first"
grep -q "is a standby.*following [^ ]*:$P1" "$QP_T/qnoded-$N2.log" || fail "qnoded did not log the standby once"
grep -q "connected to qpoold at [^ ]*:$P1" "$QP_T/qnoded-$N2.log" || fail "qnoded did not follow the active"
unset QPOOL_SERVER

note "every server a standby and none names an active: one line, non-zero, after 10 s of asking"
# standby.py speaks the standby's side of the wire: a real standby always
# names the active it sees, or takes the lease itself when none holds it,
# so none can be made to name no active on cue.
start_standby() {  # NAME ACTIVE [RELAY TRIGGER]
	python3 "$(dirname "$0")/standby.py" "$QP_T/$1.port" "$QP_T/a.sock" "$2" "$QP_T/$1.ops" "${@:3}" \
		>> "$QP_T/$1.log" 2>&1 &
	QP_PIDS+=("$!")
	qp_wait_file "$QP_T/$1.port"
}
start_standby sb0 -
out=$(as qpuser1 env QPOOL_SERVER="127.0.0.1:$(cat "$QP_T/sb0.port")" timeout 40 qstat 2>&1)
rc=$?
echo "$out"
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "qstat with only a standby: exit $rc"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "is a standby" || fail "not the standby's line: $out"
[ "$(wc -l < "$QP_T/sb0.ops")" -ge 3 ] || fail "the standby was asked $(wc -l < "$QP_T/sb0.ops") times, not again and again"

note "a server steps down at a job's result: the result goes to the active, the job runs once"
# The node reaches server 1 through sbr, which relays until the trigger,
# then answers the job's job.done as a standby naming server 1. The
# fixture again: a real active cannot be made to lose its lease exactly
# at one job.done (its renewal each second finds the loss first); the
# real server's step-down with a job.done in flight is t-failover's (3).
qp_stop "$(qp_node_pid $N)"
qp_stop "$(qp_node_pid $N2)"
start_standby sbr "127.0.0.1:$P1" "127.0.0.1:$P1" "$QP_T/sbr.trigger"
QPOOL_SERVER=127.0.0.1:$(cat "$QP_T/sbr.port")
export QPOOL_SERVER
N3=${QP_NODE_PREFIX}relay
qp_start_node $N3 0
unset QPOOL_SERVER
id=$(as qpuser3 qsub -N fenced <<'JOB'
sleep 2
echo ran
JOB
) || fail "qsub"
qp_wait "$id" running
[ "$(qp_field "$id" exec_host)" = "$N3" ] || fail "job $id not on $N3"
touch "$QP_T/sbr.trigger"
qp_wait "$id" completed --timeout 30
grep -q '^job.done$' "$QP_T/sbr.ops" || fail "the job's result did not meet the standby"
grep -q "is a standby.*following 127.0.0.1:$P1" "$QP_T/qnoded-$N3.log" || fail "qnoded did not follow"
qp_wait_file "$QP_T/work/qpuser3/fenced.o$id"
[ "$(cat "$QP_T/work/qpuser3/fenced.o$id")" = ran ] || fail "job $id output: $(cat "$QP_T/work/qpuser3/fenced.o$id")"
[ "$(qp_field "$id" Exit_status)" = 0 ] || fail "job $id exit status $(qp_field "$id" Exit_status)"
echo "PASS"
