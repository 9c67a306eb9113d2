/* SPDX-License-Identifier: MIT */
/* qsub -m: a short mail to the job's owner at begin, end or abort, through the site's sendmail, as the user. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gded-internal.h"
#include "jobid.h"
#include "timeutil.h"

/* A mail transfer agent that hangs must not hold the job's start or its
 * result. */
#define MAIL_TIMEOUT_MS 5000

bool gded_mail_wanted(const struct gded_job *job, char point)
{
	return job->sendmail && job->sendmail[0] == '/' && job->mail_points &&
	       strchr(job->mail_points, point) && !strchr(job->mail_points, 'n');
}

int gded_mail_send(const struct gded_job *job, const char *what)
{
	char id[24 + JOBID_SERVER_MAX], msg[2048];
	const char *to = job->mail_users && *job->mail_users ? job->mail_users : job->user;
	int fds[2], st, n;
	int64_t deadline;
	pid_t pid, w;

	jobid_format((int64_t)job->jobid, job->server, id, sizeof(id));
	n = snprintf(msg, sizeof(msg),
		     "To: %s\nSubject: qpool job %s (%s): %s\n\n"
		     "Job %s, named %s, in queue %s on %s: %s.\n",
		     to, id, job->name, what, id, job->name, job->queue, job->node, what);
	if (n < 0 || (size_t)n >= sizeof(msg))
		return -EINVAL;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (pid == 0) {
		/* As the user: the mail is theirs, and root runs nothing the
		 * user named. */
		char *argv[] = { (char *)job->sendmail, "-t", "-oi", NULL };
		char *envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };

		if ((job->groups ? setgroups(job->ngroups, job->groups) :
		     initgroups(job->user, job->gid)) < 0 ||
		    setgid(job->gid) < 0 || setuid(job->uid) < 0 || dup2(fds[0], STDIN_FILENO) < 0)
			_exit(1);
		execve(job->sendmail, argv, envp);
		_exit(127);
	}
	close(fds[0]);
	/* A short message fits the pipe: the write does not block. */
	st = write(fds[1], msg, (size_t)n) == n ? 0 : -EIO;
	close(fds[1]);
	deadline = time_mono_ns() + MAIL_TIMEOUT_MS * NSEC_PER_MSEC;
	while ((w = waitpid(pid, &st, WNOHANG)) == 0 && time_mono_ns() < deadline) {
		struct timespec ts = { .tv_nsec = 5 * NSEC_PER_MSEC };

		nanosleep(&ts, NULL);
	}
	if (w == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return -ETIMEDOUT;
	}
	return w == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}
