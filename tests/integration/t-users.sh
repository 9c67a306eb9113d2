#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Jobs of two real users run as those users, in their submit directory, with
# PBS variables set; output files belong to them and hold the job's output.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
qp_start_node n1

cat > "$QP_T/job.sh" <<'JOB'
#!/bin/bash
#PBS -N whoami
#QP -l walltime=00:01:00
echo "uid=$(id -u) user=$USER home=$HOME"
echo "pwd=$(pwd)"
echo "jobid=$PBS_JOBID queue=$PBS_QUEUE qpjob=$QPOOL_JOBID ncpus=$NCPUS omp=$OMP_NUM_THREADS"
echo "workdir=$PBS_O_WORKDIR"
echo "nodefile=$(cat "$PBS_NODEFILE" | tr '\n' ' ')"
echo "groups=$(id -G)"
echo "to stderr" >&2
JOB
chmod 644 "$QP_T/job.sh"

declare -A ids
for u in $QP_USERS; do
	ids[$u]=$(as "$u" qsub "$QP_T/job.sh") || fail "qsub as $u"
	[[ ${ids[$u]} =~ ^[0-9]+$ ]] || fail "qsub printed '${ids[$u]}', not a job id"
done
for u in $QP_USERS; do
	id=${ids[$u]}
	qp_wait "$id" completed
	out=$QP_T/work/$u/whoami.o$id
	err=$QP_T/work/$u/whoami.e$id
	qp_wait_file "$out"
	note "$u: $(cat "$out" | tr '\n' '|')"
	grep -qx "uid=$(id -u "$u") user=$u home=$(getent passwd "$u" | cut -d: -f6)" "$out" || fail "job of $u did not run as $u"
	grep -qx "pwd=$QP_T/work/$u" "$out" || fail "job of $u did not start in its submit directory"
	grep -qx "jobid=$id\.[^ ]* queue=batch qpjob=$id ncpus=1 omp=1" "$out" || fail "PBS/QPOOL variables wrong for $u"
	grep -qx "workdir=$QP_T/work/$u" "$out" || fail "PBS_O_WORKDIR wrong"
	grep -qx "nodefile=n1 " "$out" || fail "PBS_NODEFILE wrong"
	grep -qx "groups=$(id -G "$u")" "$out" || fail "groups of $u wrong"
	[ "$(stat -c %U "$out")" = "$u" ] || fail "$out is owned by $(stat -c %U "$out"), not $u"
	[ "$(stat -c %U "$err")" = "$u" ] || fail "$err is not owned by $u"
	grep -qx "to stderr" "$err" || fail "stderr file content wrong"
	[ "$(qp_field "$id" Exit_status)" = 0 ] || fail "exit_status of $id not 0"
	[ "$(qp_field "$id" Job_Owner)" = "$u" ] || fail "Job_Owner of $id not $u"
done

# -j oe joins stderr into stdout; -o names the file; -v passes a variable.
id=$(as qpuser1 qsub -j oe -o "$QP_T/work/qpuser1/joined.txt" -v "MYVAR=hello world" <<'JOB'
echo "out $MYVAR"
echo "err" >&2
exit 3
JOB
) || fail "qsub -j oe"
qp_wait "$id" failed
[ "$(qp_field "$id" Exit_status)" = 3 ] || fail "exit status 3 not recorded"
qp_wait_file "$QP_T/work/qpuser1/joined.txt"
grep -qx "out hello world" "$QP_T/work/qpuser1/joined.txt" || fail "-v variable not passed"
grep -qx "err" "$QP_T/work/qpuser1/joined.txt" || fail "-j oe did not join stderr"
echo "users ok"
