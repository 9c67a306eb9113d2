#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qnoded restarts (SIGTERM and SIGKILL, CRASH_ROUNDS rounds of each, 1 by
# default) while jobs run: the jobs keep running, the new qnoded re-adopts
# them, a job that ended while no qnoded ran is reported from its result
# file, and every record is complete: all nine stamps, CPU time, peak
# memory, exit status, output intact.
. "$(dirname "$0")/lib.sh"
rounds=${CRASH_ROUNDS:-1}
qp_setup
qp_start_server
qp_start_node n1

w=$QP_T/work/qpuser1
forget_pid() {
	local i
	for i in "${!QP_PIDS[@]}"; do [ "${QP_PIDS[$i]}" = "$1" ] && unset 'QP_PIDS[i]'; done
	QP_PIDS=("${QP_PIDS[@]}")
}

all=()
for ((round = 1; round <= rounds; round++)); do
	for sig in TERM KILL; do
		tag=$round$sig
		# long: burns CPU across the restart, 2 s of its own CPU at least
		# (not of the clock: a loaded machine gives it a fraction of a
		# core) and until the test says the new qnoded is up (a slow
		# host, e.g. vm-check's TCG guests, may take longer to restart
		# it); short: ends while qnoded is away.
		long=$(as qpuser1 qsub -N "long$tag" <<JOB
echo start > $w/long.$tag
python3 -c 'import os, sys, time
t = time.time()
while time.process_time() < 2 or not os.path.exists(sys.argv[1]):
    if time.time() > t + 120: sys.exit(1)' $w/go.$tag
echo end >> $w/long.$tag
JOB
) || fail qsub
		short=$(printf 'echo start > %s/short.%s\nsleep 1\necho end >> %s/short.%s\n' "$w" "$tag" "$w" "$tag" |
			as qpuser1 qsub -N "short$tag") || fail qsub
		qp_wait "$long" running
		qp_wait "$short" running
		qp_wait_file "$w/long.$tag"
		qp_wait_file "$w/short.$tag"
		pid=$(qp_node_pid n1)
		note "round $round: jobs $long $short; qnoded gets SIG$sig"
		kill -"$sig" "$pid"
		wait "$pid" 2>/dev/null
		forget_pid "$pid"
		sleep 2
		pgrep -f "gded --spec $QP_T/state/nodes/n1/jobs/$long.json" >/dev/null ||
			fail "job $long's gded died with qnoded (SIG$sig)"
		[ "$(qp_state "$long")" = running ] || fail "job $long is $(qp_state "$long") while qnoded is away"
		qp_start_node n1
		touch "$w/go.$tag"
		qp_wait "$long" completed --timeout 30
		qp_wait "$short" completed --timeout 30
		for f in long short; do
			[ "$(cat "$w/$f.$tag")" = "$(printf 'start\nend')" ] || fail "job $f.$tag output: $(cat "$w/$f.$tag")"
		done
		all+=("$long" "$short")
	done
done

"$QP_BIN/qstat" -x --json > "$QP_T/all.json" || fail "qstat -x --json"
python3 - "$QP_T/all.json" "${all[@]}" <<'PY' || fail "incomplete accounting after qnoded restarts"
import json, sys
jobs = {j["jobid"]: j for j in json.load(open(sys.argv[1]))}
stamps = ["submit", "dispatch", "launch", "wrap", "fenced", "exec", "exit", "released", "done"]
bad = []
for i in map(int, sys.argv[2:]):
    j = jobs[i]
    t = j["times"]
    missing = [s for s in stamps if s not in t]
    if missing:
        bad.append(f"job {i} ({j['name']}): no {' '.join(missing)}")
        continue
    order = [t[s] for s in stamps]
    if order != sorted(order):
        bad.append(f"job {i}: stamps out of order {order}")
    if j["exit_status"] != 0 or j["exit_signal"] is not None:
        bad.append(f"job {i}: exit {j['exit_status']} signal {j['exit_signal']}")
    if j["name"].startswith("long") and (j["cpu_ns"] or 0) < 1e9:
        bad.append(f"job {i}: cpu_ns {j['cpu_ns']} for a job that burnt 2 s of CPU")
    if not j.get("mem_peak"):
        bad.append(f"job {i}: no mem_peak")
    print(f"job {i} {j['name']}: cpu {(j['cpu_ns'] or 0)/1e9:.2f}s mem_peak {j['mem_peak']}")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
echo "qnoded restarts ok: $((rounds * 2)) restarts, ${#all[@]} jobs re-adopted with full records"
