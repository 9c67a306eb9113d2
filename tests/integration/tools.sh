# SPDX-License-Identifier: MIT
# Sourced by the t-tool-*.sh scripts after lib.sh: the tools that drive
# PBS for people, installed from PyPI into build/venv-NAME (downloads
# cached in build/pip-cache; build/ for every build, the venvs hold no C),
# run as a real user against a private pool.

# tool_venv NAME PKG...: sets TOOL_VENV to a venv holding PKGs, made once;
# skips (77) only when pip truly cannot install them.
tool_venv() {
	local name=$1; shift
	# In build/ whatever the build (SANITIZE's is build-san/): a venv holds
	# Python only, so make SANITIZE=... check reuses make check's.
	local top=$QP_TOP/build lock
	mkdir -p "$top" || fail "mkdir $top"
	TOOL_VENV=$top/venv-$name
	# One maker at a time: t-tool-X and t-tool-X-slurm share the venv and
	# run side by side (tests/run -j); the second waits, then finds it made.
	exec {lock}> "$top/venv-$name.lock" && flock "$lock" || fail "lock $top/venv-$name.lock"
	if [ "$(cat "$TOOL_VENV/.qpool-pkgs" 2>/dev/null)" != "$*" ]; then
		rm -rf "$TOOL_VENV"
		mkdir -p "$top/pip-cache"
		/usr/bin/python3 -m venv "$TOOL_VENV" || skip "python3 -m venv does not work here"
		if ! PIP_CACHE_DIR=$top/pip-cache PIP_DISABLE_PIP_VERSION_CHECK=1 timeout 900 \
			"$TOOL_VENV/bin/pip" install -q "$@" > "$top/pip-$name.log" 2>&1; then
			skip "pip cannot install $*: $(tail -1 "$top/pip-$name.log")"
		fi
		echo "$*" > "$TOOL_VENV/.qpool-pkgs"
	fi
	exec {lock}>&-
	# The tool runs as a test user, and its workers run as that user's jobs.
	chmod -R a+rX "$TOOL_VENV"
}

# tool_run USER TIMEOUT cmd...: runs cmd as USER in its work dir with the
# venv's bin and the pool's commands on PATH, killed after TIMEOUT seconds.
tool_run() {
	local u=$1 t=$2; shift 2
	(cd "$QP_T/work/$u" && timeout -k 5 "$t" runuser -u "$u" -- env QPOOL_CONF="$QPOOL_CONF" \
		HOME="$QP_T/work/$u" PATH="$QP_BIN:$TOOL_VENV/bin:/usr/bin:/bin" "$@")
}

# toil_sum BATCHSYSTEM: runs, as qpuser1 in the pool, Toil's smallest
# real workflow on that batch system (three children's squares added by
# their parent's follow-on: 1 + 4 + 9) and fails unless it printed 14.
toil_sum() {
	local w=$QP_T/work/qpuser1 out rc
	cat > "$w/toil_sum.py" <<'PY'
import os, sys
from toil.common import Toil
from toil.job import Job

def square(job, n):
    return n * n

def total(job, parts):
    return sum(parts)

def fan_out(job):
    parts = [job.addChildJobFn(square, n, cores=1, memory="100M", disk="10M").rv() for n in (1, 2, 3)]
    return job.addFollowOnJobFn(total, parts, cores=1, memory="100M", disk="10M").rv()

if __name__ == "__main__":
    options = Job.Runner.getDefaultOptions(os.path.join(os.getcwd(), "jobstore"))
    options.batchSystem = sys.argv[1]
    options.clean = "always"
    options.logLevel = "INFO"
    options.workDir = os.path.join(os.getcwd(), "toil-work")
    os.makedirs(options.workDir, exist_ok=True)
    with Toil(options) as toil:
        print("toil total =", toil.start(Job.wrapJobFn(fan_out, cores=1, memory="100M", disk="10M")), flush=True)
PY
	chown qpuser1: "$w/toil_sum.py"
	out=$(tool_run qpuser1 400 python toil_sum.py "$1" 2>&1); rc=$?
	echo "$out" | tail -30
	[ $rc = 0 ] || fail "Toil's $1 batch system failed (exit $rc)"
	echo "$out" | grep -qx "toil total = 14" || fail "the workflow did not compute 1+4+9"
}
