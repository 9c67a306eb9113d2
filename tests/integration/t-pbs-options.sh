#!/bin/bash
# SPDX-License-Identifier: MIT
# PBS options that change when a job runs: -a (not before a time) and -p
# (order among the user's own waiting jobs); and -W group_list.
. "$(dirname "$0")/lib.sh"

qp_setup "
[queue one]
max_running = 1
walltime_default = 00:01:00"
# A stand-in for the site's sendmail: keeps each message it is given.
mkdir -m 1777 "$QP_T/mail"
printf '#!/bin/sh\n[ "$1" = -t ] || exit 2\ncat > "%s/mail/$(id -un).$$"\n' "$QP_T" > "$QP_T/sendmail"
chmod 755 "$QP_T/sendmail"
# A server name of this run's own: undelivered output is kept in the
# owner's HOME as ID.SERVER.OU, which another pool's job must not share.
printf '[server]\nsendmail = %s\nname = qp%s\n' "$QP_T/sendmail" "$$" >> "$QPOOL_CONF"
home1=$(getent passwd qpuser1 | cut -d: -f6)
kept_remove() { rm -f "$home1"/*."qp$$".OU "$home1"/*."qp$$".ER; }
QP_ATEXIT+=(kept_remove)
# Before any job: qnoded caches a user's groups for minutes.
groupadd -f qptestgrp && usermod -a -G qptestgrp qpuser1 || skip "cannot make a test group"
qp_start_server
qp_start_node n1 0-1

note "-p: a user's waiting jobs go by priority, then oldest first"
block=$(as qpuser1 qsub -q one -N block <<<'sleep 1') || fail "qsub block"
low=$(as qpuser1 qsub -q one -N low <<<'true') || fail "qsub low"
high=$(as qpuser1 qsub -q one -N high -p 10 <<<'true') || fail "qsub high"
for id in "$block" "$low" "$high"; do qp_wait "$id" completed --timeout 30; done
order=$(qp_dispatch_order one | cut -d' ' -f1 | tr '\n' ' ')
[ "$order" = "$block $high $low " ] || fail "dispatch order '$order', expected $block $high $low"

note "-a: the job waits until its time"
t=$(date -d '+3 seconds' +%s)
at=$(date -d "@$t" +%H%M.%S)
[ "$(date -d "@$t" +%H%M)" = 2359 ] && skip "too close to midnight for an -a test"
id=$(as qpuser1 qsub -a "$at" <<<'date +%s > started') || fail "qsub -a $at"
sleep 1
[ "$(qp_state "$id")" = queued ] || fail "job with -a $at is $(qp_state "$id") a second early"
qp_wait "$id" completed --timeout 30
s=$(cat "$QP_T/work/qpuser1/started")
[ "$s" -ge "$t" ] || fail "-a $at: started at $s, before $t"
"$QP_BIN/qstat" -x --json | grep -q "\"Execution_Time\": \"$t\"" || fail "Execution_Time not recorded"

note "-W group_list: the job runs with that group when the user is in it"
id=$(as qpuser1 qsub -W group_list=qptestgrp <<<'id -gn > group.txt') || fail "qsub group_list"
qp_wait "$id" completed failed
[ "$(qp_state "$id")" = completed ] || fail "group_list job: $(qp_field "$id" reason)"
[ "$(cat "$QP_T/work/qpuser1/group.txt")" = qptestgrp ] || fail "ran with group $(cat "$QP_T/work/qpuser1/group.txt")"
out=$(as qpuser2 qsub -W group_list=qptestgrp <<<'true' 2>&1) && fail "group_list accepted for a non-member"
grep -q "qpuser2 is not a member of group qptestgrp" <<<"$out" || fail "group_list: $out"
note "-m abe: mail at begin and end, sent as the user through [server] sendmail"
id=$(as qpuser1 qsub -m be -M qpuser1@localhost -N mailed <<<'exit 3') || fail "qsub -m be"
qp_wait "$id" completed failed
for ((i = 0; i < 100; i++)); do [ "$(ls "$QP_T/mail" | wc -l)" -ge 2 ] && break; sleep 0.05; done
ls "$QP_T"/mail/qpuser1.* >/dev/null 2>&1 || fail "no mail sent as qpuser1: $(ls -l "$QP_T/mail")"
cat "$QP_T"/mail/* | grep -q "^To: qpuser1@localhost" || fail "mail not to -M: $(cat "$QP_T"/mail/*)"
cat "$QP_T"/mail/* | grep -q "execution begins" || fail "no begin mail"
cat "$QP_T"/mail/* | grep -q "execution ended, exit status 3" || fail "no end mail: $(cat "$QP_T"/mail/*)"
out=$(as qpuser1 qsub -m n <<<'true' 2>&1 >/dev/null) || fail "qsub -m n"
[ -z "$out" ] || fail "-m n warned: $out"

note "-v: a variable not set at qsub is passed empty, one set keeps its value"
id=$(as_full qpuser1 env -u year month=07 qsub -v month,year <<<'echo "month=${month-unset} year=${year-unset}" > vars.txt') ||
	fail "qsub -v month,year with year unset"
qp_wait "$id" completed failed
grep -qx "month=07 year=" "$QP_T/work/qpuser1/vars.txt" || fail "-v month,year: $(cat "$QP_T/work/qpuser1/vars.txt")"

note "-o and -e in a directory the node lacks: the job runs, its status is kept, the output kept in HOME, mailed"
gone=/nonexistent-qp$$
rm -f "$QP_T"/mail/*
id=$(as qpuser1 qsub -N lost -o "$gone/out" -e "$gone/err" <<<'echo to out; echo to err >&2; exit 3') || fail "qsub -o $gone/out"
qp_wait "$id" completed failed
[ "$(qp_field "$id" Exit_status)" = 3 ] || fail "undelivered: Exit_status $(qp_field "$id" Exit_status)"
comment=$(qp_field "$id" comment)
kept="$home1/$id.qp$$"
want="output undelivered ($gone/out: No such file or directory): kept in $kept.OU on n1; error undelivered ($gone/err: No such file or directory): kept in $kept.ER on n1"
[ "$comment" = "$want" ] || fail "undelivered: comment '$comment'"
[ "$(cat "$kept.OU")" = "to out" ] && [ "$(cat "$kept.ER")" = "to err" ] || fail "kept files: $(cat "$kept".* 2>&1)"
[ "$(stat -c %U "$kept.OU")" = qpuser1 ] || fail "kept output owned by $(stat -c %U "$kept.OU")"
[ ! -e "$gone" ] || fail "$gone was made"
for ((i = 0; i < 100; i++)); do grep -ql "undelivered" "$QP_T"/mail/* 2>/dev/null && break; sleep 0.05; done
m=$(grep -l "undelivered" "$QP_T"/mail/* 2>/dev/null | head -1)
[ -n "$m" ] || fail "no mail about the undelivered output: $(cat "$QP_T"/mail/* 2>/dev/null)"
[ "${m##*/}" != "${m##*/qpuser1.}" ] || fail "the mail was not sent as qpuser1: $m"
grep -qF "kept in $kept.OU on n1" "$m" || fail "the mail does not say where: $(cat "$m")"

note "an output file the user may not write stays refused, not kept"
touch "$QP_T/work/qpuser1/rootfile" && chmod 644 "$QP_T/work/qpuser1/rootfile"
id=$(as qpuser1 qsub -o rootfile -j oe <<<'true') || fail "qsub -o rootfile"
qp_wait "$id" completed failed
[ "$(qp_state "$id")" = failed ] || fail "-o a root file: $(qp_state "$id")"
grep -q "cannot open .*rootfile: Permission denied" <<<"$(qp_field "$id" comment)" || fail "rootfile: $(qp_field "$id" comment)"
[ ! -e "$home1/$id.qp$$.OU" ] || fail "a refused output was kept"
echo PASS
