#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qpoold on TCP (127.0.0.1) with MUNGE: a node and users' commands over TCP
# behave as over the socket, and every bad credential is refused with one
# logged line naming the peer and the reason, changing nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
qp_setup
qp_munged_start a
qp_munged_start other          # same kind of daemon, another key
PORT=$(qp_free_port)
ADDR=127.0.0.1:$PORT
printf '[server]\nlisten = %s\nmunge_socket = %s\n' "$ADDR" "$QP_T/a.sock" >> "$QPOOL_CONF"

note "listen with no munged is one line at start-up"
sed "s|^munge_socket = .*|munge_socket = $QP_T/none.sock|" "$QPOOL_CONF" > "$QP_T/nomunge.conf"
out=$(timeout 60 "$QP_BIN/qpoold" -f "$QP_T/nomunge.conf" 2>&1) && fail "qpoold started without munged"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "not one line: $out"
echo "$out" | grep -q "munge" || fail "the line does not name munge: $out"
echo "$out"

qp_start_server
export QPOOL_SERVER=$ADDR
N=${QP_NODE_PREFIX}tcp
qp_start_node $N 0
grep -q "connected to qpoold at $ADDR" "$QP_T/qnoded-$N.log" || fail "qnoded did not use TCP"

note "jobs submitted over TCP run as their users"
for u in qpuser1 qpuser2; do
	id=$(as $u qsub -N tcp <<'JOB'
id -un
JOB
) || fail "qsub as $u over TCP"
	qp_wait "$id" completed
	qp_wait_file "$QP_T/work/$u/tcp.o$id"
	[ "$(cat "$QP_T/work/$u/tcp.o$id")" = "$u" ] || fail "job $id ran as $(cat "$QP_T/work/$u/tcp.o$id"), not $u"
	[ "$(qp_field "$id" Job_Owner)" != "" ] || true
	as $u qstat -x "$id" | grep -q "$u" || fail "qstat over TCP does not show $u's job"
done

note "the same error messages over both transports"
id=$(as qpuser1 qsub -h <<<'true') || fail "qsub -h"
e_tcp=$(as qpuser2 qdel "$id" 2>&1) && fail "qpuser2 deleted qpuser1's job over TCP"
e_unix=$(as qpuser2 env -u QPOOL_SERVER qdel "$id" 2>&1) && fail "qpuser2 deleted qpuser1's job"
[ "$e_tcp" = "$e_unix" ] || fail "TCP says '$e_tcp', the socket '$e_unix'"
as qpuser1 qdel "$id" || fail "owner's qdel over TCP"
qp_wait "$id" cancelled
e=$(as qpuser1 qsub -l walltime=bad <<<'true' 2>&1) && fail "bad walltime accepted"
echo "$e"

note "a command with no munged says so in one line"
# No config file at all: $QPOOL_SERVER and munge's default socket (none runs here).
[ -e /run/munge/munge.socket.2 ] || {
e=$(as qpuser1 env -u QPOOL_CONF qstat 2>&1) && fail "qstat without munged worked"
[ "$(printf '%s\n' "$e" | wc -l)" = 1 ] || fail "not one line: $e"
echo "$e" | grep -q munge || fail "does not name munge: $e"
}

note "refusals: each logged once with the peer's address and reason, nothing changed"
before_jobs=$("$QP_BIN/qstat" -x | wc -l)
before_nodes=$("$QP_BIN/qstat" --nodes)
refuse() {  # refuse WHAT EXPECTED-REASON FRAME...
	local what=$1 reason=$2; shift 2
	local n0 out
	n0=$(grep -c "refused" "$QP_T/qpoold.log")
	out=$(qp_raw 127.0.0.1 "$PORT" "$@") || fail "$what: raw client failed"
	echo "$what: $out" | head -c 300; echo
	echo "$out" | grep -q "$reason" || fail "$what: answer lacks '$reason': $out"
	echo "$out" | tail -n 1 | grep -q '^closed$' || fail "$what: connection not closed"
	local i
	for i in $(seq 40); do
		[ "$(grep -c "refused" "$QP_T/qpoold.log")" -gt "$n0" ] && break
		sleep 0.05
	done
	[ "$(grep -c "refused" "$QP_T/qpoold.log")" = $((n0 + 1)) ] || fail "$what: not exactly one log line"
	grep "refused" "$QP_T/qpoold.log" | tail -n 1 | grep -q "from 127.0.0.1:[0-9]*.*$reason" ||
		fail "$what: log line lacks peer or reason: $(tail -n 1 "$QP_T/qpoold.log")"
}
submit='{"op":"submit","id":1,"script":"true","name":"x","workdir":"/tmp"}'
refuse "no credential" "no credential" "$submit"
refuse "silence" "no credential within" WAIT
refuse "garbage credential" "Invalid credential format" '{"op":"auth","id":0,"cred":"MUNGE:garbage:"}' 
# Raw bytes: a frame that is not JSON, and one announcing 1 MiB.
raw_bytes() {  # HEX-OF-BYTES: sends them, prints qpoold's answer or "closed"
	python3 - "$PORT" "$1" <<'PY'
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(bytes.fromhex(sys.argv[2]))
data = b""
try:
    while True:
        c = s.recv(65536)
        if not c:
            break
        data += c
except OSError:
    pass
print(data[4:].decode(errors="replace") if data else "closed")
PY
}
for bytes in 0000000568656c6c6f 00100000; do
	n0=$(grep -c "refused" "$QP_T/qpoold.log")
	out=$(raw_bytes "$bytes")
	echo "raw $bytes: $out"
	echo "$out" | grep -q "no credential" || fail "raw $bytes: not refused: $out"
	for i in $(seq 40); do [ "$(grep -c "refused" "$QP_T/qpoold.log")" -gt "$n0" ] && break; sleep 0.05; done
	[ "$(grep -c "refused" "$QP_T/qpoold.log")" = $((n0 + 1)) ] || fail "raw $bytes: not one log line"
done
kill -0 "$QP_SERVER_PID" || fail "qpoold died of raw bytes"
out=$(QP_RAW_SAVE=$QP_T/c.once qp_raw 127.0.0.1 "$PORT" "%$QP_T/a.sock")
echo "$out" | grep -q '"ok": true' || fail "a good credential was refused: $out"
refuse "replayed" "Replayed credential" "@$QP_T/c.once" "$submit"
munge -S "$QP_T/a.sock" -n -t 1 > "$QP_T/c.ttl" || fail munge
# munged calls a credential expired once now > encode time + ttl: wait
# out two seconds of wall clock, bounded.
t0=$(date +%s)
for i in $(seq 100); do [ $(($(date +%s) - t0)) -ge 3 ] && break; sleep 0.05; done
refuse "expired" "Expired credential" "@$QP_T/c.ttl" "$submit"
munge -S "$QP_T/other.sock" -n > "$QP_T/c.other" || fail munge
refuse "another key" "Invalid credential" "@$QP_T/c.other" "$submit"
getent passwd 54321 >/dev/null && skip "uid 54321 exists here"
refuse "uid not local" "not a user of this host" "%$QP_T/a.sock -U 54321 -G 54321" "$submit"
out=$(qp_raw 127.0.0.1 "$PORT" "%$QP_T/a.sock -U $(id -u qpuser1) -G $(id -g qpuser1)" \
	'{"op":"node.register","id":1,"name":"evil","cpus":"0","mems":"0","topology":{"packages":1,"numa":1,"cores":1,"pus":1,"mem":1},"cgroup":"v2","rt":false,"running":[],"results":[]}')
echo "$out" | grep -q "only root may speak for a node" || fail "non-root registration not refused: $out"
grep "refused" "$QP_T/qpoold.log" | tail -n 1 | grep -q "from 127.0.0.1:[0-9]*.*node.register by uid $(id -u qpuser1), not root" ||
	fail "non-root registration not logged with peer: $(tail -n 1 "$QP_T/qpoold.log")"
[ "$("$QP_BIN/qstat" -x | wc -l)" = "$before_jobs" ] || fail "a refused connection changed the jobs"
[ "$("$QP_BIN/qstat" --nodes)" = "$before_nodes" ] || fail "a refused connection changed the nodes"

note "qpoold restarts: the node comes back over TCP, qnoded restarts: re-adopted"
id=$(as qpuser1 qsub <<<'sleep 3') || fail qsub
qp_wait "$id" running
kill -KILL "$QP_SERVER_PID"
wait "$QP_SERVER_PID" 2>/dev/null
qp_start_server
qp_stop "$(qp_node_pid $N)"
qp_start_node $N 0
qp_wait "$id" completed --timeout 30
[ "$(qp_field "$id" exec_host)" = $N ] || fail "job $id not on $N"

note "IPv6: qpoold listens on [::1], a node and a user reach it there"
if ip -6 addr show dev lo 2>/dev/null | grep -q "::1/128"; then
	qp_stop "$(qp_node_pid $N)"
	P6=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0)); print(s.getsockname()[1])')
	sed -i "s|^listen = .*|listen = [::1]:$P6|" "$QPOOL_CONF"
	qp_stop "$QP_SERVER_PID"
	export QPOOL_SERVER="[::1]:$P6"
	qp_start_server
	N=${QP_NODE_PREFIX}tcp6
	qp_start_node $N 0
	grep -q "connected to qpoold at \[::1\]:$P6" "$QP_T/qnoded-$N.log" || fail "qnoded did not use [::1]"
	id=$(as qpuser3 qsub -N v6 <<<'id -un') || fail "qsub over IPv6"
	qp_wait "$id" completed
	[ "$(qp_field "$id" exec_host)" = "$N" ] || fail "job $id not on $N"
	qp_raw ::1 "$P6" '{"op":"stat","id":1}' > /dev/null
	grep "refused" "$QP_T/qpoold.log" | tail -n 1 | grep -q "from \[::1\]:[0-9]* refused: no credential" ||
		fail "an IPv6 peer is not named [ADDR]:PORT: $(tail -n 1 "$QP_T/qpoold.log")"
else
	note "no IPv6 loopback here: IPv6 part not run"
fi
echo "tcp ok"
