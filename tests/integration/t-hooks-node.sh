#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The node's prolog and epilog (issue 37, qpool-hooks(5)), run by gded as
# root on each node of a job: the prolog before the job's first
# instruction, with the contract's JSON on its stdin and a clean
# environment, its time in the job's startup overhead; a prolog that fails
# (or hangs past prolog_timeout) puts the job back in the queue and drains
# the node with its first stderr line; a failing epilog drains the node and
# leaves the job's result as it was; a job whose prolog failed
# prolog_failures_max times is held, not requeued again; sinfo -R,
# pbsnodes and scontrol say the hook drained the node; a hook a user could
# replace keeps qnoded from starting.
. "$(dirname "$0")/lib.sh"
H=$(mktemp -d /tmp/qpool-hooks.XXXXXX)
chmod 755 "$H"
hooks_rm() { rm -rf "$H"; }
QP_ATEXIT_LAST+=(hooks_rm)
qp_setup "
[node]
prolog = $H/prolog
epilog = $H/epilog
prolog_timeout = 2
prolog_failures_max = 2"
w=$QP_T/work/qpuser1
# The hooks: they note what they were given; a job's name says how they end.
cat > "$H/prolog" <<HOOK
#!/bin/bash
in=\$(cat)
id=\$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["job"]["id"])' "\$in")
node=\$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["node"]["name"])' "\$in")
echo "\$in" > $H/prolog.in.\$id
echo "\$in" > $H/prolog.in.\$id.\$node
env | sort > $H/prolog.env.\$id
case "\$in" in
*'"name":"badpro"'*) echo "scratch is not mounted" >&2; echo second line >&2; exit 1 ;;
*'"name":"hangpro"'*) sleep 30 ;;
*'"name":"slowpro"'*) sleep 0.3 ;;
esac
exit 0
HOOK
cat > "$H/epilog" <<HOOK
#!/bin/bash
in=\$(cat)
id=\$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["job"]["id"])' "\$in")
node=\$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["node"]["name"])' "\$in")
touch $H/epilog.ran.\$id.\$node
# After the job's last process: its output file is whole.
cat $w/out.\$id > $H/epilog.saw.\$id 2>/dev/null
case "\$in" in
*'"name":"badepi"'*) echo "GPU reset failed" >&2; exit 2 ;;
esac
exit 0
HOOK
chmod 755 "$H/prolog" "$H/epilog"
qp_start_server
qp_start_node n1 0
qp_start_node n2 1

note "a job on two nodes: the prolog and the epilog on each"
m=$(as qpuser1 qsub -N multi -l select=2:ncpus=1 -l place=scatter -o /dev/null -j oe <<< 'true') || fail "qsub multi"
qp_wait "$m" completed
for n in n1 n2; do
	[ -s "$H/prolog.in.$m.$n" ] || fail "no prolog on $n for the job on two nodes"
	[ -e "$H/epilog.ran.$m.$n" ] || fail "no epilog on $n for the job on two nodes"
done
python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); assert d["job"]["sister"] is True, d' \
	"$H/prolog.in.$m.n2" || fail "n2's prolog is not told it is a sister"
note "a job on two nodes whose prolog fails: both drained, requeued; held at the second run"
drained_both() {
	"$QP_BIN/qstat" --nodes --json | python3 -c '
import json, sys
print(sum(1 for n in json.load(sys.stdin)["nodes"] if n["state"] == "drained" and n.get("drained_by") == "hook"))'
}
mb=$(as qpuser1 qsub -N badpro -l select=2:ncpus=1 -l place=scatter -o /dev/null -j oe <<< 'true') || fail "qsub badpro on two nodes"
for _ in $(seq 600); do [ "$(drained_both)" = 2 ] && break; sleep 0.05; done
[ "$(drained_both)" = 2 ] || fail "the two nodes of a failed prolog are not both drained by hook"
qp_wait "$mb" queued
"$QP_BIN/scontrol" update NodeName=n[1-2] State=RESUME || fail "scontrol update NodeName=n[1-2] State=RESUME"
qp_wait "$mb" held
[ "$(qp_field "$mb" reason)" = "held: its node prolog failed 2 times (prolog_failures_max)" ] ||
	fail "the job on two nodes held with: $(qp_field "$mb" reason)"
"$QP_BIN/qdel" "$mb" || fail "qdel the job on two nodes"
"$QP_BIN/qmgr" resume n1 || fail "qmgr resume n1"
"$QP_BIN/qmgr" resume n2 || fail "qmgr resume n2"
qp_stop "$(qp_node_pid n2)"
submit() {  # NAME
	as qpuser1 qsub -N "$1" -o /dev/null -j oe <<JOB
id=\${PBS_JOBID%%.*}
echo "ran \$id" > $w/out.\$id
JOB
}
node_reason() { "$QP_BIN/qstat" --nodes --json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["nodes"]:
    if n["name"] == "n1": print(n.get("state"), "|", n.get("reason", ""))'; }

note "a job: the prolog before it, the epilog after its last process"
a=$(submit ok) || fail "qsub ok"
qp_wait "$a" completed
python3 - "$H/prolog.in.$a" "$a" <<'PY' || fail "the prolog's input"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1 and d["event"] == "prolog", d
assert d["job"]["id"] == int(sys.argv[2]) and d["job"]["user"] == "qpuser1", d
assert d["job"]["name"] == "ok" and d["node"]["name"] == "n1", d
PY
grep -qx "QPOOL_HOOK=prolog" "$H/prolog.env.$a" || fail "QPOOL_HOOK not in the prolog's environment"
grep -qx "SLURM_JOB_ID=$a" "$H/prolog.env.$a" || fail "SLURM_JOB_ID not in the prolog's environment"
! grep -q "^QPOOL_CONF=\|^HOME=" "$H/prolog.env.$a" || fail "the prolog's environment is not clean: $(cat "$H/prolog.env.$a")"
[ "$(cat "$H/epilog.saw.$a")" = "ran $a" ] || fail "the epilog did not see the job's output whole: '$(cat "$H/epilog.saw.$a")'"
[ "$(node_reason)" = "up | " ] || fail "n1 after a good job: $(node_reason)"

note "a prolog of 0.3 s is in the job's startup overhead"
s=$(submit slowpro) || fail "qsub slowpro"
qp_wait "$s" completed
startup=$("$QP_BIN/qacct" -j "$s" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["derived"]["startup"])')
note "startup of the job with a 0.3 s prolog: $startup s"
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 0.3 else 1)' "$startup" ||
	fail "startup $startup s does not hold the prolog's 0.3 s"

note "a failing prolog: the job goes back to the queue, n1 is drained with the hook's line"
b=$(submit badpro) || fail "qsub badpro"
for _ in $(seq 600); do [ "$(node_reason)" != "up | " ] && break; sleep 0.05; done
[ "$(node_reason)" = "drained | prolog failed on n1: scratch is not mounted" ] || fail "n1: $(node_reason)"
qp_wait "$b" queued
[ ! -e "$w/out.$b" ] || fail "the job ran though its prolog failed"
grep -q "job $b: prolog: second line" "$QP_T/qnoded-n1.log" || fail "the prolog's stderr is not in the log with the job id"
note "who drained n1: the hook, in sinfo -R, pbsnodes and scontrol"
out=$("$QP_BIN/sinfo" -R) || fail "sinfo -R"
echo "$out" | head -1 | grep -q "^REASON  *USER  *TIMESTAMP  *NODELIST$" || fail "sinfo -R's header: $out"
echo "$out" | grep -qE "^prolog failed on n1:  *hook  *20[0-9-]{8}T[0-9:]{8} n1$" || fail "sinfo -R: $out"
[ "$("$QP_BIN/sinfo" -h -n n1 -o '%t|%u')" = "drain|hook" ] || fail "sinfo %t|%u: $("$QP_BIN/sinfo" -h -n n1 -o '%t|%u')"
"$QP_BIN/pbsnodes" -a n1 | grep -q "qpool_offline_by = hook" || fail "pbsnodes: $("$QP_BIN/pbsnodes" -a n1)"
"$QP_BIN/scontrol" show node n1 | grep -qE "Reason=prolog failed on n1: scratch is not mounted \[hook@20" ||
	fail "scontrol show node: $("$QP_BIN/scontrol" show node n1)"

note "resumed, it fails again: prolog_failures_max (2) reached, the job is held with why"
"$QP_BIN/scontrol" update NodeName=n1 State=RESUME || fail "scontrol update NodeName=n1 State=RESUME"
qp_wait "$b" held
[ "$(qp_field "$b" reason)" = "held: its node prolog failed 2 times (prolog_failures_max)" ] ||
	fail "badpro held with: $(qp_field "$b" reason)"
[ "$("$QP_BIN/squeue" -h -j "$b" -o '%r')" = "launch failed requeued held" ] ||
	fail "squeue's reason: $("$QP_BIN/squeue" -h -j "$b" -o '%r')"
[ "$(node_reason)" = "drained | prolog failed on n1: scratch is not mounted" ] || fail "n1: $(node_reason)"
"$QP_BIN/qdel" "$b" || fail "qdel badpro"
"$QP_BIN/qmgr" resume n1 || fail "qmgr resume n1"

note "a prolog past prolog_timeout is killed, and has failed"
c=$(submit hangpro) || fail "qsub hangpro"
for _ in $(seq 600); do [ "$(node_reason)" != "up | " ] && break; sleep 0.05; done
node_reason | grep -q "^drained | prolog failed on n1: killed after 2[0-9][0-9][0-9] ms (its time bound)$" || fail "n1: $(node_reason)"
qp_wait "$c" queued
"$QP_BIN/qdel" "$c" || fail "qdel hangpro"
"$QP_BIN/qmgr" resume n1 || fail "qmgr resume n1"

note "a failing epilog drains n1; the job's result stands"
d=$(submit badepi) || fail "qsub badepi"
qp_wait "$d" completed
[ "$(qp_field "$d" Exit_status)" = 0 ] || fail "badepi's exit status: $(qp_field "$d" Exit_status)"
for _ in $(seq 200); do [ "$(node_reason)" != "up | " ] && break; sleep 0.05; done
[ "$(node_reason)" = "drained | epilog failed on n1: GPU reset failed" ] || fail "n1: $(node_reason)"
"$QP_BIN/qmgr" resume n1 || fail "qmgr resume n1"

note "a hook its group may write: qnoded does not start"
chmod 775 "$H/epilog"
out=$("$QP_BIN/qnoded" -f "$QPOOL_CONF" --name n9 2>&1) && fail "qnoded started with a group-writable epilog"
echo "$out" | grep -q "epilog = $H/epilog: refused: $H/epilog: writable by its group" || fail "qnoded says: $out"
chmod 755 "$H/epilog"
echo PASS
