#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# In a vm-check guest (systemd, cgroup v2, the packages installed): the
# installed units as an admin runs them. qpoold starts with its
# oom_score_adj set by the unit and logs no denied write; a job runs on the
# host's node; `systemctl restart qnoded` while it runs keeps it, and it
# finishes and is recorded. Skipped where systemd does not run the units.
. "$(dirname "$0")/../../tests/integration/lib.sh"
[ -d /run/systemd/system ] || skip "systemd is not pid 1 here (vm-check guests only)"
systemctl cat qpoold.service > /dev/null 2>&1 || skip "qpoold.service not installed (vm-check guests only)"
export QPOOL_CONF=/etc/qpool/qpool.conf
QP_T=$(mktemp -d /tmp/qpool-units.XXXXXX) || fail "mktemp"
chmod 755 "$QP_T"
trap 'rm -rf "$QP_T"' EXIT
qp_users
mkdir -p "$QP_T/work/qpuser1" && chown qpuser1: "$QP_T/work/qpuser1"
since=$(date '+%Y-%m-%d %H:%M:%S')
systemctl restart qpoold.service || fail "systemctl restart qpoold"
systemctl start qnoded.service || fail "systemctl start qnoded"
for u in qpoold qnoded qpool-cgroup; do
	systemctl is-active -q $u.service || fail "$u.service is $(systemctl is-active $u.service)"
done

# The unit sets the score (OOMScoreAdjust=); a write by qpoold itself is
# denied by its CapabilityBoundingSet and would log a warning each start.
pid=$(systemctl show -P MainPID qpoold.service)
[ "$(cat "/proc/$pid/oom_score_adj")" = -900 ] ||
	fail "qpoold's oom_score_adj is $(cat "/proc/$pid/oom_score_adj"), not -900"
journalctl -q --since "$since" -u qpoold.service | grep 'oom_score_adj' &&
	fail "qpoold logs a denied oom_score_adj write"
note "qpoold (pid $pid) runs at oom_score_adj -900, nothing denied"

node=$(hostname -s)
for _ in $(seq 600); do
	"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^${node}[[:space:]].*up" && break
	sleep 0.1
done
"$QP_BIN/qstat" --nodes | grep -qE "^${node}[[:space:]].*up" || fail "node $node not up: $("$QP_BIN/qstat" --nodes)"
w=$QP_T/work/qpuser1
id=$(as qpuser1 qsub -l mem=64mb,walltime=00:05:00 <<JOB
echo begin > $w/mark
sleep 20
echo end >> $w/mark
JOB
) || fail "qsub"
qp_wait "$id" running --timeout 120
qp_wait_file "$w/mark" 120
# Its wrapper is in the holder's tree, not a process of qnoded.service
# (qnoded(8), CGROUPS), so the restart below cannot call it left over.
gpid=$(for p in $(pgrep -x gded); do
	tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -q -- "--spec .*/${id%%.*}\.json" && echo "$p"
done | head -n 1)
[ -n "$gpid" ] || fail "no gded found for job $id"
gcg=$(sed -n 's/^0:://p' /proc/$gpid/cgroup)
case $gcg in
*/qpool-cgroup.service/wrappers) ;;
*) fail "job $id's gded (pid $gpid) is in cgroup $gcg, not qpool-cgroup.service/wrappers" ;;
esac
note "job $id's gded (pid $gpid) is in $gcg"
note "job $id runs on $node; restarting qnoded"
restart=$(date '+%Y-%m-%d %H:%M:%S')
systemctl restart qnoded.service || fail "systemctl restart qnoded with job $id running"
systemctl is-active -q qnoded.service || fail "qnoded.service is $(systemctl is-active qnoded.service) after restart"
qp_wait "$id" completed --timeout 180
grep -qx end "$w/mark" || fail "job $id was cut short by the restart"
st=$(qp_field "$id" Exit_status)
[ "$st" = 0 ] || fail "job $id exit status '$st' after the restart"
note "job $id kept through 'systemctl restart qnoded' and recorded (exit 0)"
journalctl -q --since "$restart" -u qnoded.service > "$QP_T/restart.log"
grep -E 'left-over process|remains running after unit stopped' "$QP_T/restart.log" &&
	fail "systemd reports job processes left over in qnoded.service at its restart"
note "no left-over process reported at the restart"
