# SPDX-License-Identifier: MIT
# Sourced by tests/integration/t-*.sh: a private pool in a temp dir, real
# users, helpers to wait on job states. Every daemon started here is
# stopped by the EXIT trap, whatever happens.
set -u

QP_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# QP_BIN, when set, names a directory of installed programs (a vm-check
# guest, dist/vm/guest-run); by default the tree's build.
QP_BIN=${QP_BIN:-$QP_TOP/${BUILD:-build}/bin}
QP_USERS="qpuser1 qpuser2 qpuser3"
QP_PIDS=()
QP_ATEXIT=()   # functions the cleanup runs first, each once, whatever happened
QP_ATEXIT_LAST=()   # ... and last, once every daemon is stopped (a store server)

fail() { echo "FAIL: $*" >&2; qp_dump_logs; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
note() { echo "--- $*"; }

[ "$(id -u)" = 0 ] || skip "integration tests need root (real users, cgroups)"
[ -x "$QP_BIN/qpoold" ] || { echo "FAIL: build first: $QP_BIN/qpoold missing" >&2; exit 1; }

qp_users() {  # creates the unprivileged test users if missing
	local u
	# One test at a time (tests run side by side, several runs may share
	# the machine): two `useradd -m` of one name at once both succeed on
	# Debian 12, and the home is left the first one's uid, not the user's.
	exec {QP_USERS_LOCK}> /tmp/.qpool-test-users.lock || fail "the test users' lock"
	flock "$QP_USERS_LOCK" || fail "flock the test users' lock"
	for u in $QP_USERS; do
		id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u" || fail "useradd $u"
	done
	exec {QP_USERS_LOCK}>&-
}

# qp_setup [extra config text]: temp dir, config, users, work dirs.
# QP_NODE_TIMEOUT: the pool's node_timeout (5 s unless a test sets it).
qp_setup() {
	QP_T=$(mktemp -d /tmp/qpool-test.XXXXXX) || fail "mktemp"
	chmod 755 "$QP_T"
	export QPOOL_CONF=$QP_T/qpool.conf
	QP_NODE_PREFIX=t$$
	# The pool's own cgroup parent: no other pool on this host (a real
	# one, another suite) shares its groups. tests/run sets the prefix so
	# no-cgroup-left finds what its own run left.
	QP_CG_PARENT=${QP_CG_PREFIX:-qpool-t}$$
	cat > "$QPOOL_CONF" <<CONF
[server]
state_dir = $QP_T/state
socket = $QP_T/qpoold.sock
heartbeat_interval = 1
node_timeout = ${QP_NODE_TIMEOUT:-5}
kill_grace = 2

[node]
cgroup_parent = $QP_CG_PARENT

[queue batch]
default = yes
ncpus_max = 64
walltime_default = 00:10:00
walltime_max = 24:00:00
mem_default = 0

[queue short]
walltime_default = 00:00:30
walltime_max = 00:05:00
${1:-}
CONF
	# QP_STORE=postgresql: the pool's store on a private PostgreSQL
	# (pg.sh), to run any test on that backend.
	if [ "${QP_STORE:-sqlite}" = postgresql ]; then
		. "$QP_TOP/tests/integration/pg.sh"
		QP_ATEXIT_LAST+=(qp_store_pg_stop)
		trap qp_cleanup EXIT
		QP_STORE_DSN=$(qp_pg_start "$QP_T/store-pg") || fail "the private PostgreSQL did not start"
		printf '[server]\nstore = postgresql\nstore_dsn = %s\n' "$QP_STORE_DSN" >> "$QPOOL_CONF"
	fi
	qp_users
	local u
	for u in $QP_USERS; do
		mkdir -p "$QP_T/work/$u"
		chown "$u:" "$QP_T/work/$u"
	done
	trap qp_cleanup EXIT
}

qp_store_pg_stop() { qp_pg_stop "$QP_T/store-pg"; }

qp_dump_logs() {
	local f
	for f in "${QP_T:-/nonexistent}"/*.log; do
		[ -f "$f" ] || continue
		echo "==== $f (last 30 lines)" >&2
		tail -n 30 "$f" >&2
	done
}

qp_start_server() {
	"$QP_BIN/qpoold" -f "$QPOOL_CONF" >> "$QP_T/qpoold.log" 2>&1 &
	QP_SERVER_PID=$!
	QP_PIDS+=("$QP_SERVER_PID")
	local i
	for i in $(seq 100); do
		[ -S "$QP_T/qpoold.sock" ] && "$QP_BIN/qstat" >/dev/null 2>&1 && return 0
		kill -0 "$QP_SERVER_PID" 2>/dev/null || fail "qpoold died at start"
		sleep 0.05
	done
	fail "qpoold did not come up"
}

# qp_start_sim NAME COUNT [QNODED ARGS...]: one qnoded --simulate COUNT
# presenting NAME-0 .. NAME-(COUNT-1) (e.g. --sim-topology "pack:1 core:4
# pu:1"), its log qnoded-sim.log; waits (bounded) until all are up.
# QP_SIM_PID is its pid.
qp_start_sim() {
	local name=$1 n=$2
	shift 2
	"$QP_BIN/qnoded" -f "$QPOOL_CONF" --simulate "$n" --name "$name" "$@" >> "$QP_T/qnoded-sim.log" 2>&1 &
	QP_SIM_PID=$!
	QP_PIDS+=("$QP_SIM_PID")
	qp_sim_up "$name" "$n"
}
# qp_sim_up NAME COUNT: waits (bounded) until NAME-0 .. are all up (again,
# after a qpoold restart).
qp_sim_up() {
	local i
	for i in $(seq 200); do
		[ "$("$QP_BIN/qstat" --nodes 2>/dev/null | grep -cE "^$1-[0-9]+ +up")" = "$2" ] && return 0
		sleep 0.05
	done
	fail "the $2 simulated nodes $1-* are not up: $("$QP_BIN/qstat" --nodes 2>&1 | head -5)"
}

# qp_start_pair: an active (a) and a standby (b) qpoold on the pool's one
# store, each on its own socket ($QP_T/a.sock, b.sock; their configs
# a.conf, b.conf, their logs qpoold-a.log, qpoold-b.log); the commands
# and nodes list both (`server = A,B`). PID_a and PID_b are their pids;
# returns once a serves. qp_served waits (bounded) for an active.
qp_start_pair() {
	sed "s|^socket = .*|socket = $QP_T/a.sock|" "$QPOOL_CONF" > "$QP_T/a.conf"
	sed "s|^socket = .*|socket = $QP_T/b.sock|" "$QPOOL_CONF" > "$QP_T/b.conf"
	printf '[server]\nserver = %s,%s\n' "$QP_T/a.sock" "$QP_T/b.sock" >> "$QPOOL_CONF"
	qp_start_qpoold a
	qp_served
	qp_start_qpoold b
}
qp_start_qpoold() {  # NAME: qpoold -f $QP_T/NAME.conf, PID_NAME its pid
	"$QP_BIN/qpoold" -f "$QP_T/$1.conf" >> "$QP_T/qpoold-$1.log" 2>&1 &
	QP_PIDS+=("$!")
	eval "PID_$1=$!"
}
qp_served() {
	local i
	for i in $(seq 300); do
		"$QP_BIN/qstat" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	fail "no active qpoold"
}

# qp_start_node NAME [CPUS]: starts qnoded and waits until qpoold lists it up.
qp_start_node() {
	local name=$1 cpus=${2:-}
	local args=(-f "$QPOOL_CONF" --name "$name")
	[ -n "$cpus" ] && args+=(--cpus "$cpus")
	"$QP_BIN/qnoded" "${args[@]}" >> "$QP_T/qnoded-$name.log" 2>&1 &
	qp_node_wait "$name" $! 100 "qnoded $name"
}

# qp_start_node_apart NAME: qp_start_node with the node's state (its job
# files, their results) outside qpoold's state_dir, for a test that fills
# or fails qpoold's store alone.
qp_start_node_apart() {
	sed "s|^state_dir = .*|state_dir = $QP_T/nodestate|" "$QPOOL_CONF" > "$QP_T/node.conf"
	QPOOL_CONF=$QP_T/node.conf qp_start_node "$@"
}

# qp_node_wait NAME PID TRIES LABEL: keeps PID as NAME's qnoded (QP_PIDS,
# qp_node_pid) and waits, TRIES times 0.05 s, until qpoold lists NAME up;
# fails, saying LABEL, if it dies first or never registers.
qp_node_wait() {
	local name=$1 pid=$2 i
	QP_PIDS+=("$pid")
	eval "QP_NODE_PID_${name//[^a-zA-Z0-9_]/_}=$pid"
	for ((i = 0; i < $3; i++)); do
		"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^${name}[[:space:]].*up" && return 0
		kill -0 "$pid" 2>/dev/null || fail "$4 died at start"
		sleep 0.05
	done
	fail "$4 did not register"
}

# qp_free_port: a TCP port nobody listens on now, on 127.0.0.1.
# qp_sanitized BIN: true when BIN is an ASan build. Its symbol table, not
# the dynamic one: gcc's runtime linked in (the Makefile's SAN_LD) exports
# no undefined __asan_init, and ldd names no libasan.
qp_sanitized() { nm "$1" 2>/dev/null | grep -q ' __asan_init$'; }

qp_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

qp_node_pid() { local v="QP_NODE_PID_${1//[^a-zA-Z0-9_]/_}"; echo "${!v}"; }

# Stops one daemon by pid with SIGTERM and waits for it.
qp_stop() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || return 0
	for i in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	echo "warning: pid $pid needed SIGKILL" >&2
}

# The pool's jobs as the server has them (for cleanup): a line of the
# running jobs' ids, then a line of the queues that hold queued jobs.
jobs_left() {
	"$QP_BIN/qstat" --json 2>/dev/null | python3 -c '
import json, sys
try:
    jobs = json.load(sys.stdin)
except ValueError:
    jobs = []
print(" ".join(str(j["jobid"]) for j in jobs if j.get("state") in ("running", "exiting")))
print(" ".join(sorted({j["queue"] for j in jobs if j.get("state") == "queued"})))
' 2>/dev/null
}
running_ids() { jobs_left | head -n 1; }

qp_cleanup() {
	local rc=$? i ids queues q f
	for f in $(printf '%s\n' "${QP_ATEXIT[@]}" | sort -u); do "$f"; done
	# Jobs first. A job dispatched a moment ago may have no gded yet: ask
	# qpoold to cancel every running job and wait (bounded) until none
	# runs, so a test that ends mid-launch leaves no job behind. The
	# queues that still hold jobs are stopped before: else their jobs are
	# dispatched as fast as the running ones are cancelled (t-pages'
	# 11,800 onto its 5,000 simulated nodes held this wait to its bound).
	if [ -n "${QP_SERVER_PID:-}" ] && kill -0 "$QP_SERVER_PID" 2>/dev/null; then
		{ read -r ids; read -r queues; } < <(jobs_left)
		if [ -n "$queues" ]; then
			for q in $queues; do "$QP_BIN/qmgr" stop "$q" cleanup >/dev/null 2>&1; done
			ids=$(running_ids)   # with what was dispatched meanwhile
		fi
		if [ -n "$ids" ]; then
			# shellcheck disable=SC2086 # one word per id
			"$QP_BIN/qdel" $ids >/dev/null 2>&1
			for i in $(seq 100); do
				ids=$(running_ids)
				[ -z "$ids" ] && break
				sleep 0.05
			done
			[ -n "$ids" ] && echo "warning: cleanup: jobs still running after qdel: $ids" >&2
		fi
	fi
	# Then each gded of this pool that is left (SIGTERM: it kills its job
	# and removes its cgroup; SIGKILL only for what outlives the grace), so
	# every qnoded then stops with no job left and removes its node groups.
	if pkill -TERM -f "gded --spec $QP_T/" 2>/dev/null; then
		for i in $(seq 100); do
			pgrep -f "gded --spec $QP_T/" >/dev/null || break
			sleep 0.05
		done
		pkill -KILL -f "gded --spec $QP_T/" 2>/dev/null
		sleep 0.2   # qnoded notices its wrappers are gone
	fi
	# Then nodes (a stopped one is continued so it can stop), then the server.
	for ((i = ${#QP_PIDS[@]} - 1; i >= 0; i--)); do
		kill -CONT "${QP_PIDS[$i]}" 2>/dev/null
		qp_stop "${QP_PIDS[$i]}"
	done
	for f in $(printf '%s\n' "${QP_ATEXIT_LAST[@]}" | sort -u); do "$f"; done
	# Commands the test ran as a user in the background (`as USER qstat
	# --follow &`: $! is the subshell, not runuser's child) and that
	# still run: found by this test's own QPOOL_CONF (under its temp
	# dir, which no other test has), never by a name.
	local pid
	for pid in /proc/[0-9]*; do
		pid=${pid#/proc/}
		[ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ] || [ "$(stat -c %u "/proc/$pid" 2>/dev/null)" = 0 ] && continue
		# The braces: a process gone since the glob fails the redirect itself.
		{ tr '\0' '\n' < "/proc/$pid/environ"; } 2>/dev/null | grep -q "^QPOOL_CONF=$QP_T/" && kill -KILL "$pid" 2>/dev/null
	done
	# The pool's groups must be gone with it; whatever is left is reported
	# (a failure) and removed, its processes killed, so no run leaves any.
	local left
	left=$(qp_cgroups_left)
	if [ -n "$left" ]; then
		echo "cgroups of $QP_CG_PARENT left behind:" >&2; echo "$left" >&2
		[ $rc -eq 0 ] && rc=1
		qp_cgroups_remove
	fi
	# A jobs tmpfs a qnoded left mounted (the state mount goes below).
	mounts_remove "$QP_T" "${QP_STATE_MNT:-}"
	if { [ $rc -eq 0 ] || [ $rc -eq 77 ]; } && [ -z "${QP_KEEP:-}" ]; then
		rm -rf "$QP_T"
	else
		echo "test files kept in $QP_T" >&2
	fi
	exit $rc
}

# shellcheck source=tests/cgroups.sh
. "$QP_TOP/tests/cgroups.sh"

# The pool's cgroup directories still present (its parent, and
# $QP_CG_PARENT-* of a second pool a test starts), deepest first.
qp_cgroups_left() {
	[ -z "${QP_CG_PARENT:-}" ] || cgroups_left 2 "$QP_CG_PARENT" "$QP_CG_PARENT-*"
}

# Kills what runs in the pool's groups and removes them, deepest first.
qp_cgroups_remove() {
	[ -z "${QP_CG_PARENT:-}" ] || cgroups_remove 2 "$QP_CG_PARENT" "$QP_CG_PARENT-*"
}

# as_full USER cmd...: runs a command as USER in that user's work dir, with
# the pool's config.
as_full() {
	local u=$1; shift
	(cd "$QP_T/work/$u" && runuser -u "$u" -- env QPOOL_CONF="$QPOOL_CONF" PATH="$QP_BIN:/usr/bin:/bin" "$@")
}

# qp_seqid cmd...: runs cmd (a qsub) and prints what it printed up to the
# first dot: the sequence number of "12.server", which names the job's
# default output files (name.o12) as in PBS. Keeps cmd's exit status.
qp_seqid() {
	local out rc
	out=$("$@"); rc=$?
	[ -z "$out" ] || printf '%s\n' "${out%%.*}"
	return $rc
}

# as USER cmd...: as_full, with qsub's printed id cut to its number (the
# tests name output files by it; t-pbs-* check the full form).
as() {
	if [ "${2:-}" = qsub ]; then qp_seqid as_full "$@"; else as_full "$@"; fi
}

# qp_long_job DIR: as qpuser1, a job named long that notes its start in
# DIR/long.ran and runs until DIR/go appears (120 s at most); returns once
# it runs and has started, its id in QP_LONG. The failover tests' job
# that must live through a fault.
qp_long_job() {
	local i
	QP_LONG=$(as qpuser1 qsub -N long <<JOB
echo ran >> $1/long.ran
for i in \$(seq 1200); do [ -e $1/go ] && exit 0; sleep 0.1; done
exit 1
JOB
) || fail "qsub long"
	qp_wait "$QP_LONG" running
	for ((i = 0; i < 600; i++)); do [ -s "$1/long.ran" ] && break; sleep 0.05; done
}

# qp_state JOBID: the job's state word (qstat -f's qpool_state; job_state
# is PBS's letter).
qp_state() {
	"$QP_BIN/qstat" -x -f "$1" 2>/dev/null | awk -F' = ' '$1 ~ /^ *qpool_state$/ {print $2; exit}'
}

# qp_field JOBID KEY: a field of qstat -f; of PBS's exec_host ("n1/0*2")
# and Job_Owner ("user@server") the node and the user.
qp_field() {
	"$QP_BIN/qstat" -x -f "$1" 2>/dev/null | awk -F' = ' -v k="$2" '{ sub(/^ +/, "", $1) } $1 == k {
		if (k == "exec_host") sub(/\/.*/, "", $2)
		if (k == "Job_Owner") sub(/@.*/, "", $2)
		print $2; exit }'
}

# qp_wait JOBID STATE... [--timeout S]: waits until the job is in one of the states.
qp_wait() {
	local id=$1; shift
	local timeout=30 states=() s st i
	while [ $# -gt 0 ]; do
		if [ "$1" = --timeout ]; then timeout=$2; shift 2; else states+=("$1"); shift; fi
	done
	for ((i = 0; i < timeout * 20; i++)); do
		st=$(qp_state "$id")
		for s in "${states[@]}"; do [ "$st" = "$s" ] && return 0; done
		sleep 0.05
	done
	fail "job $id is '$st' after ${timeout}s, expected ${states[*]}"
}

# qp_wait_gded JOBID [NODE [TIMEOUT]]: waits for the job's gded to run and
# prints its pid. `running` is set at dispatch, before the wrapper exists:
# a test that looks at gded must wait for gded itself.
qp_wait_gded() {
	local spec="$QP_T/state/nodes/${2:-n1}/jobs/$1.json" i pid
	for ((i = 0; i < ${3:-30} * 20; i++)); do
		pid=$(pgrep -f "gded --spec $spec" | head -n 1)
		[ -n "$pid" ] && { echo "$pid"; return 0; }
		sleep 0.05
	done
	fail "no gded for job $1 after ${3:-30}s"
}

# qp_wait_file PATH [TIMEOUT]: waits for a file to exist and be non-empty.
qp_wait_file() {
	local i
	for ((i = 0; i < ${2:-30} * 20; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	fail "file $1 did not appear"
}

# qp_state_tmpfs: the pool's state directory on a 1 MiB tmpfs, to fill
# (skips where none can be mounted); QP_STATE_MNT names it. At exit the
# daemons stop, this test's gded are killed, then it is unmounted, then
# qp_cleanup runs. The name is global on purpose: a failure inside a
# function with a local of the same name would hide a script's own.
qp_state_tmpfs() {
	grep -qw tmpfs /proc/filesystems || skip "no tmpfs"
	mkdir -p "$QP_T/state"
	mount -t tmpfs -o size=1m,mode=0711 tmpfs "$QP_T/state" || skip "cannot mount a tmpfs"
	QP_STATE_MNT=$QP_T/state
	trap qp_state_tmpfs_cleanup EXIT
}
qp_state_tmpfs_cleanup() {
	local rc=$? i
	for ((i = ${#QP_PIDS[@]} - 1; i >= 0; i--)); do qp_stop "${QP_PIDS[$i]}"; done
	QP_PIDS=()
	pkill -KILL -f "gded --spec $QP_T/" 2>/dev/null
	[ -n "${QP_STATE_MNT:-}" ] && { umount "$QP_STATE_MNT" || umount -l "$QP_STATE_MNT"; }
	(exit $rc)
	qp_cleanup
}

# qp_disk_throttle: qpoold's writes to the whole disk under the state
# directory made slow for real, by cgroup v1's blkio throttle (skips where
# there is none). qp_disk_hold BPS moves qpoold into a group of its own
# whose writes to that disk go at BPS bytes a second; qp_disk_unhold lifts
# the limit (what it held goes at once) and moves qpoold back. At exit the
# group is lifted, emptied and removed.
qp_disk_throttle() {
	local dev sys
	QP_BLK=/sys/fs/cgroup/blkio
	[ -w "$QP_BLK/blkio.throttle.write_bps_device" ] || skip "no cgroup v1 blkio throttling"
	# The whole disk: throttling takes no partition.
	mkdir -p "$QP_T/state"
	dev=$(stat -c %d "$QP_T/state")
	sys=/sys/dev/block/$(( (dev >> 8) & 0xfff )):$(( (dev & 0xff) | ((dev >> 12) & 0xfff00) ))
	[ -e "$sys/dev" ] || skip "the state directory is not on a block device"
	[ -e "$sys/partition" ] && sys=$sys/..
	QP_DISK=$(cat "$sys/dev")
	QP_DISK_CG=$QP_BLK/qpool-test-disk-$$
	mkdir "$QP_DISK_CG" || fail "cannot make $QP_DISK_CG"
	QP_ATEXIT+=(qp_disk_throttle_cleanup)
}
qp_disk_throttle_cleanup() {
	local pid
	echo "$QP_DISK 0" > "$QP_DISK_CG/blkio.throttle.write_bps_device" 2>/dev/null
	for pid in $(cat "$QP_DISK_CG/cgroup.procs" 2>/dev/null); do echo "$pid" > "$QP_BLK/cgroup.procs"; done
	rmdir "$QP_DISK_CG" 2>/dev/null
}
qp_disk_hold() {
	echo "$QP_DISK $1" > "$QP_DISK_CG/blkio.throttle.write_bps_device" || fail "cannot throttle $QP_DISK"
	echo "$QP_SERVER_PID" > "$QP_DISK_CG/cgroup.procs" || fail "cannot move qpoold into $QP_DISK_CG"
}
qp_disk_unhold() {
	echo "$QP_DISK 0" > "$QP_DISK_CG/blkio.throttle.write_bps_device" || fail "cannot lift the throttle"
	if kill -0 "$QP_SERVER_PID" 2>/dev/null; then echo "$QP_SERVER_PID" > "$QP_BLK/cgroup.procs"; fi
}

# qp_frozen_state JOBID: the freezer state of the job's own cgroup:
# FROZEN / THAWED (v1's freezer.state), 1 / 0 (v2's cgroup.events);
# nothing when the group is not found.
qp_frozen_state() {
	local d
	d=$(find /sys/fs/cgroup/freezer/"$QP_CG_PARENT" -type d -name "job.$1" 2>/dev/null | head -n 1)
	if [ -n "$d" ]; then tr -d '\n' < "$d/freezer.state"; return; fi
	# v2: the pool's parent is where the host put it (under a systemd
	# unit's delegated group in the guests, not at the top).
	d=$(find /sys/fs/cgroup -mindepth 2 -maxdepth 8 -type d -path "*/$QP_CG_PARENT*/job.$1" 2>/dev/null | head -n 1)
	[ -n "$d" ] && awk '$1 == "frozen" {print $2}' "$d/cgroup.events"
}

# qp_ticker FILE: writes a job script to FILE that appends 40 lines
# "tick N TIME" to $LOG, 0.1 s of its own running time apart, then "done
# TIME": a job whose log shows when it ran (and when it was frozen).
qp_ticker() {
	cat > "$1" <<'JOB'
#!/bin/bash
for i in $(seq 40); do echo "tick $i $(date +%s.%N)" >> "$LOG"; sleep 0.1; done
echo "done $(date +%s.%N)" >> "$LOG"
JOB
	chmod +x "$1"
}

# qp_ticks_outside LOG START END WHAT: fails unless qp_ticker's LOG has its
# 40 ticks and done, none while another job ran (from the time in file
# START to the one in END; WHAT names it) and one after it.
qp_ticks_outside() {
	python3 - "$1" "$2" "$3" "$4" <<'PY' || fail "$4: the ticker's log: $(cat "$1")"
import sys
lines = [l.split() for l in open(sys.argv[1])]
us, ue = float(open(sys.argv[2]).read()), float(open(sys.argv[3]).read())
ticks = [float(l[2]) for l in lines if l[0] == "tick"]
assert len(ticks) == 40 and lines[-1][0] == "done", "not 40 ticks and done"
inside = [t for t in ticks if us + 0.3 < t < ue - 0.3]
assert not inside, f"ticks while {sys.argv[4]} ran: {inside}"
assert any(t > ue for t in ticks), f"no tick after {sys.argv[4]}"
PY
}

# qp_refuse WANT cmd...: fails unless cmd fails with one line of error
# holding WANT (the "bad input" rule: a clear one-line error, non-zero).
qp_refuse() {
	local want=$1 out rc; shift
	out=$("$@" 2>&1 >/dev/null); rc=$?
	[ $rc -ne 0 ] || fail "'$*' succeeded"
	[ "$(echo "$out" | wc -l)" = 1 ] || fail "'$*': not one line: $out"
	echo "$out" | grep -qF -- "$want" || fail "'$*' said '$out', not '$want'"
}

# qp_wait_reason JOBID TEXT: waits (bounded) until the job's comment (its
# waiting reason) holds TEXT.
qp_wait_reason() {
	local i
	for i in $(seq 100); do
		qp_field "$1" comment | grep -qF "$2" && return 0
		sleep 0.1
	done
	fail "job $1 is $(qp_state "$1"): '$(qp_field "$1" comment)', not '$2'"
}

# qp_order QUEUE: job ids of QUEUE's jobs (finished too) in the order they
# were dispatched, one per line, as "id owner".
qp_dispatch_order() {
	"$QP_BIN/qstat" -x --json | python3 -c '
import json, sys
q = sys.argv[1]
jobs = [j for j in json.load(sys.stdin) if j["queue"] == q and "dispatch" in j["times"]]
for j in sorted(jobs, key=lambda j: (j["times"]["dispatch"], j["jobid"])):
    print(j["jobid"], j["owner"])
' "$1"
}

# qp_gpu_topology FILE: a synthetic hwloc topology in FILE for tests of
# GPU locality: two packages, each one NUMA node, one PU (this 2-CPU
# host's numbering) and one GPU (nvidia0 on NUMA 0, nvidia1 on NUMA 1).
qp_gpu_topology() {
	_qp_gpu_pkg() {  # PACKAGE: a package with its NUMA node, one PU and one GPU
		local p=$1 m=$((1 << $1))
		cat <<XML
    <object type="Package" os_index="$p" cpuset="$m" complete_cpuset="$m" nodeset="$m" complete_nodeset="$m">
      <object type="NUMANode" os_index="$p" cpuset="$m" complete_cpuset="$m" nodeset="$m" complete_nodeset="$m" local_memory="1073741824"/>
      <object type="Core" os_index="$p" cpuset="$m" complete_cpuset="$m" nodeset="$m" complete_nodeset="$m">
        <object type="PU" os_index="$p" cpuset="$m" complete_cpuset="$m" nodeset="$m" complete_nodeset="$m"/>
      </object>
      <object type="PCIDev" pci_busid="0000:0$p:00.0" pci_type="0302 [10de:1eb8] [10de:12a2] a1" pci_link_speed="0.000000">
        <object type="OSDev" name="nvidia$p" subtype="CUDA" osdev_type="1"/>
      </object>
    </object>
XML
	}
	{
		echo '<?xml version="1.0" encoding="UTF-8"?>'
		echo '<!DOCTYPE topology SYSTEM "hwloc2.dtd">'
		echo '<topology version="2.0">'
		echo '  <object type="Machine" os_index="0" cpuset="0x3" complete_cpuset="0x3" allowed_cpuset="0x3" nodeset="0x3" complete_nodeset="0x3" allowed_nodeset="0x3">'
		_qp_gpu_pkg 0
		_qp_gpu_pkg 1
		echo '  </object>'
		echo '</topology>'
	} > "$1"
}
