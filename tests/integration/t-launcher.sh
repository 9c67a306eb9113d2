#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The resident launcher (docs/ARCHITECTURE.md): qnoded's `gded --launcher`
# forks each job's wrapper without an exec. The wrapper is root, the
# launcher's child, and shows in /proc as `gded --spec <spec> --notify 3`;
# when qnoded is killed the launcher goes and the wrapper stays, the next
# qnoded finds it in /proc and adopts it, and its job reports a complete
# record. When the launcher dies, the next job gets an exec'ed gded and
# completes all the same, and qnoded reaps that gded, its own child.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
qp_start_node n1
w=$QP_T/work/qpuser1

forget_pid() {
	local i
	for i in "${!QP_PIDS[@]}"; do [ "${QP_PIDS[$i]}" = "$1" ] && unset 'QP_PIDS[i]'; done
	QP_PIDS=("${QP_PIDS[@]}")
}
# The launcher of qnoded pid $1: its child whose command line is `gded --launcher`.
launcher_of() {
	local i c
	for ((i = 0; i < 100; i++)); do
		for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
			[ "$(cmdline_of "$c")" = "$gded --launcher" ] &&
				{ echo "$c"; return 0; }
		done
		sleep 0.05
	done
	return 1
}
# Its command line, arguments joined by spaces (trailing empty ones dropped).
cmdline_of() { tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | sed 's/ *$//'; }
ppid_of() { awk '{ print $4 }' "/proc/$1/stat"; }
gone() {
	local i
	for ((i = 0; i < 100; i++)); do [ -e "/proc/$1" ] || return 0; sleep 0.05; done
	return 1
}

gded=$(readlink -f "$QP_BIN/gded")
node=$(qp_node_pid n1)
launcher=$(launcher_of "$node") || fail "qnoded $node runs no gded --launcher"
note "qnoded $node, launcher $launcher"

cat > "$QP_T/wait.sh" <<JOB
echo started > $w/a.started
i=0; while [ ! -e $QP_T/go ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
id -un
JOB
chmod 644 "$QP_T/wait.sh"
a=$(as qpuser1 qsub -N a "$QP_T/wait.sh") || fail qsub
qp_wait_file "$w/a.started"
gpid=$(qp_wait_gded "$a") || exit 1
[ "$(ppid_of "$gpid")" = "$launcher" ] || fail "job $a's gded $gpid is the child of $(ppid_of "$gpid"), not of the launcher $launcher"
grep -q '^Uid:[[:space:]]*0[[:space:]]*0[[:space:]]*0[[:space:]]*0$' "/proc/$gpid/status" ||
	fail "job $a's gded is not root's: $(grep Uid: "/proc/$gpid/status")"
[ "$(cmdline_of "$gpid")" = "$gded --spec $QP_T/state/nodes/n1/jobs/$a.json --notify 3" ] ||
	fail "job $a's gded command line: $(cmdline_of "$gpid")"
# The node's cgroup parents (<root>[/<h>]/<parent>/<node>), opened once
# by the launcher and kept by each wrapper it forks (issue 39).
held_parents() {
	local f
	for f in /proc/"$1"/fd/*; do readlink "$f"; done 2>/dev/null |
		grep -c "^/sys/fs/cgroup/.*$QP_CG_PARENT/[^/]*\$"
}
if [ -n "$(find /sys/fs/cgroup -maxdepth 2 -type d -name "$QP_CG_PARENT" 2>/dev/null)" ]; then
	nl=$(held_parents "$launcher")
	[ "$nl" -ge 1 ] || fail "the launcher $launcher holds no cgroup parent: $(ls -l /proc/"$launcher"/fd)"
	[ "$(held_parents "$gpid")" = "$nl" ] ||
		fail "job $a's gded holds $(held_parents "$gpid") cgroup parents, the launcher $nl"
	note "the launcher and job $a's gded hold the node's $nl cgroup parents"
fi
# Holding them closed nothing of its own: stdin is still /dev/null.
[ "$(readlink /proc/"$launcher"/fd/0)" = /dev/null ] ||
	fail "the launcher's stdin is $(readlink /proc/"$launcher"/fd/0), not /dev/null"

note "qnoded gets SIGKILL while job $a runs"
kill -KILL "$node"
wait "$node" 2>/dev/null
forget_pid "$node"
gone "$launcher" || fail "the launcher $launcher outlived its qnoded"
[ -e "/proc/$gpid" ] || fail "job $a's gded $gpid died with qnoded and its launcher"
qp_start_node n1
node=$(qp_node_pid n1)
grep -q "adopted running gded pid $gpid" "$QP_T/qnoded-n1.log" || fail "the new qnoded did not adopt gded $gpid"
launcher2=$(launcher_of "$node") || fail "the new qnoded runs no launcher"
touch "$QP_T/go"
qp_wait "$a" completed failed
[ "$(qp_state "$a")" = completed ] || fail "job $a ended $(qp_state "$a"): $(qp_field "$a" reason)"
grep -qx qpuser1 "$w/a.o$a" || fail "job $a output: $(cat "$w/a.o$a")"

note "the launcher $launcher2 dies: jobs start with an exec'ed gded"
kill -KILL "$launcher2"
b=$(echo 'id -un' | as qpuser1 qsub -N b) || fail qsub
qp_wait "$b" completed failed
[ "$(qp_state "$b")" = completed ] || fail "job $b ended $(qp_state "$b"): $(qp_field "$b" reason)"
grep -qx qpuser1 "$w/b.o$b" || fail "job $b output: $(cat "$w/b.o$b")"
grep -q "resident launcher: it exited" "$QP_T/qnoded-n1.log" || fail "qnoded did not notice its launcher's death"
# That gded was qnoded's own child: reaped when it ended, before its
# result went to qpoold (a launcher's wrapper is the launcher's to reap).
zombies=$(ps --ppid "$node" -o stat=,pid=,args= | awk '$1 ~ /^Z/')
[ -z "$zombies" ] || fail "qnoded left its exec'ed gded unreaped: $zombies"

"$QP_BIN/qstat" -x --json > "$QP_T/all.json" || fail "qstat -x --json"
python3 - "$QP_T/all.json" "$a" "$b" <<'PY' || fail "incomplete records"
import json, sys
jobs = {j["jobid"]: j for j in json.load(open(sys.argv[1]))}
stamps = ["submit", "dispatch", "launch", "wrap", "fenced", "exec", "exit", "released", "done"]
bad = []
for i in map(int, sys.argv[2:]):
    t = jobs[i]["times"]
    missing = [s for s in stamps if s not in t]
    if missing:
        bad.append(f"job {i}: no {' '.join(missing)}")
    elif [t[s] for s in stamps] != sorted(t[s] for s in stamps):
        bad.append(f"job {i}: stamps out of order")
    if jobs[i]["exit_status"] != 0:
        bad.append(f"job {i}: exit {jobs[i]['exit_status']}")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
echo PASS
