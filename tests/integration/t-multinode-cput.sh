#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A job across two nodes (two qnoded on one host) that burns ~2 s of CPU
# on its sister only, through qpool-rsh: its CPU time is the sum over its
# nodes in qstat -f (resources_used.cput, cpu_time), qacct -j (cpu_time)
# and sacct (TotalCPU), and the user's CPU share in qacct's summary, not
# its primary's alone; the sister's own figure stays in the job's
# per-node record (alloc).
. "$(dirname "$0")/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
command -v python3 >/dev/null || skip "needs python3"
qp_setup
qp_start_server
qp_start_node na 0
qp_start_node nb 1

note "a 2-node job that burns 2 s of CPU on its sister only"
id=$(as qpuser1 qsub -N burn -l select=2:ncpus=1 -l place=scatter -l walltime=00:02:00 <<'JOB'
other=$(sed -n 2p "$PBS_NODEFILE")
echo "primary=$(head -n 1 "$PBS_NODEFILE") other=$other"
qpool-rsh "$other" 'python3 -c "
import time
while time.process_time() < 2.2:
    pass
print(\"burned\", round(time.process_time(), 2))
"'
echo "rsh=$?"
JOB
) || fail "qsub of the 2-node job"
qp_wait "$id" completed failed --timeout 120
out=$QP_T/work/qpuser1/burn.o$id
qp_wait_file "$out"
cat "$out"
grep -q "^burned 2\.[2-9]" "$out" && grep -qx "rsh=0" "$out" || fail "the burner did not run on the sister: $(cat "$out")"
[ "$(qp_state "$id")" = completed ] || fail "job $id: $(qp_state "$id"): $(qp_field "$id" reason)"

# The sister's own figure, from the per-node record.
sis=$("$QP_BIN/qstat" -x --json "$id" | python3 -c '
import json, sys
d = json.load(sys.stdin)
j = d[0] if isinstance(d, list) else d
print(j["alloc"][1]["cpu_ns"])') || fail "no per-node record of job $id"
note "sister's cpu_ns=$sis"
[ "$sis" -ge 2000000000 ] || fail "the sister reported $sis ns of CPU, not ~2 s"

cput=$(qp_field "$id" resources_used.cput)
ct=$(qp_field "$id" cpu_time)
note "qstat -f: resources_used.cput=$cput cpu_time=$ct"
# HH:MM:SS, the 2 s of the sister in it
secs=$(awk -F: '{ print $1 * 3600 + $2 * 60 + int($3) }' <<<"$cput")
[ "$secs" -ge 2 ] || fail "resources_used.cput=$cput does not count the sister's CPU"
ctsecs=$(awk -F: '{ print $1 * 3600 + $2 * 60 + $3 }' <<<"$ct")
awk -v s="$ctsecs" 'BEGIN { exit !(s >= 2) }' || fail "cpu_time=$ct does not count the sister's CPU"

acct=$("$QP_BIN/qacct" -j "$id" --json) || fail "qacct -j $id: $acct"
ns=$(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
def find(o):
    if isinstance(o, dict):
        if o.get("field") == "cpu_time":
            return o.get("value")
        if "cpu_time" in o and not isinstance(o["cpu_time"], (dict, list)):
            return o["cpu_time"]
        for v in o.values():
            r = find(v)
            if r is not None:
                return r
    if isinstance(o, list):
        for v in o:
            r = find(v)
            if r is not None:
                return r
print(find(d))' "$acct")
note "qacct -j: cpu_time=$ns"
[ "$ns" != None ] && [ "${ns%%.*}" -ge 2000000000 ] || fail "qacct -j cpu_time=$ns does not count the sister's CPU: $acct"

txt=$("$QP_BIN/qacct" -j "$id") || fail "qacct -j $id: $txt"
grep -E "^ *cpu_time@nb +[0-9]+ +ns" <<<"$txt" | awk '{ exit !($2 >= 2000000000) }' ||
	fail "qacct -j: no sister's own cpu_time@nb of ~2 s: $txt"
grep -qE "^ *mem_peak@na +[0-9]+ +bytes" <<<"$txt" || fail "qacct -j: no primary's own mem_peak@na: $txt"

tc=$(as qpuser1 sacct -j "$id" -n -X -P -o TotalCPU) || fail "sacct -j $id"
note "sacct TotalCPU=$tc"
tcs=$(awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print int(s) }' <<<"${tc%%.*}")
[ "$tcs" -ge 2 ] || fail "sacct TotalCPU=$tc does not count the sister's CPU"

# The summaries: the user's CPU share counts it too (the primary's few
# ms alone would be well under 1 % of 2 CPUs).
sum=$("$QP_BIN/qacct" --by user -u qpuser1 --json) || fail "qacct --by user: $sum"
pct=$(python3 -c '
import json, sys
def find(o):
    if isinstance(o, dict):
        if "cpu_delivered_pct" in o:
            return o["cpu_delivered_pct"]
        for v in o.values():
            r = find(v)
            if r is not None:
                return r
    if isinstance(o, list):
        for v in o:
            r = find(v)
            if r is not None:
                return r
print(find(json.loads(sys.argv[1])))' "$sum")
note "qacct --by user: cpu_delivered_pct=$pct"
awk -v p="$pct" 'BEGIN { exit !(p + 0 >= 3) }' || fail "qacct's CPU % of the user is $pct: the sister's CPU is not in it"
echo PASS
