#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cgroup v1: a finished job's groups are kept as spares for the next job
# on its node (docs/ARCHITECTURE.md), memory too when the job left little
# charged to it and no OOM kill. The next job takes them with nothing of
# the previous job's counted: its CPU time and its memory peak are its
# own, its memory limit what it asked. A memory group left holding page
# cache, or one that met the OOM killer, is removed. A qnoded restart
# keeps working with them, and none is left once the pool stops (lib.sh
# checks every hierarchy at cleanup).
. "$(dirname "$0")/lib.sh"
[ -d /sys/fs/cgroup/cpuset ] && [ -d /sys/fs/cgroup/memory ] ||
	{ echo "SKIP: no cgroup v1 hierarchies"; exit 77; }
qp_setup
qp_start_server
qp_start_node n1 0
w=$QP_T/work/qpuser1
kept=(cpuset cpuacct memory freezer pids)
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
# Given back after the job: a spare in every kept hierarchy.
for h in "${kept[@]}"; do
	[ -d "$(node_dir "$h")/spare.0" ] || fail "no spare.0 in $h after job $busy: $(ls "$(node_dir "$h")")"
	[ -e "$(node_dir "$h")/job.${busy%%.*}" ] && fail "job ${busy%%.*}'s $h group is still there"
done
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

# Memory: a job limited to 256 MiB that used 100 MiB gives its group
# back with its peak reset and its limits kept, so the next job's peak
# is its own; its limit, none asked, is none.
mem=$QP_T/mem
spare_mem=$(node_dir memory)/spare.0
big=$(as qpuser1 qsub -N big -l mem=256mb -o /dev/null -e /dev/null <<'JOB'
cat /sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)/memory.limit_in_bytes > big.limit
dd if=/dev/zero of=/dev/null bs=100M count=1 status=none
JOB
) || fail "qsub big"
qp_wait "$big" completed
[ "$(cat "$w/big.limit")" = $((256 << 20)) ] || fail "job big's limit: $(cat "$w/big.limit")"
[ -d "$spare_mem" ] || fail "job big's memory group (100 MiB used, freed) was not kept"
unlimited=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)
[ "$(cat "$spare_mem/memory.limit_in_bytes")" = $((256 << 20)) ] ||
	fail "the kept memory group does not keep job big's limit: $(cat "$spare_mem/memory.limit_in_bytes")"
small=$(as qpuser1 qsub -N small -o /dev/null -e /dev/null <<'JOB'
cat /sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)/memory.limit_in_bytes > small.limit
JOB
) || fail "qsub small"
qp_wait "$small" completed
[ "$(cat "$w/small.limit")" = "$unlimited" ] || fail "job small ran under a limit: $(cat "$w/small.limit")"
"$QP_BIN/qacct" --json -j "$big" > "$mem.big" || fail "qacct big"
"$QP_BIN/qacct" --json -j "$small" > "$mem.small" || fail "qacct small"
python3 - "$mem.big" "$mem.small" <<'PY' || fail "the next job's memory peak is not its own"
import json, sys
a, b = (json.load(open(p))["record"] for p in sys.argv[1:3])
print("big: mem_peak %.1f MiB; small, in its kept group: %.1f MiB" % (a["mem_peak"] / 2**20, b["mem_peak"] / 2**20))
assert a["mem_peak"] >= 100 * 2**20, "job big's peak is under the 100 MiB it used"
assert 0 < b["mem_peak"] < 16 * 2**20, "job small's peak holds job big's"
PY
[ -d "$spare_mem" ] || fail "job small's memory group was not kept"
# Limits changed on the kept group, each in the order the kernel takes
# (memory+swap never below memory): none -> 128 MiB -> 192 -> 64, each
# job's limit and memsw its own.
for m in 128 192 64; do
	j=$(as qpuser1 qsub -N "m$m" -l "mem=${m}mb" -o /dev/null -e /dev/null <<'JOB'
g=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
echo "$(cat $g/memory.limit_in_bytes) $(cat $g/memory.memsw.limit_in_bytes 2>/dev/null || cat $g/memory.limit_in_bytes)" > "m$PBS_JOBNAME.limit"
JOB
	) || fail "qsub m$m"
	qp_wait "$j" completed failed
	[ "$(qp_state "$j")" = completed ] || fail "a ${m} MiB job on the kept group: $(qp_field "$j" reason)"
	[ "$(cat "$w/mm$m.limit")" = "$((m << 20)) $((m << 20))" ] || fail "job m$m's limits: $(cat "$w/mm$m.limit")"
	[ -d "$spare_mem" ] || fail "job m$m's memory group was not kept"
done
# Page cache left charged (8 MiB written): removed, the other groups kept.
cache=$(as qpuser1 qsub -N cache -o /dev/null -e /dev/null <<<'dd if=/dev/zero of=cache.dat bs=1M count=8 status=none') ||
	fail "qsub cache"
qp_wait "$cache" completed
[ -e "$spare_mem" ] && fail "a memory group holding 8 MiB of page cache was kept"
[ -d "$(node_dir pids)/spare.0" ] || fail "no pids spare after job cache"
rm -f "$w/cache.dat"
# An OOM kill (its count cannot be reset): removed.
true_job=$(as qpuser1 qsub -N t1 -o /dev/null -e /dev/null <<<'true') || fail "qsub t1"
qp_wait "$true_job" completed
[ -d "$spare_mem" ] || fail "no memory spare after a true job"
# A limit under 16 MiB gets a memory group of its own: what a kept one
# holds may not all be reclaimable under it (the limit's write would
# fail). 4 KiB: it ends "oom", as in a new group, and the kept one waits.
tiny=$(as qpuser1 qsub -N tiny -l mem=4kb -o /dev/null -e /dev/null <<<'true') || fail "qsub tiny"
qp_wait "$tiny" oom failed --timeout 60
[ "$(qp_state "$tiny")" = oom ] || fail "a 4 KiB job ended $(qp_state "$tiny"): $(qp_field "$tiny" reason)"
[ -d "$spare_mem" ] || fail "a 4 KiB job took the kept memory group"
hog=$(as qpuser1 qsub -N hog -l mem=16mb -o /dev/null -e /dev/null <<<'dd if=/dev/zero of=/dev/null bs=64M count=1 status=none') ||
	fail "qsub hog"
qp_wait "$hog" oom --timeout 60
[ -e "$spare_mem" ] && fail "a memory group that met the OOM killer was kept"
echo "memory spares ok"

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
