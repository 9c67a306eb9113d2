#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Open OnDemand's Slurm and PBS Pro adapters, unmodified (ood_core's own
# slurm.rb and pbspro.rb, pinned in tests/integration/ood/ with their
# MIT licence and origin; OOD_CORE_LIB=DIR runs a checkout's lib/
# instead), run under Debian's ruby as the dashboard runs them, as
# qpuser1 beside a job of qpuser2: submit (the id inside the job is the
# one printed), read, hold, release, list by owner and all, the cluster,
# its nodes and queues, the user's accounts, delete (again: no error),
# an unknown id (done), and Slurm's history; every value the adapter
# parses checked against qpool's own qstat -f -F json and pbsnodes.
. "$(dirname "$0")/lib.sh"
command -v ruby >/dev/null || skip "no ruby (Debian's ruby package; make deps installs it)"
OOD_LIB=${OOD_CORE_LIB:-$QP_TOP/tests/integration/ood/lib}
[ -f "$OOD_LIB/ood_core/job/adapters/slurm.rb" ] || fail "no ood_core adapters in $OOD_LIB"
qp_setup
qp_start_server
node=${QP_NODE_PREFIX}n1
qp_start_node "$node" 0-1
chmod -R a+rX "$OOD_LIB/.." 2>/dev/null
cp "$QP_TOP/tests/integration/ood/drive.rb" "$QP_T/drive.rb" && chmod a+r "$QP_T/drive.rb"

# drive KIND PEER: the portal as qpuser1, the other user's job PEER.
drive() {
	local out rc
	out=$(cd "$QP_T/work/qpuser1" && timeout -k 5 240 runuser -u qpuser1 -- env -i QPOOL_CONF="$QPOOL_CONF" \
		HOME="$QP_T/work/qpuser1" USER=qpuser1 LOGNAME=qpuser1 PATH="$QP_BIN:/usr/bin:/bin" LANG=C.UTF-8 \
		ruby "$QP_T/drive.rb" "$OOD_LIB" "$1" "$QP_BIN" "$2" "$node" 2>&1); rc=$?
	echo "$out"
	[ $rc = 0 ] || fail "Open OnDemand's $1 adapter failed (exit $rc)"
	echo "$out" | grep -qx "ok $1" || fail "Open OnDemand's $1 adapter did not finish"
}

note "Slurm adapter"
peer=$(as qpuser2 sbatch --parsable -J peer -t 10:00 --wrap 'sleep 300') || fail "sbatch peer"
qp_wait "$peer" running
drive slurm "$peer"
as qpuser2 scancel "$peer" || fail "scancel peer"
qp_wait "$peer" cancelled

note "PBS Pro adapter"
peer=$(as qpuser2 qsub -N peer -l walltime=00:10:00 <<<'sleep 300') || fail "qsub peer"
qp_wait "${peer%%.*}" running
drive pbspro "${peer%%.*}"
as qpuser2 qdel "$peer" || fail "qdel peer"
echo "ood ok"
