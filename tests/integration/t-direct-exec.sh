#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A script that is one plain command runs without its shell, and nothing
# a user can see tells the two apart: the same environment, the same exit
# status, the same errors; anything more than a plain command, and any
# variable that changes how bash runs one, keeps the shell
# (docs/ARCHITECTURE.md, "The job's shell, only when it needs one").
. "$(dirname "$0")/lib.sh"
# TMPDIRs under the test's own base: pools side by side on this host all
# run a job 1, 2, ... and name its TMPDIR pbs.ID.SERVER; on a shared
# /var/tmp another pool's would take the name, and this job get another.
qp_setup
mkdir -m 1777 "$QP_T/tmp" || fail "mkdir $QP_T/tmp"
printf '[node]\ntmpdir = %s\n' "$QP_T/tmp" >> "$QPOOL_CONF"
qp_start_server
qp_start_node n1

w=$QP_T/work/qpuser1

# The job's own process, gded's child (gded is the job's parent), once it
# runs the program at path $2: its pid.
job_proc() {
	local g i c
	g=$(qp_wait_gded "$1") || exit 1
	for ((i = 0; i < 600; i++)); do
		for c in $(cat /proc/"$g"/task/*/children 2>/dev/null); do
			[ "$(readlink "/proc/$c/exe" 2>/dev/null)" = "$2" ] && { echo "$c"; return 0; }
		done
		sleep 0.05
	done
	fail "job $1: no child of gded $g runs $2 (children: $(cat /proc/"$g"/task/*/children 2>/dev/null))"
}
finished() {
	qp_wait "$1" completed failed cancelled
	echo "$(qp_state "$1") $(qp_field "$1" Exit_status)"
}

sleep_exe=$(readlink -f "$(command -v sleep)")
bash_exe=$(readlink -f /bin/bash)

note "one command: the program is gded's child, no shell between"
id=$(as qpuser1 qsub -N plain <<<$'#!/bin/bash\n#PBS -l walltime=600\n# a comment\n\nsleep 600 # wait\n') || fail "qsub plain"
pid=$(job_proc "$id" "$sleep_exe") || exit 1
as qpuser1 qdel "$id" || fail "qdel $id"
qp_wait "$id" cancelled

note "an empty PATH entry is the job's directory, as the shell reads it"
cp "$sleep_exe" "$w/mysleep-t-direct" && chown qpuser1 "$w/mysleep-t-direct" || fail "cp sleep"
# Both starts: the spawned child's, and the forked one's (a job asking
# less than 16 MiB is forked: docs/ARCHITECTURE.md).
for mem in '' '-l mem=8mb'; do
	# shellcheck disable=SC2086 # $mem: no option, or one
	id=$(as qpuser1 qsub -N emptypath $mem -v PATH=:/usr/bin:/bin <<<'mysleep-t-direct 600') ||
		fail "qsub emptypath $mem"
	pid=$(job_proc "$id" "$w/mysleep-t-direct") || exit 1
	as qpuser1 qdel "$id" || fail "qdel $id"
	qp_wait "$id" cancelled
done

note "two commands: the shell runs them, as before"
id=$(as qpuser1 qsub -N twice <<<$'sleep 600\ntrue\n') || fail "qsub twice"
pid=$(job_proc "$id" "$bash_exe") || exit 1
as qpuser1 qdel "$id" || fail "qdel $id"
qp_wait "$id" cancelled

note "the same environment with and without the shell (bash, and dash by #!)"
for sh in '' '#!/bin/sh'; do
	a=$(as qpuser1 qsub -N envd -o "$w/env.direct" -j oe <<<"$sh"$'\nenv\n') || fail "qsub env"
	b=$(as qpuser1 qsub -N envs -o "$w/env.shell" -j oe <<<"$sh"$'\nenv\n:\n') || fail "qsub env, shell"
	[ "$(finished "$a")" = "completed 0" ] || fail "env job $a: $(finished "$a")"
	[ "$(finished "$b")" = "completed 0" ] || fail "env job $b: $(finished "$b")"
	# Everything but the job's name and its id wherever it appears.
	filter() { grep -v -e '^PBS_JOBNAME=' -e '^SLURM_JOB_NAME=' "$1" | sed -E "s#(=|/jobs/|pbs\.)$2(\.|\$)#\1ID\2#g" | sort; }
	d=$(diff <(filter "$w/env.direct" "$a") <(filter "$w/env.shell" "$b")) ||
		fail "${sh:-login shell}: the environments differ: $d"
	grep -q '^PWD=' "$w/env.direct" || fail "no PWD in the job's environment"
	if [ -z "$sh" ]; then
		grep -q '^SHLVL=1$' "$w/env.direct" || fail "bash: SHLVL is not 1: $(grep SHLVL "$w/env.direct")"
		grep -qx "_=$(readlink -f "$(command -v env)")\|_=$(command -v env)" "$w/env.direct" ||
			fail "bash: _ is $(grep '^_=' "$w/env.direct")"
	fi
done

note "exit status: the program's, and 128 + a signal nobody in qpool sent"
id=$(as qpuser1 qsub -N f <<<'false') || fail "qsub false"
[ "$(finished "$id")" = "failed 1" ] || fail "false: $(finished "$id")"
id=$(as qpuser1 qsub -N segv <<<'sleep 600') || fail "qsub segv"
pid=$(job_proc "$id" "$sleep_exe") || exit 1
kill -SEGV "$pid"
[ "$(finished "$id")" = "failed 139" ] || fail "a plain command dead of SIGSEGV: $(finished "$id"), the shell says 139"

note "a program not found, or not executable: the shell's own message and status"
id=$(as qpuser1 qsub -N nf -e "$w/nf.err" <<<'no-such-program-qpool-t') || fail "qsub nf"
[ "$(finished "$id")" = "failed 127" ] || fail "not found: $(finished "$id")"
grep -q 'no-such-program-qpool-t: command not found' "$w/nf.err" || fail "not found: stderr: $(cat "$w/nf.err")"
printf 'echo ran-by-a-shell\n' > "$w/noshebang"; chmod 755 "$w/noshebang"; chown qpuser1 "$w/noshebang"
id=$(as qpuser1 qsub -N ns -o "$w/ns.out" <<<"./noshebang") || fail "qsub ns"
[ "$(finished "$id")" = "completed 0" ] || fail "a file without #!: $(finished "$id")"
grep -qx ran-by-a-shell "$w/ns.out" || fail "a file without #! was not run by a shell: $(cat "$w/ns.out")"

note "BASH_ENV, an exported function: the shell runs, and they act"
printf 'echo from-bash-env > %s/bashenv.mark\n' "$w" > "$w/rc"; chown qpuser1 "$w/rc"
id=$(as qpuser1 qsub -N be -v BASH_ENV="$w/rc" <<<'true') || fail "qsub BASH_ENV"
[ "$(finished "$id")" = "completed 0" ] || fail "BASH_ENV job: $(finished "$id")"
grep -qx from-bash-env "$w/bashenv.mark" || fail "BASH_ENV was not read: the shell was skipped"
id=$(as_full qpuser1 env 'BASH_FUNC_hostname%%=() {  echo not-the-program
}' qsub -V -o "$w/fn.out" <<<'hostname') || fail "qsub exported function"
id=${id%%.*}
[ "$(finished "$id")" = "completed 0" ] || fail "exported function job: $(finished "$id")"
grep -qx not-the-program "$w/fn.out" || fail "the exported function did not run: $(cat "$w/fn.out")"
echo "direct exec ok"
