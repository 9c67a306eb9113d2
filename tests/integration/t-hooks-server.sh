#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The server's prolog and epilog ([server] server_prolog, server_epilog,
# issue 37): the prolog runs once a job is placed and before any node has
# it, with the contract's JSON (the job and its nodes); its time is in the
# job's startup overhead; a failing or hanging one puts the job back in
# the queue without draining a node, and holds it with the reason after
# server_prolog_retries; the epilog runs after the end is committed, its
# failure logged with the job id; qmgr lists both; a restart of qpoold
# while the prolog runs leaves a job that runs once.
. "$(dirname "$0")/lib.sh"
qp_setup
P=$QP_T/sprolog E=$QP_T/sepilog
# Flag files in $QP_T say how the prolog ends.
cat > "$P" <<HOOK
#!/bin/bash
in=\$(cat)
id=\$(jq -r .job.id <<<"\$in")
echo "\$in" > $QP_T/sp.in.\$id
echo x >> $QP_T/sp.runs.\$id
env | sort > $QP_T/sp.env
[ -e $QP_T/sp.fail ] && { echo "license server unreachable" >&2; echo second line >&2; exit 1; }
[ -e $QP_T/sp.hang ] && { echo \$\$ > $QP_T/sp.hang.pid; sleep 60; }
[ -e $QP_T/sp.slow ] && sleep 0.3
exit 0
HOOK
cat > "$E" <<HOOK
#!/bin/bash
in=\$(cat)
id=\$(jq -r .job.id <<<"\$in")
echo "\$in" > $QP_T/se.in.\$id
[ -e $QP_T/se.fail ] && { echo "could not return the licenses" >&2; exit 4; }
exit 0
HOOK
chmod 0755 "$P" "$E"
cat >> "$QPOOL_CONF" <<CONF

[server]
server_prolog = $P
server_prolog_timeout = 2
server_prolog_retries = 2
server_epilog = $E
CONF
qp_start_server
qp_start_node n1 0
w=$QP_T/work/qpuser1
submit() {  # NAME: a job that appends a line per run to out.ID
	as qpuser1 qsub -N "$1" -o /dev/null -j oe <<JOB
id=\${PBS_JOBID%%.*}
echo "ran \$id" >> $w/out.\$id
JOB
}
node_state() { "$QP_BIN/qstat" --nodes --json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["nodes"]:
    if n["name"] == "n1": print(n.get("state"), "|", n.get("reason", ""))'; }

note "a job: the prolog before it with the job and its nodes, the epilog after its end"
a=$(submit ok) || fail "qsub ok"
qp_wait "$a" completed
python3 - "$QP_T/sp.in.$a" "$a" <<'PY' || fail "the prolog's input: $(cat "$QP_T/sp.in.$a")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1 and d["event"] == "server_prolog", d
j = d["job"]
assert j["id"] == int(sys.argv[2]) and j["user"] == "qpuser1" and j["nodes"] == ["n1"], d
PY
qp_wait_file "$QP_T/se.in.$a" 10
python3 - "$QP_T/se.in.$a" "$a" <<'PY' || fail "the epilog's input: $(cat "$QP_T/se.in.$a")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["event"] == "server_epilog" and d["job"]["id"] == int(sys.argv[2]), d
assert d["job"]["state"] == "completed" and d["job"]["nodes"] == ["n1"], d
PY
[ "$(cat "$w/out.$a")" = "ran $a" ] || fail "the job did not run once: $(cat "$w/out.$a")"
! grep -q "^HOME=\|^QPOOL_CONF=" "$QP_T/sp.env" || fail "the prolog's environment is not clean"
for v in QPOOL_HOOK=server_prolog SLURM_JOB_ID=$a PBS_JOBID=$a SLURM_JOB_USER=qpuser1 SLURM_JOB_NODELIST=n1; do
	grep -qx "$v" "$QP_T/sp.env" || fail "$v not in the prolog's environment: $(cat "$QP_T/sp.env")"
done

note "a prolog of 0.3 s is in the job's startup overhead"
touch "$QP_T/sp.slow"
s=$(submit slow) || fail "qsub slow"
qp_wait "$s" completed
rm -f "$QP_T/sp.slow"
startup=$("$QP_BIN/qacct" -j "$s" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["derived"]["startup"])')
note "startup of the job with a 0.3 s server prolog: $startup s"
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 0.3 else 1)' "$startup" ||
	fail "startup $startup s does not hold the server prolog's 0.3 s"

note "a failing prolog: requeued, no node drained, held after 2 failures"
touch "$QP_T/sp.fail"
b=$(submit bad) || fail "qsub bad"
qp_wait "$b" held
[ "$(wc -l < "$QP_T/sp.runs.$b")" = 2 ] || fail "the prolog ran $(wc -l < "$QP_T/sp.runs.$b") times, want 2"
[ ! -e "$w/out.$b" ] || fail "the job ran though its server prolog failed"
[ "$(node_state)" = "up | " ] || fail "n1 after a failed server prolog: $(node_state)"
comment=$("$QP_BIN/qstat" -f "$b" | grep -i "comment\|reason" || true)
echo "$comment"
echo "$comment" | grep -q "server prolog failed 2 times, last: exit 1: license server unreachable" ||
	fail "the held job does not say why: $comment"
grep -q "server prolog (job $b): second line" "$QP_T/qpoold.log" || fail "the prolog's stderr is not in the log with the job id"
rm -f "$QP_T/sp.fail"
"$QP_BIN/qrls" "$b" || fail "qrls"
qp_wait "$b" completed
[ "$(cat "$w/out.$b")" = "ran $b" ] || fail "the released job did not run once: $(cat "$w/out.$b")"

note "a hanging prolog is killed at its bound and the job requeued"
touch "$QP_T/sp.hang"
c=$(submit hang) || fail "qsub hang"
qp_wait_file "$QP_T/sp.hang.pid" 10
hp=$(cat "$QP_T/sp.hang.pid")
for i in 1 2 3; do timeout 1 "$QP_BIN/qstat" > /dev/null || fail "qstat not answered while the prolog hangs"; done
for _ in $(seq 200); do grep -q "job $c: server prolog failed: killed after" "$QP_T/qpoold.log" && break; sleep 0.05; done
grep -q "job $c: server prolog failed: killed after 2[0-9][0-9][0-9] ms (its time bound); requeued" "$QP_T/qpoold.log" ||
	fail "the hanging prolog was not killed at 2 s and the job requeued"
kill -0 "$hp" 2>/dev/null && fail "the hung prolog still runs"
rm -f "$QP_T/sp.hang"
qp_wait "$c" completed held
[ "$(qp_state "$c")" = completed ] || "$QP_BIN/qrls" "$c"
qp_wait "$c" completed

note "a failing epilog is logged with the job id; the job's end stands"
touch "$QP_T/se.fail"
d=$(submit badepi) || fail "qsub badepi"
qp_wait "$d" completed
for _ in $(seq 200); do grep -q "job $d: server epilog failed" "$QP_T/qpoold.log" && break; sleep 0.05; done
grep -q "job $d: server epilog failed: exit 4: could not return the licenses (the job's end stands)" "$QP_T/qpoold.log" ||
	fail "the epilog's failure is not logged with the job id"
[ "$(qp_state "$d")" = completed ] || fail "the failed epilog changed the job: $(qp_state "$d")"
rm -f "$QP_T/se.fail"

note "qmgr lists the server prolog and epilog with their last outcome"
out=$("$QP_BIN/qmgr" -c 'list hook') || fail "qmgr list hook: $out"
echo "$out"
echo "$out" | grep -q "^Hook server_prolog" || fail "no server_prolog in list hook"
echo "$out" | grep -q "^Hook server_epilog" || fail "no server_epilog in list hook"
echo "$out" | grep -q "last_result = exit 4: could not return the licenses" || fail "list hook: the epilog's last outcome"

note "the prolog's bound to 30 s (reload)"
sed -i "s|^server_prolog_timeout = .*|server_prolog_timeout = 30|" "$QPOOL_CONF"
kill -HUP "$QP_SERVER_PID"
for _ in $(seq 100); do grep -q "config reloaded" "$QP_T/qpoold.log" && break; sleep 0.05; done
note "qdel while the prolog runs (bound 30 s): the prolog is stopped, the job ends cancelled at once, no node touched"
rm -f "$QP_T/sp.hang.pid"; touch "$QP_T/sp.hang"
k=$(submit killed) || fail "qsub killed"
qp_wait_file "$QP_T/sp.hang.pid" 10
t0=$(date +%s)
"$QP_BIN/qdel" "$k" || fail "qdel while the prolog runs"
qp_wait "$k" cancelled --timeout 10
rm -f "$QP_T/sp.hang"
[ $(( $(date +%s) - t0 )) -lt 10 ] || fail "qdel waited for the prolog's 30 s bound"
kill -0 "$(cat "$QP_T/sp.hang.pid")" 2>/dev/null && fail "the prolog of the deleted job still runs"
grep -q "job $k: deleted while its server prolog runs: the prolog is stopped" "$QP_T/qpoold.log" || fail "no log line for the stopped prolog"
[ ! -e "$w/out.$k" ] || fail "the job deleted during its prolog ran"
[ "$(node_state)" = "up | " ] || fail "n1 after a qdel during the prolog: $(node_state)"
echo "comment: $(qp_field "$k" comment)"

note "a restart of qpoold while the prolog runs: the job runs once"
rm -f "$QP_T/sp.hang.pid"; touch "$QP_T/sp.hang"
r=$(submit restart) || fail "qsub restart"
qp_wait_file "$QP_T/sp.hang.pid" 10
hp=$(cat "$QP_T/sp.hang.pid")
qp_stop "$QP_SERVER_PID"
kill -0 "$hp" 2>/dev/null && fail "the prolog outlived qpoold"
rm -f "$QP_T/sp.hang"
qp_start_server
qp_wait "$r" completed --timeout 60
[ "$(cat "$w/out.$r")" = "ran $r" ] || fail "the job did not run once across the restart: $(cat "$w/out.$r")"
grep -c x "$QP_T/sp.runs.$r"
echo PASS
