#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# [node] jobs_tmpfs (on by default): qnoded mounts a tmpfs on its empty
# jobs directory; jobs run and report from it; a qnoded restart with a
# job running keeps it mounted (the job's files stay) and adopts the job.
# A result qpoold has not taken within a second is copied with its spec
# to the node's held/ directory on disk: when the host goes down (qnoded
# killed, the tmpfs gone), the next qnoded puts it back and reports it,
# and the job is not run again. A qnoded that stops with the directory
# empty unmounts it. A directory that holds files is never mounted over.
. "$(dirname "$0")/lib.sh"
qp_setup
jobs=$QP_T/state/nodes/n1/jobs
fstype() { stat -f -c %T "$1"; }
# Whatever happens, no mount is left under the test's directory.
unmount_jobs() { while mountpoint -q "$jobs" 2>/dev/null; do umount -l "$jobs" || break; done; }
QP_ATEXIT+=(unmount_jobs)
qp_start_server
qp_start_node n1
w=$QP_T/work/qpuser1

[ "$(fstype "$jobs")" = tmpfs ] || fail "jobs directory is $(fstype "$jobs"), not tmpfs"
[ "$(stat -c %a "$jobs")" = 711 ] || fail "jobs tmpfs mode $(stat -c %a "$jobs")"
# Its cap: a tenth of the host's memory, at least 256 MiB.
size=$(df -BM --output=size "$jobs" | tail -n 1 | tr -dc 0-9)
want=$(awk '/^MemTotal:/ { m = int($2 / 1024 / 10); print (m > 256 ? m : 256) }' /proc/meminfo)
[ $((size - want)) -ge -1 ] && [ $((size - want)) -le 1 ] || fail "jobs tmpfs of $size MiB, not $want"
a=$(echo 'id -un' | as qpuser1 qsub -N a) || fail qsub
qp_wait "$a" completed failed
[ "$(qp_state "$a")" = completed ] || fail "job $a ended $(qp_state "$a"): $(qp_field "$a" reason)"
grep -qx qpuser1 "$w/a.o$a" || fail "job $a output: $(cat "$w/a.o$a")"

note "qnoded restarts while a job runs"
cat > "$QP_T/wait.sh" <<JOB
echo started > $w/b.started
i=0; while [ ! -e $QP_T/go ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
echo b-ok
JOB
chmod 644 "$QP_T/wait.sh"
b=$(as qpuser1 qsub -N b "$QP_T/wait.sh") || fail qsub
qp_wait_file "$w/b.started"
gpid=$(qp_wait_gded "$b") || exit 1
qp_stop "$(qp_node_pid n1)"
[ "$(fstype "$jobs")" = tmpfs ] || fail "the tmpfs went while job $b's files were in it"
[ -s "$jobs/$b.json" ] || fail "job $b's spec is gone"
qp_start_node n1
grep -q "adopted running gded pid $gpid" "$QP_T/qnoded-n1.log" || fail "gded $gpid not adopted"
[ "$(grep -c 'tmpfs mounted on' "$QP_T/qnoded-n1.log")" = 1 ] || fail "the second qnoded mounted again"
touch "$QP_T/go"
qp_wait "$b" completed failed
[ "$(qp_state "$b")" = completed ] || fail "job $b ended $(qp_state "$b"): $(qp_field "$b" reason)"
grep -qx b-ok "$w/b.o$b" || fail "job $b output: $(cat "$w/b.o$b")"

note "qpoold away, then the host: a result held goes to disk and comes back"
held=$QP_T/state/nodes/n1/held
cat > "$QP_T/held.sh" <<JOB
echo started > $w/c.started
i=0; while [ ! -e $QP_T/go-c ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
echo ran >> $w/c.runs
JOB
chmod 644 "$QP_T/held.sh"
c=$(as qpuser1 qsub -N c "$QP_T/held.sh") || fail qsub
qp_wait_file "$w/c.started"
qp_stop "$QP_SERVER_PID"
touch "$QP_T/go-c"
cid=${c%%.*}
for _ in $(seq 200); do [ -s "$held/$cid.result" ] && break; sleep 0.05; done
[ -s "$held/$cid.result" ] || fail "job $c's result was not copied to $held: $(ls -A "$held")"
[ -s "$held/$cid.json" ] || fail "job $c's spec was not copied to $held"
[ -s "$jobs/$cid.result" ] || fail "job $c's result is not in the jobs tmpfs"
cmp -s "$held/$cid.result" "$jobs/$cid.result" || fail "job $c's copy differs from its result"
node=$(qp_node_pid n1)
kill -KILL "$node"
wait "$node" 2>/dev/null
# The host's memory goes: the tmpfs with it.
umount -l "$jobs" || fail "cannot unmount $jobs"
[ -z "$(ls -A "$jobs")" ] || fail "the jobs directory under the tmpfs holds $(ls -A "$jobs")"
# What a crash in a copy would leave: a spec without its result, a
# temporary file. Neither is put back; both go.
echo '{}' > "$held/999.json"
echo x > "$held/998.result.tmp"
qp_start_server
qp_start_node n1
grep -q "1 result held on disk put back" "$QP_T/qnoded-n1.log" || fail "qnoded did not put the held result back"
[ ! -e "$held/999.json" ] && [ ! -e "$held/998.result.tmp" ] || fail "a crash's leftovers stay in $held: $(ls -A "$held")"
[ ! -e "$jobs/999.json" ] || fail "a spec without a result was put back"
qp_wait "$c" completed failed
[ "$(qp_state "$c")" = completed ] || fail "job $c ended $(qp_state "$c"): $(qp_field "$c" reason)"
[ "$(grep -c ran "$w/c.runs")" = 1 ] || fail "job $c ran $(grep -c ran "$w/c.runs") times"
for _ in $(seq 100); do [ -z "$(ls -A "$held")" ] && break; sleep 0.05; done
[ -z "$(ls -A "$held")" ] || fail "copies left in $held after job $c's result was taken: $(ls -A "$held")"

note "qnoded stops with no job files: the tmpfs goes"
for _ in $(seq 100); do [ -z "$(ls -A "$jobs")" ] && break; sleep 0.05; done
[ -z "$(ls -A "$jobs")" ] || fail "job files left: $(ls -A "$jobs")"
qp_stop "$(qp_node_pid n1)"
[ "$(fstype "$jobs")" != tmpfs ] || fail "the tmpfs is still mounted after qnoded stopped"

note "a jobs directory with files is not mounted over"
touch "$jobs/stray"
qp_start_node n1
[ "$(fstype "$jobs")" != tmpfs ] || fail "a tmpfs was mounted over a directory with files"
grep -q "holds job files: not mounting" "$QP_T/qnoded-n1.log" || fail "no warning about the files"
rm -f "$jobs/stray"

note "a node whose state is on a tmpfs still gets a jobs tmpfs of its own"
mkdir -p "$QP_T/nodestate"
mount -t tmpfs -o size=16m,mode=0755 tmpfs "$QP_T/nodestate" || fail "cannot mount a tmpfs for the node's state"
QP_ATEXIT_LAST+=(unmount_nodestate)
unmount_nodestate() { umount -l "$QP_T/nodestate" 2>/dev/null; }
qp_start_node_apart n2
jobs2=$QP_T/nodestate/nodes/n2/jobs
mountpoint -q "$jobs2" || fail "no tmpfs mounted on $jobs2 (its state's tmpfs taken for its own)"
qp_stop "$(qp_node_pid n2)"
mountpoint -q "$jobs2" && fail "$jobs2 is still mounted after qnoded stopped"
grep -q "cannot unmount" "$QP_T/qnoded-n2.log" && fail "qnoded n2: $(grep "cannot unmount" "$QP_T/qnoded-n2.log")"
echo PASS
