/* SPDX-License-Identifier: MIT */
/* The batch script's child started without a copy of gded's memory (issue 39). */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "exe.h"
#include "gded-internal.h"

/* Why (docs/ARCHITECTURE.md, "The script's child without a fork"): a
 * fork copies gded's page tables and every page either side writes
 * after it faults: a quarter of gded's CPU a job. A child made with
 * clone(CLONE_VM) shares gded's memory until its exec, so nothing is
 * copied. Without CLONE_VFORK gded is never held by it: a child the
 * user stops (SIGSTOP, once it is theirs) or that hangs in an open on a
 * dead mount waits alone, as a forked one does, and qdel and the
 * walltime end it the same way.
 *
 * What makes sharing root's memory with a process that becomes the
 * user's safe until its exec:
 * - The user cannot reach the memory: the setuid makes the mm
 *   non-dumpable (commit_creds, with fs.suid_dumpable 0, which
 *   gded_spawn_init checks), so ptrace, /proc/PID/mem and its fds,
 *   process_vm_writev and pidfd_getfd need CAP_SYS_PTRACE, and no
 *   signal dumps it.
 * - The user can signal it: every signal has its default action (gded
 *   catches none: it reads them from a signalfd; a sanitizer's handlers
 *   are put back to the default first), so no handler runs on shared
 *   memory; killed or stopped anywhere, it holds no lock of gded's.
 * - It runs gded's code but calls no C library function that keeps
 *   state: raw system calls (no errno, which is gded's thread's),
 *   nothing allocated, every string and array made by gded before the
 *   clone and left untouched until the child is gone.
 * - An OOM kill of it would kill gded too (every process of the
 *   memory): a job whose limit could be reached before its exec is
 *   forked (SPAWN_MEM_MIN).
 * So the child does only the common case: any step that does not
 * succeed plainly ends it with GDED_SPAWN_RETRY in the stamp page and
 * gded starts the forked child (child.c), which does the whole start
 * again and says what failed, as it always did. */

#if defined(__x86_64__)

#define SPAWN_STACK (16 * 1024)
#define SPAWN_CG_MAX 8
#define SPAWN_PATH_MAX 64   /* PATH entries tried for a direct exec */
/* Below this memory limit the job's start is forked: an OOM kill of
 * the child before its exec kills every process of its memory, gded
 * too (oom_kill.c), and a limit of a few pages reaches that in the
 * exec's first allocations; a forked child dies alone and the job ends
 * "oom" as it always did. No real job asks so little. */
#define SPAWN_MEM_MIN (16ULL << 20)

struct gded_spawn {
	struct cgroup_attach_step cg[SPAWN_CG_MAX];
	size_t ncg;
	const struct gded_job *job;   /* its ids, umask, outputs, directory */
	struct sched_param rt;
	bool nofile;
	struct rlimit nofile_saved;
	/* The script's one command without its shell: each PATH candidate
	 * and, for bash, its "_=PATH" put in env[underscore]. */
	char **dargv, **denv;
	size_t underscore, ndirect;
	/* denv's PWD: the inherited one when it names the directory the
	 * child is in (the child stats both: gded never touches the job's
	 * directory, which may hang), else getcwd's, into pwd. */
	size_t pwd_slot;
	char *pwd_inherited;
	char pwd[4 + PATH_MAX];
	char *dpath[SPAWN_PATH_MAX], *dunder[SPAWN_PATH_MAX], *dstrs;
	char *argv[4];
	char *const *envp;
	int64_t *page;
	uint64_t handled;   /* signals 1-64 with a handler: back to SIG_DFL */
	dev_t null_rdev;    /* /dev/null's, 1:3 (makedev is a libc call unoptimised) */
	char text[];        /* the script's first bytes, then its words (gded_script_simple) */
};

/* Long enough for glibc's clone on this side and the child's frame. */
static char spawn_stack[SPAWN_STACK] __attribute__((aligned(64)));

#define SPAWN_CODE __attribute__((no_sanitize_address, no_sanitize("undefined"), noinline))
#define SPAWN_INLINE __attribute__((always_inline, no_sanitize_address, no_sanitize("undefined"))) \
	static inline

SPAWN_INLINE long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall" : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#define sys(n, a, b, c) sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)

SPAWN_INLINE int64_t spawn_clock(clockid_t id)
{
	struct timespec ts;

	if (sys(SYS_clock_gettime, id, &ts, 0) < 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Gives up: the forked child does it all again and says what failed. */
__attribute__((noreturn)) SPAWN_INLINE void spawn_retry(struct gded_spawn *p)
{
	p->page[GDED_SPAWN_RETRY] = 1;
	for (;;)
		sys(SYS_exit, 127, 0, 0);
}

/* One output as gded_output_open opens it, in the plain case only: a
 * regular file of the user's own (another's may be planted, which the
 * forked child tells) or /dev/null. */
SPAWN_INLINE int spawn_output(struct gded_spawn *p, const char *path)
{
	struct stat st;
	long fd = sys6(SYS_openat, AT_FDCWD, (long)path, GDED_OUTPUT_FLAGS, 0666, 0, 0);

	if (fd < 0 || sys(SYS_fstat, fd, &st, 0) < 0)
		spawn_retry(p);
	if (S_ISREG(st.st_mode)) {
		if (st.st_uid != p->job->uid || sys(SYS_ftruncate, fd, 0, 0) < 0)
			spawn_retry(p);
	} else if (!(S_ISCHR(st.st_mode) && st.st_rdev == p->null_rdev)) {
		spawn_retry(p);
	}
	if (sys(SYS_fcntl, fd, F_SETFL, 0) < 0)
		spawn_retry(p);
	return (int)fd;
}

SPAWN_INLINE void spawn_stamp(struct gded_spawn *p)
{
	p->page[0] = spawn_clock(CLOCK_REALTIME);
	p->page[1] = spawn_clock(CLOCK_MONOTONIC);
}

/* What gded_child_exec does for a batch job, step for step. */
SPAWN_CODE static int spawn_child(void *arg)
{
	struct gded_spawn *p = arg;
	const struct gded_job *job = p->job;
	struct exe_sched_attr attr = { 0 };
	uint64_t none = 0;
	char pid[24], *d = pid + sizeof(pid);
	long r, fd, out, err, in;

	for (int sig = 1; sig <= 64; sig++) {
		if (p->handled & (1ULL << (sig - 1))) {
			struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } dfl = { 0 };

			sys6(SYS_rt_sigaction, sig, (long)&dfl, 0, 8, 0, 0);
		}
	}
	sys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&none, 0, 8, 0, 0);
	fd = sys6(SYS_openat, AT_FDCWD, (long)"/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC, 0, 0, 0);
	if (fd >= 0) {
		sys(SYS_write, fd, "0", 1);
		sys(SYS_close, fd, 0, 0);
	}
	for (long v = sys(SYS_getpid, 0, 0, 0); v > 0 || d == pid + sizeof(pid); v /= 10)
		*--d = (char)('0' + v % 10);
	for (size_t i = 0; i < p->ncg; i++) {
		const struct cgroup_attach_step *s = &p->cg[i];

		if (!s->name) {
			if (sys6(SYS_pwrite64, s->fd, (long)"0", 1, 0, 0, 0) != 1)
				spawn_retry(p);
			continue;
		}
		fd = sys6(SYS_openat, s->fd, (long)s->name, O_WRONLY | O_TRUNC | O_CLOEXEC, 0, 0, 0);
		if (fd < 0)
			spawn_retry(p);
		r = sys(SYS_write, fd, d, pid + sizeof(pid) - d);
		sys(SYS_close, fd, 0, 0);
		if (r != pid + sizeof(pid) - d)
			spawn_retry(p);
	}
	/* The kernel's default slice back (exe_sched_slice_set(0)). */
	if (sys6(SYS_sched_getattr, 0, (long)&attr, sizeof(attr), 0, 0, 0) == 0 &&
	    (attr.sched_policy == SCHED_OTHER || attr.sched_policy == SCHED_BATCH) &&
	    attr.sched_runtime != 0) {
		attr.size = sizeof(attr);
		attr.sched_flags &= EXE_SCHED_FLAG_RESET_ON_FORK;
		attr.sched_runtime = attr.sched_deadline = attr.sched_period = 0;
		sys(SYS_sched_setattr, 0, &attr, 0);
	}
	if (job->reserve == GDED_RESERVE_REALTIME &&
	    sys(SYS_sched_setscheduler, 0, job->rt_policy, &p->rt) < 0)
		spawn_retry(p);
	if (sys(SYS_setsid, 0, 0, 0) < 0 || sys(SYS_setgroups, job->ngroups, job->groups, 0) < 0 ||
	    sys(SYS_setgid, job->gid, 0, 0) < 0 || sys(SYS_setuid, job->uid, 0, 0) < 0)
		spawn_retry(p);
	sys(SYS_umask, job->umask, 0, 0);
	err = job->join ? -1 : spawn_output(p, job->stderr_path);
	out = spawn_output(p, job->stdout_path);
	if (err < 0)
		err = out;
	if (sys(SYS_chdir, job->workdir, 0, 0) < 0)
		spawn_retry(p);
	in = sys6(SYS_openat, AT_FDCWD, (long)"/dev/null", O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (in < 0 || sys(SYS_dup2, in, STDIN_FILENO, 0) < 0 || sys(SYS_dup2, out, STDOUT_FILENO, 0) < 0 ||
	    sys(SYS_dup2, err, STDERR_FILENO, 0) < 0)
		spawn_retry(p);
	if (p->nofile)
		sys(SYS_setrlimit, RLIMIT_NOFILE, &p->nofile_saved, 0);
	if (sys(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		spawn_retry(p);
	if (p->ndirect) {
		struct stat a, b;

		/* direct_pwd's choice (child.c), as the user, in the directory. */
		if (p->pwd_inherited &&
		    sys(SYS_newfstatat, AT_FDCWD, p->pwd_inherited + 4, &a) == 0 &&
		    sys(SYS_newfstatat, AT_FDCWD, ".", &b) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			p->denv[p->pwd_slot] = p->pwd_inherited;
		else if (sys(SYS_getcwd, p->pwd + 4, PATH_MAX, 0) <= 0)
			spawn_retry(p);
		p->page[3] = 1;
		for (size_t i = 0; i < p->ndirect; i++) {
			if (p->dunder[i])
				p->denv[p->underscore] = p->dunder[i];
			spawn_stamp(p);
			r = sys(SYS_execve, p->dpath[i], p->dargv, p->denv);
			p->page[0] = p->page[1] = 0;
			if (r != -ENOENT && r != -ENOTDIR && r != -EACCES && r != -ENAMETOOLONG &&
			    r != -ELOOP)
				break;
		}
		p->page[3] = 0;
	}
	spawn_stamp(p);
	sys(SYS_execve, p->argv[0], p->argv, p->envp);
	p->page[0] = p->page[1] = 0;
	spawn_retry(p);
}

static struct {
	bool known, ok;
	uint64_t handled;
} spawn_host;

/* Once a process: the signals with a handler, and whether the host
 * keeps a process that changed ids out of core dumps
 * (fs.suid_dumpable 0). Otherwise the user's SIGQUIT before the exec
 * could dump gded's memory, or on kernels before 5.16 end gded with the
 * child (a core dump stopped every process of the memory): fork then. */
void gded_spawn_init(void)
{
	char v[8] = "";
	int fd;

	if (spawn_host.known)
		return;
	spawn_host.known = true;
	for (int sig = 1; sig <= 64; sig++) {
		struct sigaction sa;

		if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa) < 0)
			continue;
		if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)
			spawn_host.handled |= 1ULL << (sig - 1);
	}
	fd = open("/proc/sys/fs/suid_dumpable", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		spawn_host.ok = read(fd, v, sizeof(v) - 1) > 0 && v[0] == '0';
		close(fd);
	}
}

/* The script's one plain command (child_exec_direct's choices, made
 * here as root on the same script, directory and environment): its PATH
 * candidates in p. False when the shell runs the script. */
static bool spawn_direct(struct gded_spawn *p, const struct gded_child *c, const char *interp,
			 char **argv)
{
	const char *env_path, *dir;
	char *underscore, *strs;
	size_t room;
	bool bash;
	int len;

	if (!gded_direct_shell(c->job->pbs_shell, interp, c->job->shell, c->envp, &env_path, &bash))
		return false;
	for (char **e = c->envp; *e && !p->pwd_inherited; e++)
		if (strncmp(*e, "PWD=/", 5) == 0)
			p->pwd_inherited = *e;
	/* "_=DIR/NAME" for every entry, "./NAME" for an empty one. */
	room = strlen(env_path) + 1;
	for (const char *d = env_path; *d; d++)
		room += *d == ':';
	room *= strlen(argv[0]) + 6;
	room += strlen(env_path);
	p->dstrs = strs = malloc(room);
	if (!strs)
		return false;
	p->denv = gded_direct_env(c->envp, "", bash, 0, &underscore);
	if (!p->denv)
		return false;
	for (p->underscore = 0; underscore && p->denv[p->underscore] != underscore; p->underscore++)
		;
	/* gded_direct_env's own "PWD=" slot, the one not from envp. */
	for (p->pwd_slot = 0; p->denv[p->pwd_slot]; p->pwd_slot++)
		if (strcmp(p->denv[p->pwd_slot], "PWD=") == 0)
			break;
	if (!p->denv[p->pwd_slot])
		return false;
	memcpy(p->pwd, "PWD=", 4);
	p->denv[p->pwd_slot] = p->pwd;
	p->dargv = argv;
	/* A name with a slash is its one candidate, as the shell's. */
	if (strchr(argv[0], '/')) {
		p->dunder[0] = underscore ? strs : NULL;
		p->dpath[p->ndirect++] = strs + 2;
		sprintf(strs, "_=%s", argv[0]);
		return true;
	}
	while (gded_path_next(&env_path, &dir, &len)) {
		if (p->ndirect == SPAWN_PATH_MAX)
			return false;
		p->dunder[p->ndirect] = underscore ? strs : NULL;
		p->dpath[p->ndirect++] = strs + 2;
		strs += sprintf(strs, "_=%.*s/%s", len, dir, argv[0]) + 1;
	}
	return true;
}

int gded_spawn_prepare(const struct gded_child *c, struct gded_spawn **ret)
{
	const struct gded_job *job = c->job;
	char *interp = NULL, *arg = NULL, **words;
	size_t text = PATH_MAX + 256;
	struct gded_spawn *p;
	int fd, nwords = 0;
	ssize_t n;

	*ret = NULL;
	gded_spawn_init();
	if (!spawn_host.ok || job->argv || c->pty_slave || c->task || !job->groups || job->group || !job->shell ||
	    (job->mem > 0 && job->mem < SPAWN_MEM_MIN))
		return -ENOTSUP;
	p = calloc(1, sizeof(*p) + text + 64 * sizeof(char *));
	if (!p)
		return -ENOMEM;
	words = (char **)(p->text + text);
	if (c->cg) {
		ssize_t k = cgroup_job_attach_plan(c->cg, p->cg, SPAWN_CG_MAX);

		if (k < 0)
			goto no;
		p->ncg = (size_t)k;
	}
	p->job = job;
	p->rt.sched_priority = job->rt_priority;
	p->nofile = gded_nofile_saved(&p->nofile_saved);
	p->envp = c->envp;
	p->page = c->exec_stamp;
	p->handled = spawn_host.handled;
	p->null_rdev = makedev(1, 3);
	if (!job->stdout_path || (!job->join && !job->stderr_path) || !job->workdir)
		goto no;
	/* The script's first bytes, as the child would peek them (root
	 * reads what the user would: qnoded wrote it, the user's own). */
	fd = open(job->script, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? 0 : read(fd, p->text, text - 1);
	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	p->text[n] = '\0';
	if (n > 0)
		nwords = gded_script_simple(p->text, (size_t)n, &interp, &arg, words, 64);
	if (nwords > 0 && (size_t)n < text - 1 && !spawn_direct(p, c, interp, words))
		p->ndirect = 0;
	p->argv[0] = (char *)job->shell;
	p->argv[1] = (char *)job->script;
	if (job->pbs_shell) {
		p->argv[0] = (char *)job->pbs_shell;
	} else if (interp) {
		p->argv[0] = interp;
		p->argv[1] = arg ? arg : (char *)job->script;
		p->argv[2] = arg ? (char *)job->script : NULL;
	}
	*ret = p;
	return 0;
no:
	gded_spawn_free(p);
	return -ENOTSUP;
}

pid_t gded_spawn_start(struct gded_spawn *p)
{
	p->page[GDED_SPAWN_RETRY] = 0;
	return clone(spawn_child, spawn_stack + sizeof(spawn_stack), CLONE_VM | SIGCHLD, p);
}

void gded_spawn_free(struct gded_spawn *p)
{
	if (!p)
		return;
	free(p->denv);
	free(p->dstrs);
	free(p);
}

#else

void gded_spawn_init(void)
{
}

int gded_spawn_prepare(const struct gded_child *c, struct gded_spawn **ret)
{
	(void)c;
	*ret = NULL;
	return -ENOTSUP;
}

pid_t gded_spawn_start(struct gded_spawn *p)
{
	(void)p;
	errno = ENOTSUP;
	return -1;
}

void gded_spawn_free(struct gded_spawn *p)
{
	(void)p;
}

#endif
