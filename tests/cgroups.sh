# SPDX-License-Identifier: MIT
# tests/cgroups.sh: a pool's cgroup parents, found by name in every
# hierarchy, and their removal with whatever still runs in them; and the
# mounts a pool leaves in its directory. Sourced by tests/integration/lib.sh,
# bench/lib.sh and tests/demo; in the tree only (nothing
# installs it; vm-check's guests get it with tests/).
#   cgroups_left DEPTH NAME...    the directories named NAME (a find -name
#       pattern) at most DEPTH levels below /sys/fs/cgroup, and every
#       directory below them, deepest first
#   cgroups_remove DEPTH NAME...  kills what runs in those, thaws a frozen
#       v1 group (its SIGKILL waits for THAWED) and removes them, deepest
#       first; 3 tries (a killed process leaves its group a moment later).
#       0 when none is left.
#   mounts_remove DIR [KEEP]      lazily unmounts every mount below DIR but
#       KEEP, deepest first: the jobs tmpfs (jobs_tmpfs, the default) that
#       a qnoded killed, or stopped with job files in it, leaves mounted.

cgroups_left() {
	local depth=$1 n
	local -a names=()
	shift
	for n in "$@"; do
		[ ${#names[@]} -gt 0 ] && names+=(-o)
		names+=(-name "$n")
	done
	[ ${#names[@]} -gt 0 ] || return 0
	find /sys/fs/cgroup -mindepth 1 -maxdepth "$depth" -type d \( "${names[@]}" \) -prune -print0 2>/dev/null |
		xargs -0 -r -I{} find {} -depth -type d 2>/dev/null
}

cgroups_remove() {
	local d i
	local -a left
	for i in 1 2 3; do
		mapfile -t left < <(cgroups_left "$@")
		[ ${#left[@]} -gt 0 ] || return 0
		for d in "${left[@]}"; do
			[ -f "$d/cgroup.procs" ] && xargs -r kill -KILL < "$d/cgroup.procs" 2>/dev/null
			[ -f "$d/freezer.state" ] && { echo THAWED > "$d/freezer.state"; } 2>/dev/null
		done
		sleep 0.1
		for d in "${left[@]}"; do rmdir "$d" 2>/dev/null; done
	done
	[ -z "$(cgroups_left "$@")" ]
}

mounts_remove() {
	local dir=$1 keep=${2:-} m
	for m in $(awk -v t="$dir/" 'index($2, t) == 1 { print $2 }' /proc/self/mounts | sort -r); do
		[ "$m" = "$keep" ] || umount -l "$m" 2>/dev/null
	done
	return 0
}
