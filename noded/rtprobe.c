/* SPDX-License-Identifier: MIT */
/* Whether a realtime job can run SCHED_FIFO on this node: one try at start, in a group made as a realtime job's is. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "noded.h"

/* The probe's group: job.0 under the node's parent. No job has id 0, and
 * a job.0 left by a qnoded killed mid-probe is swept at the next start as
 * any group no job accounts for. */
#define RTPROBE_JOBID 0
#define RTPROBE_KILL_MS 5000

/* In the forked child: into the group, then what a realtime job's gded
 * asks for (the lowest SCHED_FIFO priority). Exit status: 0, or 100 + the
 * step's errno class below (the errno itself does not fit). */
static int child_try(struct cgroup_job *cg)
{
	struct sched_param sp = { .sched_priority = 1 };
	int r;

	r = cgroup_job_attach(cg, 0);
	if (r < 0)
		return r == -EPERM ? 11 : r == -ENOSPC ? 12 : 13;
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
		return errno == EPERM ? 21 : errno == EINVAL ? 22 : 23;
	return 0;
}

/* child_try's exit status back to its step and errno. */
static void child_status(int code, enum rtprobe_step *ret_step, int *ret_r)
{
	static const int errs[] = { EPERM, ENOSPC, EIO };
	static const int sched_errs[] = { EPERM, EINVAL, EIO };

	if (code >= 11 && code <= 13) {
		*ret_step = RTPROBE_ATTACH;
		*ret_r = -errs[code - 11];
	} else if (code >= 21 && code <= 23) {
		*ret_step = RTPROBE_SCHED;
		*ret_r = -sched_errs[code - 21];
	} else {
		*ret_step = RTPROBE_SCHED;
		*ret_r = code == 0 ? 0 : -EIO;
	}
}

int rtprobe_run(const char *root, enum cgroup_mode mode, const char *parent, const char *cpus,
		const char *mems, enum rtprobe_step *ret_step, struct error *err)
{
	struct cgroup_limits lim = { .cpus = cpus, .mems = mems };
	struct cgroup_job *cg = NULL;
	int r, status;
	pid_t pid;

	*ret_step = RTPROBE_GROUP;
	r = cgroup_job_create(root, mode, parent, RTPROBE_JOBID, CGROUP_JOB_REALTIME, &cg, err);
	if (r == 0)
		r = cgroup_job_configure(cg, &lim, err);
	if (r < 0)
		goto done;
	pid = fork();
	if (pid < 0) {
		r = error_set(err, -errno, "fork: %m");
		goto done;
	}
	if (pid == 0)
		_exit(child_try(cg));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			r = error_set(err, -errno, "waitpid: %m");
			goto done;
		}
	if (!WIFEXITED(status)) {
		*ret_step = RTPROBE_SCHED;
		r = error_set(err, -EIO, "the probe died of signal %d", WTERMSIG(status));
		goto done;
	}
	child_status(WEXITSTATUS(status), ret_step, &r);
	if (r < 0)
		error_set(err, r, "%s: %s",
			  *ret_step == RTPROBE_ATTACH ? "joining the probe's group" :
			  "sched_setscheduler(SCHED_FIFO, 1)", strerror(-r));
done:
	if (cg) {
		(void)cgroup_job_kill(cg, RTPROBE_KILL_MS);
		(void)cgroup_job_remove(cg);
		cgroup_job_free(cg);
	}
	return r;
}

bool rtprobe_verdict(enum cgroup_mode mode, enum rtprobe_step step, int r, const char *detail,
		     char *ret_reason, size_t len)
{
	if (r == 0) {
		ret_reason[0] = '\0';
		return true;
	}
	if (step == RTPROBE_SCHED && r == -EPERM && mode == CGROUP_MODE_V2)
		/* Linux with CONFIG_RT_GROUP_SCHED=y: a v2 group with the cpu
		 * controller gets no RT runtime (cpu.rt_runtime_us is v1 only),
		 * so sched_setscheduler returns EPERM even for root; the
		 * kernels of Debian, Ubuntu and RHEL have it off. */
		snprintf(ret_reason, len,
			 "SCHED_FIFO is refused in a job's group (EPERM): the kernel schedules RT "
			 "tasks by group (CONFIG_RT_GROUP_SCHED) and cgroup v2 gives a group none");
	else if (step == RTPROBE_SCHED && r == -EPERM)
		snprintf(ret_reason, len,
			 "SCHED_FIFO is refused in a job's group (EPERM): no RT runtime there "
			 "(cpu.rt_runtime_us)");
	else
		snprintf(ret_reason, len, "the realtime probe failed: %s",
			 detail && *detail ? detail : strerror(-r));
	return false;
}
