#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Both ends of every connection are proven. A user who takes qpoold's TCP
# port while qpoold is down, or binds a socket at its Unix path, gets
# nothing a real qpoold would accept and no obedience: qnoded and the
# commands refuse it in one line, and qnoded comes back to the real
# qpoold. A credential of another service sharing the MUNGE key (no
# qpool payload) is refused. Idle peers without a credential have their
# own budget: they never take a user's slot, and their refusals are
# logged at a bounded rate.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
command -v setpriv >/dev/null || skip "setpriv is not installed (util-linux)"
H=$(cd "$(dirname "$0")" && pwd)
qp_setup
qp_munged_start a
PORT=$(qp_free_port)
ADDR=127.0.0.1:$PORT
printf '[server]\nlisten = %s\nmunge_socket = %s\n' "$ADDR" "$QP_T/a.sock" >> "$QPOOL_CONF"
qp_start_server
export QPOOL_SERVER=$ADDR
N=${QP_NODE_PREFIX}a
qp_start_node "$N" 0
NLOG=$QP_T/qnoded-$N.log
# What only root can create: a job the node ran for an impostor, as root.
MARKER=$QP_T/pwned
mkdir -p "$QP_T/imp" && chown qpuser1: "$QP_T/imp"

# bg_as USER cmd...: runs cmd as USER in the background; setpriv execs it,
# so $! is its pid (stopped by the cleanup too).
bg_as() {
	local u=$1; shift
	setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups "$@" &
	QP_PIDS+=("$!")
}

# wait_for WHAT cmd...: polls cmd (bounded, 60 s) until it succeeds.
# count_ge N PATTERN FILE: FILE has at least N lines matching PATTERN.
count_ge() { [ "$(grep -c -- "$2" "$3" 2>/dev/null)" -ge "$1" ]; }
wait_for() {
	local what=$1 i; shift
	for i in $(seq 1200); do "$@" && return 0; sleep 0.05; done
	fail "$what: not after 60 s"
}

no_obedience() {
	[ ! -e "$MARKER" ] || fail "a node ran the impostor's root job"
	! grep -q "job 9999" "$@" || fail "a node took the impostor's job.launch: $(grep "job 9999" "$@" | head -n 3)"
	! ls "$QP_T"/state/nodes/*/jobs/9999.* >/dev/null 2>&1 || fail "a node wrote the impostor's job files"
}

note "(a) an impostor on qpoold's TCP port while qpoold is down"
regs0=$(grep -c "registered with qpoold" "$NLOG")
qp_stop "$QP_SERVER_PID"
bg_as qpuser1 /usr/bin/python3 "$H/impostor.py" tcp 127.0.0.1 "$PORT" "$QP_T/imp/tcp.capture" "$QP_T/imp/tcp.ready" \
	"$MARKER" "$QP_T/a.sock"
IMP=$!
wait_for "the impostor listening" test -s "$QP_T/imp/tcp.ready"
out=$(as qpuser2 qsub <<<'echo secret-script-text' 2>&1) && fail "qsub trusted the impostor: $out"
echo "qsub: $out"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "qsub: not one line: $out"
echo "$out" | grep -q "is not qpoold: its credential is uid $(id -u qpuser1), not root" || fail "qsub: wrong reason: $out"
! grep -q "secret-script-text" "$QP_T/imp/tcp.capture" || fail "qsub sent its script to the impostor"
out=$(as qpuser2 qstat 2>&1) && fail "qstat trusted the impostor: $out"
# qnoded retries every second: it meets the impostor and says so once.
wait_for "qnoded refusing the impostor" grep -q "refusing the server: $ADDR is not qpoold" "$NLOG"
grep "refusing the server" "$NLOG" | head -n 1
# Its credentials: qsub's, qstat's and two of qnoded's tries.
wait_for "the impostor seeing two of qnoded's tries" count_ge 4 '"op": "auth"' "$QP_T/imp/tcp.capture"
! grep -q '"node.register"' "$QP_T/imp/tcp.capture" || fail "qnoded registered with the impostor"
[ "$(grep -c "refusing the server" "$NLOG")" = 1 ] || fail "qnoded logged the impostor more than once an outage"
qp_stop "$IMP"
no_obedience "$NLOG"
qp_start_server
wait_for "qnoded back with the real qpoold" count_ge $((regs0 + 1)) "registered with qpoold" "$NLOG"
# Every credential the impostor got, replayed to the real qpoold: refused.
python3 - "$QP_T/imp/tcp.capture" "$QP_T/imp/cred" <<'PY'
import json, sys
creds = [json.loads(l).get("cred") for l in open(sys.argv[1])]
for i, c in enumerate(x for x in creds if x):
    open("%s.%d" % (sys.argv[2], i), "w").write(c + "\n")
PY
n=0
for f in "$QP_T"/imp/cred.*; do
	out=$(qp_raw 127.0.0.1 "$PORT" "@$f" '{"op":"stat","id":1}')
	echo "replayed $(basename "$f"): $out" | head -c 300; echo
	echo "$out" | grep -q '"ok": true' && fail "the real qpoold accepted a credential the impostor got: $out"
	echo "$out" | grep -q "made for another connection" || fail "replay refused for another reason: $out"
	n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "only $n credentials captured"
no_obedience "$NLOG"
id=$(as qpuser2 qsub <<<'true') || fail "qsub to the real qpoold after the impostor"
qp_wait "$id" completed

note "(b) a socket a user bound at the configured path"
mkdir -m 1777 "$QP_T/pub"
sed "s|^socket = .*|socket = $QP_T/pub/qpoold.sock|" "$QPOOL_CONF" > "$QP_T/pub.conf"
: > "$QP_T/imp/unix.capture" && chown qpuser1: "$QP_T/imp/unix.capture"
bg_as qpuser1 /usr/bin/python3 "$H/impostor.py" unix "$QP_T/pub/qpoold.sock" "$QP_T/imp/unix.capture" \
	"$QP_T/imp/unix.ready" "$MARKER"
IMP=$!
wait_for "the socket impostor listening" test -s "$QP_T/imp/unix.ready"
for cmd in qstat qsub; do
	out=$(as qpuser2 env -u QPOOL_SERVER QPOOL_CONF="$QP_T/pub.conf" $cmd <<<'echo secret-script-text' 2>&1) &&
		fail "$cmd trusted a user's socket: $out"
	echo "$cmd: $out"
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "$cmd: not one line: $out"
	echo "$out" | grep -q "$QP_T/pub/qpoold.sock is not qpoold's: uid $(id -u qpuser1) holds it" ||
		fail "$cmd: wrong reason: $out"
done
U=${N}u
env -u QPOOL_SERVER "$QP_BIN/qnoded" -f "$QP_T/pub.conf" --name "$U" --cpus 1 >> "$QP_T/qnoded-$U.log" 2>&1 &
UPID=$!
QP_PIDS+=("$UPID")
wait_for "qnoded refusing the user's socket" grep -q "refusing the server: .*is not qpoold's" "$QP_T/qnoded-$U.log"
grep "refusing the server" "$QP_T/qnoded-$U.log" | head -n 1
[ ! -s "$QP_T/imp/unix.capture" ] || fail "the socket impostor got: $(head -c 300 "$QP_T/imp/unix.capture")"
qp_stop "$UPID"
qp_stop "$IMP"
no_obedience "$NLOG" "$QP_T/qnoded-$U.log"

note "(c) a credential made with the key but not for qpool is refused"
munge -S "$QP_T/a.sock" -n > "$QP_T/c.none" || fail munge
munge -S "$QP_T/a.sock" -s "slurm 23.02 auth payload" > "$QP_T/c.other" || fail munge
for c in none other; do
	n0=$(grep -c "refused" "$QP_T/qpoold.log")
	out=$(qp_raw 127.0.0.1 "$PORT" "@$QP_T/c.$c" '{"op":"stat","id":1}')
	echo "root's $c: $out" | head -c 300; echo
	echo "$out" | grep -q '"ok": true' && fail "a root credential with payload '$c' was accepted"
	echo "$out" | grep -q "not made for qpool" || fail "$c: wrong reason: $out"
	wait_for "the refusal logged" count_ge $((n0 + 1)) "refused" "$QP_T/qpoold.log"
done

note "(d) 300 idle TCP peers from one address take no user's slot; their refusals are capped in the log"
qp_stop "$QP_SERVER_PID"
# A small fd limit: 236 connections, the size the old shared slots filled.
(ulimit -n 300 && exec "$QP_BIN/qpoold" -f "$QPOOL_CONF") >> "$QP_T/qpoold.log" 2>&1 &
QP_SERVER_PID=$!
QP_PIDS+=("$QP_SERVER_PID")
wait_for "qpoold up" sh -c "'$QP_BIN/qstat' >/dev/null 2>&1"
wait_for "the node back" sh -c "'$QP_BIN/qstat' --nodes | grep -qE '^${N}[[:space:]].*up'"
mkdir -p "$QP_T/flood" && chown qpuser3: "$QP_T/flood"
log0=$(wc -l < "$QP_T/qpoold.log")
t0=$(date +%s)
bg_as qpuser3 /usr/bin/python3 "$H/idle-flood.py" 127.0.0.2 127.0.0.1 "$PORT" 300 "$QP_T/flood/status"
FLOOD=$!
flood_closed() { [ -s "$QP_T/flood/status" ] && [ "$(awk '{print $4}' "$QP_T/flood/status")" -ge "$1" ]; }
wait_for "the flood meeting qpoold's limit" flood_closed 50
cat "$QP_T/flood/status"
id=$(as qpuser1 env -u QPOOL_SERVER qsub <<<'true' 2>&1) || fail "qsub over the socket refused during the flood: $id"
id=${id%%.*}
id2=$(as qpuser1 qsub <<<'true' 2>&1) || fail "qsub over TCP refused during the flood: $id2"
as qpuser2 qstat >/dev/null || fail "qstat over TCP refused during the flood"
# Let the flood go on for a while: the idle ones time out, all reconnect.
wait_for "the flood's idle peers timed out and came back" flood_closed 1500
cat "$QP_T/flood/status"
qp_stop "$FLOOD"
lines=$(tail -n +"$((log0 + 1))" "$QP_T/qpoold.log" | grep -c "refus\|no credential\|connections open")
tail -n +"$((log0 + 1))" "$QP_T/qpoold.log" | grep "refus\|no credential\|connections open" | head -n 4
# 10 lines a minute and one count of the rest; a slow host may have
# started a second minute.
max=$((12 * (($(date +%s) - t0) / 60 + 1)))
echo "log lines about the flood: $lines (at most $max)"
[ "$lines" -le "$max" ] || fail "$lines log lines about one flood (at most 10 a minute, then a count)"
tail -n +"$((log0 + 1))" "$QP_T/qpoold.log" | grep -q "await their credential" ||
	fail "the flood's refusals do not name the budget"
qp_wait "$id" completed
qp_wait "$id2" completed
kill -0 "$QP_SERVER_PID" || fail "qpoold died in the flood"
echo "ok"
