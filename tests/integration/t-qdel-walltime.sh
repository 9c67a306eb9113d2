#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qdel of a running job ends it and every process it started (setsid'ed
# ones too); a job that overruns its walltime is killed and shows timeout.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
qp_start_node n1

w=$QP_T/work/qpuser1
id=$(as qpuser1 qsub -N tree <<JOB
sleep 1000 &
echo \$! > $w/child.pid
setsid sleep 1001 < /dev/null > /dev/null 2>&1 &
echo \$! > $w/setsid.pid
echo started > $w/started
wait
JOB
) || fail "qsub"
qp_wait "$id" running
qp_wait_file "$w/started"
child=$(cat "$w/child.pid"); sid=$(cat "$w/setsid.pid")
kill -0 "$child" && kill -0 "$sid" || fail "job's processes not running"
[ "$(ps -o user= -p "$child")" = qpuser1 ] || fail "child not running as qpuser1"
as qpuser1 qdel "$id" || fail "qdel"
qp_wait "$id" cancelled --timeout 20
# The node's report does not know who cancelled it; the record does.
[ "$(qp_field "$id" reason)" = "cancelled by qpuser1" ] || fail "cancelled job's reason: $(qp_field "$id" reason)"
for p in "$child" "$sid"; do
	if kill -0 "$p" 2>/dev/null; then fail "process $p of a cancelled job still runs"; fi
done

# Walltime: 2 s limit, the job ignores SIGTERM and would sleep 1000 s.
# Its sleep is found by a duration no other test uses: this test's pid.
tok=1000.$$
id=$(as qpuser2 qsub -l walltime=00:00:02 <<JOB
trap '' TERM
sleep $tok
JOB
) || fail "qsub walltime"
qp_wait "$id" timeout --timeout 20
[ "$(qp_field "$id" job_state)" = F ] && [ "$(qp_field "$id" qpool_state)" = timeout ] || fail "not timeout"
pgrep -u qpuser2 -x -f "sleep $tok" && fail "timed-out job's sleep survives"
echo "qdel and walltime ok"
