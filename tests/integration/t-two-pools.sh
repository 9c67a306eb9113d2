#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two pools on one host, each with a node called n1 and a job with id 1:
# each pool's groups live under its own [node] cgroup_parent, so neither
# pool's teardown touches the other's job. A second qnoded given the same
# parent and node name as a running one refuses to start and says why.
. "$(dirname "$0")/lib.sh"
[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no memory controller"
qp_setup
# Both pools' TMPDIRs under one base of this test's own: on the shared
# /var/tmp, another test's pool runs a job 1 on a server named alike too,
# and may take pool A's TMPDIR name once it is removed.
mkdir -m 1777 "$QP_T/tmp" || fail "mkdir $QP_T/tmp"
printf '[node]\ntmpdir = %s\n' "$QP_T/tmp" >> "$QPOOL_CONF"
qp_start_server
qp_start_node n1

# Pool B: its own state, socket and cgroup parent; the same node name.
B=$QP_T/b
mkdir -p "$B"
confb=$B/qpool.conf
sed -e "s#^state_dir = .*#state_dir = $B/state#" -e "s#^socket = .*#socket = $B/qpoold.sock#" \
	-e "s#^cgroup_parent = .*#cgroup_parent = $QP_CG_PARENT-b#" "$QPOOL_CONF" > "$confb"
"$QP_BIN/qpoold" -f "$confb" >> "$QP_T/qpoold-b.log" 2>&1 &
QP_PIDS+=($!)
"$QP_BIN/qnoded" -f "$confb" --name n1 >> "$QP_T/qnoded-b-n1.log" 2>&1 &
QP_PIDS+=($!)
for i in $(seq 200); do
	QPOOL_CONF=$confb "$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^n1[[:space:]].*up" && break
	sleep 0.05
done
QPOOL_CONF=$confb "$QP_BIN/qstat" --nodes | grep -qE "^n1[[:space:]].*up" || fail "pool B's n1 did not register"

# Pool A's job 1 runs long, keeps a file in its TMPDIR and says when it
# started; pool B's job 1 ends at once. Both pools name the server alike
# and share the tmpdir base (pool B's config is a copy of A's): B's job
# must get a TMPDIR of its own and leave A's alone.
cat > "$QP_T/long.sh" <<JOB
echo kept > "\$TMPDIR/mine"
echo "\$TMPDIR" > $QP_T/work/qpuser1/a-tmpdir
echo started > $QP_T/work/qpuser1/a-started
sleep 20.$$
echo survived
JOB
cat > "$QP_T/short.sh" <<JOB
echo "\$TMPDIR" > $QP_T/work/qpuser2/b-tmpdir
[ -d "\$TMPDIR" ] && [ -w "\$TMPDIR" ]
JOB
chmod 644 "$QP_T/long.sh" "$QP_T/short.sh"
a=$(as qpuser1 qsub -N a "$QP_T/long.sh") || fail "qsub in pool A"
qp_wait_file "$QP_T/work/qpuser1/a-started"
b=$(QPOOL_CONF=$confb as qpuser2 qsub -N b "$QP_T/short.sh") || fail "qsub in pool B"
[ "$a" = "$b" ] || fail "job ids differ ($a, $b): the test needs the same id in both pools"
for i in $(seq 600); do
	st=$(QPOOL_CONF=$confb qp_state "$b")
	[ "$st" = completed ] && break
	[ "$st" = failed ] && fail "pool B's job $b failed: $(QPOOL_CONF=$confb qp_field "$b" reason)"
	sleep 0.05
done
[ "$st" = completed ] || fail "pool B's job $b is '$st', expected completed"
note "pool B's job $b completed; pool A's job $a is $(qp_state "$a")"
[ "$(qp_state "$a")" = running ] || fail "pool A's job $a is $(qp_state "$a") after pool B's job $b ended"
[ "$(QPOOL_CONF=$confb qp_field "$b" Exit_status)" = 0 ] || fail "pool B's job had no TMPDIR of its own"
ta=$(cat "$QP_T/work/qpuser1/a-tmpdir") tb=$(cat "$QP_T/work/qpuser2/b-tmpdir")
note "TMPDIR: pool A's job $ta, pool B's job $tb"
[ "$ta" != "$tb" ] || fail "both pools' job $a got TMPDIR $ta"
[ "$(cat "$ta/mine" 2>/dev/null)" = kept ] || fail "pool B's job $b removed pool A's TMPDIR $ta"
[ ! -e "$tb" ] || fail "pool B's TMPDIR $tb outlived its job"
pgrep -x -f "sleep 20.$$" -u qpuser1 >/dev/null || fail "pool A's job lost its processes"
grp=$(find /sys/fs/cgroup -maxdepth 4 -type d -path "*/$QP_CG_PARENT/n1/job.$a" | head -n 1)
[ -n "$grp" ] || fail "pool A's job group $QP_CG_PARENT/n1/job.$a is missing"

# Same parent and name as pool A's node: refused, with the reason.
"$QP_BIN/qnoded" -f "$QPOOL_CONF" --name n1 > "$QP_T/dup.log" 2>&1 &
dup=$!
for i in $(seq 200); do kill -0 $dup 2>/dev/null || break; sleep 0.05; done
if kill -0 $dup 2>/dev/null; then kill -TERM $dup; fail "a second qnoded on $QP_CG_PARENT/n1 started"; fi
cat "$QP_T/dup.log"
grep -q "in use by another qnoded" "$QP_T/dup.log" || fail "the second qnoded did not say why it stopped"
[ "$(qp_state "$a")" = running ] || fail "pool A's job $a is $(qp_state "$a") after the refused qnoded"

qdel_out=$(as qpuser1 qdel "$a") || fail "qdel $a: $qdel_out"
qp_wait "$a" cancelled
[ ! -e "$ta" ] || fail "pool A's TMPDIR $ta outlived its job"
echo "PASS"
