#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Memory counted on every node (docs/ARCHITECTURE.md, "Memory counted"),
# with a real qnoded and real cgroups: the node offers its jobs MemTotal
# less mem_reserve (not the NUMA nodes' share when they hold less, as on
# a VM with hot-plugged memory); two jobs whose memory adds past that
# offer do not run at once: the second waits with a reason naming memory
# and the node, also across a qpoold restart, and starts when the first
# ends; a job that asks for no memory gets mem_per_cpu_default (a queue's
# size, the server's auto) as its counted memory and its memory cgroup's
# limit; a queue's written mem_default = 0 keeps it uncounted.
. "$(dirname "$0")/lib.sh"
[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no memory controller"
qp_setup "[queue per]
mem_per_cpu_default = 300M

[queue auto]"
note "store: $(sed -n 's/^store = //p' "$QPOOL_CONF" | tail -n 1)"
qp_start_server
qp_start_node n1
w=$QP_T/work/qpuser1

node_field() {
	"$QP_BIN/qstat" --nodes --json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["nodes"]:
    if n["name"] == sys.argv[1]:
        v = n
        for k in sys.argv[2].split("."):
            v = v.get(k, "") if isinstance(v, dict) else ""
        print(v)
' "$1" "$2"
}

# The offer: MemTotal less the 512M reserve (the node's group limit).
offer=$(node_field n1 topology.mem)
total=$(awk '/^MemTotal:/ { print $2 * 1024 }' /proc/meminfo)
note "n1 offers $((offer >> 20)) MiB; MemTotal $((total >> 20)) MiB"
[ "$offer" = $((total - 512 * 1024 * 1024)) ] ||
	fail "n1 offers $offer bytes, not MemTotal $total less the 512M reserve"
[ "$(node_field n1 mem_free)" = "$offer" ] || fail "an idle n1 has $(node_field n1 mem_free) free of $offer"
ncpus=$(node_field n1 ncpus)

# A job that reports its memory cgroup's limit, then waits (bounded) for
# $w/release.TAG.
job() {
	cat <<JOB
p=\$(awk -F: '\$2 == "memory" || \$2 == "" { print \$3; exit }' /proc/self/cgroup)
cat /sys/fs/cgroup/memory\$p/memory.limit_in_bytes /sys/fs/cgroup\$p/memory.max 2>/dev/null | head -n 1 > $w/limit.$1.tmp
mv $w/limit.$1.tmp $w/limit.$1
for i in \$(seq 1200); do [ -e $w/release.$1 ] && exit 0; sleep 0.1; done
JOB
}

# Two jobs of 60% of the offer each (in MiB, as a user writes it).
big=$(( (offer >> 20) * 6 / 10 ))mb
a=$(job a | as qpuser1 qsub -l ncpus=1,mem="$big") || fail "qsub a"
qp_wait "$a" running
b=$(job b | as qpuser1 qsub -l ncpus=1,mem="$big") || fail "qsub b"
for _ in $(seq 100); do
	qp_field "$b" comment | grep -q "waits for memory" && break
	sleep 0.1
done
why=$(qp_field "$b" comment)
note "b: $(qp_state "$b"): $why"
[ "$(qp_state "$b")" = queued ] || fail "b is $(qp_state "$b") while a holds 60% of n1's memory"
echo "$why" | grep -q "waits for memory: $(( (offer >> 20) * 6 / 10 )) MiB on a node; n1 has" ||
	fail "b's reason does not name memory and n1: '$why'"
"$QP_BIN/qstat" -Q --order batch | grep -q "waits for memory" || fail "qstat -Q --order does not say b waits for memory"
assigned=$("$QP_BIN/pbsnodes" -a | awk -F' = ' '/resources_assigned.mem/ { print $2; exit }')
[ "$assigned" = "$(( (offer >> 20) * 6 / 10 * 1024 ))kb" ] || fail "pbsnodes resources_assigned.mem is '$assigned'"

note "Slurm's views of it: sinfo %m %e and AllocMem, scontrol's AllocMem and FreeMem"
held=$(( (offer >> 20) * 6 / 10 ))
[ "$("$QP_BIN/sinfo" -h -N -n n1 -o '%m %e' | head -n 1)" = "$((offer >> 20)) $(( (offer >> 20) - held ))" ] ||
	fail "sinfo -o '%m %e': $("$QP_BIN/sinfo" -h -N -n n1 -o '%m %e')"
[ "$("$QP_BIN/sinfo" -h -N -n n1 -O AllocMem | head -n 1 | tr -d ' ')" = "$held" ] ||
	fail "sinfo -O AllocMem: $("$QP_BIN/sinfo" -h -N -n n1 -O AllocMem)"
"$QP_BIN/scontrol" show node n1 | grep -qE "AllocMem=$held FreeMem=$(( (offer >> 20) - held ))( |$)" ||
	fail "scontrol show node: $("$QP_BIN/scontrol" show node n1)"

note "qpoold restarted: a's memory is still held, b still waits"
qp_stop "$QP_SERVER_PID"
qp_start_server
for _ in $(seq 1200); do [ "$(node_field n1 state)" = up ] && break; sleep 0.1; done
[ "$(node_field n1 state)" = up ] || fail "n1 did not come back to the restarted qpoold"
[ "$(node_field n1 mem_assigned)" = $(( (offer >> 20) * 6 / 10 << 20 )) ] ||
	fail "after a restart n1 has $(node_field n1 mem_assigned) assigned"
[ "$(qp_state "$b")" = queued ] || fail "after a restart b is $(qp_state "$b") beside a"

touch "$w/release.a"
qp_wait "$a" completed
qp_wait "$b" running
note "a ended: b runs"
qp_wait_file "$w/limit.b"
[ "$(cat "$w/limit.b")" = $(( (offer >> 20) * 6 / 10 << 20 )) ] || fail "b's limit is $(cat "$w/limit.b")"
touch "$w/release.b"
qp_wait "$b" completed

note "no mem asked: mem_per_cpu_default"
c=$(job c | as qpuser1 qsub -q per -l ncpus=1) || fail "qsub c"
qp_wait "$c" running
qp_wait_file "$w/limit.c"
[ "$(cat "$w/limit.c")" = $((300 << 20)) ] || fail "queue per's job has a limit of $(cat "$w/limit.c"), not 300M"
[ "$(node_field n1 mem_assigned)" = $((300 << 20)) ] || fail "c counts $(node_field n1 mem_assigned), not 300M"
note "sbatch --mem=0: a whole node's memory, so it waits while c holds 300M, then holds all of it"
f=$( (echo '#!/bin/sh'; job f) | as qpuser1 "$QP_BIN/sbatch" --parsable --mem=0 -n 1 2>"$QP_T/f.err") ||
	fail "sbatch --mem=0: $(cat "$QP_T/f.err")"
! grep -q "mem=0" "$QP_T/f.err" || fail "sbatch warns of --mem=0: $(cat "$QP_T/f.err")"
for _ in $(seq 100); do
	qp_field "$f" comment | grep -q "waits for memory" && break
	sleep 0.1
done
[ "$(qp_state "$f")" = queued ] || fail "the --mem=0 job is $(qp_state "$f") beside c's 300M"
qp_field "$f" comment | grep -qE "waits for memory: ($((offer >> 20))|$(((offer >> 20) + 1))) MiB on a node; n1 has" ||
	fail "the --mem=0 job's reason: '$(qp_field "$f" comment)'"
touch "$w/release.c"
qp_wait "$c" completed
qp_wait "$f" running
qp_wait_file "$w/limit.f"
[ "$(node_field n1 mem_assigned)" = "$offer" ] || fail "the --mem=0 job counts $(node_field n1 mem_assigned), not $offer"
[ $(( $(cat "$w/limit.f") / 4096 )) = $((offer / 4096)) ] || fail "the --mem=0 job's limit is $(cat "$w/limit.f"), not $offer"
touch "$w/release.f"
qp_wait "$f" completed
d=$(job d | as qpuser1 qsub -q auto -l ncpus=1) || fail "qsub d"
qp_wait "$d" running
qp_wait_file "$w/limit.d"
per=$((offer / ncpus))
note "auto: $((per >> 20)) MiB per CPU ($ncpus CPUs); d's limit $(cat "$w/limit.d")"
# The cgroup rounds a v1 limit down to whole pages.
[ $(( $(cat "$w/limit.d") / 4096 )) = $((per / 4096)) ] || fail "queue auto's job has a limit of $(cat "$w/limit.d"), not $per"
touch "$w/release.d"
qp_wait "$d" completed

note "queue batch's mem_default = 0: not counted, no limit"
e=$(job e | as qpuser1 qsub -l ncpus=1) || fail "qsub e"
qp_wait "$e" running
qp_wait_file "$w/limit.e"
[ "$(node_field n1 mem_assigned)" = 0 ] || fail "batch's job counts $(node_field n1 mem_assigned)"
touch "$w/release.e"
qp_wait "$e" completed

note "Torque's pmem: per process, ppn of them: counted and the limit"
g=$(job g | as qpuser1 qsub -l nodes=1:ppn=2 -l pmem=150mb 2>"$QP_T/g.err") || fail "qsub pmem: $(cat "$QP_T/g.err")"
! grep -q "pmem" "$QP_T/g.err" || fail "qsub warns of pmem: $(cat "$QP_T/g.err")"
qp_wait "$g" running
qp_wait_file "$w/limit.g"
[ "$(node_field n1 mem_assigned)" = $((300 << 20)) ] || fail "pmem=150mb x 2 counts $(node_field n1 mem_assigned), not 300M"
[ "$(cat "$w/limit.g")" = $((300 << 20)) ] || fail "pmem=150mb x 2: the limit is $(cat "$w/limit.g"), not 300M"
touch "$w/release.g"
qp_wait "$g" completed
echo PASS
