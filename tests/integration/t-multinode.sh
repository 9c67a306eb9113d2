#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Jobs across nodes, with three qnoded on one host (na and nc share CPU 0,
# nb has CPU 1): impossible requests refused at qsub; a 2- and a 3-node job
# whose script exits 3 (status 3, exec_host right, PBS_NODEFILE one line
# per slot, every node's CPU back); all or nothing (a 3-node job waits
# holding no CPU); EASY backfill decided by walltimes alone; qdel leaves no
# gded and no group on any node; a sister qnoded killed mid-job ends the
# job, cleans the other node, and its own copy is killed when it returns.
. "$(dirname "$0")/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
[ -d /sys/fs/cgroup/cpuset ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no cpuset controller"
qp_setup
qp_start_server
# Nodes on one host: each its own TMPDIR base (real hosts have their own
# /var/tmp), from a copy of the config that says so.
node_start() {
	local conf=$QP_T/qpool-$1.conf tmp=${3:-$QP_T/tmp-$1}
	[ -n "${3:-}" ] || { mkdir -p "$tmp"; chmod 1777 "$tmp"; }
	sed "s|^\[node\]\$|[node]\ntmpdir = $tmp|" "$QPOOL_CONF" > "$conf"
	QPOOL_CONF=$conf qp_start_node "$1" "$2"
}
node_start na 0
node_start nb 1
node_start nc 0

# free NODE: the node's free CPUs (qstat --nodes --json).
free() {
	"$QP_BIN/qstat" --nodes --json | python3 -c '
import json, sys
doc = json.load(sys.stdin)
print(next(n["free"] for n in doc[next(iter(doc))] if n["name"] == sys.argv[1]))' "$1"
}
# wait_free NODE N: waits (bounded) for the node's free CPUs to be N.
wait_free() {
	local i
	for i in $(seq 200); do
		[ "$(free "$1")" = "$2" ] && return 0
		sleep 0.05
	done
	fail "node $1 has $(free "$1") free CPUs, expected $2"
}
# exec_host JOBID: qstat -f's exec_host, whole.
exec_host() {
	"$QP_BIN/qstat" -x -f "$1" | awk -F' = ' '$1 ~ /^ *exec_host$/ {print $2; exit}'
}
# gded_of JOBID NODE: pids of the job's gded on NODE (its own spec path).
gded_of() {
	pgrep -f "gded --spec $QP_T/state/nodes/$2/jobs/$1.json" || true
}
# no_trace JOBID: no gded and no cgroup of the job on any node.
no_trace() {
	local i n left
	for i in $(seq 200); do
		left=""
		for n in na nb nc nd; do
			[ -n "$(gded_of "$1" "$n")" ] && left="$left gded@$n"
		done
		[ -n "$(find /sys/fs/cgroup -path "*$QP_CG_PARENT*" -type d -name "job.$1" 2>/dev/null)" ] &&
			left="$left cgroup"
		[ -z "$left" ] && return 0
		sleep 0.05
	done
	fail "job $1 left$left"
}

note "impossible requests are refused at submit, in one line"
out=$(echo true | as qpuser1 qsub -l select=4:ncpus=1 -l place=scatter 2>&1) && fail "scatter of 4 on 3 nodes accepted"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "refusal not one line: $out"
echo "$out" | grep -q "place=scatter: 4 chunks need 4 nodes, the pool has 3" || fail "refusal: $out"
out=$(echo true | as qpuser1 qsub -l select=2:ncpus=2 2>&1) && fail "a chunk of 2 CPUs accepted"
echo "$out" | grep -q "a chunk of ncpus=2 is wider than any node" || fail "refusal: $out"
out=$(echo true | as qpuser1 qsub -l nodes=2:ppn=1 -l place=pack 2>&1) && fail "pack of 2 accepted"
echo "$out" | grep -q "place=pack" || fail "refusal: $out"

note "a 2-node and a 3-node job: status 3, nodefile, every CPU back"
id2=$(as qpuser1 qsub -N two -l select=2:ncpus=1 -l place=scatter <<'JOB'
cat "$PBS_NODEFILE"
echo "nodes=$PBS_NUM_NODES np=$PBS_NP"
exit 3
JOB
) || fail "qsub 2-node"
qp_wait "$id2" failed
out=$QP_T/work/qpuser1/two.o$id2
qp_wait_file "$out"
cat "$out"
[ "$(qp_field "$id2" Exit_status)" = 3 ] || fail "2-node job: Exit_status $(qp_field "$id2" Exit_status)"
eh=$(exec_host "$id2")
note "exec_host $eh"
[[ "$eh" =~ ^n[abc]/0\*1\+n[abc]/0\*1$ ]] || fail "2-node exec_host '$eh'"
[ "$(head -n 2 "$out" | sort -u | wc -l)" = 2 ] || fail "nodefile of the 2-node job: $(head -n 2 "$out")"
grep -q "nodes=2 np=2" "$out" || fail "2-node env: $(cat "$out")"
for n in na nb nc; do wait_free "$n" 1; done

id3=$(as qpuser1 qsub -N three -l nodes=3 <<'JOB'
cat "$PBS_NODEFILE"
exit 3
JOB
) || fail "qsub 3-node"
qp_wait "$id3" failed
out=$QP_T/work/qpuser1/three.o$id3
qp_wait_file "$out"
[ "$(qp_field "$id3" Exit_status)" = 3 ] || fail "3-node job: Exit_status $(qp_field "$id3" Exit_status)"
[ "$(sort -u "$out" | wc -l)" = 3 ] || fail "nodefile of the 3-node job: $(cat "$out")"
eh=$(exec_host "$id3")
[ "$(echo "$eh" | tr '+' '\n' | cut -d/ -f1 | sort -u | tr '\n' ' ')" = "na nb nc " ] || fail "3-node exec_host '$eh'"
"$QP_BIN/qstat" -x -f "$id3" | grep -E "exec_vnode|Resource_List.(select|nodect|place)"
"$QP_BIN/qstat" -x -f "$id3" | grep -q "Resource_List.nodect = 3" || fail "nodect of the 3-node job"
for n in na nb nc; do wait_free "$n" 1; done
no_trace "$id3"
# qacct: each node's startup and teardown, and the slowest node.
acct=$("$QP_BIN/qacct" -j "$id3") || fail "qacct -j $id3"
echo "$acct" | grep -E "@|nodes|fenced|slowest"
for n in na nb nc; do
	echo "$acct" | grep -qE "startup@$n +[0-9]+\.[0-9]+ +s" || fail "qacct: no startup of node $n"
	echo "$acct" | grep -qE "teardown@$n +[0-9]+\.[0-9]+ +s" || fail "qacct: no teardown of node $n"
done
echo "$acct" | grep -qE "slowest_node +n[abc]" || fail "qacct: no slowest node"

note "all or nothing: a 3-node job waits while one node is busy, holding nothing"
gate=$QP_T/work/qpuser1/gate
blk=$(as qpuser1 qsub -N blk -l walltime=10:00 <<JOB
for i in \$(seq 600); do [ -e $gate ] && exit 0; sleep 0.1; done
JOB
) || fail "qsub blocker"
qp_wait "$blk" running
bnode=$(qp_field "$blk" exec_host)
wide=$(as qpuser1 qsub -N wide -l select=3:ncpus=1 -l place=scatter -l walltime=1:00 <<'JOB'
true
JOB
) || fail "qsub wide"
# Backfill: S1 ends (5 min) before the blocker's walltime runs out (10
# min from its start), so it may use a node reserved for the wide job;
# S2 (20 min) would delay the wide job and waits.
s1=$(as qpuser1 qsub -N s1 -l walltime=5:00 <<JOB
for i in \$(seq 600); do [ -e $gate ] && exit 0; sleep 0.1; done
JOB
) || fail "qsub s1"
s2=$(as qpuser1 qsub -N s2 -l walltime=20:00 <<'JOB'
true
JOB
) || fail "qsub s2"
qp_wait "$s1" running
# The pass that ran s1 passed over s2: give qpoold one more pass to be sure.
echo true | as qpuser1 qsub -N poke -h >/dev/null || fail "qsub poke"
[ "$(qp_state "$wide")" = queued ] || fail "wide job is $(qp_state "$wide") with $bnode busy"
[ "$(qp_state "$s2")" = queued ] || fail "s2 (20 min) ran ahead of the wide job: $(qp_state "$s2")"
[ "$(qp_field "$wide" exec_host)" = "" ] || fail "the waiting wide job holds nodes"
out=$(as qpuser1 qalter -l ncpus=1 "$wide" 2>&1) && fail "qalter changed the CPUs of a job across nodes"
echo "$out" | grep -q "its ncpus, mem or slots cannot be altered" || fail "qalter: $out"
# the same refusal to a Slurm user, in neither dialect's words
out=$(as qpuser1 scontrol update JobId="$wide" NumCPUs=4 2>&1) && fail "scontrol changed the CPUs of a job across nodes"
echo "$out" | grep -q "its ncpus, mem or slots cannot be altered" && ! echo "$out" | grep -q qalter ||
	fail "scontrol update NumCPUs= of a job across nodes: $out"
out=$(as qpuser1 qalter -l select=2:ncpus=1 "$s2" 2>&1) && fail "qalter made a job across nodes"
echo "$out" | grep -q "cannot ask for chunks across nodes" || fail "qalter: $out"
busy=0
for n in na nb nc; do busy=$((busy + 1 - $(free "$n"))); done
[ "$busy" = 2 ] || fail "$busy CPUs busy, expected 2 (blocker and s1; the wide job holds none)"
touch "$gate"
qp_wait "$wide" completed
qp_wait "$s2" completed
rm -f "$gate"

note "qdel of a running 2-node job leaves nothing on any node"
idd=$(as qpuser1 qsub -N del -l select=2:ncpus=1 -l place=scatter <<'JOB'
sleep 300
JOB
) || fail "qsub del"
qp_wait "$idd" running
eh=$(exec_host "$idd")
for n in $(echo "$eh" | tr '+' '\n' | cut -d/ -f1); do qp_wait_gded "$idd" "$n" >/dev/null; done
# Listed on each of its nodes (qstat --nodes, pbsnodes) and by qstat -n.
on=$("$QP_BIN/qstat" --nodes --json | python3 -c '
import json, sys
doc = json.load(sys.stdin)
print(" ".join(sorted(n["name"] for n in doc[next(iter(doc))] if int(sys.argv[1]) in n["jobs"])))' "$idd")
[ "$on" = "$(echo "$eh" | tr '+' '\n' | cut -d/ -f1 | sort | tr '\n' ' ' | sed 's/ $//')" ] ||
	fail "qstat --nodes lists job $idd on '$on', exec_host $eh"
"$QP_BIN/qstat" -n "$idd" | grep -qF "$eh" || fail "qstat -n: $("$QP_BIN/qstat" -n "$idd")"
"$QP_BIN/pbsnodes" -a | grep -c "jobs = .*$idd" | grep -qx 2 || fail "pbsnodes -a does not list job $idd twice"
"$QP_BIN/qdel" "$idd" || fail "qdel"
qp_wait "$idd" cancelled
no_trace "$idd"
for n in na nb nc; do wait_free "$n" 1; done

note "qpoold restarted while a 2-node job runs: it keeps its nodes and ends whole"
gate2=$QP_T/work/qpuser1/gate2
idr=$(as qpuser1 qsub -N rst -l select=2:ncpus=1 -l place=scatter <<JOB
for i in \$(seq 600); do [ -e $gate2 ] && exit 5; sleep 0.1; done
JOB
) || fail "qsub rst"
qp_wait "$idr" running
eh=$(exec_host "$idr")
for n in $(echo "$eh" | tr '+' '\n' | cut -d/ -f1); do qp_wait_gded "$idr" "$n" >/dev/null; done
qp_stop "$QP_SERVER_PID"
qp_start_server
for i in $(seq 200); do
	[ "$("$QP_BIN/qstat" --nodes 2>/dev/null | grep -cE '^n[abc][[:space:]].*up')" = 3 ] && break
	sleep 0.05
done
[ "$(qp_state "$idr")" = running ] || fail "job $idr is $(qp_state "$idr") after the restart"
[ "$(exec_host "$idr")" = "$eh" ] || fail "job $idr moved: $(exec_host "$idr"), was $eh"
for n in $(echo "$eh" | tr '+' '\n' | cut -d/ -f1); do wait_free "$n" 0; done
touch "$gate2"
qp_wait "$idr" failed
[ "$(qp_field "$idr" Exit_status)" = 5 ] || fail "job $idr: Exit_status $(qp_field "$idr" Exit_status)"
no_trace "$idr"
for n in na nb nc; do wait_free "$n" 1; done

note "qrerun of a running 2-node job: every node ends it, and it runs again"
rmark=$QP_T/work/qpuser1/reruns
idr2=$(as qpuser1 qsub -N rerun -l select=2:ncpus=1 -l place=scatter <<JOB
echo run >> $rmark
[ "\$(wc -l < $rmark)" -ge 2 ] && exit 0
sleep 300
JOB
) || fail "qsub rerun"
qp_wait "$idr2" running
eh=$(exec_host "$idr2")
for n in $(echo "$eh" | tr '+' '\n' | cut -d/ -f1); do qp_wait_gded "$idr2" "$n" >/dev/null; done
# The script itself has started (gded runs before it does: on a loaded
# host a qrerun in between ended the first run before its mark).
qp_wait_file "$rmark"
"$QP_BIN/qrerun" "$idr2" || fail "qrerun"
qp_wait "$idr2" completed --timeout 30
[ "$(wc -l < "$rmark")" = 2 ] || fail "job $idr2 ran $(wc -l < "$rmark") times"
no_trace "$idr2"
for n in na nb nc; do wait_free "$n" 1; done

note "a sister's qnoded killed mid-job ends it and cleans the other node"
idl=$(as qpuser1 qsub -N lost -r n -l select=2:ncpus=1 -l place=scatter <<'JOB'
sleep 300
JOB
) || fail "qsub lost"
qp_wait "$idl" running
eh=$(exec_host "$idl")
prim=$(echo "$eh" | cut -d+ -f1 | cut -d/ -f1)
sis=$(echo "$eh" | cut -d+ -f2 | cut -d/ -f1)
qp_wait_gded "$idl" "$prim" >/dev/null
qp_wait_gded "$idl" "$sis" >/dev/null
kill -KILL "$(qp_node_pid "$sis")"
qp_wait "$idl" failed --timeout 30
"$QP_BIN/qstat" -x -f "$idl" | grep -q "lost node $sis" || fail "reason: $(qp_field "$idl" comment)"
for i in $(seq 200); do [ -z "$(gded_of "$idl" "$prim")" ] && break; sleep 0.05; done
[ -z "$(gded_of "$idl" "$prim")" ] || fail "the primary $prim still runs job $idl"
# The sister's copy outlived its qnoded; when the node returns, it is killed.
case $sis in na) c=0 ;; nb) c=1 ;; nc) c=0 ;; esac
node_start "$sis" "$c"
no_trace "$idl"

note "the same with a rerunnable job: requeued, and run again on the nodes left"
for n in na nb nc; do wait_free "$n" 1; done
mark=$QP_T/work/qpuser1/runs
idq=$(as qpuser1 qsub -N again -r y -l select=2:ncpus=1 -l place=scatter <<JOB
echo run >> $mark
[ "\$(wc -l < $mark)" -ge 2 ] && exit 0
sleep 300
JOB
) || fail "qsub again"
qp_wait "$idq" running
eh=$(exec_host "$idq")
sis=$(echo "$eh" | cut -d+ -f2 | cut -d/ -f1)
prim=$(echo "$eh" | cut -d+ -f1 | cut -d/ -f1)
qp_wait_gded "$idq" "$prim" >/dev/null
qp_wait_gded "$idq" "$sis" >/dev/null
kill -KILL "$(qp_node_pid "$sis")"
qp_wait "$idq" completed --timeout 40
[ "$(wc -l < "$mark")" = 2 ] || fail "job $idq ran $(wc -l < "$mark") times"
eh2=$(exec_host "$idq")
note "first run on $eh, second on $eh2"
case "$eh2" in *"$sis/"*) fail "the rerun used the lost node $sis" ;; esac
case $sis in na) c=0 ;; nb) c=1 ;; nc) c=0 ;; esac
node_start "$sis" "$c"
no_trace "$idq"

note "a sister that cannot start its share fails the job, naming it"
# nd's TMPDIR base does not exist: its gded cannot make the job's TMPDIR.
node_start nd 1 "$QP_T/no/such/dir"
"$QP_BIN/pbsnodes" -o nb nc >/dev/null || fail "pbsnodes -o"
idf=$(as qpuser1 qsub -N sisfail -l select=2:ncpus=1 -l place=scatter <<'JOB'
sleep 300
JOB
) || fail "qsub sisfail"
qp_wait "$idf" failed --timeout 30
[ "$(exec_host "$idf")" = "na/0*1+nd/0*1" ] || fail "job $idf ran on $(exec_host "$idf")"
"$QP_BIN/qstat" -x -f "$idf" | grep -q "comment = node nd could not start: .*TMPDIR" ||
	fail "reason: $("$QP_BIN/qstat" -x -f "$idf" | grep comment)"
no_trace "$idf"
wait_free na 1
wait_free nd 1
"$QP_BIN/pbsnodes" -c nb nc >/dev/null || fail "pbsnodes -c"
echo "multinode ok"
