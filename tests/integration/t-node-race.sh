#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qnoded dials its whole server list at once (docs/HA.md, "A node dials
# every server at once"): a first entry that accepts but never speaks
# (a qpoold-shaped hole: no hello, as a host whose path is cut after the
# SYN) costs nothing. The node registers with the live server behind it
# before that entry's connect deadline (5 s) fires, never logs it as
# lost, and closes the connection it left unused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
qp_setup
qp_munged_start a
LIVE=127.0.0.1:$(qp_free_port)
printf '[server]\nlisten = %s\nmunge_socket = %s\n' "$LIVE" "$QP_T/a.sock" >> "$QPOOL_CONF"
qp_start_server

# The silent entry: accepts, never sends; "accepted" and "closed" lines
# for each connection, so the test sees the node dial it and let it go.
python3 - "$QP_T/silent.port" "$QP_T/silent.log" <<'PY' &
import selectors, socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
log = open(sys.argv[2], "a", buffering=1)
sel = selectors.DefaultSelector(); sel.register(s, selectors.EVENT_READ)
while True:
    for key, _ in sel.select(300) or sys.exit(0):
        if key.fileobj is s:
            c, _ = s.accept(); sel.register(c, selectors.EVENT_READ); log.write("accepted\n")
        elif not key.fileobj.recv(4096):
            sel.unregister(key.fileobj); key.fileobj.close(); log.write("closed\n")
PY
QP_PIDS+=("$!")
for ((i = 0; i < 600; i++)); do [ -s "$QP_T/silent.port" ] && break; sleep 0.1; done
[ -s "$QP_T/silent.port" ] || fail "the silent listener did not start"
SILENT=127.0.0.1:$(cat "$QP_T/silent.port")

note "the list starts with the silent entry: the node registers with the live one first"
N=${QP_NODE_PREFIX}race
L=$QP_T/qnoded-$N.log
QPOOL_SERVER=$SILENT,$LIVE "$QP_BIN/qnoded" -f "$QPOOL_CONF" --name "$N" --cpus 0 >> "$L" 2>&1 &
QP_PIDS+=("$!")
for ((i = 0; i < 1200; i++)); do grep -q "registered with qpoold" "$L" && break; sleep 0.1; done
grep -q "registered with qpoold" "$L" || fail "the node never registered: $(cat "$L")"
cat "$L"
grep -q "connected to qpoold at $LIVE" "$L" || fail "not connected to $LIVE"
# Before the fix the silent entry was tried first, alone, and left after
# its deadline: "lost qpoold: no answer to the connect or handshake".
before=$(sed '/registered with qpoold/q' "$L")
echo "$before" | grep -q "no answer\|cannot reach\|lost qpoold" &&
	fail "the node waited for the silent entry before registering"
grep -q accepted "$QP_T/silent.log" || fail "the silent entry was never dialled"
# The unused connection is closed once the node registered.
for ((i = 0; i < 600; i++)); do grep -q closed "$QP_T/silent.log" && break; sleep 0.1; done
grep -q closed "$QP_T/silent.log" || fail "the node kept its connection to the silent entry"
[ "$(grep -c accepted "$QP_T/silent.log")" = 1 ] || fail "dialled the silent entry more than once: $(cat "$QP_T/silent.log")"

note "a job runs on it"
export QPOOL_SERVER=$LIVE
id=$(as qpuser1 qsub -N race <<<'echo ok') || fail "qsub"
qp_wait "$id" completed

accepts() { grep -c accepted "$QP_T/silent.log"; }
# wait_accepts N: until the silent entry was dialled N times in all.
wait_accepts() {
	local i
	for ((i = 0; i < 600; i++)); do [ "$(accepts)" -ge "$1" ] && return 0; sleep 0.1; done
	fail "the silent entry was not dialled $1 times: $(accepts)"
}

note "the server gone: rounds at the back-off's pace, one line for the outage, back when it is"
kill -KILL "$QP_SERVER_PID"
wait "$QP_SERVER_PID" 2>/dev/null
a0=$(accepts)
wait_accepts $((a0 + 2))   # two rounds, each ended by the silent entry's deadline
qp_start_server
for ((i = 0; i < 1200; i++)); do [ "$(grep -c "registered with qpoold" "$L")" -ge 2 ] && break; sleep 0.1; done
[ "$(grep -c "registered with qpoold" "$L")" = 2 ] || fail "the node did not register again: $(tail -n 5 "$L")"
[ "$(grep -c "lost qpoold" "$L")" = 1 ] || fail "not one line for the outage: $(cat "$L")"
grep -q "cannot reach" "$L" && fail "the outage was logged twice: $(cat "$L")"
# Each round waits for the silent entry's deadline (5 s): a few rounds,
# not a busy loop.
echo "the silent entry was dialled $(( $(accepts) - a0 )) times in the outage"
[ $(( $(accepts) - a0 )) -le 10 ] || fail "dialled the silent entry $(( $(accepts) - a0 )) times"

note "a node that reaches no server at start says so once, naming each and why"
DEAD=127.0.0.1:$(qp_free_port)
L2=$QP_T/qnoded-${N}2.log
a0=$(accepts)
QPOOL_SERVER=$SILENT,$DEAD "$QP_BIN/qnoded" -f "$QPOOL_CONF" --name "${N}2" --cpus 0 >> "$L2" 2>&1 &
pid2=$!
QP_PIDS+=("$pid2")
wait_accepts $((a0 + 2))
line=$(grep "cannot reach qpoold at" "$L2") || fail "no line for the outage: $(cat "$L2")"
echo "$line"
[ "$(echo "$line" | wc -l)" = 1 ] || fail "logged more than once"
echo "$line" | grep -q "$SILENT (no answer), $DEAD (Connection refused); retrying" ||
	fail "the line does not name each server and why: $line"
qp_stop "$pid2"
echo "PASS"
