#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Pool-wide licenses (docs/RESOURCES.md, "Licenses"): [licenses] matlab = 2.
# Three jobs for one matlab each on a simulated node with room for all:
# two run, the third waits (squeue's reason Licenses, the PBS comment
# naming the counts) and starts when one ends; PBS -l matlab=1 and Slurm
# -L count alike; scontrol show licenses, qstat -Bf, scontrol show job
# Licenses= and qstat -f Resource_List.matlab show them; a restarted
# qpoold counts what running jobs hold; bad input is one line and no job;
# a reload with a bad [licenses] line keeps the old config.
. "$(dirname "$0")/lib.sh"
qp_setup "
[licenses]
matlab = 2
comsol = 5
[node]
resources = nvme:1 tmp:10G"
qp_start_server
P=$QP_NODE_PREFIX

"$QP_BIN/qnoded" -f "$QPOOL_CONF" --simulate 1 --name "${P}s" --sim-topology "pack:1 core:8 pu:1" \
	>> "$QP_T/qnoded-sim.log" 2>&1 &
SIM_PID=$!
QP_PIDS+=("$SIM_PID")
for i in $(seq 200); do
	"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^${P}s-0 +up" && break
	sleep 0.05
done
"$QP_BIN/qstat" --nodes | grep -qE "^${P}s-0 +up" || fail "the simulated node is not up"

sb() { as qpuser1 sbatch --parsable "$@"; }
reason() { as qpuser1 squeue -h -j "$1" -o %r; }
bad() {  # WORDS CMD...
	local out want=$1; shift
	out=$("$@" 2>&1) && fail "accepted: $* -> $out"
	grep -q -- "$want" <<<"$out" || fail "$*: expected '$want': $out"
	[ "$(wc -l <<<"$out")" = 1 ] || fail "$*: not one line: $out"
}
lic_line() { as qpuser1 scontrol show licenses matlab | tr '\n' ' ' | sed 's/  */ /g'; }

note "scontrol show licenses, qstat -Bf: the totals"
out=$(as qpuser1 scontrol show licenses)
grep -q "^LicenseName=matlab$" <<<"$out" || fail "scontrol show licenses: $out"
grep -q "Total=2 Used=0 Free=2 Reserved=0 Remote=no" <<<"$out" || fail "scontrol show licenses: $out"
grep -q "Total=5 Used=0 Free=5" <<<"$out" || fail "scontrol show licenses (comsol): $out"
out=$("$QP_BIN/qstat" -Bf)
grep -q "resources_available.matlab = 2" <<<"$out" || fail "qstat -Bf: $out"
grep -q "resources_assigned.matlab = 0" <<<"$out" || fail "qstat -Bf: $out"

note "three jobs for two licenses: the third waits with Licenses, starts when one ends"
a=$(sb --export=QPOOL_SIM_RUNTIME=5 -L matlab --wrap=true) || fail "sbatch -L matlab"
b=$(as qpuser1 qsub -v QPOOL_SIM_RUNTIME=8 -l matlab=1 <<< true) || fail "qsub -l matlab=1"
b=${b%%.*}
qp_wait "$a" running
qp_wait "$b" running
c=$(sb --export=QPOOL_SIM_RUNTIME=0.2 -L matlab:1,comsol:2 --wrap=true) || fail "sbatch -L matlab:1,comsol:2"
for i in $(seq 40); do [ "$(reason "$c")" = Licenses ] && break; sleep 0.05; done
[ "$(reason "$c")" = Licenses ] || fail "job $c waits with '$(reason "$c")', not Licenses ($(qp_state "$c"))"
[ "$(qp_state "$c")" = queued ] || fail "job $c is $(qp_state "$c") with both licenses held"
"$QP_BIN/qstat" -f "$c" | grep -q "matlab: 2/2 in use" || fail "qstat -f comment: $("$QP_BIN/qstat" -f "$c" | grep -i comment)"
[[ "$(lic_line)" == *"Total=2 Used=2 Free=0"* ]] || fail "scontrol show licenses while both held: $(lic_line)"
"$QP_BIN/qstat" -Bf | grep -q "resources_assigned.matlab = 2" || fail "qstat -Bf: $("$QP_BIN/qstat" -Bf)"
as qpuser1 scontrol show job "$c" | grep -q "Licenses=matlab:1,comsol:2" ||
	fail "scontrol show job: $(as qpuser1 scontrol show job "$c" | grep -i lic)"
js=$(as qpuser1 squeue --json -j "$c" | python3 -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["licenses"])')
[ "$js" = "matlab:1,comsol:2" ] || fail "squeue --json licenses of job $c: '$js'"
[ "$(qp_field "$b" Resource_List.matlab)" = 1 ] || fail "qstat -f $b: Resource_List.matlab '$(qp_field "$b" Resource_List.matlab)'"
[ "$(qp_field "$c" Resource_List.comsol)" = 2 ] || fail "qstat -f $c: Resource_List.comsol"
qp_wait "$c" completed --timeout 40
qp_wait "$a" completed
# c started only once a had ended: a's end is before c's start.
[ "$(qp_state "$b")" = running ] || [ "$(qp_state "$b")" = completed ] || fail "job $b: $(qp_state "$b")"
qp_wait "$b" completed --timeout 40
[[ "$(lic_line)" == *"Used=0 Free=2"* ]] || fail "licenses not given back: $(lic_line)"
out=$(as qpuser1 qacct -j "$b")
grep -qE "license_hours +matlab:[0-9.]+" <<<"$out" || fail "qacct -j $b: no license_hours: $out"
out=$(as qpuser1 qacct -j "$c")
grep -qE "licenses +matlab:1,comsol:2" <<<"$out" && grep -qE "license_hours +matlab:[0-9.]+,comsol:[0-9.]+" <<<"$out" ||
	fail "qacct -j $c: $out"

note "an array of three for two licenses: two run, the third waits with Licenses"
arr=$(sb --array=1-3 --export=QPOOL_SIM_RUNTIME=4 -L matlab --wrap=true) || fail "sbatch --array -L"
for i in $(seq 100); do
	out=$(as qpuser1 squeue -h -j "$arr" -o "%i %t %r")
	[ "$(grep -c " R " <<<"$out")" = 2 ] && grep -q "PD Licenses" <<<"$out" && break
	sleep 0.05
done
[ "$(grep -c " R " <<<"$out")" = 2 ] && grep -q "PD Licenses" <<<"$out" || fail "array $arr: $out"
for i in 1 2 3; do qp_wait "${arr}[$i]" completed --timeout 40; done

note "restart: running jobs hold their licenses in the new qpoold"
a=$(sb --export=QPOOL_SIM_RUNTIME=8 -L matlab:2 --wrap=true) || fail "sbatch -L matlab:2"
qp_wait "$a" running
qp_stop "$QP_SERVER_PID"
qp_start_server
for i in $(seq 100); do [[ "$(lic_line)" == *"Used=2"* ]] && break; sleep 0.05; done
[[ "$(lic_line)" == *"Used=2 Free=0"* ]] || fail "after a restart: $(lic_line) ($(qp_state "$a"))"
c=$(sb --export=QPOOL_SIM_RUNTIME=0.2 -L matlab --wrap=true) || fail "sbatch after restart"
for i in $(seq 40); do [ "$(reason "$c")" = Licenses ] && break; sleep 0.05; done
[ "$(qp_state "$c")" = queued ] && [ "$(reason "$c")" = Licenses ] ||
	fail "after a restart job $c is $(qp_state "$c") ($(reason "$c")) with matlab held by $a"
qp_wait "$c" completed --timeout 40
qp_wait "$a" completed

note "qsub -l licenses= (what salloc and srun give qsub)"
id=$(as qpuser1 qsub -v QPOOL_SIM_RUNTIME=0.2 -l licenses=comsol:2 -l licenses=matlab <<< true 2>"$QP_T/qsub.err") ||
	fail "qsub -l licenses=: $(cat "$QP_T/qsub.err")"
[ -s "$QP_T/qsub.err" ] && fail "qsub -l licenses= warned: $(cat "$QP_T/qsub.err")"
qp_wait "$id" completed
[ "$(qp_field "$id" Resource_List.licenses)" = "comsol:2,matlab:1" ] ||
	fail "qsub -l licenses=: Resource_List.licenses '$(qp_field "$id" Resource_List.licenses)'"

note "node resources: [node] resources = nvme:1 tmp:10G; two jobs for nvme:1 take turns"
P0=${P}s-0
"$QP_BIN/pbsnodes" "$P0" | grep -q "resources_available.nvme = 1" || fail "pbsnodes: $("$QP_BIN/pbsnodes" "$P0")"
"$QP_BIN/pbsnodes" "$P0" | grep -q "resources_available.tmp = 10gb" || fail "pbsnodes: $("$QP_BIN/pbsnodes" "$P0")"
out=$(as qpuser1 sinfo -h -N -o "%N %G" | grep "^$P0 ")
[ "$out" = "$P0 nvme:1,tmp:10G" ] || fail "sinfo %G: '$out'"
as qpuser1 scontrol show node "$P0" | grep -q "Gres=nvme:1,tmp:10G" || fail "scontrol show node: $(as qpuser1 scontrol show node "$P0")"
a=$(sb --export=QPOOL_SIM_RUNTIME=5 --gres=nvme:1 --wrap=true) || fail "sbatch --gres=nvme:1"
qp_wait "$a" running
"$QP_BIN/pbsnodes" "$P0" | grep -q "resources_assigned.nvme = 1" || fail "pbsnodes assigned: $("$QP_BIN/pbsnodes" "$P0")"
b=$(as qpuser1 qsub -v QPOOL_SIM_RUNTIME=0.2 -l select=1:ncpus=1:nvme=1 <<< true) || fail "qsub select=...:nvme=1"
b=${b%%.*}
c=$(sb --export=QPOOL_SIM_RUNTIME=0.2 --tmp=5G --wrap=true) || fail "sbatch --tmp=5G"
qp_wait "$c" completed   # tmp is free: it runs beside a
[ "$(qp_state "$a")" = running ] || fail "job $a is $(qp_state "$a") before its 5 s"
[ "$(qp_state "$b")" = queued ] || fail "job $b (nvme=1) is $(qp_state "$b") while $a holds the node's one nvme"
[ "$(qp_field "$b" Resource_List.node_res)" = "nvme:1" ] || fail "job $b: Resource_List.node_res '$(qp_field "$b" Resource_List.node_res)'"
qp_wait "$a" completed --timeout 40
qp_wait "$b" completed --timeout 40
"$QP_BIN/pbsnodes" "$P0" | grep -q "resources_assigned.nvme = 0" || fail "nvme not given back: $("$QP_BIN/pbsnodes" "$P0")"
# Across a restart: the running job's nvme is still held.
a=$(sb --export=QPOOL_SIM_RUNTIME=8 --gres=nvme:1 --wrap=true) || fail "sbatch --gres=nvme:1"
qp_wait "$a" running
qp_stop "$QP_SERVER_PID"
qp_start_server
for i in $(seq 100); do "$QP_BIN/pbsnodes" "$P0" 2>/dev/null | grep -q "resources_assigned.nvme = 1" && break; sleep 0.05; done
"$QP_BIN/pbsnodes" "$P0" | grep -q "resources_available.nvme = 1" || fail "after a restart: $("$QP_BIN/pbsnodes" "$P0")"
"$QP_BIN/pbsnodes" "$P0" | grep -q "resources_assigned.nvme = 1" || fail "after a restart: $("$QP_BIN/pbsnodes" "$P0")"
b=$(sb --export=QPOOL_SIM_RUNTIME=0.2 --gres=nvme:1 --wrap=true) || fail "sbatch --gres=nvme:1 after a restart"
# A pass passed it over: Slurm's Resources (first in line).
for i in $(seq 40); do [ "$(reason "$b")" = Resources ] && break; sleep 0.05; done
[ "$(qp_state "$b")" = queued ] && [ "$(reason "$b")" = Resources ] ||
	fail "after a restart job $b is $(qp_state "$b") ($(reason "$b")) while $a holds nvme"
qp_wait "$a" completed --timeout 40
qp_wait "$b" completed --timeout 40
bad "Invalid generic resource" as qpuser1 sbatch --gres=nvme:2 --wrap=true
bad "Invalid generic resource" as qpuser1 sbatch --gres=foo:1 --wrap=true
bad "Invalid generic resource" as qpuser1 sbatch --tmp=20G --wrap=true
bad "more than any node of this pool has" as qpuser1 qsub -l select=1:ncpus=1:nvme=2 <<< true

note "bad input: one line each, no job"
before=$("$QP_BIN/qstat" -x | wc -l)
bad "Invalid license specification" as qpuser1 sbatch -L ansys --wrap=true
bad "Invalid license specification" as qpuser1 sbatch -L matlab:3 --wrap=true
bad "Invalid license specification" as qpuser1 sbatch -L matlab:-1 --wrap=true
bad "Invalid license specification" as qpuser1 sbatch -L matlab@flex:1 --wrap=true
bad "Invalid license specification" as qpuser1 sbatch --licenses=matlab:0 --wrap=true
bad "a license count is a whole number" as qpuser1 qsub -l matlab=abc <<< true
bad "more than the pool's 2" as qpuser1 qsub -l matlab=3 <<< true
after=$("$QP_BIN/qstat" -x | wc -l)
[ "$before" = "$after" ] || fail "bad input made jobs: $before -> $after"

note "reload: a bad [licenses] line is refused, the old counts kept; a good one taken"
# The commands read the file too: they ask with a good copy meanwhile.
cp "$QPOOL_CONF" "$QP_T/good.conf"
chmod 644 "$QP_T/good.conf"
sed -i 's/^comsol = 5$/comsol = abc/' "$QPOOL_CONF"
kill -HUP "$QP_SERVER_PID"
for i in $(seq 100); do grep -q "reload refused" "$QP_T/qpoold.log" && break; sleep 0.05; done
grep "reload refused" "$QP_T/qpoold.log" | grep -q "comsol = abc: not a count" || fail "reload not refused"
(QPOOL_CONF=$QP_T/good.conf; as qpuser1 scontrol show licenses comsol) | grep -q "Total=5" ||
	fail "old comsol count lost"
sed -i 's/^comsol = abc$/comsol = 7/' "$QPOOL_CONF"
kill -HUP "$QP_SERVER_PID"
for i in $(seq 100); do as qpuser1 scontrol show licenses comsol | grep -q "Total=7" && break; sleep 0.05; done
as qpuser1 scontrol show licenses comsol | grep -q "Total=7" || fail "the reload's comsol = 7 not taken"
out=$(timeout 20 "$QP_BIN/qpoold" -f <(sed 's/^matlab = 2$/matlab = x/' "$QPOOL_CONF") 2>&1) &&
	fail "qpoold started with matlab = x"
[ "$(wc -l <<<"$out")" = 1 ] && grep -q "matlab = x: not a count" <<<"$out" || fail "qpoold at start: $out"
note "restart with the node down: its resources are known from the store"
qp_stop "$SIM_PID"
qp_stop "$QP_SERVER_PID"
qp_start_server
"$QP_BIN/pbsnodes" "$P0" | grep -q "resources_available.nvme = 1" ||
	fail "a restarted qpoold forgot $P0's resources: $("$QP_BIN/pbsnodes" "$P0")"
id=$(sb --hold --gres=nvme:1 --wrap=true) || fail "--gres=nvme:1 refused with its node known but down"
echo "PASS"
