#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fair shares of qpoold's connections (issue 16). One user opening
# thousands of idle connections gets max_conns_per_user of them, each of the
# rest refused with one line; another user's qsub and qstat, root's qmgr and
# a qnoded re-registering still work. When users fill every slot but the
# root reserve, root and the nodes still get in. Idle connections are closed
# after idle_timeout, and the refusals log at most PEERS_LOG_BURST lines a
# minute per uid.
. "$(dirname "$0")/lib.sh"
cap=600 idle=40 many=3000
qp_setup "
[server]
max_conns_per_user = $cap
idle_timeout = $idle"
# qpoold takes its hard fd limit: 1,200 fds make max_conns 1,136, of which
# the last 71 (one in 16) are root's.
bash -c 'ulimit -n 1200 && exec "$0" -f "$1"' "$QP_BIN/qpoold" "$QPOOL_CONF" >> "$QP_T/qpoold.log" 2>&1 &
QP_SERVER_PID=$!
QP_PIDS+=("$QP_SERVER_PID")
for _ in $(seq 100); do
	"$QP_BIN/qstat" > /dev/null 2>&1 && break
	kill -0 "$QP_SERVER_PID" 2>/dev/null || fail "qpoold died at start"
	sleep 0.05
done
qp_start_node n1

cat > "$QP_T/idle.py" <<'PY'
import json, resource, select, socket, struct, sys
path, n = sys.argv[1], int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 100), hard))
socks, failed, closed, msg = {}, 0, 0, ""
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect(path)
    except OSError:
        failed += 1
        s.close()
        continue
    s.setblocking(False)
    socks[s.fileno()] = s
print(f"opened {len(socks)} failed {failed}", flush=True)
for line in sys.stdin:
    if line.strip() == "quit":
        break
    p = select.poll()
    for fd in socks:
        p.register(fd, select.POLLIN)
    for fd, ev in p.poll(0):
        s = socks.pop(fd)
        try:
            data = s.recv(65536)
        except OSError:
            data = b""
        if len(data) > 4 and not msg:
            msg = json.loads(data[4:4 + struct.unpack(">I", data[:4])[0]]).get("error", "")
        closed += 1
        s.close()
    print(f"open {len(socks)} closed {closed} msg {msg}", flush=True)
PY
sock=$QP_T/qpoold.sock
idle_pids=()

# idle_start NAME USER: NAME's python holds $many connections as USER;
# NAME_status prints "open N closed N msg TEXT".
idle_start() {
	mkfifo "$QP_T/$1.in" "$QP_T/$1.out"
	as "$2" python3 "$QP_T/idle.py" "$sock" "$many" < "$QP_T/$1.in" > "$QP_T/$1.out" &
	idle_pids+=($!)
	eval "exec $3> \"$QP_T/$1.in\"; exec $4< \"$QP_T/$1.out\""
	local line
	read -r line <&"$4" || fail "$1: no connections opened"
	echo "$1 ($2): $line"
}
status() {  # FD_IN FD_OUT
	echo status >&"$1"
	read -r st_line <&"$2" || fail "idle client gone"
	set -- $st_line
	st_open=$2 st_closed=$4
}
# wait_open FD_IN FD_OUT WANT: until the refused ones are closed and WANT stay open.
wait_open() {
	local i
	for i in $(seq 200); do
		status "$1" "$2"
		[ "$st_open" -le "$3" ] && break
		sleep 0.1
	done
	echo "$st_line"
}
served() {  # what
	local id
	id=$(echo true | as qpuser2 qsub -N probe) || fail "qpuser2's qsub failed $1"
	as qpuser2 qstat "$id" > /dev/null || fail "qpuser2's qstat failed $1"
	echo "$1: qpuser2's qsub and qstat work"
}
root_served() {  # what
	"$QP_BIN/qmgr" disable short "maintenance" || fail "root's qmgr failed $1"
	"$QP_BIN/qmgr" enable short || fail "root's qmgr failed $1"
	qp_stop "$(qp_node_pid n1)"
	qp_start_node n1
	echo "$1: root's qmgr works and qnoded n1 registered again"
}

note "qpuser3 opens $many connections"
idle_start a qpuser3 7 8
wait_open 7 8 "$cap"
[ "$st_open" = "$cap" ] || fail "qpuser3 holds $st_open connections, want $cap (max_conns_per_user)"
echo "$st_line" | grep -q "too many connections of uid $(id -u qpuser3)" ||
	fail "a refused connection was not told why: $st_line"
served "with qpuser3 at its cap"
root_served "with qpuser3 at its cap"
out=$(as qpuser3 qstat 2>&1) && fail "qpuser3 got a connection beyond its cap"
echo "qpuser3's own qstat: $out"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "the refusal is not one line: $out"
echo "$out" | grep -q "too many connections" || fail "the refusal does not say why: $out"

note "qpuser1 opens $many too: every slot but root's is taken"
idle_start b qpuser1 5 6
wait_open 5 6 "$cap"
echo "qpuser1 holds $st_open"
status 7 8
[ "$st_open" = "$cap" ] || fail "qpuser3 lost connections meanwhile ($st_line): the test ran past idle_timeout"
if out=$(as qpuser2 qstat 2>&1); then
	fail "qpuser2 got a slot from the root reserve"
fi
echo "qpuser2 with the pool full: $out"
echo "$out" | grep -q "no room for another" || fail "a refusal for a full pool does not say so: $out"
root_served "with every user slot taken"

note "idle connections are closed after ${idle}s"
for i in $(seq 150); do
	status 7 8; a=$st_open
	status 5 6; b=$st_open
	[ "$a" = 0 ] && [ "$b" = 0 ] && break
	sleep 0.5
done
[ "$a" = 0 ] && [ "$b" = 0 ] || fail "idle connections still open: qpuser3 $a, qpuser1 $b"
served "after the idle connections were closed"
echo quit >&7; echo quit >&5
exec 7>&- 8<&- 5>&- 6<&-
wait "${idle_pids[@]}"

n=$(grep -c "connection of pid [0-9]* uid $(id -u qpuser3): connection refused" "$QP_T/qpoold.log")
echo "log lines for qpuser3's $((many - cap))+ refusals: $n"
[ "$n" -le 10 ] || fail "qpoold logged $n lines for one user's refusals (rate limit is 10 a minute)"
kill -0 "$QP_SERVER_PID" || fail "qpoold died"
echo "connections ok"
