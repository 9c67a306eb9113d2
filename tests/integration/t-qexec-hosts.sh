#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qexec on four namespaced hosts (issue 13's test): in a
# select=4:ncpus=2:mpiprocs=2 job, `qexec -n 8` runs an MPI hello world
# with an allreduce built with mpicc.openmpi (PMIx) and mpicc.mpich
# (PMI-1): 8 ranks, 2 on each host, the right sum, each in its node's job
# group and cpuset as the job's owner. Then: --ppn, --mpi=none with -l
# labels, a rank that exits 3 before MPI_Init (qexec exits 3, the others
# are killed), two ranks of one node that hang before MPI_Init (killed
# after --timeout, the node named by the root and the ranks by their
# node even when it hears of the timeout last),
# SIGTERM to qexec (every rank killed), more ranks than slots refused;
# nothing is left on any host afterwards. Outside a job: qexec submits one
# for the ranks, relays their output and exits with their status; Ctrl-C
# cancels it; an impossible request is refused in one line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
qp_hosts_reexec "$@"
qp_need_mpi
qp_setup
qp_hosts_init
p=q$$
qp_mpi_pool "$p" 4

w=$QP_T/work/qpuser1
qp_mpi_build "$QP_TOP/tests/integration/mpi-allreduce.c" "$w/ar"
mkdir -m 777 "$w/exit3" "$w/sig" "$w/hang"

# check_ranks FILE JOBID N PERHOST: N ranks, PERHOST on each host used,
# the sum of 1..N, each in its node's group of the job with the group's
# CPUs, as qpuser1.
check_ranks() {
	local f=$1 id=$2 nr=$3 per=$4 uid n r used=0
	uid=$(id -u qpuser1)
	[ "$(grep -c '^rank=' "$f")" = "$nr" ] || fail "$f: not $nr ranks: $(cat "$f")"
	for n in "${nodes[@]}"; do
		r=$(grep -c " host=$n " "$f")
		[ "$r" = 0 ] && continue
		used=$((used + r))
		[ "$r" = "$per" ] || fail "$f: host $n has $r ranks, not $per"
		grep " host=$n " "$f" | grep -v " cg=/\(.*/\)\?$QP_CG_PARENT/$n/job\.$id$" &&
			fail "$f: a rank on $n is not in $n's group of job $id"
	done
	[ "$used" = "$nr" ] || fail "$f: ranks on hosts that are not the job's"
	grep '^rank=' "$f" | grep -v " uid=$uid " && fail "$f: a rank does not run as qpuser1 ($uid)"
	grep '^rank=' "$f" | grep -v " sum=$((nr * (nr + 1) / 2)) " && fail "$f: a wrong sum"
	grep '^rank=' "$f" | awk '{ split($6, a, "="); split($7, b, "="); if (a[2] == "" || a[2] != b[2]) exit 1 }' ||
		fail "$f: a rank's CPUs are not its group's cpuset"
	for ((r = 0; r < nr; r++)); do grep -q "^rank=$r size=$nr " "$f" || fail "$f: no rank $r of $nr"; done
}

# gone FILE...: each file names a pid ("PID"), which must be gone (waited
# for, at most 10 s: SIGKILL'd groups go at once).
gone() {
	local f pid i
	for f in "$@"; do
		pid=$(cat "$f" 2>/dev/null); [ -n "$pid" ] || continue
		for ((i = 0; i < 100; i++)); do
			[ -d "/proc/$pid" ] && grep -q sleep "/proc/$pid/cmdline" 2>/dev/null || break
			sleep 0.1
		done
		[ $i -lt 100 ] || fail "a rank (pid $pid, $f) survived"
	done
}

id=$(as qpuser1 qsub -N qxh <<'JOB'
#PBS -l select=4:ncpus=2:mpiprocs=2
cd "$PBS_O_WORKDIR"
echo "tmpdir=${TMPDIR:-}"
qexec -n 8 ./ar-ompi > ompi.out 2> ompi.err; echo "ompi=$?"
qexec -n 8 ./ar-mpich > mpich.out 2> mpich.err; echo "mpich=$?"
qexec -n 4 --ppn 1 --mpi=pmi ./ar-mpich > ppn.out 2> ppn.err; echo "ppn=$?"
qexec -n 8 -l --mpi=none sh -c 'echo "r=$QPOOL_RANK of $QPOOL_SIZE pmi=${PMI_RANK:-} $(hostname)"; echo "e=$QPOOL_RANK" >&2' \
	> none.out 2> none.err; echo "none=$?"
qexec -n 8 sh -c '[ "$PMI_RANK" = 5 ] && exit 3; echo $$ > exit3/$PMI_RANK; exec sleep 1000' 2> exit3.err
echo "exit3=$?"
qexec -n 8 --timeout 5 sh -c 'echo $$ > hang/$PMI_RANK.tmp && mv hang/$PMI_RANK.tmp hang/$PMI_RANK
	[ "$PMI_RANK" -ge 6 ] && exec sleep 1000; exec ./ar-mpich' \
	> hang.out 2> hang.err; echo "hang=$?"
qexec -n 8 --mpi=none sh -c 'echo $$ > sig/$QPOOL_RANK.tmp && mv sig/$QPOOL_RANK.tmp sig/$QPOOL_RANK; exec sleep 1000' 2> sig.err &
q=$!
for i in $(seq 300); do [ "$(ls sig | grep -vc tmp)" = 8 ] && break; sleep 0.1; done
kill -TERM $q; wait $q; echo "sig=$?"
qexec -n 9 true 2> nine.err; echo "nine=$?"
qexec -n 8 --ppn 1 true 2> ppn8.err; echo "ppn8=$?"
qexec --ppn 3 true 2> ppn3.err; echo "ppn3=$?"
JOB
) || fail "qsub"
# The hanging ranks' node is slow to hear the root's "fence timed out"
# (its server stopped until the other sisters, told, have ended): it
# still names the ranks, since nothing ends it before the root has (the
# root waits for it) or the grace has passed. Ranks 6 and 7 are node 3's,
# each rank's parent its node's server, and both hang: had rank 7 run
# MPI, whether it reached the fence before its server stopped would be a
# race (MPICH's PMI handshake needs the server's answers first).
for ((i = 0; i < 3000; i++)); do
	[ "$(find "$w/hang" -mindepth 1 -maxdepth 1 ! -name '*tmp*' 2>/dev/null | wc -l)" = 8 ] && break
	sleep 0.1
done
[ $i -lt 3000 ] || fail "the hanging case's ranks did not all start: $(ls "$w/hang")"
pmis=()
for r in 2 4 6; do pmis+=("$(awk '{ print $4 }' "/proc/$(cat "$w/hang/$r")/stat")"); done
[ -n "${pmis[2]}" ] && [ "${pmis[2]}" -gt 1 ] || fail "no server for node 3's ranks"
kill -STOP "${pmis[2]}"
for ((i = 0; i < 600; i++)); do
	[ -d "/proc/${pmis[0]}" ] || [ -d "/proc/${pmis[1]}" ] || break
	sleep 0.05
done
kill -CONT "${pmis[2]}"
[ $i -lt 600 ] || fail "nodes 1 and 2's servers did not end after the fence timed out"
qp_wait "$id" completed --timeout 300
out=$w/qxh.o$id
qp_wait_file "$out"
cat "$out"
grep -qx "ompi=0" "$out" || fail "qexec Open MPI failed: $(cat "$w/ompi.err")"
grep -qx "mpich=0" "$out" || fail "qexec MPICH failed: $(cat "$w/mpich.err")"
cat "$w/ompi.out" "$w/mpich.out"
check_ranks "$w/ompi.out" "$id" 8 2
check_ranks "$w/mpich.out" "$id" 8 2
grep -qx "ppn=0" "$out" || fail "--ppn 1: $(cat "$w/ppn.err")"
check_ranks "$w/ppn.out" "$id" 4 1

grep -qx "none=0" "$out" || fail "--mpi=none: $(cat "$w/none.err")"
for ((r = 0; r < 8; r++)); do
	grep -qx "$r: r=$r of 8 pmi= ${p}[abcd]" "$w/none.out" || fail "--mpi=none -l: rank $r: $(cat "$w/none.out")"
	grep -qx "$r: e=$r" "$w/none.err" || fail "--mpi=none -l: rank $r's stderr: $(cat "$w/none.err")"
done
[ "$(wc -l < "$w/none.out")" = 8 ] || fail "--mpi=none -l: not 8 lines: $(cat "$w/none.out")"

grep -qx "exit3=3" "$out" || fail "a rank's exit 3: $(grep exit3 "$out"), $(cat "$w/exit3.err")"
grep -q "rank 5 exited with status 3 before MPI_Init" "$w/exit3.err" || fail "exit 3 not named: $(cat "$w/exit3.err")"
gone "$w"/exit3/*

grep -qx "hang=124" "$out" || fail "a rank that never inits: $(grep hang "$out"), $(cat "$w/hang.err")"
grep -q "fence timed out after 5 s: node(s) 3 never reached it" "$w/hang.err" ||
	fail "the root does not name the hanging node: $(cat "$w/hang.err")"
grep -q "fence timed out after 5 s: rank(s) 6,7 never reached it" "$w/hang.err" ||
	fail "the hanging ranks are not named: $(cat "$w/hang.err")"
gone "$w"/hang/[67]

grep -qx "sig=143" "$out" || fail "SIGTERM: $(grep sig= "$out"), $(cat "$w/sig.err")"
[ "$(find "$w/sig" -mindepth 1 -maxdepth 1 ! -name '*tmp*' | wc -l)" = 8 ] || fail "SIGTERM: not 8 ranks started: $(ls "$w/sig")"
gone "$w"/sig/[0-7]

grep -qx "nine=1" "$out" && [ "$(cat "$w/nine.err")" = "qexec: -n 9: the job has 8 MPI slots" ] ||
	fail "-n 9 of 8 slots: $(grep nine "$out"), $(cat "$w/nine.err")"
grep -qx "ppn8=1" "$out" && [ "$(cat "$w/ppn8.err")" = "qexec: -n 8 --ppn 1: needs 8 nodes, the job has 4" ] ||
	fail "-n 8 --ppn 1: $(grep ppn8 "$out"), $(cat "$w/ppn8.err")"
grep -qx "ppn3=1" "$out" && grep -qx "qexec: --ppn 3: node ${nodes[0]} has 2 MPI slots" "$w/ppn3.err" ||
	fail "--ppn 3: $(grep ppn3 "$out"), $(cat "$w/ppn3.err")"

# Nothing left on any host: the job's groups go with it.
for ((i = 0; i < 100; i++)); do
	[ -z "$(qp_cgroups_left | grep "/job\.$id$")" ] && break
	sleep 0.1
done
[ -z "$(qp_cgroups_left | grep "/job\.$id$")" ] || fail "groups of job $id left: $(qp_cgroups_left | grep "/job\.$id$")"
left=$(find "$QP_T"/tmp-* -name 'qpool-pmix.*' 2>/dev/null)
[ -z "$left" ] || fail "qpool-pmi left its PMIx directories: $left"

note "outside a job: qexec submits one and runs the ranks in it"
o=$(as qpuser1 qexec -n 8 ./ar-mpich 2> "$w/out1.err"); rc=$?
[ "$rc" = 0 ] || fail "qexec -n 8 outside a job exited $rc: $(cat "$w/out1.err")"
echo "$o" > "$w/out1.out"
[ "$(grep -c '^rank=.* size=8 sum=36 ' "$w/out1.out")" = 8 ] || fail "outside, -n 8: $o"
o=$(as qpuser1 qexec -n 4 --ppn 1 -l --mpi=none sh -c 'echo "r=$QPOOL_RANK $(hostname)"' 2>&1); rc=$?
[ "$rc" = 0 ] || fail "outside, --ppn 1 -l: exit $rc: $o"
[ "$(echo "$o" | grep -c "^\([0-3]\): r=\1 ${p}[abcd]$")" = 4 ] || fail "outside, --ppn 1 -l: $o"
[ "$(echo "$o" | awk '{ print $3 }' | sort -u | wc -l)" = 4 ] || fail "outside, --ppn 1: not 4 hosts: $o"
# the job's qexec gets the caller's options and environment, and so do
# the ranks on every node; the node's topology unless told to discover
o=$(as qpuser1 env QX_M=outer qexec -n 2 --ppn 1 sh -c 'echo "x=${HWLOC_XMLFILE:+set} m=$QX_M"' 2>&1); rc=$?
[ "$rc" = 0 ] && [ "$(echo "$o" | grep -cx "x=set m=outer")" = 2 ] || fail "outside, the ranks' environment: exit $rc: $o"
o=$(as qpuser1 qexec -n 2 --ppn 1 --topology=discover sh -c 'echo "x=${HWLOC_XMLFILE:-none}"' 2>&1); rc=$?
[ "$rc" = 0 ] && [ "$(echo "$o" | grep -cx "x=none")" = 2 ] || fail "outside, --topology=discover: exit $rc: $o"
o=$(as qpuser1 qexec -n 2 --topology=nearby true 2>&1); rc=$?
[ "$rc" = 2 ] && [ "$o" = "qexec: --topology=nearby: not node or discover" ] || fail "a bad --topology: exit $rc: $o"
o=$(as qpuser1 qexec -n 2 -l walltime=60 sh -c '[ "$PMI_RANK" = 1 ] && exit 3; exec sleep 1000' 2>&1); rc=$?
[ "$rc" = 3 ] || fail "outside, a rank's exit 3: exit $rc: $o"
echo "$o" | grep -q "rank 1 exited with status 3 before MPI_Init" || fail "outside, exit 3 not relayed: $o"
o=$(as qpuser1 qexec -n 3 --ppn 3 true 2>&1); rc=$?
[ "$rc" != 0 ] && [ "$(echo "$o" | wc -l)" = 1 ] && echo "$o" | grep -q "^qexec: cannot submit: .*than any node" ||
	fail "outside, an impossible request: exit $rc: $o"
o=$(as qpuser1 qexec -n 2 -q nosuchqueue true 2>&1); rc=$?
[ "$rc" != 0 ] && [ "$(echo "$o" | wc -l)" = 1 ] && echo "$o" | grep -q "^qexec: cannot submit: .*nosuchqueue" ||
	fail "outside, a queue that does not exist: exit $rc: $o"

# qexec_sleepers NAME N: qexec -n N outside a job, in the background
# ($bg; its pid in $w/NAME.pid), each rank writing its pid to $w/NAME/RANK
# and sleeping; returns once all N have.
qexec_sleepers() {
	local d=$1 n=$2 i
	mkdir -m 777 "$w/$d"
	as qpuser1 sh -c 'echo $$ > '"$d"'.pid; exec qexec -n '"$n"' --mpi=none sh -c "echo \$\$ > '"$d"'/\$QPOOL_RANK.tmp && mv '"$d"'/\$QPOOL_RANK.tmp '"$d"'/\$QPOOL_RANK; exec sleep 1000"' \
		> "$w/$d.out" 2> "$w/$d.err" &
	bg=$!
	for ((i = 0; i < 300; i++)); do [ "$(find "$w/$d" -mindepth 1 -maxdepth 1 ! -name '*tmp*' | wc -l)" = "$n" ] && return 0; sleep 0.1; done
	fail "outside, the $n ranks of $d did not start: $(cat "$w/$d.err")"
}

# The id of the newest running job qexec submitted.
qexec_job() {
	local id
	id=$("$QP_BIN/qstat" --json | python3 -c '
import json, sys
print(max(j["jobid"] for j in json.load(sys.stdin) if j["name"] == "qexec" and j["state"] == "running"))')
	[ -n "$id" ] || fail "no running qexec job"
	echo "$id"
}

# qexec_killed NAME JOBID: SIGKILL to qexec_sleepers NAME's qexec; qpoold
# cancels its job once the tie's grace is over, and the 2 ranks go.
qexec_killed() {
	kill -KILL "$(cat "$w/$1.pid")"
	wait $bg
	qp_wait "$2" cancelled --timeout 60
	qp_field "$2" reason | grep -q "its qexec went away" || fail "$1: job $2's reason: $(qp_field "$2" reason)"
	gone "$w/$1"/[01]
	rm -rf "$w"/.qexec.*
}

note "outside a job: SIGINT cancels the job and its ranks"
qexec_sleepers int 4
kill -INT "$(cat "$w/int.pid")"
for ((i = 0; i < 300; i++)); do kill -0 $bg 2>/dev/null || break; sleep 0.1; done
[ $i -lt 300 ] || fail "outside, qexec did not end after SIGINT"
wait $bg; rc=$?
[ "$rc" = 130 ] || fail "outside, SIGINT: exit $rc: $(cat "$w/int.err")"
grep -q "^qexec: job [0-9]*\.[^ ]* cancelled$" "$w/int.err" || fail "outside, SIGINT: $(cat "$w/int.err")"
gone "$w"/int/[0-3]
compgen -G "$w/.qexec.*" > /dev/null && fail "outside: qexec left its output directory: $(ls -a "$w")"
for ((i = 0; i < 100; i++)); do
	[ -z "$(qp_cgroups_left | grep "/job\.")" ] && break
	sleep 0.1
done
[ -z "$(qp_cgroups_left | grep "/job\.")" ] || fail "groups of jobs left: $(qp_cgroups_left | grep "/job\.")"
note "outside a job: qexec killed by SIGKILL; qpoold cancels its job when its connection is gone"
qexec_sleepers k9 2
kid=$(qexec_job)
qexec_killed k9 "$kid"

note "outside a job: qpoold restarts under qexec; qexec asks again, ties its job anew, and a SIGKILL still cancels it"
qexec_sleepers rs 2
kid=$(qexec_job)
for i in "${!QP_PIDS[@]}"; do [ "${QP_PIDS[$i]}" = "$QP_SERVER_PID" ] && unset 'QP_PIDS[i]'; done
QP_PIDS=("${QP_PIDS[@]}")
qp_stop "$QP_SERVER_PID"
ties=$(grep -c "job $kid tied to" "$QP_T/qpoold.log")
for ((i = 0; i < 300; i++)); do grep -q "trying again" "$w/rs.err" && break; sleep 0.1; done
grep -q "trying again" "$w/rs.err" || fail "qexec did not say it lost qpoold: $(cat "$w/rs.err")"
qp_server_on "$srv"
for ((i = 0; i < 600; i++)); do
	[ "$(grep -c "job $kid tied to" "$QP_T/qpoold.log")" -gt "$ties" ] && break
	kill -0 "$(cat "$w/rs.pid")" 2>/dev/null || fail "qexec ended when qpoold restarted: $(cat "$w/rs.err")"
	sleep 0.1
done
[ $i -lt 600 ] || fail "qexec did not tie job $kid again after the restart: $(cat "$w/rs.err")"
[ "$(qp_state "$kid")" = running ] || fail "job $kid is $(qp_state "$kid") after the restart"
qexec_killed rs "$kid"
echo "qexec on four hosts ok"
