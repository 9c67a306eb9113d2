#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Preemption by suspend (docs/PREEMPTION.md) on one real 1-CPU node: a
# scavenger job (queue scav, preempt_mode = suspend) that ticks holds the
# CPU; an urgent job (preempts = scav) arrives and runs on that CPU while
# the scavenger is frozen (its cgroup FROZEN, squeue S, no tick); a
# qpoold restart (its comment rewritten by an admin while qpoold was
# down) keeps it frozen and its CPU lent; when the urgent job
# ends the scavenger is thawed before anything else starts (a second
# scavenger job waiting behind it does not take the CPU), and finishes in
# its first attempt; then an urgent array of two subjobs freezes a
# scavenger for each subjob and thaws it after each (one attempt); and
# an array's last subjob thaws its victim when it ends while the array's
# first runs on (on a second node), across a restart too. Memory stays
# counted while frozen, so the jobs ask for a little (a 1-CPU node's
# default is all of it).
. "$(dirname "$0")/lib.sh"
qp_setup "[queue scav]
preempt_mode = suspend
walltime_max = 01:00:00

[queue urgent]
priority = 10
preempts = scav
walltime_max = 01:00:00"
qp_start_server
qp_start_node p1 0
W=$QP_T/work/qpuser1 U=$QP_T/work/qpuser2

qp_ticker "$W/scav.sh"
log=$W/scav.log

note "a scavenger job holds the node's one CPU"
s=$(as qpuser1 sbatch --parsable -p scav -t 10 --mem=32M --export=ALL,LOG="$log" -o /dev/null "$W/scav.sh") || fail "sbatch scav: $s"
qp_wait "$s" running
qp_wait_file "$log"
s2=$(as qpuser1 sbatch --parsable -p scav -t 10 --mem=32M -o /dev/null --wrap='true') || fail "sbatch scav 2: $s2"

note "an urgent job arrives: the scavenger is frozen, the urgent job runs on its CPU"
u=$(as qpuser2 sbatch --parsable -p urgent -t 10 --mem=32M -o /dev/null \
	--wrap="date +%s.%N > $U/u.start; for i in \$(seq 600); do [ -e $U/go ] && break; sleep 0.1; done; sleep 1; date +%s.%N > $U/u.end") ||
	fail "sbatch urgent: $u"
qp_wait "$u" running --timeout 30
qp_wait_file "$U/u.start"
st=$(qp_frozen_state "$s")
case "$st" in FROZEN|1) ;; *) fail "the scavenger's group is '$st' while the urgent job runs" ;; esac
[ "$("$QP_BIN/squeue" -h -j "$s" -o %t)" = S ] || fail "squeue: the scavenger is not S"
[ "$(qp_state "$s2")" = queued ] || fail "the second scavenger is $(qp_state "$s2") while the urgent job runs"

note "qpoold restarts: the scavenger stays frozen, its CPU still lent to the urgent job"
qp_stop "$QP_SERVER_PID"
# An admin rewrote its comment meanwhile (the people's text): which job
# it waits for is kept apart (attrs.suspended_by) and read from there.
sql="UPDATE jobs SET reason = 'frozen for the night run, ask ops' WHERE id = ${s%%.*}"
if [ "${QP_STORE:-sqlite}" = postgresql ]; then
	psql -qtAX -v ON_ERROR_STOP=1 "$QP_STORE_DSN" -c "$sql" > /dev/null
else
	sqlite3 "$QP_T/state/qpool.db" "$sql"
fi || fail "cannot rewrite the scavenger's comment"
qp_start_server
for _ in $(seq 200); do "$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^p1 +up" && break; sleep 0.05; done
"$QP_BIN/qstat" --nodes | grep -qE "^p1 +up" || fail "p1 is not back after the restart: $("$QP_BIN/qstat" --nodes)"
[ "$("$QP_BIN/squeue" -h -j "$s" -o %t)" = S ] || fail "squeue: the scavenger is not S after the restart"
[ "$(qp_field "$s" comment)" = "frozen for the night run, ask ops" ] ||
	fail "the admin's comment is '$(qp_field "$s" comment)' after the restart"
[ "$(qp_state "$u")" = running ] || fail "the urgent job is $(qp_state "$u") after the restart"
[ "$(qp_state "$s2")" = queued ] || fail "the second scavenger is $(qp_state "$s2") after the restart"
touch "$U/go"

note "the urgent job ends: the scavenger is thawed and finishes, then the second"
qp_wait "$u" completed --timeout 30
qp_wait "$s" completed --timeout 60
qp_wait "$s2" completed --timeout 30
qp_ticks_outside "$log" "$U/u.start" "$U/u.end" "the urgent job"
[ "$(qp_field "$s" run_count)" = 1 ] || fail "the scavenger ran $(qp_field "$s" run_count) times, not once"
grep -q "job $s: resumed, its preemptor $u has ended" "$QP_T/qpoold.log" || fail "no resume in qpoold's log"
# The second scavenger started only after the first was thawed.
python3 - "$QP_BIN/qstat" "$s" "$s2" <<'PY' || fail "the second scavenger started before the first resumed"
import json, subprocess, sys
out = json.loads(subprocess.check_output([sys.argv[1], "-x", "--json"]))
jobs = out if isinstance(out, list) else out["jobs"]
t = {str(j["jobid"]): j["times"] for j in jobs}
assert t[sys.argv[3]]["dispatch"] > t[sys.argv[2]]["exec"]
PY

note "an urgent array of two subjobs: the scavenger is frozen for each, thawed after each, in one attempt"
s3=$(as qpuser1 sbatch --parsable -p scav -t 10 --mem=32M -o /dev/null --wrap='sleep 600') || fail "sbatch scav 3: $s3"
qp_wait "$s3" running
a=$(echo 'sleep 2' | as qpuser2 qsub -q urgent -J 1-2 -l select=1:ncpus=1:mem=32mb) || fail "qsub -J urgent: $a"
a=${a%%.*}; n=${a%[]}
qp_wait "${n}[1]" running --timeout 30
[ "$("$QP_BIN/squeue" -h -j "$s3" -o %t)" = S ] || fail "squeue: the scavenger is not S while subjob 1 runs"
qp_wait "${n}[2]" running --timeout 30
[ "$("$QP_BIN/squeue" -h -j "$s3" -o %t)" = S ] || fail "squeue: the scavenger is not S while subjob 2 runs"
qp_wait "$a" completed --timeout 30
for i in 1 2; do [ "$(qp_state "${n}[$i]")" = completed ] || fail "subjob $i is $(qp_state "${n}[$i]")"; done
for i in $(seq 100); do [ "$("$QP_BIN/squeue" -h -j "$s3" -o %t)" = R ] && break; sleep 0.1; done
[ "$("$QP_BIN/squeue" -h -j "$s3" -o %t)" = R ] || fail "the scavenger is not thawed after the array"
[ "$(qp_field "$s3" run_count)" = 1 ] || fail "the scavenger ran $(qp_field "$s3" run_count) times, not once"
# After the last subjob the array itself may have ended first.
[ "$(grep -cE "job $s3: resumed, its preemptor $n('s subjob)? has ended" "$QP_T/qpoold.log")" = 2 ] ||
	fail "the scavenger was not resumed once after each subjob"
"$QP_BIN/qdel" "$s3"
qp_wait "$s3" cancelled --timeout 30

note "an array's last subjob takes the scavenger's CPU while its first runs on another node: thawed when that subjob ends"
qp_start_node p2 1
s4=$(as qpuser1 sbatch --parsable -p scav -t 10 --mem=32M -o /dev/null -w p1 --wrap='sleep 600') || fail "sbatch scav 4: $s4"
qp_wait "$s4" running
# Subjob 1 goes to p2, free; subjob 2, the last, takes p1 from the scavenger.
a=$(as qpuser2 qsub -q urgent -J 1-2 -l select=1:ncpus=1:mem=32mb <<JOB
for i in \$(seq 600); do [ -e $U/go\$PBS_ARRAY_INDEX ] && break; sleep 0.1; done
JOB
) || fail "qsub -J urgent: $a"
a=${a%%.*}; n=${a%[]}
qp_wait "${n}[1]" running --timeout 30
qp_wait "${n}[2]" running --timeout 30
[ "$("$QP_BIN/squeue" -h -j "$s4" -o %t)" = S ] || fail "squeue: the scavenger is not S while subjob 2 runs"
# A restart reads the array back as running (its store row): its victim
# still resumes when the subjob that took its room ends. Its store is
# made one written before attrs.suspended_by (the upgrade path): only the
# comment names the preemptor, and it is read.
qp_stop "$QP_SERVER_PID"
if [ "${QP_STORE:-sqlite}" = postgresql ]; then
	old=$(psql -qtAX -v ON_ERROR_STOP=1 "$QP_STORE_DSN" -c "UPDATE jobs SET attrs = (attrs::jsonb - 'suspended_by')::text
		WHERE id = ${s4%%.*} AND reason LIKE 'suspended by preemption (job %)' RETURNING id")
else
	old=$(sqlite3 "$QP_T/state/qpool.db" "UPDATE jobs SET attrs = json_remove(attrs, '$.suspended_by')
		WHERE id = ${s4%%.*} AND reason LIKE 'suspended by preemption (job %)' RETURNING id")
fi
[ "$old" = "${s4%%.*}" ] || fail "cannot make the store an old one: '$old'"
qp_start_server
for _ in $(seq 200); do [ "$("$QP_BIN/qstat" --nodes 2>/dev/null | grep -cE "^p[12] +up")" = 2 ] && break; sleep 0.05; done
[ "$("$QP_BIN/qstat" --nodes | grep -cE "^p[12] +up")" = 2 ] || fail "p1, p2 not back after the restart: $("$QP_BIN/qstat" --nodes)"
touch "$U/go2"
qp_wait "${n}[2]" completed --timeout 60
for i in $(seq 100); do [ "$("$QP_BIN/squeue" -h -j "$s4" -o %t)" = R ] && break; sleep 0.1; done
[ "$("$QP_BIN/squeue" -h -j "$s4" -o %t)" = R ] ||
	fail "the scavenger stays frozen while the array's first subjob runs on: $("$QP_BIN/squeue" -h -j "$s4" -o %t)"
[ "$(qp_state "${n}[1]")" = running ] || fail "subjob 1 is $(qp_state "${n}[1]")"
touch "$U/go1"
qp_wait "$a" completed --timeout 30
"$QP_BIN/qdel" "$s4"
echo PASS
