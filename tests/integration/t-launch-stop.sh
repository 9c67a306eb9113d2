#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A launch cut by a daemon's stop: jobs launched while qnoded is stopped
# with SIGTERM, and (separately) SIGKILL, and while qpoold is stopped with
# SIGTERM, at several points of the launch (the job just submitted, its
# dispatch seen, its spec written, its gded up, its script running). No
# sleeps: each point is waited for, bounded. While the daemon is away,
# after it is back, and until the job ends, every process of every job
# runs as its owner inside its own groups (/proc/PID/cgroup against
# <parent>/n1/job.ID in every hierarchy the host mounts); each job either
# never started and is queued again, or runs on and completes, and runs
# exactly once. Last, a launch request left unread in a lagging (stopped)
# launcher when qnoded is killed: the job is requeued, not failed, and
# runs once. At the end no job group, gded, job process or job file is
# left. LAUNCH_STOP_ROUNDS (default 10) rounds per stop, each a burst of
# LAUNCH_STOP_BURST (default 2, the node's CPUs) jobs.
. "$(dirname "$0")/lib.sh"
rounds=${LAUNCH_STOP_ROUNDS:-10}
qp_setup
# A stopped qnoded comes back within this; lib.sh's 5 s is less than a
# restart can take on a loaded host (ASan, tests side by side), and a
# node away for longer is lost: its jobs requeued and started again,
# rightly (t-node-loss), which this test would read as a double start.
sed -i 's/^node_timeout = .*/node_timeout = 60/' "$QPOOL_CONF"
qp_start_server
qp_start_node n1
w=$QP_T/work/qpuser1
jobs_dir=$QP_T/state/nodes/n1/jobs
uid1=$(id -u qpuser1)

forget_pid() {
	local i
	for i in "${!QP_PIDS[@]}"; do [ "${QP_PIDS[$i]}" = "$1" ] && unset 'QP_PIDS[i]'; done
	QP_PIDS=("${QP_PIDS[@]}")
}

# Every process carrying this test's job environment (PBS_O_WORKDIR is
# the test's own work dir): its job, uid and groups. Prints one line per
# process ("ID PID"), and one "BAD ..." line per process outside its
# job's groups or not its owner's; exits 1 if any.
cat > "$QP_T/fence.py" <<'PY'
import os, sys
workdir, parent, uid = sys.argv[1].encode(), sys.argv[2], sys.argv[3]
bad = 0
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    try:
        with open(f"/proc/{p}/environ", "rb") as f:
            env = f.read().split(b"\0")
        if b"PBS_O_WORKDIR=" + workdir not in env:
            continue
        jobid = next(e[12:].decode() for e in env if e.startswith(b"QPOOL_JOBID="))
        with open(f"/proc/{p}/cgroup") as f:
            groups = [l.rstrip("\n").split(":", 2) for l in f]
        with open(f"/proc/{p}/status") as f:
            uids = next(l.split()[1:] for l in f if l.startswith("Uid:"))
        with open(f"/proc/{p}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")[:60]
        # Read after its groups: a task in exit (PF_EXITING, 0x4 in
        # stat's flags, never cleared) shows "/" in every v1 hierarchy
        # (the kernel's proc_cgroup_show), wherever it ran: a job's
        # command ending during the scan is not a process outside them.
        with open(f"/proc/{p}/stat") as f:
            if int(f.read().rsplit(")", 1)[1].split()[6]) & 0x4:
                continue
    except (OSError, StopIteration):
        continue   # gone meanwhile, or not a job's
    want = f"/{parent}/n1/job.{jobid}"
    v1 = {"cpuset", "memory", "cpuacct", "cpu", "pids", "freezer"}
    wrong = []
    # v1: the hierarchies the fence uses; v2 (none of them): the one tree.
    fence = [g for g in groups if set(g[1].split(",")) & v1] or [g for g in groups if g[1] == ""]
    for _, ctl, path in fence:
        if path != want and not path.endswith(want):   # v2: below the holder's group
            wrong.append(f"{ctl or 'v2'}:{path}")
    if set(uids) != {uid}:
        wrong.append(f"uids {' '.join(uids)}")
    if wrong:
        bad += 1
        print(f"BAD job {jobid} pid {p} ({cmd}) outside {want}: {'; '.join(wrong)}")
    else:
        print(f"{jobid} {p}")
sys.exit(1 if bad else 0)
PY
fenced() {  # WHEN: every job process fenced, else fail naming WHEN
	local out
	out=$(python3 "$QP_T/fence.py" "$w" "$QP_CG_PARENT" "$uid1") ||
		fail "$1: a job's process runs outside its groups:
$(grep BAD <<<"$out")"
}

# The job: notes each start, then runs until its go file appears (bounded).
job_script() {
	cat <<JOB
echo "\$QPOOL_JOBID" >> $w/ran.\$QPOOL_JOBID
for i in \$(seq 1200); do [ -e $w/go.\$QPOOL_JOBID ] && exit 0; sleep 0.1; done
exit 1
JOB
}

# at POINT ID: returns once job ID's launch has reached POINT (bounded).
at() {
	local i
	case $1 in
	submitted) return 0 ;;
	dispatched) qp_wait "$2" running ;;
	spec) # A tight look first (the spec is written just before the
	      # launcher is asked), then every 10 ms, 30 s at most.
	      for ((i = 0; i < 20000; i++)); do [ -e "$jobs_dir/$2.json" ] && return 0; done
	      for ((i = 0; i < 3000; i++)); do [ -e "$jobs_dir/$2.json" ] && return 0; sleep 0.01; done
	      fail "job $2: no spec in $jobs_dir" ;;
	gded) qp_wait_gded "$2" >/dev/null || exit 1 ;;
	running) qp_wait_file "$w/ran.$2" ;;
	esac
}

# stop DAEMON SIG: stops it and waits for its end; restart DAEMON: again.
stop() {
	local pid
	if [ "$1" = qpoold ]; then pid=$QP_SERVER_PID; else pid=$(qp_node_pid n1); fi
	kill -"$2" "$pid"
	wait "$pid" 2>/dev/null
	forget_pid "$pid"
}
restart() {
	if [ "$1" = qpoold ]; then qp_start_server; else qp_start_node n1; fi
}

# One round: a burst of BURST jobs, the daemon stopped when the first
# reaches the round's point (the others are wherever their launch is
# then), started again; each job then either runs or waits, and is let go.
burst=${LAUNCH_STOP_BURST:-2}
points=(submitted dispatched spec gded running)
all=()
for stop in qnoded:TERM qnoded:KILL qpoold:TERM; do
	daemon=${stop%:*} sig=${stop#*:}
	for ((r = 0; r < rounds; r++)); do
		point=${points[r % ${#points[@]}]}
		ids=()
		for ((b = 0; b < burst; b++)); do
			ids+=("$(job_script | as qpuser1 qsub -N "ls$r")") || fail qsub
		done
		all+=("${ids[@]}")
		at "$point" "${ids[0]}"
		stop "$daemon" "$sig"
		what="jobs ${ids[*]}, $daemon SIG$sig at $point of ${ids[0]}"
		fenced "$what, while it is away"
		restart "$daemon"
		fenced "$what, after its restart"
		for id in "${ids[@]}"; do
			# Either it runs (adopted, or started again) or it waits.
			qp_wait "$id" running queued
			if [ "$(qp_state "$id")" = running ]; then
				qp_wait_file "$w/ran.$id"
				fenced "$what, $id running after the restart"
			fi
			note "job $id: $daemon SIG$sig at $point of ${ids[0]}: $(qp_state "$id"), started $(wc -l < "$w/ran.$id" 2>/dev/null || echo 0) times"
		done
		for id in "${ids[@]}"; do touch "$w/go.$id"; done
		for id in "${ids[@]}"; do
			qp_wait "$id" completed --timeout 60
			[ "$(qp_field "$id" Exit_status)" = 0 ] ||
				fail "job $id ($what): exit status '$(qp_field "$id" Exit_status)'"
			n=$(wc -l < "$w/ran.$id")
			[ "$n" = 1 ] || fail "job $id ($what) started $n times"
		done
		fenced "$what, after their end"
	done
done

# The launcher lags behind its qnoded (a loaded host): qnoded is killed
# while its request waits, unread, in the launcher's socket (the
# launcher stopped meanwhile). The next qnoded finds the job's spec and
# neither wrapper nor result: the job never started and goes back to the
# queue, and runs once; the old launcher, going on afterwards, must not
# start a second wrapper of it.
launcher=$(grep -o 'resident launcher: pid [0-9]*' "$QP_T/qnoded-n1.log" | tail -n 1 | awk '{print $4}')
[ -n "$launcher" ] || fail "no resident launcher in qnoded's log"
launcher_cont() { kill -CONT "$launcher" 2>/dev/null; }
QP_ATEXIT+=(launcher_cont)
kill -STOP "$launcher"
id=$(job_script | as qpuser1 qsub -N lag) || fail qsub
all+=("$id")
queued=""
for ((i = 0; i < 600; i++)); do
	queued=$(ss -x -p 2>/dev/null | awk -v p="pid=$launcher," 'index($0, p) && $3 > 0 { print $3 }')
	[ -n "$queued" ] && break
	sleep 0.05
done
[ -n "$queued" ] || fail "job $id's launch request never reached the stopped launcher $launcher"
stop qnoded KILL
fenced "job $id, qnoded SIGKILL with its launch request queued in the stopped launcher"
restart qnoded
qp_wait "$id" running queued
qp_wait_file "$w/ran.$id"
launcher_cont
for ((i = 0; i < 200; i++)); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.05; done
kill -0 "$launcher" 2>/dev/null && fail "the old launcher $launcher did not end after its qnoded"
fenced "job $id, the old launcher gone"
n=$(pgrep -fc "gded --spec $jobs_dir/$id.json")
[ "$n" = 1 ] || fail "job $id has $n wrappers once the old launcher went on"
note "job $id: launch queued in a stopped launcher, qnoded SIGKILL: $(qp_state "$id"), $(qp_field "$id" comment)"
touch "$w/go.$id"
qp_wait "$id" completed --timeout 60
[ "$(qp_field "$id" Exit_status)" = 0 ] || fail "job $id (launcher lag): exit status '$(qp_field "$id" Exit_status)'"
n=$(wc -l < "$w/ran.$id")
[ "$n" = 1 ] || fail "job $id (launcher lag) started $n times"

note "nothing of the ${#all[@]} jobs is left"
left=""
for ((i = 0; i < 200; i++)); do
	left=$(find "$jobs_dir" -mindepth 1 -maxdepth 1 ! -name '.spare.*' -printf '%f ' 2>/dev/null)
	[ -z "$left" ] && break
	sleep 0.05
done
[ -z "$left" ] || fail "files left in the jobs directory: $left"
pgrep -f "gded --spec $jobs_dir/" >/dev/null && fail "a gded of the pool is left: $(pgrep -af "gded --spec $jobs_dir/")"
out=$(python3 "$QP_T/fence.py" "$w" "$QP_CG_PARENT" "$uid1")
[ -z "$out" ] || fail "job processes left: $out"
groups=$(find /sys/fs/cgroup -mindepth 3 -maxdepth 8 -type d -path "*/$QP_CG_PARENT/n1/job.*" 2>/dev/null)
[ -z "$groups" ] || fail "job groups left: $groups"
# Last, the pool torn down under launches as a bench's cleanup does
# (bench/lib.sh): both daemons stopped, then its groups emptied and
# removed (tests/cgroups.sh). A wrapper whose groups went before its job
# joined them must end it, not run it unfenced.
for ((r = 0; r < rounds; r++)); do
	ids=()
	for ((b = 0; b < burst; b++)); do
		ids+=("$(job_script | as qpuser1 qsub -N "down$r")") || fail qsub
	done
	at "${points[r % ${#points[@]}]}" "${ids[0]}"
	stop qnoded TERM
	stop qpoold TERM
	qp_cgroups_remove
	for ((i = 0; i < 200; i++)); do
		fenced "jobs ${ids[*]}, the pool torn down at ${points[r % ${#points[@]}]} of ${ids[0]}"
		[ -z "$(python3 "$QP_T/fence.py" "$w" "$QP_CG_PARENT" "$uid1")" ] &&
			! pgrep -f "gded --spec $jobs_dir/" >/dev/null && break
		sleep 0.05
	done
	out=$(python3 "$QP_T/fence.py" "$w" "$QP_CG_PARENT" "$uid1")
	[ -z "$out" ] || fail "job processes outlive their pool's teardown: $out"
	pgrep -f "gded --spec $jobs_dir/" >/dev/null &&
		fail "a gded outlives its pool's teardown: $(pgrep -af "gded --spec $jobs_dir/")"
	restart qpoold
	restart qnoded
	# Their records are not the point here: out of the way of the next round.
	"$QP_BIN/qdel" "${ids[@]}" >/dev/null 2>&1
	for id in "${ids[@]}"; do qp_wait "$id" completed failed cancelled queued held; done
	"$QP_BIN/qdel" "${ids[@]}" >/dev/null 2>&1
done

echo "launch stops ok: ${#all[@]} jobs, each ran once, fenced; $rounds pool teardowns mid-launch left nothing"
