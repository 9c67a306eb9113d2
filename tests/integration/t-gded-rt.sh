#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A job of a realtime queue runs SCHED_FIFO at the queue's priority, all
# its threads included (no reset on fork); a job of a normal queue does not.
# By hand, --rt rr:5 gives SCHED_RR.
# qp-test: serial
# (alone: on cgroup v1 the host's RT runtime goes to the first pools set
# up, every test pool takes its share, and realtime needs one left.)
. "$(dirname "$0")/lib.sh"
[ "$(cat /proc/sys/kernel/sched_rt_runtime_us)" != -1 ] || skip "kernel RT throttling is off: qpool refuses realtime"
command -v python3 >/dev/null || skip "python3 missing (the job's two threads)"
command -v chrt >/dev/null || skip "chrt missing"
qp_setup "[queue rt1]
ncpus = 1
reserve = realtime
rt_priority = 10"
qp_start_server
qp_start_node "${QP_NODE_PREFIX}n1"  # own name: other pools on this host may run an n1
# Another suite's pools on this host may hold all of v1's RT runtime.
why=$(sed -n -e 's/.*realtime jobs: no: //p' -e 's/.* info: node .*, rt no: //p' "$QP_T/qnoded-${QP_NODE_PREFIX}n1.log" | head -n 1)
[ -z "$why" ] || skip "no realtime on this host now: $why"
"$QP_BIN/qstat" --nodes | grep -E "^${QP_NODE_PREFIX}n1 " | grep -q . || fail "node n1 not listed"

# The job starts a 2-thread process and reports each thread's policy once
# both run (python3 takes seconds to start in a TCG guest: waited for, up
# to 60 s), then ends it.
cat > "$QP_T/rt.sh" <<'JOB'
python3 -c 'import threading, time
t = threading.Thread(target=time.sleep, args=(120,), daemon=True); t.start(); time.sleep(120)' &
pid=$!
for i in $(seq 600); do
	[ "$(ls /proc/$pid/task 2>/dev/null | wc -l)" -ge 2 ] && break
	sleep 0.1
done
echo "threads $(ls /proc/$pid/task | wc -l)"
for t in /proc/$pid/task/*; do
	echo "task ${t##*/} $(awk -F': *' '$1 ~ /^policy/ {p=$2} $1 ~ /^prio/ {q=$2} END {print p, q}' $t/sched)"
	chrt -p "${t##*/}" | tr '\n' ' '; echo
done
kill $pid
wait
JOB
chmod 644 "$QP_T/rt.sh"
rt=$(as qpuser1 qsub -q rt1 -N rt "$QP_T/rt.sh") || fail "qsub -q rt1"
normal=$(as qpuser1 qsub -N normal "$QP_T/rt.sh") || fail "qsub"
qp_wait "$rt" completed --timeout 120
qp_wait "$normal" completed --timeout 120
out=$QP_T/work/qpuser1/rt.o$rt
qp_wait_file "$out"
cat "$out"
grep -qx "threads 2" "$out" || fail "the realtime job's process does not have 2 threads"
[ "$(grep -c "policy: SCHED_FIFO" "$out")" = 2 ] || fail "not every thread of the realtime job is SCHED_FIFO"
[ "$(grep -c "priority: 10" "$out")" = 2 ] || fail "the realtime job's threads are not at priority 10"
# /proc/PID/task/*/sched: policy 1 = SCHED_FIFO, kernel prio 99-10 = 89.
[ "$(grep -cE "^task [0-9]+ 1 89$" "$out")" = 2 ] || fail "/proc sched does not show policy 1 prio 89 for both threads"
grep -q "SCHED_FIFO" "$QP_T/work/qpuser1/normal.o$normal" && fail "a normal queue's job ran SCHED_FIFO"
grep -q "policy: SCHED_OTHER" "$QP_T/work/qpuser1/normal.o$normal" || fail "the normal job's policy is not SCHED_OTHER"

# By hand: SCHED_RR, and the node's realtime group is shared, not left.
# On v1 its group (qpool/.rt) gets what RT runtime the pools leave: this
# test's own leaves some, another suite's pools on this host may not.
v1rt=/sys/fs/cgroup/cpu
if [ -f "$v1rt/cpu.rt_runtime_us" ] && [ ! -d "$v1rt/qpool" ]; then
	held=0
	for g in "$v1rt"/*/cpu.rt_runtime_us; do held=$((held + $(cat "$g"))); done
	[ "$held" -lt "$(cat "$v1rt/cpu.rt_runtime_us")" ] ||
		skip "other pools on this host hold all of v1's RT runtime ($held us/s): none left for gded by hand"
fi
out=$("$QP_BIN/gded" --cpus 1 --rt rr:5 -- sh -c 'chrt -p $$') || fail "gded --rt rr:5 exited $?"
echo "$out"
echo "$out" | grep -q "policy: SCHED_RR" || fail "gded --rt rr:5 did not run SCHED_RR"
echo "$out" | grep -q "priority: 5" || fail "gded --rt rr:5 did not run at priority 5"
"$QP_BIN/gded" --cpus 1 --rt fifo:100 -- true 2>/dev/null && fail "priority 100 accepted"

# Two by hand side by side: one's end never removes the shared groups
# (qpool/manual, qpool/.rt) under the other's start (before the lock, 12
# of 30 such rounds failed here).
note "gded --rt by hand beside other commands by hand, 15 rounds"
for i in $(seq 15); do
	( for j in 1 2 3; do "$QP_BIN/gded" --cpus 1 -- true || echo "beside: exit $?"; done ) > "$QP_T/beside" 2>&1 &
	out=$("$QP_BIN/gded" --cpus 0 --rt rr:5 -- true 2>&1) || fail "round $i: gded --rt rr:5 exited $?: $out"
	wait $!
	[ -s "$QP_T/beside" ] && fail "round $i: the command beside failed: $(cat "$QP_T/beside")"
done
echo "rt ok"
