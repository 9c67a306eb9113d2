#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qdel -W force (issue 29, item 14): on a node that answers, the forced
# job's CPUs go to the next job only once the node says its processes are
# gone, its CPU time is recorded, and it is killed without waiting out
# kill_grace. On a node that is down, force ends the job at once: there is
# nothing to wait for (the node, back, is told to kill its copy).
. "$(dirname "$0")/lib.sh"
qp_setup
# Long enough that a job ignoring SIGTERM outlives any wait below.
sed -i 's/^kill_grace = .*/kill_grace = 120/' "$QPOOL_CONF"
qp_start_server
node=${QP_NODE_PREFIX}n1
qp_start_node "$node" 0
w=$QP_T/work/qpuser1

note "a job that ignores SIGTERM, forced on a 1-CPU node"
a=$(as qpuser1 qsub -N stubborn <<JOB
trap '' TERM
echo \$\$ > $w/a.pid
while :; do :; done
JOB
) || fail "qsub stubborn"
a=${a%%.*}
qp_wait "$a" running
qp_wait_file "$w/a.pid"
apid=$(cat "$w/a.pid")
# At least a second of CPU, so its recorded CPU time cannot be 0 by chance.
for _ in $(seq 600); do
	t=$(ps -o times= -p "$apid" | tr -d ' ')
	[ "${t:-0}" -ge 1 ] && break
	sleep 0.1
done
[ "${t:-0}" -ge 1 ] || fail "the job used no CPU time (${t:-none})"
b=$(as qpuser1 qsub -N next <<JOB
if kill -0 $apid 2>/dev/null; then echo overlap; else echo alone; fi > $w/b.check
JOB
) || fail "qsub next"
b=${b%%.*}
[ "$(qp_state "$b")" = queued ] || fail "the next job is $(qp_state "$b") while the node is full"
as qpuser1 qdel -W force "$a" || fail "qdel -W force"
qp_wait "$b" completed failed --timeout 60
[ "$(cat "$w/b.check")" = alone ] || fail "the next job ran on the CPU while the forced job's processes still ran"
if kill -0 "$apid" 2>/dev/null; then fail "the forced job's process $apid still runs"; fi
qp_wait "$a" cancelled
qp_field "$a" reason | grep -q "force" || fail "the forced job's reason does not say force: $(qp_field "$a" reason)"
cpu=$(qp_field "$a" cpu_time)
echo "forced job: cpu_time $cpu, reason $(qp_field "$a" reason)"
case "$cpu" in ""|00:00:00.*) fail "the forced job's CPU time is not recorded: '$cpu'" ;; esac

note "force on a node that is down ends the job at once"
c=$(as qpuser1 qsub -N ondown <<JOB
echo \$\$ > $w/c.pid
sleep 1000
JOB
) || fail "qsub ondown"
c=${c%%.*}
qp_wait "$c" running
qp_wait_file "$w/c.pid"
cpid=$(cat "$w/c.pid")
npid=$(qp_node_pid "$node")
kill -KILL "$npid"
wait "$npid" 2>/dev/null
for _ in $(seq 200); do
	"$QP_BIN/qstat" --nodes | grep -qE "^${node}[[:space:]]+up" || break
	sleep 0.1
done
"$QP_BIN/qstat" --nodes | grep -qE "^${node}[[:space:]]+up" && fail "the node is still up"
as qpuser1 qdel -W force "$c" || fail "qdel -W force on a down node"
[ "$(qp_state "$c")" = cancelled ] || fail "forced on a down node: job $c is $(qp_state "$c")"
qp_start_node "$node" 0
# Back, the node hears the job is not its own any more and stops it.
for _ in $(seq 600); do kill -0 "$cpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$cpid" 2>/dev/null; then fail "the node, back, did not stop the forced job"; fi
kill -0 "$QP_SERVER_PID" || fail "qpoold died"
echo "qdel force ok"
