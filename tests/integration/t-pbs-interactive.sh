#!/bin/bash
# SPDX-License-Identifier: MIT
# qsub -I: a shell on the node, inside the job's fence, on a pty that
# qsub relays; it sees PBS_ENVIRONMENT=PBS_INTERACTIVE and a terminal.
. "$(dirname "$0")/lib.sh"

qp_setup
qp_start_server
qp_start_node n1 0-1

note "commands typed into qsub -I run in the job"
out=$(printf '%s\n' 'echo "env=$PBS_ENVIRONMENT tty=$(tty >/dev/null && echo yes) n=$((6 * 7))"' \
	'cat /proc/self/cgroup | grep -c qpool' 'exit 0' |
	as_full qpuser1 timeout 60 qsub -I -l walltime=00:01:00 2>"$QP_T/err") ||
	fail "qsub -I: $(cat "$QP_T/err") $out"
echo "$out" | tail -5
grep -q "env=PBS_INTERACTIVE tty=yes n=42" <<<"$out" || fail "the shell's output did not come back: $out"
grep -q "waiting for job [0-9]*\.[^ ]* to start" "$QP_T/err" || fail "no waiting line: $(cat "$QP_T/err")"
id=$(sed -n 's/.*waiting for job \([0-9]*\)\..*/\1/p' "$QP_T/err")
qp_wait "$id" completed failed
[ "$(qp_state "$id")" = completed ] || fail "interactive job $id: $(qp_field "$id" reason)"
[ ! -e "$QP_T/state/nodes/n1/jobs/$id.pty" ] || fail "the terminal socket was left behind"

note "end of input ends the shell"
out=$(printf 'echo still-here\n' | as_full qpuser1 timeout 60 qsub -I 2>/dev/null) || fail "qsub -I at EOF"
grep -q "^still-here" <<<"$(tr -d '\r' <<<"$out")" || fail "EOF: $out"
echo PASS
