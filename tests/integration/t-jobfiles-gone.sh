#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A job's files in the node's jobs directory are all gone once qpoold
# has its result, whichever of them the job had: a plain job (spec,
# script, result), one whose nodefile is its own (<id>.nodes, more MPI
# slots than CPUs), one with a GPU (<id>.gpus), one that started a task
# (qpool-rsh: gded's control socket, <id>.ctl), and one whose gded was killed with
# its control socket still bound. gded removes the files it made before
# its result, and qnoded then unlinks only the spec, script and result
# (issue 39), so this is what holds both to every file a job had.
. "$(dirname "$0")/lib.sh"
qp_setup
d=$QP_T/dev
mkdir -p "$d"
chmod 755 "$d"
# Majors 240-254 are for local use (Documentation/admin-guide/devices.txt).
mknod -m 666 "$d/gpu0" c 240 0 || skip "cannot mknod"
printf '[node]\ngpus = %s/gpu*\n' "$d" >> "$QPOOL_CONF"
qp_start_server
qp_start_node n1
jobs=$QP_T/state/nodes/n1/jobs
w=$QP_T/work/qpuser1

# gone ID: waits (bounded) until no file of job ID is in the jobs
# directory; qnoded removes them once qpoold has taken the result.
gone() {
	local i left
	for ((i = 0; i < 600; i++)); do
		left=$(find "$jobs" -maxdepth 1 -name "${1%%.*}.*" -printf '%f ')
		[ -z "$left" ] && return 0
		sleep 0.05
	done
	fail "job $1 left $left in $jobs"
}
# ran ID: the job completed.
ran() {
	qp_wait "$1" completed failed
	[ "$(qp_state "$1")" = completed ] || fail "job $1 ended $(qp_state "$1"): $(qp_field "$1" reason)"
}

note "a plain job"
a=$(echo true | as qpuser1 qsub -N a) || fail qsub
ran "$a"
gone "$a"

# own_file NAME VAR EXT SELECT: a job (-l SELECT) whose $VAR is its own
# jobs/<id>.EXT, not empty while it runs; gone with the job.
own_file() {
	local id
	id=$(printf 'echo "path=$%s"; [ -s "$%s" ] && echo not-empty\n' "$2" "$2" |
		as qpuser1 qsub -N "$1" -l "$4") || fail qsub
	ran "$id"
	grep -qx "path=$jobs/${id%%.*}.$3" "$w/$1.o$id" || fail "job $id's $2: $(cat "$w/$1.o$id")"
	grep -qx not-empty "$w/$1.o$id" || fail "job $id's $2 was empty"
	gone "$id"
}

note "a nodefile of its own: two MPI slots on one CPU"
own_file b PBS_NODEFILE nodes select=1:ncpus=1:mpiprocs=2

note "a GPU: its PBS_GPUFILE"
own_file c PBS_GPUFILE gpus select=1:ncpus=1:ngpus=1

note "a task started: gded's control socket"
e=$(printf '%s\n' "qpool-rsh n1 true && [ -S $jobs/\${PBS_JOBID%%.*}.ctl ] && echo ctl-there" |
	as qpuser1 qsub -N e) || fail qsub
ran "$e"
grep -qx ctl-there "$w/e.o$e" || fail "job $e saw no control socket after its task: $(cat "$w/e.o$e" "$w/e.e$e")"
gone "$e"

note "gded killed with its control socket bound"
f=$(printf '%s\n' "qpool-rsh n1 true; echo task-done > $w/f.task; i=0" \
	"while [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done" | as qpuser1 qsub -N f) || fail qsub
qp_wait_file "$w/f.task"
fid=${f%%.*}
[ -S "$jobs/$fid.ctl" ] || fail "job $f has no control socket while it runs"
gpid=$(qp_wait_gded "$fid") || exit 1
kill -KILL "$gpid"
qp_wait "$f" failed completed
gone "$f"

left=$(ls -A "$jobs")
[ -z "$left" ] || fail "the jobs directory holds $left"
echo PASS
