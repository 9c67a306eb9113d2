/* SPDX-License-Identifier: MIT */
/* bench/floor: what this machine allows a contained job launcher at best,
 * with no scheduler, store, network or message in it. W workers run N
 * jobs of CMD between them, each worker one job after another: it forks
 * a wrapper (as qnoded's launcher forks gded), which readies the job's
 * v1 groups, forks the child (it joins them, drops to UID, execs CMD),
 * waits for it and puts the groups away.
 *   floor N W UID plain|fresh|kept5|kept|direct CMD [ARG...]
 *   plain  no groups: fork, fork, setuid, exec, wait
 *   fresh  the six groups made and removed per job (qpool before
 *          lib/cgroup.c kept spares; what cgroup v2 still does)
 *   kept5  the memory group made and removed, the other five renamed
 *          from a spare to the job's name and back (qpool on v1 until
 *          it kept memory groups too; the floor issue 39 was written on)
 *   kept   as qpool on v1 now: all six renamed from a spare and back,
 *          cpuacct's usage and memory's peak reset
 *   direct kept, with no wrapper forked: the worker readies the groups
 *          and forks the child itself, one fork a job (the shape of a
 *          resident wrapper that runs its jobs; issue 39)
 * Prints jobs/s, the CPU of wrappers, children and jobs per job, and
 * wrapper start -> exec p50/p99 (ms). v1 only (exit 77 elsewhere).
 *
 * The idle first line's floor (issue 39's submit -> first line), timed by
 * the same harness as qpool's (bench/run, bench/launch-stages):
 *   floor first-serve SOCK DIR UID   one process that takes a script on a
 *          unix socket, writes it over the last one (DIR/first.sh),
 *          records it durably (a pwrite and an fdatasync of a pre-sized
 *          file, as a reused WAL's commit), answers, and runs it: one fork
 *          into kept groups (as direct), dropped to UID, /bin/bash SCRIPT;
 *          until SIGTERM
 *   floor first-submit SOCK          the submitter, static as qsub is:
 *          its stdin to the server, the answer to its stdout */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROOT "/sys/fs/cgroup"
static const char *const hiers[] = { "cpuset", "cpuacct", "memory", "freezer", "pids", "cpu" };
#define N_HIER (sizeof(hiers) / sizeof(hiers[0]))
#define MEMORY 2
#define PATH_LEN 160

enum mode { PLAIN, FRESH, KEPT5, KEPT };

static char parent[64];
static char cpus_all[256], mems_all[64];   /* the root cpuset's */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what)
{
	fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void put(const char *dir, const char *file, const char *val)
{
	char path[PATH_LEN + 32];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		die(path);
	close(fd);
}

static void get(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || (n = read(fd, buf, len - 1)) < 0)
		die(path);
	buf[n] = '\0';
	close(fd);
}

/* dir[h]: <root>/<h>/<parent>/<name> */
static void paths(const char *name, char dir[N_HIER][PATH_LEN])
{
	for (size_t h = 0; h < N_HIER; h++)
		snprintf(dir[h], PATH_LEN, ROOT "/%s/%s/%s", hiers[h], parent, name);
}

/* Makes name's groups in the hierarchies of mask (bit h), cpuset filled. */
static void groups_make(const char *name, unsigned mask)
{
	char dir[N_HIER][PATH_LEN];

	paths(name, dir);
	for (size_t h = 0; h < N_HIER; h++)
		if ((mask & 1u << h) && mkdir(dir[h], 0755) < 0)
			die(dir[h]);
	if (mask & 1u) {
		put(dir[0], "cpuset.cpus", cpus_all);
		put(dir[0], "cpuset.mems", mems_all);
	}
}

static void groups_remove(const char *name, unsigned mask)
{
	char dir[N_HIER][PATH_LEN];

	paths(name, dir);
	for (size_t h = 0; h < N_HIER; h++)
		if ((mask & 1u << h) && rmdir(dir[h]) < 0 && errno != ENOENT)
			die(dir[h]);
}

static void groups_rename(const char *from, const char *to, unsigned mask)
{
	char a[N_HIER][PATH_LEN], b[N_HIER][PATH_LEN];

	paths(from, a);
	paths(to, b);
	for (size_t h = 0; h < N_HIER; h++)
		if ((mask & 1u << h) && rename(a[h], b[h]) < 0)
			die(b[h]);
}

#define ALL ((1u << N_HIER) - 1)
#define NOT_MEMORY (ALL & ~(1u << MEMORY))

/* One job, in its wrapper. */
static int job(int id, int worker, enum mode mode, uid_t uid, char **argv, double *stamp)
{
	char name[32], spare[32], dir[N_HIER][PATH_LEN];
	pid_t pid;
	int st;

	snprintf(name, sizeof(name), "job.%d", id);
	snprintf(spare, sizeof(spare), "spare.%d", worker);
	paths(name, dir);
	if (mode == FRESH) {
		groups_make(name, ALL);
		put(dir[4], "pids.max", "max");
	} else if (mode == KEPT5 || mode == KEPT) {
		groups_rename(spare, name, mode == KEPT ? ALL : NOT_MEMORY);
		if (mode == KEPT5)
			groups_make(name, 1u << MEMORY);
		put(dir[0], "cpuset.cpus", cpus_all);
		put(dir[0], "cpuset.mems", mems_all);
		put(dir[4], "pids.max", "max");
	}
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		for (size_t h = 0; mode != PLAIN && h < N_HIER; h++)
			put(dir[h], "tasks", "0");
		if (setgroups(0, NULL) < 0 || setgid(uid) < 0 || setuid(uid) < 0)
			die("setuid");
		*stamp = now_ms();
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	if (mode == FRESH) {
		groups_remove(name, ALL);
	} else if (mode == KEPT5) {
		groups_remove(name, 1u << MEMORY);
		put(dir[1], "cpuacct.usage", "0");
		groups_rename(name, spare, NOT_MEMORY);
	} else if (mode == KEPT) {
		put(dir[1], "cpuacct.usage", "0");
		put(dir[MEMORY], "memory.max_usage_in_bytes", "0");
		groups_rename(name, spare, ALL);
	}
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void parents(bool make)
{
	char path[PATH_LEN];

	for (size_t h = 0; h < N_HIER; h++) {
		snprintf(path, sizeof(path), ROOT "/%s/%s", hiers[h], parent);
		if (!make)
			(void)rmdir(path);
		else if (mkdir(path, 0755) < 0 && errno != EEXIST)
			die(path);
	}
	if (!make)
		return;
	get(ROOT "/cpuset/cpuset.cpus", cpus_all, sizeof(cpus_all));
	get(ROOT "/cpuset/cpuset.mems", mems_all, sizeof(mems_all));
	cpus_all[strcspn(cpus_all, "\n")] = '\0';
	mems_all[strcspn(mems_all, "\n")] = '\0';
	snprintf(path, sizeof(path), ROOT "/cpuset/%s", parent);
	put(path, "cpuset.cpus", cpus_all);
	put(path, "cpuset.mems", mems_all);
}

/* --- the idle first line's floor ------------------------------------- */

#define SCRIPT_MAX 65536

static volatile sig_atomic_t first_stop;

static void first_on_term(int sig)
{
	(void)sig;
	first_stop = 1;
}

static int unix_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path)) {
		fprintf(stderr, "floor: %s: socket path too long\n", path);
		return -1;
	}
	strcpy(sa->sun_path, path);
	return 0;
}

/* Reads fd to its end (at most len - 1 bytes); -1 on error. */
static ssize_t read_all(int fd, char *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while (off < len - 1 && (n = read(fd, buf + off, len - 1 - off)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		off += (size_t)n;
	}
	buf[off] = '\0';
	return (ssize_t)off;
}

static int first_submit(const char *sock)
{
	static char script[SCRIPT_MAX];
	struct sockaddr_un sa;
	char answer[64];
	ssize_t n = read_all(STDIN_FILENO, script, sizeof(script));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (n < 0 || fd < 0 || unix_addr(sock, &sa) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    write(fd, script, (size_t)n) != n || shutdown(fd, SHUT_WR) < 0 ||
	    (n = read_all(fd, answer, sizeof(answer))) <= 0) {
		fprintf(stderr, "floor: first-submit %s: %s\n", sock, errno ? strerror(errno) : "no answer");
		return 1;
	}
	return write(STDOUT_FILENO, answer, (size_t)n) == n ? 0 : 1;
}

static int first_serve(const char *sock, const char *dir, uid_t uid)
{
	static char script[SCRIPT_MAX], zero[SCRIPT_MAX];
	char path[PATH_LEN], rec[PATH_LEN], answer[32];
	char *argv[] = { "/bin/bash", path, NULL };
	struct sigaction act = { .sa_handler = first_on_term };   /* no SA_RESTART: accept ends */
	struct sockaddr_un sa;
	sigset_t term;
	double stamp;
	int lfd, rfd, id = 0, rc = 0;

	snprintf(path, sizeof(path), "%s/first.sh", dir);
	snprintf(rec, sizeof(rec), "%s/first.rec", dir);
	rfd = open(rec, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (rfd < 0 || write(rfd, zero, sizeof(zero)) != (ssize_t)sizeof(zero) || fsync(rfd) < 0)
		die(rec);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || unix_addr(sock, &sa) < 0)
		die("socket");
	(void)unlink(sock);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(sock, 0777) < 0 || listen(lfd, 8) < 0)
		die(sock);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaction(SIGTERM, &act, NULL);
	snprintf(parent, sizeof(parent), "qpool-floor%d", (int)getpid());
	parents(true);
	groups_make("spare.0", ALL);
	while (!first_stop) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), sfd;
		ssize_t n;

		if (fd < 0 && errno == EINTR)
			continue;   /* SIGTERM */
		if (fd < 0) {
			fprintf(stderr, "floor: accept: %s\n", strerror(errno));
			rc = 1;
			break;
		}
		/* a job's groups are back in their spare before SIGTERM ends it */
		sigprocmask(SIG_BLOCK, &term, NULL);
		n = read_all(fd, script, sizeof(script));
		sfd = n < 0 ? -1 : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		snprintf(answer, sizeof(answer), "%d.floor\n", ++id);
		if (sfd < 0 || write(sfd, script, (size_t)n) != n || close(sfd) < 0 ||
		    pwrite(rfd, script, (size_t)n, 0) != n || fdatasync(rfd) < 0 ||
		    write(fd, answer, strlen(answer)) < 0) {
			fprintf(stderr, "floor: job %d: its record or answer: %s\n", id, strerror(errno));
			close(fd);
			rc = 1;
			break;
		}
		close(fd);
		if (job(id, 0, KEPT, uid, argv, &stamp) < 0)
			fprintf(stderr, "floor: first job %d failed\n", id);
		sigprocmask(SIG_UNBLOCK, &term, NULL);
	}
	groups_remove("spare.0", ALL);
	parents(false);
	unlink(sock);
	return rc;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	double t0, t1, *lat, *stamp, cpu;
	enum mode mode;
	bool direct;
	int n, w, bad = 0;
	uid_t uid;

	if (argc == 3 && strcmp(argv[1], "first-submit") == 0)
		return first_submit(argv[2]);
	if (argc == 5 && strcmp(argv[1], "first-serve") == 0) {
		struct stat st;

		if (stat(ROOT "/cpuset/tasks", &st) < 0) {
			printf("SKIP: no cgroup v1 hierarchies\n");
			return 77;
		}
		return first_serve(argv[2], argv[3], (uid_t)atoi(argv[4]));
	}
	if (argc < 6) {
		fprintf(stderr, "usage: floor N W UID plain|fresh|kept5|kept|direct CMD [ARG...]\n"
				"       floor first-serve SOCK DIR UID | floor first-submit SOCK\n");
		return 2;
	}
	n = atoi(argv[1]);
	w = atoi(argv[2]);
	uid = (uid_t)atoi(argv[3]);
	direct = strcmp(argv[4], "direct") == 0;
	mode = PLAIN;
	if (direct || strcmp(argv[4], "kept") == 0)
		mode = KEPT;
	else if (strcmp(argv[4], "kept5") == 0)
		mode = KEPT5;
	else if (strcmp(argv[4], "fresh") == 0)
		mode = FRESH;
	if (n < 1 || w < 1 || w > 64 || (mode == PLAIN && strcmp(argv[4], "plain") != 0)) {
		fprintf(stderr, "floor: bad arguments\n");
		return 2;
	}
	for (size_t h = 0; mode != PLAIN && h < N_HIER; h++) {
		char path[PATH_LEN];
		struct stat st;

		snprintf(path, sizeof(path), ROOT "/%s/tasks", hiers[h]);
		if (stat(path, &st) < 0) {
			printf("SKIP: no cgroup v1 %s hierarchy of its own\n", hiers[h]);
			return 77;
		}
	}
	/* Shared with the workers: each job's latency, each worker's stamp. */
	lat = mmap(NULL, sizeof(double) * (size_t)(n + w), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (lat == MAP_FAILED)
		die("mmap");
	stamp = lat + n;
	snprintf(parent, sizeof(parent), "qpool-floor%d", (int)getpid());
	if (mode != PLAIN)
		parents(true);
	for (int k = 0; (mode == KEPT5 || mode == KEPT) && k < w; k++) {
		char spare[32];

		snprintf(spare, sizeof(spare), "spare.%d", k);
		groups_make(spare, mode == KEPT ? ALL : NOT_MEMORY);
	}
	t0 = now_ms();
	for (int k = 0; k < w; k++) {
		pid_t p = fork();

		if (p < 0)
			die("fork");
		if (p)
			continue;
		for (int i = k; i < n; i += w) {
			double s = now_ms();
			pid_t wr;
			int st;

			if (direct) {
				if (job(i + 1, k, mode, uid, argv + 5, &stamp[k]) < 0) {
					fprintf(stderr, "floor: job %d failed\n", i + 1);
					_exit(1);
				}
				lat[i] = stamp[k] - s;
				continue;
			}
			wr = fork();
			if (wr < 0)
				die("fork");
			if (wr == 0)
				_exit(job(i + 1, k, mode, uid, argv + 5, &stamp[k]) < 0 ? 1 : 0);
			if (waitpid(wr, &st, 0) < 0 || st != 0) {
				fprintf(stderr, "floor: job %d failed\n", i + 1);
				_exit(1);
			}
			lat[i] = stamp[k] - s;
		}
		_exit(0);
	}
	for (int k = 0, st; k < w; k++)
		if (wait(&st) < 0 || st != 0)
			bad = 1;
	t1 = now_ms();
	for (int k = 0; (mode == KEPT5 || mode == KEPT) && k < w; k++) {
		char spare[32];

		snprintf(spare, sizeof(spare), "spare.%d", k);
		groups_remove(spare, mode == KEPT ? ALL : NOT_MEMORY);
	}
	if (mode != PLAIN)
		parents(false);
	if (bad)
		return 1;
	getrusage(RUSAGE_CHILDREN, &ru);
	cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	qsort(lat, (size_t)n, sizeof(double), cmp);
	printf("%.0f jobs/s, CPU %.3f ms/job, wrapper start -> exec p50 %.3f p99 %.3f ms\n",
	       n / ((t1 - t0) / 1e3), cpu / n, lat[n / 2], lat[(n - 1) * 99 / 100]);
	return 0;
}
