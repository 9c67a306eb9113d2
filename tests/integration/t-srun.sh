#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# srun and salloc (issue 28) on two namespaced hosts of two CPUs each:
# inside an sbatch job, srun -n 4 --label prints 4 labelled lines, one per
# task, with Slurm's task variables (distinct SLURM_PROCID, SLURM_NODEID
# following the nodes); --multi-prog runs each task's line; a bad
# configuration, --het-group, ':' and more tasks than the job has are
# refused with one line before anything runs; a failing task's status is
# srun's; an unknown option gets Slurm's words. Outside a job, srun -n2
# makes a job, runs in it and returns the tasks' status; salloc runs a
# command in a new allocation that sees SLURM_JOB_ID and its node list,
# and the allocation ends with it; salloc alone gives a shell in one. A
# qsub -J array sees Slurm's array variables.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
qp_hosts_reexec "$@"
qp_setup
qp_hosts_init
qp_mpi_pool "r$$" 2
W=$QP_T/work/qpuser1
a=${nodes[0]} b=${nodes[1]}

# val FILE KEY: the value of KEY=... in a line of FILE
val() { sed -n "s/.*[ :]$2=\([^ ]*\).*/\1/p" "$1"; }

cat > "$W/steps.sh" <<'JOB'
#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=2 -t 5
srun -n 4 --label sh -c 'echo "procid=$SLURM_PROCID localid=$SLURM_LOCALID nodeid=$SLURM_NODEID step=$SLURM_STEP_ID ntasks=$SLURM_NTASKS stepn=$SLURM_STEP_NUM_TASKS node=$SLURMD_NODENAME host=$(hostname) nodes=$SLURM_STEP_NODELIST"' > label.out
echo "label=$?"
printf '0,2 echo prog-a %%t %%o\n# comment\n1,3 sh -c "echo prog-b %%t on $(hostname)"\n' > mp.conf
srun -n 4 --multi-prog mp.conf > multi.out
echo "multi=$?"
printf '0-2 echo a\n' > short.conf
srun -n 4 --multi-prog short.conf > short.out 2> short.err; echo "short=$?"
srun --het-group=0 touch het.ran 2> het.err; echo "het=$?"
srun -n1 touch colon.ran : -n1 true 2> colon.err; echo "colon=$?"
srun -n 5 touch five.ran 2> five.err; echo "five=$?"
srun -N1 sh -c 'echo "nodeid=$SLURM_NODEID step=$SLURM_STEP_ID"' > one.out; echo "one=$?"
srun -n 4 sh -c '[ "$SLURM_PROCID" = 2 ] && exit 3; exit 0' 2> exit3.err; echo "exit3=$?"
srun -n 2 -o 'task-%t-%N.out' sh -c 'echo "I am $SLURM_PROCID"'; echo "output=$?"
srun --bogus true 2> bogus.err; echo "bogus=$?"
srun -n1 --cpu-bind=cores sh -c 'echo bound' > cb.out 2> cb.err; echo "cb=$?"
srun -n1 --cpu-bind=q true 2> cbq.err; echo "cbq=$?"
first=$(head -n 1 "$PBS_NODEFILE") last=$(tail -n 1 "$PBS_NODEFILE")
srun -N1 -n1 -w "$first" -m block -K --overlap true 2> wfirst.err; echo "wfirst=$?"
srun -N1 -n1 -w "$last" sh -c 'echo "host=$(hostname) nodeid=$SLURM_NODEID list=$SLURM_STEP_NODELIST"' > wlast.out 2> wlast.err; echo "wlast=$?"
srun -n1 -x "$first" sh -c 'echo "host=$(hostname) list=$SLURM_STEP_NODELIST"' > xfirst.out 2> xfirst.err; echo "xfirst=$?"
srun -w "$last" -n 2 sh -c 'echo "host=$(hostname) procid=$SLURM_PROCID"' > wtwo.raw 2> wtwo.err; echo "wtwo=$?"; sort wtwo.raw > wtwo.out
srun -w nosuch-node -n1 touch wbad.ran 2> wbad.err; echo "wbad=$?"
srun -x "$first,$last" -n1 touch xall.ran 2> xall.err; echo "xall=$?"
srun -N1 -w "$first,$last" -n1 touch wmany.ran 2> wmany.err; echo "wmany=$?"
srun -n1 --hint=nomultithread -m cyclic true 2> hint.err; echo "hint=$?"
srun -n1 -t 5 --mem=10M true 2> steplim.err; echo "steplim=$?"
printf 'echo "script ran as $SLURM_PROCID of $SLURM_NTASKS"\n' | srun -n1 --cpu-bind=q -c 1 sh -s > stdin.out 2> stdin.err
echo "stdin=$?"
echo unread | srun -n2 sh -c 'cat; echo "task $SLURM_PROCID read"' | sort > stdin2.out
mkdir -p farm
for i in 1 2 3 4; do
	srun --exclusive -N1 -n1 sh -c 'echo "$(hostname) $SLURMD_NODENAME $SLURM_NODEID $SLURM_STEP_NODELIST" > farm/$SLURM_STEP_ID; sleep 1' &
done
wait
echo "farm=$(cat farm/* | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
mkdir -p sub
QX_KEEP=1 QX_DROP=1 srun -n2 --export=NONE,QX_KEEP,QX_SET=v -D sub sh -c 'echo "keep=${QX_KEEP:-} drop=${QX_DROP:-} set=$QX_SET pwd=$(pwd) id=$SLURM_JOB_ID"' > export.out; echo "export=$?"
JOB
id=$(as qpuser1 sbatch --parsable steps.sh) || fail "sbatch"
qp_wait "$id" completed failed --timeout 120
out=$W/slurm-$id.out
cat "$out"

note "srun --label: 4 tasks, each line labelled with its task, Slurm's task variables"
cat "$W/label.out"
grep -qx "label=0" "$out" || fail "srun --label failed"
[ "$(wc -l < "$W/label.out")" = 4 ] || fail "not 4 lines: $(cat "$W/label.out")"
for t in 0 1 2 3; do
	line=$(grep "^$t: procid=$t " "$W/label.out") || fail "no line labelled $t with SLURM_PROCID $t"
	n=$((t / 2)) host=${nodes[$((t / 2))]}
	grep -q " localid=$((t % 2)) nodeid=$n step=0 ntasks=4 stepn=4 node=$host host=$host nodes=$a,$b$" <<<"$line" ||
		fail "task $t's variables: $line"
done

note "--multi-prog: each task runs its line, %t and %o filled in"
sort "$W/multi.out"
grep -qx "multi=0" "$out" || fail "srun --multi-prog failed"
[ "$(sort "$W/multi.out" | tr '\n' ' ')" = "prog-a 0 0 prog-a 2 1 prog-b 1 on $a prog-b 3 on $b " ] ||
	fail "--multi-prog ran: $(cat "$W/multi.out")"
grep -qx "short=1" "$out" || fail "a configuration without task 3 was not refused"
grep -qx "srun: error: short.conf: Missing executable entry for task 3" "$W/short.err" ||
	fail "short.conf: $(cat "$W/short.err")"
[ ! -s "$W/short.out" ] || fail "a task ran from a refused configuration"

note "heterogeneous steps and too many tasks: refused, nothing run"
for k in het colon five; do
	grep -qx "$k=1" "$out" || fail "$k not refused"
	[ "$(wc -l < "$W/$k.err")" = 1 ] || fail "$k: not one line: $(cat "$W/$k.err")"
	[ ! -e "$W/$k.ran" ] || fail "$k ran a task"
done
grep -q "^srun: error: heterogeneous job steps (--het-group, ':') are not supported" "$W/het.err" ||
	fail "het: $(cat "$W/het.err")"
grep -q "^srun: error: Unable to create step for job $id: More processors requested than permitted" "$W/five.err" ||
	fail "five: $(cat "$W/five.err")"
grep -qx "one=0" "$out" && grep -qx "nodeid=0 step=[0-9]*" "$W/one.out" || fail "srun -N1: $(cat "$W/one.out")"
[ "$(val "$W/one.out" step)" -gt 0 ] || fail "steps are not numbered apart: $(cat "$W/one.out")"

note "a failing task's status is srun's; -o with %t and %N; Slurm's words for an unknown option"
grep -qx "exit3=3" "$out" || fail "a task's exit 3: $(grep exit3 "$out") $(cat "$W/exit3.err")"
grep -qx "output=0" "$out" || fail "srun -o"
grep -qx "I am 0" "$W/task-0-$a.out" && grep -qx "I am 1" "$W/task-1-$a.out" ||
	fail "srun -o task-%t-%N.out: $(ls "$W")"
grep -qx "bogus=1" "$out" || fail "srun --bogus did not fail"
[ "$(cat "$W/bogus.err")" = "srun: unrecognized option '--bogus'" ] || fail "--bogus: $(cat "$W/bogus.err")"

note "--cpu-bind: accepted, a warning where it asks for a binding; --export=NONE,list and -D"
grep -qx "cb=0" "$out" && grep -qx "bound" "$W/cb.out" || fail "--cpu-bind=cores did not run"
grep -qx "srun: warning: --cpu-bind=cores: not enforced by qpool .*" "$W/cb.err" || fail "--cpu-bind=cores: $(cat "$W/cb.err")"
# --cpu-bind=quiet asks for no binding: no warning.
grep -qx "cbq=0" "$out" && ! grep -q "warning" "$W/cbq.err" || fail "--cpu-bind=q: $(cat "$W/cbq.err")"
note "-w and -x choose the step's nodes among the job's; -m, --hint: applied where the layout keeps them, else a warning each, never dropped unsaid"
grep -qx "wfirst=0" "$out" && [ ! -s "$W/wfirst.err" ] || fail "srun -N1 -w FIRST (kept): $(cat "$W/wfirst.err")"
grep -qx "wlast=0" "$out" && [ ! -s "$W/wlast.err" ] && [ "$(cat "$W/wlast.out")" = "host=$b nodeid=0 list=$b" ] ||
	fail "srun -N1 -w LAST: $(cat "$W/wlast.out" "$W/wlast.err")"
grep -qx "xfirst=0" "$out" && [ ! -s "$W/xfirst.err" ] && [ "$(cat "$W/xfirst.out")" = "host=$b list=$b" ] ||
	fail "srun -x FIRST: $(cat "$W/xfirst.out" "$W/xfirst.err")"
grep -qx "wtwo=0" "$out" && [ ! -s "$W/wtwo.err" ] && [ "$(cat "$W/wtwo.out")" = "host=$b procid=0
host=$b procid=1" ] || fail "srun -w LAST -n 2: $(cat "$W/wtwo.out" "$W/wtwo.err")"
grep -qx "wbad=1" "$out" && [ "$(cat "$W/wbad.err")" = "srun: error: Unable to create step for job $id: Requested node configuration is not available (--nodelist: nosuch-node is not one of the job's nodes)" ] ||
	fail "srun -w NOT-THE-JOB'S: $(cat "$W/wbad.err")"
grep -qx "xall=1" "$out" && grep -qx "srun: error: .*(--exclude leaves none of the job's nodes)" "$W/xall.err" ||
	fail "srun -x ALL: $(cat "$W/xall.err")"
grep -qx "wmany=1" "$out" && grep -qx "srun: error: .*(-N 1 with 2 nodes in --nodelist)" "$W/wmany.err" ||
	fail "srun -N1 -w TWO: $(cat "$W/wmany.err")"
[ ! -e "$W/wbad.ran" ] && [ ! -e "$W/xall.ran" ] && [ ! -e "$W/wmany.ran" ] || fail "a refused srun -w/-x ran its task"
grep -qx "hint=0" "$out" && grep -qx "srun: warning: --hint=nomultithread: not enforced by qpool (ignored)" "$W/hint.err" &&
	grep -qx "srun: warning: --distribution=cyclic: not enforced by qpool .*" "$W/hint.err" || fail "srun --hint -m cyclic: $(cat "$W/hint.err")"
grep -qx "steplim=0" "$out" && [ "$(cat "$W/steplim.err")" = "srun: warning: --time: not enforced by qpool for a step (the job's walltime holds)
srun: warning: --mem: not enforced by qpool for a step (the job's memory holds)" ] || fail "srun -t --mem in a job: $(cat "$W/steplim.err")"
grep -qx "export=0" "$out" || fail "srun --export=NONE,... failed"
[ "$(grep -cx "keep=1 drop= set=v pwd=$W/sub id=$id" "$W/export.out")" = 2 ] || fail "--export, -D: $(cat "$W/export.out")"

note "srun's standard input goes to task 0 (snakemake's jobstep passes its script so), the others read /dev/null"
grep -qx "stdin=0" "$out" && [ "$(cat "$W/stdin.out")" = "script ran as 0 of 1" ] ||
	fail "srun -n1 sh -s: $(grep stdin= "$out") $(cat "$W/stdin.out" "$W/stdin.err")"
[ "$(cat "$W/stdin2.out" | tr '\n' ' ')" = "task 0 read task 1 read unread " ] || fail "srun -n2's input: $(cat "$W/stdin2.out")"

note "--exclusive one-node steps started together spread over the job's nodes (a task farm)"
grep -qx "farm= 2 $a $a 0 $a; 2 $b $b 0 $b;" "$out" || fail "srun --exclusive -N1 -n1 & x4: $(grep farm= "$out")"

note "outside a job: srun -n2 makes one, runs in it, returns its status"
out=$(as qpuser1 timeout 120 srun -n2 hostname 2>"$QP_T/o.err") || fail "srun -n2 hostname: $(cat "$QP_T/o.err")"
[ "$(wc -l <<<"$out")" = 2 ] || fail "srun -n2 hostname printed: $out"
grep -qvx "$a\|$b" <<<"$out" && fail "srun -n2 hostname: not the pool's hosts: $out"
# its warnings said once (not again by the srun inside the job it made);
# -t and --mem are the new job's, no step's
as qpuser1 timeout 120 srun -n1 -t 5 --mem=1G --hint=nomultithread true 2>"$QP_T/o.err" || fail "srun --hint outside: $(cat "$QP_T/o.err")"
[ "$(grep -v "^qexec: \|^srun: job [0-9]* " "$QP_T/o.err")" = "srun: warning: --hint=nomultithread: not enforced by qpool (ignored)" ] ||
	fail "srun -t --mem --hint outside a job said: $(cat "$QP_T/o.err")"
as qpuser1 timeout 120 srun -n2 sh -c 'exit 5' 2>"$QP_T/o.err"; rc=$?
[ $rc = 5 ] || fail "srun -n2 sh -c 'exit 5' exited $rc: $(cat "$QP_T/o.err")"

note "outside a job: refusals in Slurm's words, one line, no job"
before=$("$QP_BIN/qstat" -x --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
o=$(as qpuser1 srun -p nosuch -n1 touch "$W/nosuch.ran" 2>&1); rc=$?
[ $rc = 1 ] && [ "$o" = "srun: error: Unable to allocate resources: Invalid partition name specified" ] ||
	fail "srun -p nosuch: exit $rc: $o"
o=$(as qpuser1 salloc --bogus true 2>&1); rc=$?
[ $rc = 1 ] && [ "$o" = "salloc: unrecognized option '--bogus'" ] || fail "salloc --bogus: exit $rc: $o"
o=$(as qpuser1 salloc -t abc true 2>&1); rc=$?
[ $rc = 1 ] && [ "$o" = "salloc: error: Invalid --time specification" ] || fail "salloc -t abc: exit $rc: $o"
o=$(as qpuser1 srun -w "$b" -n1 touch "$W/nodelist.ran" 2>&1); rc=$?
[ $rc = 1 ] && [ "$o" = "srun: error: --nodelist: not supported by qpool's salloc and srun outside a job (sbatch takes it)" ] ||
	fail "srun -w outside a job: exit $rc: $o"
o=$(as qpuser1 srun -N 3 -n 3 touch "$W/three.ran" 2>&1); rc=$?
[ $rc != 0 ] && [ "$(wc -l <<<"$o")" = 1 ] && grep -q "^srun: error: Unable to allocate resources: " <<<"$o" ||
	fail "srun -N 3 on a pool of 2 nodes: exit $rc: $o"
[ "$("$QP_BIN/qstat" -x --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = "$before" ] ||
	fail "a refused srun or salloc made a job"
[ ! -e "$W/nosuch.ran" ] && [ ! -e "$W/three.ran" ] && [ ! -e "$W/nodelist.ran" ] || fail "a refused srun ran its task"

note "salloc COMMAND: a new allocation that the command sees, ended with it"
out=$(as qpuser1 timeout 120 salloc -N2 -n4 -t 10 sh -c 'echo "job=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST n=$SLURM_NNODES tasks=$SLURM_NTASKS"; srun -l hostname | sort; exit 7' 2>"$QP_T/s.err"); rc=$?
echo "$out"
[ $rc = 7 ] || fail "salloc exited $rc, not its command's 7: $(cat "$QP_T/s.err")"
sid=$(sed -n 's/^job=\([0-9]*\) .*/\1/p' <<<"$out")
[ -n "$sid" ] || fail "salloc's command saw no SLURM_JOB_ID: $out"
grep -qx "job=$sid nodes=$a,$b n=2 tasks=4" <<<"$out" || fail "salloc's allocation: $out"
[ "$(grep -c "^[0-3]: r$$[ab]$" <<<"$out")" = 4 ] || fail "srun in salloc: $out"
qp_wait "$sid" completed failed --timeout 60

note "salloc without a command: a shell in the allocation (qsub -I), ended by its end of input"
out=$(printf '%s\n' 'echo "shell job=$SLURM_JOB_ID n=$SLURM_NNODES"' 'exit 0' |
	as qpuser1 timeout 120 salloc -N2 -t 5 2>"$QP_T/i.err") || fail "salloc: $(cat "$QP_T/i.err") $out"
# the pty echoes the line typed and a prompt's escapes precede the answer
iid=$(tr -d '\r' <<<"$out" | grep -o "shell job=[0-9][0-9]* n=2" | sed 's/shell job=\([0-9]*\) .*/\1/' | head -n 1)
[ -n "$iid" ] || fail "salloc's shell: $out $(cat "$QP_T/i.err")"
qp_wait "$iid" completed --timeout 60

note "qsub -J: Slurm's array variables"
aid=$(as qpuser1 qsub -J 2-8:3 -o /dev/null -j oe <<'JOB'
env | grep '^SLURM_ARRAY' | sort > "$PBS_O_WORKDIR/array.$PBS_ARRAY_INDEX"
JOB
) || fail "qsub -J"
for i in 2 5 8; do qp_wait_file "$W/array.$i" 60; done
cat "$W/array.5"
for kv in SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=2 SLURM_ARRAY_TASK_MAX=8 SLURM_ARRAY_TASK_COUNT=3 \
	SLURM_ARRAY_TASK_STEP=3; do
	grep -qx "$kv" "$W/array.5" || fail "qsub -J 2-8:3 subjob 5: no $kv: $(cat "$W/array.5")"
done
echo PASS
