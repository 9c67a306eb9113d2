#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every attempt in qacct and tracejob (docs/PREEMPTION.md, "Attempts"): a
# job requeued by qrerun runs again and finishes; qacct -j lists its
# first attempt (node, dispatch/exec/exit/released stamps, why it ended)
# beside the job's own final stamps, and tracejob shows "attempt 1:" and
# "attempt 2:" lines, each with its own stamps.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
qp_start_node a1 0
W=$QP_T/work/qpuser1

note "a job runs, is requeued by qrerun, runs again and finishes"
j=$(as qpuser1 qsub -o /dev/null -e /dev/null <<JOB
if [ -e $W/second ]; then exit 0; fi
echo 1 > $W/second
for i in \$(seq 600); do sleep 0.1; done
JOB
) || fail "qsub: $j"
j=${j%%.*}
qp_wait "$j" running
qp_wait_file "$W/second"
"$QP_BIN/qrerun" "$j" || fail "qrerun $j"
qp_wait "$j" completed --timeout 60

note "qacct -j: two attempts, the first with its own stamps"
out=$("$QP_BIN/qacct" -j "$j" --csv) || fail "qacct -j $j"
echo "$out" | grep -E '^(attempt|suspended)' || true
grep -q '^attempts,2,' <<<"$out" || fail "qacct: no 'attempts,2': $out"
for f in node dispatch_time exec_time exit_time released_time end_time reason; do
	grep -qE "^attempt1_$f,[^,]+," <<<"$out" || fail "qacct: no attempt1_$f: $out"
done
grep -q '^attempt1_reason,.*rerun' <<<"$out" ||
	fail "qacct: attempt 1's reason: $(grep attempt1_reason <<<"$out")"
python3 - "$QP_BIN/qacct" "$j" <<'PY' || fail "qacct --json: the attempts' stamps are not their own"
import json, subprocess, sys
rec = json.loads(subprocess.check_output([sys.argv[1], "-j", sys.argv[2], "--json"]))
# The record the report was made from: its attempts and its own stamps.
def find(o):
    if isinstance(o, dict):
        if "attrs" in o and "times" in o:
            return o
        for v in o.values():
            r = find(v)
            if r: return r
    if isinstance(o, list):
        for v in o:
            r = find(v)
            if r: return r
r = find(rec)
a = r["attrs"]["attempts"]
assert len(a) == 1, a
t1, t2 = a[0]["times"], r["times"]
for k in ("dispatch", "exec", "exit", "released"):
    assert t1[k] > 0, (k, t1)
assert t1["released"] <= t2["dispatch"], (t1, t2)
assert t1["dispatch"] < t2["dispatch"] and t1["exec"] < t2["exec"], (t1, t2)
PY

note "tracejob: attempt 1 and attempt 2, each with its run"
out=$("$QP_BIN/tracejob" "$j") || fail "tracejob $j"
echo "$out"
grep -q "attempt 1: job run: sent to node" <<<"$out" || fail "tracejob: no attempt 1 run"
grep -q "attempt 1: job started as" <<<"$out" || fail "tracejob: no attempt 1 exec"
grep -q "attempt 1: requeued:" <<<"$out" || fail "tracejob: no attempt 1 requeue"
grep -q "attempt 2: job run: sent to node" <<<"$out" || fail "tracejob: no attempt 2 run"
grep -q "attempt 2: job ended: exit status 0" <<<"$out" || fail "tracejob: no attempt 2 end"
echo PASS
