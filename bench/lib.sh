# SPDX-License-Identifier: MIT
# bench/lib.sh: the private pool every benchmark starts; sourced after
# `set -u`. Sets top and bin, and:
#   bench_pool TAG [SERVER_LINE...]  temp dir $T (removed on exit, its logs
#       shown on failure), $QPOOL_CONF with queue batch (jobs_tmpfs
#       = no with JOBS_TMPFS=0, yes with 1), the bench user $u
#       (BENCH_USER, default qpbench) and its $T/work
#   bench_server [QPOOLD]  starts qpoold, waits until it answers (pids[0])
#   bench_node NAME        starts qnoded --name NAME, waits until it is up
#   bench_munged           a private munged in $T and qpoold's listen on
#       127.0.0.1 (before bench_server); sets $tcp (HOST:PORT), or leaves it
#       empty when munge is not installed. Its pid is in $munged_pid.
#   pct P [DECIMALS] < numbers   the P-th percentile
#   bench_stamps           a FIFO $stamps in $T/work the bench user's jobs
#       write their stamps into, held open read-write on $stamps_fd: the
#       bench sleeps in read(2) until a line comes, no poll beside the
#       launch it measures
#   bench_wait IDS...      waits until each job (ids as qsub prints them,
#       an array's 12[]) has ended, told by the event stream (qwait as the
#       bench user; ids from standard input when none are given)
#   cpu_ns PID             PID's run time so far in ns, all its threads
#       (/proc/PID/task/*/schedstat; /proc/PID/stat counts 10 ms ticks)
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$top/${BUILD:-build}/bin
pids=()
# A user's PATH, not root's: runuser keeps its caller's environment and a
# job's PATH is its submitter's, so root's own directories (ten ahead of
# /usr/bin on one machine here, those under /root unreadable to the bench
# user) cost each trivial job that many failed execs in gded's child.
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin

# bench_stop: stops the pool's processes, last started first; $T stays.
bench_stop() {
	local p i
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		p=${pids[$i]}
		kill -TERM "$p" 2>/dev/null && for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	pids=()
}

# shellcheck source=tests/cgroups.sh
. "$top/tests/cgroups.sh"

# The pool's cgroup parent (one per v1 hierarchy; deeper on a v2 host,
# below the holder's delegated group), deepest first, with whatever still
# runs in it: a pool stopped by SIGKILL leaves its kept groups, and a
# bench cut short its jobs' (they would hold, among others, the host's
# real-time budget that t-gded-rt needs).
bench_cgroups_remove() {
	cgroups_remove 6 "qpool-bench$$"
}

bench_cleanup() {
	local rc=$?
	bench_stop
	bench_cgroups_remove
	mounts_remove "$T"   # a jobs tmpfs qnoded left (job files remained)
	[ $rc -ne 0 ] && tail -n 20 "$T"/*.log >&2
	rm -rf "$T"
	exit $rc
}

bench_pool() {
	local tag=$1 line
	shift
	T=$(mktemp -d "/tmp/qpool-$tag.XXXXXX")
	chmod 755 "$T"
	trap bench_cleanup EXIT INT TERM
	export QPOOL_CONF=$T/qpool.conf
	{
		printf '[server]\nstate_dir = %s/state\nsocket = %s/qpoold.sock\n' "$T" "$T"
		for line in "$@"; do printf '%s\n' "$line"; done
		# Its own cgroup parent: a pool (or test suite) running on this
		# host keeps its groups.
		printf '[node]\ncgroup_parent = qpool-bench%d\n' $$
		printf '[queue batch]\ndefault = yes\n'
		# JOBS_TMPFS=0: the node's job files on disk, not on the tmpfs
		# that is the default (qpool.conf(5)); 1: on it.
		case ${JOBS_TMPFS:-} in
		0) printf '[node]\njobs_tmpfs = no\n' ;;
		1) printf '[node]\njobs_tmpfs = yes\n' ;;
		esac
	} > "$QPOOL_CONF"
	u=${BENCH_USER:-qpbench}
	id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u"
	mkdir -p "$T/work"
	chown "$u:" "$T/work"
}

bench_server() {
	"${1:-$bin/qpoold}" 2> "$T/qpoold.log" & pids+=($!)
	for _ in $(seq 100); do "$bin/qstat" >/dev/null 2>&1 && return 0; sleep 0.05; done
	echo "bench: qpoold did not answer" >&2
	return 1
}

bench_node() {
	"$bin/qnoded" --name "$1" 2> "$T/qnoded.log" & pids+=($!)
	for _ in $(seq 100); do "$bin/qstat" --nodes 2>/dev/null | grep -qE "^$1[[:space:]].*up" && return 0; sleep 0.05; done
	echo "bench: node $1 did not come up" >&2
	return 1
}

bench_munged() {
	tcp=""
	command -v munged >/dev/null || return 0
	head -c 1024 /dev/urandom > "$T/munge.key" && chmod 600 "$T/munge.key"
	munged -F --socket="$T/munge.sock" --key-file="$T/munge.key" --pid-file="$T/munge.pid" \
		--log-file="$T/munged.log" --seed-file="$T/munge.seed" 2>> "$T/munged.log" &
	munged_pid=$!
	for _ in $(seq 100); do munge -S "$T/munge.sock" -n >/dev/null 2>&1 && break; sleep 0.05; done
	tcp=127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	printf '[server]\nlisten = %s\nmunge_socket = %s\n' "$tcp" "$T/munge.sock" >> "$QPOOL_CONF"
}

# A measured run's end comes from qwait, which sleeps on its socket until
# the server tells it: a poll of the store every 10 ms (as the benches did
# until 2026-12-02) forks bash, sqlite3 and sleep 100 times a second, 11%
# of this 2-CPU machine's samples in an array's profile, taken from the
# jobs measured; the floor pays no such poll (docs/PERFORMANCE.md). At
# most 4,000 ids a qwait (a watch names at most 4,096), one after another.
bench_wait() {
	if [ $# -gt 0 ]; then printf '%s\n' "$@"; else cat; fi | runuser -u "$u" -- env QPOOL_CONF="$QPOOL_CONF" xargs -r -n 4000 "$bin/qwait" > "$T/qwait.out" 2>&1 ||
		{ echo "bench: qwait: $(tail -n 1 "$T/qwait.out")" >&2; return 1; }
}

# Until 2026-12-02 the benches polled for a stamp's file, forking
# sleep(1) every 5 ms beside the launch they measured (the floor's job
# paid it too).
bench_stamps() {
	stamps=$T/work/stamps.fifo
	mkfifo -m 600 "$stamps" && chown "$u:" "$stamps" || { echo "bench: cannot make $stamps" >&2; exit 1; }
	exec {stamps_fd}<> "$stamps"
}

cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { print s + 0 }'; }

pct() {
	sort -n | awk -v p="$1" -v d="${2:-2}" \
		'{ v[NR] = $1 } END { i = int((NR - 1) * p / 100 + 0.5) + 1; printf("%." d "f", v[i]) }'
}

# EXPR in ms over the jobs of store DB that WHERE selects, each beside
# the job before it on the same CPUs (by dispatch): pe, pr and pd are
# that job's t_exit, t_released and t_dispatch. One value a line.
cpu_gaps() {  # db where expr
	sqlite3 "$1" "SELECT ($3) / 1e6 FROM (SELECT t_dispatch, t_exec, lag(t_exit) OVER w AS pe,
		lag(t_released) OVER w AS pr, lag(t_dispatch) OVER w AS pd FROM jobs WHERE $2
		WINDOW w AS (PARTITION BY cpus ORDER BY t_dispatch)) WHERE pe IS NOT NULL"
}
