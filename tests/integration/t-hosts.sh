#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Five hosts made of namespaces (tests/integration/hosts.sh): qpoold on one,
# a qnoded on each of three others, commands from a fifth that runs no
# daemon and has only server = and munge_socket =. Jobs run on every node
# as their users, under the node's host name; a node whose cable is pulled
# is lost and its rerunnable job runs again elsewhere, and when the cable is
# back nothing has run twice and no stale report changes a job.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
qp_hosts_reexec "$@"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
qp_setup
qp_hosts_init
p=q$$
srv=${p}s login=${p}l nodes=("${p}a" "${p}b" "${p}c")
qp_host "$srv" 1
qp_host "${nodes[0]}" 2
qp_host "${nodes[1]}" 3
qp_host "${nodes[2]}" 4
qp_host "$login" 5
qp_pool_start "$srv" 7001
qp_node_on "${nodes[0]}" 0
qp_node_on "${nodes[1]}" 1
qp_node_on "${nodes[2]}" 0

note "the root namespace has no address or link of the pool's hosts"
ip -o addr show | grep -q " $QP_NET\." && fail "root namespace has an address in $QP_NET.0/24"
ip route show | grep -q "^$QP_NET\." && fail "root namespace routes to $QP_NET.0/24"

note "jobs from the login host run on every node as their users"
ids=()
for u in $QP_USERS; do
	for k in 1 2 3; do
		ids+=("$(qp_seqid on_as "$login" "$u" qsub -N where <<'JOB'
echo "$(hostname) $(id -un) $(sort -u "$PBS_NODEFILE")"
sleep 1
JOB
)") || fail "qsub as $u from $login"
	done
done
seen=""
for id in "${ids[@]}"; do
	qp_wait "$id" completed --timeout 60
	node=$(qp_field "$id" exec_host)
	owner=$(on_as "$login" qpuser1 qstat -x -f "$id" | awk -F' = ' '$1 ~ /Job_Owner|owner/ {print $2; exit}')
	u=${owner%%@*}
	out=$QP_T/work/$u/where.o${id%%.*}
	qp_wait_file "$out"
	read -r h who nf < "$out"
	note "job $id of $u: exec_host $node, hostname $h, ran as $who, node file $nf"
	[ "$h" = "$node" ] || fail "job $id: hostname $h on node $node"
	[ "$who" = "$u" ] || fail "job $id of $u ran as $who"
	[ "$nf" = "$node" ] || fail "job $id: node file says $nf, not $node"
	seen="$seen $node"
done
for n in "${nodes[@]}"; do
	echo "$seen" | grep -qw "$n" || fail "no job ran on $n:$seen"
done
on_as "$login" qpuser1 qacct -j "${ids[0]}" | grep -q "$(qp_field "${ids[0]}" exec_host)" ||
	fail "qacct does not show job ${ids[0]}'s node"
on_as "$login" qpuser1 qstat --nodes | grep -E "^${nodes[0]}[[:space:]]" | grep -q up || fail "qstat -n from the login host"

note "an output directory that does not exist where the job runs: the job runs, its output kept in HOME"
home1=$(getent passwd qpuser1 | cut -d: -f6)
kept_remove() { rm -f "$home1"/*."$srv"*.OU; }
QP_ATEXIT+=(kept_remove)
id=$(qp_seqid on_as "$login" qpuser1 qsub -o "$QP_T/nowhere/x.out" <<<'echo kept') || fail qsub
qp_wait "$id" completed failed --timeout 30
reason=$(qp_field "$id" comment)
note "comment: $reason"
[ "$(qp_state "$id")" = completed ] || fail "job $id: $reason"
echo "$reason" | grep -q "($QP_T/nowhere/x.out: No such file or directory)" || fail "comment does not name the path: $reason"
echo "$reason" | grep -q " on $(qp_field "$id" exec_host)\$" || fail "comment does not name the node: $reason"
kept=$(sed -n 's/.*: kept in \(.*\) on [^ ]*$/\1/p' <<<"$reason")
[[ $kept == "$home1/$id."*.OU ]] || fail "kept in '$kept', not $home1/$id.*.OU"
[ "$(cat "$kept")" = kept ] && [ "$(stat -c %U "$kept")" = qpuser1 ] || fail "$kept: $(ls -l "$kept" 2>&1)"

note "a pulled cable: the node is lost, its rerunnable job runs again on another host"
w=$QP_T/work/qpuser2
id=$(qp_seqid on_as "$login" qpuser2 qsub -N cut -r y <<JOB
h=\$(hostname)
echo "start \$h" >> $w/cut.log
if [ ! -e $w/cut.first ]; then echo "\$h" > $w/cut.first; sleep 30; else sleep 4; fi
echo "done \$h" >> $w/cut.log
JOB
) || fail qsub
qp_wait "$id" running --timeout 30
qp_wait_file "$w/cut.first"
first=$(qp_field "$id" exec_host)
note "job $id runs on $first; pulling its cable"
qp_link "$first" down
for i in $(seq 400); do
	"$QP_BIN/qstat" --nodes | grep -E "^${first}[[:space:]]" | grep -q down && break
	sleep 0.05
done
"$QP_BIN/qstat" --nodes | grep -E "^${first}[[:space:]]" | grep -q down || fail "$first not down after its cable was pulled"
# Requeued, it runs on another host; the cable goes back in meanwhile.
for i in $(seq 800); do
	[ "$(qp_state "$id")" = running ] && [ "$(qp_field "$id" exec_host)" != "$first" ] && break
	sleep 0.05
done
second=$(qp_field "$id" exec_host)
[ "$(qp_state "$id")" = running ] && [ "$second" != "$first" ] || fail "job $id not running again on another host"
note "job $id runs again on $second; plugging $first back"
qp_link "$first" up
for i in $(seq 600); do
	"$QP_BIN/qstat" --nodes | grep -E "^${first}[[:space:]]" | grep -q up && break
	sleep 0.05
done
"$QP_BIN/qstat" --nodes | grep -E "^${first}[[:space:]]" | grep -q up || fail "$first did not come back"
# The stale copy on $first is killed when $first re-registers; its report
# must not change the job. Its result is reported and acknowledged before
# qnoded deletes its files: once they are gone, the report has been seen.
for i in $(seq 200); do
	compgen -G "$QP_T/state/nodes/$first/jobs/$id.*" >/dev/null || break
	sleep 0.05
done
compgen -G "$QP_T/state/nodes/$first/jobs/$id.*" >/dev/null &&
	fail "the stale copy's files stay on $first: $(ls "$QP_T/state/nodes/$first/jobs/")"
pgrep -f "gded --spec $QP_T/state/nodes/$first/jobs/$id.json" >/dev/null && fail "stale copy of $id still runs on $first"
qp_wait "$id" completed cancelled failed --timeout 40
st=$(qp_state "$id")
[ "$st" = completed ] || fail "job $id is $st after $first came back (its stale copy's report?): $(qp_field "$id" reason)"
[ "$(qp_field "$id" exec_host)" = "$second" ] || fail "job $id recorded on $(qp_field "$id" exec_host)"
[ "$(grep -c '^done' "$w/cut.log")" = 1 ] || fail "job $id finished $(grep -c '^done' "$w/cut.log") times: $(cat "$w/cut.log")"
grep -q "done $first" "$w/cut.log" && fail "the stale copy on $first ran to the end"
echo "hosts ok"
