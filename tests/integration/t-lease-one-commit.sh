#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# An idle active server syncs nothing (docs/HA.md, "The lease's commit"):
# the renewal of its lease and its stamp in the servers table (what
# qstat -B and the standbys read) are one transaction, committed without
# waiting for the disk; the next write that must last (a submit) syncs
# it with its own. Counted for real: qpoold's fdatasync and fsync calls
# (strace, attached to this test's qpoold only) while the store's lease
# row shows renewals. The stamp is still written: its age stays within a
# lease, and qstat -B names the active server. A standby beside it
# stamps its own row each second, and syncs nothing either.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 > /dev/null || skip "no sqlite3"
command -v strace > /dev/null || skip "no strace"
# The syncs counted must be qpoold's own, of the store's file.
[ "${QP_STORE:-sqlite}" = sqlite ] || skip "QP_STORE=$QP_STORE: the store's syncs are not qpoold's"
qp_setup
qp_start_server
db=$QP_T/state/qpool.db
expires() { sqlite3 -readonly "$db" "SELECT expires FROM lease WHERE id = 1"; }
seen() { sqlite3 -readonly "$db" "SELECT role, seen FROM servers"; }
trace=$QP_T/syncs
strace_pid=
strace_stop() {
	[ -n "$strace_pid" ] || return 0
	kill "$strace_pid" 2>/dev/null
	wait "$strace_pid" 2>/dev/null
	strace_pid=
}
QP_ATEXIT+=(strace_stop)

# renewals N: waits (bounded: 60 s) until the lease row changed N times.
renewals() {
	local want=$1 n=0 i last e
	last=$(expires)
	for ((i = 0; i < 1200 && n < want; i++)); do
		e=$(expires)
		if [ "$e" != "$last" ]; then last=$e; n=$((n + 1)); fi
		sleep 0.05
	done
	[ $n -ge "$want" ] || fail "the lease was renewed $n times in 60 s, not $want"
}

note "idle and active: renewals, and no sync of the store"
# The first renewals behind (the start's own writes, the pool's name).
renewals 2
strace -qq -f -e trace=fdatasync,fsync -y -o "$trace" -p "$QP_SERVER_PID" &
strace_pid=$!
# Attached: strace has traced a call of qpoold's once its poll's wait
# shows, so wait for a renewal after the start (the lease moves).
renewals 1
seen0=$(seen)
cp "$trace" "$trace.start"
renewals 6
cp "$trace" "$trace.end"
syncs=$(($(grep -c 'sync(' "$trace.end") - $(grep -c 'sync(' "$trace.start")))
# Six renewals seen, and none synced the store. SQLite's own checkpoint
# (every 1,000 pages of log, a few a renewal) syncs twice if it falls
# in. Synced renewals made it 5-9, two commits a tick 12 or more.
[ "$syncs" -le 2 ] || fail "$syncs syncs of the store over six idle renewals: $(tail -n 20 "$trace.end")"

note "a submit after them syncs the store before qsub has its id"
cp "$trace" "$trace.start"
id=$(as qpuser1 qsub -h <<< true) || fail "qsub: $id"
cp "$trace" "$trace.end"
strace_stop
syncs=$(($(grep -c 'sync(' "$trace.end") - $(grep -c 'sync(' "$trace.start")))
[ "$syncs" -ge 1 ] || fail "job $id was acknowledged with no sync of the store: $(tail -n 20 "$trace.end")"
[ "$(sqlite3 -readonly "$db" "SELECT state FROM jobs WHERE id = ${id%%.*}")" = held ] ||
	fail "job $id is not in the store as held"

note "the stamp is still written, in the renewals' transactions"
seen1=$(seen)
case $seen1 in "active|"*) ;; *) fail "the servers table holds '$seen1', not this active server's row" ;; esac
[ "$seen1" != "$seen0" ] || fail "the active's stamp did not move over six renewals: $seen1"
"$QP_BIN/qstat" -B > "$QP_T/qstat-B" 2>&1 || fail "qstat -B: $(cat "$QP_T/qstat-B")"
grep -q active "$QP_T/qstat-B" || fail "qstat -B shows no active server: $(cat "$QP_T/qstat-B")"
note "a standby beside it stamps its row each second and syncs nothing"
sed "s|^socket = .*|socket = $QP_T/b.sock|" "$QPOOL_CONF" > "$QP_T/b.conf"
qp_start_qpoold b
standby_seen() { sqlite3 -readonly "$db" "SELECT seen FROM servers WHERE role = 'standby'"; }
# stamps N: waits (bounded: 60 s) until the standby's stamp moved N times.
stamps() {
	local want=$1 n=0 i last e
	last=$(standby_seen)
	for ((i = 0; i < 1200 && n < want; i++)); do
		e=$(standby_seen)
		if [ -n "$e" ] && [ "$e" != "$last" ]; then last=$e; n=$((n + 1)); fi
		sleep 0.05
	done
	[ $n -ge "$want" ] || fail "the standby's stamp moved $n times in 60 s, not $want: $(seen)"
}
stamps 1
strace -qq -f -e trace=fdatasync,fsync -y -o "$trace.b" -p "$PID_b" &
strace_pid=$!
stamps 1
cp "$trace.b" "$trace.start"
stamps 4
cp "$trace.b" "$trace.end"
strace_stop
syncs=$(($(grep -c 'sync(' "$trace.end") - $(grep -c 'sync(' "$trace.start")))
[ "$syncs" -le 2 ] || fail "$syncs syncs of the store over a standby's four stamps: $(tail -n 20 "$trace.end")"
echo "lease-one-commit ok"
