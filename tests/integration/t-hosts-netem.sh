#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every link of the namespaced hosts (hosts.sh) delays by 50 ms each way and
# loses 5% of the packets: a burst of 200 jobs submitted from a login host,
# four submitters at once, completes, every job exactly once.
#
# With netem (tc qdisc netem on each host's eth0) that is the whole set-up.
# Kernels without sch_netem (this project's machines: CONFIG_NET_SCH_NETEM
# is not set, and no qdisc but netem delays) get a substitute:
# * loss: an nftables (else iptables) rule in each host's own namespace
#   drops 5% of what it sends on eth0, at random, as netem does on egress;
#   TCP's retransmissions, RTOs and duplicate segments happen on the real
#   veths between real sockets;
# * delay: delay-relay.py on the server host takes the nodes' and the
#   commands' connections on the server's address and holds each chunk
#   50 ms each way on its way to qpoold, which listens on the host's
#   loopback. Every byte between a node or the login host and qpoold
#   crosses the lossy links and the relay, so the round trip is 100 ms.
# What the substitute does not model: the relay terminates TCP and
# re-segments the stream, so loss is per hop (a segment lost on a link is
# resent on that link, and the relay's leg to qpoold is neither slow nor
# lossy); the handshake itself is not delayed (the relay accepts at once
# and connects upstream), and the delay is per chunk, not per packet, so
# no reordering and no delayed ACKs interact with it as with netem.
# Skipped only where neither netem nor (nft or iptables, and python3) is here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
qp_hosts_reexec "$@"
command -v ip >/dev/null || skip "needs ip (iproute2)"
if command -v tc >/dev/null &&
	unshare --net sh -c 'ip link set lo up && tc qdisc add dev lo root netem delay 1ms' 2>/dev/null; then
	how=netem
elif { command -v nft >/dev/null || command -v iptables >/dev/null; } && command -v python3 >/dev/null; then
	how=relay
else
	skip "no netem qdisc in this kernel, and no nft or iptables with python3 for loss and a delaying relay"
fi
N=${NETEM_JOBS:-200}
qp_setup
# What is tried here is loss and delay, not a lost node: on a loaded
# machine the relay (or a host's qnoded) can stall past lib.sh's 5 s,
# and a node timed out has its job requeued by design (a second run).
sed -i 's/^node_timeout = .*/node_timeout = 30/' "$QPOOL_CONF"
qp_hosts_init
p=q$$
srv=${p}s login=${p}l nodes=("${p}a" "${p}b" "${p}c")
qp_host "$srv" 1
qp_host "${nodes[0]}" 2
qp_host "${nodes[1]}" 3
qp_host "${nodes[2]}" 4
qp_host "$login" 5
port=7001
if [ "$how" = netem ]; then
	for h in "$srv" "${nodes[@]}" "$login"; do
		on "$h" tc qdisc add dev eth0 root netem delay 50ms loss 5% || fail "netem on $h"
	done
	qp_pool_start "$srv" "$port"
else
	for h in "$srv" "${nodes[@]}" "$login"; do
		qp_loss_on "$h" 5 || fail "5% loss on $h"
	done
	qp_pool_start "$srv" "$port" 127.0.0.1:$((port + 1))
	qp_relay_on "$srv" "$(qp_host_addr "$srv"):$port" 127.0.0.1:$((port + 1)) 50
fi
note "links: 50 ms and 5% loss by $how"
qp_node_on "${nodes[0]}" 0
qp_node_on "${nodes[1]}" 1
qp_node_on "${nodes[2]}" 0

# The delay is on the path: one qstat from the login host takes a round
# trip through the links, 100 ms, at least.
t0=${EPOCHREALTIME/./}
on_as "$login" qpuser1 qstat > /dev/null || fail "qstat over the slow links"
ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
[ "$ms" -ge 100 ] || fail "a qstat from $login took $ms ms: the links are not 50 ms each way"
note "one qstat from $login: $ms ms"

note "$N jobs from $login, four submitters at once, over links of 50 ms and 5% loss"
w=$QP_T/work/qpuser1
submit() {  # first last
	local k id
	for ((k = $1; k <= $2; k++)); do
		id=$(printf 'echo "$PBS_JOBID" >> %s/ledger\n' "$w" | on_as "$login" qpuser1 qsub -N b$k) ||
			{ echo "qsub $k failed" >&2; return 1; }
		echo "$id" >> "$QP_T/ids.$1"
	done
}
q=$((N / 4))
submit 1 $q & a=$!
submit $((q + 1)) $((2 * q)) & b=$!
submit $((2 * q + 1)) $((3 * q)) & c=$!
submit $((3 * q + 1)) "$N" & d=$!
wait $a && wait $b && wait $c && wait $d || fail "a qsub failed over the lossy links"
cat "$QP_T"/ids.* > "$QP_T/ids"
[ "$(wc -l < "$QP_T/ids")" = "$N" ] || fail "$(wc -l < "$QP_T/ids") ids printed, not $N"

for ((i = 0; i < 3000; i++)); do
	left=$("$QP_BIN/qstat" --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))') || left='?'
	[ "$left" = 0 ] && break
	sleep 0.1
done
[ "$left" = 0 ] || fail "$left jobs unfinished after 300 s"
"$QP_BIN/qstat" -x --json > "$QP_T/all.json" || fail "qstat -x --json"
python3 - "$QP_T/all.json" "$QP_T/ids" "$w/ledger" <<'PY' || fail "jobs lost, failed or repeated (above)"
import json, sys, collections
# qsub prints N.SERVER and the job writes $PBS_JOBID, N.SERVER too; the
# store's jobid is the number: all three are compared as numbers.
def num(v):
    return int(str(v).strip().split(".")[0])
jobs = {num(j["jobid"]): j for j in json.load(open(sys.argv[1]))}
printed = [num(l) for l in open(sys.argv[2]) if l.strip()]
ran = collections.Counter(num(l) for l in open(sys.argv[3]) if l.strip())
bad = [f"job {i}: {jobs.get(i, {}).get('state', 'missing')}, ran {ran[i]} times"
       for i in printed if jobs.get(i, {}).get("state") != "completed" or ran[i] != 1]
bad += [f"job {i} ran {n} times" for i, n in ran.items() if n > 1 and i not in printed]
print(f"{len(printed)} printed, {len(jobs)} in the store, {sum(ran.values())} runs")
for b in bad[:40]:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
# The loss rules did drop: the server and the login host send thousands
# of packets in the burst (5% of 1000 is 50; 0.95^1000 is 5e-23); a node,
# a few hundred, so only the sum over the nodes is asked for.
if [ "$how" = relay ]; then
	nd=0
	for h in "$srv" "${nodes[@]}" "$login"; do
		d=$(qp_loss_dropped "$h")
		echo "$h dropped ${d:=0} packets"
		case $h in
		"$srv" | "$login") [ "$d" -gt 0 ] || fail "the loss rule on $h dropped nothing" ;;
		*) nd=$((nd + d)) ;;
		esac
	done
	[ "$nd" -gt 0 ] || fail "the loss rules on the nodes dropped nothing"
fi
echo "netem ok ($how)"
