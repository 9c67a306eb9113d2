#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# No listing outgrows the wire's 1 MiB cap (issue 16): a queue of 12,000
# jobs (qstat -Q --order, ~1.8 MB as one reply), jobs with 4,000-byte paths
# (qstat, qstat -f, qacct: 1,000 of them were 4 MB as one page), and 5,000
# simulated nodes (qstat --nodes, qacct) all answer in pages, in full, for every
# user.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
w=$QP_T/work/qpuser1
long=/$(head -c 3990 /dev/zero | tr '\0' 'd')

note "12,000 queued jobs, the first 200 with 4,000-byte working directories"
as qpuser1 python3 "$QP_TOP/bench/submit" 200 --workdir "$long" > /dev/null || fail "submit long paths"
as qpuser1 python3 "$QP_TOP/bench/submit" 11800 --workdir "$w" > /dev/null || fail "submit"
n=$(as qpuser2 "$QP_BIN/qstat" -Q --order batch | grep -cE '^ *[0-9]+ ')
echo "qstat -Q --order batch: $n places"
[ "$n" = 12000 ] || fail "qstat -Q --order lists $n places, want 12000"
n=$(as qpuser2 "$QP_BIN/qstat" -Q --order batch --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["order"]))')
[ "$n" = 12000 ] || fail "qstat -Q --order --json lists $n places, want 12000"
n=$(as qpuser2 "$QP_BIN/qstat" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
echo "qstat --json: $n jobs"
[ "$n" = 12000 ] || fail "qstat lists $n jobs, want 12000"
n=$(as qpuser1 "$QP_BIN/qstat" -f 1 2 3 | grep -c "$long")
[ "$n" -ge 3 ] || fail "qstat -f of long-path jobs: $n lines with the path"

note "every job cancelled: qacct reads them back"
"$QP_BIN/qmgr" disable batch "cleanup" || fail qmgr
# Nothing of the 11,800 left queued goes to the simulated nodes below:
# their listing is what is tested, and 5,000 dispatches would only load
# the host.
"$QP_BIN/qmgr" stop batch "cleanup" || fail "qmgr stop"
as qpuser1 "$QP_BIN/qdel" $(seq 1 200) > /dev/null || fail "qdel"
out=$(as qpuser2 "$QP_BIN/qacct" --by user --csv 2>&1) || fail "qacct: $out"
echo "$out"
n=$(echo "$out" | awk -F, '$1 == "qpuser1" {print $2}')
[ "$n" = 12000 ] || fail "qacct counts $n jobs of qpuser1, want 12000"

note "5,000 simulated nodes"
"$QP_BIN/qnoded" -f "$QPOOL_CONF" --simulate 5000 --name s$$ --sim-topology "pack:1 core:1 pu:1" >> "$QP_T/qnoded-sim.log" 2>&1 &
QP_PIDS+=($!)
for _ in $(seq 300); do
	n=$(as qpuser2 "$QP_BIN/qstat" --nodes 2>/dev/null | grep -cE "^s$$-[0-9]+[[:space:]].*up")
	[ "$n" = 5000 ] && break
	sleep 0.2
done
echo "qstat --nodes: $n simulated nodes up"
[ "$n" = 5000 ] || fail "qstat --nodes lists $n of 5000 nodes: $(as qpuser2 "$QP_BIN/qstat" --nodes 2>&1 | tail -n 1)"
n=$("$QP_BIN/qmgr" nodes | grep -cE "^s$$-[0-9]+[[:space:]]")
[ "$n" = 5000 ] || fail "qmgr nodes lists $n of 5000 nodes"
# qacct asks for the nodes too, and acct's last page carries them.
out=$(timeout 120 "$QP_BIN/qacct" --utilization --csv 2>&1) || fail "qacct --utilization with 5,000 nodes: $out"
echo "qacct --utilization with 5,000 nodes: $(echo "$out" | wc -l) lines"
kill -0 "$QP_SERVER_PID" || fail "qpoold died"
echo "pages ok"
