#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Remote starts on one host (two qnoded sharing it): qpool-rsh and pbsdsh
# into a one-node job's own node, as its owner, in its cgroup; its output,
# stdin, exit status and signals relayed; and the one-line refusals: a
# process in no job, another user's process in the job's group, a host
# outside the job, a job that has ended.
. "$(dirname "$0")/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
# TMPDIRs under the test's own base: pools side by side on this host all
# run a job 1, 2, ... and name its TMPDIR pbs.ID.SERVER; on a shared
# /var/tmp another pool's would take the name, and this job get another.
qp_setup
mkdir -m 1777 "$QP_T/tmp" || fail "mkdir $QP_T/tmp"
printf '[node]\ntmpdir = %s\n' "$QP_T/tmp" >> "$QPOOL_CONF"
cgroot=/sys/fs/cgroup
if [ -d "$cgroot/memory" ]; then memcg=$cgroot/memory; else memcg=$cgroot; fi
[ -d "$memcg" ] || skip "no memory cgroup hierarchy"
qp_start_server
qp_start_node na 0
qp_start_node nb 1
sock_na=$QP_T/state/nodes/na/task.sock
[ -S "$sock_na" ] || fail "qnoded na made no $sock_na"
[ "$(stat -c %a "$sock_na")" = 666 ] || fail "$sock_na is not mode 0666"

note "a process in no job is refused"
out=$(as qpuser1 env QPOOL_TASK_SOCKET="$sock_na" qpool-rsh na true 2>&1); rc=$?
[ "$rc" = 255 ] || fail "qpool-rsh outside a job exited $rc: $out"
echo "$out" | grep -q "^qpool-rsh: pid [0-9]* is not in a job of node na$" || fail "refusal: $out"
out=$(as qpuser1 env -u QPOOL_TASK_SOCKET qpool-rsh na true 2>&1); rc=$?
[ "$rc" = 255 ] && echo "$out" | grep -q "QPOOL_TASK_SOCKET is not set" || fail "no socket: $rc $out"
out=$(as qpuser1 env QPOOL_TASK_SOCKET="$sock_na" qpool-rsh na 2>&1); rc=$?
[ "$rc" = 255 ] && echo "$out" | grep -q "no COMMAND" || fail "no command: $rc $out"

note "malformed frames on the task socket get one line, and qnoded stays up"
out=$(as qpuser1 python3 - "$sock_na" <<'PY'
import json, socket, struct, sys
def exchange(payload):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sys.argv[1])
    s.sendall(payload)
    h = s.recv(4)
    if len(h) < 4:
        return "closed"
    n = struct.unpack(">I", h)[0]
    d = b""
    while len(d) < n:
        c = s.recv(n - len(d))
        if not c:
            break
        d += c
    return json.loads(d).get("error")
def frame(o):
    d = json.dumps(o).encode()
    return struct.pack(">I", len(d)) + d
print(exchange(struct.pack(">I", 5) + b"nope!"))
print(exchange(struct.pack(">I", 1 << 30)))
print(exchange(frame({"op": "task.in", "id": 1, "data": "aGk="})))
print(exchange(frame({"op": "task.start", "id": 1, "host": "na", "argv": "true"})))
print(exchange(frame({"op": "task.start", "id": 1, "argv": ["true"]})))
PY
) || fail "raw agent: $out"
echo "$out"
[ "$(echo "$out" | grep -c .)" = 5 ] && ! echo "$out" | grep -qx "closed\|None" || fail "a malformed frame got no one-line answer"
echo "$out" | grep -q "first message must be task.start" || fail "no refusal of a first frame that is not task.start"
echo "$out" | grep -q "argv, a non-empty array of strings" || fail "no refusal of a bad argv"
kill -0 "$(qp_node_pid na)" || fail "qnoded na died"

note "a one-node job starts tasks on its own node"
go=$QP_T/work/qpuser1/go
id=$(as qpuser1 qsub -N rsh -l ncpus=1 <<JOB
me=\$(head -n 1 "\$PBS_NODEFILE")
echo "node=\$me"
qpool-rsh "\$me" 'echo out-\$((6*7)); echo err-line >&2; exit 3'; echo "rc=\$?"
echo "cg=\$(qpool-rsh -n -x -l qpuser1 -o BatchMode=yes -p 22 "\$me" cat /proc/self/cgroup | grep -E ':(memory|):/' | head -n 1)"
echo "uid=\$(qpool-rsh "\$me" id -u)"
echo "cpus=\$(qpool-rsh "\$me" grep Cpus_allowed_list /proc/self/status | awk '{print \$2}')"
echo "in=\$(echo piped | qpool-rsh "\$me" cat)"
echo "in-n=\$(echo piped | qpool-rsh -n "\$me" cat)"
qpool-rsh "\$me" 'kill -TERM \$\$'; echo "sig=\$?"
qpool-rsh elsewhere true; echo "outside=\$?"
qpool-rsh "\$(test "\$me" = na && echo nb || echo na)" true; echo "other=\$?"
echo "big=\$(head -c 50000000 /dev/zero | qpool-rsh "\$me" 'sleep 1; wc -c')"
echo "dsh=\$(pbsdsh sh -c 'echo slot' | grep -c slot)"
pbsdsh -n 0 false; echo "dsh-false=\$?"
echo ready > "$QP_T/work/qpuser1/ready"
for i in \$(seq 600); do [ -e "$go" ] && break; sleep 0.05; done
JOB
) || fail "qsub"
qp_wait "$id" running
qp_wait_file "$QP_T/work/qpuser1/ready"
node=$(qp_field "$id" exec_host)

note "another user's process in the job's group is refused"
cg=$memcg/$QP_CG_PARENT/$node/job.$id
[ -d "$cg" ] || fail "no group $cg"
flag=$QP_T/work/qpuser2/flag
# setpriv execs (runuser would fork, leaving the caller outside the group).
( cd "$QP_T/work/qpuser2" && exec setpriv --reuid=qpuser2 --regid=qpuser2 --init-groups env QPOOL_TASK_SOCKET="$QP_T/state/nodes/$node/task.sock" \
	bash -c 'for i in $(seq 400); do [ -e "$0" ] && break; sleep 0.05; done; exec "$1" "$2" true' \
	"$flag" "$QP_BIN/qpool-rsh" "$node" ) > "$QP_T/intruder.out" 2>&1 &
ipid=$!
echo "$ipid" > "$cg/cgroup.procs" || fail "cannot move pid $ipid into $cg"
touch "$flag"
wait "$ipid"; rc=$?
out=$(cat "$QP_T/intruder.out")
[ "$rc" = 255 ] && echo "$out" | grep -q "uid $(id -u qpuser2) is not the owner of job $id" ||
	fail "another user's process: rc $rc: $out"

note "a job that has ended is refused"
ended=$memcg/$QP_CG_PARENT/$node/job.999999
mkdir "$ended" || fail "mkdir $ended"
( cd "$QP_T/work/qpuser1" && exec setpriv --reuid=qpuser1 --regid=qpuser1 --init-groups env QPOOL_TASK_SOCKET="$QP_T/state/nodes/$node/task.sock" \
	bash -c 'for i in $(seq 400); do [ -e "$0" ] && break; sleep 0.05; done; exec "$1" "$2" true' \
	"$flag.2" "$QP_BIN/qpool-rsh" "$node" ) > "$QP_T/ended.out" 2>&1 &
epid=$!
echo "$epid" > "$ended/cgroup.procs" || fail "cannot move pid $epid into $ended"
touch "$flag.2"
wait "$epid"; rc=$?
echo "$epid" > "$memcg/cgroup.procs" 2>/dev/null
rmdir "$ended" || fail "rmdir $ended"
out=$(cat "$QP_T/ended.out")
[ "$rc" = 255 ] && echo "$out" | grep -q "job 999999 is ending on $node" || fail "ended job: rc $rc: $out"

touch "$go"
qp_wait "$id" completed
out=$QP_T/work/qpuser1/rsh.o$id
err=$QP_T/work/qpuser1/rsh.e$id
qp_wait_file "$out"
cat "$out"
want() { grep -qx "$1" "$out" || fail "job output lacks '$1'"; }
want "node=$node"
want "out-42"
want "rc=3"
grep -qx "err-line" "$err" || fail "the task's stderr did not reach the job's: $(cat "$err")"
grep -q "^cg=.*:/$QP_CG_PARENT/$node/job.$id\$" "$out" || fail "the task is not in the job's group"
want "uid=$(id -u qpuser1)"
want "cpus=$(test "$node" = na && echo 0 || echo 1)"
want "in=piped"
want "in-n="
want "sig=143"
want "outside=255"
want "other=255"
grep -q "qpool-rsh: elsewhere is not a node of job $id" "$err" || fail "no refusal line for a host outside the job"
want "big=50000000"
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$(qp_node_pid "$node")/status")
note "qnoded $node peak RSS ${hwm} kB after 50 MB through a task's stdin"
# ASan's shadow memory and quarantine make a sanitized qnoded's RSS say nothing.
case ${BUILD:-build} in
*-san) ;;
*) [ "$hwm" -lt 32768 ] || fail "qnoded $node grew to $hwm kB relaying 50 MB of stdin" ;;
esac
want "dsh=1"
want "dsh-false=1"

note "a job across both nodes of this host: each node has its own TMPDIR under the shared base"
id=$(as qpuser1 qsub -N tmps -l select=2:ncpus=1 -l place=scatter <<'JOB'
echo "primary=$TMPDIR"
touch "$TMPDIR/from-primary"
other=$(sed -n 2p "$PBS_NODEFILE")
echo "other=$other"
qpool-rsh "$other" 'echo "sister=$TMPDIR"; touch "$TMPDIR/from-sister"; ls "$TMPDIR"'
echo "after=$(ls "$TMPDIR")"
JOB
) || fail "qsub of a 2-node job"
qp_wait "$id" completed
out=$QP_T/work/qpuser1/tmps.o$id
qp_wait_file "$out"
cat "$out"
p=$(sed -n 's/^primary=//p' "$out"); s=$(sed -n 's/^sister=//p' "$out")
[ -n "$p" ] && [ -n "$s" ] && [ "$p" != "$s" ] || fail "the nodes' TMPDIRs are not apart: '$p' '$s'"
[ "$s" = "$p.$(sed -n 's/^other=//p' "$out")" ] ||
	fail "a sister's TMPDIR is not the primary's with its node's name: '$s'"
grep -qx "from-sister" "$out" || fail "the sister's TMPDIR did not hold its file"
grep -qx "after=from-primary" "$out" || fail "the primary's TMPDIR lost its file or got the sister's"
[ ! -e "$p" ] && [ ! -e "$s" ] || fail "a TMPDIR outlived the job"
note "stdin to a task on the other node: relayed whole, and held back when the task does not read it"
id=$(as qpuser1 qsub -N win -l select=2:ncpus=1 -l place=scatter <<'JOB'
other=$(sed -n 2p "$PBS_NODEFILE")
echo "other=$other"
echo "far=$(head -c 50000000 /dev/zero | qpool-rsh "$other" 'wc -c')"
# 200 MB offered to a task that never reads: the writer must stall.
mkfifo "$TMPDIR/fifo"
qpool-rsh "$other" "sleep 300.$$" < "$TMPDIR/fifo" & rsh=$!
head -c 200000000 /dev/zero > "$TMPDIR/fifo" & w=$!
last=-1 same=0
for i in $(seq 600); do
	n=$(awk '$1 == "wchar:" { print $2 }' "/proc/$w/io" 2>/dev/null) || break
	[ -n "$n" ] || break
	# Stalled: no byte more for 2 s. What is held back is about a
	# window and two pipes (~900 KB), so no floor of 1 MiB here.
	if [ "$n" = "$last" ] && [ "$n" -gt 0 ]; then same=$((same + 1)); else same=0; fi
	[ "$same" -ge 20 ] && break
	last=$n
	sleep 0.1
done
echo "written=$last"
# task.signal does not wait behind the stdin the task has not read.
kill "$w" 2>/dev/null
kill "$rsh"
wait "$rsh"
echo "rsh-rc=$?"
wait
JOB
) || fail "qsub of the window job"
# Bounded by the job's own loop (60 s of polling) and the relay of 50 MB.
qp_wait "$id" completed --timeout 240
out=$QP_T/work/qpuser1/win.o$id
qp_wait_file "$out"
cat "$out"
far=$(sed -n 's/^other=//p' "$out")
grep -qx "far=50000000" "$out" || fail "50 MB of stdin to a task on the other node did not arrive whole"
grep -qx "rsh-rc=143" "$out" || fail "SIGTERM to qpool-rsh did not end its task while its stdin was held back: $(cat "$QP_T/work/qpuser1/win.e$id" 2>&1)"
written=$(sed -n 's/^written=//p' "$out")
[ -n "$written" ] && [ "$written" -gt 0 ] || fail "the writer's progress was not read"
# Held back: the pipe, qpool-rsh's 1 MiB, the window gded grants (at most 1 MiB)
# and the sockets between: a few MiB, not 200 MB.
[ "$written" -lt 33554432 ] || fail "$written bytes taken for a task that reads nothing: no back-pressure across nodes"
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$(qp_node_pid "$far")/status")
hws=$(awk '/^VmHWM:/ { print $2 }' "/proc/$QP_SERVER_PID/status")
note "held back after $written bytes; peak RSS: qnoded $far ${hwm} kB, qpoold ${hws} kB"
case ${BUILD:-build} in
*-san) ;;
*) [ "$hwm" -lt 32768 ] || fail "qnoded $far grew to $hwm kB holding a task's unread stdin"
   [ "$hws" -lt 65536 ] || fail "qpoold grew to $hws kB relaying a task's unread stdin" ;;
esac

echo "rsh ok"
