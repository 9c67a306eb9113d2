#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What one job's gded buffers of its tasks' stdin is bounded for the job,
# not per task (gded(8), "Control socket"): a two-node job on one host whose
# sister share has mem=128mb starts 300 tasks there with qpool-rsh, each
# fed /dev/zero on its stdin and never reading it. The sister's gded
# (root, outside the job's memory group) keeps its peak RSS (VmHWM) far
# below what 300 windows of 1 MiB let it hold before (issue 29: ~260 MiB;
# here it passed 64 MiB and grew on): the senders are held instead. A task that does read its stdin still gets all of it
# meanwhile, byte for byte; an agent that ignores its window has its
# task killed by qnoded before gded holds what it sent, and 30 more such
# agents cost qnoded's log at most 10 lines a minute.
. "$(dirname "$0")/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
qp_setup
qp_start_server
qp_start_node na 0
qp_start_node nb 1
N=${QP_STDIN_TASKS:-300}
FLOODS=30
BOUND_KIB=$((64 * 1024))   # the job's bound is 24 MiB of base64 (gded(8)); gded's own pages on top
case ${BUILD:-build} in
*-san)
	# Under ASan every agent is tens of MiB (its shadow and quarantine):
	# 300 do not fit the job's memory, and RSS says nothing of the bound.
	N=${QP_STDIN_TASKS:-40} BOUND_KIB=$((4096 * 1024)) ;;
esac
w=$QP_T/work/qpuser1
head -c 3000000 /dev/urandom > "$w/data"
# An agent that ignores its window: task.start, then 4 MiB of task.in
# at once; what it hears back.
cat > "$w/flood.py" <<'PY'
import base64, json, os, socket, struct
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(os.environ["QPOOL_TASK_SOCKET"])
s.settimeout(60)
def send(o):
    b = json.dumps(o).encode()
    s.sendall(struct.pack(">I", len(b)) + b)
buf = b""
def frame():
    global buf
    while len(buf) < 4 or len(buf) < 4 + struct.unpack(">I", buf[:4])[0]:
        d = s.recv(65536)
        if not d:
            return None
        buf += d
    n = struct.unpack(">I", buf[:4])[0]
    m = json.loads(buf[4:4 + n])
    buf = buf[4 + n:]
    return m
send({"op": "task.start", "id": 1, "host": "nb", "argv": ["sleep", "1000"], "cwd": "/", "env": {}, "stdin": True})
r = frame()
assert r and r.get("ok"), r
chunk = base64.b64encode(b"x" * 49152).decode()
try:
    for _ in range(64):
        send({"op": "task.in", "data": chunk})
except OSError:
    pass
while True:
    m = frame()
    if m is None:
        print("closed")
        break
    if m.get("op") == "task.exit":
        print("exit signal=%s error=%s" % (m.get("signal"), m.get("error")))
        break
PY
chmod 644 "$w/data" "$w/flood.py"

id=$(as qpuser1 qsub -N sb <<JOB
#PBS -l select=1:ncpus=1:mem=1gb+1:ncpus=1:mem=128mb
cd "\$PBS_O_WORKDIR"
for i in \$(seq $N); do qpool-rsh nb sleep 1000 < /dev/zero > /dev/null 2>&1 & done
while [ ! -e go ]; do sleep 0.2; done
qpool-rsh nb md5sum < data > sum.out 2> sum.err; echo "sum=\$?"
touch summed
python3 flood.py > flood.out 2>&1; echo "flood=\$?"
touch flooded
while [ ! -e go2 ] ; do sleep 0.2; done
pids=
for i in \$(seq $FLOODS); do python3 flood.py > flood-\$i.out 2>&1 & pids="\$pids \$!"; done
wait \$pids
touch flooded2
wait
JOB
) || fail "qsub"
qp_wait "$id" running
gded=$(qp_wait_gded "$id" nb)
echo "sister gded: pid $gded"

# All N tasks run on nb: sleep processes, children of that gded.
for ((i = 0; i < 1200; i++)); do
	n=$(pgrep -c -P "$gded" -x sleep)
	[ "$n" -ge "$N" ] && break
	sleep 0.1
done
[ "$n" -ge "$N" ] || fail "only $n of $N tasks started on nb"

# The senders fill what gded grants them, then wait: its RSS grows no
# more (the same for 3 looks 0.5 s apart, within 2 minutes). Past the
# bound, it failed already.
last=0 same=0
for ((i = 0; i < 240 && same < 3; i++)); do
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$gded/status")
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$gded/status")
	[ "$hwm" -lt "$BOUND_KIB" ] || fail "gded holds ${hwm} KiB of $N tasks' stdin (bound ${BOUND_KIB} KiB)"
	if [ "$rss" -le $((last + 256)) ]; then same=$((same + 1)); else same=0; fi
	last=$rss
	sleep 0.5
done
[ "$same" -ge 3 ] || fail "gded's RSS did not settle: $rss KiB"
echo "gded VmHWM ${hwm} KiB with $N tasks fed stdin"

note "a task that reads its stdin still gets all of it"
touch "$w/go"
for ((i = 0; i < 1200; i++)); do [ -e "$w/summed" ] && break; sleep 0.1; done
[ -e "$w/summed" ] || fail "the reading task did not end: $(cat "$w/sum.err" 2>/dev/null)"
want=$(md5sum < "$w/data")
[ "$(cat "$w/sum.out")" = "$want" ] || fail "the reading task got other bytes: $(cat "$w/sum.out") $(cat "$w/sum.err")"
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$gded/status")
[ "$hwm" -lt "$BOUND_KIB" ] || fail "gded holds ${hwm} KiB (bound ${BOUND_KIB} KiB)"

note "an agent that sends past its window has its task killed, and gded holds none of it"
for ((i = 0; i < 1200; i++)); do [ -e "$w/flooded" ] && break; sleep 0.1; done
[ -e "$w/flooded" ] || fail "the flooding agent did not end"
cat "$w/flood.out"
grep -qx "exit signal=9 error=stdin sent past its window: the task is killed" "$w/flood.out" ||
	fail "the flooding agent was not ended: $(cat "$w/flood.out")"
for ((i = 0; i < 200; i++)); do
	[ "$(pgrep -c -P "$gded" -x sleep)" -le "$N" ] && break
	sleep 0.1
done
[ "$(pgrep -c -P "$gded" -x sleep)" -le "$N" ] || fail "the flooding agent's task still runs"
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$gded/status")
[ "$hwm" -lt "$BOUND_KIB" ] || fail "gded holds ${hwm} KiB after a flood (bound ${BOUND_KIB} KiB)"

note "agents that send past their window are logged 10 a minute per uid, not one line each"
touch "$w/go2"
for ((i = 0; i < 1200; i++)); do [ -e "$w/flooded2" ] && break; sleep 0.1; done
[ -e "$w/flooded2" ] || fail "the $FLOODS flooding agents did not end"
for ((i = 1; i <= FLOODS; i++)); do
	grep -qx "exit signal=9 error=stdin sent past its window: the task is killed" "$w/flood-$i.out" ||
		fail "flooding agent $i was not ended: $(cat "$w/flood-$i.out")"
done
# 1 + FLOODS ended within a few seconds: at most two minutes' 10 lines
# (one line each before).
lines=$(grep -c "stdin past its window" "$QP_T/qnoded-na.log")
echo "$lines lines for $((FLOODS + 1)) agents past their window"
[ "$lines" -le 20 ] || fail "$lines log lines for $((FLOODS + 1)) agents past their window"

as qpuser1 qdel "$id" || fail "qdel"
qp_wait "$id" cancelled --timeout 120
echo "PASS"
