#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qpool-pmi's doors against another user and against silent peers, with
# real MPICH ranks run as qpuser1 and the stranger as qpuser2 (or as
# qpuser1 itself where the owner's own processes are the point):
# * the root server: a stranger connected while the sisters start cannot
#   fail the job, mark a node done or take a sister's place;
# * PMI_PORT: nobody can speak as a rank whose connection has ended (a
#   rank's id is taken once), another user not at all: no abort;
# * PMI_PORT: 8 connections that never speak do not hold the ranks: the
#   job completes while they are still open;
# * PMIx: another user's client that lies about its uid cannot abort.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
PMI=$TOP/${BUILD:-build}/bin/qpool-pmi
PEER=$TOP/tests/integration/pmi-peer.py
PY=/usr/bin/python3

fail() { echo "FAIL: $*" >&2; for f in "$T"/*.err; do [ -s "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
note() { echo "--- $*"; }

[ -x "$PMI" ] || fail "build first: $PMI missing"
[ "$(id -u)" = 0 ] || skip "needs root (runs servers as qpuser1, a stranger as qpuser2)"
id qpuser1 >/dev/null 2>&1 && id qpuser2 >/dev/null 2>&1 || skip "needs users qpuser1 and qpuser2"
command -v mpicc.mpich >/dev/null || skip "mpicc.mpich missing (apt-get install libmpich-dev)"
[ -x "$PY" ] || skip "$PY missing"
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$TOP/tests/integration/lsan-pmix.supp}

T=$(mktemp -d /tmp/qpool-pmi-gate.XXXXXX) || exit 1
chmod 755 "$T"
PIDS=()     # every process this test started
cleanup() {
	local p i
	touch "$T"/go.pmix "$T"/go.root "$T"/go.port "$T"/go.silent "$T"/go.hold "$T"/check.root "$T"/check.silent
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		for ((i = 0; i < 50; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT

as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --init-groups -- "$@"; }
# wait_for FILE [SECONDS]: until FILE exists (bounded)
wait_for() {
	local i
	for ((i = 0; i < ${2:-60} * 20; i++)); do [ -e "$1" ] && return 0; sleep 0.05; done
	return 1
}

cat > "$T/mpi.c" <<'EOF2'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* mpi GATE R HOLD: every rank waits for the file GATE before MPI_Init,
 * rank R for the file HOLD after MPI_Finalize ("-": no file); each wait at
 * most 120 s. */
static void wait_file(const char *f)
{
	for (int i = 0; i < 2400 && access(f, F_OK) != 0; i++)
		usleep(50000);
}
int main(int argc, char **argv)
{
	const char *port = getenv("PMI_PORT");
	int rank, size, one, sum = 0;

	printf("pid %d port %s\n", (int)getpid(), port ? port : "none");
	fflush(stdout);
	if (strcmp(argv[1], "-") != 0)
		wait_file(argv[1]);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	one = rank + 1;
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("rank %d of %d sum %d\n", rank, size, sum);
	fflush(stdout);
	MPI_Finalize();
	if (rank == atoi(argv[2]) && strcmp(argv[3], "-") != 0)
		wait_file(argv[3]);
	return 0;
}
EOF2
mpicc.mpich -o "$T/mpi" "$T/mpi.c" || fail "mpicc.mpich"
mkdir -m 0777 "$T/w"   # the servers' and peers' files, writable by both users

# server NAME OPTIONS... -- CMD...: one server as qpuser1, in the
# background; sets SRV; output in $T/w/NAME.{out,err}
server() {
	local name=$1; shift
	mkdir -p "$T/w/$name.tmp" && chown qpuser1: "$T/w/$name.tmp"
	TMPDIR=$T/w/$name.tmp as qpuser1 "$PMI" --kvsname "$name" "$@" > "$T/w/$name.out" 2> "$T/w/$name.err" &
	SRV=$!; PIDS+=("$SRV")
}
# port_of NAME: the PMI_PORT a rank of server NAME printed
port_of() {
	local i p
	for ((i = 0; i < 1200; i++)); do
		p=$(sed -n 's/^pid [0-9]* port 127\.0\.0\.1://p' "$T/w/$1.out" | head -1)
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.05
	done
	return 1
}
# expect_sum NAME N: each of N ranks said it once with the right sum
expect_sum() {
	local r sum=$(($2 * ($2 + 1) / 2))
	for ((r = 0; r < $2; r++)); do
		[ "$(grep -cx "rank $r of $2 sum $sum" "$T/w/$1.out")" = 1 ] ||
			fail "$1: rank $r did not say 'rank $r of $2 sum $sum' once: $(cat "$T/w/$1.out")"
	done
}

# --- the root server's door ---------------------------------------------
# The root of 2 nodes with the job's token; a stranger (qpuser2) connects
# first and says fail, done, dmodex, a hello with a guessed token, or
# nothing; then the real sister comes. Before, the first connection took
# the sister's slot and its "fail" ended the job with status 9.
rm -f "$T/w/root.port"
QPOOL_PMI_TOKEN=0123456789abcdef server root --node 0 --peers 127.0.0.1:0,127.0.0.1:0 --ranks 1,1 \
	--timeout 30 --no-pmix --port-file "$T/w/root.port" -- "$T/mpi" - 0 "$T/go.root"
root=$SRV
wait_for "$T/w/root.port" 30 || fail "root: no port file"
addr=$(cat "$T/w/root.port")
as qpuser2 "$PY" "$PEER" root 127.0.0.1 "${addr##*:}" "$T/w/root.ready" "$T/check.root" \
	> "$T/w/stranger.out" 2> "$T/w/stranger.err" &
PIDS+=($!)
wait_for "$T/w/root.ready" 30 || fail "root: the stranger did not connect: $(cat "$T/w/stranger.err")"
QPOOL_PMI_TOKEN=0123456789abcdef server sister --node 1 --peers "$addr",127.0.0.1:0 --ranks 1,1 \
	--timeout 30 --no-pmix -- "$T/mpi" - -1 -
sister=$SRV
wait "$sister"; src=$?
# every node is here (rank 0 holds the job open): the door is closed
[ "$src" = 0 ] && kill -0 "$root" 2>/dev/null ||
	fail "root door: the sister exited $src, or the root is gone: $(cat "$T/w/sister.err" "$T/w/root.err")"
! as qpuser2 bash -c "exec 3<>/dev/tcp/127.0.0.1/${addr##*:}" 2>/dev/null ||
	fail "root door: still open to a stranger once every node is here"
touch "$T/go.root"
wait "$root"; rrc=$?
touch "$T/check.root"
[ "$rrc" = 0 ] && [ "$src" = 0 ] ||
	fail "root door: a stranger's frames reached the job: root exited $rrc, sister $src: $(cat "$T/w/root.err")"
cat "$T/w/root.out" "$T/w/sister.out" > "$T/w/root-both.out"
expect_sum root-both 2
grep -q "refused a server that says it is node" "$T/w/root.err" || fail "root door: no refusal said: $(cat "$T/w/root.err")"
[ "$(grep -c refused "$T/w/root.err")" = 1 ] || fail "root door: refusals not said once: $(cat "$T/w/root.err")"
note "root door: $(cat "$T/w/root.err")"

# --- PMI_PORT: a finished rank's id --------------------------------------
# 2 ranks over PMI_PORT; rank 0 finishes, rank 1 stays. Another user, then
# the owner's own process, say they are rank 0 and abort with 7.
server port --node 0 --peers 127.0.0.1:0 --ranks 2 --timeout 30 --no-pmix --pmi-port -- \
	"$T/mpi" - 1 "$T/go.port"
srv=$SRV
port=$(port_of port) || fail "port: no rank said its PMI_PORT"

for ((i = 0; i < 1200; i++)); do
	n=0
	for p in $(sed -n 's/^pid \([0-9]*\) .*/\1/p' "$T/w/port.out"); do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done
	[ "$n" = 1 ] && grep -qx "rank 0 of 2 sum 3" "$T/w/port.out" && break
	sleep 0.05
done
[ "$n" = 1 ] || fail "port: rank 0 did not finish ($n ranks alive)"
as qpuser2 "$PY" "$PEER" initack 127.0.0.1 "$port" 0 "$T/w/initack2.out" || fail "port: the stranger did not run"
kill -0 "$srv" 2>/dev/null ||
	fail "port: the job ended after another user said initack pmiid=0 and abort: $(cat "$T/w/port.err")"
as qpuser1 "$PY" "$PEER" initack 127.0.0.1 "$port" 0 "$T/w/initack1.out" || fail "port: the owner's peer did not run"
kill -0 "$srv" 2>/dev/null ||
	fail "port: the job ended after a second connection said it was rank 0 and aborted: $(cat "$T/w/port.err")"
touch "$T/go.port"
wait "$srv"; rc=$?
[ "$rc" = 0 ] || fail "port: the job exited $rc (7: the stranger's abort was obeyed): $(cat "$T/w/port.err")"
expect_sum port 2
! grep -q "rc=0" "$T/w/initack2.out" "$T/w/initack1.out" ||
	fail "port: rank 0's id was given again: $(cat "$T/w/initack2.out" "$T/w/initack1.out")"
grep -q "refused a connection of uid $(id -u qpuser2), not the job's owner" "$T/w/port.err" ||
	fail "port: the stranger's refusal not said: $(cat "$T/w/port.err")"
note "port: $(cat "$T/w/port.err"); the owner's second rank 0 got: $(cat "$T/w/initack1.out")"

# --- PMI_PORT: silent connections ------------------------------------------
# 8 connections of the job's owner that never speak, opened before the
# ranks connect. Before, each held the server's only thread 2 s in a
# blocking read (and was then closed): the ranks waited behind them.
server silent --node 0 --peers 127.0.0.1:0 --ranks 2 --timeout 60 --no-pmix --pmi-port -- \
	"$T/mpi" "$T/go.silent" 1 "$T/go.hold"
srv=$SRV
port=$(port_of silent) || fail "silent: no rank said its PMI_PORT"
as qpuser1 "$PY" "$PEER" silent 127.0.0.1 "$port" 8 "$T/w/silent.ready" "$T/check.silent" "$T/w/silent.open" \
	2> "$T/w/holder.err" &
holder=$!; PIDS+=("$holder")
wait_for "$T/w/silent.ready" 30 || fail "silent: the 8 connections were not made: $(cat "$T/w/holder.err")"
touch "$T/go.silent"
# every rank past MPI_Init (rank 1 then holds the job open): are the 8 open?
for ((i = 0; i < 1200; i++)); do [ "$(grep -c "sum 3$" "$T/w/silent.out")" = 2 ] && break; sleep 0.05; done
touch "$T/check.silent"
wait "$holder"
touch "$T/go.hold"
wait "$srv"; rc=$?
[ "$rc" = 0 ] || fail "silent: the job exited $rc: $(cat "$T/w/silent.err")"
expect_sum silent 2
[ "$(cat "$T/w/silent.open")" = 8 ] ||
	fail "silent: the ranks got past MPI_Init only after the server had closed $((8 - $(cat "$T/w/silent.open"))) of the 8 silent connections (it waited on them)"
note "silent: 2 ranks through PMI_PORT while 8 silent connections stayed open"
# --- PMIx: another user who lies about its uid ---------------------------
# libpmix serves its clients over loopback TCP and takes the uid a client
# sends. qpuser2 runs a real PMIx client with geteuid/getegid made to say
# qpuser1's, names the job's namespace and its finished rank 0, and calls
# PMIx_Abort(7). Before, the job ended with 7.
if pkg-config --exists pmix; then
	cat > "$T/shim.c" <<'EOF2'
#include <stdlib.h>
#include <sys/types.h>
uid_t geteuid(void) { return (uid_t)atoi(getenv("FAKE_ID")); }
gid_t getegid(void) { return (gid_t)atoi(getenv("FAKE_ID")); }
EOF2
	cat > "$T/forge.c" <<'EOF2'
#include <pmix.h>
#include <stdio.h>
int main(void)
{
	pmix_proc_t me;
	pmix_status_t rc = PMIx_Init(&me, NULL, 0);

	printf("init %s\n", PMIx_Error_string(rc));
	fflush(stdout);
	if (rc == PMIX_SUCCESS)
		printf("abort %s\n", PMIx_Error_string(PMIx_Abort(7, "forged", NULL, 0)));
	return 0;
}
EOF2
	cc -shared -fPIC -o "$T/shim.so" "$T/shim.c" || fail "cc shim"
	# shellcheck disable=SC2046 # pkg-config prints several flags
	cc -o "$T/forge" "$T/forge.c" $(pkg-config --cflags --libs pmix) || fail "cc forge (libpmix-dev)"
	server pmix --node 0 --peers 127.0.0.1:0 --ranks 2 --timeout 30 -- \
		sh -c 'echo "uri $PMIX_SERVER_URI41"; [ "$PMIX_RANK" = 0 ] && exit 0
		       for i in $(seq 2400); do [ -e "$0" ] && exit 0; sleep 0.05; done; exit 1' "$T/go.pmix"
	srv=$SRV
	for ((i = 0; i < 1200; i++)); do [ "$(grep -c '^uri ' "$T/w/pmix.out")" = 2 ] && break; sleep 0.05; done
	uri=$(sed -n 's/^uri //p' "$T/w/pmix.out" | head -1)
	[ -n "$uri" ] || fail "pmix: no rank said the server's URI: $(cat "$T/w/pmix.err")"
	as qpuser2 env PMIX_NAMESPACE=pmix PMIX_RANK=0 PMIX_SERVER_URI41="$uri" PMIX_SECURITY_MODE=native \
		FAKE_ID="$(id -u qpuser1)" LD_PRELOAD="$T/shim.so" timeout 10 "$T/forge" > "$T/w/forge.out" 2>&1
	kill -0 "$srv" 2>/dev/null ||
		fail "pmix: the job ended after another user's forged PMIx_Abort: $(cat "$T/w/pmix.err" "$T/w/forge.out")"
	touch "$T/go.pmix"
	wait "$srv"; rc=$?
	[ "$rc" = 0 ] || fail "pmix: the job exited $rc: $(cat "$T/w/pmix.err" "$T/w/forge.out")"
	grep -q "PMIx: severed 1 connection(s) of another user" "$T/w/pmix.err" ||
		fail "pmix: the stranger's connection was not said severed: $(cat "$T/w/pmix.err")"
	note "pmix: $(cat "$T/w/pmix.err"); the stranger's client: $(head -1 "$T/w/forge.out")"
fi
echo "pmi gate ok"
