#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Kept inodes in the jobs directory (issue 39, noded/jobfiles.c): a
# finished job's spec and result, root's alone, are kept as ".spare.N"
# files; the next job's spec and its result's temporary file are spares
# renamed back and rewritten. Its script and nodefile, which the user
# owned, never are. Every job's result is its own; at most 64 spares; a
# qnoded restart removes the ones it finds; a job that runs across the
# restart still reports.
. "$(dirname "$0")/lib.sh"
# Kept inodes are a disk's matter (on the default jobs tmpfs none are kept).
qp_setup "$(printf '[node]\njobs_tmpfs = no\n')"
qp_start_server
qp_start_node n1 0
w=$QP_T/work/qpuser1
jobs=$(find "$QP_T/state" -type d -name jobs -path '*n1*' | head -n 1)
[ -d "$jobs" ] || fail "no jobs directory for n1 under $QP_T/state"
spares() { find "$jobs" -maxdepth 1 -name '.spare.*' | sort; }
inodes() { local f; for f in "$@"; do stat -c %i "$f"; done | sort; }

a=$(echo 'echo a-out' | as qpuser1 qsub -N a -o a.out -e /dev/null) || fail "qsub a"
qp_wait "$a" completed
[ "$(cat "$w/a.out")" = a-out ] || fail "job a's output: $(cat "$w/a.out")"
mapfile -t s < <(spares)
[ "${#s[@]}" -ge 2 ] || fail "after job $a: ${#s[@]} spares, not its spec and result: $(ls -a "$jobs")"
for f in "${s[@]}"; do
	[ "$(stat -c '%u %a %h %F' "$f")" = "0 600 1 regular file" ] || [ "$(stat -c '%u %a %h %F' "$f")" = "0 600 1 regular empty file" ] ||
		fail "spare $f is $(stat -c '%u %a %h %F' "$f")"
done
compgen -G "$jobs/${a%%.*}.*" > /dev/null && fail "job $a's files are left: $(ls -a "$jobs")"
before=$(inodes "${s[@]}")
echo "after job $a: ${#s[@]} spares, inodes $(echo $before)"

# The next job takes them: its spec and result.tmp are kept inodes, its
# script is not. It waits to be told to go.
b=$(as qpuser1 qsub -N b -o b.out -e /dev/null <<JOB
echo b-out
for i in \$(seq 600); do [ -e $w/go ] && break; sleep 0.05; done
JOB
) || fail "qsub b"
n=${b%%.*}
qp_wait "$b" running
for _ in $(seq 200); do [ -e "$jobs/$n.json" ] && break; sleep 0.05; done
spec=$(stat -c %i "$jobs/$n.json") script=$(stat -c %i "$jobs/$n.sh") || fail "job $b has no spec or script: $(ls -a "$jobs")"
grep -qx "$spec" <<< "$before" || fail "job $b's spec (inode $spec) is not a kept one ($(echo $before))"
grep -qx "$script" <<< "$before" && fail "job $b's script (inode $script) is a kept inode"
[ "$(stat -c %u "$jobs/$n.sh")" = "$(id -u qpuser1)" ] || fail "job $b's script is not the user's"
grep -q '"jobid"' "$jobs/$n.json" || grep -q "$n" "$jobs/$n.json" || fail "job $b's spec is not its own: $(head -c 200 "$jobs/$n.json")"
if [ -e "$jobs/$n.result.tmp" ]; then
	grep -qx "$(stat -c %i "$jobs/$n.result.tmp")" <<< "$before" || fail "job $b's result.tmp is not a kept inode"
	echo "job $b: spec and result.tmp from spares"
fi
touch "$w/go"
qp_wait "$b" completed
grep -qx b-out "$w/b.out" || fail "job b's output: $(cat "$w/b.out")"
"$QP_BIN/qacct" --json -j "$b" | python3 -c '
import json, sys
r = json.load(sys.stdin)["record"]
assert r["exit_status"] == 0, r
assert r["jobid"] == int(sys.argv[1]), r
' "$n" || fail "job $b's record is not its own: $("$QP_BIN/qacct" --json -j "$b")"

# Many jobs, some failing: each gets its own exit status; spares stay <= 64.
arr=$(echo 'exit $((PBS_ARRAY_INDEX % 3))' | as qpuser1 qsub -J 1-90 -o /dev/null -e /dev/null) || fail "qsub -J"
for _ in $(seq 2400); do
	st=$(qp_state "$arr")
	[ "$st" = completed ] || [ "$st" = failed ] && break
	sleep 0.05
done
echo "array $arr: $st"
bad=0
for i in $(seq 1 90); do
	st=$("$QP_BIN/qacct" --json -j "${arr%%[^0-9]*}[$i]" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["record"]["exit_status"])' 2>/dev/null)
	[ "$st" = $((i % 3)) ] || { bad=$((bad + 1)); echo "subjob $i: exit status '$st', not $((i % 3))"; }
done
[ "$bad" = 0 ] || fail "$bad subjobs with another's or no exit status"
c=$(spares | wc -l)
[ "$c" -le 64 ] || fail "$c spares (more than 64)"
echo "90 subjobs, each its own exit status; $c spares"

# A restart: the spares a previous qnoded left go; a job across it reports.
long=$(as qpuser1 qsub -N across -o across.out -e /dev/null <<JOB
for i in \$(seq 600); do [ -e $w/go2 ] && break; sleep 0.05; done
echo across-out
JOB
) || fail "qsub across"
qp_wait "$long" running
qp_stop "$(qp_node_pid n1)"
[ "$(spares | wc -l)" -gt 0 ] || echo "note: no spares at the stop"
qp_start_node n1 0
c=$(spares | wc -l)
[ "$c" = 0 ] || fail "$c spares left after qnoded's restart"
touch "$w/go2"
qp_wait "$long" completed
grep -qx across-out "$w/across.out" || fail "the job across the restart: $(cat "$w/across.out")"
echo "restart: spares removed, job $long across it completed"
echo PASS
