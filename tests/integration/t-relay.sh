#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A relay between servers acts as nobody. While server A of `server =
# A,B` is down, a local user binds A's port and passes every connection,
# frame by frame, to B (relay.py): before the credentials named the
# server's end of the connection, both proofs passed through it, it read
# another user's `qstat -f` with their -v secret, sent requests of its own
# on the authenticated connection (as that user, and as root on root's)
# and, in a rolling restart, had a node register with B through it and
# obey its job.launch as root. Now B refuses each relayed credential
# ("relayed?"), the commands go on to B directly and work, the node
# registers with B directly, and the relay reads nothing and gets nothing
# done (docs/SECURITY.md, "The server pair").
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/servers.sh"
command -v setpriv >/dev/null || skip "setpriv is not installed (util-linux)"
H=$(cd "$(dirname "$0")" && pwd)
qp_setup
qp_munged_start a
qp_servers_setup 2
B=127.0.0.1:$QP_SERVER_PORT_2
REL=$QP_T/rel
mkdir -p "$REL" && chown qpuser1: "$REL"
LOG=$REL/frames
MARKER=$REL/pwned

# What the relay may never get: a secret read, a request of its own
# answered or obeyed, a job.launch run.
relay_got_nothing() {
	! grep -q "$SECRET" "$LOG" || fail "the relay read the secret: $(grep -c "$SECRET" "$LOG") frames"
	! grep -q '^act ' "$LOG" || fail "the relay acted on an authenticated connection: $(grep '^act ' "$LOG")"
	! grep -q '^down .*"id": 70' "$LOG" || fail "qpoold answered the relay's own requests: $(grep '^down .*"id": 70' "$LOG" | cut -c 1-200)"
	[ ! -e "$MARKER" ] || fail "a node ran the relay's job.launch: $(cat "$MARKER")"
}

wait_for() {
	local what=$1 i; shift
	for i in $(seq 1200); do "$@" && return 0; sleep 0.05; done
	fail "$what: not after 60 s"
}

note "B alone is active; a user's job waits held with a secret in its -v"
qp_server_start 2
SECRET=relay-secret-$$
HELD=$(QPOOL_SERVER=$B as qpuser2 qsub -h -v "SECRET=$SECRET" <<<'true') || fail "qsub -h"
[ "$(QPOOL_SERVER=$B qp_state "$HELD")" = held ] || fail "job $HELD is not held"

note "qpuser1 holds A's port and relays it to B"
setpriv --reuid=qpuser1 --regid="$(id -g qpuser1)" --init-groups \
	/usr/bin/python3 "$H/relay.py" "$QP_SERVER_PORT_1" "$QP_SERVER_PORT_2" "$LOG" "$REL/ready" "$HELD" "$MARKER" &
QP_PIDS+=("$!")
wait_for "the relay listening" test -s "$REL/ready"

note "the owner's qstat -f, with A first in the list: through the relay it is refused, then B answers"
out=$(as qpuser2 qstat -f "$HELD" 2>&1) || fail "qstat -f through the list: $out"
echo "$out" | grep -q "SECRET=$SECRET" || fail "qstat -f lost the job's own -v: $out"
wait_for "the relay passing qstat's credential" grep -q '^up .*"op": "auth"' "$LOG"
relay_got_nothing
grep -q "refused: credential made for a connection to 127.0.0.1:$QP_SERVER_PORT_1, not $B (relayed?)" \
	"$QP_T/qpoold-2.log" || fail "B did not refuse the relayed credential: $(grep refused "$QP_T/qpoold-2.log")"
note "root's commands, the same"
"$QP_BIN/qstat" -Q > "$QP_T/q.out" 2>&1 || fail "root's qstat -Q through the list: $(cat "$QP_T/q.out")"
"$QP_BIN/qstat" -f "$HELD" > /dev/null 2>&1 || fail "root's qstat -f through the list"
relay_got_nothing

note "a rolling restart: B stopped, the node's race meets the relay, which holds it until B is back"
qp_start_node n1 0
NLOG=$QP_T/qnoded-n1.log
count_gt() { [ "$(grep -c -- "$2" "$3" 2>/dev/null)" -gt "$1" ]; }
regs0=$(grep -c "registered with qpoold" "$NLOG")
conns0=$(grep -c '^conn ' "$LOG")
qp_stop "$QP_SERVER_PID_2"
wait_for "the node dialling the relay" count_gt "$conns0" '^conn ' "$LOG"
qp_server_start 2
wait_for "qnoded registered again" count_gt "$regs0" "registered with qpoold" "$NLOG"
grep "registered with qpoold" "$NLOG" | tail -n 1
grep -q "relayed?" "$NLOG" || fail "the node's credential did not reach B through the relay: $(tail -n 5 "$NLOG")"
grep "relayed?" "$NLOG" | head -n 1
"$QP_BIN/qstat" --nodes | grep -qE "^n1[[:space:]].*up" || fail "n1 is not up at B"

note "what the relay got: nothing"
cut -c 1-160 "$LOG"
relay_got_nothing
! grep -q "job 9999" "$NLOG" || fail "the node took the relay's job.launch"
[ "$(qp_state "$HELD")" = held ] || fail "the relay released job $HELD: $(qp_state "$HELD")"
"$QP_BIN/qstat" -Q > "$QP_T/q.out" 2>&1 || fail "qstat -Q"
! grep -q relayed "$QP_T/q.out" || fail "the relay disabled a queue as root: $(cat "$QP_T/q.out")"
echo ok
