#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A QOS's PreemptMode=suspend (docs/QOS.md) on one real 1-CPU node: a job
# of QOS scav (PreemptMode=suspend), in a queue of the default
# preempt_mode (requeue), ticks on the CPU; a job of QOS high
# (Preempt=scav) arrives and runs on that CPU while the scav job is frozen
# (its cgroup FROZEN, squeue S, no tick); when it ends the scav job is
# thawed and finishes in its first attempt. sacctmgr shows the mode.
. "$(dirname "$0")/lib.sh"
qp_setup ""
qp_start_server
qp_start_node p1 0
W=$QP_T/work/qpuser1 U=$QP_T/work/qpuser2
SM=$QP_BIN/sacctmgr

note "QOS scav of PreemptMode=suspend, QOS high that preempts it"
"$SM" -i add qos scav PreemptMode=suspend && "$SM" -i add qos high Priority=100 Preempt=scav ||
	fail "sacctmgr add qos"
"$SM" -i modify user qpuser1 set QOS=normal,scav && "$SM" -i modify user qpuser2 set QOS=normal,high ||
	fail "sacctmgr modify user set QOS="
out=$("$SM" -nP show qos format=Name,PreemptMode)
grep -qx "scav|suspend" <<<"$out" || fail "show qos: $out"
"$SM" -i modify qos high set PreemptMode=Suspend && grep -qx "high|suspend" <<<"$("$SM" -nP show qos format=Name,PreemptMode)" &&
	"$SM" -i modify qos high set PreemptMode=requeue || fail "modify qos PreemptMode=Suspend"

qp_ticker "$W/scav.sh"
log=$W/scav.log

note "a scav job holds the node's one CPU"
s=$(as qpuser1 sbatch --parsable --qos=scav -t 10 --mem=32M --export=ALL,LOG="$log" -o /dev/null "$W/scav.sh") ||
	fail "sbatch scav: $s"
qp_wait "$s" running
qp_wait_file "$log"

note "a high job arrives: the scav job is frozen, the high job runs on its CPU"
u=$(as qpuser2 sbatch --parsable --qos=high -t 10 --mem=32M -o /dev/null \
	--wrap="date +%s.%N > $U/u.start; sleep 3; date +%s.%N > $U/u.end") || fail "sbatch high: $u"
qp_wait "$u" running --timeout 30
qp_wait_file "$U/u.start"
st=$(qp_frozen_state "$s")
case "$st" in FROZEN|1) ;; *) fail "the scav job's group is '$st' while the high job runs" ;; esac
[ "$("$QP_BIN/squeue" -h -j "$s" -o %t)" = S ] || fail "squeue: the scav job is not S"

note "the high job ends: the scav job is thawed and finishes in its first attempt"
qp_wait "$u" completed --timeout 30
qp_wait "$s" completed --timeout 60
qp_ticks_outside "$log" "$U/u.start" "$U/u.end" "the high job"
[ "$(qp_field "$s" run_count)" = 1 ] || fail "the scav job ran $(qp_field "$s" run_count) times, not once"
grep -q "job $s: resumed, its preemptor $u has ended" "$QP_T/qpoold.log" || fail "no resume in qpoold's log"
echo PASS
