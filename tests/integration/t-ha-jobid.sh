#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A job's id is one string everywhere in a server pair (docs/HA.md, "What
# names a job id"). Two qpoold on namespaced hosts with different host
# names (hosts.sh), one SQLite store, no [server] name; a node host; a
# login host whose config lists the servers by address, as the issue had
# it (`server = ADDR1:P,ADDR2:P`). The id qsub prints is the one qstat,
# qstat -f, qselect and the job's PBS_JOBID show, and qstat, qdel take it
# whole or as its number; sbatch's number is squeue's. Then kill -9 of
# the active: the same ids from the other server, and a new job's id
# with the same suffix: the pool's name, the first active's short host
# name, kept in the store.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
qp_hosts_reexec "$@"
qp_setup
qp_hosts_init
ASK=$QP_TOP/tests/integration/qpool-ask.py
p=j$$
s1=${p}s1 s2=${p}s2 node=${p}n login=${p}l
qp_host "$s1" 1
qp_host "$s2" 2
qp_host "$node" 11
qp_host "$login" 20
qp_munged_start pool
list=$(qp_host_addr "$s1"):7001,$(qp_host_addr "$s2"):7001
for h in "$s1" "$s2"; do
	sed "s|^socket = .*|socket = $QP_T/$h.sock|" "$QPOOL_CONF" > "$QP_T/$h.conf"
	printf '[server]\nlisten = %s:7001\nmunge_socket = %s\n' "$(qp_host_addr "$h")" "$QP_T/pool.sock" >> "$QP_T/$h.conf"
done
{ cat "$QPOOL_CONF"; printf '[server]\nserver = %s\nmunge_socket = %s\n' "$list" "$QP_T/pool.sock"; } > "$QP_T/node.conf"
printf '[server]\nserver = %s\nmunge_socket = %s\n' "$list" "$QP_T/pool.sock" > "$QP_T/login.conf"
# lib.sh's helpers (qp_state, the cleanup's qdel) from this namespace: the
# servers' own sockets.
printf '[server]\nserver = %s,%s\n' "$QP_T/$s1.sock" "$QP_T/$s2.sock" >> "$QPOOL_CONF"

declare -A SPID
start_qpoold() {  # HOST
	nsenter -t "$(qp_host_pid "$1")" --net --uts "$QP_BIN/qpoold" -f "$QP_T/$1.conf" >> "$QP_T/qpoold-$1.log" 2>&1 &
	SPID[$1]=$!
	QP_PIDS+=("$!")
}
serves() {
	"$ASK" "$QP_T/$1.sock" stat 2>/dev/null |
		python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("ok") else 1)' 2>/dev/null
}
is_standby() {
	"$ASK" "$QP_T/$1.sock" stat 2>/dev/null |
		python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("standby") else 1)' 2>/dev/null
}
lq() { on_as "$login" qpuser1 "$@"; }   # a user's command on the login host
w=$QP_T/work/qpuser1

note "two servers, $s1 active and $s2 standby, no [server] name; the login host lists them by address"
start_qpoold "$s1"
for ((i = 0; i < 200; i++)); do serves "$s1" && break; sleep 0.05; done
serves "$s1" || fail "$s1 did not become active"
QP_SERVER_PID=${SPID[$s1]}
start_qpoold "$s2"
for ((i = 0; i < 200; i++)); do is_standby "$s2" && break; sleep 0.05; done
is_standby "$s2" || fail "$s2 is not a standby"
nsenter -t "$(qp_host_pid "$node")" --net --uts "$QP_BIN/qnoded" -f "$QP_T/node.conf" --cpus 0-1 \
	>> "$QP_T/qnoded-$node.log" 2>&1 &
QP_PIDS+=("$!")
for ((i = 0; i < 600; i++)); do "$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^${node}[[:space:]].*up" && break; sleep 0.05; done
"$QP_BIN/qstat" --nodes | grep -qE "^${node}[[:space:]].*up" || fail "the node did not register"

# check_id ID: every command shows the job by the id qsub printed, and
# takes it whole or as its number.
check_id() {
	local id=$1 out
	out=$(lq qstat 2>&1) || fail "qstat: $out"
	echo "$out" | awk 'NR > 2 { print $1 }' | grep -qxF "$id" || fail "qstat does not list $id: $out"
	out=$(lq qstat -f "$id" 2>&1) || fail "qstat -f $id: $out"
	echo "$out" | grep -qxF "Job Id: $id" || fail "qstat -f $id says: $(echo "$out" | head -1)"
	out=$(lq qstat -f "${id%%.*}" 2>&1) || fail "qstat -f ${id%%.*}: $out"
	echo "$out" | grep -qxF "Job Id: $id" || fail "qstat -f ${id%%.*} says: $(echo "$out" | head -1)"
	out=$(lq qselect 2>&1) || fail "qselect: $out"
	echo "$out" | grep -qxF "$id" || fail "qselect does not list $id: $out"
}

note "qsub's id is qstat's, qselect's and the job's PBS_JOBID"
id1=$(lq qsub -N one -o /dev/null -e /dev/null <<JOB
echo "\$PBS_JOBID" > $w/one.id
for i in \$(seq 1200); do [ -e $w/go ] && exit 0; sleep 0.1; done
exit 1
JOB
) || fail "qsub: $id1"
echo "qsub printed $id1"
[ "${id1#*.}" = "$s1" ] || fail "qsub printed $id1: expected the pool's name, the first active's host name $s1"
check_id "$id1"
for ((i = 0; i < 600; i++)); do [ -s "$w/one.id" ] && break; sleep 0.05; done
[ "$(cat "$w/one.id" 2>/dev/null)" = "$id1" ] || fail "PBS_JOBID is '$(cat "$w/one.id" 2>/dev/null)', qsub printed $id1"
out=$(lq sbatch --wrap "sleep 600" -o /dev/null 2>&1) || fail "sbatch: $out"
sb=${out##* }
[ "$out" = "Submitted batch job $sb" ] || fail "sbatch says: $out"
lq squeue -h -o %i | grep -qxF "$sb" || fail "squeue does not list $sb: $(lq squeue 2>&1)"

note "kill -9 of $s1: the same ids from $s2"
kill -KILL "${SPID[$s1]}"
wait "${SPID[$s1]}" 2>/dev/null
for ((i = 0; i < 300; i++)); do serves "$s2" && break; sleep 0.05; done
serves "$s2" || fail "$s2 did not take over"
QP_SERVER_PID=${SPID[$s2]}
check_id "$id1"
lq squeue -h -o %i | grep -qxF "$sb" || fail "squeue at $s2 does not list $sb: $(lq squeue 2>&1)"
# qdel takes the whole id; both CPUs of the node are free again.
out=$(lq qdel "$id1" 2>&1) || fail "qdel $id1 at $s2: $out"
lq scancel "$sb" || fail "scancel $sb"
qp_wait "${id1%%.*}" cancelled --timeout 60
id2=$(echo "echo \$PBS_JOBID > $w/two.id" | lq qsub -N two -o /dev/null -e /dev/null) || fail "qsub at $s2: $id2"
echo "qsub at $s2 printed $id2"
[ "${id2#*.}" = "$s1" ] || fail "qsub at $s2 printed $id2: the pool's name is $s1"
qp_wait "${id2%%.*}" completed --timeout 60
[ "$(cat "$w/two.id" 2>/dev/null)" = "$id2" ] || fail "PBS_JOBID is '$(cat "$w/two.id" 2>/dev/null)', qsub printed $id2"
out=$(lq qstat -x -f "$id2" 2>&1) || fail "qstat -x -f $id2: $out"
echo "$out" | grep -qxF "Job Id: $id2" || fail "qstat -x -f $id2 says: $(echo "$out" | head -1)"
echo "PASS"
