#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Slurm's views and controls over a pool fed by qsub: squeue (default
# layout, -u, -t, -j, -o, -O, --json), sinfo (default, -N, --json),
# scontrol (show job|node|partition, hold, release, update TimeLimit),
# scancel (id, array task, -u -t, -n), sacct (--format, --parsable2, -X,
# batch steps, --json) after jobs completed, failed, were cancelled and
# timed out; bad input answered in Slurm's words with a non-zero exit.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is needed to parse JSON"
qp_setup
qp_start_server
n1=${QP_NODE_PREFIX}n1 n2=${QP_NODE_PREFIX}n2   # unique: other pools may run beside this one
qp_start_node "$n1" 0
qp_start_node "$n2" 1
uid1=$(id -u qpuser1) uid2=$(id -u qpuser2)
export PATH=$QP_BIN:$PATH   # the Slurm commands by their names, as a user types them

# refused WORDS cmd...: cmd exits non-zero and its stderr holds WORDS.
refused() {
	local words=$1 err; shift
	err=$("$@" 2>&1 >/dev/null) && fail "'$*' succeeded"
	echo "$err" | grep -qF -- "$words" || fail "'$*' said '$err', not '$words'"
	[ "$(echo "$err" | wc -l)" -le 2 ] || fail "'$*': more than a short error: $err"
}

run=$(as qpuser1 qsub -N runner -l walltime=00:02:00 <<<'sleep 300') || fail "qsub runner"
qp_wait "$run" running
blk=$(as qpuser2 qsub -N blocker <<<'sleep 300') || fail "qsub blocker"
qp_wait "$blk" running
pend=$(as qpuser1 qsub -N pend <<<'true') || fail "qsub pend"
held=$(as qpuser2 qsub -h -N waiter <<<'true') || fail "qsub held"
arr=$(as qpuser2 qsub -h -J 1-3 -N arr <<<'true') || fail "qsub array"
arr=${arr%%[*}

note "squeue: default layout"
out=$(as qpuser1 squeue) || fail "squeue"
echo "$out"
[ "$(echo "$out" | sed -n 1p)" = "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)" ] ||
	fail "squeue's header is not Slurm's"
echo "$out" | grep -qE "^ {$((18 - ${#run}))}$run     batch   runner  qpuser1  R +[0-9]+:[0-9]{2}      1 $n1$" ||
	fail "running job's row"
echo "$out" | grep -qE "^ +$pend     batch     pend  qpuser1 PD +0:00      1 \((Resources|Priority)\)$" ||
	fail "pending job's row"
echo "$out" | grep -qE "^ +$held     batch   waiter  qpuser2 PD +0:00      1 \(JobHeldUser\)$" || fail "held job's row"
# An array's pending tasks: one row as Slurm folds them; -r one per task.
echo "$out" | grep -qE "^ +${arr}_\[1-3\]     batch      arr  qpuser2 PD +0:00      1 \(JobHeldUser\)$" ||
	fail "array's row ${arr}_[1-3]"
out=$(squeue -r -h -o %i -u qpuser2) || fail "squeue -r"
for i in 1 2 3; do
	echo "$out" | grep -qx "${arr}_$i" || fail "squeue -r: array task ${arr}_$i"
done
# One pool, two dialects: the ids squeue prints are qstat's.
for id in "$run" "$blk" "$pend" "$held"; do
	"$QP_BIN/qstat" "$id" >/dev/null || fail "qstat does not know squeue's job $id"
done

note "squeue -u, -t, -j, -p, -h, -o, -O"
[ "$(squeue -h -u qpuser2 -o %i | tr '\n' ' ')" = "$blk $held ${arr}_[1-3] " ] ||
	fail "squeue -u qpuser2: $(squeue -h -u qpuser2 -o %i | tr '\n' ' ')"
[ "$(squeue -h -t R -o %i | sort -n | tr '\n' ' ')" = "$run $blk " ] || fail "squeue -t R"
[ "$(squeue -h -t running,PD -u qpuser1 -o %i | sort -n | tr '\n' ' ')" = "$run $pend " ] || fail "squeue -t running,PD -u"
[ "$(squeue -h -j "$pend" -o '%i|%T|%u|%P|%j|%C|%D')" = "$pend|PENDING|qpuser1|batch|pend|1|1" ] || fail "squeue -j -o"
[ "$(squeue -h -j "${arr}_2" -o '%i %F %K %t')" = "${arr}_2 $arr 2 PD" ] || fail "squeue -j ARRAY_TASK"
[ -z "$(squeue -h -p short)" ] || fail "squeue -p short shows jobs"
[ "$(squeue -h -j "$run" -o '%.10i|%8j|%l|%R')" = "$(printf '%10s' "$run")|runner  |2:00|$n1" ] || fail "widths of -o"
out=$(squeue -j "$run" -O 'JobID:10,Name:.10,State') || fail "squeue -O"
[ "$(echo "$out" | sed -n 1p)" = "$(printf '%-10s%10s%-20s' JOBID NAME STATE)" ] || fail "squeue -O header: '$(echo "$out" | sed -n 1p)'"
[ "$(echo "$out" | sed -n 2p)" = "$(printf '%-10s%10s%-20s' "$run" runner RUNNING)" ] || fail "squeue -O row"
# Fields tools ask for by name: TimeLeft, STDOUT as scontrol's StdOut.
[ "$(squeue -h -j "$pend" -O 'TimeLeft:8')" = "10:00   " ] || fail "squeue -O TimeLeft: '$(squeue -h -j "$pend" -O 'TimeLeft:8')'"
stdout=$(scontrol show job "$pend" | sed -n 's/^   StdOut=//p')
[ -n "$stdout" ] && [ "$(squeue -h -j "$pend" -O 'STDOUT:200' | sed 's/ *$//')" = "$stdout" ] ||
	fail "squeue -O STDOUT is not scontrol's StdOut ($stdout)"
squeue --json > "$QP_T/sq.json" || fail "squeue --json"
python3 - "$QP_T/sq.json" "$run" "$held" "$n1" <<'PY' || fail "squeue --json"
import json, sys
d = json.load(open(sys.argv[1]))
jobs = {j["job_id"]: j for j in d["jobs"]}
r, h = jobs[int(sys.argv[2])], jobs[int(sys.argv[3])]
assert r["name"] == "runner" and r["user_name"] == "qpuser1" and r["partition"] == "batch", r
assert r["job_state"] == ["RUNNING"] and r["nodes"] == sys.argv[4], r
assert r["time_limit"]["number"] == 2 and r["time_limit"]["set"], r["time_limit"]
assert h["job_state"] == ["PENDING"] and h["state_reason"] == "JobHeldUser", h
assert "meta" in d and d["errors"] == []
PY
refused "Invalid job state specified: bogus" squeue -t bogus
refused "Invalid job id specified" squeue -j 999999
refused "Invalid job id specified" squeue -j 12x
# Every letter and -O name Slurm documents is taken (docs/PORTALS.md);
# one it does not have is refused.
refused "Invalid job format specification" squeue -o '%i %@'
refused "Invalid job format specification: Bogus" squeue -O 'JobID,Bogus'
out=$(squeue -h -o '%B|%c|%g|%G|%Y|%z|%f' -j "$run") || fail "squeue -o with Slurm's other letters"
[ "$out" = "${QP_NODE_PREFIX}n1|1|qpuser1|$(id -g qpuser1)|(null)|*:*:*|(null)" ] || fail "squeue %B %c %g %G %Y %z %f: $out"
out=$(squeue -h --noconvert -O 'JobID:|,BatchHost:|,GroupName:|,tres-alloc:|' -j "$run") || fail "squeue -O NAME:SEP"
[ "$out" = "$run|${QP_NODE_PREFIX}n1|qpuser1|billing=1,cpu=1,mem=0M,node=1|" ] || fail "squeue -O NAME:SEP: '$out'"
refused "unrecognized option '--bogus'" squeue --bogus
# A bad short option in glibc's words, as Slurm's commands print them
# (Snakemake's account guess runs sacct -nu USER -o Account%256 "|" tail -1).
for c in squeue sacct sinfo scancel scontrol; do
	refused "$c: invalid option -- '1'" "$c" -1
	refused "$c: option requires an argument -- 'M'" "$c" -M
done
refused "squeue: option '--jobs' requires an argument" squeue --jobs

note "sinfo"
out=$(sinfo) || fail "sinfo"
echo "$out"
[ "$(echo "$out" | sed -n 1p)" = "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST" ] || fail "sinfo's header is not Slurm's"
echo "$out" | grep -qxF "batch*       up 1-00:00:00      2  alloc ${QP_NODE_PREFIX}n[1-2]" || fail "sinfo: batch's row"
echo "$out" | grep -qxF "short        up       5:00      2  alloc ${QP_NODE_PREFIX}n[1-2]" || fail "sinfo: short's row"
out=$(sinfo -N) || fail "sinfo -N"
echo "$out"
echo "$out" | sed -n 1p | grep -qE "^NODELIST +NODES PARTITION STATE $" || fail "sinfo -N header"
[ "$(echo "$out" | grep -cE "^$n1 +1 (batch\*|short ) +alloc $")" = 2 ] || fail "sinfo -N: $n1 rows"
[ "$(sinfo -h -p short -o '%R %D %c %C')" = "short 2 1 2/0/0/2" ] || fail "sinfo -o"
# Open OnDemand's: no partition or state column, so one row for the pool
# (each node once); -O with Slurm's names; the record separators kept.
[ "$(sinfo -aho ' %F/%C')" = " 2/0/0/2/2/0/0/2" ] || fail "sinfo -aho %F/%C: $(sinfo -aho ' %F/%C')"
[ "$(sinfo -ahNO nodehost:20,gres:10,gresused:10,statelong | tr -s ' ' | sort | tr '\n' '|')" = \
	"$n1 (null) (null) allocated |$n2 (null) (null) allocated |" ] || fail "sinfo -ahNO: $(sinfo -ahNO nodehost:20,gres:10,gresused:10,statelong)"
# %f: the nodes' features (hwloc's arch= and cpu_vendor=, docs/RESOURCES.md).
feat=$("$QP_BIN/qstat" --nodes --json | python3 -c 'import json, sys; print([n for n in json.load(sys.stdin)["nodes"] if n["name"] == sys.argv[1]][0].get("features") or "(null)")' "$n1")
[ "$(sinfo -ho $'\x1e%c\x1f%n\x1f%f' | tr $'\x1e\x1f' '#|')" = "#1|$n1,$n2|$feat" ] ||
	fail "sinfo -ho %c%n%f: $(sinfo -ho $'\x1e%c\x1f%n\x1f%f' | tr $'\x1e\x1f' '#|')"
refused "Invalid node format specification: Bogus" sinfo -O Bogus
note "sacctmgr: no account defined, so no associations; changes are root's"
[ -z "$(as qpuser1 sacctmgr -nP show users withassoc format=account,qos where user=qpuser1 cluster=c)" ] ||
	fail "sacctmgr show users withassoc listed something"
[ "$(sacctmgr -nP show qos format=Name,Priority)" = "normal|0" ] || fail "sacctmgr show qos"
refused "Your user doesn't have privilege to perform this action" as qpuser1 sacctmgr add user bob account=x
# Toil's partition table: sinfo -a -o "%P %G %l %p %c %m" (GRES, priority
# tier, memory per node in MB as scontrol's RealMemory).
mem=$(scontrol show node "$n1" | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
[ -n "$mem" ] || fail "scontrol show node: no RealMemory"
[ "$(sinfo -a -p short -o '%P %G %l %p %c %m' | tr '\n' '|')" = "PARTITION GRES TIMELIMIT PRIO_TIER CPUS MEMORY|short (null) 5:00 0 1 $mem|" ] ||
	fail "sinfo -o '%P %G %l %p %c %m': $(sinfo -a -p short -o '%P %G %l %p %c %m')"
sinfo --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
parts = {r["partition"]["name"] for r in d["sinfo"]}
assert parts == {"batch", "short"}, parts
assert all(r["nodes"]["total"] == 2 for r in d["sinfo"]), d["sinfo"]' || fail "sinfo --json"
refused "Invalid node state specified: bogus" sinfo -t bogus

note "scontrol show, hold, update, release"
out=$(scontrol show job "$run") || fail "scontrol show job"
echo "$out"
echo "$out" | sed -n 1p | grep -qx "JobId=$run JobName=runner" || fail "show job: first line"
for kv in "UserId=qpuser1($uid1)" "JobState=RUNNING" "Partition=batch" "NodeList=$n1" "TimeLimit=00:02:00" \
	"NumNodes=1" "NumCPUs=1" "Reason=None"; do
	echo "$out" | grep -qE "^   (.* )?$(printf '%s' "$kv" | sed 's/[()]/\\&/g')( |$)" || fail "show job lacks $kv"
done
[ "$(scontrol -o show job "$run" | wc -l)" = 1 ] || fail "scontrol -o: not one line"
scontrol show node "$n1" | grep -q "State=ALLOCATED" || fail "show node: state"
scontrol show partition batch | grep -q "Default=YES" || fail "show partition batch: Default"
scontrol show partition short | grep -q "MaxTime=00:05:00" || fail "show partition short: MaxTime"
as qpuser1 scontrol hold "$pend" || fail "scontrol hold"
[ "$(squeue -h -j "$pend" -o %R)" = "(JobHeldUser)" ] || fail "held job's reason"
qp_wait "$pend" held
as qpuser1 scontrol update JobId="$pend" TimeLimit=0-12:03 || fail "scontrol update TimeLimit"
[ "$(qp_field "$pend" Resource_List.walltime)" = "12:03:00" ] || fail "TimeLimit not set: $(qp_field "$pend" Resource_List.walltime)"
scontrol show job "$pend" | grep -q "TimeLimit=12:03:00" || fail "show job: new TimeLimit"
refused "Requested time limit is invalid" as qpuser1 scontrol update JobId="$pend" TimeLimit=2-0
refused "Invalid TimeLimit value: abc" scontrol update JobId="$pend" TimeLimit=abc
refused "Job is no longer pending execution" as qpuser1 scontrol update JobId="$run" TimeLimit=10
refused "Update of this parameter is not supported: Bogus=1" scontrol update JobId="$pend" Bogus=1
refused "No job identification provided" scontrol update TimeLimit=10
refused "Invalid job id specified" scontrol show job 999999
refused "Invalid keyword: frobnicate" scontrol frobnicate
refused "Invalid job id specified" scontrol hold 999999
# Host lists, as job scripts expand theirs (PSI/J's: scontrol show
# hostnames, bare, reads SLURM_JOB_NODELIST).
[ "$(scontrol show hostnames 'n[1-3,07],login' | tr '\n' ' ')" = "n1 n2 n3 n07 login " ] || fail "show hostnames LIST"
[ "$(SLURM_JOB_NODELIST='b[08-10]' scontrol show hostname | tr '\n' ' ')" = "b08 b09 b10 " ] ||
	fail "show hostname: SLURM_JOB_NODELIST"
[ "$(scontrol show hostlist n3,n1,n2)" = "n[3,1-2]" ] || fail "show hostlist"
[ "$(scontrol show hostlistsorted n3,n1,n2)" = "n[1-3]" ] || fail "show hostlistsorted"
refused "host list is empty" env -u SLURM_JOB_NODELIST -u SLURM_NODELIST scontrol show hostnames
refused "Invalid hostlist: n[1-" scontrol show hostnames 'n[1-'
refused "Too many ranges" scontrol show hostnames 'n[1-99999999]'
# Snakemake's plugin reads MinJobAge: how long squeue shows an ended job.
env QPOOL_CONF=/nonexistent scontrol show config | grep -qx "MinJobAge               = 300 sec" || fail "show config: MinJobAge"
as qpuser1 scontrol release "$pend" || fail "scontrol release"
qp_wait "$pend" queued

note "scancel"
refused "No job identification provided" scancel
refused "Kill job error on job id 999999: Invalid job id specified" scancel 999999
refused "Invalid job signal" scancel -s NOSUCH "$run"
# Another user's job: qpoold refuses, in Slurm's words; the job runs on.
refused "Kill job error on job id $run: Access/permission denied" as qpuser2 scancel "$run"
refused "Access/permission denied" as qpuser2 scancel -u qpuser1
refused "Access/permission denied" as qpuser2 scontrol hold "$pend"
refused "Access/permission denied" as qpuser2 scontrol update JobId="$pend" TimeLimit=5
[ "$(qp_state "$run")" = running ] && [ "$(qp_state "$pend")" = queued ] || fail "another user's scancel/hold took"
as qpuser1 scancel -n pend || fail "scancel -n"
qp_wait "$pend" cancelled
as qpuser2 scancel "${arr}_2" || fail "scancel ARRAY_TASK"
[ "$(squeue -h -r -j "$arr" -o '%i %t' | tr '\n' ' ')" = "${arr}_1 PD ${arr}_2 CA ${arr}_3 PD " ] ||
	fail "scancel ${arr}_2: $(squeue -r -j "$arr" 2>&1)"
[ "$(squeue -h -j "$arr" -o '%i %t %F %K' | tr '\n' ' ')" = "${arr}_[1,3] PD $arr 1,3 ${arr}_2 CA $arr 2 " ] ||
	fail "scancel ${arr}_2: $(squeue -j "$arr" 2>&1)"
as qpuser2 scancel "$arr" || fail "scancel ARRAY"
as qpuser2 scancel "$blk" || fail "scancel ID"
qp_wait "$blk" cancelled
as qpuser1 scancel -u qpuser1 -t PD || fail "scancel -u -t PD"
[ "$(qp_state "$run")" = running ] || fail "scancel -t PD took a running job"
as qpuser1 scancel -u qpuser1 -t R || fail "scancel -u -t R"
qp_wait "$run" cancelled
# A job that already ended: Slurm's scancel is silent and exits 0.
out=$(as qpuser1 scancel "$run" 2>&1) || fail "scancel of an ended job failed: $out"
[ -z "$out" ] || fail "scancel of an ended job said: $out"
as qpuser2 scontrol release "$held" || fail "release waiter"

note "sacct after completed, failed, timed out"
ok=$(as qpuser1 qsub -N ok <<<'true') || fail "qsub ok"
bad=$(as qpuser1 qsub -N bad <<<'exit 3') || fail "qsub bad"
slow=$(as qpuser1 qsub -q short -l walltime=00:00:02 -N slow <<<'sleep 120') || fail "qsub slow"
qp_wait "$ok" completed
qp_wait "$bad" failed
qp_wait "$slow" timeout --timeout 60
qp_wait "$held" completed
memj=$(as qpuser1 qsub -N memj -l mem=1536M <<<'true') || fail "qsub memj"
qp_wait "$memj" completed
# Open OnDemand's history: --units G, Group, ReqTRES.
[ "$(as qpuser1 sacct -X -n -P --units G -o ReqMem,Group,ReqTRES -j "$memj")" = "1.50G|qpuser1|billing=1,cpu=1,mem=1536M,node=1" ] ||
	fail "sacct --units G -o ReqMem,Group,ReqTRES: $(as qpuser1 sacct -X -n -P --units G -o ReqMem,Group,ReqTRES -j "$memj")"
refused "Invalid --units specification: Q" sacct --units Q
out=$(as qpuser1 sacct -X --parsable2 --noheader --format=JobID,JobName,Partition,State,ExitCode -j "$ok,$bad,$slow,$run,$pend") ||
	fail "sacct --parsable2"
echo "$out"
expect="$run|runner|batch|CANCELLED by $uid1|0:15
$pend|pend|batch|CANCELLED by $uid1|0:0
$ok|ok|batch|COMPLETED|0:0
$bad|bad|batch|FAILED|3:0"
[ "$(echo "$out" | grep -v "^$slow|")" = "$expect" ] || fail "sacct rows differ from:
$expect"
echo "$out" | grep -qE "^$slow\|slow\|short\|TIMEOUT\|[0-9]+:[0-9]+$" || fail "sacct: timed-out job"
as qpuser2 sacct -X -P -n -o JobID,State -j "$blk" | grep -qx "$blk|CANCELLED by $uid2" || fail "sacct: qpuser2's cancelled job"
out=$(as qpuser1 sacct -j "$ok") || fail "sacct"
echo "$out"
[ "$(echo "$out" | sed -n 1p)" = "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode " ] || fail "sacct header"
[ "$(echo "$out" | sed -n 2p)" = "------------ ---------- ---------- ---------- ---------- ---------- -------- " ] || fail "sacct rule"
echo "$out" | grep -qE "^$ok +ok +batch +1  COMPLETED      0:0 $" || fail "sacct row"
echo "$out" | grep -qE "^$ok\.batch +batch +1  COMPLETED      0:0 $" || fail "sacct: no batch step without -X"
# A step by name: its row alone; a step the job never had (Snakemake asks
# for steps 0-9 of a failed job): no row, no error.
[ "$(as qpuser1 sacct -n -P -o JobID,State -j "$ok.batch")" = "$ok.batch|COMPLETED" ] || fail "sacct -j ID.batch"
out=$(as qpuser1 sacct -j "$bad.0" --format=Reason --noheader) || fail "sacct -j ID.0 failed"
[ -z "$out" ] || fail "sacct -j ID.0 shows '$out'"
refused "Invalid job id specified: $ok.bogus" sacct -j "$ok.bogus"
refused "Invalid job id specified: $ok.0" squeue -j "$ok.0"
[ "$(as qpuser1 sacct -X -n -P -o JobID --name ok,bad -S now-1hours -E now | sort -n | tr '\n' ' ')" = "$ok $bad " ] ||
	fail "sacct --name -S -E"
[ "$(as qpuser1 sacct -X -n -P -o JobID -s TO)" = "$slow" ] || fail "sacct -s TO"
out=$(as qpuser2 sacct -X -n -P -o JobID -j "$ok" -u qpuser2) || fail "sacct -j of a job -u excludes"
[ -z "$out" ] || fail "sacct -u qpuser2 shows qpuser1's job"
as qpuser1 sacct -X -p -n -o JobID,State -j "$ok" | grep -qx "$ok|COMPLETED|" || fail "sacct --parsable: trailing |"
as qpuser1 sacct -X -n -o JobName%2 -j "$bad" | grep -qx "b+ " || fail "sacct: a cut value ends with +"
as qpuser1 sacct --json -j "$ok,$bad" > "$QP_T/sa.json" || fail "sacct --json"
python3 - "$QP_T/sa.json" "$ok" "$bad" <<'PY' || fail "sacct --json"
import json, sys
d = json.load(open(sys.argv[1]))
jobs = {j["job_id"]: j for j in d["jobs"]}
ok, bad = jobs[int(sys.argv[2])], jobs[int(sys.argv[3])]
assert ok["state"]["current"] == ["COMPLETED"] and ok["exit_code"]["return_code"]["number"] == 0, ok
assert bad["state"]["current"] == ["FAILED"] and bad["exit_code"]["return_code"]["number"] == 3, bad
assert ok["name"] == "ok" and ok["user"] == "qpuser1" and ok["partition"] == "batch", ok
assert ok["time"]["end"] >= ok["time"]["start"] > 0, ok["time"]
PY
# The tools' own calls: Snakemake's executor plugin, Parsl's SlurmProvider.
since=$(date -d '-2 days' +%Y-%m-%dT%H:00)
[ "$(as qpuser1 sacct -X --parsable2 --clusters all --noheader --format=JobIdRaw,State --starttime "$since" \
	--endtime now --name ok)" = "$ok|COMPLETED" ] || fail "sacct as Snakemake calls it"
as qpuser1 sacct -X --noheader --format=jobid,state%20 --job "$bad" | grep -qE "^$bad +FAILED $" ||
	fail "sacct as Parsl calls it"
[ "$(squeue --noheader --format='%i %t' --job "$ok")" = "$ok CD" ] || fail "squeue as Parsl calls it"
refused 'Invalid field requested: "Bogus"' sacct -o JobID,Bogus
# Bad formats are refused before qpoold is asked: the same words with no server.
refused 'Invalid field requested: "Bogus"' env QPOOL_CONF=/nonexistent sacct -o Bogus
refused "Invalid job format specification: @" env QPOOL_CONF=/nonexistent squeue -o %@
refused "Invalid node format specification: y" env QPOOL_CONF=/nonexistent sinfo -o %y
refused "Invalid time specification" sacct -S yesterday-ish
refused "Invalid job state specified: XX" sacct -s XX
note "sacct of an array: its tasks, by the array's id or one task's"
ar2=$(as qpuser1 qsub -J 1-2 -N ar2 <<<'true') || fail "qsub array"
ar2=${ar2%%[*}
for _ in $(seq 600); do [ "$(qp_state "$ar2")" = completed ] && break; sleep 0.05; done
[ "$(qp_state "$ar2")" = completed ] || fail "array $ar2 is '$(qp_state "$ar2")'"
[ "$(as qpuser1 sacct -X -P -n -o JobID,JobName,State -j "$ar2" | tr '\n' ' ')" = "${ar2}_1|ar2|COMPLETED ${ar2}_2|ar2|COMPLETED " ] ||
	fail "sacct -j ARRAY: $(as qpuser1 sacct -X -P -n -o JobID,State -j "$ar2" 2>&1)"
[ "$(as qpuser1 sacct -X -P -n -o JobID,State -j "${ar2}_2,$ok")" = "$ok|COMPLETED
${ar2}_2|COMPLETED" ] || fail "sacct -j ARRAY_TASK,ID"

note "scancel --signal"
w1=$QP_T/work/qpuser1
sg=$(as qpuser1 qsub -N sig <<<'trap "echo got >> sig.txt" USR1; echo up > up.txt; while :; do sleep 0.1; done') ||
	fail "qsub sig"
qp_wait "$sg" running
qp_wait_file "$w1/up.txt"
as qpuser1 scancel --signal=USR1 "$sg" || fail "scancel --signal"
qp_wait_file "$w1/sig.txt"
[ "$(qp_state "$sg")" = running ] || fail "scancel --signal ended the job"
as qpuser1 scancel -s TERM -n sig || fail "scancel -s TERM -n"
qp_wait "$sg" completed failed cancelled

note "scontrol requeue"
rq=$(as qpuser1 qsub -N rq <<<'echo run >> runs.txt; sleep 300') || fail "qsub rq"
qp_wait "$rq" running
qp_wait_file "$w1/runs.txt"
refused "Job/step already completing or completed" as qpuser1 scontrol requeue "$ok"
as qpuser1 scontrol requeue "$rq" || fail "scontrol requeue"
# As Slurm's, the requeued job waits (121 s) unless told to start.
qp_wait "$rq" queued
[ "$(squeue -h -j "$rq" -o %r)" = BeginTime ] || fail "a requeued job's reason: $(squeue -h -j "$rq" -o %r)"
as qpuser1 scontrol update JobId="$rq" StartTime=now || fail "scontrol update StartTime=now"
for _ in $(seq 600); do [ "$(wc -l < "$w1/runs.txt")" = 2 ] && break; sleep 0.05; done
[ "$(wc -l < "$w1/runs.txt")" = 2 ] || fail "scontrol requeue: the job did not run again"
as qpuser1 scancel "$rq" || fail "scancel rq"
qp_wait "$rq" cancelled
# A finished job stays in squeue -j for Slurm's MinJobAge.
[ "$(squeue -h -j "$ok" -o %T)" = COMPLETED ] || fail "squeue -j of a just-finished job"
[ -z "$(squeue -h -u qpuser1)" ] || fail "squeue (no -t) shows finished jobs"
echo "slurm views ok"
