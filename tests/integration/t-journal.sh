#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Under systemd (JOURNAL_STREAM names qpoold's stderr) qpoold logs to the
# journal with fields: journalctl QPOOL_JOB_ID=N finds a job's lines.
# Needs a reachable journald; the selection itself is unit-tested (test_log).
. "$(dirname "$0")/lib.sh"
[ -S /run/systemd/journal/socket ] || skip "journald not reachable (no /run/systemd/journal/socket): unit test only"
command -v journalctl > /dev/null || skip "no journalctl"
qp_setup

# The stream systemd would have given qpoold: a file whose dev:inode the
# variable names. Nothing may land in it while the journal takes the lines.
: > "$QP_T/stream"
JOURNAL_STREAM=$(stat -c '%d:%i' "$QP_T/stream")
export JOURNAL_STREAM
"$QP_BIN/qpoold" -f "$QPOOL_CONF" 2>> "$QP_T/stream" &
pid=$!
QP_PIDS+=("$pid")
unset JOURNAL_STREAM
for _ in $(seq 100); do
	[ -S "$QP_T/qpoold.sock" ] && "$QP_BIN/qstat" > /dev/null 2>&1 && break
	kill -0 $pid 2>/dev/null || fail "qpoold died at start"
	sleep 0.05
done
echo 'true' > "$QP_T/j.sh"; chmod 644 "$QP_T/j.sh"
id=$(as qpuser1 qsub -h "$QP_T/j.sh") || fail "qsub"
"$QP_BIN/qdel" "$id" || fail "qdel $id"
found=
for _ in $(seq 100); do
	journalctl -q -o verbose _PID=$pid QPOOL_JOB_ID="$id" 2>/dev/null | grep -q "MESSAGE=job $id cancelled" &&
		{ found=1; break; }
	sleep 0.1
done
[ -n "$found" ] || fail "journalctl QPOOL_JOB_ID=$id _PID=$pid shows no 'job $id cancelled'"
journalctl -q -o verbose _PID=$pid QPOOL_JOB_ID="$id" | grep -q "PRIORITY=6" || fail "no PRIORITY=6 on the line"
[ ! -s "$QP_T/stream" ] || fail "qpoold wrote to stderr too: $(head -n 3 "$QP_T/stream")"
note "job $id's cancellation is in the journal with QPOOL_JOB_ID=$id"
