#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A remote start that reaches a sister before the job's gded there has
# made its control socket waits for it, rather than being refused with
# "job N is ending on nb (its wrapper does not answer: No such file or
# directory)": qexec outside a job starts its ranks the moment the job
# runs, and a loaded sister's gded may not be up yet (seen in
# t-qexec-hosts under load). Here nb's gded is slow on purpose: [node]
# gded is a wrapper that preloads a bind() that sleeps 3 s before it
# makes a *.ctl socket.
. "$(dirname "$0")/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
command -v cc >/dev/null || skip "needs cc"
qp_setup
mkdir -p "$QP_T/slow"
cat > "$QP_T/slow/slowctl.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	int (*real)(int, const struct sockaddr *, socklen_t) =
		(int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "bind");
	const struct sockaddr_un *su = (const struct sockaddr_un *)sa;
	size_t n;

	if (sa->sa_family == AF_UNIX && (n = strlen(su->sun_path)) > 4 && !strcmp(su->sun_path + n - 4, ".ctl"))
		sleep(3);
	return real(fd, sa, len);
}
C
out=$(cc -shared -fPIC -O1 -o "$QP_T/slow/slowctl.so" "$QP_T/slow/slowctl.c" -ldl 2>&1) || fail "cc: $out"
# (Under ASan the preload comes before its runtime: told not to mind.)
printf '#!/bin/sh\nASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=%s exec %s "$@"\n' \
	"$QP_T/slow/slowctl.so" "$QP_BIN/gded" > "$QP_T/slow/gded"
chmod 755 "$QP_T/slow/gded"
{ cat "$QPOOL_CONF"; printf '[node]\ngded = %s\n' "$QP_T/slow/gded"; } > "$QP_T/slow.conf"
qp_start_server
qp_start_node na 0
"$QP_BIN/qnoded" -f "$QP_T/slow.conf" --name nb --cpus 1 >> "$QP_T/qnoded-nb.log" 2>&1 &
QP_PIDS+=("$!")
for ((i = 0; i < 100; i++)); do
	"$QP_BIN/qstat" --nodes 2>/dev/null | grep -qE "^nb[[:space:]].*up" && break
	sleep 0.1
done
[ $i -lt 100 ] || fail "qnoded nb did not register"

w=$QP_T/work/qpuser1
id=$(as qpuser1 qsub -N late <<'JOB'
#PBS -l select=2:ncpus=1
cd "$PBS_O_WORKDIR"
qpool-rsh nb echo from-nb > rsh.out 2> rsh.err; echo "rsh=$?"
JOB
) || fail "qsub"
qp_wait "$id" completed --timeout 60
out=$w/late.o$id
qp_wait_file "$out"
cat "$out" "$w/rsh.err"
grep -qx "rsh=0" "$out" && grep -qx from-nb "$w/rsh.out" ||
	fail "a task for a sister whose gded was not up yet: $(cat "$out" "$w/rsh.err")"
echo "PASS"
