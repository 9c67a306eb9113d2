#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A job whose start blocks before exec (here: its working directory on a
# FUSE mount that never answers, like a hung NFS server) is still ended
# by qdel and by its walltime, and its CPUs come back.
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
# for the mount (state D or S, not yet exec'd: still named gded).
qp_blocked() {
	local gded child i
	for ((i = 0; i < 200; i++)); do
		gded=$(pgrep -o -f "gded --spec $QP_T/state/nodes/n1/jobs/$1.json") &&
			child=$(pgrep -P "$gded") && [ -n "$child" ] &&
			[ "$(ps -o comm= -p "$child")" = gded ] && return 0
		sleep 0.05
	done
	fail "job $1 did not start blocking"
}

note "qdel of a job blocked before exec"
"$QP_BIN/qrls" "$cancel" || fail "qrls"
qp_wait "$cancel" running
qp_blocked "$cancel"
as qpuser1 qdel "$cancel" || fail "qdel"
qp_wait "$cancel" cancelled --timeout 20

note "walltime of a job blocked before exec"
"$QP_BIN/qrls" "$wall" || fail "qrls"
qp_wait "$wall" running
qp_blocked "$wall"
qp_wait "$wall" timeout --timeout 20

note "the node's CPUs are free again"
id=$(as qpuser1 qsub -l ncpus=2 <<<'true') || fail "qsub after"
qp_wait "$id" completed
echo "start hang ok"
