#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Suspend and resume (docs/PREEMPTION.md) on one real 1-CPU node: a job
# with a 6 s walltime that writes a tick every 0.2 s is suspended with
# scontrol suspend: its cgroup's freezer reads FROZEN (v2: cgroup.events
# frozen 1), its ticks stop, squeue shows S and scontrol SUSPENDED; a
# user may not suspend or resume. It stays frozen past its walltime and
# across a qnoded restart, is resumed, ticks again, and only then runs
# out its walltime (timeout), its time suspended recorded apart. The PBS
# forms (qsig -s suspend / resume, qstat's S) on a second job, which
# stays suspended across a qpoold restart, is resumed and finishes; the
# first job's fair-share use is its time running only.
. "$(dirname "$0")/lib.sh"
qp_setup
# qnoded's restart below must not look like a lost node, even slowed
# down (SANITIZE builds start it in seconds).
sed -i 's/^node_timeout = 5$/node_timeout = 30/' "$QPOOL_CONF"
qp_start_server
qp_start_node p1 0
W=$QP_T/work/qpuser1
mode=$(awk -F' = ' '$1 == "cgroup_mode" {print $2}' "$QPOOL_CONF")

wait_frozen() {  # JOBID WANT
	local i st
	for ((i = 0; i < 200; i++)); do
		st=$(qp_frozen_state "$1")
		case "$2:$st" in yes:FROZEN|yes:1|no:THAWED|no:0) return 0 ;; esac
		sleep 0.05
	done
	fail "job $1: frozen state '$st', wanted $2"
}
# Whether the tick file stays the same for S seconds (a frozen job's does).
ticks_still() {
	local a b i
	a=$(cat "$1")
	for ((i = 0; i < $2 * 10; i++)); do
		sleep 0.1
		b=$(cat "$1")
		[ "$a" = "$b" ] || return 1
	done
	return 0
}
ticks_move() {
	local a i
	a=$(cat "$1")
	for ((i = 0; i < 100; i++)); do
		sleep 0.1
		[ "$(cat "$1")" != "$a" ] && return 0
	done
	return 1
}

cat > "$W/tick.sh" <<'JOB'
#!/bin/bash
id=${PBS_JOBID%%.*}
echo $$ > "$DIR/$id.pid"
while :; do date +%s.%N > "$DIR/$id.tick"; sleep 0.2; done
JOB
chmod +x "$W/tick.sh"

note "a job with a 6 s walltime ticks"
j=$(as qpuser1 qsub -l walltime=6 -v DIR="$W" -o /dev/null -e /dev/null "$W/tick.sh") || fail "qsub: $j"
j=${j%%.*}
qp_wait "$j" running
qp_wait_file "$W/$j.tick"
t0=$(date +%s)

note "a user may not suspend it"
out=$(as qpuser1 scontrol suspend "$j" 2>&1) && fail "qpuser1 suspended job $j: $out"
grep -q "only root may suspend" <<<"$out" || fail "a user's suspend: '$out'"

note "scontrol suspend: frozen, S, SUSPENDED, its ticks stop"
"$QP_BIN/scontrol" suspend "$j" || fail "scontrol suspend $j"
wait_frozen "$j" yes
pid=$(cat "$W/$j.pid")
if [ "$mode" != none ]; then
	grep -q "^State:" "/proc/$pid/status" || fail "no state of the job's pid $pid"
fi
[ "$("$QP_BIN/squeue" -h -j "$j" -o %t)" = S ] || fail "squeue: $("$QP_BIN/squeue" -h -j "$j" -o %t), not S"
"$QP_BIN/scontrol" show job "$j" | grep -q "JobState=SUSPENDED" || fail "scontrol show job: not SUSPENDED"
[ "$(qp_field "$j" job_state)" = S ] || fail "qstat: job_state $(qp_field "$j" job_state), not S"
out=$("$QP_BIN/scontrol" suspend "$j" 2>&1) && fail "suspended twice"
grep -q "already suspended" <<<"$out" || fail "suspend twice: '$out'"

note "past its walltime while frozen: still running, no tick"
ticks_still "$W/$j.tick" 3 || fail "job $j ticked while suspended"

note "qnoded restarts: the job stays frozen"
qp_stop "$(qp_node_pid p1)"
qp_start_node p1 0
wait_frozen "$j" yes
while [ $(($(date +%s) - t0)) -lt 8 ]; do
	ticks_still "$W/$j.tick" 1 || fail "job $j ticked while suspended"
done
[ "$(qp_state "$j")" = running ] || fail "job $j is $(qp_state "$j") after its walltime suspended"

note "a user may not resume it; scontrol resume: it ticks again"
out=$(as qpuser1 scontrol resume "$j" 2>&1) && fail "qpuser1 resumed job $j: $out"
"$QP_BIN/scontrol" resume "$j" || fail "scontrol resume $j"
wait_frozen "$j" no
ticks_move "$W/$j.tick" || fail "job $j does not tick after resume"
[ "$("$QP_BIN/squeue" -h -j "$j" -o %t)" = R ] || fail "squeue after resume: not R"
t1=$(date +%s)

note "its walltime runs out only after 6 s of running"
qp_wait "$j" timeout --timeout 30
t2=$(date +%s)
[ $((t2 - t0)) -ge 11 ] || fail "job $j ended $((t2 - t0)) s after its start (6 s walltime + 8 s suspended)"
[ $((t2 - t1)) -ge 2 ] || fail "job $j ended $((t2 - t1)) s after resume: its clock did not stop"
sus=$("$QP_BIN/qstat" -x --json "$j" | python3 -c '
import json, sys
d = json.load(sys.stdin)
j = d[0] if isinstance(d, list) else d["jobs"][0]
print(int(j["attrs"].get("suspended_ns", 0)) // 10**9)')
[ "$sus" -ge 7 ] || fail "job $j: suspended_ns is $sus s, not about 8"
note "its fair-share use is its time running, not the time suspended"
use=$("$QP_BIN/sshare" -a -P -n -u qpuser1 | cut -d'|' -f5)
echo "qpuser1's use: $use (CPU-seconds; ran ~6 s, suspended ~$sus s)"
awk -v u="$use" 'BEGIN { exit !(u >= 4 && u <= 10) }' || fail "qpuser1's use is $use, not about 6 CPU-seconds"

note "PBS forms: qsig -s suspend / resume, qstat's S"
k=$(as qpuser1 sbatch --parsable -t 1:00 --export=ALL,DIR="$W" -o /dev/null --wrap="
echo \$\$ > $W/k.pid; for i in \$(seq 30); do date +%s.%N > $W/k.tick; sleep 0.1; done") || fail "sbatch: $k"
qp_wait "$k" running
qp_wait_file "$W/k.tick"
out=$(as qpuser1 "$QP_BIN/qsig" -s suspend "$k" 2>&1) && fail "qpuser1 qsig -s suspend: $out"
"$QP_BIN/qsig" -s suspend "$k" || fail "qsig -s suspend $k"
wait_frozen "$k" yes
[ "$("$QP_BIN/qstat" | awk -v id="$k" '$1 ~ "^"id"[.]" {print $5}')" = S ] || fail "qstat: not S: $("$QP_BIN/qstat")"
ticks_still "$W/k.tick" 1 || fail "job $k ticked while suspended"
note "qpoold restarts: the job is still suspended, and resumable"
qp_stop "$QP_SERVER_PID"
qp_start_server
for ((i = 0; i < 200; i++)); do
	"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^p1[[:space:]].*up" && break
	sleep 0.05
done
[ "$("$QP_BIN/squeue" -h -j "$k" -o %t)" = S ] || fail "after a qpoold restart: squeue $("$QP_BIN/squeue" -h -j "$k" -o %t), not S"
wait_frozen "$k" yes
"$QP_BIN/qsig" -s admin-resume "$k" || fail "qsig -s admin-resume $k"
wait_frozen "$k" no
qp_wait "$k" completed --timeout 30
out=$("$QP_BIN/qsig" -s resume "$k" 2>&1) && fail "resumed a finished job"
echo PASS
