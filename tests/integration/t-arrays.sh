#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Job arrays: -J and -t (option and directive), subjob indices and
# environment, output names, qstat's B state and -t, qdel/qhold/qrls of
# ID[] and ID[N], %MAX, a restart of qpoold with a half-done array, ranges
# that cost what the array holds (absurd and raw ones too), and what qstat
# -t's pages cost with 6,000 held arrays.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
node=${QP_NODE_PREFIX}n1
qp_start_node "$node" 0-1
server=$(hostname -s)
w1=$QP_T/work/qpuser1

# subjobs ID: "index state-letter" of each subjob, from qstat -x -t.
subjobs() {
	"$QP_BIN/qstat" -x -t "$1[]" | awk -v a="$1" 'index($1, a "[") == 1 && $1 !~ /\[\]/ {
		i = $1; sub(/^[0-9]+\[/, "", i); sub(/\].*/, "", i); print i, $(NF-1) }'
}

# script NAME BODY: a job script in qpuser1's work dir.
script() { printf '%s\n' "$2" > "$w1/$1"; chown qpuser1: "$w1/$1"; }

note "-J: one id ID[].server, indices, environment, default output names"
script env.sh 'echo "$PBS_ARRAY_INDEX $PBS_ARRAYID $PBS_ARRAY_ID $PBS_JOBID"'
out=$(as_full qpuser1 qsub -J 2-10:4 env.sh) || fail "qsub -J"
echo "$out" | grep -qE "^[0-9]+\[\]\.$server$" || fail "qsub -J printed '$out', not ID[].server"
a=${out%%.*}; n=${a%[]}
qp_wait "$a" completed
for i in 2 6 10; do
	f=$w1/env.sh.o$n.$i
	[ -f "$f" ] || fail "no $f (PBS Pro's name.oID.INDEX)"
	[ "$(cat "$f")" = "$i $i ${n}[].$server ${n}[$i].$server" ] || fail "subjob $i saw '$(cat "$f")'"
	[ -f "$w1/env.sh.e$n.$i" ] || fail "no error file of subjob $i"
done
[ "$(find "$w1" -maxdepth 1 -name "env.sh.o$n.*" | wc -l)" = 3 ] || fail "not 3 output files: $(ls "$w1")"
[ "$(subjobs "$n" | tr '\n' ' ')" = "2 F 6 F 10 F " ] || fail "qstat -t: $(subjobs "$n")"
[ "$(qp_field "$a" Exit_status)" = 0 ] || fail "array Exit_status $(qp_field "$a" Exit_status)"
[ "$(qp_field "${n}[6]" Exit_status)" = 0 ] || fail "qstat -f ID[6]"
[ "$(qp_field "${n}[6]" array_id)" = "${n}[].$server" ] || fail "qstat -f ID[6] array_id"

note "accounting: a record per subjob, and the array's own with their sums"
"$QP_BIN/qacct" --json -u qpuser1 | python3 -c '
import json, sys
rows = json.load(sys.stdin)["rows"]
assert sum(r["jobs"] for r in rows) == 3, rows
' || fail "qacct's summary does not count the 3 subjobs once each"
"$QP_BIN/qacct" --json -j "${n}[6]" | python3 -c '
import json, sys
r = json.load(sys.stdin)["record"]
assert r["jobid"] == int(sys.argv[1]) + 2 and r["array_index"] == 6, r
' "$n" || fail "qacct -j ID[6]"
"$QP_BIN/qacct" --json -j "$a" | python3 -c '
import json, sys
r = json.load(sys.stdin)["record"]
assert r["jobid"] == int(sys.argv[1]) and r["array"] == "2-10:4" and r["cpu_ns"] > 0, r
' "$n" || fail "qacct -j ID[]"

note "-t list as a directive, -o with ^array_index^, one failing subjob"
script list.sh '#PBS -t 1,3,5-6
#PBS -o out.^array_index^.txt
#PBS -j oe
echo "i=$PBS_ARRAYID"; [ "$PBS_ARRAYID" != 5 ]'
a=$(as qpuser1 qsub list.sh) || fail "qsub -t"; n=${a%[]}
qp_wait "$a" failed
for i in 1 3 5 6; do
	[ "$(cat "$w1/out.$i.txt")" = "i=$i" ] || fail "out.$i.txt: $(cat "$w1/out.$i.txt" 2>&1)"
done
[ "$(subjobs "$n" | tr '\n' ' ')" = "1 F 3 F 5 F 6 F " ] || fail "qstat -t: $(subjobs "$n")"
[ "$(qp_field "${n}[5]" Exit_status)" = 1 ] || fail "subjob 5 Exit_status"
[ "$(qp_field "$a" Exit_status)" = 1 ] || fail "array with a failed subjob: Exit_status $(qp_field "$a" Exit_status)"

note "bad input"
qp_refuse "START must be below END" as qpuser1 qsub -J 5-1 env.sh
qp_refuse "expected START-END" as qpuser1 qsub -J 1,2 env.sh
qp_refuse "%MAX must be" as qpuser1 qsub -t 1-3%0 env.sh
qp_refuse "an array of 30000 subjobs would pass it" as qpuser1 qsub -J 1-30000 env.sh
qp_refuse "not a job id" as qpuser1 qdel "${n}[x]"
qp_refuse "no such subjob" as qpuser1 qstat "${n}[2]"

note "qhold/qrls ID[], qdel ID[N] of a waiting subjob, qstat B and Q"
script gate.sh 'for i in $(seq 1200); do [ -e go.$PBS_ARRAY_INDEX ] && exit 0; sleep 0.05; done; exit 9'
a=$(as qpuser1 qsub -h -J 1-4 gate.sh) || fail "qsub -h -J"; n=${a%[]}
[ "$(qp_state "$a")" = held ] || fail "array not held"
as qpuser1 qdel "${n}[2]" || fail "qdel ID[2] of a waiting subjob"
as qpuser1 qrls "$a" || fail "qrls ID[]"
qp_wait "${n}[1]" running
"$QP_BIN/qstat" "$a" | grep -qE "^$n\[\]\.$server .* B batch$" || fail "array not B: $("$QP_BIN/qstat" "$a")"
[ "$(qp_state "${n}[2]")" = cancelled ] || fail "subjob 2 is $(qp_state "${n}[2]")"
qp_refuse "already finished" as qpuser1 qdel "${n}[2]"
qp_refuse "permission denied" as qpuser2 qdel "$a"
touch "$w1/go.1" "$w1/go.3"
qp_wait "${n}[1]" completed
qp_wait "${n}[3]" completed
as qpuser1 qhold "${n}[4]" 2>/dev/null   # running or held by now: either is fine
qp_wait "${n}[4]" running held
[ "$(qp_state "${n}[4]")" = held ] && { as qpuser1 qrls "${n}[4]" || fail "qrls ID[4]"; }
touch "$w1/go.4"
qp_wait "$a" cancelled
[ "$(qp_field "$a" Exit_status)" = 2 ] || fail "array with a deleted subjob: Exit_status"

note "qstat -t pages through 2,500 waiting subjobs; qdel of a range; qrls of one in a held array"
a=$(as qpuser1 qsub -h -J 1-2500 env.sh) || fail "qsub -h -J 1-2500"; n=${a%[]}
[ "$("$QP_BIN/qstat" -t "$a" | awk 'NR > 2' | wc -l)" = 2501 ] || fail "qstat -t: $("$QP_BIN/qstat" -t "$a" | wc -l) lines"
[ -z "$("$QP_BIN/qstat" -t | awk 'NR > 2 { print $1 }' | sort | uniq -d)" ] || fail "qstat -t lists a subjob twice"
qp_refuse "release the array (${n}[])" as qpuser1 qrls "${n}[5]"
as qpuser1 qdel "${n}[3-2000]" || fail "qdel ID[3-2000]"
[ "$("$QP_BIN/qstat" -t "$a" | awk 'NR > 2 && $5 == "H"' | wc -l)" = 503 ] || fail "after qdel ID[3-2000]"
[ "$(qp_state "${n}[1999]")" = cancelled ] || fail "subjob 1999 is $(qp_state "${n}[1999]")"
as qpuser1 qdel "$a" || fail "qdel ID[] of a held array"
qp_wait "$a" cancelled

note "qdel ID[] of a running array"
rm -f "$w1"/go.*
a=$(as qpuser1 qsub -J 1-5 gate.sh) || fail "qsub"; n=${a%[]}
qp_wait "${n}[1]" running
as qpuser1 qdel "$a" || fail "qdel ID[]"
qp_wait "$a" cancelled
for i in 1 2 3 4 5; do
	[ "$(qp_state "${n}[$i]")" = cancelled ] || fail "subjob $i is $(qp_state "${n}[$i]") after qdel ID[]"
done

note "%MAX: at most 1 running at once on 2 CPUs"
script short.sh 'sleep 0.2'
a=$(as qpuser1 qsub -J 1-4%1 short.sh) || fail "qsub %1"; n=${a%[]}
qp_wait "$a" completed --timeout 60
"$QP_BIN/qstat" -x -t --json "$a" | python3 -c '
import json, sys
subs = sorted((j for j in json.load(sys.stdin) if "array_id" in j), key=lambda j: j["times"]["dispatch"])
assert len(subs) == 4, len(subs)
for a, b in zip(subs, subs[1:]):
    assert b["times"]["dispatch"] >= a["times"]["done"], (a["array_index"], b["array_index"])
' || fail "%1: subjobs overlapped"

note "restart of qpoold with a half-done array"
rm -f "$w1"/go.*
a=$(as qpuser1 qsub -J 1-6%1 gate.sh) || fail "qsub"; n=${a%[]}
touch "$w1/go.1" "$w1/go.2"
qp_wait "${n}[2]" completed
qp_wait "${n}[3]" running
qp_stop "$QP_SERVER_PID"
qp_start_server
[ "$(subjobs "$n" | tr '\n' ' ')" = "1 F 2 F 3 R 4 Q 5 Q 6 Q " ] || fail "after restart: $(subjobs "$n")"
"$QP_BIN/qstat" "$a" | grep -qE " B batch$" || fail "array not B after restart"
touch "$w1"/go.{3,4,5,6}
qp_wait "$a" completed --timeout 60
for i in 1 2 3 4 5 6; do
	[ -f "$w1/gate.sh.o$n.$i" ] || fail "subjob $i left no output"
done
[ "$(subjobs "$n" | tr '\n' ' ')" = "1 F 2 F 3 F 4 F 5 F 6 F " ] || fail "end: $(subjobs "$n")"

note "a range costs what the array holds: ID[3-99999999], 9 digits, raw 2^62 and INT64_MAX (issue 33)"
# 64 parts, the most (1,3,...,127), whose subjobs wait an hour (-a):
# before, a range walked every index of it, each against every part, in
# qpoold's one thread (ID[0-999999999]: ~2 min; array_last 2^62: for
# good). Each op must answer within 30 s, with its effect on the subjobs.
later=$(date -d '+2 hours' +%Y%m%d%H%M)
a=$(as qpuser1 qsub -a "$later" -t "$(seq -s, 1 2 127)" env.sh) || fail "qsub -a -t (64 parts)"; n=${a%[]}
ask_raw() {  # OP JSON: one raw request as qpuser1 (qpool-ask.py: no reply within 5 s fails)
	as qpuser1 python3 "$QP_TOP/tests/integration/qpool-ask.py" "$QP_T/qpoold.sock" "$@"
}
states() { local i; for i in 1 3 5 127; do printf '%s ' "$(qp_state "${n}[$i]")"; done; }
as qpuser1 timeout 30 qhold "${n}[3-99999999]" || fail "qhold ID[3-99999999] failed or took over 30 s"
[ "$(states)" = "queued held held held " ] || fail "after qhold ID[3-99999999]: $(states)"
[ "$("$QP_BIN/qstat" -t "$a" | awk 'NR > 2 && $5 == "H"' | wc -l)" = 63 ] || fail "qhold ID[3-99999999]: not 63 held"
as qpuser1 timeout 30 qhold "${n}[0-999999999]" || fail "qhold ID[0-999999999] failed or took over 30 s"
[ "$(states)" = "held held held held " ] || fail "after qhold ID[0-999999999]: $(states)"
out=$(ask_raw release "{\"jobid\": $n, \"array_index\": 5, \"array_last\": $((1 << 62))}") ||
	fail "raw release ID[5-2^62]: no reply"
echo "$out" | grep -q '"ok": true' || fail "raw release ID[5-2^62]: $out"
[ "$(states)" = "held held queued queued " ] || fail "after release ID[5-2^62]: $(states)"
for req in "\"array_index\": -5, \"array_last\": 20" "\"array_index\": 30, \"array_last\": 20" \
	   "\"array_index\": $((1 << 62)), \"array_last\": $((1 << 62))" "\"array_index\": 128, \"array_last\": $((1 << 62))" \
	   "\"array_index\": 2, \"array_last\": 2"; do
	out=$(ask_raw hold "{\"jobid\": $n, $req}") || fail "raw hold {$req}: no reply"
	echo "$out" | grep -q '"ok": false' || fail "raw hold {$req} was taken: $out"
	echo "$out" | grep -qE '"error": "job [0-9]+\[[-0-9]+\]: (no such subjob|a range is LO-HI)' ||
		fail "raw hold {$req}: $out"
done
[ "$(states)" = "held held queued queued " ] || fail "after refused raw holds: $(states)"
as qpuser1 timeout 30 qdel "${n}[4-999999999]" || fail "qdel ID[4-999999999] failed or took over 30 s"
[ "$(states)" = "held held cancelled cancelled " ] || fail "after qdel ID[4-999999999]: $(states)"
out=$(ask_raw delete "{\"jobid\": $n, \"array_index\": 0, \"array_last\": 9223372036854775807}") ||
	fail "raw delete ID[0-INT64_MAX]: no reply"
echo "$out" | grep -q '"ok": true' || fail "raw delete ID[0-INT64_MAX]: $out"
qp_wait "$a" cancelled
# Another user is served, and SIGTERM still stops qpoold.
timeout 10 runuser -u qpuser2 -- env QPOOL_CONF="$QPOOL_CONF" "$QP_BIN/qstat" > /dev/null ||
	fail "qpuser2's qstat did not answer within 10 s"
kill -TERM "$QP_SERVER_PID"
for ((i = 0; i < 600; i++)); do kill -0 "$QP_SERVER_PID" 2>/dev/null || break; sleep 0.05; done
kill -0 "$QP_SERVER_PID" 2>/dev/null && fail "qpoold did not stop within 30 s of SIGTERM"
wait "$QP_SERVER_PID" 2>/dev/null
qp_start_server

note "6,000 held arrays: qstat -t pages each read their own rows, not every array below them (issue 29)"
stat_of() { python3 "$QP_TOP/bench/stats" | python3 -c "import json, sys; print(json.load(sys.stdin)['$1'])"; }
as qpuser1 python3 "$QP_TOP/bench/submit" 6000 --hold --array 1-2 --workdir "$w1" > /dev/null || fail "submit arrays"
r0=$(stat_of store_rows_read) || fail "stats"
rows=$(as qpuser2 "$QP_BIN/qstat" -t | grep -cE '^[0-9]+\[[0-9]*\]')
r1=$(stat_of store_rows_read)
# Each array: its row and its two waiting subjobs (the earlier arrays ended).
[ "$rows" = 18000 ] || fail "qstat -t lists $rows arrays and subjobs, want 18000"
# Pages read their 18,000 rows and each array's once to make its subjobs:
# ~24,000 (reading every array below each page was ~72,000).
[ $((r1 - r0)) -le 27000 ] || fail "qstat -t read $((r1 - r0)) rows for $rows"
echo "PASS"
