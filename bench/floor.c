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
 * wrapper start -> exec p50/p99 (ms). v1 only (exit 77 elsewhere). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
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

int main(int argc, char **argv)
{
	struct rusage ru;
	double t0, t1, *lat, *stamp, cpu;
	enum mode mode;
	bool direct;
	int n, w, bad = 0;
	uid_t uid;

	if (argc < 6) {
		fprintf(stderr, "usage: floor N W UID plain|fresh|kept5|kept|direct CMD [ARG...]\n");
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
