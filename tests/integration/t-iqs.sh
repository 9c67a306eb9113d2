#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# IQS fairness end to end with real users: the 40+1 case, three users
# interleaving, limits under a burst, the rotation across a restart.
. "$(dirname "$0")/lib.sh"
qp_setup "
[queue one]
max_running = 1
[queue three]
max_running = 1
[queue burst]
max_running = 3
max_running_per_user = 2
[queue rot]
max_running = 1
"
qp_start_server
qp_start_node n1

A=qpuser1 B=qpuser2 C=qpuser3

note "40+1: $A submits 40 jobs, then $B submits 1, to a queue running one job at a time"
# The first runs until every submission is in (41 qsubs took more than
# its old 2 s on a loaded host, and A's second job started before B's
# was submitted); the others are short.
first=$(echo "for i in \$(seq 600); do [ -e $QP_T/go-one ] && exit 0; sleep 0.1; done" | as $A qsub -q one) || fail qsub
for i in $(seq 39); do echo 'sleep 0.2' | as $A qsub -q one >/dev/null || fail qsub; done
bjob=$(echo 'sleep 0.1' | as $B qsub -q one) || fail qsub
"$QP_BIN/qstat" -Q --order one | head -8
order=$("$QP_BIN/qstat" -Q --json --order one | python3 -c 'import json,sys; print(" ".join(str(e["jobid"]) for e in json.load(sys.stdin)["order"]))')
[ "${order%% *}" = "$bjob" ] || fail "$B's job $bjob is not first in the order: $order"
touch "$QP_T/go-one"
qp_wait "$bjob" completed --timeout 20
second=$(qp_dispatch_order one | sed -n 2p)
[ "$second" = "$bjob $B" ] || fail "second job to start was '$second', not $bjob of $B"
for id in $("$QP_BIN/qstat" --table | awk -v q=one '$5 == q {print $1}'); do "$QP_BIN/qdel" "$id"; done

note "three users with 10, 5 and 1 jobs interleave"
"$QP_BIN/qmgr" stop three || fail "qmgr stop"
for i in $(seq 10); do echo true | as $A qsub -q three >/dev/null || fail qsub; done
for i in $(seq 5); do echo true | as $B qsub -q three >/dev/null || fail qsub; done
echo true | as $C qsub -q three >/dev/null || fail qsub
"$QP_BIN/qmgr" start three || fail "qmgr start"
for _ in $(seq 200); do [ "$(qp_dispatch_order three | wc -l)" = 16 ] && break; sleep 0.1; done
got=$(qp_dispatch_order three | awk '{print $2}' | sed "s/$A/A/; s/$B/B/; s/$C/C/" | tr -d '\n')
[ "$got" = ABCABABABABAAAAA ] || fail "three-user order is $got, want ABCABABABABAAAAA"

note "max_running=3, max_running_per_user=2 hold under a burst (4 CPUs of capacity)"
qp_start_node n2 0
qp_start_node n3 1
for i in $(seq 6); do
	echo 'sleep 0.4' | as $A qsub -q burst >/dev/null || fail qsub
	echo 'sleep 0.4' | as $B qsub -q burst >/dev/null || fail qsub
done
for _ in $(seq 300); do [ -z "$("$QP_BIN/qstat" --table | awk '$5 == "burst"')" ] && break; sleep 0.1; done
"$QP_BIN/qstat" -x --json | python3 -c '
import json, sys
jobs = [j for j in json.load(sys.stdin) if j["queue"] == "burst"]
assert len(jobs) == 12 and all(j["state"] == "completed" for j in jobs), "burst jobs did not all complete"
events = []
for j in jobs:
    events += [(j["times"]["dispatch"], 1, j["owner"]), (j["times"]["done"], -1, j["owner"])]
run, per, peak, peak_user = 0, {}, 0, 0
for t, d, u in sorted(events, key=lambda e: (e[0], e[1])):
    run += d; per[u] = per.get(u, 0) + d
    peak = max(peak, run); peak_user = max(peak_user, per[u])
print("peak running", peak, "peak per user", peak_user)
assert peak <= 3, "max_running exceeded: %d" % peak
assert peak_user <= 2, "max_running_per_user exceeded: %d" % peak_user
assert peak == 3, "limits held the queue below max_running: peak %d" % peak
' || fail "limits violated"

note "a drained node gets nothing new; its running job finishes"
ids=()
for i in 1 2 3 4; do ids+=("$(echo 'sleep 2' | as $A qsub)") || fail qsub; done
for id in "${ids[@]}"; do qp_wait "$id" running; done
on_n3=$(for id in "${ids[@]}"; do [ "$(qp_field "$id" exec_host)" = n3 ] && echo "$id"; done | head -1)
[ -n "$on_n3" ] || fail "no job landed on n3"
"$QP_BIN/qmgr" drain n3 "disk check" || fail "qmgr drain"
"$QP_BIN/qstat" --nodes | grep -E '^n3[[:space:]].*drained' || fail "n3 not shown drained"
"$QP_BIN/qmgr" nodes | grep -q "node n3 drained: disk check" || fail "drain reason not shown"
qp_wait "$on_n3" completed --timeout 20
more=()
for i in 1 2 3 4 5 6; do more+=("$(echo 'sleep 0.3' | as $B qsub)") || fail qsub; done
for id in "${more[@]}"; do
	qp_wait "$id" completed --timeout 30
	[ "$(qp_field "$id" exec_host)" != n3 ] || fail "job $id started on drained node n3"
done
"$QP_BIN/qmgr" resume n3 || fail "qmgr resume"
"$QP_BIN/qstat" --nodes | grep -E '^n3[[:space:]].*up' || fail "n3 not up after resume"
msg=$(as $A qmgr drain n3 2>&1) && fail "a user could drain a node"
echo "$msg" | grep -q "only root" || fail "unclear refusal: $msg"

note "disabled queue: qsub shows the reason"
"$QP_BIN/qmgr" disable short "maintenance until 15:00" || fail "qmgr disable"
msg=$(echo true | as $A qsub -q short 2>&1) && fail "qsub to a disabled queue succeeded"
echo "$msg" | grep -q "maintenance until 15:00" || fail "reason not shown: $msg"
"$QP_BIN/qmgr" enable short || fail "qmgr enable"
echo true | as $A qsub -q short >/dev/null || fail "qsub after enable"

note "reload: a broken file is refused and the old config stays; a queue with jobs cannot go"
cp "$QPOOL_CONF" "$QP_T/good.conf"
printf '\n[queue broken]\nncpus_default = many\n' >> "$QPOOL_CONF"
# The clients read the file too: they use the good copy, so the server judges the broken one.
msg=$("$QP_BIN/qmgr" -f "$QP_T/good.conf" reload 2>&1) && fail "reload of a broken file succeeded"
echo "$msg" | grep -qE "reload refused, old config kept: .*qpool.conf:[0-9]+: ncpus_default" || fail "no file:line in: $msg"
kill -HUP "$QP_SERVER_PID"
sleep 0.3
[ "$(grep -c "reload refused" "$QP_T/qpoold.log")" = 2 ] || fail "SIGHUP with a broken file not refused in the log"
"$QP_BIN/qstat" --conf "$QP_T/good.conf" -Q | grep -q '^one ' || fail "old config lost"
"$QP_BIN/qstat" --conf "$QP_T/good.conf" -Q | grep -q '^broken ' && fail "broken queue appeared"
cp "$QP_T/good.conf" "$QPOOL_CONF"
held=$(echo true | as $A qsub -q one -h) || fail qsub
python3 - "$QP_T/good.conf" "$QPOOL_CONF" <<'PY'
import sys
text = open(sys.argv[1]).read()
text = text.replace("[queue one]\nmax_running = 1\n", "")
open(sys.argv[2], "w").write(text + "\n[queue extra]\n")
PY
msg=$("$QP_BIN/qmgr" reload 2>&1) && fail "removing a queue that holds jobs succeeded"
echo "$msg" | grep -q "queue one still holds" || fail "unclear: $msg"
"$QP_BIN/qdel" "$held"
"$QP_BIN/qmgr" reload || fail "valid reload refused"
"$QP_BIN/qstat" -Q | grep -q '^extra ' || fail "new queue not there after reload"
"$QP_BIN/qstat" -Q | grep -q '^one ' && fail "removed queue still there"

note "the rotation survives a qpoold restart"
a1=$(echo 'sleep 1' | as $A qsub -q rot) || fail qsub
qp_wait "$a1" running
b1=$(echo 'sleep 1' | as $B qsub -q rot) || fail qsub
a2=$(echo 'sleep 1' | as $A qsub -q rot) || fail qsub
qp_wait "$b1" running --timeout 20
[ "$(qp_state "$a2")" = queued ] || fail "a2 ran before b1"
qp_wait "$a2" running --timeout 20
"$QP_BIN/qmgr" stop rot "restart test" || fail "qmgr stop"
a3=$(echo true | as $A qsub -q rot) || fail qsub
b2=$(echo true | as $B qsub -q rot) || fail qsub
# A drain keeps its reason and its time across the restart.
"$QP_BIN/qmgr" drain n3 "disk check" || fail "qmgr drain"
before=$("$QP_BIN/scontrol" show node n3 | grep -o 'Reason=.*')
echo "$before" | grep -qE '^Reason=disk check \[admin@20[0-9-]{8}T[0-9:]{8}\]' || fail "scontrol's reason: $before"
qp_stop "$QP_SERVER_PID"
qp_start_server
after=$("$QP_BIN/scontrol" show node n3 | grep -o 'Reason=.*')
[ "$after" = "$before" ] || fail "the drain after a restart: '$after', before it: '$before'"
"$QP_BIN/qmgr" resume n3 || fail "qmgr resume"
"$QP_BIN/qstat" -Q | awk '$1 == "rot" {print $3}' | grep -qx no || fail "stopped queue started again after restart"
"$QP_BIN/qstat" -Q --order rot
order=$("$QP_BIN/qstat" -Q --json --order rot | python3 -c 'import json,sys; print(" ".join(str(e["jobid"]) for e in json.load(sys.stdin)["order"]))')
[ "$order" = "$b2 $a3" ] || fail "after restart the order is '$order', want '$b2 $a3' ($B was served before $A's last job)"
"$QP_BIN/qmgr" start rot || fail "qmgr start"
qp_wait "$a3" completed --timeout 30
qp_wait "$b2" completed --timeout 30
last=$(qp_dispatch_order rot | tail -2 | awk '{print $1}' | tr '\n' ' ')
[ "$last" = "$b2 $a3 " ] || fail "after restart the dispatch order was '$last', want '$b2 $a3'"
echo "iqs ok"
