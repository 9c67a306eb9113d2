#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qacct on a real pool: a 2 s job shows 2 s of connect time, every job's
# stamps are in order, utilization sums to 100 %, every JSON and the SVG
# parse, and restarting qpoold mid-workload loses no record.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is needed to parse JSON and SVG"
qp_setup
qp_start_server
qp_start_node n1 0
qp_start_node n2 1
QACCT=$QP_BIN/qacct
T=$QP_T

# pyjob FILE EXPR...: runs Python over the JSON in FILE (bound to d).
pycheck() {
	local file=$1; shift
	python3 - "$file" "$@" <<'PY' || fail "check on $file failed"
import json, sys
d = json.load(open(sys.argv[1]))
for expr in sys.argv[2:]:
    if not eval(expr):
        print("check failed: %s" % expr, file=sys.stderr)
        sys.exit(1)
PY
}

note "workload: a 2 s job, short jobs of two users, a failure, a qdel"
sleeper=$(echo 'sleep 2' | as qpuser1 qsub -N sleeper) || fail "qsub"
shorts=()
for i in 1 2 3; do
	shorts+=("$(echo "echo s$i" | as qpuser2 qsub -q short -N s$i)") || fail "qsub"
done
failing=$(echo 'exit 3' | as qpuser2 qsub -N failing) || fail "qsub"
victim=$(echo 'sleep 30' | as qpuser1 qsub -N victim) || fail "qsub"
qp_wait "$victim" running
"$QP_BIN/qdel" "$victim" || fail "qdel"
for id in "$sleeper" "${shorts[@]}"; do qp_wait "$id" completed; done
qp_wait "$failing" failed
qp_wait "$victim" cancelled

note "qacct -j $sleeper"
"$QACCT" -j "$sleeper" || fail "qacct -j"
"$QACCT" -j "$sleeper" --json > "$T/job.json" || fail "qacct -j --json"
python3 -m json.tool "$T/job.json" > /dev/null || fail "qacct -j --json is not JSON"
pycheck "$T/job.json" \
	'abs(d["derived"]["connect"] - 2.0) <= 0.1' \
	'd["derived"]["startup"] >= 0 and d["derived"]["teardown"] >= 0' \
	'd["derived"]["wait"] >= 0 and d["derived"]["overhead"] >= 0' \
	'abs(d["derived"]["elapsed"] - d["derived"]["startup"] - d["derived"]["connect"] - d["derived"]["teardown"]) < 1e-6' \
	'd["record"]["jobid"] == '"$sleeper" \
	'any(r["field"] == "exec_mono_ns" for r in d["rows"])'
"$QACCT" -j "$sleeper" --csv | grep -q '^connect,2\.' || fail "qacct -j --csv has no connect of 2.x s"

note "stamps of every job in order"
"$QACCT" --json > "$T/summary.json" || fail "qacct --json"
python3 -m json.tool "$T/summary.json" > /dev/null || fail "summary JSON does not parse"
"$QP_BIN/qstat" -x >/dev/null
for id in "$sleeper" "${shorts[@]}" "$failing" "$victim"; do
	"$QACCT" -j "$id" --json > "$T/j$id.json" || fail "qacct -j $id"
	python3 - "$T/j$id.json" <<'PY' || fail "stamps of job $id out of order"
import json, sys
r = json.load(open(sys.argv[1]))["record"]
names = "submit dispatch launch wrap fenced exec exit released done".split()
t = r["times"]
present = [n for n in names if n in t]
ran = r["state"] in ("completed", "failed")
if ran and present != names:
    sys.exit("job %s (%s) lacks stamps: has %s" % (r["jobid"], r["state"], present))
for a, b in zip(present, present[1:]):
    if t[a] > t[b]:
        sys.exit("job %s: %s %d > %s %d" % (r["jobid"], a, t[a], b, t[b]))
m = r.get("mono", {})
mn = [n for n in names if n in m]
for a, b in zip(mn, mn[1:]):
    if m[a] > m[b]:
        sys.exit("job %s: mono %s > %s" % (r["jobid"], a, b))
PY
done
pycheck "$T/summary.json" \
	'sum(r["jobs"] for r in d["rows"]) == 6' \
	'[r["queue"] for r in d["rows"]] == ["batch", "short"]' \
	'next(r for r in d["rows"] if r["queue"] == "batch")["failed"] == 1' \
	'next(r for r in d["rows"] if r["queue"] == "batch")["cancelled"] == 1'

note "summaries, overhead and utilization in every format"
for args in "" "--by user" "--by node" "--by day" "--overhead" "--overhead --queue short" "--utilization"; do
	# shellcheck disable=SC2086
	"$QACCT" $args > "$T/out.txt" || fail "qacct $args"
	[ -s "$T/out.txt" ] || fail "qacct $args printed nothing"
	# shellcheck disable=SC2086
	"$QACCT" $args --json > "$T/out.json" || fail "qacct $args --json"
	python3 -m json.tool "$T/out.json" > /dev/null || fail "qacct $args --json does not parse"
	# shellcheck disable=SC2086
	"$QACCT" $args --csv > "$T/out.csv" || fail "qacct $args --csv"
	python3 - "$T/out.csv" <<'PY' || fail "qacct $args --csv is not a rectangular CSV"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows), rows
PY
done
"$QACCT" --overhead
"$QACCT" --by user --json > "$T/user.json"
pycheck "$T/user.json" 'sorted(r["user"] for r in d["rows"]) == ["qpuser1", "qpuser2"]'
"$QACCT" --overhead --queue short --json > "$T/over.json"
pycheck "$T/over.json" \
	'sorted(r["job"] for r in d["rows"]) == sorted(["'"${shorts[0]}"'", "'"${shorts[1]}"'", "'"${shorts[2]}"'", "mean"])' \
	'all(r["overhead_ms"] >= 0 and r["elapsed_s"] >= r["connect_s"] for r in d["rows"])'

"$QACCT" --utilization
"$QACCT" --utilization --json > "$T/util.json"
pycheck "$T/util.json" \
	'abs(sum(r["percent"] for r in d["rows"] if r["state"] != "total") - 100) <= 0.1' \
	'd["ncpus"] == 2' \
	'next(r for r in d["rows"] if r["state"] == "executing")["core_seconds"] >= 2.0' \
	'all(r["percent"] >= 0 for r in d["rows"])'
# A window inside the sleeper's execution after every other job is gone
# (a slow, sanitized build runs the short jobs late): the 2 s job alone
# fills one core of two.
read -r ex et < <("$QP_BIN/qstat" -x --json | python3 -c '
import json, sys
jobs = json.load(sys.stdin)
me = next(j for j in jobs if j["jobid"] == int(sys.argv[1]))["times"]
others = [j["times"].get("released", j["times"].get("done", 0)) for j in jobs if j["jobid"] != int(sys.argv[1])]
start = max([me["exec"] / 1e9 + 0.2] + [t / 1e9 + 0.05 for t in others])
print("%.6f %.6f" % (start, me["exit"] / 1e9 - 0.2))' "$sleeper")
awk -v a="$ex" -v b="$et" 'BEGIN { exit !(b - a >= 0.3) }' || fail "no quiet window inside the sleeper's run ($ex..$et)"
"$QACCT" --utilization --from "$ex" --to "$et" --json > "$T/util2.json" || fail "qacct --utilization with epoch window"
pycheck "$T/util2.json" 'abs(next(r for r in d["rows"] if r["state"] == "executing")["percent"] - 50) <= 0.1'

note "errors: one line, non-zero exit"
for args in "--from yesterday" "--by colour" "-j 999999" "--from -1h --to -2h" "--overhead --utilization"; do
	# shellcheck disable=SC2086
	if "$QACCT" $args > "$T/err.out" 2> "$T/err.txt"; then fail "qacct $args succeeded"; fi
	[ "$(wc -l < "$T/err.txt")" = 1 ] || fail "qacct $args: not one line of error: $(cat "$T/err.txt")"
	[ -s "$T/err.out" ] && fail "qacct $args printed a report"
	note "qacct $args: $(cat "$T/err.txt")"
done

note "SVG timeline"
"$QACCT" --svg "$T/t.svg" || fail "qacct --svg"
python3 - "$T/t.svg" <<'PY' || fail "SVG is not well-formed or has the wrong rows"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
cores = [g.get("data-core") for g in root.iter(ns + "g") if g.get("class") == "core"]
assert sorted(cores) == ["n1:0", "n2:1"], cores
execs = [r for r in root.iter(ns + "rect") if r.get("class") == "executing"]
assert execs, "no executing bars"
PY

note "restart qpoold in the middle of 10 jobs"
ids=()
for i in $(seq 10); do
	ids+=("$(echo 'sleep 0.3' | as qpuser1 qsub -q short -N r$i)") || fail "qsub"
done
qp_wait "${ids[2]}" completed running
qp_stop "$QP_SERVER_PID"
sleep 0.5
qp_start_server
for id in "${ids[@]}"; do qp_wait "$id" completed --timeout 60; done
for id in "${ids[@]}"; do
	"$QACCT" -j "$id" --json > "$T/r.json" || fail "qacct -j $id after restart"
	pycheck "$T/r.json" \
		'set(d["record"]["times"]) == set("submit dispatch launch wrap fenced exec exit released done".split())' \
		'd["derived"]["connect"] >= 0.3 and d["derived"]["teardown"] >= 0'
done
"$QACCT" --by queue
echo "acct ok"
