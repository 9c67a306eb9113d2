#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# LBNL NHC, unmodified (tests/integration/nhc/README), as a qpool node's
# [node] health_check (issue 37): NHC drains the node itself through
# qpool's scontrol (Slurm mode, which NHC finds on its PATH) or pbsnodes
# (NHC_RM=pbs), with its "NHC: ..." note as the reason and by health (the
# check's QPOOL_HOOK=health); with a passing config NHC resumes it; an
# admin's drain stays, even one whose reason NHC takes for its own.
. "$(dirname "$0")/lib.sh"
NHC_DIR=$QP_TOP/tests/integration/nhc
H=$(mktemp -d /tmp/qpool-nhc.XXXXXX)
chmod 755 "$H"
nhc_rm() { rm -rf "$H"; }
QP_ATEXIT_LAST+=(nhc_rm)
qp_setup "
[node]
health_check = $H/check
health_check_interval = 1
health_check_timeout = 30"
# The site's wrapper: NHC resets PATH and takes its settings as VAR=value
# arguments; HOSTNAME is the node's name in the pool (qnoded gives it).
cat > "$H/check" <<HOOK
#!/bin/bash
cat > /dev/null
rm=()
[ -e $H/mode-pbs ] && rm=(NHC_RM=pbs)
echo run >> $H/runs
exec $NHC_DIR/nhc -c $H/nhc.conf "PATH=$QP_BIN:/sbin:/usr/sbin:/bin:/usr/bin" "HOSTNAME=\$QPOOL_NODE" \
	HELPERDIR=$NHC_DIR/helpers INCDIR=$NHC_DIR/scripts LOGFILE=$H/nhc.log TIMEOUT=20 "\${rm[@]}"
HOOK
chmod 755 "$H/check"
# A mount point that is there but not mounted (a missing one NHC would
# make, on the host's root).
mkdir "$H/scratch"
bad() { echo "* || check_fs_mount_rw -f $H/scratch" > "$H/nhc.conf"; }
good() { echo "* || check_fs_mount_rw -f /" > "$H/nhc.conf"; }
good
qp_start_server
qp_start_node n1
node() { "$QP_BIN/qstat" --nodes --json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["nodes"]:
    if n["name"] == "n1": print(n["state"], "|", n.get("drained_by", ""), "|", n.get("reason", ""))'; }
wait_node() {  # TEXT: until n1 says it (bounded: 40 s)
	local i
	for ((i = 0; i < 800; i++)); do [ "$(node)" = "$1" ] && return 0; sleep 0.05; done
	fail "n1 is '$(node)', not '$1' (NHC's log: $(tail -5 "$H/nhc.log" 2>/dev/null))"
}
runs() { wc -l < "$H/runs" 2>/dev/null || echo 0; }
wait_runs() {  # N more runs of the check from now
	local want=$(($(runs) + $1)) i
	for ((i = 0; i < 800; i++)); do [ "$(runs)" -ge "$want" ] && return 0; sleep 0.05; done
	fail "the health check did not run $1 more times"
}
MSG="NHC: check_fs_mount:  $H/scratch not mounted"

for mode in slurm pbs; do
	[ $mode = pbs ] && touch "$H/mode-pbs"
	note "$mode mode: a passing NHC, n1 up"
	good
	wait_runs 2
	[ "$(node)" = "up |  | " ] || fail "n1: $(node)"

	note "$mode mode: a missing mount: NHC drains n1 with its note, by health"
	bad
	wait_node "drained | health | $MSG"
	if [ $mode = slurm ]; then
		grep -q "Marking idle n1 offline:  $MSG" "$H/nhc.log" || fail "NHC did not drain n1 through scontrol: $(cat "$H/nhc.log")"
		# Slurm's columns: the reason cut at 20 characters, then whole.
		out=$("$QP_BIN/sinfo" -R)
		echo "$out" | grep -qE "^NHC: check_fs_mount: +health +20[0-9-]{8}T[0-9:]{8} n1$" || fail "sinfo -R: $out"
		out=$("$QP_BIN/sinfo" -R -h -o '%E|%u|%t|%N')
		[ "$out" = "$MSG|health|drain|n1" ] || fail "sinfo -R -o: $out"
	else
		grep -q "Marking free n1 offline:  $MSG" "$H/nhc.log" || fail "NHC did not drain n1 through pbsnodes: $(cat "$H/nhc.log")"
		"$QP_BIN/pbsnodes" -a n1 | grep -q "qpool_offline_by = health" || fail "pbsnodes -a: $("$QP_BIN/pbsnodes" -a n1)"
		[ "$("$QP_BIN/pbsnodes" -n -l all n1 | tr -s ' ')" = "$(echo "n1 offline $MSG" | tr -s ' ')" ] ||
			fail "pbsnodes -n -l all: $("$QP_BIN/pbsnodes" -n -l all n1)"
	fi
	id=$(echo true | as qpuser1 qsub) || fail qsub
	wait_runs 1
	[ "$(qp_state "$id")" = queued ] || fail "a job started on a node NHC drained"

	note "$mode mode: the mount is back: NHC resumes n1"
	good
	wait_node "up |  | "
	grep -q "Marking n1 online and clearing note" "$H/nhc.log" || fail "NHC did not resume n1 itself: $(cat "$H/nhc.log")"
	qp_wait "$id" completed

	note "$mode mode: an admin's drain stays, failing or passing"
	"$QP_BIN/scontrol" update NodeName=n1 State=DRAIN Reason="disk swap" || fail "scontrol update State=DRAIN"
	wait_node "drained | admin | disk swap"
	bad
	wait_runs 2
	[ "$(node)" = "drained | admin | disk swap" ] || fail "NHC took over an admin's drain: $(node)"
	good
	wait_runs 2
	[ "$(node)" = "drained | admin | disk swap" ] || fail "NHC resumed an admin's drain: $(node)"
	note "$mode mode: an admin's drain whose reason reads as NHC's: NHC's resume is refused"
	"$QP_BIN/scontrol" update NodeName=n1 State=DRAIN Reason="NHC: by hand" || fail "scontrol drain"
	: > "$H/nhc.log"
	wait_runs 2
	[ "$(node)" = "drained | admin | NHC: by hand" ] || fail "NHC resumed an admin's drain: $(node)"
	grep -q "a health check resumes only its own drains" "$H/nhc.log" || fail "no refusal in NHC's log: $(cat "$H/nhc.log")"
	"$QP_BIN/scontrol" update NodeName=n1 State=RESUME || fail "scontrol update State=RESUME"
	wait_node "up |  | "
done
echo PASS
