#!/bin/bash
# SPDX-License-Identifier: MIT
# PBS Pro and Torque scripts run as written: each of tests/pbs-scripts is
# submitted unchanged, must be accepted, run to completion and see the
# PBS environment. Prints the corpus figure: accepted, completed, and
# which PBS variables each job saw.
. "$(dirname "$0")/lib.sh"

# A server name of this run's own: a job's undelivered output is kept in
# its owner's HOME as ID.SERVER.OU, which another pool's job 1 must not share.
qp_setup "
[server]
name = qp$$"
home1=$(getent passwd qpuser1 | cut -d: -f6)
kept_remove() { rm -f "$home1"/*."qp$$".OU "$home1"/*."qp$$".ER; }
QP_ATEXIT+=(kept_remove)
[ ! -e /home/vcc ] || skip "/home/vcc exists here: missing-outdir.sh needs it absent"
qp_start_server
qp_start_node n1 0-1

w=$QP_T/work/qpuser1
mkdir -p "$w/logs" && chown qpuser1: "$w/logs"
accepted=0 completed=0 total=0
declare -A seen
for f in "$QP_TOP"/tests/pbs-scripts/*.sh "$QP_TOP"/tests/pbs-scripts/*.py; do
	b=$(basename "$f")
	total=$((total + 1))
	cp "$f" "$w/$b" && chown qpuser1: "$w/$b"
	extra=()
	[ "$b" = custom-prefix.sh ] && extra=(-C '#MYQ')
	if ! out=$(as_full qpuser1 qsub "${extra[@]}" "$b" 2>"$QP_T/err.$b"); then
		echo "REFUSED $b: $(cat "$QP_T/err.$b")"
		continue
	fi
	[[ $out =~ ^[0-9]+\.[A-Za-z0-9._-]+$ ]] || fail "$b: qsub printed '$out', not ID.server"
	accepted=$((accepted + 1))
	ids[$total]=$out
	names[$total]=$b
done
for i in "${!ids[@]}"; do
	id=${ids[$i]} b=${names[$i]}
	qp_wait "$id" completed failed --timeout 60
	st=$(qp_state "$id")
	if [ "$st" = completed ]; then
		completed=$((completed + 1))
	else
		echo "FAILED $b ($id): $(qp_field "$id" reason)"
	fi
done
echo "--- corpus: $total scripts, $accepted accepted as written, $completed ran to completion"
for e in "$w"/env.* /tmp/env.wd; do
	[ -f "$e" ] || continue
	echo "  ${e##*/env.}: $(cut -d= -f1 "$e" | tr '\n' ' ')"
done
[ "$accepted" = "$total" ] || fail "$((total - accepted)) of $total scripts refused"
[ "$completed" = "$accepted" ] || fail "$((accepted - completed)) jobs did not complete"

note "what the jobs saw"
grep -qx "PBS_NP=2" "$w/env.torque_ppn" || fail "nodes=1:ppn=2: $(cat "$w/env.torque_ppn")"
grep -qx "OMP_NUM_THREADS=1" "$w/env.pro_select" || fail "ompthreads=1: $(cat "$w/env.pro_select")"
grep -qx "NCPUS=2" "$w/env.pro_select" || fail "select ncpus=2"
grep -q "^PBS_JOBID=[0-9]*\.." "$w/env.pyjob" || fail "the python job's PBS_JOBID: $(cat "$w/env.pyjob")"
for v in PBS_O_HOST PBS_O_HOME PBS_O_LOGNAME PBS_O_PATH PBS_O_WORKDIR PBS_O_QUEUE PBS_JOBNAME \
	PBS_NUM_NODES PBS_NUM_PPN PBS_TASKNUM PBS_NODENUM PBS_JOBDIR PBS_QUEUE PBS_ENVIRONMENT TMPDIR; do
	grep -q "^$v=" "$w/env.torque_ppn" || fail "torque_ppn did not see $v"
done
grep -qx "PBS_ENVIRONMENT=PBS_BATCH" "$w/env.torque_ppn" || fail "PBS_ENVIRONMENT"
grep -q "^python 3 job" "$w"/pyjob.o* || fail "the #!/usr/bin/python3 script did not run under python: $(cat "$w"/pyjob.[oe]*)"
grep -q "posix shell job" "$w/output.txt" || fail "-o output.txt"
grep -q "run by -S" "$w"/shellflag.e* || fail "-j eo: both into the error file"
grep -q "gpu-free job" "$w"/logs/nogpu.o* || fail "-o logs/: $(ls "$w/logs")"
grep -q "in /tmp" "$w"/wd.o* || fail "-d /tmp: $(cat "$w"/wd.[oe]*)"
grep -qx "0027" "$w/umask.txt" || fail "-W umask=0027: $(cat "$w/umask.txt")"
grep -q "one default chunk, 1 cpu" "$w/plainsel.out" || fail "select=1 with -w: $(cat "$w/plainsel.out")"
note "NCI's -l wd, host:relative -o, -v of unset variables, an -o directory the node lacks"
[ "$(cat "$w/gadi-wd.txt")" = "$w" ] || fail "-l wd: ran in $(cat "$w/gadi-wd.txt"), not $w"
grep -qx "relative output, host localhost" "$w/logs/out.txt" || fail "-o localhost:logs/out.txt: $(ls "$w/logs")"
grep -qx "relative error, host localhost" "$w/logs/err.txt" || fail "-e localhost:logs/err.txt"
grep -qx "month= year= dataset=era5" "$w/climate.txt" || fail "-v month,year: $(cat "$w/climate.txt")"
for i in "${!names[@]}"; do [ "${names[$i]}" = missing-outdir.sh ] && vcc=${ids[$i]}; done
[ "$(qp_field "$vcc" Exit_status)" = 0 ] || fail "missing -o directory: Exit_status $(qp_field "$vcc" Exit_status)"
kept="$home1/${vcc%%.*}.qp$$.OU"
comment=$(qp_field "$vcc" comment)
[ "$comment" = "output undelivered (/home/vcc/output: No such file or directory): kept in $kept on n1" ] ||
	fail "missing -o directory: comment '$comment'"
grep -qx "vcc results: written where the user said" "$kept" || fail "kept output $kept: $(cat "$kept" 2>&1)"
[ "$(stat -c %U "$kept")" = qpuser1 ] || fail "kept output owned by $(stat -c %U "$kept")"
[ ! -e /home/vcc ] || fail "/home/vcc was made"
tmp=$(sed -n 's/^TMPDIR=//p' "$w/env.torque_ppn")
[ -n "$tmp" ] && [ ! -e "$tmp" ] || fail "TMPDIR $tmp left behind"

note "qstat -f shows what qpool records but does not enforce"
"$QP_BIN/qstat" -x --json | grep -q '"Account_Name": *"myaccount"' || fail "Account_Name not recorded"
for i in "${!names[@]}"; do [ "${names[$i]}" = pro-select.sh ] && pro=${ids[$i]}; done
full=$("$QP_BIN/qstat" -x -f "$pro")
for want in "Account_Name = myaccount" "project = myproject" "Resource_List.place = pack:excl" \
	"Resource_List.mpiprocs = 2" "Resource_List.select = 1:ncpus=2:mpiprocs=2:ompthreads=1:mem=200mb"; do
	grep -qF "$want" <<<"$full" || fail "qstat -f $pro lacks '$want': $full"
done
"$QP_BIN/qacct" --by account | grep -q "^myaccount " || fail "qacct --by account: $("$QP_BIN/qacct" --by account)"
"$QP_BIN/qacct" --by project | grep -q "^myproject " || fail "qacct --by project"

note "refusals are one line, in the user's terms"
out=$(as_full qpuser1 qsub -l nodes=2:ppn=4 <<<'true' 2>&1) && fail "nodes=2:ppn=4 accepted on one 2-CPU node"
[ "$(wc -l <<<"$out")" = 1 ] && grep -q "a chunk of ncpus=4 is wider than any node" <<<"$out" || fail "nodes=2: $out"
out=$(as_full qpuser1 qsub -l walltime=0 "$w/torque-ppn.sh" 2>&1) && fail "walltime=0 accepted"
grep -q "walltime=0" <<<"$out" || fail "walltime=0: $out"
out=$(as_full qpuser1 qsub -u qpuser2 <<<'true' 2>&1) && fail "-u another user accepted"
grep -q "jobs run as the user who submits them" <<<"$out" || fail "-u: $out"
out=$(as_full qpuser1 qsub -W group_list=root <<<'true' 2>&1) && fail "group_list=root accepted"
grep -q "not a member of group root" <<<"$out" || fail "group_list: $out"
out=$(as_full qpuser1 qsub -W depend=afterok:one <<<'true' 2>&1) && fail "depend=afterok:one accepted"
[ "$(wc -l <<<"$out")" = 1 ] && grep -q "not a job id" <<<"$out" || fail "depend: $out"
out=$(as_full qpuser1 qsub -z <<<'true') || fail "qsub -z"
[ -z "$out" ] || fail "qsub -z printed '$out'"

note "a planted symlink in TMPDIR is removed, its target kept"
keep=$QP_T/keep && mkdir -p "$keep" && echo precious > "$keep/file" && chmod -R 755 "$keep"
id=$(as_full qpuser1 qsub <<EOF2
ln -s $keep "\$TMPDIR/link"
mkdir -p "\$TMPDIR/a/b" && echo x > "\$TMPDIR/a/b/c"
echo "\$TMPDIR" > tmpdir.txt
stat -c %a:%U "\$TMPDIR" >> tmpdir.txt
EOF2
) || fail "qsub tmpdir"
qp_wait "$id" completed failed
[ "$(qp_state "$id")" = completed ] || fail "tmpdir job: $(qp_field "$id" reason)"
grep -qx "700:qpuser1" "$w/tmpdir.txt" || fail "TMPDIR mode/owner: $(cat "$w/tmpdir.txt")"
[ ! -e "$(head -1 "$w/tmpdir.txt")" ] || fail "TMPDIR not removed"
[ "$(cat "$keep/file")" = precious ] || fail "the symlink's target was removed"

note "a TMPDIR the job put a symlink in place of is unlinked, its target kept"
id=$(as_full qpuser1 qsub <<EOF2
mv "\$TMPDIR" "\$TMPDIR.moved" && ln -s $keep "\$TMPDIR" && echo "\$TMPDIR" > tmpdir2.txt
EOF2
) || fail "qsub tmpdir link"
qp_wait "$id" completed failed
[ "$(qp_state "$id")" = completed ] || fail "tmpdir link job: $(qp_field "$id" reason)"
t=$(cat "$w/tmpdir2.txt") && [ -n "$t" ] || fail "the TMPDIR link job did not run"
[ ! -e "$t" ] && [ ! -L "$t" ] || fail "the link in TMPDIR's place is left: $(ls -ld "$t")"
[ "$(cat "$keep/file")" = precious ] || fail "the target of the link in TMPDIR's place was touched"
rm -rf "$t.moved"
echo PASS
