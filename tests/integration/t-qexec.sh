#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qexec (a first cut of issue 13) across two namespaced hosts: in a
# select=2:ncpus=2:mpiprocs=2 job, `qexec -n 4` runs Open MPI (PMIx) and
# MPICH (PMI-1) hello worlds with no mpirun: 4 ranks, 2 on each host, each
# in its node's job group, as the job's owner; a rank that exits 3 makes
# qexec exit 3; a rank that never calls MPI_Init is named and killed after
# the timeout; more ranks than slots is refused with one line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
qp_hosts_reexec "$@"
qp_need_mpi
qp_setup
qp_hosts_init
qp_mpi_pool "q$$" 2

w=$QP_T/work/qpuser1
qp_mpi_build "$QP_TOP/tests/integration/mpi-hello.c" "$w/hello"
# A PMI-2 client that is not ours: Slurm's libpmi2 (libpmi2-0-dev), the
# PMI-2 library of MPICH-derived MPIs (Debian's MPICH speaks PMI-1 only).
out=$(cc -O1 -o "$w/pmi2" "$QP_TOP/tests/integration/pmi2-client.c" -lpmi2 2>&1) || fail "cc -lpmi2: $out"
out=$(cc -O1 -o "$w/pus" "$QP_TOP/tests/integration/hwloc-pus.c" -lhwloc 2>&1) || fail "cc -lhwloc: $out"
chmod 755 "$w/pmi2" "$w/pus"

# check_ranks FILE JOBID: 4 ranks of 4, 2 on each host, each in its
# node's group of the job, as qpuser1.
check_ranks() {
	local f=$1 id=$2 uid n r
	uid=$(id -u qpuser1)
	[ "$(grep -c '^rank=' "$f")" = 4 ] || fail "$f: not 4 ranks: $(cat "$f")"
	for n in "${nodes[@]}"; do
		[ "$(grep -c " host=$n " "$f")" = 2 ] || fail "$f: host $n has not 2 ranks"
		grep " host=$n " "$f" | grep -v " cg=/\(.*/\)\?$QP_CG_PARENT/$n/job\.$id t_init=" &&
			fail "$f: a rank on $n is not in $n's group of job $id"
	done
	grep '^rank=' "$f" | grep -v " uid=$uid " && fail "$f: a rank does not run as qpuser1 ($uid)"
	for r in 0 1 2 3; do grep -q "^rank=$r size=4 " "$f" || fail "$f: no rank $r of 4"; done
}

id=$(as qpuser1 qsub -N qx <<'JOB'
#PBS -l select=2:ncpus=2:mpiprocs=2
cd "$PBS_O_WORKDIR"
qexec -n 4 ./hello-ompi > ompi.out 2> ompi.err; echo "ompi=$?"
qexec -n 4 ./hello-mpich > mpich.out 2> mpich.err; echo "mpich=$?"
qexec -n 4 sh -c '[ "$PMI_RANK" = 3 ] && exit 3; exit 0' 2> exit3.err; echo "exit3=$?"
qexec -n 4 ./pmi2 > pmi2.out 2> pmi2.err; echo "pmi2=$?"
qexec -n 5 true 2> five.err; echo "five=$?"
qexec -n 4 sh -c '[ "$QPOOL_RANK" != 0 ] || ss -Hltnp | grep "pid=$PPID,"; exit 0' > bind.out 2> bind.err; echo "bind=$?"
qexec -n 4 --timeout 2 sh -c '[ "$PMI_RANK" = 3 ] && { echo $$ > hang.pid; exec sleep 1000; }; exec ./hello-mpich' \
	> hang.out 2> hang.err; echo "hang=$?"
JOB
) || fail "qsub"
qp_wait "$id" completed --timeout 180
out=$w/qx.o$id
qp_wait_file "$out"
cat "$out"
grep -qx "ompi=0" "$out" || fail "qexec Open MPI failed: $(cat "$w/ompi.err")"
grep -qx "mpich=0" "$out" || fail "qexec MPICH failed: $(cat "$w/mpich.err")"
cat "$w/ompi.out" "$w/mpich.out"
check_ranks "$w/ompi.out" "$id"
check_ranks "$w/mpich.out" "$id"
grep -qx "pmi2=0" "$out" || fail "qexec of Slurm's PMI-2 client failed: $(cat "$w/pmi2.err" "$w/pmi2.out")"
cat "$w/pmi2.out"
[ "$(grep -c "^rank=[0-3] size=4 appnum=0 spawned=0 sum=60 " "$w/pmi2.out")" = 4 ] ||
	fail "PMI-2: not 4 ranks that each got all 4 values: $(cat "$w/pmi2.out")"
for r in 0 1 2 3; do grep -q "^rank=$r " "$w/pmi2.out" || fail "PMI-2: no rank $r"; done
# ranks 0,1 on the first node, 2,3 on the second; a node's attribute is
# its own ranks' (each put its host name)
grep -v " mapping=(vector,(0,2,2))$" "$w/pmi2.out" && fail "PMI-2: wrong process mapping"
grep -v " host=\([^ ]*\) nodeattr=\1 " "$w/pmi2.out" && fail "PMI-2: a node attribute from another node"
for n in "${nodes[@]}"; do
	[ "$(grep -c " host=$n " "$w/pmi2.out")" = 2 ] || fail "PMI-2: host $n has not 2 ranks: $(cat "$w/pmi2.out")"
done
grep -qx "exit3=3" "$out" || fail "a rank's exit 3: $(grep exit3 "$out"), $(cat "$w/exit3.err")"
grep -q "rank 3 exited with status 3" "$w/exit3.err" || fail "exit 3 not named: $(cat "$w/exit3.err")"
# node 0's server listens for the other nodes' on its pool address only
# (it listened on every address, before any secret was shown), and only
# until they are all here; libpmix's own listener is on loopback
n0=$(awk -v h="${nodes[0]}" '$2 == h { print $1 }' "$QP_HOSTS_FILE")
grep -qx "bind=0" "$out" && [ -n "$n0" ] || fail "qexec (bind): $(cat "$w/bind.err")"
awk '{ print $4 }' "$w/bind.out" | grep -v "^$n0:[0-9]*$" | grep -v "^127\." &&
	fail "node 0's server listens beyond ${nodes[0]}'s address $n0: $(cat "$w/bind.out")"
grep -qx "five=1" "$out" && [ "$(cat "$w/five.err")" = "qexec: -n 5: the job has 4 MPI slots" ] ||
	fail "-n 5 of 4 slots: $(grep five "$out"), $(cat "$w/five.err")"
grep -qx "hang=124" "$out" || fail "a rank that never inits: $(grep hang "$out"), $(cat "$w/hang.err")"
grep -q "fence timed out after 2 s: rank(s) 3 never reached it" "$w/hang.err" ||
	fail "the hanging rank is not named: $(cat "$w/hang.err")"
pid=$(cat "$w/hang.pid" 2>/dev/null); [ -n "$pid" ] || fail "the hanging rank did not start"
[ -d "/proc/$pid" ] && grep -q sleep "/proc/$pid/cmdline" 2>/dev/null && fail "the hanging rank (pid $pid) survived"

# The ranks' hwloc reads the node's topology from qnoded's file instead
# of discovering it, and sees what discovery would: on a share of one CPU
# of each node, that one CPU, the machine itself. --topology=discover and
# a user's own HWLOC_XMLFILE (on every node: the ranks get qexec's
# environment) leave hwloc to the rank.
id=$(as qpuser1 qsub -N qt <<'JOB'
#PBS -l select=2:ncpus=1:mpiprocs=1,place=scatter
cd "$PBS_O_WORKDIR"
qexec -n 2 ./pus > pus.out 2>&1; echo "pus=$?"
qexec -n 2 --topology=discover ./pus > pusd.out 2>&1; echo "pusd=$?"
cp "$QPOOL_HWLOC_XML" mine.xml
HWLOC_XMLFILE=$PWD/mine.xml qexec -n 2 ./pus > pusu.out 2>&1; echo "pusu=$?"
qexec -n 2 ./hello-mpich > mpich1.out 2>&1; echo "mpich1=$?"
QX_MARK=from-qexec qexec -n 2 sh -c 'echo "rank=$QPOOL_RANK host=$(hostname) mark=$QX_MARK tmp=$TMPDIR nodenum=$PBS_NODENUM"' \
	> env.out 2>&1; echo "env=$?"
JOB
) || fail "qsub (topology)"
qp_wait "$id" completed --timeout 120
out=$w/qt.o$id
qp_wait_file "$out"
cat "$out" "$w/pus.out" "$w/pusd.out" "$w/pusu.out"
for k in pus pusd pusu mpich1 env; do grep -qx "$k=0" "$out" || fail "qexec ($k) failed: $(cat "$w/$k.out")"; done
for n in "${nodes[@]}"; do
	l=$(grep " host=$n " "$w/pus.out") || fail "no rank on $n: $(cat "$w/pus.out")"
	[[ $l == *" xml=$QP_T/state/nodes/$n/topology.xml from=qnoded thissystem=1 "* ]] ||
		fail "$n: the rank did not load $n's topology.xml as this machine: $l"
	[[ $l =~ \ pus=([0-9]+)\ allowed=([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] ||
		fail "$n: the topology's PUs are not the one CPU of the rank's share: $l"
	l=$(grep " host=$n " "$w/pusd.out")
	[[ $l == *" xml=- from=pus thissystem=1 "* && $l =~ \ pus=([0-9]+)\ allowed=([0-9]+)$ ]] ||
		fail "$n: --topology=discover: $l"
	l=$(grep " host=$n " "$w/pusu.out")
	[[ $l == *" xml=$w/mine.xml from=qnoded "* ]] || fail "$n: the user's HWLOC_XMLFILE was not kept: $l"
done
[ "$(grep -c '^rank=' "$w/mpich1.out")" = 2 ] || fail "MPICH on one CPU a node: $(cat "$w/mpich1.out")"
# Every rank has qexec's environment, the batch system's own variables
# excepted: those are each node's.
cat "$w/env.out"
grep -qx "rank=0 host=${nodes[0]} mark=from-qexec tmp=$QP_T/tmp-${nodes[0]}/[^ ]* nodenum=0" "$w/env.out" &&
	grep -qx "rank=1 host=${nodes[1]} mark=from-qexec tmp=$QP_T/tmp-${nodes[1]}/[^ ]* nodenum=1" "$w/env.out" ||
	fail "the ranks' environment is not qexec's with each node's own: $(cat "$w/env.out")"
echo "qexec ok"
