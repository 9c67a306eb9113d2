#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Output files are opened as the user without following a symlink and
# never block: a FIFO given as -o/-e, or planted under the job's default
# output name in a shared sticky directory, fails the job at once with a
# clear reason (it does not hang before exec holding its CPUs); a symlink
# planted there is refused, not followed, so the owner's private file it
# points to is not truncated; another user's regular file planted there
# is refused, so it does not receive the job's output. -o /dev/null
# still works.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
qp_start_node n1

w1=$QP_T/work/qpuser1

# qp_failed_with ID PATTERN: the job fails (not hangs) with a reason matching PATTERN.
qp_failed_with() {
	qp_wait "$1" failed completed --timeout 20
	local st reason
	st=$(qp_state "$1"); reason=$(qp_field "$1" reason)
	[ "$st" = failed ] || fail "job $1 is $st, expected failed"
	echo "job $1: $reason"
	echo "$reason" | grep -qE "$2" || fail "job $1: reason '$reason' does not match '$2'"
}

note "-o to the user's own FIFO, nobody reading"
runuser -u qpuser1 -- mkfifo "$w1/out.fifo"
id=$(as qpuser1 qsub -o "$w1/out.fifo" -l walltime=00:05:00 <<<'echo hello') || fail "qsub fifo"
qp_failed_with "$id" "out.fifo: it is not a regular file"
[ -p "$w1/out.fifo" ] || fail "the FIFO was replaced"

note "-e to a FIFO"
runuser -u qpuser1 -- mkfifo "$w1/err.fifo"
id=$(as qpuser1 qsub -e "$w1/err.fifo" <<<'echo hello') || fail "qsub fifo -e"
qp_failed_with "$id" "err.fifo: it is not a regular file"

note "-o /dev/null is still a place for output"
id=$(as qpuser1 qsub -o /dev/null -e /dev/null <<<'echo hello') || fail "qsub /dev/null"
qp_wait "$id" completed failed
[ "$(qp_state "$id")" = completed ] || fail "-o /dev/null: $(qp_field "$id" reason)"
[ -c /dev/null ] || fail "/dev/null is no longer a device"

# A directory that is qpuser1's (so fs.protected_symlinks, where set,
# would follow a link in it) but world-writable and sticky, like a shared
# project directory: qpuser2 can plant names there.
shared=$QP_T/shared
mkdir "$shared"
chown qpuser1: "$shared"
chmod 1777 "$shared"
secret=$w1/secret
runuser -u qpuser1 -- sh -c "umask 077; echo 'private data' > '$secret'"

# qsub_in_shared NAME: submits a job named NAME from the shared directory
# as qpuser1; prints its id.
qsub_in_shared() {
	qp_seqid env -C "$shared" runuser -u qpuser1 -- env QPOOL_CONF="$QPOOL_CONF" \
		PATH="$QP_BIN:/usr/bin:/bin" qsub -N "$1" <<<'echo ran'
}

note "a symlink planted under the next job's default output name"
probe=$(qsub_in_shared probe) || fail "qsub probe"
qp_wait "$probe" completed failed
next=$((probe + 1))
runuser -u qpuser2 -- ln -s "$secret" "$shared/victim.o$next"
runuser -u qpuser2 -- ln -s "$secret" "$shared/victim.e$next"
id=$(qsub_in_shared victim) || fail "qsub victim"
[ "$id" = "$next" ] || fail "expected id $next, got $id"
qp_failed_with "$id" "victim.[oe]$next: it is a symbolic link"
[ "$(cat "$secret")" = "private data" ] || fail "the planted symlink's target was written: $(cat "$secret")"
[ -L "$shared/victim.o$next" ] || fail "the planted symlink was replaced"

note "a FIFO planted under the next job's default output name"
next=$((id + 1))
runuser -u qpuser2 -- mkfifo -m 666 "$shared/fifo.o$next"
id=$(qsub_in_shared fifo) || fail "qsub fifo in shared"
[ "$id" = "$next" ] || fail "expected id $next, got $id"
qp_failed_with "$id" "it is not a regular file|Permission denied"

note "a regular file planted under the next job's default output name"
next=$((id + 1))
runuser -u qpuser2 -- sh -c "umask 0; : > '$shared/leak.o$next'; : > '$shared/leak.e$next'"
id=$(qp_seqid env -C "$shared" runuser -u qpuser1 -- env QPOOL_CONF="$QPOOL_CONF" \
	PATH="$QP_BIN:/usr/bin:/bin" qsub -N leak <<<'echo the secret result') || fail "qsub leak"
[ "$id" = "$next" ] || fail "expected id $next, got $id"
qp_failed_with "$id" "leak.[oe]$next: it belongs to uid $(id -u qpuser2), in a shared sticky directory"
[ ! -s "$shared/leak.o$next" ] && [ ! -s "$shared/leak.e$next" ] ||
	fail "the job wrote into qpuser2's planted file: $(cat "$shared/leak.o$next")"

note "the owner's own existing file there is still reused"
runuser -u qpuser1 -- sh -c "echo old > '$shared/own.out'"
id=$(qp_seqid env -C "$shared" runuser -u qpuser1 -- env QPOOL_CONF="$QPOOL_CONF" \
	PATH="$QP_BIN:/usr/bin:/bin" qsub -N own -o "$shared/own.out" <<<'echo new') || fail "qsub own"
qp_wait "$id" completed failed
[ "$(qp_state "$id")" = completed ] || fail "job $id: $(qp_field "$id" reason)"
[ "$(cat "$shared/own.out")" = new ] || fail "own.out: $(cat "$shared/own.out")"

note "the node is free again: a plain job runs"
id=$(as qpuser1 qsub <<<'echo fine') || fail "qsub after"
qp_wait "$id" completed
echo "output files ok"
