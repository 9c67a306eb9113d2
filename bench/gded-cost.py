#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# bench/gded-cost's driver (run by it, as root, on its private node):
#   gded-cost.py T NODE CGPARENT USER ROUNDS N BUILD...
# For each round, each BUILD in turn: starts BUILD/bin/gded --launcher as
# qnoded does (its socket on fd 3, a filler argument), hands it N launch
# specs of a `true` job one after the other as qnoded would (the spec, the
# script and ID.result.tmp written beforehand, a notify socket passed),
# waits for each wrapper's end (its pidfd) and reads its result. gded's
# own CPU per job = the launcher's CPU and its reaped wrappers' (wait4's
# rusage at its end, which includes the jobs', less its own CPU before the
# first job, /proc/PID/schedstat) less the jobs' own (the results'
# cpu_ns, their cpuacct groups). Prints one line per round and build:
# "ROUND BUILD ms_per_job job_ms_per_job wrap_exec_p50 jobs_per_s", the
# last of one job after another on this one lane (spec written, launch,
# wait for the wrapper's end, result read): what a node could run on one
# CPU with no qpoold and no message between the jobs.
# A gded that knows "nodefile_shared" is handed what its qnoded hands it:
# the node's shared node file of the job's count, made once here (root's,
# 0444); an older one a path in the jobs directory to write.
import json, os, pwd, select, socket, struct, subprocess, sys, time

T, node, parent, user = sys.argv[1:5]
rounds, n = int(sys.argv[5]), int(sys.argv[6])
builds = sys.argv[7:]
pw = pwd.getpwnam(user)
jobs = os.path.join(T, "gcjobs")
os.makedirs(jobs, exist_ok=True)
os.chmod(jobs, 0o711)
work = os.path.join(T, "work")
shared_dir = os.path.join(T, "gcnodefiles")
os.makedirs(shared_dir, exist_ok=True)
os.chmod(shared_dir, 0o711)
shared = os.path.join(shared_dir, node + ".1")
with open(shared + ".tmp", "w") as f:
    f.write(node + "\n")
os.chmod(shared + ".tmp", 0o444)
os.rename(shared + ".tmp", shared)


def knows_shared(build):
    with open(os.path.join(build, "bin", "gded"), "rb") as f:
        return b"nodefile_shared" in f.read()


def proc_cpu(pid):
    # The launcher's own CPU so far, in ns (its one thread's schedstat),
    # before any wrapper: /proc/PID/stat's ticks (10 ms) were up to 4% of
    # a round.
    with open("/proc/%d/schedstat" % pid) as f:
        return int(f.read().split()[0]) / 1e9


def reaped_cpu(pid):
    # At its end: its CPU and its reaped wrappers' (and theirs, the jobs'),
    # wait4's rusage in microseconds.
    _, _, ru = os.wait4(pid, 0)
    return ru.ru_utime + ru.ru_stime


def spec(jid, shared_ok):
    p = os.path.join(jobs, str(jid))
    s = {
        "jobid": jid, "name": "true.sh", "queue": "batch", "user": user,
        "uid": pw.pw_uid, "gid": pw.pw_gid, "workdir": work, "stdout": "/dev/null",
        "stderr": "/dev/null", "join": False, "attrs": {},
        "env": {"PBS_O_HOME": pw.pw_dir, "PBS_O_LOGNAME": user, "PBS_O_PATH": "/usr/bin:/bin",
                "PBS_O_SHELL": "/bin/bash", "PBS_O_LANG": "C.UTF-8", "PBS_O_HOST": "vm",
                "PBS_O_SYSTEM": "Linux", "PBS_O_WORKDIR": work},
        "script": p + ".sh", "ncpus": 1, "walltime": 3600, "umask": 18,
        # A memory limit, as qpool gives every job (its request, else the
        # queue's default, else the node's memory).
        "mem": 1 << 30,
        "times": {"submit": 1, "dispatch": 2, "launch": 3}, "server": "vm", "kill_grace": 10,
        "reserve": "none", "rt_policy": "fifo", "rt_priority": 10, "cpus": "0", "mems": "0",
        "nodefile": p + ".nodes", "result": p + ".result", "ctl": p + ".ctl",
        "home": pw.pw_dir, "shell": "/bin/bash", "node": node, "tmpdir_base": "/var/tmp",
        "cgroup": {"mode": "v2" if os.path.exists("/sys/fs/cgroup/cgroup.controllers") else "v1",
                   "root": "/sys/fs/cgroup", "parent": parent, "reclaim_threshold": 4096},
        "groups": [pw.pw_gid],
    }
    if shared_ok:
        s["nodefile"], s["nodefile_shared"] = shared, True
    return s


def start(build):
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)

    def fd3():
        os.dup2(b.fileno(), 3)
    # The node's cgroups, as qnoded names them (a launcher that holds them
    # open for its wrappers takes them; an older one ignores them).
    # The environment as qnoded gives it (noded/launch.c's gded_env), not
    # the bench's: LD_BIND_NOW changes what each wrapper costs.
    env = dict(PATH="/usr/sbin:/usr/bin:/sbin:/bin", LC_ALL="C", LD_BIND_NOW="1",
               QPOOL_CGROUP_MODE=spec(0, False)["cgroup"]["mode"],
               QPOOL_CGROUP_ROOT="/sys/fs/cgroup", QPOOL_CGROUP_PARENT=parent)
    cmd = [os.path.join(build, "bin", "gded"), "--launcher", "x" * 8192]
    # GDED_STRACE=DIR: the launcher under strace -ff (DIR/base.PID,
    # DIR/new.PID), for counting a wrapper's system calls; its CPU
    # figures are then strace's, not to be quoted.
    if os.environ.get("GDED_STRACE"):
        cmd = ["strace", "-ff", "-qq", "-o",
               os.path.join(os.environ["GDED_STRACE"], "new" if build == builds[-1] else "base")] + cmd
    p = subprocess.Popen(cmd,
                         preexec_fn=fd3, env=env, pass_fds=(3, b.fileno()) if b.fileno() != 3 else (3,), stdin=subprocess.DEVNULL,
                         stderr=open(os.path.join(T, "gded.log"), "a"))
    b.close()
    a.recvmsg(8)   # its hello: {0, pid}
    return p, a


def one(sock, jid, shared_ok):
    p = os.path.join(jobs, str(jid))
    with open(p + ".json", "w") as f:
        json.dump(spec(jid, shared_ok), f)
    with open(p + ".sh", "w") as f:
        f.write("true\n")
    os.chown(p + ".sh", pw.pw_uid, pw.pw_gid)
    os.chmod(p + ".sh", 0o500)
    open(p + ".result.tmp", "w").close()
    na, nb = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    socket.send_fds(sock, [(p + ".json").encode()], [nb.fileno()])
    nb.close()
    msg, fds, _, _ = socket.recv_fds(sock, 8, 1)
    e, pid = struct.unpack("ii", msg)
    if e or not fds:
        sys.exit("gded-cost: launcher refused job %d: errno %d" % (jid, e))
    select.select([fds[0]], [], [], 60)
    os.close(fds[0])
    na.close()
    with open(p + ".result") as f:
        r = json.load(f)
    if r.get("status") != "exited" or r.get("exit_status") != 0:
        sys.exit("gded-cost: job %d: %s" % (jid, r))
    for s in (".json", ".sh", ".nodes", ".result"):
        try:
            os.unlink(p + s)
        except FileNotFoundError:
            pass
    m = r["mono"]
    return r.get("cpu_ns", 0) / 1e9, (m["exec"] - m["wrap"]) / 1e6


jid = 1
for rnd in range(1, rounds + 1):
    for bi, build in enumerate(builds):
        proc, sock = start(build)
        shared_ok = knows_shared(build)
        c0 = proc_cpu(proc.pid)
        jobcpu, lat = 0.0, []
        t0 = time.monotonic()
        for _ in range(n):
            jc, l = one(sock, jid, shared_ok)
            jid += 1
            jobcpu += jc
            lat.append(l)
        rate = n / (time.monotonic() - t0)
        sock.close()
        c1 = reaped_cpu(proc.pid)
        proc.returncode = 0
        lat.sort()
        print("%d %s %.3f %.3f %.3f %.0f" % (rnd, "new" if bi else "base",
              (c1 - c0 - jobcpu) * 1e3 / n, jobcpu * 1e3 / n, lat[len(lat) // 2], rate), flush=True)
