#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every link of the namespaced hosts (hosts.sh) delays each packet by 50 ms
# and loses 5% (tc netem): a burst of 200 jobs submitted from a login host
# completes, every job exactly once. Skipped where the kernel has no netem.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
qp_hosts_reexec "$@"
command -v tc >/dev/null || skip "needs tc (iproute2)"
unshare --net sh -c 'ip link set lo up && tc qdisc add dev lo root netem delay 1ms' 2>/dev/null ||
	skip "the kernel has no netem qdisc (sch_netem not built or not loadable)"
N=${NETEM_JOBS:-200}
qp_setup
qp_hosts_init
p=q$$
srv=${p}s login=${p}l nodes=("${p}a" "${p}b" "${p}c")
qp_host "$srv" 1
qp_host "${nodes[0]}" 2
qp_host "${nodes[1]}" 3
qp_host "${nodes[2]}" 4
qp_host "$login" 5
for h in "$srv" "${nodes[@]}" "$login"; do
	on "$h" tc qdisc add dev eth0 root netem delay 50ms loss 5% || fail "netem on $h"
done
qp_pool_start "$srv" 7001
qp_node_on "${nodes[0]}" 0
qp_node_on "${nodes[1]}" 1
qp_node_on "${nodes[2]}" 0

note "$N jobs from $login, four submitters at once, over links of 50 ms and 5% loss"
w=$QP_T/work/qpuser1
submit() {  # first last
	local k id
	for ((k = $1; k <= $2; k++)); do
		id=$(printf 'echo "$PBS_JOBID" >> %s/ledger\n' "$w" | on_as "$login" qpuser1 qsub -N b$k) ||
			{ echo "qsub $k failed" >&2; return 1; }
		echo "$id" >> "$QP_T/ids.$1"
	done
}
q=$((N / 4))
submit 1 $q & a=$!
submit $((q + 1)) $((2 * q)) & b=$!
submit $((2 * q + 1)) $((3 * q)) & c=$!
submit $((3 * q + 1)) "$N" & d=$!
wait $a && wait $b && wait $c && wait $d || fail "a qsub failed over the lossy links"
cat "$QP_T"/ids.* > "$QP_T/ids"
[ "$(wc -l < "$QP_T/ids")" = "$N" ] || fail "$(wc -l < "$QP_T/ids") ids printed, not $N"

for ((i = 0; i < 3000; i++)); do
	left=$("$QP_BIN/qstat" --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))') || left=?
	[ "$left" = 0 ] && break
	sleep 0.1
done
[ "$left" = 0 ] || fail "$left jobs unfinished after 300 s"
"$QP_BIN/qstat" -x --json > "$QP_T/all.json" || fail "qstat -x --json"
python3 - "$QP_T/all.json" "$QP_T/ids" "$w/ledger" <<'PY' || fail "jobs lost, failed or repeated (above)"
import json, sys, collections
jobs = {j["jobid"]: j for j in json.load(open(sys.argv[1]))}
printed = [int(l.split(".")[0]) for l in open(sys.argv[2]) if l.strip()]
ran = collections.Counter(int(l.split(".")[0]) for l in open(sys.argv[3]) if l.strip())
bad = [f"job {i}: {jobs.get(i, {}).get('state', 'missing')}, ran {ran[i]} times"
       for i in printed if jobs.get(i, {}).get("state") != "completed" or ran[i] != 1]
bad += [f"job {i} ran {n} times" for i, n in ran.items() if n > 1 and i not in printed]
print(f"{len(printed)} printed, {len(jobs)} in the store, {sum(ran.values())} runs")
for b in bad[:40]:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
echo "netem ok"
