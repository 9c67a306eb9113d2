#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Real public #SBATCH scripts (tests/slurm-scripts/, origins in its
# SOURCES), submitted unmodified with sbatch on a pool with every partition
# they name and two GPUs on each node: each is accepted (or refused in one
# line: in Slurm's words where Slurm would refuse it, in qpool's where the
# pool is too small or qpool cannot honour it), its request is recorded as
# it asked (partition, time, name, GPUs, CPUs), and its job runs and sees
# SLURM_JOB_ID (an array: every task); what they wrote is checked where it
# shows a Slurm variable or pattern. Programs they call that the pool
# lacks (module, conda, nvidia-smi, their data) may make them exit
# non-zero: the job still ran. The jobs run side by side: one pass of
# submissions, then one of waits.
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
[queue main]
[queue development]
[queue excercise_hpc]
[queue defq]
[queue test]
[queue vgpu]
[queue serial_requeue]
[queue gpusmall]
[queue A6000]
[queue slurmgpu]
[queue instruction]
[queue red]
[queue alvis]
[queue week]
[queue debug]
[queue large]"
# Two GPUs (mknod'd, numbers no driver serves: t-gpu-sched.sh) on each
# node, so the scripts asking for GPUs run; the first of the model (MIG
# profile) csc-job_mahti.sh asks for by its gres type (docs/GPUS.md).
gd=$QP_T/dev
mkdir -p "$gd"
chmod 755 "$gd"
mknod -m 666 "$gd/gpu0" c 240 0 && mknod -m 666 "$gd/gpu1" c 240 1 || skip "cannot mknod"
printf '[node]\ngpus = a100_1g.5gb:%s/gpu0 %s/gpu1\n' "$gd" "$gd" >> "$QPOOL_CONF"
qp_start_server
# Two nodes of two CPUs each (the same two: a pool on one host).
qp_start_node c1 0-1
qp_start_node c2 0-1
# The reservations two scripts name (--reservation=reserv, and
# portgp-2025-tue: its site's of that day), theirs alone on nodes of their
# own, as their sites' are (docs/RESERVATIONS.md): one that does not
# exist is refused, as Slurm refuses it.
qp_start_node c3 0-1
qp_start_node c4 0-1
qp_start_node c5 0-1
"$QP_BIN/scontrol" create reservation ReservationName=reserv StartTime=now Duration=2:00:00 Nodes=c3,c4 \
	Users=qpuser1 >/dev/null || fail "create reservation reserv"
"$QP_BIN/scontrol" create reservation ReservationName=portgp-2025-tue StartTime=now Duration=2:00:00 Nodes=c5 \
	Users=qpuser1 >/dev/null || fail "create reservation portgp-2025-tue"
W=$QP_T/work/qpuser1

# Every bash script reads BASH_ENV first: it notes the job's id as the job
# saw it, without a byte of the script changed.
# Its SLURM_* variables go beside, in seen-env.
mkdir -p "$W/seen" "$W/seen-env"
cat > "$W/hook.sh" <<'HOOK'
[ -n "$SLURM_JOB_ID" ] && env | grep '^SLURM_' > "$HOME_SEEN-env/$SLURM_JOB_ID"
[ -n "$SLURM_JOB_ID" ] && echo "$SLURM_JOB_ID ${SLURM_ARRAY_JOB_ID:-}" > "$HOME_SEEN/$SLURM_JOB_ID"
HOOK
chown -R qpuser1: "$W"

# file | partition | walltime (- the queue's) | job name | run, run-sh (no
# BASH_ENV: /bin/sh), array N, cancel (seen running, then scancel: it
# would run for minutes), or the line sbatch refuses it with. Walltimes
# are Slurm's, in whole minutes rounded up (23:59:59 is 24:00:00). All are
# submitted first, then waited for: the pool runs them side by side.
ids=() files=() expects=()
# What a node offers its jobs (its node group's limit, as qpoold hears it
# in whole MiB), for the script whose --mem is above it: @NODEMEM@ in a
# line is that size as qpool prints it; on a node offering 40 GiB or more
# the script runs instead.
node_mib=$(sed -n 's/.*memory limit \([0-9]*\) MiB.*/\1/p' "$QP_T/qnoded-c1.log" | head -n 1)
[ -n "$node_mib" ] || fail "qnoded-c1.log names no memory limit"
if ((node_mib % 1024)); then node_mem=${node_mib}M; else node_mem=$((node_mib / 1024))G; fi
while IFS='|' read -r file part wall name expect; do
	[ -n "$file" ] || continue
	note "$file"
	if [[ $expect == *@NODEMEM@* ]]; then
		((node_mib >= 40 * 1024)) && expect=run || expect=${expect//@NODEMEM@/$node_mem}
	fi
	d=$W/${file%.*}
	# the directories their outputs name, as their users had them
	mkdir -p "$d/logs" "$d/log" "$d/output"
	cp "$CORPUS/$file" "$d/"
	cmp -s "$CORPUS/$file" "$d/$file" || fail "$file: copy differs"
	chown -R qpuser1: "$d"
	out=$(cd "$d" && runuser -u qpuser1 -- env QPOOL_CONF="$QPOOL_CONF" PATH="$QP_BIN:/usr/bin:/bin" \
		HOME_SEEN="$W/seen" BASH_ENV="$W/hook.sh" sbatch "$file" 2>"$d/sbatch.err"); rc=$?
	case $expect in
	run|run-sh|array*|cancel) ;;
	*)
		[ $rc -ne 0 ] || fail "$file: accepted as job '$out', expected refused"
		# one line, after any warnings
		[ "$(grep -v '^sbatch: warning: ' "$d/sbatch.err")" = "$expect" ] ||
			fail "$file: said '$(cat "$d/sbatch.err")', expected '$expect'"
		continue ;;
	esac
	[ $rc = 0 ] || fail "$file: refused: $(cat "$d/sbatch.err")"
	[[ "$out" =~ ^Submitted\ batch\ job\ ([0-9]+)$ ]] || fail "$file: sbatch printed '$out'"
	id=${BASH_REMATCH[1]}
	[ "$(qp_field "$id" queue)" = "$part" ] || fail "$file: queue $(qp_field "$id" queue), expected $part"
	[ "$wall" = - ] || [ "$(qp_field "$id" Resource_List.walltime)" = "$wall" ] ||
		fail "$file: walltime $(qp_field "$id" Resource_List.walltime), expected $wall"
	[ "$(qp_field "$id" Job_Name)" = "$name" ] || fail "$file: name '$(qp_field "$id" Job_Name)', expected '$name'"
	eval "ID_${file//[^a-zA-Z0-9]/_}=$id"
	ids+=("$id") files+=("$file") expects+=("$expect")
done <<'TABLE'
ohtar10-hello-world.sh|batch|00:05:00|hello-world|run
angavalos-test.sh|high|00:05:00|angavalos-test.sh|run
hivetransition-low_cpus.sh|low|50:00:00|hello_test|run
ltaulell-with_mail.sh|Lake-short|00:10:00|test|run
ltaulell-exclusive.sh|E5|00:10:00|test|run
brown-ccv-job-array.sh|batch|00:05:00|arrayjob|array 4
icrar-slurm_test02.sh|batch|-|icrar-slurm_test02.sh|run
ptal-turbo-slurm.sh|gpu|00:15:00|ptal-turbo-slurm.sh|run
calvinkrist-gpu_slurm_template.sh|main|24:00:00|<NAME>|run-sh
kala855-mpi_hello_world.sh|batch|00:10:00|mpi_hello_world|run
joshuaharris-array_test.sh|||-|sbatch: error: invalid --array specification: SRR8652107,SRR8652105,SRR8670674,SRR1974202
hyperqueue-localdisk.sh|||-|sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification (node resource nvme: no node of this pool has it)
uitno-timeout-cleanup.sh|batch|00:04:00|example|cancel
ryanmarten-hello_world_multinode.sh|development|00:01:00|hello-multinode|run
nrel-hostname.sh|||-|sbatch: error: Batch job submission failed: Requested node configuration is not available (a chunk of ncpus=4 is wider than any node (the largest has 2 CPUs))
marderman-submit_hpc.sh|||-|sbatch: error: Batch job submission failed: Requested node configuration is not available (ncpus=8: more CPUs than any node has (the largest has 2))
ctnvae-signal_interrupt.sh|||-|sbatch: error: Batch job submission failed: ncpus=128: above queue batch's limit of 64
dooglz-helloworld.sh|batch|00:05:00|helloworld|run
wistar-sub.sh|||-|sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.
wangcankun-example_job.sh|||-|sbatch: error: Batch job submission failed: Requested node configuration is not available (ncpus=8: more CPUs than any node has (the largest has 2))
tintedfireglass-slcr.sh|test|00:10:00|job_%j|run
mpicourse-run.sh|batch|00:05:00|mpicourse-run.sh|run
baard-test_array.sl|batch|00:01:00|test_array|array 5
erangvee-job_array.sh|batch|00:03:00|task_array|array 5
arcca-test_array_job.sh|batch|-|arraytest|array 5
muss-test_slurm_job.sh|batch|00:10:00|muss-test_slurm_job.sh|run
gaurikadiwan-slurm.sh|vgpu|-|gaurika_CIFAR|run
ratite-launch_run.sh|serial_requeue|02:00:00|ratite-launch_run.sh|run
heinzenlab-R_merge_wrapper.sh|batch|-|heinzenlab-R_merge_wrapper.sh|sbatch: error: Memory specification can not be satisfied: mem=40G: more memory than any node offers its jobs (the largest offers @NODEMEM@)
csc-job_mahti.sh|gpusmall|00:05:00|slurm-test|run
conreader-nvidia-smi.sh|A6000|-|conreader-nvidia-smi.sh|run
minyang-gpu_per_node.sh|slurmgpu|00:03:00|minyang-gpu_per_node.sh|run
mkdocstest-gpu_node_job.sh|||-|sbatch: error: Invalid generic resource (gres) specification (gpu_model=p100: no node of this pool has GPUs of that model)
thollfelder-test_job_echo.sh|||-|sbatch: error: Batch job submission failed: Invalid node name specified (unknown node node03: no node of this pool has that name (node list))
jasperpato-run.sh|batch|-|jp|run
tudasc-SLURM_Header.sh|||-|sbatch: error: Batch job submission failed: ncpus=104: above queue batch's limit of 64
kala855-omp_hello.sh|batch|00:10:00|omp_hello_world|run
xdong99-task4.sh|instruction|00:01:00|FirstSlurm|run
incompleter-snippet_1533.py|||-|sbatch: error: This does not look like a batch script: the first line must start with #! and the path to an interpreter (e.g. #!/bin/sh)
mambapoint-new_shell_c.sh|||-|sbatch: error: Batch job submission failed: Invalid node name specified (unknown node alvis3-07: no node of this pool has that name (node list))
dynretrieval-run_parallel_A.sh|week|-|dynretrieval-run_parallel_A.sh|array 12
stevekm-job.sh|debug|00:01:00|stevekm-job.sh|run
ltaulell-with_output.sh|Lake-short|00:10:00|test|run
TABLE

note "the jobs end (cancel: once seen running) and saw SLURM_JOB_ID"
# The ones to cancel, each once seen, all watched at once: one may hold
# CPUs another waits for.
pending=()
for i in "${!ids[@]}"; do [ "${expects[$i]}" = cancel ] && pending+=("$i"); done
for _ in $(seq 1200); do
	left=()
	for i in "${pending[@]}"; do
		id=${ids[$i]} file=${files[$i]} seen=$W/seen/${ids[$i]}
		if grep -qs "$id" "$seen"; then
			runuser -u qpuser1 -- env QPOOL_CONF="$QPOOL_CONF" "$QP_BIN/scancel" "$id" || fail "$file: scancel $id"
		else
			left+=("$i")
		fi
	done
	pending=("${left[@]}")
	[ ${#pending[@]} = 0 ] && break
	sleep 0.1
done
for i in "${pending[@]}"; do fail "${files[$i]}: job ${ids[$i]} not seen running: $(qp_state "${ids[$i]}")"; done
for i in "${!ids[@]}"; do
	id=${ids[$i]} file=${files[$i]} expect=${expects[$i]}
	qp_wait "$id" completed failed cancelled --timeout 120
	case $expect in
	run|cancel) [ "$(cut -d' ' -f1 "$W/seen/$id" 2>/dev/null)" = "$id" ] ||
		fail "$file: the job did not see SLURM_JOB_ID=$id ($(ls "$W/seen"))" ;;
	array*)
		n=$(grep -l " $id\$" "$W"/seen/* 2>/dev/null | wc -l)
		[ "$n" = "${expect#array }" ] || fail "$file: $n tasks saw SLURM_ARRAY_JOB_ID=$id" ;;
	esac
done

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
id=$ID_ryanmarten_hello_world_multinode_sh
for v in SLURM_JOB_NAME=hello-multinode SLURM_JOB_PARTITION=development SLURM_JOB_NUM_NODES=2 \
	SLURM_JOB_NODELIST='c[1-2]' 'SLURM_TASKS_PER_NODE=1(x2)' SLURM_NTASKS=2; do
	grep -qxF "$v" "$W/ryanmarten-hello_world_multinode/logs/hello-multinode_$id.out" ||
		fail "hello_world_multinode.sh: no $v in its env: $(cat "$W/ryanmarten-hello_world_multinode/logs/"*)"
done
# its two sruns across both nodes ran to the end (one host, two node names
# nothing resolves: the sister reaches node 0 over loopback)
f=$W/ryanmarten-hello_world_multinode/logs/hello-multinode_$id.out
for r in 0 1; do
	grep -q "^Hello world from .* (SLURM_PROCID: $r)\$" "$f" || fail "hello_world_multinode.sh: no rank $r: $(cat "$f")"
done
grep -q "^Job ended at " "$f" || fail "hello_world_multinode.sh: did not end: $(cat "$f")"
[ "$(qp_field "$id" Exit_status)" = 0 ] || fail "hello_world_multinode.sh: exit $(qp_field "$id" Exit_status): $(cat "$f")"
# --output and --error name one file: both streams in it, in order
id=$ID_dooglz_helloworld_sh
[ "$(grep -x -e 'Hello World!' -e 'goodbye world!' "$W/dooglz-helloworld/hello-$id.out" | tr '\n' ' ')" = \
	"Hello World! goodbye world! " ] || fail "slurm_helloworld.sh: hello-$id.out: $(cat "$W/dooglz-helloworld/hello-$id.out")"
# array tasks: their own index and their array's id, where they said so
id=$ID_arcca_test_array_job_sh
for x in 0 1 2 3 4; do
	f=$(ls "$W/arcca-test_array_job/output-${id}_${x}-"*.o 2>/dev/null)
	grep -qx "SLURM_ARRAY_TASK_ID $x" "$f" && grep -qx "SLURM_ARRAY_JOB_ID $id" "$f" ||
		fail "test_array_job.sh: task $x: $(ls "$W/arcca-test_array_job")"
	grep -qx "$x" "$W/baard-test_array/log/test_array_$x.out" ||
		fail "test_array.sl: task $x: $(ls "$W/baard-test_array/log")"
	[ -f "$W/erangvee-job_array/output/task_array_${ID_erangvee_job_array_sh}_$x.out" ] ||
		fail "job_array.sh: task $x: $(ls "$W/erangvee-job_array/output")"
done
# -n 4 with no --nodes: four tasks wherever there is room
grep -qx "#SBATCH -n 4" "$W/mpicourse-run/result_$ID_mpicourse_run_sh.out" ||
	fail "MPI-course run.sh: its cat \$0: $(cat "$W/mpicourse-run/result_$ID_mpicourse_run_sh.out")"
[ "$(qp_field "$ID_mpicourse_run_sh" Resource_List.ncpus)" = 4 ] || fail "MPI-course run.sh: ncpus $(qp_field "$ID_mpicourse_run_sh" Resource_List.ncpus)"
# the GPUs they asked for, held while they ran; a gres type is the GPUs'
# model: csc-job_mahti.sh's a100_1g.5gb is GPU 0, the one of that model
for v in muss_test_slurm_job_sh:1 gaurikadiwan_slurm_sh:1 csc_job_mahti_sh:1 minyang_gpu_per_node_sh:1 \
	conreader_nvidia_smi_sh: kala855_mpi_hello_world_sh:2; do
	id=ID_${v%:*}
	[ "$(qp_field "${!id}" Resource_List.ngpus)" = "${v#*:}" ] ||
		fail "${v%:*}: ngpus '$(qp_field "${!id}" Resource_List.ngpus)', expected ${v#*:}"
done
[ "$(qp_field "$ID_csc_job_mahti_sh" Resource_List.gpu_model)" = a100_1g.5gb ] ||
	fail "csc-job_mahti.sh: gpu_model '$(qp_field "$ID_csc_job_mahti_sh" Resource_List.gpu_model)'"
grep -qx "SLURM_JOB_GPUS=0" "$W/seen-env/$ID_csc_job_mahti_sh" ||
	fail "csc-job_mahti.sh: not on GPU 0, the a100_1g.5gb: $(cat "$W/seen-env/$ID_csc_job_mahti_sh")"
# -C is enforced now (docs/RESOURCES.md): no warning for it
grep -q "constraint" "$W/ctnvae-signal_interrupt/sbatch.err" &&
	fail "signal_interrupt.sh: a --constraint warning: $(cat "$W/ctnvae-signal_interrupt/sbatch.err")"
# --cpus-per-task for OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK: the job's CPUs
# and the variables, as the job saw them
id=$ID_kala855_omp_hello_sh
[ "$(qp_field "$id" Resource_List.ncpus)" = 2 ] || fail "omp_hello.sh: ncpus $(qp_field "$id" Resource_List.ncpus)"
for v in SLURM_CPUS_PER_TASK=2 SLURM_NTASKS=1 SLURM_CPUS_ON_NODE=2 SLURM_MEM_PER_CPU=100 SLURM_JOB_NAME=omp_hello_world; do
	grep -qx "$v" "$W/seen-env/$id" || fail "omp_hello.sh: no $v: $(cat "$W/seen-env/$id")"
done
# a blank line between directives does not end them: --output still read
[ "$(cat "$W/xdong99-task4/FirstSlurm.out")" = "$(hostname)" ] ||
	fail "task4.sh: FirstSlurm.out: $(cat "$W/xdong99-task4/FirstSlurm.out"; ls "$W/xdong99-task4")"
# %N: the node the batch script ran on
ls "$W"/ltaulell-with_output/c[12]."$ID_ltaulell_with_output_sh".test.out >/dev/null 2>&1 ||
	fail "with_output.sh: no NODE.$ID_ltaulell_with_output_sh.test.out: $(ls "$W/ltaulell-with_output")"
# every task of an array with trailing comments on its lines
for x in $(seq 0 11); do
	[ -f "$W/dynretrieval-run_parallel_A/slurm-${ID_dynretrieval_run_parallel_A_sh}_$x.out" ] ||
		fail "run_parallel_A.sh: task $x: $(ls "$W/dynretrieval-run_parallel_A")"
done
# the variables a script lists from sbatch(1), as Slurm sets them
id=$ID_stevekm_job_sh
for v in "SLURM_JOB_ID: $id" "SLURM_JOB_NAME: stevekm-job.sh" "SLURM_JOB_PARTITION: debug" \
	"SLURM_SUBMIT_DIR: $W/stevekm-job" "SLURM_PRIO_PROCESS: $(nice)"; do
	grep -qxF "$v" "$W/stevekm-job/slurm-$id.out" || fail "job.sh: no '$v': $(cat "$W/stevekm-job/slurm-$id.out")"
done
# a name with a %-pattern stays as written, as Slurm keeps it
grep -qx "Running gradient descent..." "$W/tintedfireglass-slcr/job_$ID_tintedfireglass_slcr_sh.out" ||
	fail "slcr.sh: job_$ID_tintedfireglass_slcr_sh.out: $(ls "$W/tintedfireglass-slcr")"
echo PASS
