#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bad input gets one clear line on stderr, a non-zero exit, and no job.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
qp_start_node n1

script=$QP_T/ok.sh
echo 'echo ok' > "$script"; chmod 644 "$script"

# expect_refusal PATTERN cmd...: fails unless cmd exits non-zero with one
# stderr line matching PATTERN, and prints nothing on stdout.
expect_refusal() {
	local pat=$1; shift
	local out err rc
	out=$("$@" 2>"$QP_T/err"); rc=$?
	err=$(cat "$QP_T/err")
	[ $rc -ne 0 ] || fail "'$*' succeeded"
	[ -z "$out" ] || fail "'$*' printed '$out' on stdout"
	[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "'$*': stderr is not one line: $err"
	printf '%s\n' "$err" | grep -qE "$pat" || fail "'$*': '$err' does not match '$pat'"
	note "$err"
}

expect_refusal "unknown queue 'nosuch'" as qpuser1 qsub -q nosuch "$script"
expect_refusal "more CPUs than any node has" as qpuser1 qsub -l ncpus=32 "$script"
expect_refusal "above queue batch.s limit" as qpuser1 qsub -l ncpus=512 "$script"
expect_refusal "mem=12Q" as qpuser1 qsub -l mem=12Q "$script"
expect_refusal "walltime=1:99" as qpuser1 qsub -l walltime=1:99 "$script"
expect_refusal "walltime" as qpuser1 qsub -q short -l walltime=01:00:00 "$script"
expect_refusal "cannot read" as qpuser1 qsub "$QP_T/nonexistent.sh"
chmod 600 "$script"
expect_refusal "Permission denied" as qpuser1 qsub "$script"
chmod 644 "$script"
expect_refusal "empty" bash -c "printf '' | runuser -u qpuser1 -- env QPOOL_CONF=$QPOOL_CONF $QP_BIN/qsub"
gone=$QP_T/work/qpuser1/gone
mkdir "$gone"; chown qpuser1 "$gone"
expect_refusal "working directory" runuser -u qpuser1 -- bash -c "cd '$gone' && rmdir '$gone' && QPOOL_CONF=$QPOOL_CONF $QP_BIN/qsub $script"
expect_refusal "usage|invalid|unknown option" as qpuser1 qsub -Z "$script"
expect_refusal "Unknown Job Id 424242." as qpuser1 qstat 424242
expect_refusal "job id|not a job" as qpuser1 qdel banana

n=$("$QP_BIN/qstat" --table -x | grep -cE '^[0-9]+ ')
[ "$n" = 0 ] || fail "refused submissions created $n jobs"

[ -z "$(ls "$QP_T/state/nodes/n1/jobs" 2>/dev/null)" ] || fail "refused submissions left job files"

# A resource qpool does not know is recorded with a warning, not refused.
out=$(as qpuser1 qsub -l bogus=1 "$script" 2>&1 >/dev/null) || fail "-l bogus=1 refused: $out"
grep -q "bogus=1: recorded, not used by qpool" <<<"$out" || fail "-l bogus=1: no warning: $out"

# The server not running: one line, non-zero, nothing created.
qp_stop "$QP_SERVER_PID"
expect_refusal "cannot reach qpoold" as qpuser1 qsub "$script"
expect_refusal "cannot reach qpoold" as qpuser1 qstat
# A broken config file: file:line.
printf '[server]\nstate_dir = %s\nbogus_key = 1\n' "$QP_T/state" > "$QP_T/bad.conf"
expect_refusal "bad.conf:3: bogus_key" "$QP_BIN/qsub" -f "$QP_T/bad.conf" "$script"
expect_refusal "bad.conf:3: bogus_key" "$QP_BIN/qstat" --conf "$QP_T/bad.conf"
echo "bad input ok"
