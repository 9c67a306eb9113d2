# SPDX-License-Identifier: MIT
# Sourced: a private PostgreSQL for a test, as munge.sh is a private
# munged. qp_pg_start DIR: initdb into DIR (as the postgres user), its own
# socket directory DIR and a free port, no TCP listener, pg_ctl start -w,
# createdb qpool; prints the libpq connection string. qp_pg_stop DIR:
# pg_ctl stop -m fast (immediate if that does not end it). Debian's own
# cluster (pg_ctlcluster, the postgresql service) is never touched.
# On namespaced hosts (hosts.sh), QP_PG_NETNS=PID starts the server in
# that process's network and UTS namespaces and QP_PG_LISTEN=ADDR/BITS
# has it listen on ADDR too, trusting that subnet (a test's private one);
# data and socket stay in DIR.

# qp_pg_bin: the newest installed server's bin directory, or nothing.
qp_pg_bin() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && echo "$d"
}

qp_pg_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# As the postgres user when root (initdb refuses root), else as oneself
# (a package build), in a directory it can enter.
qp_pg_as() {
	local ns=()
	[ -n "${QP_PG_NETNS:-}" ] && ns=(nsenter -t "$QP_PG_NETNS" --net --uts)
	if [ "$(id -u)" = 0 ]; then (cd / && "${ns[@]}" runuser -u postgres -- "$@"); else (cd / && "${ns[@]}" "$@"); fi
}

qp_pg_start() {
	local dir=$1 bin port i listen
	bin=$(qp_pg_bin) || { echo "qp_pg_start: PostgreSQL is not installed" >&2; return 1; }
	if [ "$(id -u)" = 0 ]; then
		id postgres >/dev/null 2>&1 || { echo "qp_pg_start: no postgres user" >&2; return 1; }
		mkdir -p "$dir" && chown postgres: "$dir" && chmod 700 "$dir" || return 1
	else
		mkdir -p "$dir" && chmod 700 "$dir" || return 1
	fi
	# The parents must let the postgres user reach its directory.
	chmod o+x "$(dirname "$dir")" 2>/dev/null
	qp_pg_as "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync -E UTF8 --locale=C.UTF-8 \
		> "$dir/initdb.log" 2>&1 || { echo "qp_pg_start: initdb failed (see $dir/initdb.log)" >&2; return 1; }
	listen=
	if [ -n "${QP_PG_LISTEN:-}" ]; then
		listen=${QP_PG_LISTEN%/*}
		printf 'host all all %s trust\n' "$QP_PG_LISTEN" >> "$dir/data/pg_hba.conf"
	fi
	for i in 1 2 3; do
		port=$(qp_pg_free_port)
		qp_pg_as "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
			-o "-c listen_addresses='$listen' -k $dir -p $port -c fsync=${QP_PG_FSYNC:-on}" \
			start > /dev/null 2>&1 && break
		port=
	done
	[ -n "$port" ] || { echo "qp_pg_start: pg_ctl start failed (see $dir/postgres.log)" >&2; return 1; }
	qp_pg_as "$bin/createdb" -h "$dir" -p "$port" -U postgres qpool \
		|| { echo "qp_pg_start: createdb failed" >&2; qp_pg_stop "$dir"; return 1; }
	echo "host=$dir port=$port user=postgres dbname=qpool"
}

qp_pg_stop() {
	local dir=$1 bin
	bin=$(qp_pg_bin) || return 0
	[ -f "$dir/data/postmaster.pid" ] || return 0
	qp_pg_as "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop > /dev/null 2>&1 ||
		qp_pg_as "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop > /dev/null 2>&1
}
