#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A job whose start blocks before exec (here: its working directory on a
# FUSE mount that never answers, like a hung NFS server) is still ended
# by qdel and by its walltime, and its CPUs come back. Its child, which
# shares gded's memory until the exec, gives the user no way into it.
. "$(dirname "$0")/lib.sh"
[ -c /dev/fuse ] || skip "no /dev/fuse"
qp_setup
qp_start_server
qp_start_node n1

w=$QP_T/work/qpuser1
hang=$QP_T/hang
mkdir -m 755 "$hang"

# submit_held NAME [qsub args]: a held job whose working directory is
# $hang (qsub takes its own, so it is submitted before the mount).
submit_held() {
	local name=$1; shift
	qp_seqid env -C "$hang" runuser -u qpuser1 -- env QPOOL_CONF="$QPOOL_CONF" \
		PATH="$QP_BIN:/usr/bin:/bin" qsub -h -N "$name" -o "$w/$name.out" -e "$w/$name.err" "$@" <<<'echo ran'
}
cancel=$(submit_held cancel) || fail "qsub cancel"
wall=$(submit_held wall -l walltime=00:00:02) || fail "qsub wall"

# A FUSE mount whose server never answers, not even INIT: every lookup
# under it waits (killably) for good. Unmounted when the holder stops.
cat > "$QP_T/fuse-hang.py" <<'PY'
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
mnt, flag = sys.argv[1].encode(), sys.argv[2]
fd = os.open("/dev/fuse", os.O_RDWR)
opts = ("fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other" % fd).encode()
if libc.mount(b"qpool-hang", mnt, b"fuse", 0, opts) != 0:
    print("mount: %s" % os.strerror(ctypes.get_errno()), file=sys.stderr)
    sys.exit(1)
def bye(*_):
    libc.umount2(mnt, 2)   # MNT_DETACH; closing fd then aborts the waiters
    os._exit(0)
signal.signal(signal.SIGTERM, bye)
open(flag, "w").write("mounted\n")
while True:
    signal.pause()
PY
python3 "$QP_T/fuse-hang.py" "$hang" "$QP_T/mounted" 2> "$QP_T/fuse.log" &
QP_PIDS+=($!)
for ((i = 0; i < 200; i++)); do
	[ -s "$QP_T/mounted" ] && break
	kill -0 "${QP_PIDS[-1]}" 2>/dev/null || skip "cannot mount FUSE here: $(cat "$QP_T/fuse.log")"
	sleep 0.05
done
[ -s "$QP_T/mounted" ] || fail "the FUSE mount did not come up"

# qp_blocked ID: waits until the job's child of gded waits in the kernel
# for the mount (state D or S, not yet exec'd: still named gded), in the
# job's directory as the user by then; prints "GDED CHILD".
qp_blocked() {
	local gded child i
	for ((i = 0; i < 200; i++)); do
		gded=$(pgrep -o -f "gded --spec $QP_T/state/nodes/n1/jobs/$1.json") &&
			child=$(pgrep -P "$gded") && [ -n "$child" ] &&
			[ "$(ps -o comm= -p "$child")" = gded ] &&
			[ "$(stat -c %U "/proc/$child")" = qpuser1 ] && { echo "$gded $child"; return 0; }
		sleep 0.05
	done
	fail "job $1 did not start blocking"
}

# kcmp(2) KCMP_VM: 0 when the two processes share one memory.
same_vm() {
	python3 -c 'import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
sys.exit(0 if libc.syscall(312, int(sys.argv[1]), int(sys.argv[2]), 1, 0, 0) == 0 else 1)' "$1" "$2"
}

# ptrace_attach PID: exit 0 when PTRACE_ATTACH succeeds (then detaches).
ptrace_attach() {
	python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = int(sys.argv[1])
if libc.ptrace(16, pid, None, None) != 0:
    sys.exit(1)
libc.ptrace(17, pid, None, None)' "$1"
}

note "qdel of a job blocked before exec"
"$QP_BIN/qrls" "$cancel" || fail "qrls"
qp_wait "$cancel" running
read -r gded child < <(qp_blocked "$cancel") || exit 1
# The batch script's child shares gded's memory until its exec (spawn.c):
# it is the user's by now, and the user can stop it, but not read or
# write that memory, nor keep gded from ending the job.
same_vm "$gded" "$child" || fail "the job's child $child does not share gded $gded's memory"
for f in maps environ fd/0; do
	as qpuser1 cat "/proc/$child/$f" > /dev/null 2>&1 && fail "the user read /proc/$child/$f"
done
as qpuser1 python3 -c 'import sys' || fail "python3 as qpuser1"
as_full qpuser1 bash -c "$(declare -f ptrace_attach); ptrace_attach $child" && fail "the user could ptrace the child"
as qpuser1 kill -STOP "$child" || fail "the user cannot signal the job's own child"
as qpuser1 qdel "$cancel" || fail "qdel"
qp_wait "$cancel" cancelled --timeout 20

note "walltime of a job blocked before exec"
"$QP_BIN/qrls" "$wall" || fail "qrls"
qp_wait "$wall" running
qp_blocked "$wall" > /dev/null || exit 1
qp_wait "$wall" timeout --timeout 20

note "the node's CPUs are free again"
id=$(as qpuser1 qsub -l ncpus=2 <<<'true') || fail "qsub after"
qp_wait "$id" completed
echo "start hang ok"
