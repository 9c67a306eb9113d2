#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Real public #SBATCH scripts (tests/slurm-scripts/, origins in its
# SOURCES), submitted unmodified with sbatch on a pool with every partition
# they name: each is accepted (or refused, in Slurm's words, as Slurm would
# refuse it), its request is recorded as it asked (partition, time, name),
# and its job runs and sees SLURM_JOB_ID. Programs they call that the pool
# lacks (module, srun, mpirun) may make them exit non-zero: the job still
# ran.
. "$(dirname "$0")/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
CORPUS=$(cd "$(dirname "$0")/../slurm-scripts" && pwd)
qp_setup "
[queue high]
[queue low]
walltime_max = 72:00:00
[queue Lake-short]
[queue E5]
[queue gpu]
[queue main]"
qp_start_server
# Two nodes of two CPUs each (the same two: a pool on one host).
qp_start_node c1 0-1
qp_start_node c2 0-1
W=$QP_T/work/qpuser1

# Every bash script reads BASH_ENV first: it notes the job's id as the job
# saw it, without a byte of the script changed.
mkdir -p "$W/seen"
cat > "$W/hook.sh" <<'HOOK'
[ -n "$SLURM_JOB_ID" ] && echo "$SLURM_JOB_ID ${SLURM_ARRAY_JOB_ID:-}" > "$HOME_SEEN/$SLURM_JOB_ID"
HOOK
chown -R qpuser1: "$W"

# file | partition | walltime (- the queue's) | job name | run, run-sh (no
# BASH_ENV: /bin/sh), array N, or the line sbatch refuses it with
while IFS='|' read -r file part wall name expect; do
	[ -n "$file" ] || continue
	note "$file"
	d=$W/${file%.sh}
	mkdir -p "$d/logs"
	cp "$CORPUS/$file" "$d/"
	cmp -s "$CORPUS/$file" "$d/$file" || fail "$file: copy differs"
	chown -R qpuser1: "$d"
	out=$(cd "$d" && runuser -u qpuser1 -- env QPOOL_CONF="$QPOOL_CONF" PATH="$QP_BIN:/usr/bin:/bin" \
		HOME_SEEN="$W/seen" BASH_ENV="$W/hook.sh" sbatch "$file" 2>"$d/sbatch.err"); rc=$?
	case $expect in
	run|run-sh|array*) ;;
	*)
		[ $rc -ne 0 ] || fail "$file: accepted as job '$out', expected refused"
		[ "$(cat "$d/sbatch.err")" = "$expect" ] || fail "$file: said '$(cat "$d/sbatch.err")', expected '$expect'"
		continue ;;
	esac
	[ $rc = 0 ] || fail "$file: refused: $(cat "$d/sbatch.err")"
	[[ "$out" =~ ^Submitted\ batch\ job\ ([0-9]+)$ ]] || fail "$file: sbatch printed '$out'"
	id=${BASH_REMATCH[1]}
	[ "$(qp_field "$id" queue)" = "$part" ] || fail "$file: queue $(qp_field "$id" queue), expected $part"
	[ "$wall" = - ] || [ "$(qp_field "$id" Resource_List.walltime)" = "$wall" ] ||
		fail "$file: walltime $(qp_field "$id" Resource_List.walltime), expected $wall"
	[ "$(qp_field "$id" Job_Name)" = "$name" ] || fail "$file: name '$(qp_field "$id" Job_Name)', expected '$name'"
	qp_wait "$id" completed failed --timeout 120
	case $expect in
	run) [ "$(cut -d' ' -f1 "$W/seen/$id" 2>/dev/null)" = "$id" ] ||
		fail "$file: the job did not see SLURM_JOB_ID=$id ($(ls "$W/seen"))" ;;
	array*)
		n=$(grep -l " $id\$" "$W"/seen/* 2>/dev/null | wc -l)
		[ "$n" = "${expect#array }" ] || fail "$file: $n tasks saw SLURM_ARRAY_JOB_ID=$id" ;;
	esac
done <<'TABLE'
ohtar10-hello-world.sh|batch|00:05:00|hello-world|run
angavalos-test.sh|high|00:05:00|angavalos-test.sh|run
hivetransition-low_cpus.sh|low|50:00:00|hello_test|run
ltaulell-with_mail.sh|Lake-short|00:10:00|test|run
ltaulell-exclusive.sh|E5|00:10:00|test|run
brown-ccv-job-array.sh|batch|00:05:00|arrayjob|array 4
icrar-slurm_test02.sh|batch|-|icrar-slurm_test02.sh|run
ptal-turbo-slurm.sh|gpu|00:15:00|ptal-turbo-slurm.sh|run
calvinkrist-gpu_slurm_template.sh|main|23:59:59|<NAME>|run-sh
kala855-mpi_hello_world.sh|||-|sbatch: error: Batch job submission failed: ngpus=2: no node of this pool has GPUs
joshuaharris-array_test.sh|||-|sbatch: error: invalid --array specification: SRR8652107,SRR8652105,SRR8670674,SRR1974202
hyperqueue-localdisk.sh|||-|sbatch: error: Invalid generic resource (gres) specification: --gres=nvme:1 (qpool's generic resources are GPUs: gpu[:TYPE]:N)
TABLE

note "what the scripts wrote, as Slurm would have had them"
grep -qx "SLURM_JOB_ID=[0-9]*" "$W/ltaulell-with_mail/env-Lake-short.txt" || fail "with_mail.sh: env has no SLURM_JOB_ID"
[ "$(head -n 1 "$W/ptal-turbo-slurm/slurm.out")" = "c[1-2]" ] ||
	fail "ptal-turbo-slurm.sh: SLURM_JOB_NODELIST '$(head -n 1 "$W/ptal-turbo-slurm/slurm.out")', expected c[1-2]"
ls "$W"/hivetransition-low_cpus/logs/hello_*_4294967294.out >/dev/null 2>&1 ||
	fail "low_cpus.sh: no logs/hello_ID_4294967294.out: $(ls "$W/hivetransition-low_cpus/logs")"
for x in 1 2 3 4; do
	grep -qx "Running job array number: $x" "$W"/brown-ccv-job-array/arrayjob-*_$x.out ||
		fail "job-array.sh: task $x's output: $(ls "$W/brown-ccv-job-array")"
done
[ -f "$W/calvinkrist-gpu_slurm_template/<OUTPUT>" ] || fail "gpu_slurm_template.sh: no <OUTPUT> file"
grep -q "setting nnodes to 1" "$W/ltaulell-exclusive/sbatch.err" ||
	fail "exclusive.sh: no warning for 1 task on 2 nodes: $(cat "$W/ltaulell-exclusive/sbatch.err")"
echo PASS
