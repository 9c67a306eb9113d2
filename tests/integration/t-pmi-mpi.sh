#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qpool-pmi without the job path: per-node servers on this host, each with
# its own ranks ("nodes" apart by TMPDIR), real MPICH (PMI-1) and Open MPI
# (PMIx) programs: rank/size and an allreduce right, a rank that exits 3
# ends the job with 3, a rank that never reaches the fence is named after
# the timeout, and no rank outlives its server.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
PMI=$TOP/${BUILD:-build}/bin/qpool-pmi

fail() { echo "FAIL: $*" >&2; for f in "$T"/*.err; do [ -s "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
note() { echo "--- $*"; }

[ -x "$PMI" ] || fail "build first: $PMI missing"
command -v mpicc.mpich >/dev/null || skip "mpicc.mpich missing (apt-get install libmpich-dev)"
command -v mpicc.openmpi >/dev/null || skip "mpicc.openmpi missing (apt-get install libopenmpi-dev)"

T=$(mktemp -d /tmp/qpool-pmi-test.XXXXXX) || exit 1
SERVERS=()     # every server this test started
cleanup() {
	local p i
	for p in "${SERVERS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${SERVERS[@]}"; do
		for ((i = 0; i < 50; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT

cat > "$T/mpi.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* mpi ok | mpi exit R | mpi hang R */
int main(int argc, char **argv)
{
	const char *r = getenv("PMI_RANK") ? getenv("PMI_RANK") : getenv("PMIX_RANK");
	int me = r ? atoi(r) : -1, which = argc > 2 ? atoi(argv[2]) : -1;
	int rank, size, one, sum = 0;

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (strcmp(argv[1], "hang") == 0 && me == which)
		pause();
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (strcmp(argv[1], "exit") == 0 && rank == which)
		exit(3);
	one = rank + 1;
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("rank %d of %d sum %d\n", rank, size, sum);
	MPI_Finalize();
	return 0;
}
EOF
mpicc.mpich -o "$T/mpi-mpich" "$T/mpi.c" || fail "mpicc.mpich"
mpicc.openmpi -o "$T/mpi-ompi" "$T/mpi.c" || fail "mpicc.openmpi"

# run NAME RANKS(comma list) TIMEOUT [server options --] PROG ARGS: one
# server per node; node i's output in $T/NAME.i.{out,err,rc}.
run() {
	local name=$1 ranks=$2 timeout=$3 opts=() nodes i pids=() peers addr
	shift 3
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	IFS=, read -ra nodes <<< "$ranks"
	mkdir -p "$T/$name.tmp0"
	# Node 0 listens on a port of its choosing and says which.
	peers=127.0.0.1:0
	for ((i = 1; i < ${#nodes[@]}; i++)); do peers="$peers,127.0.0.1:0"; done
	TMPDIR=$T/$name.tmp0 OMPI_MCA_btl_vader_backing_directory=$T/$name.tmp0 OMPI_MCA_btl_tcp_if_include=lo \
		"$PMI" --node 0 --peers "$peers" --ranks "$ranks" --timeout "$timeout" \
		--port-file "$T/$name.port" --kvsname "$name" "${opts[@]}" -- "$@" \
		> "$T/$name.0.out" 2> "$T/$name.0.err" &
	pids+=($!); SERVERS+=($!)
	if [ ${#nodes[@]} -gt 1 ]; then
		for ((i = 0; i < 100; i++)); do [ -s "$T/$name.port" ] && break; sleep 0.05; done
		addr=$(cat "$T/$name.port" 2>/dev/null) || fail "$name: node 0 did not say its port"
		peers=$addr
		for ((i = 1; i < ${#nodes[@]}; i++)); do peers="$peers,127.0.0.1:0"; done
	fi
	for ((i = 1; i < ${#nodes[@]}; i++)); do
		mkdir -p "$T/$name.tmp$i"
		TMPDIR=$T/$name.tmp$i OMPI_MCA_btl_vader_backing_directory=$T/$name.tmp$i OMPI_MCA_btl_tcp_if_include=lo \
			"$PMI" --node "$i" --peers "$peers" --ranks "$ranks" --timeout "$timeout" \
			--kvsname "$name" "${opts[@]}" -- "$@" > "$T/$name.$i.out" 2> "$T/$name.$i.err" &
		pids+=($!); SERVERS+=($!)
	done
	for ((i = 0; i < ${#pids[@]}; i++)); do
		wait "${pids[$i]}"; echo $? > "$T/$name.$i.rc"
	done
	# no rank outlives its server
	for p in $(cat "$T/$name".*.out | sed -n 's/^pid //p'); do
		! kill -0 "$p" 2>/dev/null || fail "$name: rank pid $p still alive after its server ended"
	done
}

# expect_ok NAME RANKS: every node 0, every rank once with the right sum
expect_ok() {
	local name=$1 n=0 sum=0 i r
	IFS=, read -ra nodes <<< "$2"
	for r in "${nodes[@]}"; do n=$((n + r)); done
	sum=$((n * (n + 1) / 2))
	for ((i = 0; i < ${#nodes[@]}; i++)); do
		[ "$(cat "$T/$name.$i.rc")" = 0 ] || fail "$name: node $i exited $(cat "$T/$name.$i.rc")"
	done
	for ((r = 0; r < n; r++)); do
		[ "$(cat "$T/$name".*.out | grep -cx "rank $r of $n sum $sum")" = 1 ] ||
			fail "$name: rank $r did not say 'rank $r of $n sum $sum' exactly once"
	done
	note "$name: $n ranks on ${#nodes[@]} nodes, sum $sum"
}

# expect_fail NAME NODES STATUS PATTERN: every node exits STATUS, some
# server's stderr says PATTERN
expect_fail() {
	local name=$1 nodes=$2 status=$3 pat=$4 i
	for ((i = 0; i < nodes; i++)); do
		[ "$(cat "$T/$name.$i.rc")" = "$status" ] ||
			fail "$name: node $i exited $(cat "$T/$name.$i.rc"), not $status"
	done
	cat "$T/$name".*.err | grep -q -- "$pat" || fail "$name: no server said '$pat'"
	note "$name: $(cat "$T/$name".*.err | grep -m1 -- "$pat")"
}

run mpich-2x2 2,2 20 -- "$T/mpi-mpich" ok
expect_ok mpich-2x2 2,2
run ompi-2x2 2,2 20 -- "$T/mpi-ompi" ok
expect_ok ompi-2x2 2,2
# uneven nodes: PMI_process_mapping (vector,(0,1,3),(1,1,2),(2,1,1))
run mpich-321 3,2,1 20 -- "$T/mpi-mpich" ok
expect_ok mpich-321 3,2,1
run ompi-321 3,2,1 20 -- "$T/mpi-ompi" ok
expect_ok ompi-321 3,2,1
# PMI_PORT instead of PMI_FD (initack)
run mpich-port 2,2 20 --pmi-port -- "$T/mpi-mpich" ok
expect_ok mpich-port 2,2
# PMIx off: MPICH alone, as --mpi=pmi would
run mpich-nopmix 1,3 20 --no-pmix -- "$T/mpi-mpich" ok
expect_ok mpich-nopmix 1,3

run mpich-exit 2,2 20 -- "$T/mpi-mpich" exit 2
expect_fail mpich-exit 2 3 "rank 2 exited with status 3"
run ompi-exit 2,2 20 -- "$T/mpi-ompi" exit 1
expect_fail ompi-exit 2 3 "rank 1 exited with status 3"

run mpich-hang 2,2 2 -- "$T/mpi-mpich" hang 3
expect_fail mpich-hang 2 124 "fence timed out after 2 s: rank(s) 3 never reached it"
run ompi-hang 2,2 2 -- "$T/mpi-ompi" hang 0
expect_fail ompi-hang 2 124 "fence timed out after 2 s: rank(s) 0 never reached it"

# bad input: one line, exit 2, nothing started
out=$("$PMI" --node 2 --peers 127.0.0.1:0,127.0.0.1:0 --ranks 1,1 -- true 2>&1); rc=$?
[ "$rc" = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] || fail "node 2 of 2 accepted (rc $rc): $out"
out=$("$PMI" --node 0 --peers 127.0.0.1:0 --ranks 0 -- true 2>&1); rc=$?
[ "$rc" = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] || fail "--ranks 0 accepted (rc $rc): $out"
out=$("$PMI" --node 0 --peers 127.0.0.1:0 --ranks 1 2>&1); rc=$?
[ "$rc" = 2 ] || fail "no command accepted (rc $rc): $out"
echo "pmi mpi ok"
