#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# After a restart qnoded adopts only its own wrappers: a user who runs a
# setuid-root program as `gded --spec <another user's job spec>` (so /proc
# shows a root-owned "gded" for that job) is not taken for the job's
# wrapper, so killing it cannot make qnoded fail the other user's job or
# empty its groups; the real gded is adopted and the job completes.
. "$(dirname "$0")/lib.sh"
command -v cc >/dev/null || skip "cc missing (the setuid test program)"
qp_setup
qp_start_server
qp_start_node n1
w=$QP_T/work/qpuser1

cat > "$QP_T/victim.sh" <<JOB
echo started > $w/started
i=0; while [ ! -e $QP_T/go ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
echo victim-ok
JOB
chmod 644 "$QP_T/victim.sh"
id=$(as qpuser1 qsub -N victim "$QP_T/victim.sh") || fail qsub
qp_wait_file "$w/started"
real=$(qp_wait_gded "$id") || exit 1

# A setuid-root program that only waits, run by qpuser2 under gded's argv.
printf '#include <unistd.h>\nint main(void) { for (int i = 0; i < 600; i++) sleep(1); return 0; }\n' > "$QP_T/waiter.c"
cc -o "$QP_T/waiter" "$QP_T/waiter.c" || fail "cannot build the setuid test program"
chmod 4755 "$QP_T/waiter"
spec=$QP_T/state/nodes/n1/jobs/$id.json
runuser -u qpuser2 -- bash -c "exec -a gded $QP_T/waiter --spec $spec" &
fake=$!
for _ in $(seq 100); do [ "$(stat -c %u "/proc/$fake" 2>/dev/null)" = 0 ] && break; sleep 0.05; done
[ "$(stat -c %u "/proc/$fake")" = 0 ] || skip "a setuid program does not show as root's in /proc here (nosuid?)"
note "real gded $real, fake $fake: $(tr '\0' ' ' < "/proc/$fake/cmdline")"

note "qnoded restarts"
qp_stop "$(qp_node_pid n1)"
qp_start_node n1
grep -q "adopted running gded pid $real" "$QP_T/qnoded-n1.log" || fail "qnoded did not adopt the real gded $real"
grep -q "adopted running gded pid $fake" "$QP_T/qnoded-n1.log" && fail "qnoded adopted qpuser2's fake gded $fake"
kill -KILL "$fake"; wait "$fake" 2>/dev/null
touch "$QP_T/go"
qp_wait "$id" completed failed
[ "$(qp_state "$id")" = completed ] || fail "job $id ended $(qp_state "$id") ($(qp_field "$id" reason)) after the fake gded died"
grep -qx victim-ok "$w/victim.o$id" || fail "job $id output: $(cat "$w/victim.o$id")"
echo PASS
