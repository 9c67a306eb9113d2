#!/bin/bash
# SPDX-License-Identifier: MIT
# qsub -I reaches its job's terminal socket only once the socket is the
# user's: gded made it as root and then gave it to the user, and a qsub
# that connected in between was refused ("cannot reach the job's
# terminal ... Permission denied"; seen in t-pbs-interactive and
# t-srun-pty on a loaded host). Here gded's chown of the socket is slowed
# by 2 s on purpose ([node] gded is a wrapper that preloads a chown()
# that sleeps first), so a qsub always comes in that window.
. "$(dirname "$0")/lib.sh"
command -v cc >/dev/null || skip "needs cc"
qp_setup
mkdir -p "$QP_T/slow"
cat > "$QP_T/slow/slowchown.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
int chown(const char *path, uid_t uid, gid_t gid)
{
	int (*real)(const char *, uid_t, gid_t) = (int (*)(const char *, uid_t, gid_t))dlsym(RTLD_NEXT, "chown");
	size_t n = strlen(path);

	/* the terminal socket, under whatever name gded makes it */
	if (n > 4 && strstr(path + n - 5, ".pt"))
		sleep(2);
	return real(path, uid, gid);
}
C
out=$(cc -shared -fPIC -O1 -o "$QP_T/slow/slowchown.so" "$QP_T/slow/slowchown.c" -ldl 2>&1) || fail "cc: $out"
# (Under ASan the preload comes before its runtime: told not to mind.)
printf '#!/bin/sh\nASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=%s exec %s "$@"\n' \
	"$QP_T/slow/slowchown.so" "$QP_BIN/gded" > "$QP_T/slow/gded"
chmod 755 "$QP_T/slow/gded"
printf '[node]\ngded = %s\n' "$QP_T/slow/gded" >> "$QPOOL_CONF"
qp_start_server
qp_start_node n1 0

note "qsub -I while gded is still giving the socket to the user: it waits, then relays"
out=$(printf 'echo "n=$((6 * 7))"\nexit 0\n' |
	as_full qpuser1 timeout 60 qsub -I -l walltime=00:01:00 2>"$QP_T/err") ||
	fail "qsub -I: $(cat "$QP_T/err") $out"
grep -q "n=42" <<<"$out" || fail "the shell's output did not come back: $out"
id=$(sed -n 's/.*waiting for job \([0-9]*\)\..*/\1/p' "$QP_T/err")
qp_wait "$id" completed failed
[ "$(qp_state "$id")" = completed ] || fail "interactive job $id: $(qp_field "$id" reason)"
[ ! -e "$QP_T/state/nodes/n1/jobs/$id.pty" ] || fail "the terminal socket was left behind"
[ -z "$(find "$QP_T/state/nodes/n1/jobs" -name "$id.pt*")" ] || fail "a terminal socket was left behind"
echo PASS
