#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The active server on a slow disk (docs/HA.md, "A slow store"): its
# lease is renewed by a commit every lease_renew (1 s). With qpoold's
# writes throttled for real (the blkio controller, 4 KiB a second) a
# renewal takes seconds, past when the next is due; that one waits a
# tenth of lease_renew after the last one's end, so the requests that
# waited are served between them. (Armed from the event loop's cached
# time, it was due the moment one ended and, going before requests,
# kept them waiting for as long as the disk stayed slow.)
. "$(dirname "$0")/lib.sh"
command -v sqlite3 > /dev/null || skip "no sqlite3"
# The commit throttled must be qpoold's own, to the store's file.
[ "${QP_STORE:-sqlite}" = sqlite ] || skip "QP_STORE=$QP_STORE: the lease's commit is not qpoold's write"
qp_setup
qp_disk_throttle
qp_start_server
qp_start_node n1
db=$QP_T/state/qpool.db
expires() { sqlite3 -readonly "$db" "SELECT expires FROM lease WHERE id = 1"; }
w=$QP_T/work/qpuser1
before=$(echo "echo ran > $w/before" | as qpuser1 qsub) || fail qsub
qp_wait "$before" completed

# A tick is one throttled commit here (the renewal, with the servers
# table's stamp in it: t-lease-one-commit), ~2 s on a quiet disk; it
# also waits for what other writers left in the journal, tens of
# seconds on a disk written hard (a guest's root file system unpacked
# beside the tests): the bounds below are minutes, and a pass takes
# ~15 s.
note "qpoold's writes throttled: two renewals seen, so one ended slow"
qp_disk_hold 4096
last=$(expires)
n=0
for ((i = 0; i < 6000 && n < 2; i++)); do
	e=$(expires)
	if [ "$e" != "$last" ]; then last=$e; n=$((n + 1)); fi
	sleep 0.05
done
[ $n -ge 2 ] || fail "the lease was renewed $n times in 300 s on the throttled disk"

note "a request is answered between renewals"
timeout 180 "$QP_BIN/qstat" -B > "$QP_T/qstat-B" 2>&1 ||
	fail "qstat -B had no answer in 180 s on the slow disk: $(cat "$QP_T/qstat-B")"
grep -q active "$QP_T/qstat-B" || fail "qstat -B shows no active server: $(cat "$QP_T/qstat-B")"
n=0
last=$(expires)
for ((i = 0; i < 6000 && n < 1; i++)); do
	[ "$(expires)" != "$last" ] && n=1
	sleep 0.05
done
[ $n = 1 ] || fail "no renewal in 300 s after the answer"

note "the throttle lifted: the server is still active and runs a job"
qp_disk_unhold
after=$(echo "echo ran > $w/after" | as qpuser1 qsub) || fail qsub
qp_wait "$after" completed
[ "$(cat "$w/after")" = ran ] || fail "job $after did not run"
echo "lease-slow-disk ok"
