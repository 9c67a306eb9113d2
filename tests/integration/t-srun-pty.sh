#!/bin/bash
# SPDX-License-Identifier: MIT
# srun --pty CMD outside a job (Slurm users' interactive session): a new
# job runs CMD, not a shell, on a pty on its node, inside the job's
# cgroup, with SLURM_* and srun's environment, in srun's directory (or
# -D's); its input is srun's (a pipe here: EOF ends it); srun exits with
# CMD's status and the job is recorded with it; no terminal socket is
# left. Refusals (no command, -n 2, an unknown partition) are one line,
# with no job. Inside a job (salloc's shell) the command runs there, on
# that terminal, as the step's task 0. A killed srun (its terminal's SIGHUP) hangs
# up the job's terminal, which ends CMD: the job does not run on; one
# killed while its job waits deletes the job.
. "$(dirname "$0")/lib.sh"

qp_setup
qp_start_server
qp_start_node n1 0-1
W=$QP_T/work/qpuser1
mkdir -p "$W/sub" && chown qpuser1: "$W/sub"

# jobid FILE: the job srun announced on its standard error
jobid() { sed -n 's/^srun: job \([0-9]*\) queued and waiting for resources.*/\1/p' "$1"; }
njobs() { "$QP_BIN/qstat" -x --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }

note "srun --pty CMD: CMD on a terminal in the job's cgroup, SLURM_* set, its status srun's and the job's"
out=$(as_full qpuser1 env QX_KEEP=kept timeout 90 srun -t 5 --pty sh -c \
	'echo "tty=$(tty >/dev/null && echo yes) t0=$([ -t 0 ] && echo yes) job=$SLURM_JOB_ID cg=$(grep -o "job\.[0-9]*" /proc/self/cgroup | head -n 1) keep=$QX_KEEP env=$PBS_ENVIRONMENT pwd=$(pwd) ntasks=$SLURM_NTASKS"; exit 3' \
	</dev/null 2>"$QP_T/a.err"); rc=$?
out=$(tr -d '\r' <<<"$out")
echo "$out"; cat "$QP_T/a.err"
id=$(jobid "$QP_T/a.err")
[ -n "$id" ] || fail "srun --pty announced no job: $(cat "$QP_T/a.err")"
grep -q "^srun: job $id has been allocated resources$" "$QP_T/a.err" || fail "no allocation line: $(cat "$QP_T/a.err")"
[ $rc = 3 ] || fail "srun --pty sh -c 'exit 3' exited $rc: $(cat "$QP_T/a.err")"
grep -qx "tty=yes t0=yes job=$id cg=job.$id keep=kept env=PBS_INTERACTIVE pwd=$W ntasks=1" <<<"$out" ||
	fail "the command's view: $out"
qp_wait "$id" completed failed --timeout 60
[ "$(qp_field "$id" Exit_status)" = 3 ] || fail "job $id: Exit_status $(qp_field "$id" Exit_status)"
[ ! -e "$QP_T/state/nodes/n1/jobs/$id.pty" ] || fail "the terminal socket was left behind"

note "srun's input (a pipe) is the command's; -D sets its directory; CMD runs, not the login shell"
out=$(printf 'abc\n' | as_full qpuser1 timeout 90 srun -D sub --pty sh -c 'read x; echo "got=$x pwd=$(pwd) sh=$0"' \
	2>"$QP_T/b.err"); rc=$?
out=$(tr -d '\r' <<<"$out")
[ $rc = 0 ] || fail "srun --pty read: exit $rc: $(cat "$QP_T/b.err")"
grep -qx "got=abc pwd=$W/sub sh=sh" <<<"$out" || fail "piped input, -D: $out"
# ten times: gded read its pty before the job opened it (EIO, taken for
# the job's end) and hung it up, about one start in two
for i in $(seq 1 10); do
	as_full qpuser1 timeout 90 srun --pty cat </dev/null >/dev/null 2>"$QP_T/c.err"; rc=$?
	[ $rc = 0 ] || fail "srun --pty cat at EOF, run $i: exit $rc: $(cat "$QP_T/c.err")"
done

note "from a terminal (python's pty, 33 rows of 111 columns): the job's pty has its size, raw mode is undone"
cat > "$QP_T/term.py" <<'PY'
import fcntl, os, pty, select, struct, subprocess, sys, termios
m, s = pty.openpty()
fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 111, 0, 0))
before = termios.tcgetattr(s)
p = subprocess.Popen(sys.argv[1:], stdin=s, stdout=s, stderr=open(os.environ["ERR"], "w"))
out = b""
# the slave stays open here (its modes are checked after): read until
# srun has exited and nothing more comes
while True:
    if select.select([m], [], [], 0.2)[0]:
        b = os.read(m, 4096)
        if not b:
            break
        out += b
    elif p.poll() is not None:
        break
rc = p.wait()
sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
sys.stdout.write("restored=%s\n" % ("yes" if termios.tcgetattr(s) == before else "no"))
sys.exit(rc)
PY
chmod 644 "$QP_T/term.py"
out=$(as_full qpuser1 env ERR="$W/t.err" timeout 90 python3 "$QP_T/term.py" srun --pty sh -c 'echo "size=$(stty size)"; exit 4'); rc=$?
echo "$out"
[ $rc = 4 ] || fail "srun --pty on a terminal: exit $rc: $out $(cat "$W/t.err")"
grep -qx "size=33 111" <<<"$out" || fail "the job's pty is not the terminal's size: $out"
grep -qx "restored=yes" <<<"$out" || fail "srun left the terminal raw: $out"

note "refusals: one line, Slurm's words where it has them, no job"
before=$(njobs)
o=$(as_full qpuser1 srun --pty 2>&1); rc=$?
[ $rc = 1 ] && [ "$o" = "srun: fatal: No command given to execute." ] || fail "srun --pty: exit $rc: $o"
o=$(as_full qpuser1 srun -n2 --pty touch "$W/n2.ran" 2>&1); rc=$?
[ $rc = 1 ] && [ "$(wc -l <<<"$o")" = 1 ] && grep -q "^srun: error: --pty runs one task" <<<"$o" ||
	fail "srun -n2 --pty: exit $rc: $o"
o=$(as_full qpuser1 srun -p nosuch --pty touch "$W/nosuch.ran" 2>&1); rc=$?
[ $rc = 1 ] && [ "$o" = "srun: error: Unable to allocate resources: Invalid partition name specified" ] ||
	fail "srun -p nosuch --pty: exit $rc: $o"
o=$(as_full qpuser1 env SLURM_JOB_ID=1 PBS_JOBID=1.x srun -n 2 --pty touch "$W/inside.ran" 2>&1); rc=$?
[ $rc = 1 ] && [ "$(wc -l <<<"$o")" = 1 ] && grep -q "^srun: error: --pty runs one task" <<<"$o" ||
	fail "srun -n 2 --pty inside a job: exit $rc: $o"
o=$(as_full qpuser1 qsub -- true 2>&1); rc=$?
[ $rc = 2 ] && [ "$o" = "qsub: -- command: only with -I (a batch job's commands go in its script)" ] ||
	fail "qsub -- true: exit $rc: $o"
o=$(as_full qpuser1 qsub -I -- 2>&1); rc=$?
[ $rc = 2 ] && [ "$o" = "qsub: -I --: no command after -- (see qsub --help)" ] || fail "qsub -I --: exit $rc: $o"
[ "$(njobs)" = "$before" ] || fail "a refused srun --pty made a job"
[ ! -e "$W/n2.ran" ] && [ ! -e "$W/nosuch.ran" ] && [ ! -e "$W/inside.ran" ] || fail "a refused srun ran its command"

note "inside a job (salloc's shell): srun --pty runs the command there, on that terminal, as the step's task 0"
cat > "$W/inner.txt" <<'IN'
srun --pty sh -c 'echo "inner tty=$(tty >/dev/null && echo yes) step=$SLURM_STEP_ID procid=$SLURM_PROCID job=$SLURM_JOB_ID cg=$(grep -o "job\.[0-9]*" /proc/self/cgroup | head -n 1)"; exit 6'; echo "inner rc=$?"
exit 0
IN
out=$(as_full qpuser1 timeout 90 salloc -N1 -n 2 -t 5 <"$W/inner.txt" 2>"$QP_T/s.err"); rc=$?
out=$(tr -d '\r' <<<"$out")
[ $rc = 0 ] || fail "salloc with srun --pty in it: exit $rc: $(cat "$QP_T/s.err") $out"
sid=$(grep -o "inner tty=yes step=0 procid=0 job=[0-9]*" <<<"$out" | sed 's/.*job=//')
[ -n "$sid" ] || fail "srun --pty in salloc's shell: $out"
grep -q "inner tty=yes step=0 procid=0 job=$sid cg=job.$sid" <<<"$out" || fail "srun --pty in salloc's shell: $out"
grep -q "^inner rc=6" <<<"$out" || fail "srun --pty in salloc's shell: not the command's status: $out"

note "srun killed by its terminal's hangup: the job's terminal hangs up, the command ends"
setsid runuser -u qpuser1 -- env -C "$W" QPOOL_CONF="$QPOOL_CONF" PATH="$QP_BIN:/usr/bin:/bin" \
	srun -t 5 --pty sleep 300 </dev/null >/dev/null 2>"$QP_T/k.err" &
kpid=$!
for ((i = 0; i < 1200; i++)); do
	grep -q "has been allocated resources" "$QP_T/k.err" && break
	sleep 0.1
done
kid=$(jobid "$QP_T/k.err")
[ -n "$kid" ] && grep -q "has been allocated resources" "$QP_T/k.err" || fail "srun --pty sleep: $(cat "$QP_T/k.err")"
[ "$(qp_state "$kid")" = running ] || fail "job $kid is $(qp_state "$kid"), not running"
kill -HUP -- "-$kpid"
wait "$kpid"
qp_wait "$kid" completed failed --timeout 60 || fail "job $kid still $(qp_state "$kid") after srun's hangup"
[ ! -e "$QP_T/state/nodes/n1/jobs/$kid.pty" ] || fail "the terminal socket was left behind"
note "srun killed while its job waits: the job is deleted"
bid=$(as qpuser2 qsub -l ncpus=2 -o /dev/null -j oe <<<'sleep 300') || fail "qsub of the blocker"
qp_wait "$bid" running --timeout 60
setsid runuser -u qpuser1 -- env -C "$W" QPOOL_CONF="$QPOOL_CONF" PATH="$QP_BIN:/usr/bin:/bin" \
	srun -c 2 -t 5 --pty true </dev/null >/dev/null 2>"$QP_T/q.err" &
qpid=$!
for ((i = 0; i < 1200; i++)); do
	[ -n "$(jobid "$QP_T/q.err")" ] && break
	sleep 0.1
done
qid=$(jobid "$QP_T/q.err")
[ -n "$qid" ] && [ "$(qp_state "$qid")" = queued ] || fail "srun -c 2 --pty: no job waiting: $(cat "$QP_T/q.err")"
kill -HUP -- "-$qpid"
wait "$qpid"; rc=$?
[ $rc = 129 ] || fail "srun killed by SIGHUP while waiting exited $rc: $(cat "$QP_T/q.err")"
qp_wait "$qid" cancelled --timeout 60
grep -qx "srun: Job allocation $qid has been revoked" "$QP_T/q.err" || fail "killed while waiting: $(cat "$QP_T/q.err")"
"$QP_BIN/qdel" "$bid"
echo PASS
