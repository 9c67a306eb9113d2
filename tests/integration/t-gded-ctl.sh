#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gded's control socket (docs/PARALLEL.md), driven as qnoded drives it, in
# a running job: a task runs as the job's owner in the job's cgroup and
# cpuset with the job's environment plus its own; stdin is relayed, a
# signal reaches it, its exit status comes back (also to a connection
# made after it ended), an exec failure is a shell's 127; bad frames are
# refused or end the connection, never gded; a task still running when
# the job is deleted is killed and nothing of it is left.
. "$(dirname "$0")/lib.sh"
[ -d /sys/fs/cgroup/cpuset ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no cpuset controller"
qp_setup
qp_start_server
qp_start_node n1

# The socket is made when qnoded first asks for it (a task to start):
# none before; the job's own qpool-rsh has qnoded ask.
id=$(as qpuser1 qsub -l ncpus=1 -N ctl <<'JOB'
for i in $(seq 1200); do [ -e go-ctl ] && break; sleep 0.05; done
qpool-rsh "$(head -n 1 "$PBS_NODEFILE")" true
sleep 300
JOB
) || fail "qsub"
qp_wait "$id" running
ctl=$QP_T/state/nodes/n1/jobs/$id.ctl
qp_wait_gded "$id" > /dev/null
[ -e "$ctl" ] && fail "a control socket before any task: $ctl"
touch "$QP_T/work/qpuser1/go-ctl"
for _ in $(seq 600); do [ -S "$ctl" ] && break; sleep 0.05; done
[ -S "$ctl" ] || fail "no control socket $ctl after a task"
[ "$(stat -c '%a %U' "$ctl")" = "600 root" ] || fail "control socket is $(stat -c '%a %U' "$ctl")"
gpid=$(qp_wait_gded "$id")
if [ -d /sys/fs/cgroup/cpuset ]; then
	cpuset=/sys/fs/cgroup/cpuset/$QP_CG_PARENT/n1/job.$id
else
	cpuset=/sys/fs/cgroup/$QP_CG_PARENT/n1/job.$id
fi
cpus=$(cat "$cpuset/cpuset.cpus")
note "job $id: gded $gpid, control socket $ctl, cpus $cpus"

PYTHONPATH=$(dirname "$0") python3 - "$ctl" "$(id -u qpuser1)" "$id" "$cpus" "$QP_T" <<'PY' || fail "control socket checks"
import os, sys, time
from gdedctl import Ctl

path, uid, jobid, cpus, top = sys.argv[1:]
c = Ctl(path)

# As the owner, in the job's groups and cpuset, with the job's
# environment and its own on top, in HOME when cwd cannot be entered.
r = c.start("n1/1", ["sh", "-c", "id -u; cat /proc/self/cgroup; "
                     "grep Cpus_allowed_list /proc/self/status; "
                     "echo \"env $PBS_JOBID $FOO $PBS_TASKNUM $QPOOL_JOBID\"; pwd; "
                     "echo to-stderr >&2; exit 0"],
            env={"FOO": "bar"}, cwd="/no/such/dir")
assert r["ok"] and r["pid"] > 0, r
e = c.wait_exit("n1/1")
assert e.get("status") == 0, e
out = c.output("n1/1")
lines = out.splitlines()
assert lines[0] == uid, out
cg = dict((l.split(":", 2)[1], l.split(":", 2)[2]) for l in lines if l.count(":") >= 2)
want = ("cpuset", "memory") if "cpuset" in cg else ("",)   # v1, or v2 alone
assert all(cg.get(k, "").endswith("/job.%s" % jobid) for k in want), out
allowed = [l for l in lines if l.startswith("Cpus_allowed_list")][0].split()[1]
assert allowed == cpus, (allowed, cpus)
env = [l for l in lines if l.startswith("env ")][0].split()
# PBS_TASKNUM 3: the script is 1, its qpool-rsh (which had the socket made) 2.
assert env[1].split(".")[0] == jobid and env[2] == "bar" and env[3] == "3" and env[4] == jobid, env
assert lines[-1] == "/home/qpuser1", lines[-1]
assert c.output("n1/1", 2) == "to-stderr\n", c.output("n1/1", 2)
print("--- task: uid %s, cgroup of job %s, cpus %s, env and HOME fallback" % (uid, jobid, allowed))

# stdin relayed, then its end.
r = c.start("n1/2", ["cat"], stdin=True)
assert r["ok"], r
c.stdin("n1/2", b"hello\n" * 1000)
c.stdin("n1/2", b"")
e = c.wait_exit("n1/2")
assert e.get("status") == 0 and c.output("n1/2") == "hello\n" * 1000, (e, len(c.output("n1/2")))
print("--- stdin: 6000 bytes relayed, EOF ends cat")

# 8 MiB through cat both ways while the client sends from a thread: the
# flow control holds (gded neither stalls nor loses a byte).
import hashlib, threading
blob = os.urandom(8 << 20)
r = c.start("n1/2b", ["cat"], stdin=True)
assert r["ok"], r
def feed():
    for off in range(0, len(blob), 48 << 10):
        c.stdin("n1/2b", blob[off:off + (48 << 10)])
    c.stdin("n1/2b", b"")
th = threading.Thread(target=feed)
th.start()
e = c.wait_exit("n1/2b", timeout=120)
th.join(60)
got = c.out["n1/2b"][1]
assert e.get("status") == 0 and len(got) == len(blob) and \
    hashlib.sha256(got).digest() == hashlib.sha256(blob).digest(), (e, len(got))
print("--- 8 MiB through cat's stdin and stdout: every byte, in order")

# A signal to its process group.
r = c.start("n1/3", ["sh", "-c", "sleep 300; exit 0"])
assert r["ok"], r
c.signal("n1/3", 15)
e = c.wait_exit("n1/3")
assert e.get("signal") == 15 and "status" not in e, e
print("--- task.signal 15: task.exit signal 15")

# Exit status; exec failure as a shell says it.
r = c.start("n1/4", ["sh", "-c", "exit 7"])
assert c.wait_exit("n1/4").get("status") == 7
r = c.start("n1/5", ["no-such-command-qp"])
assert r["ok"], r
e = c.wait_exit("n1/5")
assert e.get("status") == 127, e
assert c.output("n1/5", 2) == "no-such-command-qp: command not found\n", c.output("n1/5", 2)
print("--- exit 7; exec failure: 127, %r" % c.output("n1/5", 2))

# Refusals, one line each; gded stays.
for msg, text in [
        ({"op": "task.start", "task": "n1/6"}, "\"argv\" is not an array"),
        ({"op": "task.start", "task": "n1/6", "argv": []}, "\"argv\" is not an array"),
        ({"op": "task.start", "task": "n1/6", "argv": [7]}, "argv[0] is not a string"),
        ({"op": "task.start", "task": 6, "argv": ["true"]}, "\"task\" is not a name"),
        ({"op": "task.start", "task": "n1/6", "argv": ["true"], "cwd": "rel"}, "\"cwd\" is not an absolute"),
        ({"op": "task.start", "task": "n1/6", "argv": ["true"], "env": {"A=B": "x"}}, "env \"A=B\" is not valid"),
        ({"op": "task.start", "task": "n1/6", "argv": ["true"], "env": {"A": 1}}, "A is not a string"),
        ({"op": "task.start", "task": "n1/6", "argv": ["true"], "stdin": "yes"}, "\"stdin\" is not a boolean"),
        ({"op": "task.nonsense"}, "unknown op"),
]:
    r = c.request(msg)
    assert not r["ok"] and text in r["error"] and "\n" not in r["error"] and r["errno"] > 0, (msg, r)
# Every member of task.start with every JSON type: an answer each time.
# (A NUL in a string: lib/wire refuses the frame and the connection
# ends, as for the broken frames below.)
odd = [None, 0, -1, 1.5, "", "x", "\u00e9" * 200, [], [1], {}, {"a": 1}, True]
n = 0
for key in ("task", "argv", "env", "cwd", "stdin", "op"):
    for v in odd:
        n += 1
        msg = {"op": "task.start", "task": "odd/%d" % n, "argv": ["true"]}
        msg[key] = v
        r = c.request(msg)
        assert isinstance(r.get("ok"), bool) and (r["ok"] or r["error"]), (msg, r)
        if r["ok"]:
            c.wait_exit(msg["task"])
print("--- %d task.start frames with odd members: each answered" % n)
c.send({"op": "task.start", "task": "x", "argv": ["true"]})   # no id
r = c.reply(0)
assert not r["ok"] and "\"id\" is not an integer" in r["error"], r
r = c.start("n1/7", ["sleep", "300"])
assert r["ok"], r
r = c.start("n1/7", ["true"])
assert not r["ok"] and "already" in r["error"], r
c.signal("n1/7", 9)
assert c.wait_exit("n1/7").get("signal") == 9
# task.in / task.signal for no such task, or malformed: no reply, no harm.
c.send({"op": "task.in", "task": "nobody", "data": "aGk="})
c.send({"op": "task.in", "task": "n1/7", "data": 5})
c.send({"op": "task.signal", "task": "n1/7", "signal": "TERM"})
r = c.start("n1/8", ["true"])
assert r["ok"], r
c.wait_exit("n1/8")
# A frame that is not JSON ends the connection; one above the cap too.
c.send_raw(b"\x00\x00\x00\x05{{{{{")
assert not c.pump(), "the connection survived a broken frame"
c.close()
c = Ctl(path)
c.send_raw(b"\x7f\x00\x00\x00")
assert not c.pump(), "the connection survived a frame above the cap"
c.close()
print("--- bad frames refused or the connection dropped")

# Disconnected while a task ends: its exit comes on the next connection.
c = Ctl(path)
flag = os.path.join(top, "work/qpuser1/go.%s" % jobid)
r = c.start("n1/9", ["sh", "-c", "for i in $(seq 400); do [ -e %s ] && exit 3; sleep 0.05; done; exit 1" % flag])
assert r["ok"], r
c.close()
open(flag, "w").close()
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    try:
        os.kill(r["pid"], 0)
    except ProcessLookupError:
        break
    time.sleep(0.05)
c = Ctl(path)
e = c.wait_exit("n1/9")
assert e.get("status") == 3, e
print("--- reconnect: the exit status of a task that ended meanwhile comes")

# Many at once; the running one for the qdel below.
for i in range(50):
    assert c.start("many/%d" % i, ["sh", "-c", "echo %d" % i])["ok"]
for i in range(50):
    assert c.wait_exit("many/%d" % i).get("status") == 0 and c.output("many/%d" % i) == "%d\n" % i
print("--- 50 tasks at once")
# The cap: 1024 tasks at once; the next is refused with one line, and
# starts again once one has ended.
t0 = time.monotonic()
for i in range(1024):
    r = c.start("cap/%d" % i, ["sleep", "300"])
    assert r["ok"], (i, r)
r = c.start("cap/over", ["true"])
assert not r["ok"] and r["error"] == "job %s has 1024 tasks on n1; at most 1024" % jobid, r
refusal = r["error"]
c.signal("cap/0", 9)
c.wait_exit("cap/0")
r = c.start("cap/again", ["true"])
for _ in range(100):   # cap/0 is forgotten once its task.exit has left
    if r["ok"] or "at most" not in r["error"]:
        break
    time.sleep(0.05)
    r = c.start("cap/again", ["true"])
assert r["ok"], r
for i in range(1, 1024):
    c.signal("cap/%d" % i, 9)
for i in range(1, 1024):
    assert c.wait_exit("cap/%d" % i).get("signal") == 9
c.wait_exit("cap/again")
print("--- 1024 tasks at once, the 1025th refused: %r (%.1f s)" % (refusal, time.monotonic() - t0))
r = c.start("n1/last", ["sh", "-c", "trap '' TERM; echo ready; sleep 300"])
assert r["ok"], r
c.wait_output("n1/last", "ready")
open(os.path.join(top, "lastpid"), "w").write("%d\n" % r["pid"])
c.close()
PY

# qdel: the task still running (it ignores SIGTERM) is killed with the
# job; nothing of it is left.
tpid=$(cat "$QP_T/lastpid")
kill -0 "$tpid" 2>/dev/null || fail "task $tpid is not running before qdel"
"$QP_BIN/qdel" "$id" || fail "qdel"
qp_wait "$id" cancelled
for _ in $(seq 100); do kill -0 "$tpid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$tpid" 2>/dev/null && fail "task $tpid outlived its job"
for _ in $(seq 100); do kill -0 "$gpid" 2>/dev/null || break; sleep 0.05; done
[ -e "$ctl" ] && fail "control socket $ctl left"
[ -d "$cpuset" ] && fail "job group $cpuset left"
note "qdel: the task is gone, and the socket and group"

# A job that is ending refuses tasks: its script and a task ignore
# SIGTERM, so gded spends its grace (kill_grace 2 s) refusing new tasks,
# then kills both.
id2=$(as qpuser1 qsub -l ncpus=1 -N ctl2 <<'JOB'
trap '' TERM
qpool-rsh "$(head -n 1 "$PBS_NODEFILE")" true
sleep 300
JOB
) || fail "qsub 2"
qp_wait "$id2" running
ctl2=$QP_T/state/nodes/n1/jobs/$id2.ctl
for _ in $(seq 600); do [ -S "$ctl2" ] && break; sleep 0.05; done
PYTHONPATH=$(dirname "$0") python3 - "$ctl2" "$id2" "$QP_BIN/qdel" <<'PY' || fail "ending refusal"
import subprocess, sys, time
from gdedctl import Ctl
path, jobid, qdel = sys.argv[1:]
c = Ctl(path)
r = c.start("n1/1", ["sh", "-c", "trap '' TERM; echo ready; sleep 300"])
assert r["ok"], r
c.wait_output("n1/1", "ready")
subprocess.run([qdel, jobid], check=True)
# qdel's SIGTERM reaches gded a moment later: until then tasks start.
for i in range(200):
    r = c.start("n1/2.%d" % i, ["true"])
    if not r["ok"]:
        break
    time.sleep(0.02)
assert not r["ok"] and r["error"] == "job %s is ending on n1" % jobid, r
e = c.wait_exit("n1/1")
assert e.get("signal") == 9, e
print("--- ending: %r; the task that ignored SIGTERM told signal 9" % r["error"])
PY
qp_wait "$id2" cancelled

# A control socket gded cannot make (a directory holds its path): the
# job's task is refused at once with the reason, not after qnoded's 30 s
# wait, and the job goes on.
id3=$(as qpuser1 qsub -l ncpus=1 -N ctl3 <<'JOB'
for i in $(seq 1200); do [ -e go-ctl3 ] && break; sleep 0.05; done
qpool-rsh "$(head -n 1 "$PBS_NODEFILE")" true; echo "rsh=$?"
JOB
) || fail "qsub 3"
qp_wait "$id3" running
mkdir "$QP_T/state/nodes/n1/jobs/$id3.ctl" || fail "mkdir at the control socket's path"
touch "$QP_T/work/qpuser1/go-ctl3"
qp_wait "$id3" completed --timeout 20
o3=$QP_T/work/qpuser1/ctl3.o$id3 e3=$QP_T/work/qpuser1/ctl3.e$id3
qp_wait_file "$o3"
grep -qx "rsh=255" "$o3" || fail "a task with no control socket: $(cat "$o3" "$e3")"
grep -q "job $id3 on n1: its wrapper could not make its control socket" "$e3" ||
	fail "the refusal does not say why: $(cat "$e3")"
grep -q "cannot make the control socket $QP_T/state/nodes/n1/jobs/$id3.ctl" "$QP_T/qnoded-n1.log" ||
	fail "gded's reason is not in the node's log"
rmdir "$QP_T/state/nodes/n1/jobs/$id3.ctl" 2>/dev/null
note "a control socket that cannot be made: the task is refused at once, with the reason"
echo "control socket ok"
