#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A parallel step on a pool of two nodes on this one host, whose names
# (c1, c2) no file resolves: `srun --mpi=pmi2` in an `sbatch -N 2` job
# runs on both nodes; a step whose node's agent fails (a rank of node 1
# that exits 3 before the wire-up, a rank killed by a signal while the
# others wait in a fence) ends whole and at once: srun names the node and
# the reason in one line and exits non-zero, the script goes on, and the
# job ends long before its walltime.
. "$(dirname "$0")/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
qp_setup
qp_start_server
# the same two CPUs: a pool on one host
qp_start_node c1 0-1
qp_start_node c2 0-1
w=$QP_T/work/qpuser1
out=$(cc -O1 -o "$w/pmi2" "$QP_TOP/tests/integration/pmi2-client.c" -lpmi2 2>&1) || fail "cc -lpmi2: $out"
chmod 755 "$w/pmi2"

# A rank that fails on node 1 (SLURM_NODEID 1), before or inside the
# wire-up, while node 0's rank waits in PMI's fence for it.
cat > "$w/fail1.sh" <<'EOF2'
#!/bin/sh
[ "$SLURM_NODEID" = 1 ] || exec ./pmi2
case $1 in
exit) exit 3 ;;
kill) kill -9 $$ ;;
esac
EOF2
cat > "$w/job.sh" <<'JOB'
#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=1 -t 10 -J stepabort
srun --mpi=pmi2 ./pmi2 > ok.out 2> ok.err; echo "ok=$?"
srun --mpi=pmi2 ./fail1.sh exit > exit.out 2> exit.err; echo "exit=$?"
srun --mpi=pmi2 ./fail1.sh kill > kill.out 2> kill.err; echo "kill=$?"
echo end
JOB
chmod 755 "$w/fail1.sh" "$w/job.sh"
chown -R qpuser1: "$w"
out=$(as qpuser1 sbatch --parsable -o job.out job.sh) || fail "sbatch: $out"
id=${out%%;*}
# a step that hangs holds the job to its 10 minutes: 100 s is plenty
qp_wait "$id" completed failed --timeout 100
cat "$w/job.out" "$w"/*.err
grep -qx "ok=0" "$w/job.out" || fail "the good step: $(cat "$w/job.out") $(cat "$w/ok.err")"
[ "$(grep -c '^rank=' "$w/ok.out")" = 2 ] || fail "the good step: not 2 ranks: $(cat "$w/ok.out")"
grep -qx "exit=3" "$w/job.out" ||
	fail "a rank exiting 3 before the wire-up: $(cat "$w/job.out") $(cat "$w/exit.err")"
grep -q "node 1" "$w/exit.err" || fail "exit: no line names node 1: $(cat "$w/exit.err")"
grep -Eqx "kill=(137|9)" "$w/job.out" || fail "a rank killed: $(cat "$w/job.out") $(cat "$w/kill.err")"
grep -q "node 1" "$w/kill.err" || fail "kill: no line names node 1: $(cat "$w/kill.err")"
grep -qx end "$w/job.out" || fail "the script did not go on: $(cat "$w/job.out")"

note "a root ended by a signal does not wait for a sister that never came"
"$QP_BIN/qpool-pmi" --node 0 --peers 127.0.0.1:0,127.0.0.1:0 --ranks 1,1 --timeout 600 --mpi=pmi \
	--port-file "$QP_T/root.port" -- sleep 600 2> "$QP_T/root.err" &
root=$!
qp_wait_file "$QP_T/root.port" 60
kill -TERM "$root"
for ((i = 0; i < 600; i++)); do kill -0 "$root" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$root" 2>/dev/null; then
	kill -KILL "$root"
	fail "the root still runs 60 s after SIGTERM: $(cat "$QP_T/root.err")"
fi
wait "$root"; rc=$?
[ "$rc" = 143 ] || fail "the root exited $rc after SIGTERM, expected 143: $(cat "$QP_T/root.err")"
echo PASS
