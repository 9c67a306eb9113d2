#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# MPI across four namespaced hosts (tests/integration/hosts.sh): a job of
# -l select=4:ncpus=2:mpiprocs=2 runs Open MPI's plain `mpirun -n 8` and
# MPICH's `mpiexec.mpich -n 8` with no options: 8 ranks on 4 distinct
# hosts, each in its node's job cgroup and cpuset, as the job's owner;
# beside another user's one-node job; pbsdsh on every slot; a hybrid
# one-node job (select=1:ncpus=2:mpiprocs=1) gets one rank from each plain
# mpirun and mpiexec, its node file a line a slot; qdel of a
# running MPI job leaves no process and no group on any host; and a sister
# whose cable is pulled ends the job, every node cleaned.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
qp_hosts_reexec "$@"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
qp_need_mpi
qp_setup
qp_hosts_init
cgroot=/sys/fs/cgroup
if [ -d "$cgroot/memory" ]; then memcg=$cgroot/memory; else memcg=$cgroot; fi
# Four nodes of two CPUs on a two-core machine: each node is given both.
qp_mpi_pool "m$$" 4

w=$QP_T/work/qpuser1
qp_mpi_build "$QP_TOP/tests/integration/mpi-hello.c" "$w/hello"

# check_ranks FILE JOBID: 8 ranks, 2 on each of the 4 hosts, each in its
# node's job group, on that node's CPUs, as qpuser1.
check_ranks() {
	local f=$1 id=$2 uid n
	uid=$(id -u qpuser1)
	[ "$(grep -c '^rank=' "$f")" = 8 ] || fail "$f: not 8 ranks: $(cat "$f")"
	[ "$(grep '^rank=' "$f" | sed 's/.* host=\([^ ]*\) .*/\1/' | sort -u | wc -l)" = 4 ] ||
		fail "$f: ranks not on 4 distinct hosts"
	for n in "${nodes[@]}"; do
		[ "$(grep -c " host=$n " "$f")" = 2 ] || fail "$f: host $n has not 2 ranks"
		grep " host=$n " "$f" | grep -v " cg=/\(.*/\)\?$QP_CG_PARENT/$n/job\.$id t_init=" &&
			fail "$f: a rank on $n is not in $n's group of job $id"
	done
	grep '^rank=' "$f" | grep -v " uid=$uid " && fail "$f: a rank does not run as qpuser1 ($uid)"
	grep '^rank=' "$f" | grep -v " cpus=0-1 " && fail "$f: a rank is not on its node's CPUs 0-1"
	for r in 0 1 2 3 4 5 6 7; do grep -q "^rank=$r size=8 " "$f" || fail "$f: no rank $r of 8"; done
}

note "another user's one-node job, then an MPI job across the four nodes"
other=$(as qpuser2 qsub -N single -l ncpus=1 <<'JOB'
echo "single on $(hostname)"
JOB
) || fail "qsub single"
id=$(as qpuser1 qsub -N mpi <<'JOB'
#PBS -l select=4:ncpus=2:mpiprocs=2
cd "$PBS_O_WORKDIR"
echo "nodefile: $(tr '\n' ' ' < "$PBS_NODEFILE")"
mpirun -n 8 ./hello-ompi > ompi.out 2> ompi.err; echo "mpirun=$?"
mpiexec.mpich -n 8 ./hello-mpich > mpich.out 2> mpich.err; echo "mpiexec=$?"
pbsdsh sh -c 'echo "slot on $(hostname) uid $(id -u)"' > dsh.out; echo "pbsdsh=$?"
pbsdsh -u hostname > dsh-u.out; echo "pbsdsh-u=$?"
JOB
) || fail "qsub mpi"
qp_wait "$other" completed --timeout 60
qp_wait "$id" completed --timeout 120
out=$w/mpi.o$id
qp_wait_file "$out"
cat "$out"
grep -qx "mpirun=0" "$out" || fail "mpirun failed: $(cat "$w/ompi.err")"
grep -qx "mpiexec=0" "$out" || fail "mpiexec.mpich failed: $(cat "$w/mpich.err")"
cat "$w/ompi.out" "$w/mpich.out"
check_ranks "$w/ompi.out" "$id"
check_ranks "$w/mpich.out" "$id"
grep -qx "pbsdsh=0" "$out" || fail "pbsdsh failed"
[ "$(grep -c "^slot on .* uid $(id -u qpuser1)\$" "$w/dsh.out")" = 8 ] || fail "pbsdsh: not 8 slots: $(cat "$w/dsh.out")"
[ "$(sort -u "$w/dsh-u.out" | wc -l)" = 4 ] && [ "$(wc -l < "$w/dsh-u.out")" = 4 ] ||
	fail "pbsdsh -u: not once on each of 4 nodes: $(cat "$w/dsh-u.out")"
[ "$(qp_field "$other" Exit_status)" = 0 ] || fail "qpuser2's one-node job did not exit 0"

note "a hybrid one-node job (select=1:ncpus=2:mpiprocs=1): plain mpirun and mpiexec start one rank"
# No -n: each MPI takes its ranks from the node file (Open MPI's default
# hostfile, hydra's host file), one line a slot; OMP_NUM_THREADS is the
# rank's threads. A line a CPU would have started two.
hyb=$(as qpuser1 qsub -N hybrid <<'JOB'
#PBS -l select=1:ncpus=2:mpiprocs=1
cd "$PBS_O_WORKDIR"
echo "slots=$(wc -l < "$PBS_NODEFILE") omp=$OMP_NUM_THREADS np=$PBS_NP"
mpirun ./hello-ompi > hyb-ompi.out 2> hyb-ompi.err; echo "mpirun=$?"
mpiexec.mpich ./hello-mpich > hyb-mpich.out 2> hyb-mpich.err; echo "mpiexec=$?"
JOB
) || fail "qsub hybrid"
qp_wait "$hyb" completed --timeout 120
qp_wait_file "$w/hybrid.o$hyb"
out=$(cat "$w/hybrid.o$hyb")
grep -qx "slots=1 omp=2 np=1" <<<"$out" || fail "hybrid job: $out"
grep -qx "mpirun=0" <<<"$out" || fail "hybrid mpirun failed: $(cat "$w/hyb-ompi.err")"
grep -qx "mpiexec=0" <<<"$out" || fail "hybrid mpiexec.mpich failed: $(cat "$w/hyb-mpich.err")"
for f in "$w/hyb-ompi.out" "$w/hyb-mpich.out"; do
	[ "$(grep -c '^rank=' "$f")" = 1 ] && grep -q '^rank=0 size=1 ' "$f" || fail "$f: not one rank of one: $(cat "$f")"
done

note "qdel of a running MPI job leaves nothing on any host"
marks=$w/marks
mkdir -p "$marks" && chown qpuser1: "$marks"
id2=$(as qpuser1 qsub -N mpiwait <<JOB
#PBS -l select=4:ncpus=2:mpiprocs=2
cd "\$PBS_O_WORKDIR"
mpirun -n 8 ./hello-ompi "$marks"
JOB
) || fail "qsub mpiwait"
for ((i = 0; i < 1200; i++)); do
	[ "$(find "$marks" -name 'rank.*' -size +0 | wc -l)" = 8 ] && break
	sleep 0.05
done
[ "$(find "$marks" -name 'rank.*' -size +0 | wc -l)" = 8 ] || fail "the waiting ranks did not all start"
"$QP_BIN/qdel" "$id2" || fail "qdel $id2"
qp_wait "$id2" cancelled completed failed --timeout 60
# Each rank's pid on its own host: gone, and no job group left anywhere.
for f in "$marks"/rank.*; do
	read -r pid host < "$f"
	[ -d "/proc/$pid" ] && [ "$(stat -c %U "/proc/$pid")" = qpuser1 ] &&
		grep -q "hello-ompi" "/proc/$pid/cmdline" 2>/dev/null && fail "rank $f (pid $pid on $host) survived qdel"
done
for n in "${nodes[@]}"; do
	for ((i = 0; i < 200; i++)); do
		[ -z "$(find "$cgroot" -maxdepth 4 -type d -path "*/$QP_CG_PARENT/$n/job.$id2" 2>/dev/null)" ] && break
		sleep 0.05
	done
	[ -z "$(find "$cgroot" -maxdepth 4 -type d -path "*/$QP_CG_PARENT/$n/job.$id2" 2>/dev/null)" ] ||
		fail "job $id2's group is left on $n"
done
note "a sister whose cable is pulled mid-job ends the MPI job; every node is cleaned"
marks3=$w/marks3
mkdir -p "$marks3" && chown qpuser1: "$marks3"
id3=$(as qpuser1 qsub -N mpilost -r n <<JOB
#PBS -l select=4:ncpus=2:mpiprocs=2
cd "\$PBS_O_WORKDIR"
mpirun -n 8 ./hello-ompi "$marks3"
JOB
) || fail "qsub mpilost"
for ((i = 0; i < 1200; i++)); do
	[ "$(find "$marks3" -name 'rank.*' -size +0 | wc -l)" = 8 ] && break
	sleep 0.05
done
[ "$(find "$marks3" -name 'rank.*' -size +0 | wc -l)" = 8 ] || fail "the ranks of job $id3 did not all start"
lost=${nodes[2]}
qp_link "$lost" down
qp_wait "$id3" failed --timeout 60
"$QP_BIN/qstat" -x -f "$id3" | grep -q "lost node $lost" || fail "job $id3 did not fail for the lost node $lost"
# group_gone NODE JOBID: its job group on that node is gone (bounded wait).
group_gone() {
	local i
	for ((i = 0; i < 400; i++)); do
		[ -z "$(find "$cgroot" -maxdepth 4 -type d -path "*/$QP_CG_PARENT/$1/job.$2" 2>/dev/null)" ] && return 0
		sleep 0.05
	done
	return 1
}
for n in "${nodes[@]}"; do
	[ "$n" = "$lost" ] && continue
	group_gone "$n" "$id3" || fail "job $id3's group is left on $n, which was not lost"
done
# The lost node's copy ran on without its cable; back on the bridge, its
# qnoded re-registers and is told to end it.
qp_link "$lost" up
group_gone "$lost" "$id3" || fail "job $id3's group is left on $lost after it came back"
for f in "$marks3"/rank.*; do
	read -r pid host < "$f"
	[ -d "/proc/$pid" ] && grep -q "hello-ompi" "/proc/$pid/cmdline" 2>/dev/null &&
		fail "rank $f (pid $pid on $host) survived the end of job $id3"
done
echo "mpi ok"
