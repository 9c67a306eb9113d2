#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qacct --held (docs/RESOURCES.md, "Memory and licenses held over time"):
# jobs asking for memory (sbatch --mem, qsub -l mem) and licenses (-L,
# -l matlab=1) on a simulated node that sleeps their given run time;
# qacct --held by user and by account gives each group's MB-hours and
# license-hours, checked against each job's request x its run time:
# a job holds from dispatch to release, which is its run time plus the
# start and the report (tolerance: 0 to 1.5 s more per job, stated in
# docs/RESOURCES.md). Bad option mixes are one line and exit 2.
. "$(dirname "$0")/lib.sh"
qp_setup "
[licenses]
matlab = 4
comsol = 2"
qp_start_server
P=$QP_NODE_PREFIX
"$QP_BIN/qnoded" -f "$QPOOL_CONF" --simulate 1 --name "${P}s" \
	--sim-topology "pack:1 numa:1(memory=16GB) core:8 pu:1" >> "$QP_T/qnoded-sim.log" 2>&1 &
QP_PIDS+=("$!")
for _ in $(seq 200); do
	"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^${P}s-0 +up" && break
	sleep 0.05
done
"$QP_BIN/qstat" --nodes | grep -qE "^${P}s-0 +up" || fail "the simulated node is not up"

# Runs: a 4 s (1024 MB, matlab:2, account proj1), b 2 s (2048 MB,
# matlab:1, proj1), both qpuser1; c 3 s (512 MB, comsol:1), qpuser2.
a=$(as qpuser1 sbatch --parsable --export=QPOOL_SIM_RUNTIME=4 --mem=1024 -L matlab:2 -A proj1 --wrap=true) ||
	fail "sbatch a"
b=$(as qpuser1 qsub -v QPOOL_SIM_RUNTIME=2 -A proj1 -l mem=2gb,matlab=1 <<< true) || fail "qsub b"
c=$(as qpuser2 sbatch --parsable --export=QPOOL_SIM_RUNTIME=3 --mem=512M -L comsol -A proj2 --wrap=true) ||
	fail "sbatch c"
for j in "$a" "$b" "$c"; do qp_wait "$j" completed --timeout 60; done

held() { "$QP_BIN/qacct" --held "$@" --json; }
# row GROUP RESOURCE FIELD: one figure of the held report on stdin.
row() {
	python3 -c '
import json, sys
doc = json.load(sys.stdin)
k = doc["by"]
for r in doc["rows"]:
    if r[k] == sys.argv[1] and r["resource"] == sys.argv[2]:
        print(r[sys.argv[3]]); break
else:
    print("none")' "$@"
}
# within VALUE LOW HIGH: LOW <= VALUE <= HIGH (reals).
within() { python3 -c 'import sys; v, lo, hi = map(float, sys.argv[1:]); sys.exit(not (lo - 1e-9 <= v <= hi + 1e-9))' "$@"; }
# expect GROUP RESOURCE "AMOUNT SECONDS ..." : unit_hours is the sum of
# amount x seconds / 3600, up to 1.5 s more per job.
expect() {
	local json=$1 group=$2 res=$3 lo=0 hi=0 got amount secs
	shift 3
	while [ $# -gt 0 ]; do
		amount=$1 secs=$2
		shift 2
		lo=$(python3 -c "print($lo + $amount * $secs / 3600)")
		hi=$(python3 -c "print($hi + $amount * ($secs + 1.5) / 3600)")
	done
	got=$(row "$group" "$res" unit_hours <<< "$json")
	note "$group $res: $got unit-hours (expected $lo .. $hi)"
	[ "$got" != none ] || fail "no $res row for $group: $json"
	within "$got" "$lo" "$hi" || fail "$group $res: $got unit-hours, not within $lo .. $hi"
}

note "qacct --held (by user, the default)"
"$QP_BIN/qacct" --held || fail "qacct --held"
out=$(held) || fail "qacct --held --json"
expect "$out" qpuser1 mem 1024 4 2048 2
expect "$out" qpuser1 license:matlab 2 4 1 2
expect "$out" qpuser2 mem 512 3
expect "$out" qpuser2 license:comsol 1 3
[ "$(row qpuser1 license:comsol jobs <<< "$out")" = none ] || fail "qpuser1 held comsol: $out"
[ "$(row qpuser1 mem jobs <<< "$out")" = 2 ] || fail "qpuser1's mem row counts $(row qpuser1 mem jobs <<< "$out") jobs"
[ "$(row qpuser1 mem max <<< "$out")" = 2048.0 ] || fail "qpuser1's largest mem is $(row qpuser1 mem max <<< "$out")"

note "by account"
out=$(held --by account) || fail "qacct --held --by account"
expect "$out" proj1 mem 1024 4 2048 2
expect "$out" proj2 license:comsol 1 3

note "the window: only what was held inside it counts"
out=$(held -u qpuser2 --from "$(date +%s)" --to "$(($(date +%s) + 60))") || fail "qacct --held --from now"
[ "$(row qpuser2 mem unit_hours <<< "$out")" = none ] || fail "a window after the jobs still holds: $out"

note "CSV and bad mixes"
"$QP_BIN/qacct" --held --csv | head -n 1 | tr -d "\r" | grep -qx "user,resource,unit,jobs,job_hours,unit_hours,max" ||
	fail "qacct --held --csv header: $("$QP_BIN/qacct" --held --csv | head -n 1)"
for args in "--held -j $a" "--held --overhead" "--held --svg $QP_T/x.svg" "--held --by colour"; do
	# shellcheck disable=SC2086 # the words of each case
	msg=$("$QP_BIN/qacct" $args 2>&1) && fail "qacct $args accepted: $msg"
	[ "$(wc -l <<< "$msg")" = 1 ] || fail "qacct $args: not one line: $msg"
	note "qacct $args: $msg"
done
echo "qacct held ok"
