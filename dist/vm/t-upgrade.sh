#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# In a vm-check guest: the upgrade an admin makes. The previous release's
# packages (/qpool-vm/prev-debs, dist/vm/previous) installed and running a
# job; this tree's installed over them with apt, as an upgrade; the job
# runs on through the restarts the packages make, finishes, and is
# accounted. Leaves this tree's packages installed for the tests after it.
. "$(dirname "$0")/../../tests/integration/lib.sh"
[ -d /run/systemd/system ] || skip "systemd is not pid 1 here (vm-check guests only)"
prevd=/qpool-vm/prev-debs newd=/qpool-vm/debs
ls "$prevd"/qpool-node_*.deb > /dev/null 2>&1 || skip "no previous release's packages in $prevd (vm-check guests only)"
export QPOOL_CONF=/etc/qpool/qpool.conf DEBIAN_FRONTEND=noninteractive
QP_T=$(mktemp -d /tmp/qpool-upgrade.XXXXXX) || fail "mktemp"
chmod 755 "$QP_T"
trap 'rm -rf "$QP_T"' EXIT
qp_users
mkdir -p "$QP_T/work/qpuser1" && chown qpuser1: "$QP_T/work/qpuser1"
pkgs="qpool-common qpool-server qpool-node qpool-client"
# qpool-slurm (this round's) goes too when an earlier step installed it.
dpkg -s qpool-slurm > /dev/null 2>&1 && pkgs="$pkgs qpool-slurm"

# From a clean slate: whatever an earlier test installed goes.
apt-get purge -y -qq $pkgs > "$QP_T/purge.log" 2>&1 || { cat "$QP_T/purge.log"; fail "apt-get purge"; }
apt-get install -y -q "$prevd"/*.deb > "$QP_T/prev.log" 2>&1 ||
	{ tail -n 20 "$QP_T/prev.log"; fail "installing the previous release"; }
old=$(dpkg-query -W -f '${Version}' qpool-node)
note "previous release installed: qpool-node $old"
systemctl restart qpoold.service && systemctl start qnoded.service || fail "starting the previous release's units"
node=$(hostname -s)
for _ in $(seq 1200); do
	"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^${node}[[:space:]].*up" && break
	sleep 0.1
done
"$QP_BIN/qstat" --nodes | grep -qE "^${node}[[:space:]].*up" ||
	fail "node $node not up under the previous release: $("$QP_BIN/qstat" --nodes)"

# The job waits for a file the test writes once the upgrade is done, so
# it runs through it however long the upgrade takes (bounded: 10 min).
w=$QP_T/work/qpuser1
id=$(as qpuser1 qsub -l walltime=00:15:00 <<JOB
echo begin > $w/mark
for i in \$(seq 6000); do [ -e $w/go ] && break; sleep 0.1; done
echo end >> $w/mark
JOB
) || fail "qsub under the previous release"
for _ in $(seq 1200); do [ -s "$w/mark" ] && break; sleep 0.1; done
[ -s "$w/mark" ] || fail "job $id did not start under the previous release"
note "job $id runs under $old; upgrading"

apt-get install -y -q "$newd"/qpool-*.deb > "$QP_T/new.log" 2>&1 ||
	{ tail -n 20 "$QP_T/new.log"; fail "installing this tree's packages over the previous release"; }
new=$(dpkg-query -W -f '${Version}' qpool-node)
[ "$new" != "$old" ] || fail "qpool-node is still $old after the upgrade"
dpkg --compare-versions "$new" gt "$old" || fail "qpool-node $new is not newer than $old"
for u in qpoold qnoded qpool-cgroup; do
	systemctl is-active -q $u.service || fail "$u.service is $(systemctl is-active $u.service) after the upgrade"
done
note "upgraded to $new; qpoold, qnoded and the holder active"
touch "$w/go"
qp_wait "$id" completed --timeout 120
grep -qx end "$w/mark" || fail "job $id was cut short by the upgrade: $(cat "$w/mark")"
st=$(qp_field "$id" Exit_status)
[ "$st" = 0 ] || fail "job $id exit status '$st' after the upgrade"
"$QP_BIN/qacct" -j "$id" > "$QP_T/qacct.txt" 2>&1 || { cat "$QP_T/qacct.txt"; fail "qacct -j $id"; }
note "job $id ran through the upgrade from $old to $new, exit 0, accounted:"
head -n 5 "$QP_T/qacct.txt"
