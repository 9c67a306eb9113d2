#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Preemption (docs/PREEMPTION.md) on one real 1-CPU node: a scavenger job
# (queue scav, preempt_grace = 3) that traps USR1 and asked for it with
# --signal=USR1@60 holds the CPU; an urgent job (queue urgent, preempts =
# scav) arrives: the scavenger gets USR1, then 3 s later SIGTERM, goes
# back to wait (the same id, its second attempt), the urgent job runs,
# and the scavenger runs again; qpoold restarts under it; it gives way
# once more to a second urgent job, and then finishes, qacct listing its
# attempts, its user not charged for the runs it gave up; two scavengers, one a node, give way to an urgent job across
# both nodes, then to an urgent array of two one-CPU subjobs. Bad
# preemption settings (an unknown queue, a loop) are refused at reload,
# the old config kept.
. "$(dirname "$0")/lib.sh"
qp_setup "[queue scav]
preempt_grace = 3
walltime_max = 01:00:00

[queue urgent]
priority = 10
preempts = scav
walltime_max = 01:00:00"
qp_start_server
qp_start_node p1 0
W=$QP_T/work/qpuser1
cat > "$W/scav.sh" <<'JOB'
#!/bin/bash
#SBATCH -p scav --signal=USR1@60 -t 10:00
log=$LOG
# The traps first: the test sends the urgent job once "start" is written.
trap 'echo "usr1 $(date +%s.%N)" >> "$log"' USR1
trap 'echo "term $(date +%s.%N)" >> "$log"; exit 143' TERM
echo "start $(date +%s.%N)" >> "$log"
if [ "$(grep -c '^start' "$log")" -ge 3 ]; then echo "done" >> "$log"; exit 0; fi
for i in $(seq 6000); do sleep 0.1; done
exit 1
JOB
chmod +x "$W/scav.sh"
log=$W/scav.log

note "a scavenger job holds the node's one CPU"
s=$(as qpuser1 sbatch --parsable --export=ALL,LOG="$log" -o /dev/null "$W/scav.sh") || fail "sbatch scav: $s"
qp_wait "$s" running
qp_wait_file "$log"

note "an urgent job arrives: USR1, 3 s of grace, SIGTERM, the scavenger back to wait"
u=$(as qpuser2 sbatch --parsable -p urgent -o /dev/null --wrap='sleep 1') || fail "sbatch urgent: $u"
qp_wait "$u" running --timeout 60
qp_wait "$u" completed --timeout 60

note "back in its second run, the scavenger gives way again to a second urgent job"
for _ in $(seq 600); do [ "$(grep -c '^start' "$log")" -ge 2 ] && break; sleep 0.1; done
[ "$(grep -c '^start' "$log")" -ge 2 ] || fail "the scavenger did not start again: $(cat "$log")"

note "qpoold restarts while the scavenger runs its second attempt: it still gives way, numbered on"
qp_stop "$QP_SERVER_PID"
qp_start_server
for _ in $(seq 200); do "$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^p1 +up" && break; sleep 0.05; done
"$QP_BIN/qstat" --nodes | grep -qE "^p1 +up" || fail "p1 is not back after the restart: $("$QP_BIN/qstat" --nodes)"
[ "$(qp_state "$s")" = running ] || fail "the scavenger is $(qp_state "$s") after the restart"
[ "$(qp_field "$s" run_count)" = 2 ] || fail "after the restart run_count is $(qp_field "$s" run_count), not 2"
u2=$(as qpuser2 sbatch --parsable -p urgent -o /dev/null --wrap='sleep 1') || fail "sbatch urgent: $u2"
qp_wait "$u2" completed --timeout 60
qp_wait "$s" completed --timeout 60
cat "$log"
python3 - "$log" <<'PY' || fail "the scavenger's log: $(cat "$log")"
import sys
ev = [l.split() for l in open(sys.argv[1])]
kinds = [e[0] for e in ev]
assert kinds == ["start", "usr1", "term", "start", "usr1", "term", "start", "done"], kinds
for k in (1, 4):
    lead = float(ev[k + 1][1]) - float(ev[k][1])
    assert 2.5 <= lead <= 8, lead
PY
[ "$(qp_field "$s" run_count)" = 3 ] || fail "the scavenger run_count is $(qp_field "$s" run_count), not 3 (three runs)"
grep -q "job $s (queue scav): gives way to job $u\b" "$QP_T/qpoold.log" || fail "no preemption in qpoold's log"
grep -q "job $s (queue scav): gives way to job $u2\b" "$QP_T/qpoold.log" || fail "no second preemption in qpoold's log"
# Its two preempted runs (3 s of grace at least each) are not charged to
# its user's share, only the last run (a moment) is: RawUsage in CPU-s.
raw=$("$QP_BIN/sshare" -a -P -n -u qpuser1 | cut -d'|' -f5)
echo "qpuser1's RawUsage after two preempted runs and a short one: $raw"
[[ $raw =~ ^[0-9]+$ ]] && [ "$raw" -le 1 ] || fail "qpuser1 charged for its preempted runs: RawUsage '$raw'"
out=$("$QP_BIN/qacct" -j "$s" --csv) || fail "qacct -j $s"
grep -q '^attempts,3,' <<<"$out" || fail "qacct: not 3 attempts: $(grep '^attempt' <<<"$out")"
for k in 1 2; do
	grep -q "^attempt${k}_reason,.*preempted by job" <<<"$out" ||
		fail "qacct: attempt $k's reason: $(grep "^attempt${k}_reason" <<<"$out")"
done

note "a job across nodes preempts: a scavenger on each of two nodes gives way to an urgent 2-node job"
qp_start_node p2 1
s1=$(as qpuser1 sbatch --parsable -p scav -o /dev/null --wrap='sleep 600') || fail "sbatch scav: $s1"
s2=$(as qpuser1 sbatch --parsable -p scav -o /dev/null --wrap='sleep 600') || fail "sbatch scav: $s2"
qp_wait "$s1" running
qp_wait "$s2" running
[ "$(qp_field "$s1" exec_host)" != "$(qp_field "$s2" exec_host)" ] || fail "both scavengers on one node"
u3=$(echo 'sleep 1' | as qpuser2 qsub -q urgent -l select=2:ncpus=1 -l place=scatter) || fail "qsub urgent: $u3"
qp_wait "$u3" completed --timeout 60
for v in "$s1" "$s2"; do
	grep -q "job $v (queue scav): gives way to job $u3\b" "$QP_T/qpoold.log" || fail "job $v did not give way to $u3"
done

note "an array preempts: its two one-CPU subjobs each take a node from a scavenger, one a round"
qp_wait "$s1" running --timeout 30
qp_wait "$s2" running --timeout 30
a=$(echo 'sleep 1' | as qpuser2 qsub -q urgent -J 1-2 -l select=1:ncpus=1) || fail "qsub -J urgent: $a"
a=${a%%.*}; n=${a%[]}
qp_wait "$a" completed --timeout 60
for i in 1 2; do [ "$(qp_state "${n}[$i]")" = completed ] || fail "subjob $i is $(qp_state "${n}[$i]")"; done
for v in "$s1" "$s2"; do
	grep -q "job $v (queue scav): gives way to job $n\b" "$QP_T/qpoold.log" || fail "job $v did not give way to array $n"
done
"$QP_BIN/qdel" "$s1" "$s2"

note "bad settings refused at reload: an unknown queue, a loop"
cp "$QPOOL_CONF" "$QP_T/good.conf"
sed -i 's/^preempts = scav$/preempts = nosuch/' "$QPOOL_CONF"
out=$("$QP_BIN/qmgr" reload 2>&1) && fail "preempts = nosuch taken"
grep -q "preempts = nosuch: no queue nosuch" <<<"$out" || fail "preempts = nosuch: '$out'"
cp "$QP_T/good.conf" "$QPOOL_CONF"
sed -i 's/^preempt_grace = 3$/preempt_grace = 3\npreempts = urgent/' "$QPOOL_CONF"
out=$("$QP_BIN/qmgr" reload 2>&1) && fail "a preemption loop taken"
grep -q "a preemption loop" <<<"$out" || fail "a loop: '$out'"
cp "$QP_T/good.conf" "$QPOOL_CONF"
echo PASS
