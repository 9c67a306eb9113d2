#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The site's submit filter ([server] submit_filter, issue 37): a default
# walltime set, -w / host= refused with the filter's own line in qsub's
# and sbatch's output, a queue changed and seen in qstat -f, alter and move
# filtered, a hanging filter killed at its bound while qpoold answers
# others, a flood / non-JSON / owner change taking the failure policy, a
# bad hook path refused at start and at reload, a stop while a filter
# runs leaving no half-made job, and the GPU model seen and set by it.
. "$(dirname "$0")/lib.sh"
qp_setup
F=$QP_T/filter
cat > "$F" <<'HOOK'
#!/bin/bash
in=$(cat)
ev=$(jq -r .event <<<"$in")
name=$(jq -r '.job.name // ""' <<<"$in")
case "$name" in
hang) [ -e "${0%/*}/nohang" ] && exit 0; echo $$ > "${0%/*}/hang.pid"; sleep 60 ;;
flood) head -c 1048576 /dev/zero | tr '\0' x; exit 0 ;;
garbage) echo "this is not JSON"; exit 0 ;;
owner) echo '{"owner":"root","uid":0}'; exit 0 ;;
esac
if [ "$(jq -r '.job.gpu_model // ""' <<<"$in")" = h100 ]; then
	echo "h100 GPUs are reserved for the AI group" >&2
	exit 1
fi
if [ -n "$(jq -r '.job.nodes // ""' <<<"$in")" ]; then
	echo "students may not choose their nodes (-w, host=)" >&2
	echo "a second line nobody sees" >&2
	exit 1
fi
case "$ev" in
submit)
	echo "filter saw $ev of $(jq -r .job.user <<<"$in")" >&2
	out='{}'
	[ "$(jq -r '.job.walltime' <<<"$in")" = null ] && out=$(jq -c '.walltime = "00:07:00"' <<<"$out")
	[ "$name" = toshort ] && out=$(jq -c '.queue = "short"' <<<"$out")
	[ "$name" = acct ] && out=$(jq -c '.account = "physics"' <<<"$out")
	[ "$name" = setmodel ] && out=$(jq -c '.gpu_model = "a100"' <<<"$out")
	echo "$out" ;;
alter)
	w=$(jq -r '.job.changes.walltime // 0' <<<"$in")
	[ "$w" -gt 7200 ] && { echo "walltime above 2 hours needs the admins" >&2; exit 2; }
	exit 0 ;;
move)
	[ "$(jq -r .job.changes.queue <<<"$in")" = closed ] && { echo "queue closed takes no moves" >&2; exit 3; }
	exit 0 ;;
esac
HOOK
chmod 0755 "$F"
cat >> "$QPOOL_CONF" <<CONF

[queue closed]

[server]
submit_filter = $F
submit_filter_timeout = 2
CONF
qp_start_server
# No node: every job waits, its request as the filter left it.

note "a default walltime set by the filter, seen in qstat -f"
id=$(echo true | as qpuser1 qsub -N plain) || fail "qsub plain"
[ "$(qp_field "$id" Resource_List.walltime)" = 00:07:00 ] ||
	fail "walltime $(qp_field "$id" Resource_List.walltime), want the filter's 00:07:00"
id2=$(echo true | as qpuser1 qsub -N mine -l walltime=00:03:00) || fail "qsub mine"
[ "$(qp_field "$id2" Resource_List.walltime)" = 00:03:00 ] || fail "the user's walltime was replaced"
grep -q "filter saw submit of qpuser1" "$QP_T/qpoold.log" || fail "the filter's stderr is not in the log"

note "the queue changed by the filter; an account set"
id3=$(echo true | as qpuser1 qsub -N toshort -l walltime=00:01:00) || fail "qsub toshort"
[ "$(qp_field "$id3" queue)" = short ] || fail "queue $(qp_field "$id3" queue), want short"
id4=$(echo true | as qpuser1 qsub -N acct) || fail "qsub acct"
[ "$(qp_field "$id4" Account_Name)" = physics ] || fail "Account_Name '$(qp_field "$id4" Account_Name)'"

n_jobs() { "$QP_BIN/qstat" --table | grep -cE '^[0-9]+ '; }
n0=$(n_jobs)
note "host= (qsub) and -w (sbatch) refused with the filter's line"
out=$(echo true | as qpuser1 qsub -l host=n1 2>&1) && fail "qsub -l host= went in: $out"
echo "qsub says: $out"
[ "$(echo "$out" | tail -n 1)" = "qsub: students may not choose their nodes (-w, host=)" ] || fail "qsub printed: $out"
out=$(printf '#!/bin/sh\ntrue\n' | as qpuser1 sbatch -w n1 2>&1) && fail "sbatch -w went in: $out"
echo "sbatch says: $out"
echo "$out" | grep -qx "sbatch: error: students may not choose their nodes (-w, host=)" || fail "sbatch printed: $out"
echo "$out" | grep -q "a second line" && fail "more than the first line shown: $out"
[ "$(n_jobs)" = "$n0" ] || fail "a refused submission left a job"

note "the GPU model: seen by the filter, set by it and checked as the user's"
out=$(printf '#!/bin/sh\ntrue\n' | as qpuser1 sbatch --gres=gpu:h100:1 2>&1) && fail "sbatch h100 went in: $out"
echo "$out" | grep -qx "sbatch: error: h100 GPUs are reserved for the AI group" || fail "sbatch h100 printed: $out"
out=$(echo true | as qpuser1 qsub -N setmodel 2>&1) && fail "a model set on a job without GPUs went in: $out"
grep -q "gpu_model=a100: the job asks for no GPU" <<< "$out" || fail "qsub -N setmodel printed: $out"
[ "$(n_jobs)" = "$n0" ] || fail "a refused submission left a job"

note "alter and move filtered"
out=$(as qpuser1 qalter -l walltime=05:00:00 "$id" 2>&1) && fail "qalter past 2 h went in: $out"
echo "qalter says: $out"
echo "$out" | grep -q "walltime above 2 hours needs the admins" || fail "qalter printed: $out"
[ "$(qp_field "$id" Resource_List.walltime)" = 00:07:00 ] || fail "a refused alter changed the job"
as qpuser1 qalter -l walltime=01:00:00 "$id" || fail "an allowed qalter refused"
[ "$(qp_field "$id" Resource_List.walltime)" = 01:00:00 ] || fail "the allowed alter did not land"
out=$("$QP_BIN/qmove" closed "$id" 2>&1) && fail "qmove into closed went in: $out"
echo "qmove says: $out"
echo "$out" | grep -q "queue closed takes no moves" || fail "qmove printed: $out"
"$QP_BIN/qmove" batch "$id3" || fail "an allowed qmove refused"
[ "$(qp_field "$id3" queue)" = batch ] || fail "the allowed move did not land"

note "nonsense from the filter: policy reject"
for what in flood garbage owner; do
	out=$(echo true | as qpuser1 qsub -N $what 2>&1) && fail "$what: accepted under reject: $out"
	echo "$what: $out"
	echo "$out" | grep -q "submit filter failed" || fail "$what: qsub printed: $out"
done
[ "$(n_jobs)" = "$n0" ] || fail "a refused submission left a job"

note "a hanging filter: qpoold answers others meanwhile, killed at 2 s, refused"
t0=$(date +%s%N)
(echo true | as qpuser1 qsub -N hang > "$QP_T/hang.out" 2>&1; echo $? > "$QP_T/hang.rc") &
qp_wait_file "$QP_T/hang.pid" 10
for i in 1 2 3; do
	timeout 1 "$QP_BIN/qstat" > /dev/null || fail "qstat not answered while the filter hangs"
done
for i in $(seq 200); do [ -e "$QP_T/hang.rc" ] && break; sleep 0.05; done
t1=$(date +%s%N)
[ "$(cat "$QP_T/hang.rc")" != 0 ] || fail "the hanging submission went in under reject"
cat "$QP_T/hang.out"
grep -q "killed after 2[0-9][0-9][0-9] ms" "$QP_T/hang.out" || fail "qsub did not say the filter was killed"
[ $(( (t1 - t0) / 1000000 )) -lt 6000 ] || fail "the hang took $(( (t1 - t0) / 1000000 )) ms"
kill -0 "$(cat "$QP_T/hang.pid")" 2>/dev/null && fail "the hung filter still runs"
[ "$(n_jobs)" = "$n0" ] || fail "the killed submission left a job"

note "qmgr lists the hook with its last outcome"
out=$("$QP_BIN/qmgr" -c 'list hook') || fail "qmgr list hook: $out"
echo "$out"
echo "$out" | grep -q "^Hook submit_filter" || fail "no submit_filter in list hook"
echo "$out" | grep -q "path = $F" || fail "list hook: no path"
echo "$out" | grep -q "last_result = killed after" || fail "list hook: the last outcome is not the hang"
out=$(as qpuser1 qmgr -c 'list hook' 2>&1) && fail "a user listed the hooks: $out"

note "a bad hook path refused at reload: old one kept"
cp "$F" "$QP_T/loose"; chmod 0777 "$QP_T/loose"
sed -i "s|^submit_filter = .*|submit_filter = $QP_T/loose|" "$QPOOL_CONF"
kill -HUP "$QP_SERVER_PID"
for i in $(seq 100); do grep -q "reload refused" "$QP_T/qpoold.log" && break; sleep 0.05; done
grep "reload refused" "$QP_T/qpoold.log" | grep -q "loose: writable by others" || fail "reload not refused for the loose hook"
out=$(echo true | as qpuser1 qsub -l host=n1 2>&1) && fail "after the refused reload the old filter is gone"

note "failure policy accept (reload)"
sed -i "s|^submit_filter = .*|submit_filter = $F|; s|^submit_filter_timeout = .*|submit_filter_timeout = 1\nsubmit_filter_failure = accept|" "$QPOOL_CONF"
kill -HUP "$QP_SERVER_PID"
for i in $(seq 100); do [ "$(grep -c "config reloaded" "$QP_T/qpoold.log")" -ge 1 ] && break; sleep 0.05; done
grep -q "config reloaded" "$QP_T/qpoold.log" || fail "good reload not taken"
idg=$(echo true | as qpuser1 qsub -N garbage) || fail "garbage refused under accept"
[ "$(qp_field "$idg" Job_Name)" = garbage ] || fail "the accepted job is not there"
out=$(echo true | as qpuser1 qsub -l host=n1 2>&1) && fail "a non-zero exit accepted under accept: $out"

note "a bad hook path refused at start: one line, non-zero"
sed "s|^socket = .*|socket = $QP_T/other.sock|; s|^state_dir = .*|state_dir = $QP_T/other|; s|^submit_filter = .*|submit_filter = $QP_T/loose|" "$QPOOL_CONF" > "$QP_T/other.conf"
out=$(timeout 20 "$QP_BIN/qpoold" -f "$QP_T/other.conf" 2>&1) && fail "qpoold started with a loose hook"
echo "qpoold says: $out"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "not one line: $out"
echo "$out" | grep -q "submit_filter: .*loose: writable by others" || fail "qpoold printed: $out"
sed -i "s|^submit_filter = .*|submit_filter = $F\nserver_prolog = $QP_T/loose|" "$QP_T/other.conf"
out=$(timeout 20 "$QP_BIN/qpoold" -f "$QP_T/other.conf" 2>&1) && fail "qpoold started with a loose server prolog"
echo "qpoold says: $out"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "not one line: $out"
echo "$out" | grep -q "server_prolog: .*loose: writable by others" || fail "qpoold printed: $out"

note "a stop while the filter runs: the submission is never half-made"
sed -i "s|^submit_filter_timeout = .*|submit_filter_timeout = 30|; s|^submit_filter_failure = .*|submit_filter_failure = reject|" "$QPOOL_CONF"
kill -HUP "$QP_SERVER_PID"
for i in $(seq 100); do [ "$(grep -c "config reloaded" "$QP_T/qpoold.log")" -ge 2 ] && break; sleep 0.05; done
rm -f "$QP_T/hang.pid" "$QP_T/hang.rc"
(echo true | as qpuser1 qsub -N hang > "$QP_T/hang.out" 2>&1; echo $? > "$QP_T/hang.rc") &
for i in $(seq 200); do [ -s "$QP_T/hang.pid" ] && break; sleep 0.05; done
[ -s "$QP_T/hang.pid" ] || fail "the hanging filter did not start"
hp=$(cat "$QP_T/hang.pid")
qp_stop "$QP_SERVER_PID"
kill -0 "$hp" 2>/dev/null && fail "the filter outlived qpoold"
touch "$QP_T/nohang"   # a client that tries again is let in
qp_start_server
for i in $(seq 400); do [ -e "$QP_T/hang.rc" ] && break; sleep 0.05; done
[ -e "$QP_T/hang.rc" ] || fail "qsub still waits after the restart"
n_hang=$("$QP_BIN/qstat" --table | grep -c ' hang ' || true)
echo "qsub: rc $(cat "$QP_T/hang.rc"): $(cat "$QP_T/hang.out"); jobs named hang: $n_hang"
if [ "$(cat "$QP_T/hang.rc")" = 0 ]; then
	[ "$n_hang" = 1 ] || fail "qsub said yes, $n_hang jobs named hang"
else
	[ "$n_hang" = 0 ] || fail "qsub said no, $n_hang jobs named hang"
fi
echo PASS
