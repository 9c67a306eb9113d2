#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A pool whose job store is on PostgreSQL (a private server, pg.sh):
# qpoold --migrate moves an SQLite pool's jobs, accounting, qmgr
# settings and known nodes into it (same ids, new ids after them) and refuses a store that
# is not empty; jobs run as a real user and qstat and qacct see them; a
# restart, kill -9 too, loses no acknowledged job; a wrong store_dsn, a
# store of a newer schema and an unreachable server stop qpoold with one
# line, exit non-zero, as does a host without a usable libpq, which is
# in a qpoold on PostgreSQL only.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg.sh"
qp_pg_bin > /dev/null || skip "PostgreSQL is not installed (apt-get install postgresql)"
command -v psql > /dev/null || skip "psql is not installed (apt-get install postgresql-client)"
qp_setup

pg_stop_private() { qp_pg_stop "$QP_T/pg"; }
QP_ATEXIT_LAST+=(pg_stop_private)

# qpoold_once CONF ARGS...: qpoold run to its end (a refusal, --migrate),
# its output in $QP_T/once.out; returns its exit status.
qpoold_once() {
	local conf=$1; shift
	timeout 60 "$QP_BIN/qpoold" -f "$conf" "$@" > "$QP_T/once.out" 2>&1
}

# one_line_with TEXT: the last qpoold_once printed exactly one line, with TEXT.
one_line_with() {
	[ "$(wc -l < "$QP_T/once.out")" = 1 ] || fail "expected one line, got: $(cat "$QP_T/once.out")"
	grep -qF -- "$1" "$QP_T/once.out" || fail "expected '$1' in: $(cat "$QP_T/once.out")"
}

# maps_libpq PID: the process has libpq mapped.
maps_libpq() { grep -q '/libpq\.so' "/proc/$1/maps"; }

note "an SQLite pool: jobs finish, an array, a queue disabled with qmgr"
qp_start_server
# libpq is loaded only by a store on PostgreSQL (jobstore-pg.c, pq_load).
maps_libpq "$QP_SERVER_PID" && fail "qpoold on SQLite has libpq mapped"
qp_start_node n1 0-1
w=$QP_T/work/qpuser1
done1=$(echo "echo one > $w/one.out" | as qpuser1 qsub -N one) || fail "qsub"
arr=$(echo true | as_full qpuser1 qsub -J 1-3 -N arr) || fail "qsub -J"
arr=${arr%%[*}
held=$(echo 'echo held' | as qpuser1 qsub -h -N held) || fail "qsub -h"
qp_wait "$done1" completed
qp_wait "$arr" finished completed
"$QP_BIN/qmgr" -c "set queue short enabled = False" || fail "qmgr disable"
qp_stop "$QP_SERVER_PID"
QP_SERVER_PID=

note "--migrate refuses a config still on sqlite"
qpoold_once "$QPOOL_CONF" --migrate && fail "--migrate with store = sqlite succeeded"
one_line_with "store is sqlite"

DSN=$(qp_pg_start "$QP_T/pg") || fail "the private PostgreSQL did not start"
sqlite_conf=$QP_T/sqlite.conf
cp "$QPOOL_CONF" "$sqlite_conf"
cat >> "$QPOOL_CONF" <<CONF
[server]
store = postgresql
store_dsn = $DSN
CONF
pg_jobs() { psql -qXAt "$DSN" -c "SELECT count(*) FROM jobs"; }

note "qpoold --migrate into the empty PostgreSQL store"
qpoold_once "$QPOOL_CONF" --migrate || fail "--migrate failed: $(cat "$QP_T/once.out")"
grep -q "jobs moved from sqlite" "$QP_T/once.out" || fail "--migrate said: $(cat "$QP_T/once.out")"
moved=$(pg_jobs)
[ "$moved" -ge 3 ] || fail "only $moved jobs in PostgreSQL after --migrate"
n1row=$(psql -qXAt "$DSN" -c "SELECT ncpus, cpus FROM nodes WHERE name = 'n1'")
[ "$n1row" = "2|0-1" ] || fail "the known node n1 was not moved: its row is '$n1row'"
note "--migrate again: refused, nothing written"
qpoold_once "$QPOOL_CONF" --migrate && fail "--migrate onto a non-empty store succeeded"
one_line_with "not empty"
[ "$(pg_jobs)" = "$moved" ] || fail "the refused --migrate wrote jobs"

note "qpoold on PostgreSQL: the moved jobs, the same ids, qmgr's setting"
qp_start_server
maps_libpq "$QP_SERVER_PID" || fail "qpoold on PostgreSQL has no libpq mapped"
[ "$(qp_state "$done1")" = completed ] || fail "job $done1 is '$(qp_state "$done1")' after --migrate"
[ "$(qp_state "$held")" = held ] || fail "held job $held is '$(qp_state "$held")' after --migrate"
"$QP_BIN/qacct" -j "$done1" > "$QP_T/acct.out" 2>&1 || fail "qacct -j $done1: $(cat "$QP_T/acct.out")"
"$QP_BIN/qmgr" -c "list queue short" | grep -qx "    enabled = False" || fail "qmgr's setting was not moved"
next=$(echo "echo two > $w/two.out" | as qpuser1 qsub -N two) || fail "qsub on PostgreSQL"
[ "$next" -gt $((arr + 3)) ] || fail "new job $next does not continue past the array ${arr}[1-3]"
qp_wait "$next" completed
grep -qx two "$w/two.out" || fail "job $next did not run as qpuser1"
"$QP_BIN/qacct" -j "$next" > "$QP_T/acct.out" 2>&1 || fail "qacct -j $next"

note "restart and kill -9: every acknowledged job is kept"
long=$(echo "sleep 3; echo long > $w/long.out" | as qpuser1 qsub -N long) || fail "qsub"
qp_wait "$long" running
acked=()
for i in $(seq 20); do
	acked+=("$(echo "echo s$i" | as qpuser2 qsub -N s$i)") || fail "qsub $i"
done
kill -KILL "$QP_SERVER_PID"
wait "$QP_SERVER_PID" 2>/dev/null
qp_start_server
for id in "${acked[@]}"; do
	st=$(qp_state "$id")
	[ -n "$st" ] || fail "acknowledged job $id lost by kill -9 of qpoold"
done
qp_wait "$long" completed --timeout 60
grep -qx long "$w/long.out" || fail "the job running across the kill -9 did not finish"
for id in "${acked[@]}"; do qp_wait "$id" completed --timeout 60; done
qp_stop "$QP_SERVER_PID"
qp_start_server
n=$("$QP_BIN/qstat" --table -x | grep -cE '^[0-9]+')
[ "$n" -ge 25 ] || fail "qstat -x shows $n jobs after a clean restart"
qp_stop "$QP_SERVER_PID"
QP_SERVER_PID=

note "a wrong store_dsn: one line, exit non-zero"
bad=$QP_T/bad.conf
sed "s|^store_dsn = .*|store_dsn = host=$QP_T/nowhere port=1 dbname=qpool connect_timeout=5|" "$QPOOL_CONF" > "$bad"
qpoold_once "$bad" && fail "qpoold started on a wrong store_dsn"
one_line_with "$QP_T/nowhere"
sed "s|^store_dsn = .*|store_dsn = no_such_key=1|" "$QPOOL_CONF" > "$bad"
qpoold_once "$bad" && fail "qpoold started on a malformed store_dsn"
one_line_with "no_such_key"

note "a store of a newer schema: one line, exit non-zero, nothing written"
psql -qX "$DSN" -c "INSERT INTO schema_version VALUES (99)" || fail "psql"
before=$(pg_jobs)
qpoold_once "$QPOOL_CONF" && fail "qpoold started on a store of schema 99"
one_line_with "schema version 99 is newer than this qpoold"
[ "$(pg_jobs)" = "$before" ] || fail "qpoold wrote to a newer store"
psql -qX "$DSN" -c "DELETE FROM schema_version WHERE version = 99" || fail "psql"

note "PostgreSQL unreachable at start: one line, exit non-zero"
pg_stop_private
qpoold_once "$QPOOL_CONF" && fail "qpoold started with PostgreSQL stopped"
one_line_with "job store (postgresql)"

note "no usable libpq: one line, exit non-zero"
# In a mount namespace of its own (gone with it), libpq's file is
# /dev/null, as on a host where it is missing or broken.
libpq=$(ldconfig -p | awk '$1 == "libpq.so.5" { print $NF; exit }')
[ -n "$libpq" ] || fail "ldconfig does not know libpq.so.5"
timeout 60 unshare -m --propagation private sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' \
	sh "$libpq" "$QP_BIN/qpoold" -f "$QPOOL_CONF" > "$QP_T/once.out" 2>&1 &&
	fail "qpoold started on PostgreSQL without a usable libpq"
one_line_with "job store (postgresql): cannot load libpq (Debian: libpq5)"
echo "store on PostgreSQL ok"
