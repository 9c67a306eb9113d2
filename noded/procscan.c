/* SPDX-License-Identifier: MIT */
/* What qnoded learns from /proc (or a fake tree): running gded wrappers, realtime permission. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "noded.h"

#define CMDLINE_MAX 8192
#define CAP_SYS_NICE_BIT 23   /* linux/capability.h */

bool procscan_cmdline_match(char *const *argv, size_t n_args, const char *jobs_dir,
			    int64_t *ret_jobid)
{
	size_t dlen = strlen(jobs_dir);
	const char *base, *p;
	char *end;
	long long id;

	if (n_args == 5) {
		/* What launch_gded runs: --notify and the fd number. */
		if (strcmp(argv[3], "--notify") != 0 || !argv[4][0] ||
		    strspn(argv[4], "0123456789") != strlen(argv[4]))
			return false;
	} else if (n_args != 3) {
		return false;
	}
	base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	if (strcmp(base, "gded") != 0 || strcmp(argv[1], "--spec") != 0)
		return false;
	if (strncmp(argv[2], jobs_dir, dlen) != 0 || argv[2][dlen] != '/')
		return false;
	p = argv[2] + dlen + 1;
	if (*p < '1' || *p > '9')
		return false;
	errno = 0;
	id = strtoll(p, &end, 10);
	if (errno || id <= 0 || strcmp(end, ".json") != 0)
		return false;
	*ret_jobid = id;
	return true;
}

/* Reads proc_root/<pid>/cmdline into argv; returns the count or -errno. A
 * process is only considered when proc_root/<pid> belongs to root, which
 * is how /proc shows a process whose effective uid is 0. */
static int cmdline_read(const char *proc_root, pid_t pid, char *buf, size_t size,
			char **argv, size_t max_args)
{
	char path[PATH_MAX];
	struct stat st;
	size_t len = 0, n = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%d", proc_root, (int)pid);
	if (stat(path, &st) < 0)
		return -errno;
	if (st.st_uid != 0)
		return -EPERM;
	snprintf(path, sizeof(path), "%s/%d/cmdline", proc_root, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r = read(fd, buf + len, size - 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len == size - 1)
			break;
	}
	close(fd);
	if (len == 0)
		return 0;   /* kernel thread or zombie */
	if (buf[len - 1] != '\0')
		buf[len++] = '\0';
	/* Trailing empty arguments are ignored: a wrapper the resident
	 * launcher forked wrote its command line over a longer one, NULs
	 * after it (docs/ARCHITECTURE.md). */
	while (len > 1 && buf[len - 2] == '\0')
		len--;
	for (size_t i = 0; i < len && n < max_args; ) {
		argv[n++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	return (int)n;
}

/* Whether every uid of pid (real, effective, saved, filesystem) is 0.
 * The owner of /proc/<pid> alone is not enough: a user's setuid-root
 * program (not dumpable, so /proc shows it as root's) keeps the user's
 * real uid, and its argv is whatever the user chose (exec -a gded ...). */
static bool pid_all_root(const char *proc_root, pid_t pid)
{
	char path[PATH_MAX], line[256];
	unsigned long u[4];
	bool root = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/status", proc_root, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Uid:", 4) != 0)
			continue;
		root = sscanf(line + 4, "%lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4 &&
		       !u[0] && !u[1] && !u[2] && !u[3];
		break;
	}
	fclose(f);
	return root;
}

static bool pid_runs_gded(const char *proc_root, const char *jobs_dir, pid_t pid,
			  int64_t *ret_jobid)
{
	char buf[CMDLINE_MAX];
	char *argv[6];
	int n;

	n = cmdline_read(proc_root, pid, buf, sizeof(buf), argv, 6);
	if (n <= 0)
		return false;
	return procscan_cmdline_match(argv, (size_t)n, jobs_dir, ret_jobid) &&
	       pid_all_root(proc_root, pid);
}

int procscan_gded_find(const char *proc_root, const char *jobs_dir, struct proc_gded **ret)
{
	struct proc_gded *found = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int r;

	d = opendir(proc_root);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		int64_t jobid;
		char *end;
		long pid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		if (!pid_runs_gded(proc_root, jobs_dir, (pid_t)pid, &jobid))
			continue;
		if (n == cap) {
			struct proc_gded *nf;

			cap = cap ? cap * 2 : 16;
			nf = realloc(found, cap * sizeof(*nf));
			if (!nf) {
				r = -ENOMEM;
				goto done;
			}
			found = nf;
		}
		found[n].pid = (pid_t)pid;
		found[n].jobid = jobid;
		n++;
	}
	*ret = found;
	found = NULL;
	r = (int)n;
done:
	free(found);
	closedir(d);
	return r;
}

bool procscan_gded_check(const char *proc_root, const char *jobs_dir, pid_t pid, int64_t jobid)
{
	int64_t id;

	return pid_runs_gded(proc_root, jobs_dir, pid, &id) && id == jobid;
}

/* First line of proc_root/rel into buf; 0 or -errno. */
static int proc_read_line(const char *proc_root, const char *rel, const char *prefix,
			  char *buf, size_t size)
{
	char path[PATH_MAX];
	size_t plen = prefix ? strlen(prefix) : 0;
	int r = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", proc_root, rel);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(buf, (int)size, f)) {
		if (plen && strncmp(buf, prefix, plen) != 0)
			continue;
		buf[strcspn(buf, "\n")] = '\0';
		r = 0;
		break;
	}
	fclose(f);
	return r;
}

void procscan_rt_check(const char *proc_root, bool *ret_rt, char *ret_reason, size_t len)
{
	unsigned long long caps;
	char line[256];
	char *end;

	if (proc_read_line(proc_root, "sys/kernel/sched_rt_runtime_us", NULL, line,
			   sizeof(line)) == 0 && strtoll(line, NULL, 10) == -1) {
		*ret_rt = false;
		snprintf(ret_reason, len, "kernel RT throttling is off (sched_rt_runtime_us = -1)");
		return;
	}
	if (proc_read_line(proc_root, "self/status", "CapEff:", line, sizeof(line)) < 0) {
		*ret_rt = false;
		snprintf(ret_reason, len, "cannot read the process capabilities");
		return;
	}
	errno = 0;
	caps = strtoull(line + strlen("CapEff:"), &end, 16);
	if (errno || end == line + strlen("CapEff:") || !(caps >> CAP_SYS_NICE_BIT & 1)) {
		*ret_rt = false;
		snprintf(ret_reason, len, "qnoded lacks CAP_SYS_NICE");
		return;
	}
	*ret_rt = true;
	ret_reason[0] = '\0';
}
