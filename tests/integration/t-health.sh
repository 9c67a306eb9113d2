#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The node's health check (issue 37, qpool-hooks(5)): qnoded runs it at
# start and every health_check_interval without blocking its loop; a
# failing check drains the node with its first line of output (LBNL NHC
# prints "ERROR ..." there), a passing one resumes a node the check itself
# drained, never one an admin drained; who drained it is shown; a check
# that hangs is killed at health_check_timeout and has failed.
. "$(dirname "$0")/lib.sh"
H=$(mktemp -d /tmp/qpool-health.XXXXXX)
chmod 755 "$H"
health_rm() { rm -rf "$H"; }
QP_ATEXIT_LAST+=(health_rm)
qp_setup "
[node]
health_check = $H/check
health_check_interval = 1
health_check_timeout = 2"
cat > "$H/check" <<HOOK
#!/bin/bash
cat > /dev/null
echo run >> $H/runs
[ -e $H/hang ] && sleep 30
[ -e $H/slow ] && sleep 1
if [ -e $H/broken ]; then
	echo "ERROR:  nhc:  /scratch is not mounted"
	echo "more output"
	exit 1
fi
exit 0
HOOK
chmod 755 "$H/check"
qp_start_server
qp_start_node n1
node() { "$QP_BIN/qstat" --nodes --json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["nodes"]:
    if n["name"] == "n1": print(n["state"], "|", n.get("drained_by", ""), "|", n.get("reason", ""))'; }
wait_node() {  # TEXT: until node says it (bounded: 20 s)
	local i
	for ((i = 0; i < 400; i++)); do [ "$(node)" = "$1" ] && return 0; sleep 0.05; done
	fail "n1 is '$(node)', not '$1'"
}
runs() { wc -l < "$H/runs" 2>/dev/null || echo 0; }
wait_runs() {  # N more runs of the check from now
	local want=$(($(runs) + $1)) i
	for ((i = 0; i < 400; i++)); do [ "$(runs)" -ge "$want" ] && return 0; sleep 0.05; done
	fail "the health check did not run $1 more times"
}

note "a passing check: n1 up"
wait_runs 1
[ "$(node)" = "up |  | " ] || fail "n1: $(node)"

note "the check fails: n1 drained by health, with its first line"
touch "$H/broken"
wait_node "drained | health | ERROR:  nhc:  /scratch is not mounted"
id=$(echo true | as qpuser1 qsub) || fail qsub
wait_runs 2
[ "$(qp_state "$id")" = queued ] || fail "a job started on a node its health check drained"

"$QP_BIN/pbsnodes" -a n1 | grep -q "qpool_offline_by = health" || fail "pbsnodes does not say the check drained n1: $("$QP_BIN/pbsnodes" -a n1)"

note "it passes again: n1 resumed, the job runs"
rm "$H/broken"
wait_node "up |  | "
qp_wait "$id" completed

note "an admin's drain stays, whatever the check says"
"$QP_BIN/qmgr" drain n1 "disk swap" || fail "qmgr drain"
wait_runs 2
[ "$(node)" = "drained | admin | disk swap" ] || fail "the check resumed an admin's drain: $(node)"
touch "$H/broken"
wait_runs 2
[ "$(node)" = "drained | admin | disk swap" ] || fail "the check took over an admin's drain: $(node)"
rm "$H/broken"
"$QP_BIN/qmgr" resume n1 || fail "qmgr resume"
wait_node "up |  | "

note "the drain forms admins and LBNL NHC use: scontrol, pbsnodes, sinfo -R"
S="$QP_BIN/scontrol" P="$QP_BIN/pbsnodes"
out=$(as qpuser1 "$S" update NodeName=n1 State=DRAIN Reason=mine 2>&1) && fail "a user drained n1"
[ "$out" = "scontrol: slurm_update error: Access/permission denied" ] || fail "a user's scontrol drain: $out"
out=$("$S" update NodeName=n1 State=DRAIN 2>&1) && fail "a drain without a reason"
echo "$out" | grep -q "You must specify a reason" || fail "a drain without a reason: $out"
out=$("$S" update NodeName=n1 State=BOGUS Reason=x 2>&1) && fail "State=BOGUS"
echo "$out" | grep -q "Invalid node state specified: BOGUS" || fail "State=BOGUS: $out"
out=$("$S" update NodeName=nosuch State=DRAIN Reason=x 2>&1) && fail "an unknown node drained"
echo "$out" | grep -q "Invalid node name specified (nosuch)" || fail "an unknown node: $out"
[ "$(node)" = "up |  | " ] || fail "bad input changed n1: $(node)"
"$S" update NodeName=n[1] State=DRAIN Reason="bad DIMM" || fail "scontrol update State=DRAIN"
[ "$(node)" = "drained | admin | bad DIMM" ] || fail "scontrol drain: $(node)"
"$S" show node n1 | grep -qE "Reason=bad DIMM \[admin@20[0-9-]{8}T[0-9:]{8}\]" || fail "scontrol show node: $("$S" show node n1)"
[ "$("$QP_BIN/sinfo" -R -h -o '%E|%u|%N')" = "bad DIMM|admin|n1" ] || fail "sinfo -R: $("$QP_BIN/sinfo" -R -h -o '%E|%u|%N')"
"$QP_BIN/sinfo" -h -n n1 -o '%H' | grep -qE "^20[0-9-]{8}T[0-9:]{8}$" || fail "sinfo %H: $("$QP_BIN/sinfo" -h -n n1 -o '%H')"
# What the check's own scontrol would do (QPOOL_HOOK=health): neither
# takes over nor resumes an admin's drain.
QPOOL_HOOK=health "$S" update NodeName=n1 State=DRAIN Reason="NHC: other" || fail "a check's drain over an admin's"
[ "$(node)" = "drained | admin | bad DIMM" ] || fail "a check's drain took an admin's: $(node)"
out=$(QPOOL_HOOK=health "$S" update NodeName=n1 State=RESUME 2>&1) && fail "a check resumed an admin's drain"
echo "$out" | grep -q "drained by admin (bad DIMM); a health check resumes only its own drains" || fail "a check's resume: $out"
[ "$(node)" = "drained | admin | bad DIMM" ] || fail "a check's resume: $(node)"
"$S" update NodeName=n1 State=UNDRAIN || fail "scontrol update State=UNDRAIN"
[ "$(node)" = "up |  | " ] || fail "UNDRAIN: $(node)"
# pbsnodes: -o -N, -N alone on an offline node, -l, -c -N ''. The check
# fails meanwhile, so a pass does not resume the drain by health under us
# (a failing check leaves a drained node as it is).
touch "$H/broken"
wait_runs 1
QPOOL_HOOK=health "$P" -o -N "NHC: ib0 down" n1 || fail "pbsnodes -o -N"
[ "$(node)" = "drained | health | NHC: ib0 down" ] || fail "pbsnodes -o -N by health: $(node)"
"$P" -N "ib0 cable" n1 || fail "pbsnodes -N alone"
[ "$(node)" = "drained | admin | ib0 cable" ] || fail "pbsnodes -N: $(node)"
rm "$H/broken"
wait_runs 2   # the last failing run is over
[ "$("$P" -l | tr -s ' ')" = "n1 offline ib0 cable" ] || fail "pbsnodes -l: $("$P" -l)"
"$P" -c -N '' n1 || fail "pbsnodes -c -N ''"
[ "$(node)" = "up |  | " ] || fail "pbsnodes -c: $(node)"
[ -z "$("$P" -l)" ] || fail "pbsnodes -l lists an up node: $("$P" -l)"
[ "$("$P" -n -l all n1 | tr -s ' ')" = "n1 free " ] || fail "pbsnodes -n -l all: '$("$P" -n -l all n1)'"
out=$("$P" -N note n1 2>&1) && fail "pbsnodes -N on a node that is not offline"
echo "$out" | grep -q "n1: not offline" || fail "pbsnodes -N on an up node: $out"
[ "$(node)" = "up |  | " ] || fail "pbsnodes -N on an up node: $(node)"
out=$(as qpuser1 "$P" -o n1 2>&1) && fail "a user's pbsnodes -o"
[ "$(node)" = "up |  | " ] || fail "a user's pbsnodes -o: $(node)"

note "a check that hangs is killed at health_check_timeout: drained"
touch "$H/hang"
for ((i = 0; i < 400; i++)); do node | grep -qE "^drained \| health \| health check killed after 2[0-9]{3} ms \(its time bound\)$" && break; sleep 0.05; done
node | grep -qE "^drained \| health \| health check killed after 2[0-9]{3} ms \(its time bound\)$" || fail "a hung check: n1 is '$(node)'"
rm "$H/hang"
wait_node "up |  | "

note "qpoold restarted: who drained it is kept"
touch "$H/broken"
wait_node "drained | health | ERROR:  nhc:  /scratch is not mounted"
qp_stop "$QP_SERVER_PID"
qp_start_server
# Down until n1 registers again, then drained by health as before.
wait_node "drained | health | ERROR:  nhc:  /scratch is not mounted"
rm "$H/broken"
wait_node "up |  | "

note "jobs launched while a check runs: each one's end is seen"
# The check's pipes it is done with at its start close then; their
# numbers are the lowest free ones, which a launch's notify socket and
# pidfd take. qnoded once kept watching the closed pipes' numbers and,
# when the check ended, removed them from its epoll: a running job's
# pidfd with them, and the job stayed running for good (t-nhc, under
# load). Each job here outlives the check it started beside.
touch "$H/slow"
for k in 1 2 3; do
	want=$(($(runs) + 1))
	for ((i = 0; i < 400; i++)); do [ "$(runs)" -ge "$want" ] && break; sleep 0.05; done
	id=$(echo "sleep 1.5" | as qpuser1 qsub) || fail qsub
	qp_wait "$id" completed --timeout 20
done
rm "$H/slow"
echo PASS
