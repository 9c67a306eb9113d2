#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# srun's MPI steps on four namespaced hosts (issue 28's test): in an
# `sbatch --nodes=4 --ntasks-per-node=2` job, plain `srun` runs an MPI
# allreduce built with mpicc.openmpi (--mpi=pmix) and mpicc.mpich
# (--mpi=pmi2): 8 ranks, 2 on each host, the right sum, each in its node's
# job group with the group's CPUs, as the job's owner, each seeing Slurm's
# SLURM_PROCID equal to its MPI rank; SLURM_MPI_TYPE gives the default.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
qp_hosts_reexec "$@"
qp_need_mpi
qp_setup
qp_hosts_init
p=s$$
qp_mpi_pool "$p" 4

w=$QP_T/work/qpuser1
qp_mpi_build "$QP_TOP/tests/integration/mpi-allreduce.c" "$w/ar"

# check_ranks FILE JOBID: 8 ranks, 2 on each host, the sum of 1..8, each
# in its node's group of the job with the group's CPUs, as qpuser1, its
# SLURM_PROCID its rank.
check_ranks() {
	local f=$1 id=$2 uid n r
	uid=$(id -u qpuser1)
	[ "$(grep -c '^rank=' "$f")" = 8 ] || fail "$f: not 8 ranks: $(cat "$f")"
	for n in "${nodes[@]}"; do
		[ "$(grep -c " host=$n " "$f")" = 2 ] || fail "$f: host $n has not 2 ranks"
		grep " host=$n " "$f" | grep -v " cg=/\(.*/\)\?$QP_CG_PARENT/$n/job\.$id " &&
			fail "$f: a rank on $n is not in $n's group of job $id"
	done
	grep '^rank=' "$f" | grep -v " uid=$uid " && fail "$f: a rank does not run as qpuser1 ($uid)"
	grep '^rank=' "$f" | grep -v " sum=36 " && fail "$f: a wrong sum"
	grep '^rank=' "$f" | awk '{ split($6, a, "="); split($7, b, "="); if (a[2] == "" || a[2] != b[2]) exit 1 }' ||
		fail "$f: a rank's CPUs are not its group's cpuset"
	for ((r = 0; r < 8; r++)); do
		grep -q "^rank=$r size=8 .* procid=$r$" "$f" || fail "$f: no rank $r of 8 with SLURM_PROCID $r"
	done
}

# each rank's line, and its SLURM_PROCID after it
cat > "$w/ar.sh" <<'EOF2'
#!/bin/sh
exec 3>&1
line=$("$@") || exit $?
echo "$line procid=$SLURM_PROCID" >&3
EOF2
chmod 755 "$w/ar.sh"

cat > "$w/mpi.sh" <<'JOB'
#!/bin/bash
#SBATCH --nodes=4 --ntasks-per-node=2 -t 10 -J srunmpi
srun --mpi=pmix ./ar.sh ./ar-ompi > ompi.out 2> ompi.err; echo "ompi=$?"
srun --mpi=pmi2 ./ar.sh ./ar-mpich > mpich.out 2> mpich.err; echo "mpich=$?"
SLURM_MPI_TYPE=pmi2 srun ./ar.sh ./ar-mpich > env.out 2> env.err; echo "env=$?"
JOB
id=$(as qpuser1 sbatch --parsable mpi.sh) || fail "sbatch"
qp_wait "$id" completed failed --timeout 240
out=$w/slurm-$id.out
qp_wait_file "$out"
cat "$out"
grep -qx "ompi=0" "$out" || fail "srun --mpi=pmix, Open MPI: $(cat "$w/ompi.err")"
grep -qx "mpich=0" "$out" || fail "srun --mpi=pmi2, MPICH: $(cat "$w/mpich.err")"
grep -qx "env=0" "$out" || fail "SLURM_MPI_TYPE=pmi2 srun, MPICH: $(cat "$w/env.err")"
cat "$w/ompi.out" "$w/mpich.out"
check_ranks "$w/ompi.out" "$id"
check_ranks "$w/mpich.out" "$id"
check_ranks "$w/env.out" "$id"
echo PASS
