#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# MPI across four namespaced hosts (tests/integration/hosts.sh): a job of
# -l select=4:ncpus=2:mpiprocs=2 runs Open MPI's plain `mpirun -n 8` and
# MPICH's `mpiexec.mpich -n 8` with no options: 8 ranks on 4 distinct
# hosts, each in its node's job cgroup and cpuset, as the job's owner;
# beside another user's one-node job; pbsdsh on every slot; and qdel of a
# running MPI job leaves no process and no group on any host.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
qp_hosts_reexec "$@"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
command -v mpicc.openmpi >/dev/null && command -v mpicc.mpich >/dev/null ||
	skip "needs mpicc.openmpi and mpicc.mpich (openmpi-bin libopenmpi-dev mpich libmpich-dev)"
qp_setup
qp_hosts_init
cgroot=/sys/fs/cgroup
if [ -d "$cgroot/memory" ]; then memcg=$cgroot/memory; else memcg=$cgroot; fi
p=m$$
srv=${p}s nodes=("${p}a" "${p}b" "${p}c" "${p}d")
qp_host "$srv" 1
for i in 0 1 2 3; do qp_host "${nodes[$i]}" $((i + 2)); done
qp_pool_start "$srv" 7001
# Four nodes of two CPUs on a two-core machine: each node is given both
# (nodes may share CPUs, each fences its own jobs). The hosts share one
# /var/tmp, where every node of a job would make the same TMPDIR
# (pbs.ID.SERVER): each node gets a tmpdir of its own, as real hosts have.
# qp_node_on reads node.conf when it starts qnoded; each gets its own.
cp "$QP_T/node.conf" "$QP_T/node.conf.pool"
for n in "${nodes[@]}"; do
	mkdir -m 1777 "$QP_T/tmp-$n"
	{ cat "$QP_T/node.conf.pool"; printf '[node]\ntmpdir = %s\n' "$QP_T/tmp-$n"; } > "$QP_T/node.conf"
	qp_node_on "$n" 0-1
done
cp "$QP_T/node.conf.pool" "$QP_T/node.conf"

w=$QP_T/work/qpuser1
cc_out=$(mpicc.openmpi -O1 -o "$w/hello-ompi" "$QP_TOP/tests/integration/mpi-hello.c" 2>&1) || fail "mpicc.openmpi: $cc_out"
cc_out=$(mpicc.mpich -O1 -o "$w/hello-mpich" "$QP_TOP/tests/integration/mpi-hello.c" 2>&1) || fail "mpicc.mpich: $cc_out"
chmod 755 "$w"/hello-*

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
echo "mpi ok"
