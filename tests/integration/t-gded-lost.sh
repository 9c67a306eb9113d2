#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A job whose gded is killed (kill -9) is not orphaned: qnoded kills every
# process in the job's groups, setsid'ed ones included, removes the groups
# and the job's TMPDIR (here the name of its own it got because its PBS
# name was held, which stays), and only then reports the job failed
# ("wrapper lost"); the next job on the same CPU runs. Groups that no job
# accounts for are removed, their processes killed, when qnoded starts.
. "$(dirname "$0")/lib.sh"
[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no memory controller"
qp_setup
# TMPDIRs under a base of this test's own: on the shared /var/tmp another
# test's job with this id may hold or take the same names.
mkdir -m 1777 "$QP_T/tmp" || fail "mkdir $QP_T/tmp"
printf '[node]\ntmpdir = %s\n' "$QP_T/tmp" >> "$QPOOL_CONF"
qp_start_server
qp_start_node n1 0
w=$QP_T/work/qpuser1

cat > "$QP_T/orphan.sh" <<JOB
sleep 300 &
echo \$! > $w/pids
setsid sleep 300 &
echo \$! >> $w/pids
echo "\$TMPDIR" > $w/tmpdir
echo data > "\$TMPDIR/data"
echo ready > $w/ready
wait
JOB
chmod 644 "$QP_T/orphan.sh"
a=$(as qpuser1 qsub -h -N orphan "$QP_T/orphan.sh") || fail "qsub"
# Its PBS name held as a running job of another pool would hold it: the
# job gets a name of its own beside it.
pbsname=$QP_T/tmp/pbs.$("$QP_BIN/qstat" -f "$a" | sed -n 's/^Job Id: //p')
mkdir "$pbsname" && echo other > "$pbsname/other" || fail "mkdir $pbsname"
flock "$pbsname" sleep 300 &
holder=$!
holder_stop() { kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null; }
QP_ATEXIT+=(holder_stop)
"$QP_BIN/qrls" "$a" || fail "qrls $a"
qp_wait_file "$w/ready"
tmpdir=$(cat "$w/tmpdir")
case $tmpdir in "$pbsname".??????) ;; *) fail "job $a's TMPDIR is $tmpdir, not a name of its own beside the held $pbsname" ;; esac
spec="$QP_T/state/nodes/n1/jobs/$a.json"
gpid=$(pgrep -f "gded --spec $spec") || fail "no gded for job $a"
pids=$(cat "$w/pids")
note "job $a: gded $gpid, processes $(echo $pids)"
kill -KILL "$gpid"

qp_wait "$a" failed
reason=$(qp_field "$a" reason)
note "job $a: $reason"
case $reason in *"wrapper lost"*) ;; *) fail "job $a failed with '$reason', not 'wrapper lost'" ;; esac
# Gone, or dead and not yet reaped by init (a zombie runs nothing).
for p in $pids; do
	st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ] || fail "process $p of job $a (state $st) outlived its reported end"
done
left=$(find /sys/fs/cgroup -maxdepth 4 -type d -path "*/$QP_CG_PARENT/n1/job.$a")
[ -z "$left" ] || fail "groups of job $a left: $left"
# Removed by a process of qnoded's own (a TMPDIR may be large): waited for.
for _ in $(seq 200); do [ -e "$tmpdir" ] || break; sleep 0.05; done
[ ! -e "$tmpdir" ] || fail "job $a's TMPDIR $tmpdir is left: $(ls -A "$tmpdir")"
[ "$(cat "$pbsname/other" 2>/dev/null)" = other ] || fail "the held $pbsname was touched"
for _ in $(seq 100); do grep -q "job $a: removed the TMPDIR its lost wrapper left" "$QP_T/qnoded-n1.log" && break; sleep 0.05; done
grep -q "job $a: removed the TMPDIR its lost wrapper left" "$QP_T/qnoded-n1.log" ||
	fail "qnoded did not say it removed job $a's TMPDIR"
holder_stop

# A group no job here accounts for (a wrapper lost before this qnoded
# cleaned up after them, its files gone): emptied and removed at start.
note "an orphan group with a process in it; qnoded restarts"
orphan=$((a + 1000))
groups=()
for h in /sys/fs/cgroup/*/"$QP_CG_PARENT"/n1 /sys/fs/cgroup/"$QP_CG_PARENT"/n1; do
	[ -d "$h" ] || continue
	mkdir "$h/job.$orphan" || fail "mkdir $h/job.$orphan"
	case $h in */cpuset/*) cat "$h/cpuset.cpus" > "$h/job.$orphan/cpuset.cpus"; cat "$h/cpuset.mems" > "$h/job.$orphan/cpuset.mems" ;; esac
	groups+=("$h/job.$orphan/cgroup.procs")
done
# It joins the groups itself, so whatever runuser forks is inside too; a
# duration of its own names it.
dur=7$$
bash -c 'for f; do echo $$ > "$f" || exit 1; done; exec runuser -u qpuser2 -- sleep '"$dur" x "${groups[@]}" &
for _ in $(seq 100); do pgrep -u qpuser2 -f "^sleep $dur\$" >/dev/null && break; sleep 0.05; done
pgrep -u qpuser2 -f "^sleep $dur\$" >/dev/null || fail "the orphan group's process did not start"
qp_stop "$(qp_node_pid n1)"
qp_start_node n1 0
for p in $(pgrep -f "sleep $dur\$"); do
	st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ] || fail "the orphan group's process $p (state $st) outlived the restart"
done
left=$(find /sys/fs/cgroup -maxdepth 4 -type d -path "*/$QP_CG_PARENT/n1/job.$orphan")
[ -z "$left" ] || fail "orphan groups left: $left"
grep -q "job $orphan: removed its groups" "$QP_T/qnoded-n1.log" || fail "qnoded did not say it removed job $orphan's groups"

# The same CPU takes the next job.
echo "echo next" > "$QP_T/next.sh"
chmod 644 "$QP_T/next.sh"
b=$(as qpuser1 qsub -N next "$QP_T/next.sh") || fail "qsub next"
qp_wait "$b" completed
echo PASS
