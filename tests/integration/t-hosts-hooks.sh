#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hooks on every host of a job (issue 37), over hosts made of namespaces
# (tests/integration/hosts.sh): qpoold on one host with a server prolog
# and epilog, a qnoded on each of two others with a node prolog and
# epilog. A job on both nodes: the server prolog ran once on the server's
# host before either node's prolog, each node's prolog and epilog ran
# once, as root, on its own host (its host name), and the server epilog
# once after the job's end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/munge.sh"
. "$(dirname "$0")/hosts.sh"
qp_hosts_reexec "$@"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
H=$(mktemp -d /tmp/qpool-hooks.XXXXXX)
chmod 755 "$H"
hooks_rm() { rm -rf "$H"; }
QP_ATEXIT_LAST+=(hooks_rm)
# Each hook appends "who, where, when" to a file per job and host, so a
# second run shows as a second line.
for k in prolog epilog server_prolog server_epilog; do
	cat > "$H/$k" <<HOOK
#!/bin/bash
in=\$(cat)
id=\$(jq -r .job.id <<<"\$in")
node=\$(jq -r '.node.name // "-"' <<<"\$in")
echo "\$(id -u) \$(hostname) \$node \$(date +%s%N)" >> $H/$k.\$id.\$(hostname)
exit 0
HOOK
	chmod 755 "$H/$k"
done
qp_setup "
[node]
prolog = $H/prolog
epilog = $H/epilog"
printf '[server]\nserver_prolog = %s/server_prolog\nserver_epilog = %s/server_epilog\n' "$H" "$H" >> "$QPOOL_CONF"
qp_hosts_init
p=q$$
srv=${p}s nodes=("${p}a" "${p}b")
qp_host "$srv" 1
qp_host "${nodes[0]}" 2
qp_host "${nodes[1]}" 3
qp_pool_start "$srv" 7001
qp_node_on "${nodes[0]}" 0
qp_node_on "${nodes[1]}" 1

note "a job on both nodes: every hook once, as root, on its own host"
id=$(qp_seqid as qpuser1 qsub -N both -l select=2:ncpus=1 -l place=scatter -o /dev/null -j oe <<< 'true') ||
	fail "qsub on two nodes"
qp_wait "$id" completed --timeout 60
qp_wait_file "$H/server_epilog.$id.$srv" 10
ls "$H"
check() {  # KIND HOST [NODE]
	local f=$H/$1.$id.$2
	[ -s "$f" ] || fail "$1 did not run on $2 for job $id"
	[ "$(wc -l < "$f")" = 1 ] || fail "$1 ran $(wc -l < "$f") times on $2: $(cat "$f")"
	read -r uid host node t < "$f"
	[ "$uid" = 0 ] || fail "$1 on $2 ran as uid $uid"
	[ "$host" = "$2" ] || fail "$1 for $2 ran on host $host"
	[ "$node" = "${3:--}" ] || fail "$1 on $2 was told node '$node'"
	echo "$t"
}
sp=$(check server_prolog "$srv")
se=$(check server_epilog "$srv")
for n in "${nodes[@]}"; do
	np=$(check prolog "$n" "$n")
	ne=$(check epilog "$n" "$n")
	[ "$sp" -lt "$np" ] || fail "the server prolog did not run before $n's prolog"
	[ "$ne" -lt "$se" ] || fail "$n's epilog did not end before the server epilog"
done
n_other=$(find "$H" -maxdepth 1 -name "*.$id.*" | wc -l)
[ "$n_other" = 6 ] || fail "hooks ran $n_other times in all for job $id, want 6: $(ls "$H")"
echo PASS
