# SPDX-License-Identifier: MIT
# Sourced after lib.sh and munge.sh (with a munged started): several qpoold
# of one pool on this host, each with its own socket, TCP port and log, all
# on the pool's state dir (one store), and the pool's config listing them
# all as `server`, in order. Server I runs from $QP_T/server-I.conf and
# logs to $QP_T/qpoold-I.log; its port is in QP_SERVER_PORT_I.

# qp_servers_setup N [MUNGED]: picks N distinct free ports, appends the
# munged socket ($QP_T/MUNGED.sock, default a) and the list to the pool's
# config, writes each server's config. QP_SERVERS holds the list.
qp_servers_setup() {
	local n=$1 m=${2:-a} i port
	QP_SERVERS=""
	for i in $(seq "$n"); do
		port=$(qp_free_port)
		while [[ ",$QP_SERVERS," == *":$port,"* ]]; do port=$(qp_free_port); done
		eval "QP_SERVER_PORT_$i=$port"
		QP_SERVERS+="${QP_SERVERS:+,}127.0.0.1:$port"
	done
	printf '[server]\nmunge_socket = %s\nserver = %s\n' "$QP_T/$m.sock" "$QP_SERVERS" >> "$QPOOL_CONF"
	for i in $(seq "$n"); do
		port=QP_SERVER_PORT_$i
		sed "s|^socket = .*|socket = $QP_T/qpoold-$i.sock|" "$QPOOL_CONF" > "$QP_T/server-$i.conf"
		printf '[server]\nlisten = 127.0.0.1:%s\n' "${!port}" >> "$QP_T/server-$i.conf"
	done
}

# qp_server_start I: starts server I and waits until it answers on its
# port. QP_SERVER_PID (the one lib.sh's cleanup asks to cancel jobs) is it.
qp_server_start() {
	local i=$1 port=QP_SERVER_PORT_$1 pid k
	"$QP_BIN/qpoold" -f "$QP_T/server-$i.conf" >> "$QP_T/qpoold-$i.log" 2>&1 &
	pid=$!
	QP_PIDS+=("$pid")
	eval "QP_SERVER_PID_$i=$pid"
	QP_SERVER_PID=$pid
	for k in $(seq 200); do
		QPOOL_SERVER=127.0.0.1:${!port} "$QP_BIN/qstat" >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || fail "qpoold $i died at start"
		sleep 0.05
	done
	fail "qpoold $i did not come up on port ${!port}"
}

# qp_server_kill I: kill -9 of server I (a crash), waited for.
qp_server_kill() {
	local v=QP_SERVER_PID_$1
	kill -KILL "${!v}" 2>/dev/null
	wait "${!v}" 2>/dev/null
	return 0
}
