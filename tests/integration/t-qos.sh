#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# QOS (docs/QOS.md) on a simulated 4-CPU node: sacctmgr add|modify|show
# qos and a user's QOS=; --qos (and qsub -l qos=) refused for a QOS the
# user may not use or that does not exist, in Slurm's words; a QOS's
# MaxTRESPerUser=cpu=2 holds a user's third job with QOSMaxCpuPerUserLimit
# and the count, across a qpoold restart; a QOS of higher Priority starts
# before an older job of the queue's own order (sprio's QOS column); a
# job of a QOS whose Preempt= lists another's takes the node from it (the
# victim back to wait, its second attempt); bad QOS input refused in one
# line, nothing changed.
# QP_STORE=postgresql: the same on PostgreSQL (t-qos-pg.sh).
. "$(dirname "$0")/lib.sh"
qp_setup ""
qp_start_server
qp_start_sim "${QP_NODE_PREFIX}q" 1 --sim-topology "pack:1 numa:1 core:4 pu:1"
SM=$QP_BIN/sacctmgr
# sub USER SECONDS NCPUS [sbatch options]: a simulated job of that run time.
sub() {
	local u=$1 secs=$2 n=$3
	shift 3
	as "$u" sbatch --parsable -c "$n" -t 10 -o /dev/null --export=ALL,QPOOL_SIM_RUNTIME="$secs" "$@" \
		--wrap=true || fail "sbatch as $u $*"
}
note "QOS records: sacctmgr add, show -P in Slurm's layout; a user's QOS list"
"$SM" -i add qos scav PreemptMode=requeue && "$SM" -i add qos high Priority=100 Preempt=scav &&
	"$SM" -i add qos lim MaxTRESPerUser=cpu=2 MaxWall=1:00:00 ||
	fail "sacctmgr add qos"
"$SM" -i modify user qpuser1 set QOS=normal,high,lim,scav DefaultQOS=normal &&
	"$SM" -i modify user qpuser2 set QOS=normal,scav || fail "sacctmgr modify user set QOS="
out=$("$SM" -P show qos format=Name,Priority,Preempt,PreemptMode,MaxTRESPU,MaxWall)
[ "$(head -1 <<<"$out")" = "Name|Priority|Preempt|PreemptMode|MaxTRESPU|MaxWall" ] || fail "show qos header: $out"
grep -qx "high|100|scav|requeue||" <<<"$out" && grep -qx "lim|0||requeue|cpu=2|01:00:00" <<<"$out" &&
	grep -qx "normal|0||requeue||" <<<"$out" || fail "show qos: $out"
[ "$("$SM" -nP show assoc format=user,qos where user=qpuser2 2>/dev/null | sort -u)" = "" ] ||
	true   # (qpuser2 is in no account: no association row)

note "--qos refused for a QOS the user may not use, or none such"
out=$(as qpuser2 sbatch -t 1 --qos=high --wrap=true 2>&1) && fail "qpuser2 --qos=high taken: $out"
grep -q "Invalid qos specification" <<<"$out" || fail "--qos=high as qpuser2: '$out'"
out=$(as qpuser1 sbatch -t 1 --qos=nosuch --wrap=true 2>&1) && fail "--qos=nosuch taken: $out"
grep -q "Invalid qos specification" <<<"$out" || fail "--qos=nosuch: '$out'"
out=$(as qpuser2 qsub -l qos=lim -l walltime=60 <<<true 2>&1) && fail "qsub -l qos=lim as qpuser2 taken: $out"
grep -q "Invalid qos specification" <<<"$out" || fail "qsub -l qos=lim as qpuser2: '$out'"
for cmd in srun salloc; do
	out=$(as qpuser2 "$cmd" -t 1 --qos=high true 2>&1 < /dev/null) && fail "$cmd --qos=high as qpuser2 taken: $out"
	grep -q "Invalid qos specification" <<<"$out" || fail "$cmd --qos=high as qpuser2: '$out'"
done
out=$(as qpuser1 sbatch -t 2:00:00 --qos=lim --wrap=true 2>&1) && fail "MaxWall passed: $out"
grep -q "QOSMaxWallDurationPerJobLimit" <<<"$out" || fail "over MaxWall: '$out'"

note "a QOS's MaxTRESPerUser=cpu=2 holds the user's third 1-CPU job, across a restart"
l1=$(sub qpuser1 600 1 --qos=lim); l2=$(sub qpuser1 600 1 --qos=lim); l3=$(sub qpuser1 600 1 --qos=lim)
qp_wait "$l1" running; qp_wait "$l2" running
qp_wait_reason "$l3" "QOSMaxCpuPerUserLimit: qos lim: the user's jobs hold 2/2 CPUs, the job asks 1"
[ "$("$QP_BIN/squeue" -h -j "$l3" -o "%q %r")" = "lim QOSMaxCpuPerUserLimit" ] ||
	fail "squeue %q %r: $("$QP_BIN/squeue" -h -j "$l3" -o "%q %r")"
"$QP_BIN/scontrol" show job "$l3" | grep -q " QOS=lim" || fail "scontrol show job: no QOS=lim"
[ "$(qp_field "$l3" Resource_List.qos)" = lim ] || fail "qstat -f Resource_List.qos: $(qp_field "$l3" Resource_List.qos)"
d=$(sub qpuser1 0 1)
qp_wait "$d" completed
[ "$("$QP_BIN/squeue" -h -j "$d" -o %q 2>/dev/null || true)" != high ] || fail "the default QOS"
qp_stop "$QP_SERVER_PID"
qp_start_server
qp_sim_up "${QP_NODE_PREFIX}q" 1
qp_wait_reason "$l3" "QOSMaxCpuPerUserLimit: qos lim: the user's jobs hold 2/2 CPUs"
[ "$(qp_state "$l3")" = queued ] || fail "l3 is $(qp_state "$l3") after a restart"
"$SM" -nP show qos format=name,priority | grep -qx "high|100" || fail "qos high lost in the restart"
"$QP_BIN/qdel" "$l1" "$l2" "$l3" > /dev/null
for id in "$l1" "$l2" "$l3"; do qp_wait "$id" completed finished failed cancelled 2>/dev/null || true; done

note "QOS priority first: a later high job starts before an older normal one"
b=$(sub qpuser1 3 4)
qp_wait "$b" running
n=$(sub qpuser2 600 4)
h=$(sub qpuser1 600 4 --qos=high)
out=$("$QP_BIN/sprio" -h)
first=$(awk 'NR == 1 {print $1}' <<<"$out")
[ "$first" = "$h" ] && grep -qE "^ *$h +batch +qpuser1 +[0-9]+ +[0-9]+ +100$" <<<"$out" || fail "sprio: $out"
qp_wait "$h" running --timeout 30
[ "$(qp_state "$n")" = queued ] || fail "the older normal job is $(qp_state "$n"), not queued behind high"
"$QP_BIN/qdel" "$h" "$n" > /dev/null
qp_wait "$h" completed finished failed cancelled 2>/dev/null || true
qp_wait "$n" completed finished failed cancelled 2>/dev/null || true

note "QOS preemption: high (Preempt=scav) takes the node from a scav job, which runs again"
s=$(sub qpuser2 4 4 --qos=scav)
qp_wait "$s" running
u=$(sub qpuser1 1 4 --qos=high)
qp_wait "$u" running --timeout 30
qp_wait "$u" completed --timeout 30
qp_wait "$s" completed --timeout 60
[ "$(qp_field "$s" run_count)" = 2 ] || fail "the scav job's run_count is $(qp_field "$s" run_count), not 2"
grep -q "job $s (queue batch): gives way to job $u" "$QP_T/qpoold.log" || fail "no preemption in qpoold's log"

note "bad input: one line each, nothing changed"
before=$("$SM" -nP show qos)
bad() {
	local want=$1
	shift
	out=$("$@" 2>&1) && fail "taken: $*"
	[ "$(wc -l <<<"$out")" = 1 ] && grep -q "$want" <<<"$out" || fail "$*: '$out'"
}
bad "Invalid Priority value" "$SM" -i add qos neg Priority=-5
bad "Invalid MaxJobsPerUser value" "$SM" -i modify qos lim set MaxJobsPerUser=-3
bad "cannot preempt itself" "$SM" -i modify qos scav set Preempt=scav
bad "loop of preemption" "$SM" -i modify qos scav set Preempt=high
bad "no qos nosuch" "$SM" -i modify qos high set Preempt=nosuch
bad "no qos nosuch" "$SM" -i modify user qpuser2 set QOS=nosuch
bad "PreemptMode" "$SM" -i modify qos scav set PreemptMode=sideways
bad "always exists" "$SM" -i delete qos normal
bad "preempts scav" "$SM" -i delete qos scav
[ "$("$SM" -nP show qos)" = "$before" ] || fail "a refused change changed the QOS: $("$SM" -nP show qos)"
echo PASS
