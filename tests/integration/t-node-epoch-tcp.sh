#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Nodes follow the newest epoch (docs/HA.md) when they dial their TCP list
# at once: the deposed.py fixture, on TCP and proving itself with the
# pool's MUNGE key, is listed first and answers fastest; it registers the
# node at epoch 1 and sends SIGKILL for its running job. The node,
# registered at epoch 2, obeys none of it; once the active is back it
# takes the active over the fixture that still greets first, and the job
# runs to its end, once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
qp_setup
qp_munged_start a
w=$QP_T/work/qpuser1
PA=127.0.0.1:$(qp_free_port)
PF=127.0.0.1:$(qp_free_port)
printf '[server]\nlisten = %s\nmunge_socket = %s\n' "$PA" "$QP_T/a.sock" >> "$QPOOL_CONF"
# Twice: the second start takes the lease at epoch 2.
qp_start_server
qp_stop "$QP_SERVER_PID"
qp_start_server
[ "$(sqlite3 -cmd ".timeout 5000" "$QP_T/state/qpool.db" 'SELECT epoch FROM lease')" = 2 ] || fail "epoch is not 2"
L=$QP_T/qnoded-n1.log
# The node alone dials the list; the test's commands use the socket.
QPOOL_SERVER=$PF,$PA "$QP_BIN/qnoded" -f "$QPOOL_CONF" --name n1 >> "$L" 2>&1 &
QP_PIDS+=("$!")
for ((i = 0; i < 600; i++)); do grep -q "registered with qpoold" "$L" && break; sleep 0.1; done
grep -q "connected to qpoold at $PA" "$L" || fail "n1 did not register with the active: $(cat "$L")"
qp_long_job "$w"
job=$QP_LONG

note "the active gone, the fixture at epoch 1 answers first"
python3 "$QP_TOP/tests/integration/deposed.py" "$PF" 1 "$QP_T/deposed.log" 300 "$QP_T/a.sock" >> "$QP_T/deposed.out" 2>&1 &
QP_PIDS+=("$!")
for ((i = 0; i < 100; i++)); do grep -q listening "$QP_T/deposed.log" 2>/dev/null && break; sleep 0.1; done
kill -KILL "$QP_SERVER_PID"
wait "$QP_SERVER_PID" 2>/dev/null
for ((i = 0; i < 600; i++)); do grep -q "older than epoch 2" "$L" && break; sleep 0.1; done
grep -q "sent job.signal 9 for job ${job%%.*}" "$QP_T/deposed.log" || fail "the fixture never had the node: $(cat "$QP_T/deposed.log" "$QP_T/deposed.out")"
grep -q "at epoch 1, older than epoch 2: a deposed server, not obeyed" "$L" || fail "qnoded did not refuse the fixture: $(tail "$L")"
grep -q "job ${job%%.*}: signal 9 sent" "$L" && fail "qnoded obeyed the deposed server's kill"

note "the active back: taken over the fixture, the job runs on"
n0=$(grep -c "registered with qpoold" "$L")
qp_start_server
for ((i = 0; i < 600; i++)); do [ "$(grep -c "registered with qpoold" "$L")" -gt "$n0" ] && break; sleep 0.1; done
[ "$(grep -c "registered with qpoold" "$L")" -gt "$n0" ] || fail "n1 did not register with the active again: $(tail "$L")"
tail -n 3 "$L" | grep -q "connected to qpoold at $PA" || fail "n1 is not at the active: $(tail -n 5 "$L")"
[ "$(qp_state "$job")" = running ] || fail "the job is $(qp_state "$job") after the deposed server's kill"
touch "$w/go"
qp_wait "$job" completed --timeout 60
[ "$(qp_field "$job" Exit_status)" = 0 ] || fail "the job was killed: exit status $(qp_field "$job" Exit_status)"
[ "$(wc -l < "$w/long.ran")" = 1 ] || fail "the job ran $(wc -l < "$w/long.ran") times"
[ "$(grep -c "older than epoch 2" "$L")" = 1 ] || fail "the deposed server was logged more than once"
echo "the fixture registered the node $(grep -c "registered n1 at epoch 1" "$QP_T/deposed.log") times"
echo "PASS"
