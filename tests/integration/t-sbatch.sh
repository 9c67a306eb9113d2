#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sbatch as a Slurm user uses it, on a pool of two nodes: bad input refused
# in Slurm's words with no job made; #SBATCH directives (time forms,
# %-patterns, abbreviated options, the command line winning) recorded as
# qsub records them and seen in qstat; --parsable, --wrap, --array with a
# % limit, --dependency=afterok, --hold, --wait; the job's SLURM_*
# variables, across two nodes in Slurm's compressed forms; and a qsub job
# seeing them too.
. "$(dirname "$0")/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
qp_setup "
[queue debug]
walltime_max = 01:00:00"
qp_start_server
qp_start_node sn1 0
qp_start_node sn2 1
W=$QP_T/work/qpuser1

# njobs: how many jobs the pool has ever had (finished ones too).
njobs() { "$QP_BIN/qstat" -x --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
# refused EXPECTED ARGS...: sbatch ARGS fails with exactly the line EXPECTED.
refused() {
	local want=$1 out rc; shift
	out=$(as qpuser1 sbatch "$@" 2>&1 >/dev/null); rc=$?
	[ $rc -ne 0 ] || fail "sbatch $* succeeded"
	[ "$out" = "$want" ] || fail "sbatch $*: said '$out', expected '$want'"
}
# senv FILE NAME: the value of NAME in a file of `env` lines.
senv() { sed -n "s/^$2=//p" "$1" | head -n 1; }

cat > "$W/env.sh" <<'EOF'
#!/bin/bash
#SBATCH --job-name=fromdirective
#SBATCH --time=10:00
#SBATCH -o out-%j-%x-%u.txt  # a comment after the option
#SBATCH --ntasks=1 --cpus-per-task=1
echo start
#SBATCH --partition=nosuch
env | grep -E '^(SLURM_|PBS_JOBID|PBS_O_)' | sort
EOF
printf 'echo no interpreter line\n' > "$W/noshebang.sh"
printf '#!/bin/sh\r\n#SBATCH -t 5\r\ntrue\r\n' > "$W/dos.sh"
printf '#!/bin/sh\n#SBATCH referencing the manual\ntrue\n' > "$W/prose.sh"
printf '#!/bin/sh\n#SBATCH -n 1\n#SBATCH hetjob\n#SBATCH -n 2\ntrue\n' > "$W/het.sh"
printf '#!/bin/sh\n#SBATCH -n 1\n#SBATCH packjob\n#SBATCH -n 2\ntrue\n' > "$W/pack.sh"
printf '#!/bin/sh\n#SBATCH--time=abc\ntrue\n' > "$W/nob-bad.sh"
# no blank after the magic word: Slurm reads the rest all the same
printf '#!/bin/sh\n#SBATCH--time=5:00\n#SBATCH--job-name=nob\ntrue\n' > "$W/nob.sh"
chown qpuser1: "$W"/*.sh

note "bad input: one line in Slurm's words, non-zero, no job"
before=$(njobs)
refused "sbatch: unrecognized option '--bogus'" --bogus "$W/env.sh"
refused "sbatch: error: Invalid --time specification" --time=abc "$W/env.sh"
refused "sbatch: error: Invalid --time specification" -t 1-2-3 "$W/env.sh"
refused "sbatch: error: invalid partition specified: nosuch" -p nosuch "$W/env.sh"
refused "sbatch: option '--n' is ambiguous" --n=2 "$W/env.sh"
refused "sbatch: error: invalid node count \`0'" -N 0 "$W/env.sh"
refused "sbatch: error: invalid --array specification: 4-1" --array=4-1 "$W/env.sh"
refused "sbatch: error: Batch job submission failed: ngpus=1: no node of this pool has GPUs" \
	--gres=gpu:1 "$W/env.sh"
refused "sbatch: error: Batch job submission failed: ngpus=2: no node of this pool has GPUs" \
	-G 2 "$W/env.sh"
refused "sbatch: error: Batch job submission failed: ngpus=1: no node of this pool has GPUs" \
	--gpus-per-task=1 "$W/env.sh"
refused "sbatch: error: --gpus-per-socket=1: not supported by qpool (give --gpus-per-node, --gpus-per-task or --gres=gpu:N)" \
	--gpus-per-socket=1 "$W/env.sh"
out=$(as qpuser1 sbatch "$W/noshebang.sh" 2>&1); rc=$?
[ $rc -ne 0 ] && [[ "$out" == "sbatch: error: This does not look like a batch script"* ]] ||
	fail "a script without #! on line 1: rc $rc, '$out'"
refused 'sbatch: error: Batch script contains DOS line breaks (\r\n) instead of the UNIX ones (\n) it needs' "$W/dos.sh"
refused "sbatch: error: Invalid directive found in batch script: referencing" "$W/prose.sh"
refused "sbatch: error: Invalid --time specification" "$W/nob-bad.sh"
refused "sbatch: error: heterogeneous jobs (#SBATCH hetjob) are not supported by qpool; submit the components as separate jobs" "$W/het.sh"
refused "sbatch: error: heterogeneous jobs (#SBATCH packjob) are not supported by qpool; submit the components as separate jobs" "$W/pack.sh"
refused "sbatch: error: heterogeneous jobs (sbatch ... : ...) are not supported by qpool; submit the components as separate jobs" \
	-n 1 : -n 1 "$W/env.sh"
refused "sbatch: unrecognized option '--workdir=/tmp'" --workdir=/tmp "$W/env.sh"
refused "sbatch: unrecognized option '--workdir'" --workdir /tmp "$W/env.sh"
# --mincpus: a node with that many CPUs (these have one each), in Slurm's words
refused "sbatch: error: Batch job submission failed: Requested node configuration is not available (ncpus=40: more CPUs than any node has (the largest has 1))" \
	--exclusive --mincpus 40 "$W/env.sh"
[ "$(njobs)" = "$before" ] || fail "a refused sbatch left a job: $(njobs) jobs, expected $before"

note "a dependency on a job the pool never had is lifted and the job runs, as Slurm's"
out=$(as qpuser1 sbatch --parsable --dependency=afterok:999999 "$W/env.sh") || fail "sbatch -d afterok:999999: $out"
qp_wait "$out" completed
"$QP_BIN/scontrol" show job "$out" | grep -q "Dependency=(null)" ||
	fail "the lifted dependency is still shown: $("$QP_BIN/scontrol" show job "$out" | grep -o 'Dependency=[^ ]*')"
before=$(njobs)

note "directives, the command line over them (abbreviated), %-patterns"
out=$(as qpuser1 sbatch --job-n=cli "$W/env.sh") || fail "sbatch env.sh: $out"
[[ "$out" =~ ^Submitted\ batch\ job\ ([0-9]+)$ ]] || fail "sbatch printed '$out'"
id=${BASH_REMATCH[1]}
"$QP_BIN/qstat" -x | grep -q "^$id\.[^ ]* *cli " || fail "job $id not in qstat -x: $("$QP_BIN/qstat" -x)"
qp_wait "$id" completed
[ "$(qp_field "$id" Job_Name)" = cli ] || fail "Job_Name $(qp_field "$id" Job_Name), expected cli"
[ "$(qp_field "$id" Resource_List.walltime)" = 00:10:00 ] ||
	fail "walltime $(qp_field "$id" Resource_List.walltime), expected 00:10:00 (--time=10:00)"
[ "$(qp_field "$id" queue)" = batch ] || fail "a #SBATCH line after the first command was read"
f=$W/out-$id-cli-qpuser1.txt
[ -f "$f" ] || fail "no output $f: $(ls "$W")"
[ "$(senv "$f" SLURM_JOB_ID)" = "$id" ] || fail "SLURM_JOB_ID: $(cat "$f")"
[ "$(senv "$f" SLURM_JOBID)" = "$id" ] || fail "SLURM_JOBID: $(cat "$f")"
[ "$(senv "$f" SLURM_JOB_NAME)" = cli ] || fail "SLURM_JOB_NAME: $(cat "$f")"
[ "$(senv "$f" SLURM_JOB_PARTITION)" = batch ] || fail "SLURM_JOB_PARTITION: $(cat "$f")"
[ "$(senv "$f" SLURM_JOB_USER)" = qpuser1 ] || fail "SLURM_JOB_USER: $(cat "$f")"
[ "$(senv "$f" SLURM_JOB_UID)" = "$(id -u qpuser1)" ] || fail "SLURM_JOB_UID: $(cat "$f")"
[ "$(senv "$f" SLURM_SUBMIT_DIR)" = "$W" ] || fail "SLURM_SUBMIT_DIR: $(cat "$f")"
[ -n "$(senv "$f" SLURM_SUBMIT_HOST)" ] || fail "SLURM_SUBMIT_HOST: $(cat "$f")"
[ "$(senv "$f" SLURM_NNODES)" = 1 ] || fail "SLURM_NNODES: $(cat "$f")"
[ "$(senv "$f" SLURM_NTASKS)" = 1 ] || fail "SLURM_NTASKS: $(cat "$f")"
[ "$(senv "$f" SLURM_CPUS_PER_TASK)" = 1 ] || fail "SLURM_CPUS_PER_TASK: $(cat "$f")"
[ "$(senv "$f" SLURM_TASKS_PER_NODE)" = 1 ] || fail "SLURM_TASKS_PER_NODE: $(cat "$f")"
node=$(qp_field "$id" exec_host)
[ "$(senv "$f" SLURM_JOB_NODELIST)" = "$node" ] || fail "SLURM_JOB_NODELIST: $(cat "$f") (ran on $node)"
[ "$(senv "$f" SLURM_NODELIST)" = "$node" ] || fail "SLURM_NODELIST: $(cat "$f")"
[ -n "$(senv "$f" PBS_JOBID)" ] || fail "no PBS_JOBID beside the SLURM_* ones"
# PBS_O_* as qsub sets them: one origin for both front ends.
[ "$(senv "$f" PBS_O_SYSTEM)" = Linux ] || fail "PBS_O_SYSTEM: $(grep ^PBS_O_ "$f")"
[ "$(senv "$f" PBS_O_WORKDIR)" = "$W" ] || fail "PBS_O_WORKDIR: $(grep ^PBS_O_ "$f")"

note "the time forms, recorded as walltime"
for form in "90:00=01:30:00" "1:30:15=01:31:00" "0-2=02:00:00" "0-1:30=01:30:00" "0-0:0:45=00:01:00" "0:20=00:01:00" "1:30:01=01:31:00"; do
	id=$(as qpuser1 sbatch --parsable --hold -t "${form%%=*}" --wrap=true) || fail "sbatch -t ${form%%=*}"
	[ "$(qp_field "$id" Resource_List.walltime)" = "${form#*=}" ] ||
		fail "-t ${form%%=*}: walltime $(qp_field "$id" Resource_List.walltime), expected ${form#*=}"
	"$QP_BIN/qdel" "$id" >/dev/null || fail "qdel $id"
done

note "#SBATCH--opt (no blank) is read; a warning names the option given"
id=$(as qpuser1 sbatch --parsable --hold "$W/nob.sh") || fail "sbatch nob.sh"
[ "$(qp_field "$id" Resource_List.walltime)" = 00:05:00 ] ||
	fail "#SBATCH--time=5:00: walltime $(qp_field "$id" Resource_List.walltime), expected 00:05:00"
[ "$(qp_field "$id" Job_Name)" = nob ] || fail "#SBATCH--job-name=nob: Job_Name $(qp_field "$id" Job_Name)"
"$QP_BIN/qdel" "$id" >/dev/null || fail "qdel $id"
id=$(as qpuser1 sbatch --parsable --hold --comment hello --wrap=true 2>"$QP_T/comment.err") || fail "sbatch --comment hello"
[ "$(cat "$QP_T/comment.err")" = "sbatch: warning: --comment=hello: not enforced by qpool (ignored)" ] ||
	fail "--comment hello warned '$(cat "$QP_T/comment.err")'"
"$QP_BIN/qdel" "$id" >/dev/null || fail "qdel $id"

note "--parsable --wrap: the id alone; slurm-ID.out in the directory"
id=$(as qpuser1 sbatch --parsable --wrap="echo wrapped \$SLURM_JOB_ID") || fail "sbatch --wrap"
[[ "$id" =~ ^[0-9]+$ ]] || fail "--parsable printed '$id'"
qp_wait "$id" completed
qp_wait_file "$W/slurm-$id.out"
[ "$(cat "$W/slurm-$id.out")" = "wrapped $id" ] || fail "slurm-$id.out: $(cat "$W/slurm-$id.out")"
[ "$(qp_field "$id" Job_Name)" = wrap ] || fail "--wrap's job name $(qp_field "$id" Job_Name)"

note "--array=1-4%2: four tasks, at most two at once, each with its ids"
aid=$(as qpuser1 sbatch --parsable --array=1-4%2 -o arr-%A_%a.%j.out \
	--wrap='env | grep -E "^SLURM_(ARRAY|JOB_ID=)"; sleep 0.3') || fail "sbatch --array"
for i in $(seq 600); do
	n=$(ls "$W"/arr-"$aid"_*.out 2>/dev/null | wc -l)
	[ "$n" = 4 ] && [ "$(qp_state "$aid")" = completed ] && break
	running=$("$QP_BIN/qstat" -t 2>/dev/null | grep -c "^$aid\[[0-9]*\].* R ") || true
	[ "${running:-0}" -le 2 ] || fail "$running subjobs of $aid running at once (limit %2)"
	sleep 0.05
done
for x in 1 2 3 4; do
	f=$(ls "$W/arr-${aid}_$x".*.out 2>/dev/null)
	[ -f "$f" ] || fail "no arr-${aid}_$x.ID.out: $(ls "$W")"
	# %j is the task's own id, the SLURM_JOB_ID it sees.
	j=${f%.out}; j=${j##*.}
	[ "$(senv "$f" SLURM_JOB_ID)" = "$j" ] && [ "$j" != "$aid" ] || fail "$f: $(cat "$f")"
	[ "$(senv "$f" SLURM_ARRAY_JOB_ID)" = "$aid" ] || fail "$f: $(cat "$f")"
	[ "$(senv "$f" SLURM_ARRAY_TASK_ID)" = "$x" ] || fail "$f: $(cat "$f")"
	[ "$(senv "$f" SLURM_ARRAY_TASK_MIN)" = 1 ] && [ "$(senv "$f" SLURM_ARRAY_TASK_MAX)" = 4 ] &&
		[ "$(senv "$f" SLURM_ARRAY_TASK_COUNT)" = 4 ] && [ "$(senv "$f" SLURM_ARRAY_TASK_STEP)" = 1 ] ||
		fail "$f: $(cat "$f")"
done

note "--hold and --dependency=afterok: the second waits for the first"
a=$(as qpuser1 sbatch --parsable -H --wrap='exit 0') || fail "sbatch -H"
qp_wait "$a" held
b=$(as qpuser1 sbatch --parsable -d afterok:"$a" -o dep.out --wrap='echo after') || fail "sbatch -d"
sleep 0.5
st=$(qp_state "$b"); [ "$st" = held ] || [ "$st" = queued ] || fail "job $b ran before $a: $st"
as qpuser1 qrls "$a" || fail "qrls $a"
qp_wait "$b" completed
[ "$(cat "$W/dep.out")" = after ] || fail "dep.out: $(cat "$W/dep.out")"

note "--wait: sbatch ends with the job, with its exit status"
as qpuser1 sbatch -W --wrap='exit 3' >/dev/null; rc=$?
[ $rc = 3 ] || fail "sbatch --wait of a job exiting 3 returned $rc"

note "two nodes: the compressed node list, tasks per node"
id=$(as qpuser1 sbatch --parsable -N 2 --ntasks-per-node=1 -o two.out \
	--wrap='env | grep ^SLURM_ | sort') || fail "sbatch -N 2"
qp_wait "$id" completed
f=$W/two.out
[ "$(senv "$f" SLURM_JOB_NODELIST)" = "sn[1-2]" ] || fail "SLURM_JOB_NODELIST: $(cat "$f")"
[ "$(senv "$f" SLURM_NNODES)" = 2 ] || fail "SLURM_NNODES: $(cat "$f")"
[ "$(senv "$f" SLURM_JOB_NUM_NODES)" = 2 ] || fail "SLURM_JOB_NUM_NODES: $(cat "$f")"
[ "$(senv "$f" SLURM_NTASKS)" = 2 ] || fail "SLURM_NTASKS: $(cat "$f")"
[ "$(senv "$f" SLURM_TASKS_PER_NODE)" = "1(x2)" ] || fail "SLURM_TASKS_PER_NODE: $(cat "$f")"
[ "$(senv "$f" SLURM_NTASKS_PER_NODE)" = 1 ] || fail "SLURM_NTASKS_PER_NODE: $(cat "$f")"
[ "$(senv "$f" SLURM_CPUS_ON_NODE)" = 1 ] || fail "SLURM_CPUS_ON_NODE: $(cat "$f")"

note "a qsub job sees SLURM_* too, and an sbatch one shows in qstat as qsub's"
cat > "$W/q.sh" <<'EOF'
#!/bin/sh
env | grep ^SLURM_ | sort
EOF
chown qpuser1: "$W/q.sh"
id=$(as qpuser1 qsub -o "$W/q.out" -j oe "$W/q.sh") || fail "qsub"
qp_wait "$id" completed
f=$W/q.out
[ "$(senv "$f" SLURM_JOB_ID)" = "$id" ] || fail "qsub job's SLURM_JOB_ID: $(cat "$f")"
[ "$(senv "$f" SLURM_JOB_NAME)" = q.sh ] || fail "qsub job's SLURM_JOB_NAME: $(cat "$f")"
[ "$(senv "$f" SLURM_NTASKS)" = 1 ] || fail "qsub job's SLURM_NTASKS: $(cat "$f")"
note "a partition list: the first queue that takes the job"
id=$(as qpuser1 sbatch --parsable -p nosuch,debug --wrap=true) || fail "sbatch -p nosuch,debug"
[ "$(qp_field "$id" queue)" = debug ] || fail "-p nosuch,debug: queue $(qp_field "$id" queue)"
refused "sbatch: error: invalid partition specified: no1,no2" -p no1,no2 --wrap=true

note "%N, --chdir, --export=NONE with a list, --mem"
mkdir -p "$W/sub"; chown qpuser1: "$W/sub"
id=$(cd "$W" && runuser -u qpuser1 -- env QPOOL_CONF="$QPOOL_CONF" PATH="$QP_BIN:/usr/bin:/bin" BAR=no \
	sbatch --parsable -D sub --export=NONE,FOO=yes --mem=200M -o 'node-%N.out' \
	--wrap='pwd; echo "FOO=$FOO BAR=$BAR"; echo "$SLURM_MEM_PER_NODE"') || fail "sbatch -D --export"
qp_wait "$id" completed
node=$(qp_field "$id" exec_host)
f=$W/sub/node-$node.out
[ -f "$f" ] || fail "no $f: $(ls "$W/sub")"
[ "$(sed -n 1p "$f")" = "$W/sub" ] || fail "-D sub: ran in $(sed -n 1p "$f")"
[ "$(sed -n 2p "$f")" = "FOO=yes BAR=" ] || fail "--export=NONE,FOO=yes: $(sed -n 2p "$f")"
[ "$(sed -n 3p "$f")" = 200 ] || fail "--mem=200M: SLURM_MEM_PER_NODE $(sed -n 3p "$f")"

note "an enclosing job's SLURM_* do not pass: the new job's are its own"
id=$(cd "$W" && runuser -u qpuser1 -- env QPOOL_CONF="$QPOOL_CONF" PATH="$QP_BIN:/usr/bin:/bin" \
	SLURM_NTASKS=99 SLURM_JOB_ID=5 SLURM_CPUS_PER_TASK=7 MINE=kept \
	sbatch --parsable -o nested.out --wrap='echo "$SLURM_NTASKS $SLURM_JOB_ID ${SLURM_CPUS_PER_TASK:-unset} $MINE"') ||
	fail "sbatch inside a job"
qp_wait "$id" completed
[ "$(cat "$W/nested.out")" = "1 $id unset kept" ] || fail "nested sbatch's job saw '$(cat "$W/nested.out")'"

note "--mail-type: recorded as PBS's Mail_Points, said to be off without sendmail"
id=$(as qpuser1 sbatch --parsable -H --mail-type=END,FAIL --wrap=true 2>"$W/mail.err") || fail "sbatch --mail-type"
[ "$(qp_field "$id" Mail_Points)" = ae ] || fail "--mail-type=END,FAIL: Mail_Points $(qp_field "$id" Mail_Points)"
[ "$(cat "$W/mail.err")" = "sbatch: warning: --mail-type=END,FAIL: recorded; mail is off on this pool ([server] sendmail is not set)" ] ||
	fail "--mail-type without sendmail said '$(cat "$W/mail.err")'"
"$QP_BIN/qdel" "$id" >/dev/null || fail "qdel $id"
id=$(as qpuser1 sbatch --parsable -H --mail-type=END,TIME_LIMIT_90 -t UNLIMITED --wrap=true 2>"$W/mail.err") ||
	fail "sbatch --mail-type=END,TIME_LIMIT_90"
[ "$(qp_field "$id" Mail_Points)" = e ] || fail "--mail-type=END,TIME_LIMIT_90: Mail_Points $(qp_field "$id" Mail_Points)"
grep -qx "sbatch: warning: --mail-type=TIME_LIMIT_90: not enforced by qpool (mail is sent at begin, end and failure only)" "$W/mail.err" ||
	fail "--mail-type=TIME_LIMIT_90 said '$(cat "$W/mail.err")'"
note "--time=UNLIMITED: the queue's default walltime, said"
grep -qx "sbatch: warning: --time=UNLIMITED: not enforced by qpool (the job gets its queue's default walltime; give --time to run longer)" "$W/mail.err" ||
	fail "-t UNLIMITED said '$(cat "$W/mail.err")'"
[ -n "$(qp_field "$id" Resource_List.walltime)" ] || fail "-t UNLIMITED: no walltime"
"$QP_BIN/qdel" "$id" >/dev/null || fail "qdel $id"

note "--begin: the job waits for its time"
id=$(as qpuser1 sbatch --parsable --begin=now+1hour --wrap=true) || fail "sbatch --begin"
[ -n "$(qp_field "$id" Execution_Time)" ] || fail "--begin: no Execution_Time"
sleep 0.5
st=$(qp_state "$id"); [ "$st" != running ] && [ "$st" != completed ] || fail "--begin=now+1hour: job $st"
"$QP_BIN/qdel" "$id" >/dev/null || fail "qdel $id"
refused "sbatch: error: Invalid time specification yesterday-ish" --begin=yesterday-ish --wrap=true

note "--dependency=singleton: after the user's job of the same name"
a=$(as qpuser1 sbatch --parsable -H -J solo --wrap=true) || fail "sbatch -J solo -H"
b=$(as qpuser1 sbatch --parsable -J solo -d singleton -o solo.out --wrap='echo second') || fail "sbatch singleton"
sleep 0.5
st=$(qp_state "$b"); [ "$st" = held ] || [ "$st" = queued ] || fail "singleton $b ran before $a: $st"
as qpuser1 qrls "$a" || fail "qrls $a"
qp_wait "$b" completed
echo PASS
