#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Node names and features in placement (docs/RESOURCES.md). Simulated
# nodes: three A (ib,bigmem,rack1) and two B (opa,rack2,model=skylake),
# two CPUs each. sbatch --exclude keeps a job off nodes, --nodelist gives
# it exactly those, PBS host= and Torque nodes=NAME:ppn= put it on the
# node named; -C with '&', '|' and '[a|b]' (all nodes on one of them),
# PBS chunk features and Torque properties pick the nodes that have
# them; a job only busy nodes satisfy waits with Slurm's Resources, one
# whose node is offline with ReqNodeNotAvail; a restarted qpoold keeps the
# features of its known nodes, a queued job's exclusion and its chunks'
# own features; two real qnoded on CPUs 0 and 1 report [node] features
# and hwloc's arch=, and -x, -w, -C and nodes=NAME:ppn= put jobs on the
# CPUs of the node they name; a chunk's features apply to that chunk
# alone (select=1:ncpus=2:model=skylake+2:ncpus=2:bigmem=true). Bad
# input: one line, no job.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
P=$QP_NODE_PREFIX
A0=${P}a-0 A1=${P}a-1 A2=${P}a-2 B0=${P}b-0 B1=${P}b-1

sim_start() {  # PREFIX COUNT FEATURES
	"$QP_BIN/qnoded" -f "$QPOOL_CONF" --simulate "$2" --name "$1" --sim-features "$3" \
		--sim-topology "pack:1 core:2 pu:1" >> "$QP_T/qnoded-$1.log" 2>&1 &
	QP_PIDS+=($!)
	eval "SIM_PID_$4=$!"
}
sim_up() {  # waits for all five
	local i
	for i in $(seq 200); do
		[ "$("$QP_BIN/qstat" --nodes 2>/dev/null | grep -cE "^${P}[ab]-[0-9]+ +up")" = 5 ] && return 0
		sleep 0.05
	done
	fail "the simulated nodes are not all up: $("$QP_BIN/qstat" --nodes)"
}
sim_start "${P}a" 3 "ib,bigmem,rack1" a
sim_start "${P}b" 2 "opa, rack2 ,model=skylake" b
sim_up

# The nodes of a job as exec_host lists them, sorted, one line.
nodes_of() {
	"$QP_BIN/qstat" -x -f "$1" | awk -F' = ' '$1 ~ /^ *exec_host$/ {print $2}' | tr '+' '\n' |
		sed 's|/.*||' | sort -u | tr '\n' ' ' | sed 's/ $//'
}
sb() { as qpuser1 sbatch --parsable "$@"; }
quick=(--export=QPOOL_SIM_RUNTIME=0.2)

note "features shown: pbsnodes, sinfo %f, scontrol show node"
"$QP_BIN/pbsnodes" "$B0" | grep -q "resources_available.model = skylake" ||
	fail "pbsnodes $B0 has no resources_available.model: $("$QP_BIN/pbsnodes" "$B0")"
"$QP_BIN/pbsnodes" "$A1" | grep -q "resources_available.bigmem = True" || fail "pbsnodes $A1: no bigmem = True"
"$QP_BIN/pbsnodes" "$B1" | grep -q "properties = opa,rack2,model=skylake" || fail "pbsnodes $B1: properties"
out=$(as qpuser1 sinfo -h -N -o "%N %f" | grep -E "^${P}[ab]-" | sort -u)
[ "$(grep -c " ib,bigmem,rack1$" <<< "$out")" = 3 ] && [ "$(grep -c " opa,rack2,model=skylake$" <<< "$out")" = 2 ] ||
	fail "sinfo %f: $out"
as qpuser1 scontrol show node "$A0" | grep -q "AvailableFeatures=ib,bigmem,rack1" || fail "scontrol show node $A0"

note "--exclude and -C: every job on the one node left"
ids=()
for i in 1 2 3 4; do
	ids+=("$(sb "${quick[@]}" -x "$A0,$A1" -C rack1 --wrap=true)") || fail "sbatch -x"
done
for id in "${ids[@]}"; do
	qp_wait "$id" completed
	[ "$(nodes_of "$id")" = "$A2" ] || fail "job $id (-x $A0,$A1 -C rack1) ran on '$(nodes_of "$id")'"
done

note "--nodelist: exactly those nodes; PBS host=, Torque nodes=NAME:ppn="
id=$(sb "${quick[@]}" -w "$A1,$B1" --wrap=true) || fail "sbatch -w"
qp_wait "$id" completed
[ "$(nodes_of "$id")" = "$A1 $B1" ] || fail "job $id (-w $A1,$B1) ran on '$(nodes_of "$id")'"
as qpuser1 scontrol show job "$id" | grep -q "ReqNodeList=${P}a-1,${P}b-1" ||
	fail "scontrol show job: no ReqNodeList: $(as qpuser1 scontrol show job "$id")"
id=$(sb "${quick[@]}" -w "${P}a-[1-2]" -n 2 --wrap=true) || fail "sbatch -w range"
qp_wait "$id" completed
[ "$(nodes_of "$id")" = "$A1 $A2" ] || fail "job $id (-w ${P}a-[1-2]) ran on '$(nodes_of "$id")'"
id=$(as qpuser1 qsub -v QPOOL_SIM_RUNTIME=0.2 -l "select=1:host=$B1" <<< true) || fail "qsub host="
qp_wait "$id" completed
[ "$(nodes_of "$id")" = "$B1" ] || fail "job $id (host=$B1) ran on '$(nodes_of "$id")'"
id=$(as qpuser1 qsub -v QPOOL_SIM_RUNTIME=0.2 -l "select=1:ncpus=1:host=$A1+1:ncpus=1:host=$B1" <<< true) ||
	fail "qsub two hosts"
qp_wait "$id" completed
[ "$(nodes_of "$id")" = "$A1 $B1" ] || fail "job $id (host=$A1+host=$B1) ran on '$(nodes_of "$id")'"
id=$(as qpuser1 qsub -v QPOOL_SIM_RUNTIME=0.2 -l "nodes=$B0:ppn=2" <<< true) || fail "qsub nodes=$B0:ppn=2"
qp_wait "$id" completed
[ "$(nodes_of "$id")" = "$B0" ] || fail "job $id (nodes=$B0:ppn=2) ran on '$(nodes_of "$id")'"
[ "$(qp_field "$id" Resource_List.ncpus)" = 2 ] || fail "job $id: ncpus $(qp_field "$id" Resource_List.ncpus)"

note "constraints: a&b, a|b, PBS chunk features, Torque properties"
check_on() {  # ID PATTERN WHAT
	qp_wait "$1" completed
	[[ "$(nodes_of "$1")" =~ ^($2)( ($2))*$ ]] || fail "$3: job $1 ran on '$(nodes_of "$1")'"
}
id=$(sb "${quick[@]}" -C 'opa&rack2' --wrap=true) || fail "sbatch -C a&b"
check_on "$id" "${P}b-[01]" "-C opa&rack2"
id=$(sb "${quick[@]}" -C 'nosuch|model=skylake' --wrap=true) || fail "sbatch -C a|b"
check_on "$id" "${P}b-[01]" "-C nosuch|model=skylake"
id=$(sb "${quick[@]}" -C '(opa|ib)&bigmem' --wrap=true) || fail "sbatch -C (a|b)&c"
check_on "$id" "${P}a-[012]" "-C (opa|ib)&bigmem"
id=$(as qpuser1 qsub -v QPOOL_SIM_RUNTIME=0.2 -l select=1:ncpus=1:model=skylake <<< true) || fail "qsub model="
check_on "$id" "${P}b-[01]" "select=1:model=skylake"
id=$(as qpuser1 qsub -v QPOOL_SIM_RUNTIME=0.2 -l select=2:ncpus=1:bigmem=true -l place=scatter <<< true) ||
	fail "qsub bigmem=true"
check_on "$id" "${P}a-[012]" "select=2:ncpus=1:bigmem=true"
id=$(as qpuser1 qsub -v QPOOL_SIM_RUNTIME=0.2 -l nodes=1:ppn=2:opa <<< true) || fail "qsub nodes=1:ppn=2:opa"
check_on "$id" "${P}b-[01]" "nodes=1:ppn=2:opa"
# A chunk's features are its own: the skylake chunk on a B node, the two
# bigmem chunks on A nodes (job-wide, no node has both: refused).
id=$(as qpuser1 qsub -v QPOOL_SIM_RUNTIME=0.2 -l select=1:ncpus=2:model=skylake+2:ncpus=2:bigmem=true <<< true) ||
	fail "qsub per-chunk features"
qp_wait "$id" completed
[[ "$(nodes_of "$id")" =~ ^${P}a-[012]\ ${P}a-[012]\ ${P}b-[01]$ ]] ||
	fail "select=1:ncpus=2:model=skylake+2:ncpus=2:bigmem=true: job $id ran on '$(nodes_of "$id")'"
[ "$(qp_field "$id" Resource_List.select)" = "1:ncpus=2:model=skylake+2:ncpus=2:bigmem=true" ] ||
	fail "qstat -f of job $id: select $(qp_field "$id" Resource_List.select)"
id=$(as qpuser1 qsub -v QPOOL_SIM_RUNTIME=0.2 -l nodes=1:ppn=2:opa+2:ppn=2:bigmem <<< true) ||
	fail "qsub per-part Torque properties"
qp_wait "$id" completed
[[ "$(nodes_of "$id")" =~ ^${P}a-[012]\ ${P}a-[012]\ ${P}b-[01]$ ]] ||
	fail "nodes=1:ppn=2:opa+2:ppn=2:bigmem: job $id ran on '$(nodes_of "$id")'"

note "[rack1|rack2]: one rack for all nodes, waiting while neither has room"
hold=$(as qpuser1 qsub -l walltime=300 -l "select=1:ncpus=2:host=$A0" <<< true) || fail "qsub hold"
qp_wait "$hold" running
id=$(sb "${quick[@]}" -N 3 -C '[rack1|rack2]' --wrap=true) || fail "sbatch -C [a|b]"
# Room for three nodes only across both racks: it must not start.
for i in $(seq 20); do [ "$(qp_state "$id")" = queued ] || break; sleep 0.05; done
[ "$(qp_state "$id")" = queued ] || fail "job $id (-N 3 -C [rack1|rack2]) started across racks: $(nodes_of "$id")"
as qpuser1 qdel "$hold" || fail "qdel"
qp_wait "$id" completed
[ "$(nodes_of "$id")" = "$A0 $A1 $A2" ] || fail "job $id (-N3 [rack1|rack2]) ran on '$(nodes_of "$id")'"

note "waiting reasons: busy nodes (Resources), an offline one (ReqNodeNotAvail)"
h0=$(as qpuser1 qsub -l walltime=300 -l "select=1:ncpus=2:host=$B0" <<< true) || fail "qsub h0"
h1=$(as qpuser1 qsub -l walltime=300 -l "select=1:ncpus=2:host=$B1" <<< true) || fail "qsub h1"
qp_wait "$h0" running
qp_wait "$h1" running
w=$(sb "${quick[@]}" -C opa --wrap=true) || fail "sbatch -C opa"
for i in $(seq 40); do
	r=$(as qpuser1 squeue -h -j "$w" -o %r)
	[ "$r" = Resources ] && break
	sleep 0.05
done
[ "$r" = Resources ] || fail "job $w (-C opa, its nodes busy) waits with '$r', expected Resources"
case $(qp_field "$w" comment) in *"free CPUs on the 2 node(s) it may use"*) ;;
*) fail "job $w: PBS comment '$(qp_field "$w" comment)'" ;; esac
"$QP_BIN/pbsnodes" -o "$A2" -C "broken fan" || fail "pbsnodes -o"
v=$(sb "${quick[@]}" -w "$A2" --wrap=true) || fail "sbatch -w offline node"
r=$(as qpuser1 squeue -h -j "$v" -o %r)
[ "$r" = ReqNodeNotAvail ] || fail "job $v (-w $A2, offline) waits with '$r', expected ReqNodeNotAvail"
"$QP_BIN/pbsnodes" -r "$A2" || fail "pbsnodes -r"
qp_wait "$v" completed
as qpuser1 qdel "$h0" "$h1" || fail "qdel"
qp_wait "$w" completed

note "bad input: one line, non-zero, nothing made"
before=$("$QP_BIN/qstat" -x | wc -l)
bad() {  # WANT CMD...
	local want=$1 out; shift
	out=$("$@" 2>&1) && fail "$* accepted: $out"
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "$*: not one line: $out"
	case $out in *"$want"*) ;; *) fail "$*: '$out', expected '$want'" ;; esac
}
bad "Invalid node name specified" as qpuser1 sbatch -w nosuch --wrap=true
bad "Invalid node name specified" as qpuser1 sbatch -x "$A0,nosuch" --wrap=true
bad "Invalid node name specified" as qpuser1 sbatch -w "n[3-1]" --wrap=true
bad "Invalid feature specification" as qpuser1 sbatch -C gpu --wrap=true
bad "Invalid feature specification" as qpuser1 sbatch -C 'ib&' --wrap=true
bad "node counts" as qpuser1 sbatch -C 'ib*2' --wrap=true
bad "Node count specification invalid" as qpuser1 sbatch -N 1 -w "$A0,$A1" --wrap=true
bad "Requested node configuration is not available" as qpuser1 sbatch -x "${P}a-[0-2],${P}b-[0-1]" --wrap=true
bad "Invalid feature specification" as qpuser1 sbatch -w "$A0" -C opa --wrap=true
bad "no one of its alternatives has nodes enough" as qpuser1 sbatch -N 4 -C '[rack1|rack2]' --wrap=true
bad "unknown node nosuch" as qpuser1 qsub -l select=1:host=nosuch <<< true
bad "no node of this pool has those features" as qpuser1 qsub -l select=1:gpu=true <<< true
bad "leave bigmem out" as qpuser1 qsub -l select=1:bigmem=false <<< true
bad "chunk 1: gpu: no node of this pool has those features" as qpuser1 qsub -l select=1:gpu=true+1:ncpus=1 <<< true
bad "not a node name" as qpuser1 qsub -l nodes=a/b:ppn=1 <<< true
after=$("$QP_BIN/qstat" -x | wc -l)
[ "$before" = "$after" ] || fail "bad input made jobs: $before -> $after"

note "restart: known nodes keep their features, a queued job its exclusion"
q=$(sb "${quick[@]}" -x "$A0,$A1,$A2" -C 'rack1|rack2' --hold --wrap=true) || fail "sbatch held"
js=$(as qpuser1 squeue --json -j "$q" | python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]
print(j["excluded_nodes"], j["features"], j["required_nodes"] or "-")')
[ "$js" = "${P}a-[0-2] rack1|rack2 -" ] || fail "squeue --json of job $q: '$js'"
pc=$(as qpuser1 qsub -h -v QPOOL_SIM_RUNTIME=0.2 -l select=1:ncpus=2:model=skylake+2:ncpus=2:bigmem=true <<< true) ||
	fail "qsub -h per-chunk features"
qp_stop "$SIM_PID_a"
qp_stop "$SIM_PID_b"
qp_stop "$QP_SERVER_PID"
qp_start_server
"$QP_BIN/pbsnodes" "$B0" | grep -q "properties = opa,rack2,model=skylake" ||
	fail "restarted qpoold forgot $B0's features: $("$QP_BIN/pbsnodes" "$B0")"
id=$(sb "${quick[@]}" -C model=skylake --hold --wrap=true) ||
	fail "-C model=skylake refused with its nodes known but not back"
sim_start "${P}a" 3 "ib,bigmem,rack1" a
sim_start "${P}b" 2 "opa,rack2,model=skylake" b
sim_up
as qpuser1 scontrol release "$q" "$id" || fail "scontrol release"
as qpuser1 qrls "$pc" || fail "qrls $pc"
qp_wait "$pc" completed
[[ "$(nodes_of "$pc")" =~ ^${P}a-[012]\ ${P}a-[012]\ ${P}b-[01]$ ]] ||
	fail "job $pc (per-chunk features) ran on '$(nodes_of "$pc")' after the restart"
qp_wait "$q" completed
[[ "$(nodes_of "$q")" =~ ^${P}b-[01]$ ]] || fail "job $q (-x ${P}a-*) ran on '$(nodes_of "$q")' after the restart"
check_on "$id" "${P}b-[01]" "-C model=skylake after a restart"

note "two real qnoded: [node] features, hwloc's arch=, -x, -w and -C on real CPUs"
qp_stop "$SIM_PID_a"
qp_stop "$SIM_PID_b"
real_start() {  # NAME CPU FEATURES
	sed "s/^\[node\]$/[node]\nfeatures = $3/" "$QPOOL_CONF" > "$QP_T/$1.conf"
	"$QP_BIN/qnoded" -f "$QP_T/$1.conf" --name "$1" --cpus "$2" >> "$QP_T/qnoded-$1.log" 2>&1 &
	QP_PIDS+=($!)
	for i in $(seq 100); do
		"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^$1 +up" && return 0
		sleep 0.05
	done
	fail "qnoded $1 did not register"
}
R0=${P}r0 R1=${P}r1
real_start "$R0" 0 "realib, scratch"
real_start "$R1" 1 "scratch"
props=$("$QP_BIN/pbsnodes" "$R0" | awk -F' = ' '$1 ~ /^ *properties$/ {print $2}')
case $props in realib,scratch,arch=*) ;; *) fail "$R0's properties '$props'" ;; esac
note "$R0: $props"
W=$QP_T/work/qpuser1
cpus_of() { awk '/^Cpus_allowed_list/ {print $2}' "$W/slurm-$1.out"; }
ids=()
for i in 1 2 3; do
	ids+=("$(sb -x "$R0" --wrap='grep Cpus_allowed_list /proc/self/status')") || fail "sbatch -x $R0"
done
for id in "${ids[@]}"; do
	qp_wait "$id" completed
	[ "$(nodes_of "$id")" = "$R1" ] && [ "$(cpus_of "$id")" = 1 ] ||
		fail "job $id (-x $R0) ran on '$(nodes_of "$id")', CPUs '$(cpus_of "$id")'"
done
a=$(sb -w "$R0" --wrap='grep Cpus_allowed_list /proc/self/status') || fail "sbatch -w $R0"
b=$(sb -C 'realib&scratch' --wrap='grep Cpus_allowed_list /proc/self/status') || fail "sbatch -C realib&scratch"
c=$(as qpuser1 qsub -l "nodes=$R1:ppn=1" <<< true) ||
	fail "qsub nodes=$R1:ppn=1"
for id in "$a" "$b"; do
	qp_wait "$id" completed
	[ "$(nodes_of "$id")" = "$R0" ] && [ "$(cpus_of "$id")" = 0 ] ||
		fail "job $id ran on '$(nodes_of "$id")', CPUs '$(cpus_of "$id")', expected $R0 CPU 0"
done
qp_wait "$c" completed
[ "$(nodes_of "$c")" = "$R1" ] || fail "job $c (nodes=$R1:ppn=1) ran on '$(nodes_of "$c")'"
echo "node selection ok"
