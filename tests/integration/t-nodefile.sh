#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A single-node job's PBS_NODEFILE is the node's shared file of its line
# count: root's, 0444, "n1" once per CPU (once per MPI slot when its
# chunks name mpiprocs or ompthreads, with PBS_NP and OMP_NUM_THREADS
# to match), in a directory the user cannot
# list; the user can neither write nor remove it. Two jobs of one count
# share it (one inode, whatever their user), another count has its own;
# a qnoded restart keeps it and sweeps what is not a node file. A
# multi-node job still gets a file of its own (<id>.nodes, the user's).
# qalter -l of a held job's shape changes its slots as qsub's would.
. "$(dirname "$0")/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
qp_setup
qp_start_server
qp_start_node n1 0-1

# probe USER NCPUS NAME: runs a job that reports on its node file into
# the user's NAME.out; waits for it to complete.
probe() {
	local id
	id=$(as "$1" qsub -N "$3" -l ncpus="$2" -o "$QP_T/work/$1/$3.out" -j oe <<'JOB'
f=$PBS_NODEFILE
echo "path=$f"
echo "stat=$(stat -c '%u %a %i' "$f")"
echo "text=$(tr '\n' ' ' < "$f")"
echo "env=$QPOOL_NODEFILE"
( echo x >> "$f" ) 2>/dev/null && echo "wrote"
rm -f "$f" 2>/dev/null && echo "removed"
chmod 666 "$f" 2>/dev/null && echo "chmoded"
mv "$f" "$f.x" 2>/dev/null && echo "moved"
ls "$(dirname "$f")" >/dev/null 2>&1 && echo "listed"
echo done
JOB
) || fail "qsub $3"
	qp_wait "$id" completed failed
	[ "$(qp_state "$id")" = completed ] || fail "job $3 ($id): $(qp_field "$id" reason)"
	grep -qx "done" "$QP_T/work/$1/$3.out" || fail "job $3: $(cat "$QP_T/work/$1/$3.out")"
}
val() { sed -n "s/^$2=//p" "$QP_T/work/$1/$3.out"; }

dir=$QP_T/state/nodes/n1/nodefiles
note "a single-node job: the shared file, root's, 0444, its lines; nothing the user can change"
probe qpuser1 1 a
[ "$(val qpuser1 path a)" = "$dir/n1.1" ] || fail "PBS_NODEFILE is $(val qpuser1 path a), not $dir/n1.1"
[ "$(val qpuser1 env a)" = "$dir/n1.1" ] || fail "QPOOL_NODEFILE is $(val qpuser1 env a)"
read -r uid mode ino_a <<<"$(val qpuser1 stat a)"
[ "$uid" = 0 ] && [ "$mode" = 444 ] || fail "node file is uid $uid mode $mode, not root's 444"
[ "$(val qpuser1 text a)" = "n1 " ] || fail "node file holds '$(val qpuser1 text a)'"
for what in wrote removed chmoded moved listed; do
	grep -qx "$what" "$QP_T/work/qpuser1/a.out" && fail "the user $what the node file (or listed its directory)"
done
[ "$(stat -c '%u %a' "$dir")" = "0 711" ] || fail "$dir is $(stat -c '%u %a' "$dir")"
[ "$(cat "$dir/n1.1")" = n1 ] || fail "the node file changed: $(cat "$dir/n1.1")"
ls "$QP_T/state/nodes/n1/jobs/"*.nodes >/dev/null 2>&1 && fail "a job file .nodes was made: $(ls "$QP_T/state/nodes/n1/jobs/")"

note "the same count shares one file, another user's job too; another count has its own"
probe qpuser2 1 b
[ "$(val qpuser2 path b)" = "$dir/n1.1" ] || fail "second job's file is $(val qpuser2 path b)"
read -r _ _ ino_b <<<"$(val qpuser2 stat b)"
[ "$ino_a" = "$ino_b" ] || fail "two jobs of one count: inodes $ino_a and $ino_b"
probe qpuser1 2 c
[ "$(val qpuser1 path c)" = "$dir/n1.2" ] || fail "a 2-CPU job's file is $(val qpuser1 path c)"
[ "$(val qpuser1 text c)" = "n1 n1 " ] || fail "the 2-CPU file holds '$(val qpuser1 text c)'"
[ "$(val qpuser1 stat c | cut -d' ' -f1-2)" = "0 444" ] || fail "the 2-CPU file: $(val qpuser1 stat c)"

note "a qnoded restart keeps the node files and sweeps the rest"
touch "$dir/.tmp.7" "$dir/junk"
qp_stop "$(qp_node_pid n1)"
qp_start_node n1 0-1
[ -e "$dir/.tmp.7" ] || [ -e "$dir/junk" ] && fail "a restart left $(ls -A "$dir")"
[ "$(cat "$dir/n1.2" | tr '\n' ' ')" = "n1 n1 " ] || fail "a restart lost n1.2"
probe qpuser1 1 d
[ "$(val qpuser1 path d)" = "$dir/n1.1" ] && [ "$(val qpuser1 text d)" = "n1 " ] ||
	fail "after a restart: $(cat "$QP_T/work/qpuser1/d.out")"

note "a single-node job's own MPI slots and threads (mpiprocs, ompthreads): a line a slot, PBS Pro's counts"
# slots_job CMD ARGS...: a job that prints its node file and counts.
slots_job() {
	as qpuser1 "$@" -o "$QP_T/work/qpuser1/slots.out" <<'JOB'
#!/bin/sh
echo "path=$PBS_NODEFILE lines=$(wc -l < "$PBS_NODEFILE") np=$PBS_NP ppn=$PBS_NUM_PPN omp=$OMP_NUM_THREADS ncpus=$NCPUS tpn=${SLURM_TASKS_PER_NODE:-}"
JOB
}
slots_check() {  # EXPECTED ID WHAT: waits for job ID, compares its line
	local want=$1 id=$2 got
	qp_wait "$id" completed failed
	[ "$(qp_state "$id")" = completed ] || fail "$3: $(qp_field "$id" reason)"
	want=${want//JOBFILE/$QP_T/state/nodes/n1/jobs/${id%%.*}.nodes}
	got=$(sed -n 's/^path=//p' "$QP_T/work/qpuser1/slots.out")
	[ "$got" = "$want" ] || fail "$3: got '$got', not '$want'"
}
slots() {  # EXPECTED CMD ARGS...: runs slots_job, compares its line
	local want=$1 id
	shift
	rm -f "$QP_T/work/qpuser1/slots.out"
	id=$(slots_job "$@") || fail "$*"
	slots_check "$want" "${id##* }" "$*"
}
# select=1:ncpus=2:mpiprocs=1: one line, one rank of two threads (the
# shared file of one line); ompthreads named: its threads, a line a slot.
slots "$dir/n1.1 lines=1 np=1 ppn=1 omp=2 ncpus=2 tpn=1" qsub -l select=1:ncpus=2:mpiprocs=1
slots "$dir/n1.2 lines=2 np=2 ppn=2 omp=1 ncpus=2 tpn=2" qsub -l select=1:ncpus=2:mpiprocs=2:ompthreads=1
# Neither named: a line a CPU, OMP_NUM_THREADS the CPUs, as before.
slots "$dir/n1.2 lines=2 np=2 ppn=2 omp=2 ncpus=2 tpn=2" qsub -l select=1:ncpus=2
slots "$dir/n1.2 lines=2 np=2 ppn=2 omp=2 ncpus=2 tpn=2" qsub -l nodes=1:ppn=2
# Two chunks packed on this node, with their threads named: qpoold sends
# the node's one alloc entry (two slots of one thread each).
slots "$dir/n1.2 lines=2 np=2 ppn=2 omp=1 ncpus=2 tpn=2" qsub -l select=2:ncpus=1:ompthreads=1 -l place=pack
# More slots than CPUs: a file of the job's own, gone with it; no shared
# file of that count (the node's shared files stay bounded by CPUs).
slots "JOBFILE lines=3 np=3 ppn=3 omp=1 ncpus=1 tpn=3" qsub -l select=1:ncpus=1:mpiprocs=3
[ -e "$dir/n1.3" ] && fail "a shared node file of 3 lines for a 1-CPU job"
# Job files go when qpoold has acknowledged the result, just after the
# job reads completed.
for _ in $(seq 200); do ls "$QP_T/state/nodes/n1/jobs/"*.nodes >/dev/null 2>&1 || break; sleep 0.05; done
ls "$QP_T/state/nodes/n1/jobs/"*.nodes >/dev/null 2>&1 && fail "a job's own node file was left: $(ls "$QP_T/state/nodes/n1/jobs/")"
# Slurm's one task of two CPUs: one line, SLURM_TASKS_PER_NODE 1.
slots "$dir/n1.1 lines=1 np=1 ppn=1 omp=2 ncpus=2 tpn=1" sbatch --parsable -n1 -c2
[ "$(cat "$dir/n1.1")" = n1 ] || fail "the 1-line file holds '$(cat "$dir/n1.1")'"

note "qalter -l: a held job's new shape takes the old one's slots away; its own slots and threads count"
altered() {  # EXPECTED "QSUB -l" QALTER ARGS...: a held job altered, then released
	local want=$1 sub=$2 id
	shift 2
	rm -f "$QP_T/work/qpuser1/slots.out"
	id=$(slots_job qsub -h -l "$sub") || fail "qsub -h -l $sub"
	as qpuser1 qalter "$@" "$id" || fail "qalter $* (a job of $sub)"
	as qpuser1 qrls "$id" || fail "qrls after qalter $*"
	slots_check "$want" "$id" "$sub, then qalter $*"
}
altered "$dir/n1.2 lines=2 np=2 ppn=2 omp=2 ncpus=2 tpn=2" select=1:ncpus=2:mpiprocs=1:ompthreads=2 -l select=1:ncpus=2
altered "$dir/n1.2 lines=2 np=2 ppn=2 omp=2 ncpus=2 tpn=2" select=1:ncpus=1:mpiprocs=1 -l ncpus=2
altered "$dir/n1.1 lines=1 np=1 ppn=1 omp=2 ncpus=2 tpn=1" ncpus=2 -l mpiprocs=1,ompthreads=2
altered "$dir/n1.1 lines=1 np=1 ppn=1 omp=2 ncpus=2 tpn=1" ncpus=1 -l select=1:ncpus=2:mpiprocs=1

note "a multi-node job: a file of its own, the user's"
qp_start_node n2 1
id=$(as qpuser1 qsub -N m -l select=2:ncpus=1 -l place=scatter -o "$QP_T/work/qpuser1/m.out" -j oe <<'JOB'
echo "path=$PBS_NODEFILE"
echo "stat=$(stat -c '%U' "$PBS_NODEFILE")"
echo "text=$(sort "$PBS_NODEFILE" | tr '\n' ' ')"
JOB
) || fail "qsub multi-node"
qp_wait "$id" completed failed --timeout 60
[ "$(qp_state "$id")" = completed ] || fail "multi-node job: $(qp_field "$id" reason)"
path=$(val qpuser1 path m)
case $path in
"$QP_T/state/nodes/"n[12]"/jobs/$id.nodes") ;;
*) fail "multi-node job's file is $path" ;;
esac
[ "$(val qpuser1 stat m)" = qpuser1 ] || fail "multi-node file's owner: $(val qpuser1 stat m)"
[ "$(val qpuser1 text m)" = "n1 n2 " ] || fail "multi-node file holds '$(val qpuser1 text m)'"
echo "nodefile ok"
