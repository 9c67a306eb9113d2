# SPDX-License-Identifier: MIT
# Sourced by multi-host tests after lib.sh: hosts made of namespaces on this
# machine. Each host is a network namespace and a UTS namespace (its own
# host name), held by one bounded `sleep` process; all hosts hang off a
# bridge in a switch namespace of their own, on 198.51.100.0/24
# (TEST-NET-2, documentation only; the test refuses to run where the root
# namespace has an address in it, and adds nothing to the root namespace). Names resolve from a hosts file bound on
# /etc/hosts in the test's private mount namespace only. One private
# munged serves every host (its socket is a path, reachable from any
# network namespace). Everything is in QP_PIDS, so lib.sh's cleanup stops
# it: the holders go last, and their namespaces, veth pairs and bridge with
# them; the mount namespace ends with the test.
#
# The calling script must begin with qp_hosts_reexec "$@" (before lib.sh's
# qp_setup): it re-runs itself in a private mount namespace.

QP_NET=198.51.100
QP_HOLD_SEC=1800   # a holder outlives no test by more than this, even after kill -9

qp_hosts_reexec() {
	if [ -z "${QP_IN_MNTNS:-}" ]; then
		command -v unshare >/dev/null && command -v nsenter >/dev/null || skip "needs unshare and nsenter (util-linux)"
		unshare --mount --propagation private true 2>/dev/null || skip "cannot make a mount namespace here"
		unshare --net --uts true 2>/dev/null || skip "cannot make network and UTS namespaces here"
		exec env QP_IN_MNTNS=1 unshare --mount --propagation private bash "$0" "$@"
	fi
}

# qp_hosts_init: the switch namespace with its bridge, and the hosts file.
qp_hosts_init() {
	ip -o addr show | grep -q " $QP_NET\." && skip "this host has an address in $QP_NET.0/24, the test's private subnet"
	QP_HOSTS_FILE=$QP_T/hosts
	printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' > "$QP_HOSTS_FILE"
	mount --bind "$QP_HOSTS_FILE" /etc/hosts || fail "bind the test's hosts file"
	qp_hold sw || fail "switch namespace"
	QP_SW=$QP_HOLD_PID
	nsenter -t "$QP_SW" --net sh -ec 'ip link set lo up; ip link add br0 type bridge; ip link set br0 up' ||
		fail "bridge"
}

# qp_hold NAME: a process in new network and UTS namespaces, host name
# NAME; sets QP_HOLD_PID. (Not for $(...): the holder would keep its
# output open.)
qp_hold() {
	unshare --net --uts sh -c 'hostname "$1" && exec sleep "$2"' sh "$1" "$QP_HOLD_SEC" \
		< /dev/null > /dev/null 2>&1 &
	local pid=$! i
	QP_PIDS=("$pid" "${QP_PIDS[@]}")   # stopped after everything inside it
	for i in $(seq 100); do
		[ "$(readlink /proc/$pid/ns/uts)" != "$(readlink /proc/self/ns/uts)" ] &&
			[ "$(nsenter -t "$pid" --uts hostname 2>/dev/null)" = "$1" ] && { QP_HOLD_PID=$pid; return 0; }
		sleep 0.02
	done
	return 1
}

# qp_host NAME N: host NAME at $QP_NET.N on the bridge; sets QP_HOST_<NAME>.
qp_host() {
	local name=$1 n=$2 pid
	qp_hold "$name" || fail "host $name"
	pid=$QP_HOLD_PID
	eval "QP_HOST_${name//[^a-zA-Z0-9_]/_}=$pid"
	nsenter -t "$QP_SW" --net ip link add "v$n" type veth peer name eth0 netns "$pid" || fail "veth of $name"
	nsenter -t "$QP_SW" --net sh -ec "ip link set v$n master br0; ip link set v$n up" || fail "bridge port of $name"
	nsenter -t "$pid" --net sh -ec "ip link set lo up; ip addr add $QP_NET.$n/24 dev eth0; ip link set eth0 up" ||
		fail "address of $name"
	printf '%s.%s\t%s\n' "$QP_NET" "$n" "$name" >> "$QP_HOSTS_FILE"
}

qp_host_pid() { local v="QP_HOST_${1//[^a-zA-Z0-9_]/_}"; echo "${!v}"; }

# on HOST cmd...: runs cmd in HOST's network and UTS namespaces.
on() {
	local pid; pid=$(qp_host_pid "$1"); shift
	nsenter -t "$pid" --net --uts "$@"
}

# on_as HOST USER cmd...: as USER, in USER's work dir, with a login host's
# config: nothing but server = and munge_socket =.
on_as() {
	local h=$1 u=$2; shift 2
	(cd "$QP_T/work/$u" && on "$h" runuser -u "$u" -- env QPOOL_CONF="$QP_T/login.conf" PATH="$QP_BIN:/usr/bin:/bin" "$@")
}

# qp_link HOST up|down: plugs or unplugs HOST's cable (its bridge port).
qp_link() {
	local n
	n=$(awk -v h="$1" '$2 == h { split($1, a, "."); print a[4] }' "$QP_HOSTS_FILE")
	nsenter -t "$QP_SW" --net ip link set "v$n" "$2" || fail "link $1 $2"
}

# qp_pool_start SERVERHOST PORT [LISTEN]: munged, then qpoold on SERVERHOST
# listening on SERVERHOST:PORT (or on LISTEN, ADDR:PORT inside SERVERHOST,
# when a relay stands on SERVERHOST:PORT, which is then its advertise). QPOOL_CONF is the server host's config
# (lib.sh's helpers use its Unix socket, from the root namespace);
# node.conf adds server = for qnoded; login.conf has server = and
# munge_socket = only.
qp_pool_start() {
	QP_SRV=$1
	qp_munged_start pool
	printf '[server]\nlisten = %s\nmunge_socket = %s\n' "${3:-$(qp_host_addr "$1"):$2}" "$QP_T/pool.sock" >> "$QPOOL_CONF"
	# Behind the test's relay the clients reach qpoold at SERVERHOST:PORT,
	# not at LISTEN: the site's own forwarder, which a credential names
	# and advertise declares (docs/SECURITY.md, "The server pair").
	[ -z "${3:-}" ] || printf 'advertise = %s:%s\n' "$(qp_host_addr "$1")" "$2" >> "$QPOOL_CONF"
	{ cat "$QPOOL_CONF"; printf 'server = %s:%s\n' "$1" "$2"; } > "$QP_T/node.conf"
	printf '[server]\nserver = %s:%s\nmunge_socket = %s\n' "$1" "$2" "$QP_T/pool.sock" > "$QP_T/login.conf"
	qp_server_on "$1"
}

qp_host_addr() { awk -v h="$1" '$2 == h { print $1 }' "$QP_HOSTS_FILE"; }

qp_server_on() {
	# nsenter execs qpoold: $! is qpoold's pid.
	nsenter -t "$(qp_host_pid "$1")" --net --uts "$QP_BIN/qpoold" -f "$QPOOL_CONF" >> "$QP_T/qpoold.log" 2>&1 &
	QP_SERVER_PID=$!
	QP_PIDS+=("$QP_SERVER_PID")
	local i
	for i in $(seq 200); do
		"$QP_BIN/qstat" >/dev/null 2>&1 && return 0
		kill -0 "$QP_SERVER_PID" 2>/dev/null || fail "qpoold died at start"
		sleep 0.05
	done
	fail "qpoold did not come up on $1"
}

# qp_node_on HOST [CPUS]: qnoded on HOST, named by its host name (no
# --name); waits until qpoold lists it up.
qp_node_on() {
	local h=$1 cpus=${2:-} args=(-f "$QP_T/node.conf")
	[ -n "$cpus" ] && args+=(--cpus "$cpus")
	nsenter -t "$(qp_host_pid "$h")" --net --uts "$QP_BIN/qnoded" "${args[@]}" >> "$QP_T/qnoded-$h.log" 2>&1 &
	# Up to 30 s: over t-hosts-netem's lossy links a SYN may be lost
	# more than once (resent after 1, 2, 4 s ...).
	qp_node_wait "$h" $! 600 "qnoded on $h"
}

# qp_relay_on HOST LISTEN UPSTREAM DELAY_MS: delay-relay.py in HOST's
# namespaces, holding each chunk DELAY_MS each way from LISTEN to UPSTREAM
# (ADDR:PORT both); in QP_PIDS, and it stops by itself after QP_HOLD_SEC.
qp_relay_on() {
	local log=$QP_T/relay-$1.log i
	nsenter -t "$(qp_host_pid "$1")" --net --uts python3 "$QP_TOP/tests/integration/delay-relay.py" \
		"$2" "$3" "$4" "$QP_HOLD_SEC" < /dev/null >> "$log" 2>&1 &
	local pid=$!
	QP_PIDS+=("$pid")
	for i in $(seq 200); do
		grep -q "^listening" "$log" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || fail "the relay on $1 died at start"
		sleep 0.05
	done
	fail "the relay on $1 did not listen"
}

# qp_loss_on HOST PERCENT: drops PERCENT% of the packets HOST sends on its
# eth0, at random (netem's loss is on egress too), with nftables, else
# iptables, in HOST's own network namespace only; the rule goes in the
# cleanup (QP_ATEXIT), and with the namespace anyway.
qp_loss_on() {
	local h=$1 pct=$2
	if command -v nft >/dev/null; then
		on "$h" nft -f - <<-NFT || return 1
		table inet qploss {
			chain out {
				type filter hook output priority 0; policy accept;
				oifname "eth0" numgen random mod 100 < $pct counter drop
			}
		}
		NFT
	else
		on "$h" iptables -w -A OUTPUT -o eth0 -m statistic --mode random \
			--probability "$(printf '0.%02d' "$pct")" -j DROP || return 1
	fi
	QP_LOSSY+=("$h")
	QP_ATEXIT+=(qp_loss_off)
}

# qp_loss_dropped HOST: how many packets HOST's loss rule dropped.
qp_loss_dropped() {
	if command -v nft >/dev/null; then
		on "$1" nft list chain inet qploss out | sed -n 's/.* packets \([0-9]*\) .*/\1/p'
	else
		on "$1" iptables -w -nvxL OUTPUT | awk '$3 == "DROP" { print $1; exit }'
	fi
}

# Removes every loss rule qp_loss_on made (each host once).
qp_loss_off() {
	local h
	for h in $(printf '%s\n' "${QP_LOSSY[@]}" | sort -u); do
		if command -v nft >/dev/null; then
			on "$h" nft delete table inet qploss 2>/dev/null
		else
			on "$h" iptables -w -F OUTPUT 2>/dev/null
		fi
	done
	QP_LOSSY=()
}
QP_LOSSY=()

# qp_need_mpi: skips the test unless both MPIs' compilers are installed.
qp_need_mpi() {
	command -v mpicc.openmpi >/dev/null && command -v mpicc.mpich >/dev/null ||
		skip "needs mpicc.openmpi and mpicc.mpich (openmpi-bin libopenmpi-dev mpich libmpich-dev)"
}

# qp_mpi_pool PREFIX N: a server host PREFIXs and N node hosts PREFIXa,
# PREFIXb, ... (in the array nodes; srv names the server), each qnoded
# given CPUs 0-1 (nodes may share CPUs; each fences its own jobs) and a
# tmpdir of its own, as real hosts have: the hosts share one /var/tmp.
qp_mpi_pool() {
	local p=$1 n=$2 i h letters=abcdefgh
	srv=${p}s nodes=()
	for ((i = 0; i < n; i++)); do nodes+=("$p${letters:i:1}"); done
	qp_host "$srv" 1
	for ((i = 0; i < n; i++)); do qp_host "${nodes[$i]}" $((i + 2)); done
	qp_pool_start "$srv" 7001
	# qp_node_on reads node.conf when it starts qnoded; each gets its own.
	cp "$QP_T/node.conf" "$QP_T/node.conf.pool"
	for h in "${nodes[@]}"; do
		mkdir -m 1777 "$QP_T/tmp-$h"
		{ cat "$QP_T/node.conf.pool"; printf '[node]\ntmpdir = %s\n' "$QP_T/tmp-$h"; } > "$QP_T/node.conf"
		qp_node_on "$h" 0-1
	done
	cp "$QP_T/node.conf.pool" "$QP_T/node.conf"
}

# qp_mpi_build SRC OUT: OUT-ompi and OUT-mpich built from SRC with
# mpicc.openmpi and mpicc.mpich, readable and runnable by the job's user.
qp_mpi_build() {
	local out
	out=$(mpicc.openmpi -O1 -o "$2-ompi" "$1" 2>&1) || fail "mpicc.openmpi: $out"
	out=$(mpicc.mpich -O1 -o "$2-mpich" "$1" 2>&1) || fail "mpicc.mpich: $out"
	chmod 755 "$2-ompi" "$2-mpich"
}
