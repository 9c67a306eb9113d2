#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Watchers across a takeover (docs/EVENTS.md): an active and a standby
# qpoold on one store (SQLite; QP_STORE=postgresql: one PostgreSQL
# database, t-events-failover-pg.sh), `server = A,B`, simulated nodes.
# Watchers follow from cursor 0 while jobs flow; the active is killed
# (-9) mid-stream; the standby takes over and the watchers resume there
# from their cursors: each ends with exactly the store's events, every
# one once, in order, no gap and no duplicate; a watcher started after
# the takeover from a cursor of before it reads the same.
. "$(dirname "$0")/lib.sh"
qp_setup
db=$QP_T/state/qpool.db
A=$QP_T/a.sock
B=$QP_T/b.sock
sed "s|^socket = .*|socket = $A|" "$QPOOL_CONF" > "$QP_T/a.conf"
sed "s|^socket = .*|socket = $B|" "$QPOOL_CONF" > "$QP_T/b.conf"
printf '[server]\nserver = %s,%s\n' "$A" "$B" >> "$QPOOL_CONF"
if [ "${QP_STORE:-sqlite}" = postgresql ]; then
	sql() { psql -qtAX -v ON_ERROR_STOP=1 "$QP_STORE_DSN" -c "$1"; }
else
	sql() { sqlite3 -cmd ".timeout 5000" "$db" "$1"; }
fi
start_qpoold() {  # NAME: starts qpoold with NAME.conf, sets PID_NAME
	"$QP_BIN/qpoold" -f "$QP_T/$1.conf" >> "$QP_T/qpoold-$1.log" 2>&1 &
	QP_PIDS+=("$!")
	eval "PID_$1=$!"
}
active_is() {  # SOCK: it answers a stat as the active
	python3 "$QP_TOP/tests/integration/qpool-ask.py" "$1" stat 2>/dev/null |
		python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("ok") else 1)'
}

start_qpoold a
for i in $(seq 200); do active_is "$A" && break; sleep 0.05; done
active_is "$A" || fail "A is not active"
QP_SERVER_PID=$PID_a
start_qpoold b
"$QP_BIN/qnoded" -f "$QPOOL_CONF" --simulate 4 --name "${QP_NODE_PREFIX}s" \
	--sim-topology "pack:1 numa:1 core:2 pu:1" >> "$QP_T/qnoded-sim.log" 2>&1 &
QP_PIDS+=($!)
for i in $(seq 200); do
	[ "$("$QP_BIN/qstat" --nodes 2>/dev/null | grep -cE "^${QP_NODE_PREFIX}s-[0-9]+ +up")" = 4 ] && break
	sleep 0.05
done

note "5 watchers from cursor 0; jobs flowing; A killed mid-stream"
wpids=()
for i in 1 2 3 4 5; do
	"$QP_BIN/qstat" --follow --since 0 -F json > "$QP_T/w$i.out" 2> "$QP_T/w$i.err" &
	wpids+=($!)
done
submit() {  # N: N jobs of 0.05 s, one qsub each (each follows the active)
	local k
	for ((k = 0; k < $1; k++)); do
		as qpuser1 qsub -v QPOOL_SIM_RUNTIME=0.05 <<< 'true' > /dev/null 2>> "$QP_T/qsub.err"
	done
}
submit 40
before=$(sql "SELECT max(seq) FROM events")
submit 20 &
spid=$!
sleep 0.3
kill -9 "$PID_a"; wait "$PID_a" 2>/dev/null
note "A killed at event ~$before; B takes over"
for i in $(seq 400); do active_is "$B" && break; sleep 0.05; done
active_is "$B" || fail "B did not take over: $(tail -5 "$QP_T/qpoold-b.log")"
QP_SERVER_PID=$PID_b
wait "$spid"
submit 20
for i in $(seq 1200); do
	[ "$(sql "SELECT count(*) FROM jobs WHERE state NOT IN ('completed', 'failed', 'cancelled')")" = 0 ] && break
	sleep 0.05
done
[ "$(sql "SELECT count(*) FROM jobs WHERE state NOT IN ('completed', 'failed', 'cancelled')")" = 0 ] \
	|| fail "jobs left: $(sql "SELECT id, state FROM jobs WHERE state NOT IN ('completed', 'failed', 'cancelled')")"
last=$(sql "SELECT max(seq) FROM events")
[ "$last" -gt "$before" ] || fail "no event after the takeover"
[ "$(sql "SELECT count(DISTINCT epoch) FROM events")" -ge 2 ] || fail "the events name one epoch only"
sql "SELECT seq FROM events ORDER BY seq" > "$QP_T/want"
[ "$(sort -n "$QP_T/want" | uniq | wc -l)" = "$last" ] || fail "the store's events have gaps: $(wc -l < "$QP_T/want") of $last"

note "each watcher: the store's $last events, once each, in order, across the takeover"
check() {  # FILE
	local k
	for ((k = 0; k < 600; k++)); do
		[ "$(tail -n 1 "$1" | jq -r .seq 2>/dev/null)" = "$last" ] && break
		sleep 0.05
	done
	jq -r .seq "$1" > "$QP_T/got" || fail "$1: not JSON lines"
	cmp -s "$QP_T/want" "$QP_T/got" || fail "$1: $(wc -l < "$QP_T/got") events, not the store's $last:
$(diff "$QP_T/want" "$QP_T/got" | head -5)"
}
for i in 1 2 3 4 5; do check "$QP_T/w$i.out"; done
note "a watcher from a cursor of before the takeover, started after it"
"$QP_BIN/qstat" --follow --since 0 -F json > "$QP_T/late.out" 2>&1 &
wpids+=($!)
check "$QP_T/late.out"
for p in "${wpids[@]}"; do kill "$p" 2>/dev/null; done
note "ok"
