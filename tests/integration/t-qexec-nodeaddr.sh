#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Nodes named apart from their hosts: two namespaced hosts, each with a
# qnoded started with --name nodeA-P / nodeB-P, names no host of the test
# resolves (the hosts file has the hosts' own names only). qexec across
# them still reaches node 0's PMI server: the job's launch carries the
# address qpoold sees for each node's link (QPOOL_NODE_ADDR in the job),
# names stay names (PBS_NODEFILE, qstat). qpool-rsh and pbsdsh go on by
# name, through qpoold. qpoold stands behind a relay: the address is the
# one each node's link leaves from, not the one qpoold sees. Node 0's PMI
# server listens on that address only.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
qp_hosts_reexec "$@"
qp_setup
qp_hosts_init
p=na$$
srv=${p}s
qp_host "$srv" 1
qp_host "${p}a" 2
qp_host "${p}b" 3
# qpoold behind a relay on its host, as behind a proxy or a NAT: the
# links come to it from 127.0.0.1, and the nodes say their own address.
qp_pool_start "$srv" 7001 127.0.0.1:7002
qp_relay_on "$srv" "$QP_NET.1:7001" 127.0.0.1:7002 0
names=("nodeA-$p" "nodeB-$p")
qnoded=()
hosts=("${p}a" "${p}b")
for i in 0 1; do
	getent hosts "${names[$i]}" >/dev/null && skip "${names[$i]} resolves here"
	on "${hosts[$i]}" getent hosts "${names[$i]}" >/dev/null && fail "${names[$i]} resolves on ${hosts[$i]}"
	mkdir -m 1777 "$QP_T/tmp-${hosts[$i]}"
	{ cat "$QP_T/node.conf"; printf '[node]\ntmpdir = %s\n' "$QP_T/tmp-${hosts[$i]}"; } > "$QP_T/node-$i.conf"
	nsenter -t "$(qp_host_pid "${hosts[$i]}")" --net --uts "$QP_BIN/qnoded" -f "$QP_T/node-$i.conf" \
		--name "${names[$i]}" --cpus 0-1 >> "$QP_T/qnoded-${hosts[$i]}.log" 2>&1 &
	pid=$!
	QP_PIDS+=("$pid")
	qnoded[i]=$pid
	for ((k = 0; k < 600; k++)); do
		"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^${names[$i]}[[:space:]].*up" && break
		kill -0 "$pid" 2>/dev/null || fail "qnoded ${names[$i]} died at start"
		sleep 0.05
	done
	[ $k -lt 600 ] || fail "qnoded ${names[$i]} did not register"
done

w=$QP_T/work/qpuser1
id=$(as qpuser1 qsub -N qxa <<'JOB'
#PBS -l select=2:ncpus=2:mpiprocs=2
cd "$PBS_O_WORKDIR"
echo "addr=${QPOOL_NODE_ADDR:-}"
echo "nodes=$(sort -u "$PBS_NODEFILE" | tr '\n' ' ')"
qexec -n 4 sh -c 'echo "rank=$PMI_RANK size=$PMI_SIZE host=$(hostname)"' > pmi.out 2> pmi.err; echo "pmi=$?"
qexec -n 4 -l --mpi=none sh -c 'echo "r=$QPOOL_RANK $(hostname) $QPOOL_NODE_ADDR"' > none.out 2> none.err
echo "none=$?"
pbsdsh -u sh -c 'echo "dsh $(hostname) ${QPOOL_NODE_ADDR:-}"' > dsh.out 2> dsh.err; echo "dsh=$?"
touch bind.ready
while [ ! -e bind.go ]; do sleep 0.1; done
qexec -n 4 true > bind.out 2> bind.err; echo "bind=$?"
JOB
) || fail "qsub"
# Node 0's server listens for the others from before they are started
# until all are in: with the sister's qnoded stopped, its server cannot
# start, and the socket is seen from node 0's host (a rank would see it
# closed). It is on QPOOL_NODE_ADDR only, though no name of the job
# resolves (on every address before).
for ((k = 0; k < 3000; k++)); do [ -e "$w/bind.ready" ] && break; sleep 0.1; done
[ -e "$w/bind.ready" ] || fail "the job did not come to its bind check"
kill -STOP "${qnoded[1]}"
touch "$w/bind.go"
listen=
for ((k = 0; k < 600; k++)); do
	listen=$(nsenter -t "$(qp_host_pid "${hosts[0]}")" --net ss -Hltnp |
		awk '/"qpool-pmi"/ && $4 !~ /^127\./ { print $4 }')
	[ -n "$listen" ] && break
	sleep 0.05
done
kill -CONT "${qnoded[1]}"
echo "node 0's server listens at: ${listen:-nothing seen}"
[ -n "$listen" ] || fail "node 0's server was not seen listening"
grep -vq "^$QP_NET\.2:[0-9]*$" <<< "$listen" &&
	fail "node 0's server listens beyond QPOOL_NODE_ADDR $QP_NET.2: $listen"
qp_wait "$id" completed --timeout 300
out=$w/qxa.o$id
qp_wait_file "$out"
cat "$out"
grep -qx "addr=$QP_NET.2" "$out" || fail "the primary's QPOOL_NODE_ADDR is not its link's address"
grep -qx "nodes=${names[0]} ${names[1]} " "$out" || fail "PBS_NODEFILE does not hold the node names"
grep -qx "pmi=0" "$out" || fail "qexec -n 4 across unresolvable node names: $(cat "$w/pmi.err")"
for r in 0 1; do grep -qx "rank=$r size=4 host=${hosts[0]}" "$w/pmi.out" || fail "rank $r: $(cat "$w/pmi.out")"; done
for r in 2 3; do grep -qx "rank=$r size=4 host=${hosts[1]}" "$w/pmi.out" || fail "rank $r: $(cat "$w/pmi.out")"; done
grep -qx "none=0" "$out" || fail "qexec --mpi=none: $(cat "$w/none.err")"
grep -qx "3: r=3 ${hosts[1]} $QP_NET.3" "$w/none.out" || fail "a sister's QPOOL_NODE_ADDR: $(cat "$w/none.out")"
grep -qx "bind=0" "$out" || fail "qexec (bind): $(cat "$w/bind.err")"
grep -qx "dsh=0" "$out" || fail "pbsdsh: $(cat "$w/dsh.err")"
[ "$(sort -u "$w/dsh.out" | wc -l)" = 2 ] || fail "pbsdsh: $(cat "$w/dsh.out")"
"$QP_BIN/qstat" --nodes | grep -q "^${names[0]}[[:space:]]" || fail "qstat lists the node by its name"
echo "PASS"
