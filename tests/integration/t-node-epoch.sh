#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Nodes follow the newest epoch (docs/HA.md): a node registered with the
# active at epoch 2 is not obeyed by a server that registers it at epoch
# 1, a deposed active that does not know it yet (the deposed.py fixture:
# it sends job.signal SIGKILL for every running job the node reports,
# then its ok). The node drops the link, logs the deposed server, and
# goes on to the next server; the job it runs is not killed and ends
# once, recorded by the active. A lower epoch that stays the only one for
# twice node_timeout is a store whose lease began again (qpoold
# --migrate): then the node follows it.
. "$(dirname "$0")/lib.sh"
qp_setup
w=$QP_T/work/qpuser1
A=$QP_T/a.sock
F=$QP_T/deposed.sock
sed "s|^socket = .*|socket = $A|" "$QPOOL_CONF" > "$QP_T/a.conf"
printf '[server]\nserver = %s,%s\n' "$A" "$F" >> "$QPOOL_CONF"
serves() {
	"$QP_TOP/tests/integration/qpool-ask.py" "$A" stat 2>/dev/null |
		python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("ok") else 1)' 2>/dev/null
}
start_a() {
	"$QP_BIN/qpoold" -f "$QP_T/a.conf" >> "$QP_T/qpoold.log" 2>&1 &
	QP_SERVER_PID=$!
	QP_PIDS+=("$!")
	for ((i = 0; i < 600; i++)); do serves && return 0; sleep 0.1; done
	fail "qpoold did not serve"
}
# Twice: the second start takes the lease at epoch 2.
start_a
qp_stop "$QP_SERVER_PID"
start_a
[ "$(sqlite3 -cmd ".timeout 5000" "$QP_T/state/qpool.db" 'SELECT epoch FROM lease')" = 2 ] || fail "epoch is not 2"
qp_start_node n1
grep -q "registered with qpoold" "$QP_T/qnoded-n1.log" || fail "n1 did not register"
qp_long_job "$w"
job=$QP_LONG

note "the active gone, the node's next server is a deposed one at epoch 1"
python3 "$QP_TOP/tests/integration/deposed.py" "$F" 1 "$QP_T/deposed.log" 300 >> "$QP_T/deposed.out" 2>&1 &
QP_PIDS+=("$!")
for ((i = 0; i < 100; i++)); do [ -S "$F" ] && break; sleep 0.1; done
kill -KILL "$QP_SERVER_PID"
wait "$QP_SERVER_PID" 2>/dev/null
for ((i = 0; i < 600; i++)); do grep -q "registered n1 at epoch 1" "$QP_T/deposed.log" 2>/dev/null && break; sleep 0.1; done
grep -q "sent job.signal 9 for job ${job%%.*}" "$QP_T/deposed.log" || fail "the fixture never had the node: $(cat "$QP_T/deposed.log")"
# The node moves on (refused) or stays (obeyed): either way it has
# answered the fixture once its log names it or the job is gone.
for ((i = 0; i < 100; i++)); do
	grep -q "older than epoch 2" "$QP_T/qnoded-n1.log" && break
	grep -q "job ${job%%.*}: signal 9 sent" "$QP_T/qnoded-n1.log" && break
	sleep 0.1
done
start_a
for ((i = 0; i < 600; i++)); do
	"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^n1[[:space:]].*up" && break
	sleep 0.1
done
[ "$(qp_state "$job")" = running ] || fail "the job is $(qp_state "$job") after the deposed server's kill"
touch "$w/go"
qp_wait "$job" completed --timeout 60
[ "$(qp_field "$job" Exit_status)" = 0 ] || fail "the job was killed: exit status $(qp_field "$job" Exit_status)"
[ "$(wc -l < "$w/long.ran")" = 1 ] || fail "the job ran $(wc -l < "$w/long.ran") times"
[ "$(grep -c "older than epoch 2" "$QP_T/qnoded-n1.log")" = 1 ] || fail "the deposed server was logged more than once"
grep "older than epoch 2" "$QP_T/qnoded-n1.log" | head -1
grep -q "at epoch 1, older than epoch 2: a deposed server, not obeyed" "$QP_T/qnoded-n1.log" ||
	fail "qnoded did not log the deposed server"

note "only the older epoch for twice node_timeout: a store whose lease began again (a migration), followed"
# The restart above took the lease at epoch 3.
kill -KILL "$QP_SERVER_PID"
wait "$QP_SERVER_PID" 2>/dev/null
for ((i = 0; i < 600; i++)); do grep -q "lease began again" "$QP_T/qnoded-n1.log" && break; sleep 0.1; done
grep "lease began again" "$QP_T/qnoded-n1.log" | head -1
grep -q "only epoch 1, older than 3, for 10s: the store's lease began again; following it" "$QP_T/qnoded-n1.log" ||
	fail "qnoded never followed the only server left, at the older epoch"
for ((i = 0; i < 100; i++)); do grep -q "registered with qpoold" <(tail -n 3 "$QP_T/qnoded-n1.log") && break; sleep 0.1; done
tail -n 3 "$QP_T/qnoded-n1.log" | grep -q "registered with qpoold" || fail "qnoded did not register at epoch 1"
echo "PASS"
