#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qwait and the commands that wait on the event stream (docs/EVENTS.md):
# qwait prints one line per job as it ends and exits with the last one's
# status; an ended job returns at once; another user's job or none is one
# line and 1; qsub -W block=true and sbatch --wait return as the job ends,
# not at a polling interval's next turn.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
qp_start_node "${QP_NODE_PREFIX}1"
db=$QP_T/state/qpool.db
q() { sqlite3 "$db" "$1" || fail "sqlite3: $1"; }

note "qwait: one line per job as it ends; the last one's exit status"
a=$(as qpuser1 qsub <<< 'sleep 0.3') || fail qsub
b=$(as qpuser1 qsub <<< 'sleep 0.8; exit 3') || fail qsub
out=$(as qpuser1 qwait "$a" "$b"); rc=$?
[ "$(echo "$out" | wc -l)" = 2 ] || fail "qwait printed: $out"
echo "$out" | head -1 | grep -qE "^$a\\.[^ ]+ completed 0$" || fail "qwait's first line: $out"
echo "$out" | tail -1 | grep -qE "^$b\\.[^ ]+ failed 3$" || fail "qwait's second line: $out"
[ "$rc" = 3 ] || fail "qwait exited $rc, job $b's status is 3"
c=$(as qpuser1 qsub <<< 'kill -9 $$') || fail qsub
out=$(as qpuser1 qwait "$c"); rc=$?
[ "$rc" = 137 ] || fail "qwait of a job killed by signal 9 exited $rc: $out"
note "qwait on a job that has ended: at once; on another's job or none: one line, 1"
out=$(as qpuser1 qwait "$a") || fail "qwait of an ended job: $out"
out=$(as qpuser2 qwait "$a" 2>&1) && fail "qpuser2 waited on qpuser1's job: $out"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "not one line: $out"
out=$("$QP_BIN/qwait" 999999 2>&1) && fail "qwait of no job: $out"
note "qwait's ids in any order, one given twice: a line each; one not there is named"
out=$(as qpuser1 qwait "$b" "$a" "$b") || [ $? = 3 ] || fail "qwait $b $a $b: $out"
[ "$(echo "$out" | grep -c "^$b\.")" = 2 ] && [ "$(echo "$out" | grep -c "^$a\.")" = 1 ] ||
	fail "qwait $b $a $b printed: $out"
out=$(as qpuser1 qwait "$b" 999999 "$a" 2>&1) && fail "qwait with no job 999999 among them: $out"
echo "$out" | grep -q "999999: no such job" || fail "qwait did not name the missing job: $out"
note "qwait of more ids than one watch may name: refused in one line before asking"
out=$(as qpuser1 "$QP_BIN/qwait" $(seq 1 4097) 2>&1); rc=$?
[ "$rc" = 2 ] || fail "qwait of 4,097 ids exited $rc: $out"
[ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "at most 4096 at once" || fail "qwait of 4,097 ids said: $out"

note "qsub -W block=true and sbatch --wait return as the job ends"
t0=$(date +%s%N)
as qpuser1 qsub -W block=true <<< 'sleep 2.5' > "$QP_T/blk" 2>&1 || fail "block: $(cat "$QP_T/blk")"
t1=$(date +%s%N)
id=$(q "SELECT max(id) FROM jobs")
done_ns=$(q "SELECT t_done FROM jobs WHERE id = $id")
lag=$(( (t1 - done_ns) / 1000000 ))
# Polling doubled its pause to 640 ms by 2.5 s: a return this close to the
# end is the stream's.
[ "$lag" -lt 400 ] || fail "qsub -W block=true returned ${lag} ms after the job's end"
if [ -x "$QP_BIN/sbatch" ]; then
	as qpuser1 sbatch --wait --wrap 'sleep 2.5' > "$QP_T/sb" 2>&1 \
		|| fail "sbatch --wait: $(cat "$QP_T/sb")"
	t1=$(date +%s%N)
	id=$(q "SELECT max(id) FROM jobs")
	lag=$(( (t1 - $(q "SELECT t_done FROM jobs WHERE id = $id")) / 1000000 ))
	[ "$lag" -lt 400 ] || fail "sbatch --wait returned ${lag} ms after the job's end"
fi
: "$t0"

kill -0 "$QP_SERVER_PID" || fail "qpoold died"
note "ok"
