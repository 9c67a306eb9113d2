#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Thousands of jobs: qstat, qstat --json and qacct page through them (a
# single answer would pass the 1 MiB message cap), and nothing hangs.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
# No node: the jobs stay queued. 2,500 of them, as one user, pipelined.
as qpuser1 python3 "$QP_TOP/bench/submit" 2500 --workdir "$QP_T/work/qpuser1" > "$QP_T/submit.out" ||
	fail "bulk submit: $(cat "$QP_T/submit.out")"
n=$(timeout 30 "$QP_BIN/qstat" --table | grep -cE '^[0-9]+ ') || fail "qstat failed or hung"
[ "$n" = 2500 ] || fail "qstat shows $n jobs, want 2500"
n=$(timeout 30 "$QP_BIN/qstat" --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(len(j), len(set(x["jobid"] for x in j)))') ||
	fail "qstat --json failed or hung"
[ "$n" = "2500 2500" ] || fail "qstat --json: $n (count, distinct), want 2500 2500"
n=$(as qpuser1 timeout 30 qstat -f | grep -c '^Job Id: ') || fail "qstat -f failed or hung"
[ "$n" = 2500 ] || fail "qstat -f shows $n jobs"
for id in $(seq 1 2500 | shuf -n 40 --random-source=<(yes)); do "$QP_BIN/qdel" "$id" || fail "qdel $id"; done
out=$(timeout 30 "$QP_BIN/qacct" --json --by user) || fail "qacct failed or hung: $out"
n=$(echo "$out" | python3 -c 'import json,sys; r=json.load(sys.stdin)["rows"][0]; print(r["jobs"], r["cancelled"])') ||
	fail "qacct --json unreadable"
[ "$n" = "2500 40" ] || fail "qacct counts '$n' (jobs, cancelled), want '2500 40'"
echo "many jobs ok"
