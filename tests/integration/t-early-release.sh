#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A job's CPUs go back to the pool as soon as its processes are gone,
# before its wrapper has removed its groups and written its result: on a
# one-CPU node the next job is dispatched before the first one's result
# is recorded, and both complete.
. "$(dirname "$0")/lib.sh"
# memcg_reclaim_threshold = 0: every group's page cache is reclaimed
# before its removal (v1), whatever the host's count of memory groups, so
# the first job's teardown is the slow one below.
qp_setup "$(printf '[node]\nmemcg_reclaim_threshold = 0')"
qp_start_server
qp_start_node n1 0

# 64 MiB of dirty page cache: removing the job's memory group reclaims it
# first (~100 ms on v1), while its CPU is already free. On a loaded
# machine the gap can shrink to a few ms, less than qpoold takes to run
# a pass: the early dispatch is asked of one pair in three (a build that
# waits for the result never shows it), the order every time.
early=
for attempt in 1 2 3; do
	first=$(as qpuser1 qsub -N writer <<'JOB'
dd if=/dev/zero of=big bs=1M count=64 status=none
sleep 0.3
JOB
) || fail "qsub writer"
	second=$(as qpuser1 qsub -N after <<'JOB'
echo after
JOB
) || fail "qsub after"
	qp_wait "$first" completed
	qp_wait "$second" completed
	"$QP_BIN/qacct" -j "$first" --json > "$QP_T/first.json" || fail "qacct -j $first"
	"$QP_BIN/qacct" -j "$second" --json > "$QP_T/second.json" || fail "qacct -j $second"
	rc=0
	python3 - "$QP_T/first.json" "$QP_T/second.json" <<'PY' || rc=$?
import json, sys
a, b = (json.load(open(p))["record"]["times"] for p in sys.argv[1:3])
print("first: exit %.1f ms, released %.1f ms, done %.1f ms after its exec" % tuple(
    (a[k] - a["exec"]) / 1e6 for k in ("exit", "released", "done")))
print("second: dispatched %.1f ms after the first's exit" % ((b["dispatch"] - a["exit"]) / 1e6))
# Same CPU, so the second waited for the first's processes to go; it
# did not wait for the first's result.
if b["dispatch"] < a["exit"]:
    sys.exit(1)
sys.exit(0 if b["dispatch"] < a["done"] else 2)
PY
	[ "$rc" = 1 ] && fail "attempt $attempt: the second job was dispatched before the first exited"
	[ "$rc" = 0 ] && { early=$attempt; break; }
	echo "attempt $attempt: dispatched only after the first job's result"
done
[ -n "$early" ] || fail "the CPU was not handed back before the result, in 3 pairs"
[ "$(qp_field "$first" exec_host)" = n1 ] && [ "$(qp_field "$second" exec_host)" = n1 ] || fail "not both on n1"
echo "early release ok"
