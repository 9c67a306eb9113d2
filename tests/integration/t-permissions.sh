#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One user cannot qdel, qhold or qrls another's job, nor read its script;
# the owner and root can act on it.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
# No node: jobs stay queued, so hold/release are deterministic.

id=$(echo 'echo secret-$((6*7))' | as qpuser1 qsub -v TOKEN=abc) || fail "qsub"
for cmd in qdel qhold qrls; do
	msg=$(as qpuser2 $cmd "$id" 2>&1) && fail "$cmd by another user succeeded"
	[ "$(echo "$msg" | wc -l)" = 1 ] || fail "$cmd error is not one line: $msg"
	echo "$msg" | grep -q "permission denied" || fail "$cmd error unclear: $msg"
done
[ "$(qp_state "$id")" = queued ] || fail "job changed state after refused commands"
as qpuser2 qstat -f "$id" | grep -q secret && fail "another user sees the script"
as qpuser1 qstat -f "$id" >/dev/null || fail "owner cannot qstat -f"

as qpuser1 qhold "$id" || fail "owner cannot hold"
[ "$(qp_state "$id")" = held ] || fail "not held"
as qpuser1 qrls "$id" || fail "owner cannot release"
[ "$(qp_state "$id")" = queued ] || fail "not released"
msg=$(as qpuser1 qrls "$id" 2>&1) && fail "releasing a queued job succeeded"
echo "$msg" | grep -q "only held jobs" || fail "qrls of a queued job: unclear message: $msg"
"$QP_BIN/qhold" "$id" || fail "root cannot hold"
"$QP_BIN/qdel" "$id" || fail "root cannot delete"
[ "$(qp_state "$id")" = cancelled ] || fail "qdel of a held job did not cancel it"
msg=$(as qpuser1 qdel "$id" 2>&1) && fail "qdel of a finished job succeeded"
echo "$msg" | grep -q "already finished" || fail "unclear: $msg"
msg=$(as qpuser1 qdel 999999 2>&1) && fail "qdel of no job succeeded"
echo "$msg" | grep -q "Unknown Job Id 999999\." || fail "unclear: $msg"
echo "permissions ok"
