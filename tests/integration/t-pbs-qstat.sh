#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qstat as PBS tools parse it: the default and -a layouts with PBS's
# headers and one-letter states, -f's attribute names, -F json's document
# keyed by "ID.server", -x, -u lists, -Q QUEUE, -Qf, -B, ID@server.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
node=${QP_NODE_PREFIX}n1   # unique: other pools may run beside this one
qp_start_node "$node" 0-1
server=$(hostname -s)

run=$(as qpuser1 qsub -N runner -l walltime=00:02:00 <<<'sleep 60') || fail "qsub runner"
held=$(as qpuser2 qsub -h -N waiter <<<'true') || fail "qsub held"
bad=$(as qpuser2 qsub -N bad <<<'exit 3') || fail "qsub bad"
run=${run%%.*} held=${held%%.*} bad=${bad%%.*}
qp_wait "$run" running
qp_wait "$bad" failed

note "qstat"
out=$("$QP_BIN/qstat") || fail "qstat"
echo "$out"
[ "$(echo "$out" | sed -n 1p)" = "Job id            Name             User              Time Use S Queue" ] || fail "qstat header is not PBS's"
[ "$(echo "$out" | sed -n 2p)" = "----------------  ---------------- ----------------  -------- - -----" ] || fail "qstat rule is not PBS's"
echo "$out" | grep -qE "^$run\.$server +runner +qpuser1 +0 R batch$" || fail "running job's row"
echo "$out" | grep -qE "^$held\.$server +waiter +qpuser2 +0 H batch$" || fail "held job's row"
echo "$out" | grep -q "^$bad\." && fail "finished job shown without -x"
"$QP_BIN/qstat" -x | grep -qE "^$bad\.$server +bad +qpuser2 +[0-9:]+ F batch$" || fail "qstat -x: failed job not F"

note "qstat -a -n -s"
out=$("$QP_BIN/qstat" -a) || fail "qstat -a"
echo "$out"
echo "$out" | grep -qx "Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Time" || fail "-a header"
echo "$out" | grep -qx "                                                            Req'd  Req'd   Elap" || fail "-a first header line"
echo "$out" | grep -qE "^$run\.$server +qpuser1 +batch +runner +-- +1 +1 +-- +00:02 R [0-9]{2}:[0-9]{2}$" || fail "-a row of the running job"
"$QP_BIN/qstat" -n "$run" | grep -qx "   $node/0\*1" || fail "-n: exec host line"
"$QP_BIN/qstat" -n -1 "$run" | grep -qE "^$run\.$server .* R .* $node/0\*1$" || fail "-n -1: exec host on the job's line"
"$QP_BIN/qstat" -t "$run" >/dev/null || fail "-t refused"
"$QP_BIN/qstat" -J >/dev/null || fail "-J refused"

note "qstat -f"
out=$("$QP_BIN/qstat" -x -f "$bad") || fail "qstat -x -f"
echo "$out" | head -40
[ "$(echo "$out" | head -1)" = "Job Id: $bad.$server" ] || fail "-f: Job Id line"
for kv in "Job_Name = bad" "Job_Owner = qpuser2@$server" "job_state = F" "queue = batch" \
	"Resource_List.ncpus = 1" "Resource_List.walltime = 00:10:00" "Exit_status = 3" \
	"exec_host = $node/0*1" "qpool_state = failed" "Output_Path = $server:$QP_T/work/qpuser2/bad.o$bad"; do
	echo "$out" | grep -qxF "    $kv" || fail "-f lacks '$kv'"
done
for k in resources_used.walltime resources_used.cput resources_used.mem ctime qtime stime mtime Error_Path; do
	echo "$out" | grep -q "^    $k = " || fail "-f lacks $k"
done
"$QP_BIN/qstat" -f "$run" | grep -qx "    job_state = R" || fail "-f: running job not R"
"$QP_BIN/qstat" -f "$held" | grep -qx "    job_state = H" || fail "-f: held job not H"

note "qstat -x -f -F json ID (the tools' status poll)"
for id in "$run" "$run.$server" "$run.$server@$server"; do
	as qpuser1 qstat -x -f -F json "$id" > "$QP_T/q.json" || fail "qstat -F json $id"
	python3 - "$QP_T/q.json" "$run" "$server" <<'PY' || fail "-F json of $id"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("timestamp", "pbs_version", "pbs_server", "Jobs"):
    assert k in d, k
jid = sys.argv[2] + "." + sys.argv[3]
assert list(d["Jobs"]) == [jid], d["Jobs"].keys()
j = d["Jobs"][jid]
assert j["job_state"] == "R", j["job_state"]
assert j["Resource_List"]["ncpus"] == 1 and j["Resource_List"]["walltime"] == "00:02:00", j["Resource_List"]
assert j["Job_Name"] == "runner" and j["queue"] == "batch"
assert j["Job_Owner"].startswith("qpuser1@")
PY
done
"$QP_BIN/qstat" -x -f -F json "$bad" | python3 -c '
import json, sys
j = list(json.load(sys.stdin)["Jobs"].values())[0]
assert j["job_state"] == "F" and j["Exit_status"] == 3, j' || fail "-F json: finished job's F and Exit_status"
"$QP_BIN/qstat" -F dsv >/dev/null 2>&1 && fail "-F dsv accepted"

note "qstat -u, queues, server"
[ "$("$QP_BIN/qstat" -u qpuser2 | grep -c "^[0-9]")" = 1 ] || fail "-u qpuser2"
"$QP_BIN/qstat" -u qpuser2 | grep -q "^Job ID          Username Queue" || fail "-u: not the -a layout, as PBS Pro"
[ "$("$QP_BIN/qstat" -x -u qpuser1,qpuser2 | grep -c "^[0-9]")" = 3 ] || fail "-u list"
[ "$("$QP_BIN/qstat" -i | grep -c "^[0-9]")" = 1 ] || fail "-i: only the held job"
[ "$("$QP_BIN/qstat" -r | grep -c "^[0-9]")" = 1 ] || fail "-r: only the running job"
"$QP_BIN/qstat" short | grep -q "^[0-9]" && fail "queue operand: batch jobs shown for short"
"$QP_BIN/qstat" -Q short | grep -q "^short " || fail "-Q short"
"$QP_BIN/qstat" -Q short | grep -q "^batch " && fail "-Q short shows batch"
"$QP_BIN/qstat" -Q nosuch 2>&1 >/dev/null | grep -q "unknown queue 'nosuch'" || fail "-Q nosuch error"
"$QP_BIN/qstat" -Qf batch | grep -qx "    state_count = Transit:0 Queued:0 Held:1 Waiting:0 Running:1 Exiting:0 Begun:0" || fail "-Qf state_count"
"$QP_BIN/qstat" -B | grep -qE "^$server +0 +2 +0 +1 +1 +0 +0 +0 Active$" || fail "-B counts"
"$QP_BIN/qstat" --table | grep -qE "^$run +runner +qpuser1 +running" || fail "--table keeps qpool's table"
"$QP_BIN/qstat" --nodes | grep -qE "^$node +up" || fail "--nodes"
"$QP_BIN/qstat" 999999 2>&1 | grep -q "Unknown Job Id 999999\." || fail "unknown job id"
"$QP_BIN/qstat" -Z 2>/dev/null; [ $? = 2 ] || fail "unknown option not exit 2"
later=$(as qpuser3 qsub -a "$(date -d '+2 hours' +%H%M)" <<<'true') || fail "qsub -a"
"$QP_BIN/qstat" | grep -qE "^${later%%.*}\.$server .* W batch$" || fail "qsub -a job not W: $("$QP_BIN/qstat")"
[ "$(as qpuser3 qselect -s W)" = "${later%%.*}.$server" ] || fail "qselect -s W"
"$QP_BIN/qdel" "$run" "$held" "${later%%.*}"
qp_wait "$run" cancelled
"$QP_BIN/qstat" -x -f -F json "$run" | python3 -c '
import json, sys
j = list(json.load(sys.stdin)["Jobs"].values())[0]
assert j["job_state"] == "F" and j["Exit_status"] == 265, j' || fail "cancelled job: Exit_status 265 (PBS delete)"
echo "pbs qstat ok"
