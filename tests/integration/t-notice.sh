#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Notice before the end (issue 36's --signal): Moab's and Torque's
# `-l signal=SIG@SECONDS` and Slurm's `--signal=[B:]SIG[@SECONDS]` reach
# the job that long before its walltime, so it can save its work and end
# on its own: without B: every process of the job gets it, with B: the
# batch shell alone. A form qpool cannot honour is refused with one line
# and makes no job.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
qp_start_node n1
w=$QP_T/work/qpuser1

# A job that notes when it started, and when it (and a child it started)
# got USR1; it ends on its own once the shell has it, well before its
# walltime. Bounded: 600 turns of 0.1 s.
job() {  # NAME
	cat <<JOB
#!/bin/bash
date +%s.%N > $w/$1.start
( trap 'date +%s.%N > $w/$1.child; exit 0' USR1
  for i in \$(seq 600); do sleep 0.1; done ) &
trap 'date +%s.%N > $w/$1.got' USR1
for i in \$(seq 600); do
	[ -s $w/$1.got ] && { sleep 0.5; kill \$! 2>/dev/null; exit 0; }
	sleep 0.1
done
exit 3
JOB
}
lead() {  # NAME: seconds from start to the shell's signal
	python3 -c 'import sys; print(float(open(sys.argv[2]).read()) - float(open(sys.argv[1]).read()))' \
		"$w/$1.start" "$w/$1.got"
}

note "qsub -l signal=USR1@4 with a walltime of 6 s: USR1 at ~2 s, to the shell and its child"
a=$(job a | as qpuser1 qsub -l walltime=6 -l signal=USR1@4) || fail "qsub -l signal"
qp_wait "$a" completed --timeout 60
[ "$(qp_field "$a" Resource_List.signal)" = USR1@4 ] || fail "Resource_List.signal is '$(qp_field "$a" Resource_List.signal)'"
[ -s "$w/a.got" ] || fail "the batch shell got no USR1"
[ -s "$w/a.child" ] || fail "the job's child got no USR1 (without B: every process gets it)"
t=$(lead a)
note "USR1 came $t s after the start"
python3 -c 'import sys; t = float(sys.argv[1]); sys.exit(0 if 1.5 <= t < 5.5 else 1)' "$t" ||
	fail "USR1 came $t s after the start, not ~2 s (walltime 6, lead 4)"
[ "$(qp_field "$a" Exit_status)" = 0 ] || fail "the job did not end on its own: exit $(qp_field "$a" Exit_status)"

note "sbatch --signal=B:USR1@57 -t 1: the batch shell alone, ~3 s in"
b=$(job b | as qpuser1 "$QP_BIN/sbatch" --parsable -t 1 --signal=B:USR1@57) || fail "sbatch --signal"
qp_wait "$b" completed --timeout 60
[ -s "$w/b.got" ] || fail "the batch shell got no USR1"
[ ! -e "$w/b.child" ] || fail "B: reached the job's child too"
t=$(lead b)
note "USR1 came $t s after the start"
python3 -c 'import sys; t = float(sys.argv[1]); sys.exit(0 if 2.5 <= t < 30 else 1)' "$t" ||
	fail "USR1 came $t s after the start, not ~3 s (walltime 60, lead 57)"

note "a lead of the whole walltime sends nothing (Toil asks --signal=B:USR2@30 of 30 s jobs)"
d=$(printf '#!/bin/sh\ntrap "echo got > %s/d.got" USR2\nfor i in $(seq 20); do sleep 0.1; done\n' "$w" |
	as qpuser1 "$QP_BIN/sbatch" --parsable -p short --signal=B:USR2@30) || fail "sbatch -p short --signal"
qp_wait "$d" completed --timeout 60
[ ! -e "$w/d.got" ] || fail "a 30 s job got its @30 notice"

note "bad forms: one line, no job"
before=$("$QP_BIN/qstat" -x --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
out=$(job c | as qpuser1 "$QP_BIN/sbatch" --signal=R:USR1@30 2>&1) && fail "sbatch --signal=R: accepted"
[ "$out" = "sbatch: error: Invalid --signal specification" ] || fail "sbatch --signal=R: says '$out'"
out=$(job c | as qpuser1 "$QP_BIN/sbatch" --signal=USR1@x 2>&1) && fail "sbatch --signal=USR1@x accepted"
out=$(job c | as qpuser1 qsub -l signal=NOPE@10 2>&1) && fail "qsub -l signal=NOPE accepted"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "not one line: $out"
echo "$out" | grep -q "signal=NOPE@10: not \[B:\]SIGNAL\[@SECONDS\]" || fail "qsub -l signal=NOPE says '$out'"
after=$("$QP_BIN/qstat" -x --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[ "$before" = "$after" ] || fail "$((after - before)) jobs made by refused submissions"
echo PASS
