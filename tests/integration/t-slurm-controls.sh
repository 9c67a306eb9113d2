#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What public #SBATCH scripts and their users found wrong in Slurm's views
# and controls (issue 33): sacct --format NTasks,AveRSS,AveCPU; scontrol
# show job's NumNodes, NumTasks, CPUs/Task, MinMemoryNode and
# Dependency=singleton(unfulfilled); squeue's Resources for the first job
# waiting for CPUs and Priority behind it; scontrol update StartTime= in
# Slurm's time forms; scontrol requeue counted in Restarts (qstat -f's
# run_count), and a begin time set before or after the requeue honoured
# (PBS's qalter -a too); sacct's CANCELLED by UID and CANCELLED+; output
# that could not go where asked: the views say where it went.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
n1=${QP_NODE_PREFIX}n1 n2=${QP_NODE_PREFIX}n2   # unique: other pools may run beside this one
# Two CPUs each (other pools may share them: cpusets may overlap).
qp_start_node "$n1" 0-1
qp_start_node "$n2" 0-1
export PATH=$QP_BIN:$PATH
# Output kept in a user's HOME (undelivered): removed whatever happens.
QP_KEPT=()
kept_remove() { [ ${#QP_KEPT[@]} -eq 0 ] || rm -f "${QP_KEPT[@]}"; }
QP_ATEXIT+=(kept_remove)

# refused WORDS cmd...: cmd exits non-zero and its stderr holds WORDS.
refused() {
	local words=$1 err; shift
	err=$("$@" 2>&1 >/dev/null) && fail "'$*' succeeded"
	echo "$err" | grep -qF -- "$words" || fail "'$*' said '$err', not '$words'"
	[ "$(echo "$err" | wc -l)" -le 2 ] || fail "'$*': more than a short error: $err"
}
# show_has ID KEY=VALUE...: scontrol show job ID has each word.
show_has() {
	local id=$1 out kv; shift
	out=$(scontrol -o show job "$id") || fail "scontrol show job $id"
	for kv in "$@"; do
		[[ " $out " == *" $kv "* ]] || fail "scontrol show job $id lacks $kv: $out"
	done
}
# wait_show ID KEY=VALUE: until scontrol show job ID has it (30 s).
wait_show() {
	local i
	for ((i = 0; i < 600; i++)); do
		[[ " $(scontrol -o show job "$1") " == *" $2 "* ]] && return 0
		sleep 0.05
	done
	fail "job $1 never showed $2: $(scontrol -o show job "$1")"
}

note "sacct --format NTasks,AveRSS,AveCPU,MaxRSS,TotalCPU of an ended job"
ok=$(as qpuser1 sbatch --parsable --wrap 'true') || fail "sbatch ok"
qp_wait "$ok" completed
out=$(as qpuser1 sacct -j "$ok" -n -P --format=JobID,NTasks,AveRSS,AveCPU,MaxRSS,TotalCPU,MinCPU) ||
	fail "sacct --format NTasks,AveRSS,AveCPU: $out"
echo "$out"
echo "$out" | grep -qE "^$ok\|\|\|\|[^|]*\|[^|]*\|$" || fail "sacct: the job's row has task figures: $out"
echo "$out" | grep -qE "^$ok\.batch\|1\|[0-9]+K\|[0-9]{2}:[0-9]{2}:[0-9]{2}\|[0-9]+K\|[0-9:]+\|[0-9:]+$" ||
	fail "sacct: the batch step's row: $out"
rss=$(echo "$out" | awk -F'|' -v id="$ok.batch" '$1 == id { print ($3 == $5) ($4 == $6) }')
[ "$rss" = 11 ] || fail "sacct: one task's AveRSS/AveCPU are not its MaxRSS/TotalCPU: $out"
refused 'Invalid field requested: "AveVMSizzle"' sacct -j "$ok" --format=AveVMSizzle

note "scontrol show job: nodes, tasks, CPUs per task, memory per node"
a=$(as qpuser1 sbatch --parsable -H -N2 -n2 -c2 --mem=100M --wrap 'true') || fail "sbatch -N2 -n2 -c2"
show_has "$a" NumNodes=2 NumCPUs=4 NumTasks=2 CPUs/Task=2 MinMemoryNode=100M TRES=cpu=4,mem=200M,node=2
b=$(as qpuser1 sbatch --parsable -H -N1 -n2 --wrap 'true') || fail "sbatch -N1 -n2"
show_has "$b" NumNodes=1 NumCPUs=2 NumTasks=2 CPUs/Task=1
c=$(as qpuser1 sbatch --parsable -H -c2 --wrap 'true') || fail "sbatch -c2"
show_has "$c" NumNodes=1 NumCPUs=2 NumTasks=1 CPUs/Task=2
d=$(as qpuser1 qsub -h -l select=2:ncpus=2:mpiprocs=2 <<<'true') || fail "qsub select mpiprocs"
show_has "$d" NumNodes=2 NumCPUs=4 NumTasks=4 CPUs/Task=1
as qpuser1 scancel "$a" "$b" "$c" "$d" || fail "scancel"

note "--dependency=singleton"
s1=$(as qpuser1 sbatch --parsable -H -J single --wrap 'true') || fail "sbatch single"
s2=$(as qpuser1 sbatch --parsable -J single --dependency=singleton --wrap 'true') || fail "sbatch singleton"
show_has "$s2" JobState=PENDING Reason=Dependency "Dependency=singleton(unfulfilled)"
show_has "$s1" "Dependency=(null)"
as qpuser1 scancel "$s1" || fail "scancel $s1"
qp_wait "$s2" completed
show_has "$s2" "Dependency=(null)"

note "squeue: Resources for the first job waiting for CPUs, Priority behind it"
full=$(as qpuser2 sbatch --parsable -N2 -n2 -c2 --wrap 'sleep 300') || fail "sbatch full"
qp_wait "$full" running
p1=$(as qpuser1 sbatch --parsable --wrap 'true') || fail "sbatch p1"
p2=$(as qpuser1 sbatch --parsable --wrap 'true') || fail "sbatch p2"
for ((i = 0; i < 600; i++)); do
	[ "$(squeue -h -j "$p1" -o %r)" = Resources ] && break
	sleep 0.05
done
[ "$(squeue -h -j "$p1,$p2" -o '%i %r' | tr '\n' ' ')" = "$p1 Resources $p2 Priority " ] ||
	fail "squeue reasons: $(squeue -h -j "$p1,$p2" -o '%i %r' | tr '\n' ' ')"
show_has "$p1" Reason=Resources
show_has "$p2" Reason=Priority

note "scontrol update StartTime="
as qpuser1 scontrol update JobId="$p2" StartTime=now+3600 || fail "update StartTime=now+3600"
show_has "$p2" Reason=BeginTime
when=$(date -d '2099-01-02T10:30' +%Y-%m-%dT%H:%M:%S)
as qpuser1 scontrol update JobId="$p2" StartTime=2099-01-02T10:30 || fail "update StartTime=ISO"
show_has "$p2" Reason=BeginTime "EligibleTime=$when"
as qpuser1 scontrol update JobId="$p2" StartTime=23:59 || fail "update StartTime=HH:MM"
show_has "$p2" Reason=BeginTime
refused "Invalid time specification bogus" scontrol update JobId="$p2" StartTime=bogus
show_has "$p2" Reason=BeginTime
refused "Access/permission denied" as qpuser2 scontrol update JobId="$p2" StartTime=now
as qpuser1 scontrol update JobId="$p2" StartTime=now || fail "update StartTime=now"
as qpuser2 scancel "$full" || fail "scancel full"
qp_wait "$p1" completed
qp_wait "$p2" completed
refused "Job/step already completing or completed" as qpuser1 scontrol update JobId="$p2" StartTime=now+60

note "scontrol requeue: Restarts, run_count, a begin time before or after it"
q=$(as qpuser1 sbatch --parsable --wrap 'sleep 300') || fail "sbatch q"
qp_wait "$q" running
show_has "$q" Restarts=0
[ "$(qp_field "$q" run_count)" = 1 ] || fail "qstat -f run_count of a first run: $(qp_field "$q" run_count)"
# As Slurm's, a requeued job waits (121 s) before it may start again.
as qpuser1 scontrol requeue "$q" || fail "scontrol requeue"
wait_show "$q" Restarts=1
qp_wait "$q" queued
show_has "$q" JobState=PENDING Reason=BeginTime Restarts=1
[ "$(qp_field "$q" run_count)" = 1 ] || fail "qstat -f run_count of a requeued job: $(qp_field "$q" run_count)"
as qpuser1 scontrol update JobId="$q" StartTime=now || fail "update StartTime=now"
qp_wait "$q" running
show_has "$q" Restarts=1
[ "$(qp_field "$q" run_count)" = 2 ] || fail "qstat -f run_count of a second run: $(qp_field "$q" run_count)"
# The chain: a begin time set on the running job, then the requeue (whose
# own 121 s is sooner: the job's later time stays).
as qpuser1 scontrol update JobId="$q" StartTime=2099-01-02T10:30 || fail "update StartTime of a running job"
as qpuser1 scontrol requeue "$q" || fail "scontrol requeue 2"
wait_show "$q" Restarts=2
qp_wait "$q" queued
show_has "$q" JobState=PENDING Reason=BeginTime Restarts=2 "EligibleTime=$when"
# ... and the other order: the requeue, then the begin time.
as qpuser1 scontrol update JobId="$q" StartTime=now || fail "update StartTime=now"
qp_wait "$q" running
when2=$(date -d '2099-01-03T11:00' +%Y-%m-%dT%H:%M:%S)
as qpuser1 scontrol requeue "$q" && as qpuser1 scontrol update JobId="$q" StartTime=2099-01-03T11:00 ||
	fail "requeue then update StartTime"
wait_show "$q" Restarts=3
qp_wait "$q" queued
show_has "$q" JobState=PENDING Reason=BeginTime Restarts=3 "EligibleTime=$when2"
# PBS's qrerun: no wait, as PBS's.
as qpuser1 scontrol update JobId="$q" StartTime=now || fail "update StartTime=now"
qp_wait "$q" running
as qpuser1 qrerun "$q" || fail "qrerun"
wait_show "$q" Restarts=4
qp_wait "$q" running
as qpuser1 scancel "$q" || fail "scancel q"
note "PBS's qalter -a: the same begin time"
pa=$(as qpuser1 qsub -h <<<'true') || fail "qsub pa"
as qpuser1 qalter -a 209901021030 "$pa" || fail "qalter -a"
show_has "$pa" "EligibleTime=$when"
refused "-a 2099: not a date and time" as qpuser1 qalter -a 2099 "$pa"
as qpuser1 qdel "$pa" || fail "qdel pa"

note "-o into a directory the node lacks, -D to a missing one: the views say where the output went"
gone=$QP_T/gone-$$   # never made
o=$(as qpuser1 sbatch --parsable -o "$gone/out.txt" --wrap 'echo hi-from-o') || fail "sbatch -o"
dd=$(as qpuser1 sbatch --parsable -D "$gone" --wrap 'echo hi-from-d') || fail "sbatch -D"
qp_wait "$o" completed
qp_wait "$dd" failed
kept=$(scontrol show job "$o" | sed -n 's/^   StdOut=//p')
QP_KEPT=("$kept")
case $kept in
"$(getent passwd qpuser1 | cut -d: -f6)"/"$o".*.OU) ;;
*) fail "scontrol StdOut of undelivered output is '$kept', not the file in HOME that holds it" ;;
esac
[ "$(cat "$kept")" = hi-from-o ] || fail "the kept output $kept: $(cat "$kept")"
scontrol show job "$o" | grep -qF "Comment=output undelivered ($gone/out.txt: No such file or directory): kept in $kept" ||
	fail "scontrol show job $o has no Comment saying where the output went: $(scontrol show job "$o")"
[ "$(squeue -h -t all -j "$o" -O STDOUT:300 | sed 's/ *$//')" = "$kept" ] || fail "squeue -O STDOUT of $o"
scontrol show job "$dd" | grep -qF "Comment=cannot change directory to $gone: No such file or directory" ||
	fail "scontrol show job $dd has no Comment saying why it failed: $(scontrol show job "$dd")"
kept=$(scontrol show job "$dd" | sed -n 's/^   StdOut=//p')
QP_KEPT+=("$kept")
[ -f "$kept" ] || fail "scontrol StdOut of $dd is '$kept', no file"
rm -f "${QP_KEPT[@]}"
QP_KEPT=()

note "a cancelled job: CANCELLED by UID on its row, cut to CANCELLED+; its batch step CANCELLED"
uid1=$(id -u qpuser1)
for how in scancel "qdel -W force"; do
	x=$(as qpuser1 sbatch --parsable --wrap 'sleep 300') || fail "sbatch x"
	qp_wait "$x" running
	# shellcheck disable=SC2086 # the command and its options
	as qpuser1 $how "$x" || fail "$how"
	qp_wait "$x" cancelled
	[ "$(as qpuser1 sacct -j "$x" -n -P -o JobID,State | tr '\n' ' ')" = "$x|CANCELLED by $uid1 $x.batch|CANCELLED " ] ||
		fail "$how: sacct -P: $(as qpuser1 sacct -j "$x" -n -P -o JobID,State | tr '\n' ' ')"
	[ "$(as qpuser1 sacct -j "$x" -n -o JobID,State | tr -s ' ' | tr '\n' '|')" = "$x CANCELLED+ |$x.batch CANCELLED |" ] ||
		fail "$how: sacct: $(as qpuser1 sacct -j "$x" -n -o JobID,State | tr -s ' ' | tr '\n' '|')"
	show_has "$x" JobState=CANCELLED
done
out=$(as qpuser1 sacct -l -j "$x" | sed -n 1p | tr -s ' ')
[ "$out" = "JobID JobIDRaw JobName Partition MaxRSS AveRSS MinCPU AveCPU NTasks AllocCPUS Elapsed State ExitCode ReqMem " ] ||
	fail "sacct --long's header: $out"
note "scontrol update: what it cannot apply is refused with the field named and nothing else applied"
u=$(as qpuser1 sbatch --parsable -H -N 1 -n 2 -t 5 --wrap true) || fail "sbatch -H -N 1 -n 2"
show_has "$u" TimeLimit=00:05:00 NumCPUs=2 NumTasks=2
for kv in NumNodes=2 NumTasks=1 Features=ib NodeList="$n1" ReqNodeList="$n1" ExcNodeList="$n2" \
	Partition=other QOS=high Dependency=afterok:1 Comment=x MinMemoryNode=100 Account=acct \
	Nice=10 Priority=10 Licenses=x:1 Gres=gpu:1 Reservation=r1 WorkDir=/tmp StdOut=/tmp/o; do
	refused "Update of this parameter is not supported: $kv" as qpuser1 scontrol update JobId="$u" TimeLimit=7 "$kv"
done
refused "NumCPUs=1: fewer CPUs than the job's 2 tasks" as qpuser1 scontrol update JobId="$u" TimeLimit=7 NumCPUs=1
show_has "$u" TimeLimit=00:05:00 NumCPUs=2 NumTasks=2
# scontrol reads the tasks, then alters: qpoold applies it only while they
# still are what it read (its "expect"), else nothing (a raw request as
# if another alter came between)
out=$(as qpuser1 python3 "$QP_TOP/tests/integration/qpool-ask.py" "$QP_T/qpoold.sock" alter \
	"{\"jobid\": $u, \"walltime\": 420, \"expect\": {\"Slurm_ntasks\": \"3\"}}") || fail "qpool-ask alter"
echo "$out" | grep -q "its Slurm_ntasks changed after it was read; run the command again" || fail "alter with a stale expect: $out"
show_has "$u" TimeLimit=00:05:00 NumCPUs=2 NumTasks=2

note "scontrol update NumCPUs= keeps the job's tasks (its MPI slots), as Slurm's does"
v=$(as qpuser1 sbatch --parsable -H -n 1 -t 5 -o "$QP_T/work/qpuser1/cpus-%j.out" \
	--wrap 'echo "slots=$(wc -l < "$PBS_NODEFILE") cpus=$SLURM_CPUS_ON_NODE tasks=$SLURM_TASKS_PER_NODE"') ||
	fail "sbatch -H -n 1"
as qpuser1 scontrol update JobId="$v" NumCPUs=2 || fail "scontrol update NumCPUs=2"
show_has "$v" NumCPUs=2 NumTasks=1
[ "$(qp_field "$v" Resource_List.mpiprocs)" = 1 ] || fail "NumCPUs=2 of -n 1: mpiprocs '$(qp_field "$v" Resource_List.mpiprocs)'"
as qpuser1 scontrol release "$v" || fail "scontrol release"
qp_wait "$v" completed --timeout 60
grep -qx "slots=1 cpus=2 tasks=1" "$QP_T/work/qpuser1/cpus-$v.out" ||
	fail "NumCPUs=2 of -n 1 ran with: $(cat "$QP_T/work/qpuser1/cpus-$v.out")"
as qpuser1 scancel "$u" || fail "scancel $u"
echo "PASS"
