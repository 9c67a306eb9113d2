#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Start estimates and no starvation (docs/ESTIMATES.md) on one simulated
# node of 2 CPUs, whose jobs run exactly their walltime:
# - two running 1-CPU jobs (8 s, 4 s), a 2-CPU job behind them and a
#   1-CPU 2 s job behind that: squeue --start, %S, qstat -T, qstat -f's
#   estimated.*, scontrol's StartTime and the JSON views show the same
#   estimate; each job starts no later than it said; a held job, N/A;
# - qacct --estimates reports the first and at-start errors;
# - a 2-CPU job behind a stream of another user's 1-CPU 3 s jobs starts
#   with at most one stream job started after it came, within 2 s (the
#   pass's whole seconds) of the end of the last one before it.
. "$(dirname "$0")/lib.sh"
qp_setup "
[server]
estimate_interval = 0"
qp_start_server
"$QP_BIN/qnoded" -f "$QPOOL_CONF" --simulate 1 --name "${QP_NODE_PREFIX}e" \
	--sim-topology "pack:1 numa:1 core:2 pu:1" >> "$QP_T/qnoded-sim.log" 2>&1 &
QP_PIDS+=($!)
node=${QP_NODE_PREFIX}e-0
for i in $(seq 200); do
	"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^$node +up" && break
	sleep 0.05
done
"$QP_BIN/qstat" --nodes | grep -qE "^$node +up" || fail "the simulated node did not come up"

# Through the commands, not the store (t-estimate-pg runs this on
# PostgreSQL): a job's dispatch in wall s (ms: dispatch_ms), and a
# recorded attribute.
dispatch_ns() { "$QP_BIN/qacct" -j "$1" --csv | awk -F, '$1 == "dispatch_wall_ns" {print $2}'; }
dispatch_s() { local t; t=$(dispatch_ns "$1"); echo "${t:0:${#t}-9}"; }
dispatch_ms() { local t; t=$(dispatch_ns "$1"); echo "${t:0:${#t}-6}"; }
# Stamp $2 (submit, exit, ...) of job $1 in wall ms, or "".
stamp_ms() {
	local t
	t=$("$QP_BIN/qacct" -j "$1" --csv | awk -F, -v k="$2_wall_ns" '$1 == k {print $2}')
	[ -n "$t" ] && echo "${t:0:${#t}-6}"
}
attr() { "$QP_BIN/qstat" -x --json "$1" | jq -r --arg k "$2" '.[0].attrs[$k] // empty'; }
# The estimate of job $1 from squeue --start (epoch seconds; "" for N/A).
est_squeue() {
	local t
	t=$("$QP_BIN/squeue" --start -h -o "%i %S" | awk -v j="$1" '$1 == j {print $2}')
	[ -n "$t" ] && [ "$t" != N/A ] && date -d "$t" +%s
}

note "A and B fill the node; C (2 CPUs) and D (1 CPU, 2 s) wait"
a=$(as qpuser1 qsub -l walltime=8 -o /dev/null -e /dev/null <<<true) || fail "qsub a"
b=$(as qpuser1 qsub -l walltime=4 -o /dev/null -e /dev/null <<<true) || fail "qsub b"
qp_wait "$a" running
qp_wait "$b" running
c=$(as qpuser1 qsub -l ncpus=2 -l walltime=3 -o /dev/null -e /dev/null <<<true) || fail "qsub c"
d=$(as qpuser1 qsub -l walltime=2 -o /dev/null -e /dev/null <<<true) || fail "qsub d"
h=$(as qpuser1 qsub -h -l walltime=2 -o /dev/null -e /dev/null <<<true) || fail "qsub h"
for i in $(seq 100); do
	[ -n "$(est_squeue "$c")" ] && [ -n "$(est_squeue "$d")" ] && break
	sleep 0.05
done
ec=$(est_squeue "$c"); ed=$(est_squeue "$d")
da=$(dispatch_s "$a"); db_=$(dispatch_s "$b")
[ -n "$ec" ] && [ -n "$ed" ] || fail "no estimates: $("$QP_BIN/squeue" --start)"
note "$("$QP_BIN/squeue" --start)"
# C needs both CPUs: when A ends; D fits the CPU B leaves, before C.
[ "$ec" -ge $((da + 8)) ] && [ "$ec" -le $((da + 9)) ] || fail "C's estimate $ec, A dispatched at $da (+8 s)"
[ "$ed" -ge $((db_ + 4)) ] && [ "$ed" -lt "$ec" ] || fail "D's estimate $ed, B dispatched at $db_ (+4 s), C at $ec"
"$QP_BIN/squeue" --start | head -1 | grep -qE '^ +JOBID +PARTITION +NAME +USER +ST +START_TIME +NODES +SCHEDNODES +NODELIST\(REASON\)$' \
	|| fail "squeue --start's header: $("$QP_BIN/squeue" --start | head -1)"
"$QP_BIN/squeue" --start -h | awk -v j="$c" '$1 == j' | grep -q " $node " || fail "C's SCHEDNODES: $("$QP_BIN/squeue" --start)"
"$QP_BIN/squeue" --start -h | awk -v j="$h" '$1 == j {print $6}' | grep -qx N/A || fail "a held job has an estimate: $("$QP_BIN/squeue" --start)"
# --start: the soonest first.
# (Judged only when both still wait after it was asked: on a loaded
# machine D may have started by now.)
order=$("$QP_BIN/squeue" --start -h -o %i | head -2 | tr '\n' ' ')
[ "$(qp_state "$d")" != queued ] || [ "$(qp_state "$c")" != queued ] || [ "$order" = "$d $c " ] ||
	fail "squeue --start's order: $order"
"$QP_BIN/squeue" -h -o "%i %S" | grep -qE "^$c [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$" || fail "%S: $("$QP_BIN/squeue" -o "%i %S")"
st=$("$QP_BIN/scontrol" show job "$c" | grep -oE 'StartTime=[^ ]+' | cut -d= -f2)
[ "$(date -d "$st" +%s)" = "$ec" ] || fail "scontrol StartTime=$st, squeue says $ec"
"$QP_BIN/scontrol" show job "$c" | grep -qE "SchedNodeList=$node( |\$)" || fail "scontrol SchedNodeList: $("$QP_BIN/scontrol" show job "$c")"
[ "$("$QP_BIN/squeue" --json -j "$c" | jq -r '.jobs[0].start_time.number // .jobs[0].start_time')" = "$ec" ] \
	|| fail "squeue --json start_time: $("$QP_BIN/squeue" --json -j "$c" | jq -c '.jobs[0].start_time')"
[ "$("$QP_BIN/qstat" --json "$c" | jq -r '.[0].estimated_start // .jobs[0].estimated_start // empty' 2>/dev/null)" = "$ec" ] \
	|| [ "$("$QP_BIN/qstat" --json "$c" | jq -r '.. | .estimated_start? // empty' | head -1)" = "$ec" ] \
	|| fail "qstat --json: no estimated_start $ec"
"$QP_BIN/qstat" -f "$c" | grep -qE '^ +estimated\.start_time = ' || fail "qstat -f: $("$QP_BIN/qstat" -f "$c")"
"$QP_BIN/qstat" -f "$c" | grep -qE "^ +estimated\.exec_vnode = \($node:ncpus=2\)$" || fail "qstat -f exec_vnode: $("$QP_BIN/qstat" -f "$c" | grep estimated)"
"$QP_BIN/qstat" -f "$h" | grep -q 'estimated\.' && fail "a held job has estimated.* in qstat -f"
tt=$("$QP_BIN/qstat" -T)
echo "$tt" | grep -qE '^Job ID .* S Start$' || fail "qstat -T's header: $tt"
# (Each judged only when the jobs it names were still as they were when
# -T was asked, which their states after it tell: on a loaded machine B's
# 4 s may have passed, and D started.)
[ "$(qp_state "$c")" != queued ] ||
	echo "$tt" | grep -E "^$c\." | grep -qE " Q $(date -d "@$ec" +%H:%M)\$" || fail "qstat -T's Est Start of C: $tt"
echo "$tt" | grep -E "^$h\." | grep -qE ' H +--$' || fail "qstat -T of a held job: $tt"
# -T: started jobs, then the soonest estimate first.
[ "$(qp_state "$b")" != running ] || [ "$(qp_state "$d")" != queued ] ||
	[ "$(echo "$tt" | grep -E '^[0-9]+\.' | awk '{print $1}' | cut -d. -f1 | tr '\n' ' ')" = "$a $b $d $c $h " ] ||
	fail "qstat -T's order: $tt"

note "each starts no later than its estimate"
qp_wait "$d" running completed --timeout 15
qp_wait "$c" running completed --timeout 15
[ "$(dispatch_s "$d")" -le "$ed" ] || fail "D started at $(dispatch_s "$d"), estimate $ed"
[ "$(dispatch_s "$c")" -le "$ec" ] || fail "C started at $(dispatch_s "$c"), estimate $ec"
qp_wait "$c" completed --timeout 15
# The first estimate and the one at the start, beside the start.
[ "$(attr "$c" estimated.start_time)" = "$ec" ] || fail "C's record: $("$QP_BIN/qstat" -x --json "$c" | jq -c '.[0].attrs')"
[ -n "$(attr "$c" estimated.first_start_time)" ] || fail "C's record has no first estimate"
"$QP_BIN/qacct" -j "$c" | grep -qE '^start_minus_estimate +-?[0-9]+ +s' || fail "qacct -j: $("$QP_BIN/qacct" -j "$c" | tail -12)"
rep=$("$QP_BIN/qacct" --estimates) || fail "qacct --estimates: $rep"
note "$rep"
# Ends are rounded up to the second: an estimate is at most 1 s late.
echo "$rep" | grep -E '^batch ' | awk '{ exit !($2 == 2 && $6 <= 1 && $7 + 0 == 100) }' \
	|| fail "qacct --estimates: 2 jobs, at-start p90 <= 1 s, 100 % met expected: $rep"
[ "$("$QP_BIN/qacct" --estimates --json | jq -r '.rows[0].jobs // .rows[0][1] // empty' 2>/dev/null)" != "" ] \
	|| "$QP_BIN/qacct" --estimates --json | grep -q '"start_error_p90_s"' \
	|| fail "qacct --estimates --json: $("$QP_BIN/qacct" --estimates --json)"
as qpuser1 qdel "$h" >/dev/null

note "no starvation: a 2-CPU job behind a stream of 1-CPU 3 s jobs"
# Staggered: one job first, the rest 1.5 s later, so one CPU frees
# every ~1.5 s and both are never free at once.
s1=$(as qpuser2 qsub -l walltime=3 -o /dev/null -e /dev/null <<<true) || fail "qsub stream"
qp_wait "$s1" running
sleep 1.5
s=$(as qpuser2 qsub -J 1-12 -l walltime=3 -o /dev/null -e /dev/null <<<true) || fail "qsub stream"
sleep 1.5
w=$(as qpuser1 qsub -l ncpus=2 -l walltime=1 -o /dev/null -e /dev/null <<<true) || fail "qsub wide"
qp_wait "$w" running completed --timeout 30
left=$("$QP_BIN/qstat" -t | grep -c "\[[0-9]*\].* Q ")
[ "$left" -ge 4 ] || fail "the stream was nearly over ($left waiting) when the wide job started: no test of the bound"
# Judged on qpoold's own stamps, not on this machine's pace: once the
# wide job came, at most one stream job starts before it (one whose end
# fits its reservation by the pass's whole seconds), and it starts within
# those seconds (ends rounded up, "now" down: 2 s) of the end of the last
# stream job that started before it. Without reservations a stream job
# takes each CPU that frees, and the wide job waits the whole stream.
w_sub=$(stamp_ms "$w" submit) w_disp=$(dispatch_ms "$w") last_end=0 after=()
for j in "$s1" $(seq -f "${s%%\[*}[%g]" 1 12); do
	d=$(dispatch_ms "$j")
	[ -n "$d" ] && [ "$d" -lt "$w_disp" ] || continue
	[ "$d" -ge "$w_sub" ] && after+=("$j")
	e=$(stamp_ms "$j" exit)
	[ -n "$e" ] || fail "stream job $j has no exit stamp"
	[ "$e" -gt "$last_end" ] && last_end=$e
done
[ ${#after[@]} -le 1 ] || fail "stream jobs ${after[*]} started after the wide job came, before it"
waited=$((w_disp - last_end))
note "the wide job started ${waited} ms after the last stream job before it ended (${#after[@]} started after it came; bounds: 2,000 ms, 1)"
[ "$waited" -le 2000 ] || fail "the wide job started ${waited} ms after the last stream job before it ended; bound 2,000 ms"
note "ok"
