# SPDX-License-Identifier: MIT
# tests/cgroups.sh: a pool's cgroup parents, found by name in every
# hierarchy, and their removal with whatever still runs in them. Sourced
# by tests/integration/lib.sh and bench/lib.sh; in the tree only (nothing
# installs it; vm-check's guests get it with tests/).
#   cgroups_left DEPTH NAME...    the directories named NAME (a find -name
#       pattern) at most DEPTH levels below /sys/fs/cgroup, and every
#       directory below them, deepest first
#   cgroups_remove DEPTH NAME...  kills what runs in those, thaws a frozen
#       v1 group (its SIGKILL waits for THAWED) and removes them, deepest
#       first; 3 tries (a killed process leaves its group a moment later).
#       0 when none is left.

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
