#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# PBS's other commands over qpool: pbsnodes, qsig, qselect, qalter,
# qrerun, qmove, qorder, tracejob, qmgr -c, qdel -W force / -x, qhold -h.
# Each does what a PBS user expects, refuses bad input with one line and
# a non-zero exit, and changes nothing then.
. "$(dirname "$0")/lib.sh"
qp_setup "
[queue one]
max_running = 1
"
qp_start_server
node=${QP_NODE_PREFIX}n1   # unique: other pools may run beside this one
qp_start_node "$node" 0-1
server=$(hostname -s)
w1=$QP_T/work/qpuser1

# qp_refuse EXPECTED-TEXT cmd...: fails with a one-line message and exit != 0.
note "pbsnodes"
out=$("$QP_BIN/pbsnodes" -a) || fail "pbsnodes -a"
echo "$out"
echo "$out" | grep -qx "$node" || fail "pbsnodes -a: node name line"
echo "$out" | grep -qx "     state = free" || fail "pbsnodes -a: state free"
echo "$out" | grep -qx "     resources_available.ncpus = 2" || fail "pbsnodes -a: ncpus"
"$QP_BIN/pbsnodes" -F json | python3 -c "import json,sys; d=json.load(sys.stdin); assert d['nodes']['$node']['state']=='free'" || fail "pbsnodes -F json"
"$QP_BIN/pbsnodes" -o -C "disk check" "$node" || fail "pbsnodes -o"
"$QP_BIN/pbsnodes" -l | grep -qE "^$node +offline +disk check$" || fail "pbsnodes -l after -o"
qp_refuse "only root" as qpuser1 pbsnodes -r "$node"
"$QP_BIN/pbsnodes" -r "$node" || fail "pbsnodes -r"
[ -z "$("$QP_BIN/pbsnodes" -l)" ] || fail "pbsnodes -l lists a node after -r"
qp_refuse "unknown node" "$QP_BIN/pbsnodes" nosuch
qp_refuse "needs node names" "$QP_BIN/pbsnodes" -o

note "qsig"
cat > "$w1/trap.sh" <<'JOB'
trap 'echo got USR1 >> sig.txt' USR1
echo ready > sig.txt
for i in $(seq 600); do sleep 0.1; done
JOB
chown qpuser1: "$w1/trap.sh"
sig=$(as qpuser1 qsub -N trap trap.sh) || fail "qsub trap"; sig=${sig%%.*}
qp_wait "$sig" running
qp_wait_file "$w1/sig.txt"
as qpuser1 qsig -s USR1 "$sig.$server" || fail "qsig -s USR1"
for _ in $(seq 100); do grep -q "got USR1" "$w1/sig.txt" && break; sleep 0.05; done
grep -q "got USR1" "$w1/sig.txt" || fail "the job did not get SIGUSR1"
[ "$(qp_state "$sig")" = running ] || fail "qsig USR1 ended the job"
qp_refuse "not a signal" as qpuser1 qsig -s NOPE "$sig"
qp_refuse "permission denied" as qpuser2 qsig -s USR1 "$sig"
as qpuser1 qsig -s KILL "$sig" || fail "qsig -s KILL"
qp_wait "$sig" failed
[ "$(qp_field "$sig" exit_signal)" = 9 ] || fail "qsig KILL: exit_signal $(qp_field "$sig" exit_signal)"

note "qalter, qmove, qhold -h, qselect"
h=$(as qpuser1 qsub -h -N alt <<<'true') || fail "qsub -h"; h=${h%%.*}
as qpuser1 qalter -N altered -l walltime=00:04:00,ncpus=2 "$h" || fail "qalter"
[ "$(qp_field "$h" Job_Name)" = altered ] || fail "qalter -N"
[ "$(qp_field "$h" Resource_List.walltime)" = 00:04:00 ] || fail "qalter walltime"
[ "$(qp_field "$h" Resource_List.ncpus)" = 2 ] || fail "qalter ncpus"
qp_refuse "above queue batch's limit" as qpuser1 qalter -l walltime=48:00:00 "$h"
qp_refuse "more CPUs than any node has" as qpuser1 qalter -l ncpus=64 "$h"
qp_refuse "more memory than any node offers its jobs" as qpuser1 qalter -l mem=64tb "$h"
qp_refuse "not a size" as qpuser1 qalter -l mem=12Q "$h"
qp_refuse "nothing to change" as qpuser1 qalter "$h"
# What qalter does not apply is refused, not dropped with the rest done.
qp_refuse "-l place: qalter cannot change it" as qpuser1 qalter -l ncpus=1,place=scatter "$h"
qp_refuse "-l scratch: qalter cannot change it" as qpuser1 qalter -l scratch=2 "$h"
qp_refuse "qalter cannot change where a job may run" as qpuser1 qalter -l ncpus=1,host=n1 "$h"
[ "$(qp_field "$h" Resource_List.ncpus)" = 2 ] || fail "a refused qalter -l changed the job's ncpus"
o=$(as qpuser1 qsub -h <<<'true') || fail "qsub -h"; o=${o%%.*}
as qpuser1 qalter -o localhost:logs/alt.out "$o" || fail "qalter -o localhost:logs/alt.out"
[ "$(qp_field "$o" Output_Path | cut -d: -f2-)" = "$QP_T/work/qpuser1/logs/alt.out" ] ||
	fail "qalter -o localhost:logs/alt.out: Output_Path $(qp_field "$o" Output_Path)"
qp_refuse "cannot send them to host elsewhere.example" as qpuser1 qalter -o elsewhere.example:/tmp/x "$o"
as qpuser1 qdel "$o" || fail "qdel $o"
qp_refuse "permission denied" as qpuser2 qalter -N x "$h"
[ "$(qp_field "$h" Resource_List.walltime)" = 00:04:00 ] || fail "a refused qalter changed the job"
as qpuser1 qmove short "$h" || fail "qmove short"
[ "$(qp_field "$h" queue)" = short ] || fail "qmove: queue not short"
qp_refuse "unknown queue 'nosuch'" as qpuser1 qmove nosuch "$h"
as qpuser1 qalter -l walltime=00:10:00 "$h" 2>/dev/null && fail "qalter above short's walltime_max accepted"
as qpuser1 qhold -h u "$h" || fail "qhold -h u of a held job"
qp_refuse "hold types" as qpuser1 qhold -h x "$h"
qp_refuse "root's" as qpuser1 qhold -h s "$h"
[ "$(as qpuser1 qselect -s H)" = "$h.$server" ] || fail "qselect -s H: $(as qpuser1 qselect -s H)"
[ "$(as qpuser1 qselect -q short -N altered -l ncpus.eq.2,walltime.le.00:05:00)" = "$h.$server" ] || fail "qselect -q -N -l"
[ -z "$(as qpuser1 qselect -u qpuser2 -s H)" ] || fail "qselect -u qpuser2 found qpuser1's job"
as qpuser1 qselect -x -s F | grep -qx "$sig.$server" || fail "qselect -x -s F"
qp_refuse "RESOURCE.OP.VALUE" as qpuser1 qselect -l ncpus
as qpuser1 qrls -h u "$h" || fail "qrls -h u"
qp_wait "$h" completed
[ -e "$w1/altered.o$h" ] || fail "qalter -N: the default output is not under the new name: $(ls "$w1")"
qp_refuse "has already finished" as qpuser1 qalter -N late "$h"

note "qrerun"
cat > "$w1/rerun.sh" <<'JOB'
echo run >> runs.txt
for i in $(seq 600); do sleep 0.1; done
JOB
chown qpuser1: "$w1/rerun.sh"
r=$(as qpuser1 qsub -N rerun rerun.sh) || fail "qsub rerun"; r=${r%%.*}
qp_wait "$r" running
qp_wait_file "$w1/runs.txt"
qp_refuse "has already finished" as qpuser1 qrerun "$h"
as qpuser1 qrerun "$r" || fail "qrerun"
for _ in $(seq 300); do [ "$(wc -l < "$w1/runs.txt")" = 2 ] && break; sleep 0.05; done
[ "$(wc -l < "$w1/runs.txt")" = 2 ] || fail "qrerun: the job did not run again ($(wc -l < "$w1/runs.txt") runs)"
qp_wait "$r" running
nr=$(as qpuser1 qsub -r n <<<'sleep 100') || fail "qsub -r n"; nr=${nr%%.*}
qp_wait "$nr" running
qp_refuse "not rerunnable" as qpuser1 qrerun "$nr"

note "qdel -W force, -x"
as qpuser1 qdel -W force "$r" || fail "qdel -W force"
# Its node answers: the job ends by the node's report, killed at once.
qp_wait "$r" cancelled --timeout 20
qp_field "$r" reason | grep -q "force" || fail "qdel -W force: no reason"
as qpuser1 qdel "$nr" || fail "qdel"
qp_wait "$nr" cancelled
qp_refuse "already finished" as qpuser1 qdel "$nr"
as qpuser1 qdel -x "$nr" || fail "qdel -x of a finished job"
qp_refuse "only -W force" as qpuser1 qdel -W bogus "$nr"

note "qorder"
"$QP_BIN/qmgr" stop one || fail "qmgr stop one"
a=$(as qpuser2 qsub -q one <<<'date +%s%N > a.txt') || fail "qsub a"; a=${a%%.*}
b=$(as qpuser2 qsub -q one <<<'date +%s%N > b.txt') || fail "qsub b"; b=${b%%.*}
c=$(as qpuser3 qsub -q one <<<'true') || fail "qsub c"; c=${c%%.*}
qp_refuse "not of one owner" "$QP_BIN/qorder" "$a" "$c"
qp_refuse "permission denied" as qpuser2 qorder "$a" "$c"
qp_refuse "permission denied" as qpuser3 qorder "$a" "$b"
as qpuser2 qorder "$a.$server" "$b" || fail "qorder"
"$QP_BIN/qmgr" -c "set queue one started = True" || fail "qmgr -c set started"
qp_wait "$a" completed; qp_wait "$b" completed
[ "$(cat "$QP_T/work/qpuser2/b.txt")" -lt "$(cat "$QP_T/work/qpuser2/a.txt")" ] || fail "qorder: $a ran before $b"

note "tracejob"
out=$("$QP_BIN/tracejob" "$a") || fail "tracejob"
echo "$out"
echo "$out" | grep -qx "Job: $a.$server" || fail "tracejob: Job line"
for what in "enqueued into one, owner qpuser2" "job run: sent to node $node" "job started as qpuser2" \
	"job ended: exit status 0" "job completed" "end: state completed"; do
	echo "$out" | grep -q "$what" || fail "tracejob lacks '$what'"
done
qp_refuse "no such job" "$QP_BIN/tracejob" 999999

note "qmgr -c"
"$QP_BIN/qmgr" -c "set queue short enabled = False" || fail "qmgr -c disable"
qp_refuse "disabled" as qpuser1 qsub -q short <<<'true'
"$QP_BIN/qmgr" -c "list queue short" | grep -qx "    enabled = False" || fail "qmgr list queue: enabled"
"$QP_BIN/qmgr" -c "s q short enabled=true; l q short" | grep -qx "    enabled = True" || fail "qmgr -c s q ...; l q"
"$QP_BIN/qmgr" -c "print server" | grep -qx "set queue batch resources_max.walltime = 24:00:00" || fail "print server"
"$QP_BIN/qmgr" -c "print server" | grep -qx "set server default_queue = batch" || fail "print server: default_queue"
"$QP_BIN/qmgr" -c "list server" | grep -q "^Server $server$" || fail "list server"
qp_refuse "qpool.conf ([queue batch] ncpus_max)" "$QP_BIN/qmgr" -c "set queue batch resources_max.ncpus = 2"
qp_refuse "not a qmgr verb" "$QP_BIN/qmgr" -c "frob queue batch"
qp_refuse "only root" as qpuser1 qmgr -c "set queue batch enabled = False"
"$QP_BIN/qmgr" -c "set node $node state = offline" || fail "qmgr set node offline"
"$QP_BIN/pbsnodes" -l | grep -q "^$node .*offline" || fail "set node offline not seen by pbsnodes"
"$QP_BIN/qmgr" -c "unset node $node state" || fail "qmgr unset node state"
echo "pbs commands ok"
