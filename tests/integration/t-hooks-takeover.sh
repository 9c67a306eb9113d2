#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The server's hooks across a takeover (issue 37): an active and a standby
# qpoold on one store (as t-failover.sh builds them). The active is killed
# (-9) while a submit filter runs: the submission is either refused with
# one line or committed once, never half. The new active is killed while a
# server prolog runs for a placed job: the next active requeues the job
# when its node registers (no node had it), runs the prolog again, and
# the job runs once. The active is stopped (SIGSTOP: cut off, alive) while
# a server prolog waits: the standby takes over, requeues the job when the
# node comes to it and runs it once; the old active, continued, launches
# nothing whether its prolog's end or its lease renewal comes first.
. "$(dirname "$0")/lib.sh"
qp_setup
ASK=$QP_TOP/tests/integration/qpool-ask.py
w=$QP_T/work/qpuser1
A=$QP_T/a.sock
B=$QP_T/b.sock
F=$QP_T/filter P=$QP_T/sprolog
cat > "$F" <<HOOK
#!/bin/bash
cat > /dev/null
[ -e $QP_T/f.hang ] && { echo \$\$ > $QP_T/f.hang.pid; sleep 30; }
exit 0
HOOK
cat > "$P" <<HOOK
#!/bin/bash
id=\$(jq -r .job.id)
echo x >> $QP_T/sp.runs.\$id
[ -e $QP_T/sp.hang ] && { echo \$\$ > $QP_T/sp.hang.pid; sleep 30; }
while [ -e $QP_T/sp.wait ]; do sleep 0.05; done
exit 0
HOOK
chmod 0755 "$F" "$P"
printf '[server]\nsubmit_filter = %s\nsubmit_filter_timeout = 60\nserver_prolog = %s\nserver_prolog_timeout = 60\n' \
	"$F" "$P" >> "$QPOOL_CONF"
sed "s|^socket = .*|socket = $A|" "$QPOOL_CONF" > "$QP_T/a.conf"
sed "s|^socket = .*|socket = $B|" "$QPOOL_CONF" > "$QP_T/b.conf"
printf '[server]\nserver = %s,%s\n' "$A" "$B" >> "$QPOOL_CONF"
# A hook orphaned by a kill -9 of its server runs to its end: stopped by
# the pid it wrote.
cont_servers() { kill -CONT "${PID_a:-}" "${PID_b:-}" 2>/dev/null; rm -f "$QP_T/sp.wait"; return 0; }
QP_ATEXIT+=(cont_servers)
hooks_kill() { local f; for f in "$QP_T"/*.hang.pid; do [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null; done; return 0; }
QP_ATEXIT+=(hooks_kill)
start_qpoold() {  # NAME: starts qpoold with NAME.conf, sets PID_NAME
	"$QP_BIN/qpoold" -f "$QP_T/$1.conf" >> "$QP_T/qpoold-$1.log" 2>&1 &
	QP_PIDS+=("$!")
	eval "PID_$1=$!"
}
serves() {
	"$ASK" "$1" stat 2>/dev/null | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("ok") else 1)'
}
wait_serves() {  # SOCK SECONDS
	local i
	for ((i = 0; i < $2 * 20; i++)); do serves "$1" && return 0; sleep 0.05; done
	return 1
}
standby() {  # SOCK: 0 when it answers as a standby
	"$ASK" "$1" stat 2>/dev/null | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("standby") else 1)'
}
wait_standby() {
	local i
	for ((i = 0; i < 200; i++)); do standby "$1" && return 0; sleep 0.05; done
	fail "$1 is not a standby"
}
n_named() { "$QP_BIN/qstat" -x --json | python3 -c '
import json, sys
print(sum(1 for j in json.load(sys.stdin) if j.get("name") == sys.argv[1]))' "$1"; }

start_qpoold a
wait_serves "$A" 10 || fail "A did not become active"
QP_SERVER_PID=$PID_a
qp_start_node n1 0
start_qpoold b
wait_standby "$B"
id=$(echo true | as qpuser1 qsub -N warm) || fail "qsub through the filter"
qp_wait "$id" completed
[ "$(n_named warm)" = 1 ] || fail "n_named does not count the jobs"

note "A is killed while the submit filter runs: refused with one line, or one job"
touch "$QP_T/f.hang"
(echo true | as qpuser1 qsub -N infilter > "$QP_T/f.out" 2>&1; echo $? > "$QP_T/f.rc") &
qp_wait_file "$QP_T/f.hang.pid" 10
kill -KILL "$PID_a"; wait "$PID_a" 2>/dev/null
kill "$(cat "$QP_T/f.hang.pid")" 2>/dev/null   # orphaned by the kill -9
rm -f "$QP_T/f.hang"
wait_serves "$B" 20 || fail "B did not take over"
QP_SERVER_PID=$PID_b
for _ in $(seq 400); do [ -e "$QP_T/f.rc" ] && break; sleep 0.05; done
[ -e "$QP_T/f.rc" ] || fail "qsub still waits after the takeover"
n=$(n_named infilter)
echo "qsub: rc $(cat "$QP_T/f.rc"): $(cat "$QP_T/f.out"); jobs named infilter: $n"
if [ "$(cat "$QP_T/f.rc")" = 0 ]; then
	[ "$n" = 1 ] || fail "qsub said yes, $n jobs"
else
	[ "$n" = 0 ] || fail "qsub said no, $n jobs"
	[ "$(wc -l < "$QP_T/f.out")" = 1 ] || fail "the refusal is not one line: $(cat "$QP_T/f.out")"
fi

note "B is killed while the server prolog runs for a placed job: the job runs once"
start_qpoold a
wait_standby "$A"
touch "$QP_T/sp.hang"
r=$(as qpuser1 qsub -N inprolog -o /dev/null -j oe <<JOB
id=\${PBS_JOBID%%.*}
echo "ran \$id" >> $w/out.\$id
JOB
) || fail "qsub inprolog"
qp_wait_file "$QP_T/sp.hang.pid" 10
kill -KILL "$PID_b"; wait "$PID_b" 2>/dev/null
kill "$(cat "$QP_T/sp.hang.pid")" 2>/dev/null
rm -f "$QP_T/sp.hang"
wait_serves "$A" 20 || fail "A did not take over"
QP_SERVER_PID=$PID_a
qp_wait "$r" completed --timeout 60
[ "$(cat "$w/out.$r")" = "ran $r" ] || fail "the job did not run once across the takeover: $(cat "$w/out.$r")"
echo "the server prolog ran $(wc -l < "$QP_T/sp.runs.$r") times for job $r"
[ "$(wc -l < "$QP_T/sp.runs.$r")" = 2 ] || fail "the prolog ran $(wc -l < "$QP_T/sp.runs.$r") times, want 2 (killed, then again)"
grep -q "job $r: node n1 does not have it; requeued" "$QP_T/qpoold-a.log" || fail "A did not requeue the job its node never had"

note "A is stopped while the server prolog waits: B runs the job once; A, continued, launches nothing"
# Stopped between two commits, as t-failover.sh does: one stopped inside
# a commit holds the SQLite file's write lock and no server can take over.
stop_between_commits() {
	local i
	for ((i = 0; i < 200; i++)); do
		kill -STOP "$1"
		for _ in $(seq 100); do [ "$(awk '{ print $3 }' "/proc/$1/stat")" = T ] && break; sleep 0.01; done
		grep -qE "POSIX +ADVISORY +WRITE +$1 " /proc/locks || return 0
		kill -CONT "$1"
		sleep 0.02
	done
	fail "pid $1 was inside a commit at each of 200 stops"
}
start_qpoold b
wait_standby "$B"
touch "$QP_T/sp.wait"
t=$(as qpuser1 qsub -N stopped -o /dev/null -j oe <<JOB
id=\${PBS_JOBID%%.*}
echo "ran \$id" >> $w/out.\$id
JOB
) || fail "qsub stopped"
for _ in $(seq 200); do [ -s "$QP_T/sp.runs.$t" ] && break; sleep 0.05; done
[ -s "$QP_T/sp.runs.$t" ] || fail "no server prolog for job $t"
stop_between_commits "$PID_a"
wait_serves "$B" 20 || fail "B did not take over from the stopped A"
QP_SERVER_PID=$PID_b
# n1 leaves the silent A after node_timeout and registers at B, which
# requeues the job (n1 never had it) and runs its prolog again.
for _ in $(seq 600); do [ "$(wc -l < "$QP_T/sp.runs.$t")" -ge 2 ] && break; sleep 0.05; done
[ "$(wc -l < "$QP_T/sp.runs.$t")" = 2 ] || fail "B did not run the prolog for job $t: $(wc -l < "$QP_T/sp.runs.$t") runs"
rm -f "$QP_T/sp.wait"
# The pool's list names A first, and a stopped A takes connections it
# never answers: ask B alone until A runs again.
QPOOL_CONF=$QP_T/b.conf qp_wait "$t" completed --timeout 60
kill -CONT "$PID_a"
for _ in $(seq 200); do grep -q "stepping down" "$QP_T/qpoold-a.log" && break; sleep 0.05; done
grep -q "stepping down" "$QP_T/qpoold-a.log" || fail "A did not step down once continued"
echo "A, continued: $(grep -E "not launched after its server prolog|stepping down" "$QP_T/qpoold-a.log" | tail -n 2 | cut -c1-160)"
# A standby sends nothing: once A answers as one, what it did is done.
wait_standby "$A"
[ "$(cat "$w/out.$t")" = "ran $t" ] || fail "the job ran more than once across the stop: $(cat "$w/out.$t")"
[ "$(qp_state "$t")" = completed ] || fail "job $t: $(qp_state "$t")"
echo PASS
