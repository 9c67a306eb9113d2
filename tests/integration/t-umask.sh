#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The submitter's umask goes with the job: output files are created with
# it (umask 077: 0600, 002: 0664), and the job runs under it. The node
# file is not the job's: root's 0444 whatever the umask (t-nodefile).
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
qp_start_node n1

w=$QP_T/work/qpuser1
# run_with_umask MASK NAME: submits as qpuser1 under MASK; waits for it.
run_with_umask() {
	local id
	id=$(qp_seqid as qpuser1 sh -c "umask $1; qsub -N $2" <<<"touch $w/$2.made; stat -c %a \$PBS_NODEFILE > $w/$2.nodefile") ||
		fail "qsub umask $1"
	qp_wait "$id" completed failed
	[ "$(qp_state "$id")" = completed ] || fail "job $id: $(qp_field "$id" reason)"
	echo "$id"
}
mode() { stat -c %a "$1"; }

id=$(run_with_umask 077 strict)
for f in "$w/strict.o$id" "$w/strict.e$id" "$w/strict.made"; do
	[ "$(mode "$f")" = 600 ] || fail "umask 077: $f is $(mode "$f"), not 600"
done
[ "$(cat "$w/strict.nodefile")" = 444 ] || fail "umask 077: nodefile is $(cat "$w/strict.nodefile")"

id=$(run_with_umask 002 group)
for f in "$w/group.o$id" "$w/group.e$id" "$w/group.made"; do
	[ "$(mode "$f")" = 664 ] || fail "umask 002: $f is $(mode "$f"), not 664"
done
[ "$(cat "$w/group.nodefile")" = 444 ] || fail "umask 002: nodefile is $(cat "$w/group.nodefile")"

# 022: 0644, as before (a row stored without a umask launches with 022: test_jobstore).
id=$(run_with_umask 022 plain)
[ "$(mode "$w/plain.o$id")" = 644 ] || fail "umask 022: $(mode "$w/plain.o$id")"
echo "umask ok"
