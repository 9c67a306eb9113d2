/* SPDX-License-Identifier: MIT */
/* The child side of gded's fork: fence, drop to the user, open outputs, exec the script. */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exe.h"
#include "gded-internal.h"
#include "timeutil.h"

/* How long the OOM note's writer may take (a file on a hung mount). */
#define NOTE_TIMEOUT_MS 5000

/* Reports why the job could not start: to the parent over the pipe and,
 * when it is open, to the job's stderr file, where the user looks. */
__attribute__((noreturn, format(printf, 3, 4)))
static void child_fail(const struct gded_child *c, int err_fd, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	if (c->task)
		line[n++] = '\n';   /* the task's stderr: a line, as a shell writes */
	if (write(c->report_fd, line, (size_t)n) < 0) {
		/* Nothing else to tell: the parent then sees exit 127 with no
		 * reason and says so. */
	}
	if (err_fd >= 0 && !c->task) {
		line[n] = '\n';
		if (write(err_fd, line, (size_t)n + 1) < 0) {
			/* The pipe already carries the reason. */
		}
	}
	_exit(127);
}

/* Takes on the user's groups and ids. qnoded resolved the groups and
 * checked the name against the uid (its per-uid cache): that spares each
 * job ~0.6 ms of nsswitch here (getpwnam, then initgroups loading every
 * group module). Without them (a spec written by hand), checks that the
 * spec's user is who the system says and asks initgroups. As root only:
 * SCHED_FIFO and cgroup writes must come before this (docs/DESIGN-FACTS.md: EPERM
 * after setuid). */
static void child_drop(const struct gded_child *c)
{
	const struct gded_job *job = c->job;
	struct passwd pw, *found = NULL;
	char buf[4096];
	gid_t gid;
	int r;

	if (job->groups) {
		if (setgroups(job->ngroups, job->groups) < 0)
			child_fail(c, -1, "cannot set the groups of %s: %s", job->user,
				   strerror(errno));
		goto ids;
	}
	r = getpwnam_r(job->user, &pw, buf, sizeof(buf), &found);
	if (r != 0 || !found)
		child_fail(c, -1, "unknown user %s", job->user);
	if (pw.pw_uid != job->uid)
		child_fail(c, -1, "user %s has uid %u, not %u", job->user, (unsigned)pw.pw_uid,
			   (unsigned)job->uid);
	if (initgroups(job->user, job->gid) < 0)
		child_fail(c, -1, "cannot set the groups of %s: %s", job->user, strerror(errno));
ids:
	gid = job->gid;
	if (job->group) {
		/* qsub -W group_list: qpoold checked membership; the groups
		 * qnoded resolved here must agree. */
		struct group gr, *g = NULL;
		bool member = false;

		if (getgrnam_r(job->group, &gr, buf, sizeof(buf), &g) != 0 || !g)
			child_fail(c, -1, "-W group_list=%s: no such group here", job->group);
		member = g->gr_gid == job->gid;
		for (size_t i = 0; job->groups && i < job->ngroups; i++)
			member |= job->groups[i] == g->gr_gid;
		if (!member && !job->groups) {
			gid_t list[NGROUPS_MAX];
			int n = getgroups(NGROUPS_MAX, list);

			for (int i = 0; i < n; i++)
				member |= list[i] == g->gr_gid;
		}
		if (!member)
			child_fail(c, -1, "-W group_list=%s: %s is not a member", job->group, job->user);
		gid = g->gr_gid;
	}
	if (setgid(gid) < 0)
		child_fail(c, -1, "cannot set gid %u: %s", (unsigned)gid, strerror(errno));
	if (setuid(job->uid) < 0)
		child_fail(c, -1, "cannot set uid %u: %s", (unsigned)job->uid, strerror(errno));
}

/* Whether the existing file st at path, not the caller's, sits in a
 * sticky group- or world-writable directory and is not the directory
 * owner's either: a name planted there in advance (ids are predictable)
 * to receive the job's output, what fs.protected_regular refuses where
 * it is set. */
static bool planted(const char *path, const struct stat *st)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat ds;
	size_t n;

	if (!slash)
		return false;
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= sizeof(dir))
		return false;
	memcpy(dir, path, n);
	dir[n] = '\0';
	if (stat(dir, &ds) < 0)
		return false;
	return (ds.st_mode & S_ISVTX) && (ds.st_mode & (S_IWGRP | S_IWOTH)) &&
	       st->st_uid != ds.st_uid;
}

int gded_output_open(const char *path, int extra, char *why, size_t len)
{
	struct stat st;
	int fd, r;

	fd = open(path, GDED_OUTPUT_FLAGS | extra, 0666);
	if (fd < 0) {
		r = -errno;
		/* A symlink as the last component is refused (ELOOP, or
		 * EACCES with O_CREAT on 6.x kernels); ENXIO is a FIFO
		 * without a reader or a socket. Say which. */
		if (lstat(path, &st) == 0 &&
		    (S_ISLNK(st.st_mode) || (r == -ENXIO && !S_ISREG(st.st_mode)))) {
			snprintf(why, len, "%s", S_ISLNK(st.st_mode) ? "it is a symbolic link" :
				 "it is not a regular file");
			return r;
		}
		snprintf(why, len, "%s", strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(why, len, "%s", strerror(-r));
		goto fail;
	}
	/* Regular files, and /dev/null (PBS users write -o /dev/null):
	 * nothing else, so no FIFO, tty or device can hold the job or gded. */
	if (!S_ISREG(st.st_mode) &&
	    !(S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3)) {
		r = -EINVAL;
		snprintf(why, len, "it is not a regular file");
		goto fail;
	}
	if (S_ISREG(st.st_mode) && st.st_uid != geteuid() && planted(path, &st)) {
		r = -EPERM;
		snprintf(why, len, "it belongs to uid %u, in a shared sticky directory",
			 (unsigned)st.st_uid);
		goto fail;
	}
	if (S_ISREG(st.st_mode) && !(extra & O_APPEND) && ftruncate(fd, 0) < 0) {
		r = -errno;
		snprintf(why, len, "%s", strerror(-r));
		goto fail;
	}
	if (fcntl(fd, F_SETFL, (extra & O_APPEND)) < 0) {
		r = -errno;
		snprintf(why, len, "%s", strerror(-r));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return r;
}

/* Opens one output file as the user. One the user cannot create where
 * asked (a directory this node lacks) goes to its kept path, as PBS keeps
 * what it cannot deliver; the errno is left in the page for the parent
 * to say so. On failure, child_fail with the asked path's reason. */
static int child_output(const struct gded_child *c, const char *path, bool is_err, int err_fd)
{
	char why[128], kept[PATH_MAX], why_kept[128];
	int fd, k;

	fd = gded_output_open(path, 0, why, sizeof(why));
	if (fd >= 0)
		return fd;
	if (!gded_output_undeliverable(path, fd) ||
	    gded_output_kept_path(c->job, is_err, kept, sizeof(kept)) < 0)
		child_fail(c, err_fd, "cannot open %s: %s", path, why);
	k = gded_output_open(kept, 0, why_kept, sizeof(why_kept));
	if (k < 0)
		child_fail(c, err_fd, "cannot open %s: %s (nor keep it in %s: %s)", path, why, kept,
			   why_kept);
	c->exec_stamp[is_err ? 5 : 4] = -fd;
	return k;
}

/* Opens stdout and stderr with the user's own credentials (we are the
 * user by now) and umask, stderr first so that a failure to open stdout
 * can still be told in the stderr file. Returns the stderr fd through
 * ret_err. */
static int child_outputs(const struct gded_child *c, int *ret_err)
{
	const struct gded_job *job = c->job;
	int out, err = -1;

	if (!job->join)
		err = child_output(c, job->stderr_path, true, -1);
	out = child_output(c, job->stdout_path, false, err);
	*ret_err = job->join ? out : err;
	return out;
}

/* SCHED_FIFO/RR for the job: here, as root, inside the job's groups
 * (docs/DESIGN-FACTS.md: EPERM after setuid, and EPERM in a v1 cpu group without RT
 * runtime, which is why the cgroup is joined first). No
 * SCHED_RESET_ON_FORK: the job's threads and children inherit it. */
static void child_realtime(const struct gded_child *c)
{
	const struct gded_job *job = c->job;
	struct sched_param sp = { .sched_priority = job->rt_priority };

	if (sched_setscheduler(0, job->rt_policy, &sp) < 0)
		child_fail(c, -1, "cannot run realtime (%s priority %d): %s",
			   job->rt_policy == SCHED_RR ? "SCHED_RR" : "SCHED_FIFO",
			   job->rt_priority, strerror(errno));
}

/* By hand: the command as root, with gded's stdio, directory and
 * environment, in gded's process group so the terminal's ^C reaches it. */
__attribute__((noreturn))
static void child_exec_command(const struct gded_child *c)
{
	c->exec_stamp[0] = time_wall_ns();
	c->exec_stamp[1] = time_mono_ns();
	execvp(c->job->argv[0], c->job->argv);
	c->exec_stamp[0] = c->exec_stamp[1] = 0;
	c->exec_stamp[2] = errno;
	child_fail(c, -1, "cannot execute %s: %s", c->job->argv[0], strerror(errno));
}

/* Marks every fd above stderr close-on-exec: whatever qnoded or gded
 * held (an fd the admin's shell left open, the report pipe) must not
 * reach the job. close_range (Linux 5.11); a loop where it is missing. */
static void child_fds_cloexec(void)
{
	struct rlimit rl;

	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > 1u << 20)
		rl.rlim_cur = 1u << 20;
	for (int fd = 3; fd < (int)rl.rlim_cur; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* The first bytes of the script (its #! line and, when it is short, all
 * of it), read as the user. 0 when it cannot be read: the exec then says
 * why. */
static size_t script_peek(const char *script, char *buf, size_t len)
{
	int fd = open(script, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	return (size_t)n;
}

/* The argv that runs the job's script, as gded_child_exec runs a batch
 * one that is not a plain command: -S's shell, else the #! line's
 * interpreter, else the user's shell. */
static void script_argv(const struct gded_job *job, char *line, size_t len, char *argv[4])
{
	char *interp = NULL, *arg = NULL, *words[64];
	size_t n = script_peek(job->script, line, len);

	argv[0] = (char *)job->shell;
	argv[1] = (char *)job->script;
	argv[2] = argv[3] = NULL;
	if (n > 0)
		(void)gded_script_simple(line, n, &interp, &arg, words, 64);
	if (job->pbs_shell) {
		argv[0] = (char *)job->pbs_shell;
	} else if (interp) {
		argv[0] = interp;
		argv[1] = arg ? arg : (char *)job->script;
		argv[2] = arg ? (char *)job->script : NULL;
	}
}

/* qsub -I: the pty as controlling terminal and stdio, then the user's
 * shell, interactive, in the job's directory; with -I -- CMD (srun
 * --pty), the job's script instead, which execs CMD. No output files:
 * the terminal is the output, as in PBS. */
__attribute__((noreturn))
static void child_terminal(const struct gded_child *c)
{
	const struct gded_job *job = c->job;
	const char *shell = job->pbs_shell ? job->pbs_shell : job->shell;
	char *argv[4] = { (char *)shell, "-i", NULL, NULL }, line[PATH_MAX + 256];
	int fd = open(c->pty_slave, O_RDWR | O_CLOEXEC);

	if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) < 0)
		child_fail(c, -1, "cannot open the job's terminal %s: %s", c->pty_slave, strerror(errno));
	if (chdir(job->workdir) < 0)
		child_fail(c, -1, "cannot change directory to %s: %s", job->workdir, strerror(errno));
	if (dup2(fd, STDIN_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
		child_fail(c, -1, "dup2: %s", strerror(errno));
	gded_nofile_restore();
	child_fds_cloexec();
	if (job->interactive_command) {
		/* The command may be short: it starts once its output has
		 * somewhere to go, the user's qsub (srun) on the socket. */
		struct pollfd p = { .fd = c->attach_fd, .events = POLLIN };

		if (c->attach_fd < 0 || poll(&p, 1, GDED_ATTACH_TIMEOUT_MS) != 1)
			child_fail(c, -1, "nobody reached the job's terminal within %d s",
				   GDED_ATTACH_TIMEOUT_MS / 1000);
		script_argv(job, line, sizeof(line), argv);
	}
	c->exec_stamp[0] = time_wall_ns();
	c->exec_stamp[1] = time_mono_ns();
	execve(argv[0], argv, c->envp);
	c->exec_stamp[0] = c->exec_stamp[1] = 0;
	c->exec_stamp[2] = errno;
	child_fail(c, STDERR_FILENO, "cannot execute %s: %s", argv[0], strerror(errno));
}

/* The directory bash and dash put in PWD: the inherited PWD when it
 * names the directory they start in, else getcwd (bash's
 * set_working_directory, dash's getpwd). */
static const char *direct_pwd(char *const *envp, char *buf, size_t len)
{
	struct stat a, b;

	for (char *const *e = envp; *e; e++)
		if (strncmp(*e, "PWD=/", 5) == 0 && stat(*e + 4, &a) == 0 && stat(".", &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return *e + 4;
	return getcwd(buf, len);
}

/* One try of the PATH search: true when the search goes on (the shell's
 * rule: not there, not a directory, not executable). */
static bool direct_try(const struct gded_child *c, const char *path, char **argv, char **env,
		       char *underscore)
{
	if (underscore)
		snprintf(underscore, PATH_MAX + 3, "_=%s", path);
	c->exec_stamp[0] = time_wall_ns();
	c->exec_stamp[1] = time_mono_ns();
	execve(path, argv, env);
	c->exec_stamp[0] = c->exec_stamp[1] = 0;
	return errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == ENAMETOOLONG ||
	       errno == ELOOP;
}

/* The script is one plain command (argv, from gded_script_simple) and
 * interp, its #! shell or NULL: exec the program as that shell would,
 * with the environment it would give (docs/ARCHITECTURE.md, "The job's
 * shell, only when it needs one"). Returns when it cannot, and then the
 * shell runs the script: a program not found or not executable, a file
 * without #! (ENOEXEC), get the shell's own message and status. */
static void child_exec_direct(const struct gded_child *c, const char *interp, char **argv)
{
	const struct gded_job *job = c->job;
	const char *env_path, *pwd, *dir;
	char **env, *underscore, cwd[PATH_MAX], path[PATH_MAX];
	bool bash;
	int len;

	if (c->pty_slave ||
	    !gded_direct_shell(job->pbs_shell, interp, job->shell, c->envp, &env_path, &bash))
		return;
	pwd = direct_pwd(c->envp, cwd, sizeof(cwd));
	if (!pwd)
		return;
	env = gded_direct_env(c->envp, pwd, bash, PATH_MAX, &underscore);
	if (!env)
		return;
	c->exec_stamp[3] = 1;
	if (strchr(argv[0], '/')) {
		(void)direct_try(c, argv[0], argv, env, underscore);
	} else {
		while (gded_path_next(&env_path, &dir, &len))
			if (snprintf(path, sizeof(path), "%.*s/%s", len, dir, argv[0]) < (int)sizeof(path) &&
			    !direct_try(c, path, argv, env, underscore))
				break;
	}
	c->exec_stamp[3] = 0;
	free(env);
}

static struct rlimit nofile_saved;
static bool nofile_raised;

rlim_t gded_nofile_raise(rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (nofile_raised || rl.rlim_cur >= want)
		return rl.rlim_cur;
	nofile_saved = rl;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return nofile_saved.rlim_cur;
	nofile_raised = true;
	return rl.rlim_cur;
}

bool gded_nofile_saved(struct rlimit *ret)
{
	if (nofile_raised)
		*ret = nofile_saved;
	return nofile_raised;
}

void gded_nofile_restore(void)
{
	if (nofile_raised)
		(void)setrlimit(RLIMIT_NOFILE, &nofile_saved);
}

/* What the script's child and a task's do first, still root: the
 * signal mask, the OOM score, the job's cgroup and its real-time policy.
 * prefix starts a failure's line ("qpool: " where the task's stderr is
 * the only place it shows). */
static void child_enter(const struct gded_child *c, const char *prefix)
{
	sigset_t none;
	int r;

	/* The parent blocks SIGTERM/SIGCHLD (and, by hand, SIGINT/SIGQUIT)
	 * for its signalfd; the job must not inherit that mask. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* gded has the daemons' OOM score adjustment (-900, from qnoded):
	 * the job gets the normal 0 back, while still root; lowering it
	 * again needs CAP_SYS_RESOURCE, which the job lacks. Raising never
	 * fails, so an error means qnoded ran above 0 (where it could not
	 * lower its own): the job keeps that, which is no less safe.
	 * Measured ~6 us here, of a ~600 us launch. */
	(void)exe_oom_score_adj_set(0);
	if (c->cg) {
		r = cgroup_job_attach(c->cg, 0);
		if (r < 0)
			child_fail(c, -1, "%scannot join the job's cgroup: %s", prefix, strerror(-r));
	}
	/* The daemons' short slice (exe.h) is not the job's: the kernel's
	 * default back, as every process on the host has it. Only now: a
	 * move into a new v1 cpu group waits for the CPU as a fresh group
	 * does, and on a busy node the short slice shortens that wait. */
	(void)exe_sched_slice_set(0);
	if (c->job->reserve == GDED_RESERVE_REALTIME)
		child_realtime(c);
}

/* A task's start up to its exec: what the script's child does, with the
 * task's stdio, directory and argv. */
void gded_task_exec(const struct gded_child *c)
{
	const struct gded_job *job = c->job;
	const struct gded_task_exec *t = c->task;
	extern char **environ;
	int r;

	child_enter(c, "qpool: ");
	if (setsid() < 0)
		child_fail(c, -1, "qpool: setsid: %s", strerror(errno));
	child_drop(c);
	umask(job->umask);
	/* rsh's rule: the directory asked for, else HOME, else /. */
	if ((!t->cwd || chdir(t->cwd) < 0) && chdir(job->home) < 0 && chdir("/") < 0)
		child_fail(c, -1, "qpool: cannot change directory: %s", strerror(errno));
	if (dup2(t->in, STDIN_FILENO) < 0 || dup2(t->out, STDOUT_FILENO) < 0 ||
	    dup2(t->err, STDERR_FILENO) < 0)
		child_fail(c, -1, "qpool: dup2: %s", strerror(errno));
	gded_nofile_restore();
	child_fds_cloexec();
	/* execvp searches the PATH of environ, not of an envp argument. */
	environ = c->envp;
	execvp(t->argv[0], t->argv);
	r = errno;
	child_fail(c, STDERR_FILENO, "%s: %s", t->argv[0],
		   r == ENOENT && !strchr(t->argv[0], '/') ? "command not found" : strerror(r));
}

void gded_child_exec(const struct gded_child *c)
{
	const struct gded_job *job = c->job;
	char *argv[4] = { (char *)job->shell, (char *)job->script, NULL, NULL };
	char line[PATH_MAX + 256], *interp = NULL, *arg = NULL, *words[64];
	int out, err, in, nwords = 0;
	size_t n;

	child_enter(c, "");
	if (job->argv)
		child_exec_command(c);
	/* Own session and process group: the parent signals the job as
	 * -pid, and the job keeps no controlling terminal. */
	if (setsid() < 0)
		child_fail(c, -1, "setsid: %s", strerror(errno));
	child_drop(c);
	/* The submitter's umask, as qsub read it: the output files, and
	 * whatever the job creates, get the modes the user would get. */
	umask(job->umask);
	if (c->pty_slave)
		child_terminal(c);
	out = child_outputs(c, &err);
	if (chdir(job->workdir) < 0)
		child_fail(c, err, "cannot change directory to %s: %s", job->workdir,
			   strerror(errno));
	in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		child_fail(c, err, "cannot open /dev/null: %s", strerror(errno));
	/* dup2 clears O_CLOEXEC on the copies; the originals close at exec.
	 * main() made sure fds 0-2 were open, so none of these is 0-2. */
	if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
	    dup2(err, STDERR_FILENO) < 0)
		child_fail(c, err, "dup2: %s", strerror(errno));
	gded_nofile_restore();
	child_fds_cloexec();
	/* One read and one parse: the #! line for the exec below, and the
	 * one plain command when the script is only that. */
	n = script_peek(job->script, line, sizeof(line));
	if (n > 0)
		nwords = gded_script_simple(line, n, &interp, &arg, words, 64);
	/* A script that filled the buffer may go on past it. */
	if (nwords > 0 && n < sizeof(line) - 1)
		child_exec_direct(c, interp, words);
	if (job->pbs_shell) {
		argv[0] = (char *)job->pbs_shell;
	} else if (interp) {
		argv[0] = interp;
		argv[1] = arg ? arg : (char *)job->script;
		argv[2] = arg ? (char *)job->script : NULL;
	}
	c->exec_stamp[0] = time_wall_ns();
	c->exec_stamp[1] = time_mono_ns();
	execve(argv[0], argv, c->envp);
	c->exec_stamp[0] = c->exec_stamp[1] = 0;
	c->exec_stamp[2] = errno;
	child_fail(c, STDERR_FILENO, "cannot execute %s: %s", argv[0], strerror(errno));
}

int gded_note_append(const struct gded_job *job, bool kept, const char *line)
{
	const char *path = job->join ? job->stdout_path : job->stderr_path;
	char kept_path[PATH_MAX];
	size_t len = strlen(line);
	int64_t deadline;
	pid_t pid, w;
	int st;

	if (!path)
		return -ENOENT;
	if (kept) {
		if (gded_output_kept_path(job, !job->join, kept_path, sizeof(kept_path)) < 0)
			return -ENOENT;
		path = kept_path;
	}
	/* A short-lived child takes the user's credentials, as the job did,
	 * so root never writes where the user could not (a symlink planted
	 * in place of the output file, a directory the user lost), and opens
	 * the file as the job did: no symlink, no FIFO or device. */
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char why[128];
		int fd;

		if ((job->groups ? setgroups(job->ngroups, job->groups) :
		     initgroups(job->user, job->gid)) < 0 ||
		    setgid(job->gid) < 0 || setuid(job->uid) < 0)
			_exit(1);
		umask(job->umask);
		fd = gded_output_open(path, O_APPEND, why, sizeof(why));
		if (fd < 0)
			_exit(1);
		_exit(write(fd, line, len) == (ssize_t)len ? 0 : 1);
	}
	/* Bounded: a file on a hung mount must not keep gded (and the
	 * job's result) waiting. */
	deadline = time_mono_ns() + NOTE_TIMEOUT_MS * NSEC_PER_MSEC;
	while ((w = waitpid(pid, &st, WNOHANG)) == 0 && time_mono_ns() < deadline) {
		struct timespec ts = { .tv_nsec = 5 * NSEC_PER_MSEC };

		nanosleep(&ts, NULL);
	}
	if (w == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return -ETIMEDOUT;
	}
	if (w != pid)
		return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}
