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
# under make SANITIZE=…: libpmix's own leaks are not qpool-pmi's
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$TOP/tests/integration/lsan-pmix.supp}
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
/* mpi ok | mpi early R | mpi late R | mpi hang R: rank R exits 3 before
 * MPI_Init or after MPI_Finalize, or never calls MPI_Init. (An exit in
 * between races the other ranks' own detection of the lost peer, whose
 * abort may then be the first failure.) */
int main(int argc, char **argv)
{
	const char *r = getenv("PMI_RANK") ? getenv("PMI_RANK") : getenv("PMIX_RANK");
	int me = r ? atoi(r) : -1, which = argc > 2 ? atoi(argv[2]) : -1;
	int rank, size, one, sum = 0;

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (strcmp(argv[1], "hang") == 0 && me == which)
		pause();
	if (strcmp(argv[1], "early") == 0 && me == which)
		exit(3);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	one = rank + 1;
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("rank %d of %d sum %d\n", rank, size, sum);
	MPI_Finalize();
	return strcmp(argv[1], "late") == 0 && rank == which ? 3 : 0;
}
EOF
cat > "$T/pmixc.c" <<'EOF'
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
/* A bare PMIx client: job info, put/commit, a non-blocking fence without
 * data (gets go by direct modex) and one with, gets of other ranks. */
static volatile int fenced;
static pmix_status_t fence_st;
static void fence_cb(pmix_status_t st, void *arg) { fence_st = st; fenced = 1; }
static int fence(int collect)
{
	pmix_info_t info;
	bool b = collect;
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &b, PMIX_BOOL);
	fenced = 0;
	if (PMIx_Fence_nb(NULL, 0, &info, 1, fence_cb, NULL) != PMIX_SUCCESS)
		return -1;
	for (int i = 0; i < 20000 && !fenced; i++)   /* at most 20 s */
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	return fenced && fence_st == PMIX_SUCCESS ? 0 : -1;
}
static char *get_str(const pmix_proc_t *p, const char *key)
{
	pmix_value_t *v = NULL;
	char *s;
	if (PMIx_Get(p, key, NULL, 0, &v) != PMIX_SUCCESS || v->type != PMIX_STRING)
		return strdup("?");
	s = strdup(v->data.string);
	PMIX_VALUE_RELEASE(v);
	return s;
}
static long get_num(const pmix_proc_t *p, const char *key)
{
	pmix_value_t *v = NULL;
	long r = -1;
	if (PMIx_Get(p, key, NULL, 0, &v) != PMIX_SUCCESS)
		return -1;
	if (v->type == PMIX_UINT32) r = v->data.uint32;
	else if (v->type == PMIX_UINT16) r = v->data.uint16;
	PMIX_VALUE_RELEASE(v);
	return r;
}
int main(void)
{
	pmix_proc_t me, wild, peer;
	pmix_value_t val;
	char card[64], *got, *peers, *host;
	long size, lrank, nrank, nodeid;
	if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) { printf("init failed\n"); return 1; }
	PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
	size = get_num(&wild, PMIX_JOB_SIZE);
	lrank = get_num(&me, PMIX_LOCAL_RANK);
	nrank = get_num(&me, PMIX_NODE_RANK);
	nodeid = get_num(&me, PMIX_NODEID);
	peers = get_str(&wild, PMIX_LOCAL_PEERS);
	host = get_str(&me, PMIX_HOSTNAME);
	snprintf(card, sizeof(card), "card-%u", me.rank);
	PMIX_VALUE_LOAD(&val, card, PMIX_STRING);
	PMIx_Put(PMIX_GLOBAL, "qp.card", &val);
	PMIx_Commit();
	if (fence(0) < 0) { printf("rank %u: fence failed\n", me.rank); return 1; }
	PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + 1) % size);
	got = get_str(&peer, "qp.card");
	printf("rank %u of %ld lrank %ld nrank %ld node %ld host %s peers %s dmodex %s\n",
	       me.rank, size, lrank, nrank, nodeid, host, peers, got);
	free(got);
	if (fence(1) < 0) { printf("rank %u: fence 2 failed\n", me.rank); return 1; }
	PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + 2) % size);
	got = get_str(&peer, "qp.card");
	printf("rank %u collected %s\n", me.rank, got);
	PMIx_Finalize(NULL, 0);
	return 0;
}
EOF
mpicc.mpich -o "$T/mpi-mpich" "$T/mpi.c" || fail "mpicc.mpich"
# shellcheck disable=SC2046 # pkg-config prints several flags, one word each
cc -o "$T/pmixc" "$T/pmixc.c" $(pkg-config --cflags --libs pmix) || fail "cc pmixc (libpmix-dev)"
mpicc.openmpi -o "$T/mpi-ompi" "$T/mpi.c" || fail "mpicc.openmpi"

# run NAME RANKS(comma list) TIMEOUT [server options --] PROG ARGS: one
# server per node; node i's output in $T/NAME.i.{out,err,rc}.
run() {
	local name=$1 ranks=$2 timeout=$3 opts=() nodes i pids=() peers addr names
	shift 3
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	IFS=, read -ra nodes <<< "$ranks"
	names=n0
	for ((i = 1; i < ${#nodes[@]}; i++)); do names="$names,n$i"; done
	opts+=(--names "$names")
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

# expect_fail NAME NODES STATUS PATTERN [some]: every node exits STATUS
# (some: a node whose ranks had all ended well before the failure exits 0;
# the job's launcher takes the first failure), some server's stderr says
# PATTERN
expect_fail() {
	local name=$1 count=$2 status=$3 pat=$4 some=${5:-} i rc seen=0
	for ((i = 0; i < count; i++)); do
		rc=$(cat "$T/$name.$i.rc")
		[ "$rc" = "$status" ] && seen=1 && continue
		[ -n "$some" ] && [ "$rc" = 0 ] && continue
		fail "$name: node $i exited $rc, not $status"
	done
	[ "$seen" = 1 ] || fail "$name: no node exited $status"
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

# A bare PMIx client: job and node maps, local peers and ranks; a fence
# without data, so that its gets of other nodes' ranks go by direct modex
# (node 1 -> node 2 through the root), then one that collects.
run pmix 2,1,1 20 -- "$T/pmixc"
for ((i = 0; i < 3; i++)); do [ "$(cat "$T/pmix.$i.rc")" = 0 ] || fail "pmix: node $i exited $(cat "$T/pmix.$i.rc")"; done
for line in "rank 0 of 4 lrank 0 nrank 0 node 0 host n0 peers 0,1 dmodex card-1" \
	"rank 1 of 4 lrank 1 nrank 1 node 0 host n0 peers 0,1 dmodex card-2" \
	"rank 2 of 4 lrank 0 nrank 0 node 1 host n1 peers 2 dmodex card-3" \
	"rank 3 of 4 lrank 0 nrank 0 node 2 host n2 peers 3 dmodex card-0" \
	"rank 0 collected card-2" "rank 1 collected card-3" "rank 2 collected card-0" "rank 3 collected card-1"; do
	cat "$T"/pmix.*.out | grep -qxF "$line" || fail "pmix: no rank said '$line'"
done
note "pmix: maps, local peers and ranks, direct modex and a collecting fence right on 3 nodes"

run mpich-early 2,2 20 -- "$T/mpi-mpich" early 2
expect_fail mpich-early 2 3 "rank 2 exited with status 3"
run ompi-early 2,2 20 -- "$T/mpi-ompi" early 1
expect_fail ompi-early 2 3 "rank 1 exited with status 3"
run mpich-late 2,2 20 -- "$T/mpi-mpich" late 3
expect_fail mpich-late 2 3 "rank 3 exited with status 3" some
run ompi-late 2,2 20 -- "$T/mpi-ompi" late 0
expect_fail ompi-late 2 3 "rank 0 exited with status 3" some

run mpich-hang 2,2 2 -- "$T/mpi-mpich" hang 3
expect_fail mpich-hang 2 124 "fence timed out after 2 s: rank(s) 3 never reached it"
run ompi-hang 2,2 2 -- "$T/mpi-ompi" hang 0
expect_fail ompi-hang 2 124 "fence timed out after 2 s: rank(s) 0 never reached it"

# the servers' shared secret: same token, the job runs and its ranks never
# see it; a server with another token is refused and says so
QPOOL_PMI_TOKEN=s3cret run token-ok 1,1 20 -- sh -c 'echo "token ${QPOOL_PMI_TOKEN:-none}"'
for i in 0 1; do [ "$(cat "$T/token-ok.$i.rc")" = 0 ] || fail "token-ok: node $i exited $(cat "$T/token-ok.$i.rc")"; done
[ "$(cat "$T"/token-ok.*.out)" = "token none
token none" ] || fail "token-ok: ranks saw: $(cat "$T"/token-ok.*.out)"
rm -f "$T/bad.port"
QPOOL_PMI_TOKEN=s3cret "$PMI" --node 0 --peers 127.0.0.1:0,127.0.0.1:0 --ranks 1,1 --timeout 2 \
	--port-file "$T/bad.port" -- true > /dev/null 2> "$T/bad.0.err" &
root=$!; SERVERS+=("$root")
for ((i = 0; i < 100; i++)); do [ -s "$T/bad.port" ] && break; sleep 0.05; done
QPOOL_PMI_TOKEN=guess "$PMI" --node 1 --peers "$(cat "$T/bad.port")",127.0.0.1:0 --ranks 1,1 --timeout 2 \
	-- true > /dev/null 2> "$T/bad.1.err"
rc=$?
[ "$rc" = 1 ] && grep -q "root server refused this one" "$T/bad.1.err" || fail "a wrong token: rc $rc, $(cat "$T/bad.1.err")"
wait $root; rc=$?
[ "$rc" = 1 ] && grep -q "refused a server that says it is node 1" "$T/bad.0.err" ||
	fail "a wrong token, root: rc $rc, $(cat "$T/bad.0.err")"
note "a wrong token: $(cat "$T/bad.1.err")"

# a node whose server never comes: the root says so after the timeout
"$PMI" --node 0 --peers 127.0.0.1:0,127.0.0.1:0 --ranks 1,1 --timeout 1 -- true > /dev/null 2> "$T/lone.err" &
SERVERS+=($!)
wait $!; rc=$?
[ "$rc" = 1 ] && grep -qx "qpool-pmi: 1 node(s) never connected within 1 s" "$T/lone.err" ||
	fail "a missing node: rc $rc, $(cat "$T/lone.err")"

# bad input: one line, exit 2, nothing started
out=$("$PMI" --node 2 --peers 127.0.0.1:0,127.0.0.1:0 --ranks 1,1 -- true 2>&1); rc=$?
[ "$rc" = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] || fail "node 2 of 2 accepted (rc $rc): $out"
out=$("$PMI" --node 0 --peers 127.0.0.1:0 --ranks 0 -- true 2>&1); rc=$?
[ "$rc" = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] || fail "--ranks 0 accepted (rc $rc): $out"
out=$("$PMI" --node 0 --peers 127.0.0.1:0 --ranks 1 2>&1); rc=$?
[ "$rc" = 2 ] || fail "no command accepted (rc $rc): $out"
echo "pmi mpi ok"
