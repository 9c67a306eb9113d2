#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cross-user protection: scripts and environments are private to owner and
# root; another user cannot change a job; -o into /etc (directly or through
# a symlink) fails cleanly, or is kept in the user's HOME, and writes
# nothing there; the state directory,
# store, node job directory and job files are tight; nothing in a job's
# environment (LD_PRELOAD, PATH, IFS) reaches what root runs; names and
# paths with blanks, quotes and shell syntax are taken literally.
. "$(dirname "$0")/lib.sh"
# A server name of this run's own: undelivered output is kept in the
# owner's HOME as ID.SERVER.OU, which another pool's job must not share.
qp_setup "[server]
name = qp$$"
sec=/etc/qpool-sec.$$
home1=$(getent passwd qpuser1 | cut -d: -f6)
trap 'rc=$?; rm -rf "$sec" "$sec".* /tmp/qpsec.$$ "$home1"/*.qp$$.OU "$home1"/*.qp$$.ER; (exit $rc); qp_cleanup' EXIT
qp_start_server
qp_start_node n1

w1=$QP_T/work/qpuser1 w2=$QP_T/work/qpuser2
st=$QP_T/state jobs=$QP_T/state/nodes/n1/jobs

note "scripts and environments: owner and root only"
# The job runs until the test is done with its files (bounded: 60 s), not
# for a time the checks below could outlast on a loaded machine.
id=$(echo "echo script-secret-xyzzy; i=0; while [ ! -e $QP_T/go ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done" |
	as qpuser1 qsub -v TOKEN=env-secret-plugh) || fail qsub
qp_wait "$id" running
for view in "qstat -f $id" "qstat -x -f" "qstat -f --json $id" "qstat -x -f --json" "qacct -j $id"; do
	out=$(as qpuser2 $view 2>&1)
	echo "$out" | grep -qE 'xyzzy|plugh' && fail "qpuser2 sees qpuser1's script or env with '$view'"
done
as qpuser2 qstat -f "$id" | grep -q "$id" || fail "qpuser2 cannot see that job $id exists (qstat shows all users' jobs)"
as qpuser1 qstat -f --json "$id" | grep -q xyzzy || fail "the owner cannot see the script"
as qpuser1 qstat -f --json "$id" | grep -q plugh || fail "the owner cannot see the env"
"$QP_BIN/qstat" -f --json "$id" | grep -q xyzzy || fail "root cannot see the script"
for cmd in qdel qhold qrls; do
	as qpuser2 $cmd "$id" 2>/dev/null && fail "qpuser2 could $cmd qpuser1's running job"
done
[ "$(qp_state "$id")" = running ] || fail "job $id changed state under another user's commands"

note "job files and the store"
[ "$(stat -c %a "$st")" = 711 ] || fail "state_dir mode $(stat -c %a "$st"), expected 711"
[ "$(stat -c %a "$jobs")" = 711 ] || fail "node job dir mode $(stat -c %a "$jobs"), expected 711"
as qpuser2 ls "$jobs" >/dev/null 2>&1 && fail "a user can list the node job directory"
as qpuser2 ls "$st" >/dev/null 2>&1 && fail "a user can list state_dir"
for f in "$st"/qpool.db*; do
	[ $(( $(stat -c %#a "$f") & 077 )) = 0 ] || fail "$f is mode $(stat -c %a "$f"): users may read the store"
	as qpuser1 cat "$f" >/dev/null 2>&1 && fail "a user can read $f"
done
[ "$(stat -c '%a %U' "$jobs/$id.sh")" = "500 qpuser1" ] || fail "job script is $(stat -c '%a %U' "$jobs/$id.sh"), expected 500 qpuser1"
as qpuser2 cat "$jobs/$id.sh" >/dev/null 2>&1 && fail "qpuser2 can read qpuser1's job script by name"
[ "$(stat -c '%a %U' "$jobs/$id.json")" = "600 root" ] || fail "launch spec is $(stat -c '%a %U' "$jobs/$id.json")"
as qpuser1 cat "$jobs/$id.json" >/dev/null 2>&1 && fail "a user can read the launch spec"
[ "$(stat -c %a "$QP_T/qpoold.sock")" = 666 ] || fail "socket mode $(stat -c %a "$QP_T/qpoold.sock")"
touch "$QP_T/go"
qp_wait "$id" completed

note "-o into /etc, directly and through symlinks"
echo "precious" > "$sec"; chmod 644 "$sec"; touch -d '2001-01-01' "$sec"
before=$(stat -c '%s %Y %a %U' "$sec")
ln -s "$sec" "$w1/out.link"
ln -s "$sec.new" "$w1/new.link"
chown -h qpuser1: "$w1/out.link" "$w1/new.link"
o1=$(echo 'echo owned' | as qpuser1 qsub -o "$sec" -j oe) || fail qsub
o2=$(echo 'echo owned' | as qpuser1 qsub -o "$w1/out.link" -j oe) || fail qsub
o3=$(echo 'echo owned' | as qpuser1 qsub -o "$w1/new.link" -e "$sec.err") || fail qsub
for o in "$o1" "$o2" "$o3"; do
	qp_wait "$o" failed completed
	[ "$(qp_state "$o")" = failed ] || fail "job $o with output into /etc ended $(qp_state "$o")"
	reason=$(qp_field "$o" reason)
	echo "job $o: $reason"
	echo "$reason" | grep -qi "permission denied\|cannot open" || fail "job $o failed without a clear reason: $reason"
done
# A new name in /etc: the user cannot create it, so the output is kept in
# their HOME, made by them, as PBS keeps undelivered output.
o4=$(echo 'echo kept' | as qpuser1 qsub -o "$sec.new" -j oe) || fail qsub
qp_wait "$o4" completed failed
[ "$(qp_state "$o4")" = completed ] || fail "job $o4 with -o $sec.new: $(qp_field "$o4" comment)"
[ "$(stat -c %U "$home1/$o4.qp$$.OU")" = qpuser1 ] && [ "$(cat "$home1/$o4.qp$$.OU")" = kept ] ||
	fail "-o $sec.new: not kept in $home1/$o4.qp$$.OU: $(qp_field "$o4" comment)"
[ "$(stat -c '%s %Y %a %U' "$sec")" = "$before" ] || fail "$sec changed: $(stat -c '%s %Y %a %U' "$sec")"
[ "$(cat "$sec")" = precious ] || fail "$sec content changed"
ls "$sec".* 2>/dev/null && fail "files created in /etc"

note "a job's environment does not reach root's processes"
m=/tmp/qpsec.$$
mkdir -p "$m/bin" && chmod 1777 "$m"
cat > "$m/preload.c" <<'C'
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void)
{
	char comm[64] = "?", path[128];
	FILE *f = fopen("/proc/self/comm", "r");
	if (f) { if (fgets(comm, sizeof(comm), f)) comm[strcspn(comm, "\n")] = 0; fclose(f); }
	snprintf(path, sizeof(path), "%s/marks", MARKDIR);
	f = fopen(path, "a");
	if (f) { fprintf(f, "preload uid=%d comm=%s\n", (int)getuid(), comm); fclose(f); }
}
C
sed -i '1i #include <string.h>' "$m/preload.c"
cc -shared -fPIC -DMARKDIR="\"$m\"" -o "$m/preload.so" "$m/preload.c" || fail "cannot build the preload library"
for c in sh bash sleep true cat env mkdir rm chown chmod id; do
	printf '#!/bin/sh\necho "path uid=$(/usr/bin/id -u) cmd=%s" >> %s/marks\nexec /usr/bin/%s "$@" 2>/dev/null || exec /bin/%s "$@"\n' "$c" "$m" "$c" "$c" > "$m/bin/$c"
	chmod 755 "$m/bin/$c"
done
touch "$m/marks"; chmod 666 "$m/marks"
chmod 755 "$m/preload.so"
# BASH_ENV only marks (a shim there would exec sh and end the job at
# once); the job runs until the test has looked at its gded.
printf 'echo "path uid=$(/usr/bin/id -u) cmd=bash_env" >> %s/marks\n' "$m" > "$m/bash_env"
chmod 644 "$m/bash_env"
# gded's own fixed environment (LD_BIND_NOW among it) is not the job's either.
envjob=$(printf 'i=0\nwhile [ ! -e "%s/go" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done\necho env-ok\necho "bind-now=${LD_BIND_NOW-unset}"\n' "$m" |
	as qpuser1 qsub -v "LD_PRELOAD=$m/preload.so,PATH=$m/bin:/usr/bin:/bin,IFS=/,BASH_ENV=$m/bash_env,ENV=$m/bin/sh,QPOOL_CONF=/nonexistent,LD_LIBRARY_PATH=$m") || fail qsub
qp_wait "$envjob" running
gpid=$(qp_wait_gded "$envjob") || exit 1
genv=$(tr '\0' '\n' < "/proc/$gpid/environ")
[ -n "$genv" ] || fail "cannot read the environment of gded $gpid"
echo "gded's environment: $(echo "$genv" | cut -d= -f1 | tr '\n' ' ')"
echo "$genv" | grep -qE "^(LD_PRELOAD|IFS|BASH_ENV|ENV|LD_LIBRARY_PATH)=|$m" && fail "the job's environment reached gded: $genv"
touch "$m/go"
qp_wait "$envjob" completed failed
grep -qx env-ok "$w1/STDIN.o$envjob" || fail "the job with a hostile environment did not run its script: $(cat "$w1/STDIN.o$envjob")"
grep -qx bind-now=unset "$w1/STDIN.o$envjob" || fail "gded's LD_BIND_NOW reached the job: $(cat "$w1/STDIN.o$envjob")"
echo "$genv" | grep -qx LD_BIND_NOW=1 || fail "gded runs without the LD_BIND_NOW qnoded gives it: $genv"
echo "marks:"; sed 's/^/  /' "$m/marks"
grep -qv "uid=$(id -u qpuser1) " "$m/marks" && fail "something other than the job's own processes ran with the job's environment"
grep -q "uid=0" "$m/marks" && fail "root ran something from the job's environment"
grep -q "comm=gded\|comm=qnoded" "$m/marks" && fail "gded or qnoded loaded the job's LD_PRELOAD"

note "names and paths with blanks, quotes, newlines and shell syntax"
weird='a b"$(touch pwned1)`touch pwned2`;touch pwned3 '\''q'\'' *'
wd="$w1/work dir \$(touch pwned4) 'x'"
mkdir -p "$wd" && chown qpuser1: "$wd"
n1=$(qp_seqid env -C "$wd" runuser -u qpuser1 -- env QPOOL_CONF="$QPOOL_CONF" "$QP_BIN/qsub" -N "$weird" <<<'echo literal-ok') || fail "qsub -N with shell syntax"
out="$w1/out dir \$(touch pwned5)/my out;\`touch pwned6\`.txt"
mkdir -p "$(dirname "$out")" && chown qpuser1: "$(dirname "$out")"
n2=$(echo 'echo literal-out' | as qpuser1 qsub -N plain -o "$out" -j oe) || fail "qsub -o with spaces"
nl=$(echo 'echo nl' | as qpuser1 qsub -N $'two\nlines' 2>&1) && nlok=1 || nlok=0
for j in "$n1" "$n2"; do qp_wait "$j" completed failed; done
[ "$(qp_state "$n1")" = completed ] || fail "job $n1 with an odd name: $(qp_field "$n1" reason)"
[ "$(qp_state "$n2")" = completed ] || fail "job $n2 with an odd -o: $(qp_field "$n2" reason)"
[ "$(cat "$wd/$weird.o$n1")" = literal-ok ] || fail "output of $n1 not at the literal path '$wd/$weird.o$n1'"
[ "$(cat "$out")" = literal-out ] || fail "output of $n2 not at the literal path '$out'"
[ "$(qp_field "$n1" Job_Name)" = "$weird" ] || [ "$(qp_field "$n1" job_name)" = "$weird" ] ||
	as qpuser1 qstat -f --json "$n1" | grep -qF 'touch pwned1' || fail "job name not kept literally"
if [ $nlok = 1 ]; then
	qp_wait "$nl" completed failed
	[ -f "$w1/two"$'\n'"lines.o$nl" ] || fail "name with a newline: no literal output file"
	echo "a name with a newline is accepted and used literally"
else
	echo "a name with a newline is refused: $nl"
fi
found=$(find "$QP_T" /tmp -maxdepth 4 -name 'pwned*' 2>/dev/null)
[ -z "$found" ] || fail "shell syntax in names or paths was executed: $found"
echo "security ok"
