#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The store's own loss: a PostgreSQL primary and a synchronous streaming
# standby (pg_basebackup -R, synchronous_standby_names, synchronous_commit
# on) in the test dir, qpoold on libpq's multi-host store_dsn (host=A,B
# port=PA,PB target_session_attrs=read-write), a submit loop, the primary
# killed (-9) and the standby promoted (pg_ctl promote): qpoold reconnects
# by itself, no acknowledged job is lost, none runs twice, and a job
# running across it finishes once. Prints the times until a command is
# served and a new job runs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg.sh"
bin=$(qp_pg_bin) || skip "PostgreSQL is not installed"
[ -x "$bin/pg_basebackup" ] || skip "no pg_basebackup"
qp_setup
w=$QP_T/work/qpuser1
pa=$QP_T/pga pb=$QP_T/pgb
QP_ATEXIT_LAST+=(pg_stop_both)
pg_stop_both() {
	qp_pg_stop "$pb"
	qp_pg_stop "$pa"
	# The killed primary's backends end when they see their postmaster
	# gone; its pid file stays, and pg_ctl has nothing left to stop.
}
dsn_a=$(qp_pg_start "$pa") || fail "the primary did not start"
port_a=$(echo "$dsn_a" | sed -n 's/.* port=\([0-9]*\) .*/\1/p')
psql -qtAX -v ON_ERROR_STOP=1 "$dsn_a" -c "ALTER SYSTEM SET synchronous_commit = on" -c "SELECT pg_reload_conf()" \
	> /dev/null || fail "synchronous_commit"

note "a synchronous standby made by pg_basebackup -R"
mkdir -p "$pb" && chown postgres: "$pb" && chmod 700 "$pb" || fail "standby dir"
qp_pg_as "$bin/pg_basebackup" -d "host=$pa port=$port_a user=postgres application_name=qpstandby" \
	-D "$pb/data" -R -X stream -c fast > "$pb/basebackup.log" 2>&1 || fail "pg_basebackup: $(cat "$pb/basebackup.log")"
port_b=$(qp_pg_free_port)
qp_pg_as "$bin/pg_ctl" -D "$pb/data" -l "$pb/postgres.log" -w -t 60 \
	-o "-c listen_addresses='' -k $pb -p $port_b" start > /dev/null 2>&1 || fail "the standby did not start: $(tail -5 "$pb/postgres.log")"
psql -qtAX "$dsn_a" -c "ALTER SYSTEM SET synchronous_standby_names = 'qpstandby'" -c "SELECT pg_reload_conf()" > /dev/null ||
	fail "synchronous_standby_names"
for ((i = 0; i < 300; i++)); do
	[ "$(psql -qtAX "$dsn_a" -c "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'qpstandby'")" = sync ] && break
	sleep 0.2
done
[ "$(psql -qtAX "$dsn_a" -c "SELECT sync_state FROM pg_stat_replication")" = sync ] ||
	fail "the standby is not synchronous: $(psql -qtAX "$dsn_a" -c "SELECT * FROM pg_stat_replication")"
dsn_b="host=$pb port=$port_b user=postgres dbname=qpool"
sql() { psql -qtAX -v ON_ERROR_STOP=1 "$dsn_b" -c "$1"; }

printf '[server]\nstore = postgresql\nstore_dsn = host=%s,%s port=%s,%s user=postgres dbname=qpool target_session_attrs=read-write connect_timeout=3\n' \
	"$pa" "$pb" "$port_a" "$port_b" >> "$QPOOL_CONF"
qp_start_server
qp_start_node n1 0-1
qp_long_job "$w"
long=$QP_LONG

note "a submit loop; the primary killed (-9), the standby promoted"
: > "$QP_T/acked"
(
	while [ ! -e "$QP_T/stop-loop" ]; do
		id=$(echo "echo \$PBS_JOBID >> $w/ran.log" | as qpuser1 qsub -N loop -o /dev/null -e /dev/null 2>/dev/null) &&
			echo "$id" >> "$QP_T/acked"
		sleep 0.1
	done
) &
loop=$!
QP_PIDS+=("$loop")
for ((i = 0; i < 300; i++)); do [ "$(wc -l < "$QP_T/acked")" -ge 5 ] && break; sleep 0.1; done
[ "$(wc -l < "$QP_T/acked")" -ge 5 ] || fail "the submit loop made no progress"
t0=$(date +%s%3N)
kill -KILL "$(head -n 1 "$pa/data/postmaster.pid")" || fail "kill the primary"
qp_pg_as "$bin/pg_ctl" -D "$pb/data" -w -t 60 promote > /dev/null || fail "pg_ctl promote"
n0=$(wc -l < "$QP_T/acked")
for ((i = 0; i < 600; i++)); do
	[ "$(wc -l < "$QP_T/acked")" -gt "$n0" ] && as qpuser1 qstat > /dev/null 2>&1 && break
	sleep 0.1
done
t1=$(date +%s%3N)
[ "$(wc -l < "$QP_T/acked")" -gt "$n0" ] || fail "no submission acknowledged within 60 s of the promotion"
kill -0 "$QP_SERVER_PID" || fail "qpoold exited when its store failed over"
echo "touch $w/probe" | as qpuser1 qsub -N probe -o /dev/null -e /dev/null > /dev/null || fail "qsub probe"
for ((i = 0; i < 600; i++)); do [ -e "$w/probe" ] && break; sleep 0.1; done
t2=$(date +%s%3N)
[ -e "$w/probe" ] || fail "a new job did not run within 60 s"
echo "store failover: a submission acknowledged $((t1 - t0)) ms, a new job ran $((t2 - t0)) ms after kill -9 of the primary"
for ((i = 0; i < 300; i++)); do [ "$(wc -l < "$QP_T/acked")" -ge $((n0 + 10)) ] && break; sleep 0.1; done
touch "$QP_T/stop-loop"
wait "$loop"
grep -q "error" "$QP_T/qpoold.log" && echo "qpoold saw: $(grep error "$QP_T/qpoold.log" | head -3)"
touch "$w/go"
qp_wait "$long" completed --timeout 90
n=$(wc -l < "$QP_T/acked")
while read -r id; do
	[ "$(sql "SELECT count(*) FROM jobs WHERE id = ${id%%.*}")" = 1 ] || fail "acknowledged job $id is not in the promoted store"
	qp_wait "$id" completed --timeout 90
done < "$QP_T/acked"
dups=$(cut -d. -f1 "$w/ran.log" | sort | uniq -d)
[ -z "$dups" ] && [ "$(wc -l < "$w/long.ran")" = 1 ] || fail "jobs ran twice: $dups (long: $(wc -l < "$w/long.ran"))"
[ "$(qp_field "$long" Exit_status)" = 0 ] || fail "the long job was killed: exit status $(qp_field "$long" Exit_status)"
echo "$n acknowledged, 0 lost, 0 run twice, 0 running jobs killed"
echo "PASS"
