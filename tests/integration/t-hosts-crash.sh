#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# kill -9 of qpoold during a submit storm from a login host over TCP with
# MUNGE (hosts.sh): every job whose id qsub printed exists and ran exactly
# once, none ran twice, and the node comes back over TCP after each
# restart. CRASH_ROUNDS rounds (3 here).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
qp_hosts_reexec "$@"
rounds=${CRASH_ROUNDS:-3}
qp_setup
qp_hosts_init
p=q$$
srv=${p}s login=${p}l node=${p}a
qp_host "$srv" 1
qp_host "$node" 2
qp_host "$login" 5
qp_pool_start "$srv" 7001
qp_node_on "$node"

ids=$QP_T/printed-ids
: > "$ids"
RANDOM=${CRASH_SEED:-$$}
note "seed $RANDOM, $rounds rounds"

storm() {  # user
	local u=$1 w=$QP_T/work/$1 n=0 id
	while [ ! -e "$QP_T/storm.stop" ]; do
		n=$((n + 1))
		id=$(printf 'echo "$PBS_JOBID" >> %s/ledger\n%s\n' "$w" \
			"$([ $((n % 5)) = 0 ] && echo 'sleep 1' || echo true)" |
			on_as "$login" "$u" qsub -N "s$n" 2>/dev/null) && echo "$id" >> "$ids.$u"
		sleep 0.0$((RANDOM % 5))
	done
}

restart_server() {
	local i
	for i in "${!QP_PIDS[@]}"; do
		[ "${QP_PIDS[$i]}" = "$QP_SERVER_PID" ] && unset 'QP_PIDS[i]'
	done
	QP_PIDS=("${QP_PIDS[@]}")
	qp_server_on "$srv"
}

storm qpuser1 & s1=$!
storm qpuser2 & s2=$!
printed_now() { cat "$ids".* 2>/dev/null | wc -l; }
for ((round = 1; round <= rounds; round++)); do
	# Each round kills qpoold after 5 to 7 more submits went through,
	# waited for (a loaded machine submits slower; 60 s at most), then
	# a moment more so the kill falls anywhere in a submit.
	want=$(($(printed_now) + 5 + RANDOM % 3))
	for _ in $(seq 600); do [ "$(printed_now)" -ge "$want" ] && break; sleep 0.1; done
	sleep "0.$((RANDOM % 10))"
	kill -KILL "$QP_SERVER_PID"
	wait "$QP_SERVER_PID" 2>/dev/null
	sleep "0.$((RANDOM % 5))"
	restart_server
	echo "round $round: qpoold killed and restarted; $(cat "$ids".* 2>/dev/null | wc -l) ids printed so far"
done
touch "$QP_T/storm.stop"
wait "$s1" "$s2"
cat "$ids".* > "$ids"
printed=$(wc -l < "$ids")
[ "$printed" -ge $((rounds * 5)) ] || fail "only $printed jobs submitted in $rounds rounds: the storm did not run"
# The last restart may be moments ago: qnoded reconnects with a backoff.
for ((i = 0; i < 200; i++)); do
	n=$(grep -c "registered with qpoold" "$QP_T/qnoded-$node.log")
	[ "$n" -gt 1 ] && break
	sleep 0.05
done
[ "$n" -gt 1 ] || fail "the node never re-registered over TCP"

note "waiting for every job to finish"
for ((i = 0; i < 1200; i++)); do
	left=$("$QP_BIN/qstat" --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))') || left='?'
	[ "$left" = 0 ] && break
	sleep 0.1
done
[ "$left" = 0 ] || fail "$left jobs still unfinished after 120s"

"$QP_BIN/qstat" -x --json > "$QP_T/all.json" || fail "qstat -x --json"
cat "$QP_T"/work/qpuser*/ledger > "$QP_T/ledger"
python3 "$(dirname "$0")/ledger-check" "$QP_T/all.json" "$ids" "$QP_T/ledger" || fail "crash storm lost or repeated jobs (above)"
note "paged replies (qstat -f answers 50 jobs a page) read the same over TCP as on the socket"
# A slow machine's storm may have made fewer than a page: held jobs make
# the second page.
n=$("$QP_BIN/qstat" -x --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))') || fail "qstat -x --json"
for ((k = n; k < 60; k++)); do
	as qpuser1 qsub -h -o /dev/null -e /dev/null <<<'true' >/dev/null || fail "qsub -h"
done
on_as "$login" qpuser1 qstat -x -f > "$QP_T/f.tcp" || fail "qstat -x -f over TCP"
# On the server host, as a local user there would: the socket's side names
# the server by that host's name too.
(cd "$QP_T/work/qpuser1" && on "$srv" runuser -u qpuser1 -- env QPOOL_CONF="$QPOOL_CONF" "$QP_BIN/qstat" -x -f) \
	> "$QP_T/f.unix" || fail "qstat -x -f on the socket"
[ "$(grep -c '^Job Id' "$QP_T/f.unix")" -gt 50 ] || fail "fewer than 50 jobs: no second page to read"
cmp -s "$QP_T/f.tcp" "$QP_T/f.unix" || fail "qstat -x -f differs over TCP: $(diff "$QP_T/f.tcp" "$QP_T/f.unix" | head -5)"
echo "remote crash storm ok: $rounds rounds survived"
