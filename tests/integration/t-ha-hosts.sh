#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Failover on namespaced hosts (hosts.sh): three server hosts, each a
# qpoold on one PostgreSQL store (on a store host of its own, over the
# namespaced network), two node hosts, and a login host running a submit
# storm across each fault in turn: (a) kill -9 of the active qpoold;
# (b) every process of the active's host killed at once (found by its
# network namespace); (c) the active's link cut with nftables while it
# runs, then restored: it commits nothing (a qsub sent to it on its own
# socket during the cut is refused and absent from the store) and answers
# as a standby; (d) the active restarted with no standby: a submission is
# accepted at once, before the nodes are back. Each fault prints the time
# until a command is served and until a new job runs; at the end every id
# qsub printed exists and completed, none ran twice, and no running job
# was killed (a long job runs across every fault).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
. "$(dirname "$0")/pg.sh"
qp_hosts_reexec "$@"
qp_pg_bin > /dev/null || skip "PostgreSQL is not installed"
command -v nft > /dev/null || skip "needs nft (nftables) to cut a link"
# node_timeout 10: a node behind a cut learns it after node_timeout,
# then walks its list past dead servers (a connect timeout each).
qp_setup
sed -i 's/^node_timeout = .*/node_timeout = 10/' "$QPOOL_CONF"
qp_hosts_init
ASK=$QP_TOP/tests/integration/qpool-ask.py
p=h$$
srvs=("${p}s1" "${p}s2" "${p}s3")
db=${p}db login=${p}l nodes=("${p}a" "${p}b")
for i in 0 1 2; do qp_host "${srvs[$i]}" $((i + 1)); done
qp_host "$db" 4
qp_host "${nodes[0]}" 11
qp_host "${nodes[1]}" 12
qp_host "$login" 20
qp_munged_start pool
w=$QP_T/work/qpuser1

note "the store: PostgreSQL on $db, over the namespaced network"
pgdir=$QP_T/pg
QP_ATEXIT_LAST+=(pg_stop)
pg_stop() { qp_pg_stop "$pgdir"; }
local_dsn=$(QP_PG_NETNS=$(qp_host_pid "$db") QP_PG_LISTEN="$(qp_host_addr "$db")/24" qp_pg_start "$pgdir") ||
	fail "PostgreSQL did not start on $db"
port=$(echo "$local_dsn" | sed -n 's/.* port=\([0-9]*\) .*/\1/p')
sql() { psql -qtAX -v ON_ERROR_STOP=1 "$local_dsn" -c "$1"; }
# A cut link fails the store's calls within seconds, not TCP's minutes.
dsn="host=$db port=$port user=postgres dbname=qpool connect_timeout=3 keepalives_idle=2 keepalives_interval=1 keepalives_count=2 tcp_user_timeout=4000"

list=
for h in "${srvs[@]}"; do list=$list${list:+,}$h:7001; done
for h in "${srvs[@]}"; do
	sed -e "s|^socket = .*|socket = $QP_T/$h.sock|" -e "s|^state_dir = .*|state_dir = $QP_T/state-$h|" \
		"$QPOOL_CONF" > "$QP_T/$h.conf"
	printf '[server]\nlisten = %s:7001\nadvertise = %s:7001\nmunge_socket = %s\nstore = postgresql\nstore_dsn = %s\n' \
		"$(qp_host_addr "$h")" "$h" "$QP_T/pool.sock" "$dsn" >> "$QP_T/$h.conf"
done
printf '[server]\nserver = %s\nmunge_socket = %s\n' "$list" "$QP_T/pool.sock" > "$QP_T/login.conf"

declare -A SPID
start_qpoold() {  # HOST
	nsenter -t "$(qp_host_pid "$1")" --net --uts "$QP_BIN/qpoold" -f "$QP_T/$1.conf" >> "$QP_T/qpoold-$1.log" 2>&1 &
	SPID[$1]=$!
	QP_PIDS+=("$!")
}
# serves HOST: its qpoold answers a stat as the active (on its socket).
serves() {
	"$ASK" "$QP_T/$1.sock" stat 2>/dev/null |
		python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("ok") else 1)' 2>/dev/null
}
is_standby() {
	"$ASK" "$QP_T/$1.sock" stat 2>/dev/null |
		python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("standby") else 1)' 2>/dev/null
}
# active: the server host whose qpoold serves, within SECONDS (default 60).
active() {
	local i h
	for ((i = 0; i < ${1:-60} * 5; i++)); do
		for h in "${srvs[@]}"; do
			[ -n "${DEAD[$h]:-}" ] && continue
			serves "$h" && { echo "$h"; return 0; }
		done
		sleep 0.2
	done
	return 1
}
declare -A DEAD
ms_now() { date +%s%3N; }
lq() { on_as "$login" qpuser1 "$@"; }   # a user's command on the login host
lroot() { local c=$1; shift; on "$login" env QPOOL_CONF="$QP_T/login.conf" "$QP_BIN/$c" "$@"; }

note "three servers: the first is active, the others standbys"
start_qpoold "${srvs[0]}"
[ "$(active 60)" = "${srvs[0]}" ] || fail "the first qpoold did not become active"
start_qpoold "${srvs[1]}"
start_qpoold "${srvs[2]}"
for h in "${srvs[1]}" "${srvs[2]}"; do
	for ((i = 0; i < 300; i++)); do is_standby "$h" && break; sleep 0.2; done
	is_standby "$h" || fail "$h is not a standby"
done
{ cat "$QPOOL_CONF"; printf '[server]\nserver = %s\nmunge_socket = %s\n' "$list" "$QP_T/pool.sock"; } > "$QP_T/node.conf.pool"
for h in "${nodes[@]}"; do
	mkdir -m 1777 "$QP_T/tmp-$h"
	{ cat "$QP_T/node.conf.pool"; printf '[node]\ntmpdir = %s\n' "$QP_T/tmp-$h"; } > "$QP_T/node-$h.conf"
	nsenter -t "$(qp_host_pid "$h")" --net --uts "$QP_BIN/qnoded" -f "$QP_T/node-$h.conf" --cpus 0-1 \
		>> "$QP_T/qnoded-$h.log" 2>&1 &
	QP_PIDS+=("$!")
done
nodes_up() {  # SECONDS: both nodes up at the active (asked from the login host)
	local i
	for ((i = 0; i < $1 * 5; i++)); do
		[ "$(lroot qstat --nodes 2>/dev/null | grep -cE "^${p}[ab][[:space:]].*up")" = 2 ] && return 0
		sleep 0.2
	done
	return 1
}
nodes_up 60 || fail "the nodes did not register: $(lroot qstat --nodes 2>&1)"

note "a long job runs across every fault; the storm starts"
long=$(lq qsub -N long <<JOB
echo ran >> $w/long.ran
for i in \$(seq 3000); do [ -e $w/go ] && exit 0; sleep 0.1; done
exit 1
JOB
) || fail "qsub long: $long"
for ((i = 0; i < 600; i++)); do [ -s "$w/long.ran" ] && break; sleep 0.1; done
[ -s "$w/long.ran" ] || fail "the long job did not start"

storm() {  # USER: qsub from the login host until stopped, at most 400 jobs
	local u=$1 n=0 id
	while [ ! -e "$QP_T/storm.stop" ] && [ $n -lt 400 ]; do
		n=$((n + 1))
		id=$(printf 'echo "$PBS_JOBID" >> %s/ledger\n%s\n' "$QP_T/work/$u" \
			"$([ $((n % 4)) = 0 ] && echo 'sleep 2' || echo true)" |
			on_as "$login" "$u" qsub -N "s$n" -o /dev/null -e /dev/null 2>/dev/null) && echo "$id" >> "$QP_T/acked.$u"
		sleep 0.4
	done
}
storm qpuser1 & QP_PIDS+=("$!"); s1=$!
storm qpuser2 & QP_PIDS+=("$!"); s2=$!

acked() { cat "$QP_T"/acked.* 2>/dev/null | wc -l; }
wait_acked() {  # N more acknowledged than now, within 60 s
	local want=$(($(acked) + $1)) i
	for ((i = 0; i < 300; i++)); do
		[ "$(acked)" -ge "$want" ] && return 0
		kill -0 "$s1" 2>/dev/null || kill -0 "$s2" 2>/dev/null || return 0   # both storms done
		sleep 0.2
	done
	fail "the storm made no progress: $(acked) acknowledged"
}

# measure NAME T0: times until a user's command is served and a new job
# runs, from T0. The probe is qpuser3's, who has nothing queued: the
# round robin serves it first, so its wait is the failover's, not the
# storm's backlog.
measure() {
	local name=$1 t0=$2 t1 t2 i
	for ((i = 0; i < 300; i++)); do lq qstat > /dev/null 2>&1 && break; sleep 0.2; done
	t1=$(ms_now)
	lq qstat > /dev/null 2>&1 || fail "($name) no command served within 60 s"
	echo "touch $QP_T/work/qpuser3/probe-$name" | on_as "$login" qpuser3 qsub -N "probe-$name" -o /dev/null -e /dev/null > /dev/null ||
		fail "($name) qsub of the probe"
	for ((i = 0; i < 600; i++)); do [ -e "$QP_T/work/qpuser3/probe-$name" ] && break; sleep 0.1; done
	t2=$(ms_now)
	[ -e "$QP_T/work/qpuser3/probe-$name" ] || fail "($name) a new job did not run within 60 s"
	echo "($name) a command served after $((t1 - t0)) ms, a new job ran after $((t2 - t0)) ms"
}

wait_acked 3
note "(a) kill -9 of the active qpoold"
act=$(active) || fail "no active"
t0=$(ms_now)
kill -KILL "${SPID[$act]}"
wait "${SPID[$act]}" 2>/dev/null
measure a "$t0"
new=$(active) || fail "(a) no active after the kill"
[ "$new" != "$act" ] || fail "(a) the killed server serves"
start_qpoold "$act"
for ((i = 0; i < 300; i++)); do is_standby "$act" && break; sleep 0.2; done
is_standby "$act" || fail "(a) the restarted $act is not a standby"
nodes_up 60 || fail "(a) the nodes are not back"
wait_acked 3

note "(b) every process of the active's host killed at once"
act=$(active) || fail "no active"
ns=$(readlink "/proc/$(qp_host_pid "$act")/ns/net")
victims=()
for d in /proc/[0-9]*; do
	[ "$(readlink "$d/ns/net" 2>/dev/null)" = "$ns" ] && victims+=("${d#/proc/}")
done
[ "${#victims[@]}" -ge 2 ] || fail "(b) found ${#victims[@]} processes on $act"
t0=$(ms_now)
kill -KILL "${victims[@]}"
DEAD[$act]=1
wait "${SPID[$act]}" 2>/dev/null
echo "(b) killed ${#victims[@]} processes on $act"
measure b "$t0"
nodes_up 60 || fail "(b) the nodes are not back"
wait_acked 3

note "(c) the active's link cut while it runs, then restored"
act=$(active) || fail "no active"
epoch=$(sql 'SELECT epoch FROM lease')
t0=$(ms_now)
on "$act" nft -f - <<'NFT' || fail "(c) nft"
table inet qpcut {
	chain in { type filter hook input priority 0; policy accept; iifname "eth0" drop; }
	chain out { type filter hook output priority 0; policy accept; oifname "eth0" drop; }
}
NFT
QP_ATEXIT+=(uncut)
uncut() { on "$act" nft delete table inet qpcut 2>/dev/null; }
# A write sent to the cut-off active on its own socket (the root
# namespace reaches it by its path): it must never be acknowledged.
(cd "$w" && echo true | QPOOL_CONF=$QP_T/$act.conf runuser -u qpuser1 -- "$QP_BIN/qsub" -N stale -o /dev/null -e /dev/null \
	> "$QP_T/stale.out" 2>&1; echo $? > "$QP_T/stale.rc") &
QP_PIDS+=("$!")
measure c "$t0"
new=
for h in "${srvs[@]}"; do
	[ "$h" != "$act" ] && [ -z "${DEAD[$h]:-}" ] && serves "$h" && new=$h
done
[ -n "$new" ] && [ "$new" != "$act" ] || fail "(c) no other server took over"
nodes_up 60 || fail "(c) the nodes did not follow to $new"
uncut
for ((i = 0; i < 300; i++)); do is_standby "$act" && break; sleep 0.2; done
is_standby "$act" || fail "(c) the old active $act does not answer as a standby once its link is back"
grep -q "stepping down to standby at epoch $epoch" "$QP_T/qpoold-$act.log" || fail "(c) $act logged no step-down at epoch $epoch"
# qstat -B on the old active's host: its standby sends it to the new
# active, which lists it among the standbys.
epoch2=$(sql 'SELECT epoch FROM lease')
for ((i = 0; i < 100; i++)); do
	out=$(on "$act" env QPOOL_CONF="$QP_T/$act.conf" "$QP_BIN/qstat" -B 2>&1)
	echo "$out" | grep -q "^Active: $new:7001 (epoch $epoch2), .*standbys: .*$act:7001" && break
	sleep 0.2
done
echo "$out" | grep -q "^Active: $new:7001 (epoch $epoch2), .*standbys: .*$act:7001" || fail "(c) qstat -B at $act: $out"
for ((i = 0; i < 300; i++)); do [ -s "$QP_T/stale.rc" ] && break; sleep 0.2; done
[ "$(cat "$QP_T/stale.rc" 2>/dev/null)" = 0 ] && fail "(c) the cut-off active acknowledged a qsub: $(cat "$QP_T/stale.out")"
[ "$(sql "SELECT count(*) FROM jobs WHERE name = 'stale'")" = 0 ] || fail "(c) the cut-off active wrote a job"
echo "(c) $act stepped down at epoch $epoch and committed nothing; $new is active at epoch $epoch2"
wait_acked 3

note "(d) the active restarted with no standby: submissions accepted at once"
act=$(active) || fail "no active"
for h in "${srvs[@]}"; do
	[ "$h" != "$act" ] && [ -z "${DEAD[$h]:-}" ] && { qp_stop "${SPID[$h]}"; DEAD[$h]=1; }
done
t0=$(ms_now)
kill -KILL "${SPID[$act]}"
wait "${SPID[$act]}" 2>/dev/null
start_qpoold "$act"
for ((i = 0; i < 300; i++)); do serves "$act" && break; sleep 0.2; done
serves "$act" || fail "(d) the restarted $act does not serve"
# Before the nodes are back: the known nodes come from the store.
out=$(echo true | lq qsub -l ncpus=2 -N fits -o /dev/null -e /dev/null 2>&1) || fail "(d) qsub right after the restart: $out"
echo "$out" >> "$QP_T/acked.qpuser1"
measure d "$t0"
nodes_up 60 || fail "(d) the nodes are not back"
wait_acked 3

touch "$QP_T/storm.stop"
wait "$s1" "$s2"
touch "$w/go"
note "waiting for every job to finish"
for ((i = 0; i < 900; i++)); do
	left=$(lroot qstat --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))') || left='?'
	[ "$left" = 0 ] && break
	sleep 0.2
done
[ "$left" = 0 ] || fail "$left jobs still unfinished after 180 s"
lroot qstat -x --json > "$QP_T/all.json" || fail "qstat -x --json"
cat "$QP_T"/acked.* > "$QP_T/acked"
cat "$QP_T"/work/qpuser*/ledger > "$QP_T/ledger"
python3 - "$QP_T/all.json" "$QP_T/acked" "$QP_T/ledger" "${long%%.*}" "$w/long.ran" <<'PY' || fail "jobs lost, repeated or killed (above)"
import json, sys, collections
def num(v):
    return int(str(v).strip().split(".")[0])
jobs = {num(j["jobid"]): j for j in json.load(open(sys.argv[1]))}
acked = [num(l) for l in open(sys.argv[2]) if l.strip()]
ran = collections.Counter(num(l) for l in open(sys.argv[3]) if l.strip())
long, long_runs = int(sys.argv[4]), len(open(sys.argv[5]).readlines())
lost = [i for i in acked if i not in jobs or jobs[i]["state"] != "completed"]
twice = [i for i, n in ran.items() if n > 1] + ([long] if long_runs != 1 else [])
killed = [i for i in set(ran) | {long} if i in jobs and
          (jobs[i]["state"] != "completed" or jobs[i].get("exit_status") != 0)]
print(f"{len(acked)} acknowledged, {len(jobs)} in the store, {sum(ran.values())} storm runs; "
      f"acknowledged jobs lost: {len(lost)}, jobs run twice: {len(twice)}, running jobs killed: {len(killed)}")
for i in lost[:10]:
    print(f"  lost {i}: {jobs[i]['state'] if i in jobs else 'not in the store'}")
for i in twice[:10]:
    print(f"  job {i} ran {ran[i] if i != long else long_runs} times")
for i in killed[:10]:
    print(f"  job {i}: {jobs[i]['state']}, exit {jobs[i].get('exit_status')} ({jobs[i].get('reason')})")
sys.exit(1 if lost or twice or killed else 0)
PY
echo "PASS"
