#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cgroup v1: a finished job's groups, but memory, are kept as spares for
# the next job on its node (docs/ARCHITECTURE.md). The next job takes
# them with nothing of the previous job's counted: its CPU time is its
# own. Its memory group is its own. A qnoded restart keeps working with
# them, and none is left once the pool stops (lib.sh checks every
# hierarchy at cleanup).
. "$(dirname "$0")/lib.sh"
[ -d /sys/fs/cgroup/cpuset ] && [ -d /sys/fs/cgroup/memory ] ||
	{ echo "SKIP: no cgroup v1 hierarchies"; exit 77; }
qp_setup
qp_start_server
qp_start_node n1 0
w=$QP_T/work/qpuser1
kept=(cpuset cpuacct freezer pids)
node_dir() { echo "/sys/fs/cgroup/$1/$QP_CG_PARENT/n1"; }

# 0.3 s of its own CPU time in bash, no child process: counted in the
# shell's utime + stime (clock ticks of 10 ms), not in wall time, so a
# loaded machine cannot make it burn less.
busy=$(as qpuser1 qsub -N busy -o /dev/null -e /dev/null <<'JOB'
while :; do
	for ((i = 0; i < 20000; i++)); do :; done
	read -ra st < /proc/$$/stat
	[ $((st[13] + st[14])) -ge 30 ] && break
done
JOB
) || fail "qsub busy"
qp_wait "$busy" completed
# Given back after the job: a spare in every kept hierarchy, none in memory.
for h in "${kept[@]}"; do
	[ -d "$(node_dir "$h")/spare.0" ] || fail "no spare.0 in $h after job $busy: $(ls "$(node_dir "$h")")"
	[ -e "$(node_dir "$h")/job.${busy%%.*}" ] && fail "job ${busy%%.*}'s $h group is still there"
done
[ -e "$(node_dir memory)/spare.0" ] && fail "a memory group was kept as a spare"
echo "after job $busy: spare.0 in ${kept[*]}"

# The next job takes them. It stops until it is told to go, so its
# groups can be looked at while it runs.
next=$(as qpuser1 qsub -N next -o next.out -e /dev/null <<JOB
cat /proc/self/cgroup > cgroup.txt
for i in \$(seq 600); do [ -e $w/go ] && break; sleep 0.05; done
JOB
) || fail "qsub next"
n=${next%%.*}
qp_wait_file "$w/cgroup.txt"
for h in "${kept[@]}"; do
	[ -e "$(node_dir "$h")/spare.0" ] && fail "spare.0 in $h not taken by job $n: $(ls "$(node_dir "$h")")"
	[ -d "$(node_dir "$h")/job.$n" ] || fail "job $n has no $h group"
done
grep -q ":memory:/$QP_CG_PARENT/n1/job.$n\$" "$w/cgroup.txt" || fail "job $n's memory group: $(cat "$w/cgroup.txt")"
grep -q ":cpuset:/$QP_CG_PARENT/n1/job.$n\$" "$w/cgroup.txt" || fail "job $n's cpuset group: $(cat "$w/cgroup.txt")"
usage=$(cat "$(node_dir cpuacct)/job.$n/cpuacct.usage")
echo "job $n runs in the kept groups, cpuacct.usage $usage"
touch "$w/go"
qp_wait "$next" completed

"$QP_BIN/qacct" --json -j "$busy" > "$QP_T/busy.json" || fail "qacct busy"
"$QP_BIN/qacct" --json -j "$next" > "$QP_T/next.json" || fail "qacct next"
python3 - "$QP_T/busy.json" "$QP_T/next.json" <<'PY' || fail "the next job's CPU time is not its own"
import json, sys
a, b = (json.load(open(p))["record"] for p in sys.argv[1:3])
print("busy: cpu %.1f ms; next: cpu %.1f ms, mem_peak %s" % (a["cpu_ns"] / 1e6, b["cpu_ns"] / 1e6, b["mem_peak"]))
assert a["cpu_ns"] >= 200e6, "the busy job burnt less than 200 ms"
assert 0 < b["cpu_ns"] < 150e6, "the next job's cpu_ns holds the busy job's"
PY

# A restarted qnoded finds the spares and keeps going: a job after it
# runs, its groups are given back, and the node's stop removes them.
qp_stop "$(qp_node_pid n1)"
for h in "${kept[@]}"; do
	[ -e "$(node_dir "$h")" ] && fail "qnoded stopped and left its $h groups: $(ls "$(node_dir "$h")")"
done
qp_start_node n1 0
after=$(as qpuser1 qsub -N after -o /dev/null -e /dev/null <<<'true') || fail "qsub after"
qp_wait "$after" completed
for h in "${kept[@]}"; do
	[ -d "$(node_dir "$h")/spare.0" ] || fail "no spare.0 in $h after a restart"
done
echo "spares ok"
