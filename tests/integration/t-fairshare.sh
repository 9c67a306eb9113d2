#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fair share over use (docs/FAIRSHARE.md) on a simulated 4-CPU node: two
# users keep a queue full, qpuser1 with 4 s jobs, qpuser2 with 1 s jobs,
# each of 1 CPU, qpuser1 in an account of share 1, qpuser2 in one of 3.
# Under order = fairshare the CPU-seconds qpuser1 gets in a 24 s window
# come out near its share, 0.25 (0.13-0.37); under round_robin (a job
# each in turn) its long jobs take more than 65%.
# sshare shows the use, and the use is read back from the store after a
# qpoold restart. QP_STORE=postgresql: the same on PostgreSQL.
. "$(dirname "$0")/lib.sh"
qp_setup "[queue fs]
order = fairshare
walltime_max = 01:00:00

[queue rr]
walltime_max = 01:00:00

[server]
fairshare_halflife = 30"
qp_start_server
"$QP_BIN/qnoded" -f "$QPOOL_CONF" --simulate 1 --name "${QP_NODE_PREFIX}f" \
	--sim-topology "pack:1 numa:1 core:4 pu:1" >> "$QP_T/qnoded-sim.log" 2>&1 &
SIM_PID=$!
QP_PIDS+=("$SIM_PID")
for i in $(seq 200); do
	"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^${QP_NODE_PREFIX}f-0 +up" && break
	sleep 0.05
done
"$QP_BIN/qstat" --nodes | grep -qE "^${QP_NODE_PREFIX}f-0 +up" || fail "the simulated node did not come up"

# shares QUEUE: fills QUEUE, waits 24 s of running, prints qpuser1's
# fraction of the CPU-seconds run in that window, then empties the queue.
shares() {
	local q=$1 a b t0
	a=$(as qpuser1 qsub -q "$q" -J 1-60 -l walltime=4 -o /dev/null -e /dev/null <<<true) || fail "qsub qpuser1"
	b=$(as qpuser2 qsub -q "$q" -J 1-240 -l walltime=1 -o /dev/null -e /dev/null <<<true) || fail "qsub qpuser2"
	t0=$(date +%s.%N)
	# Bounded: the window is 24 s of the jobs' own stamps, read after it.
	for i in $(seq 600); do
		python3 -c "import time,sys; sys.exit(0 if time.time() > $t0 + 26 else 1)" && break
		sleep 0.1
	done
	"$QP_BIN/qdel" "$a" "$b" >/dev/null 2>&1
	"$QP_BIN/qstat" -x -t --json | python3 -c '
import json, sys
t0 = float(sys.argv[1]) + 1; t1 = t0 + 24
use = {}
for j in json.load(sys.stdin):
    if j.get("queue") != sys.argv[2] or "array" in j: continue
    t = j.get("times") or {}
    s, e = t.get("exec"), t.get("exit")
    if not s: continue
    s = s / 1e9; e = e / 1e9 if e else t1
    d = max(0.0, min(e, t1) - max(s, t0)) * j.get("ncpus", 1)
    use[j["owner"]] = use.get(j["owner"], 0) + d
tot = sum(use.values())
print("%.3f %.1f" % (use.get("qpuser1", 0) / tot if tot else 0, tot))' "$t0" "$q"
	for i in $(seq 200); do
		[ "$("$QP_BIN/qstat" --json | python3 -c 'import json,sys; print(sum(1 for j in json.load(sys.stdin) if j.get("queue") == sys.argv[1]))' "$q")" = 0 ] && break
		sleep 0.1
	done
}

note "order = fairshare: CPU-seconds by share (accounts 1:3), not by turns"
"$QP_BIN/sacctmgr" -i add account lab1 Fairshare=1 && "$QP_BIN/sacctmgr" -i add account lab2 Fairshare=3 &&
	"$QP_BIN/sacctmgr" -i add user qpuser1 Account=lab1 && "$QP_BIN/sacctmgr" -i add user qpuser2 Account=lab2 ||
	fail "sacctmgr: the accounts"
read -r f tot < <(shares fs)
note "fairshare: qpuser1 had $f of $tot CPU-seconds (its share: 0.25)"
python3 -c "import sys; sys.exit(0 if 0.13 <= $f <= 0.37 else 1)" ||
	fail "fairshare gave qpuser1 $f of the CPU-seconds, not within 0.13-0.37 of its share of 0.25"
python3 -c "import sys; sys.exit(0 if $tot > 60 else 1)" || fail "only $tot CPU-seconds ran in 24 s on 4 CPUs"

note "sshare shows both users' use; a user sees its own line"
out=$("$QP_BIN/sshare" -a -P -n)
grep -q "|qpuser1|" <<<"$out" && grep -q "|qpuser2|" <<<"$out" || fail "sshare -a: $out"
[ "$(as qpuser2 "$QP_BIN/sshare" -P -n | cut -d'|' -f2)" = qpuser2 ] || fail "sshare as qpuser2: $(as qpuser2 "$QP_BIN/sshare" -P -n)"
u1=$("$QP_BIN/sshare" -a -P -n -u qpuser1 | cut -d'|' -f5)
[ "${u1:-0}" -gt 0 ] || fail "qpuser1's use is '$u1'"

note "the use is read back from the store by a restarted qpoold"
qp_stop "$QP_SERVER_PID"
qp_start_server
u1b=$("$QP_BIN/sshare" -a -P -n -u qpuser1 | cut -d'|' -f5)
python3 -c "import sys; a, b = $u1, ${u1b:-0}; sys.exit(0 if b >= 0.7 * a and b <= 1.3 * a else 1)" ||
	fail "qpuser1's use was $u1, $u1b after a restart"
for i in $(seq 200); do
	"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^${QP_NODE_PREFIX}f-0 +up" && break
	sleep 0.05
done

note "qstat -Q --order and sprio show the use, the share and their ratio that order the queue"
"$QP_BIN/qmgr" stop fs || fail "qmgr stop fs"
o1=$(as qpuser1 qsub -q fs -l walltime=1 -o /dev/null -e /dev/null <<<true) || fail "qsub o1"
o2=$(as qpuser2 qsub -q fs -l walltime=1 -o /dev/null -e /dev/null <<<true) || fail "qsub o2"
out=$("$QP_BIN/qstat" -Q --order fs)
grep -q "fair share, least use over share first" <<<"$out" && grep -q "Use/share" <<<"$out" &&
	grep -qE "qpuser1 +[0-9]+ +0\.2500 +[0-9.]+ " <<<"$out" || fail "qstat -Q --order fs: $out"
first=$(awk '$1 == "1" {print $2}' <<<"$out")
out=$("$QP_BIN/sprio" -h -p fs)
[ "$(wc -l <<<"$out")" = 2 ] && grep -qE "^ *$first +fs +qpuser[12] +2 +[0-9]+ +0$" <<<"$out" &&
	grep -qE " +1 +[0-9]+ +0$" <<<"$out" || fail "sprio -p fs (first in order: $first): $out"
"$QP_BIN/qdel" "$o1" "$o2" >/dev/null
"$QP_BIN/qmgr" start fs || fail "qmgr start fs"

note "order = round_robin: a job each in turn, so the long jobs take more"
read -r f tot < <(shares rr)
note "round_robin: qpuser1 had $f of $tot CPU-seconds"
python3 -c "import sys; sys.exit(0 if $f > 0.65 else 1)" ||
	fail "round_robin gave qpuser1 only $f of the CPU-seconds"
"$QP_BIN/sshare" -a -P -n | grep -q "^lab2|qpuser2|750000|0.750000|" || fail "sshare's shares: $("$QP_BIN/sshare" -a -P -n)"

note "bad input: a half-life of 0, an unknown order"
sed -i 's/^fairshare_halflife = 30$/fairshare_halflife = 0/' "$QPOOL_CONF"
out=$("$QP_BIN/qmgr" reload 2>&1) && fail "a half-life of 0 was taken"
grep -q "fairshare_halflife must be above 0" <<<"$out" || fail "half-life 0: '$out'"
sed -i 's/^fairshare_halflife = 0$/fairshare_halflife = 30/; s/^order = fairshare$/order = sometimes/' "$QPOOL_CONF"
out=$("$QP_BIN/qmgr" reload 2>&1) && fail "order = sometimes was taken"
grep -q "order = sometimes: not round_robin or fairshare" <<<"$out" || fail "order = sometimes: '$out'"
echo PASS
