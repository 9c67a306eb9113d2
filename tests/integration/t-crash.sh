#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Crash safety: qpoold is killed with SIGKILL at random moments while two
# users submit jobs and jobs complete, and restarted, CRASH_ROUNDS times
# (3 here; make stress runs 25). Afterwards every job whose id qsub printed
# exists and ran exactly once, no job ran twice, and every finished job
# has its full accounting record.
. "$(dirname "$0")/lib.sh"
rounds=${CRASH_ROUNDS:-3}
qp_setup
qp_start_server
qp_start_node n1

ids=$QP_T/printed-ids
: > "$ids"
RANDOM=${CRASH_SEED:-$$}
note "seed $RANDOM, $rounds rounds"

# Each job appends its id to its owner's ledger; some sleep so that jobs are
# running at the moment of a crash, most end at once (completions storm).
storm() {  # user
	local u=$1 w=$QP_T/work/$1 n=0 id
	while [ ! -e "$QP_T/storm.stop" ]; do
		n=$((n + 1))
		id=$(printf 'echo "$QPOOL_JOBID" >> %s/ledger\n%s\n' "$w" \
			"$([ $((n % 5)) = 0 ] && echo 'sleep 1' || echo true)" |
			as "$u" qsub -N "s$n" 2>/dev/null) && echo "$id" >> "$ids.$u"
		sleep 0.0$((RANDOM % 5))
	done
}

# qpoold restarted in place: the old pid leaves the cleanup list, so
# nothing ever signals a pid that may have been reused.
restart_server() {
	local i
	for i in "${!QP_PIDS[@]}"; do
		[ "${QP_PIDS[$i]}" = "$QP_SERVER_PID" ] && unset 'QP_PIDS[i]'
	done
	QP_PIDS=("${QP_PIDS[@]}")
	qp_start_server
}

storm qpuser1 & s1=$!
storm qpuser2 & s2=$!
for ((round = 1; round <= rounds; round++)); do
	sleep "$((RANDOM % 2)).$((RANDOM % 10))"
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

note "waiting for every job to finish"
for ((i = 0; i < 1200; i++)); do
	# shellcheck disable=SC2125 # "?" is the value shown when qstat fails
	left=$("$QP_BIN/qstat" --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))') || left=?
	[ "$left" = 0 ] && break
	sleep 0.1
done
[ "$left" = 0 ] || fail "$left jobs still unfinished after 120s"

"$QP_BIN/qstat" -x --json > "$QP_T/all.json" || fail "qstat -x --json"
cat "$QP_T"/work/qpuser*/ledger > "$QP_T/ledger"
python3 "$(dirname "$0")/ledger-check" "$QP_T/all.json" "$ids" "$QP_T/ledger" || fail "crash storm lost or repeated jobs (above)"
echo "crash storm ok: $rounds rounds survived"
