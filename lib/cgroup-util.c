/* SPDX-License-Identifier: MIT */
/* cgroupfs I/O on directory fds, shared by both cgroup layouts. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "timeutil.h"

int cg_file_write(int dirfd, const char *file, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, r = 0;

	/* O_TRUNC is a no-op on cgroupfs and makes a fake tree read back
	 * exactly what was written. */
	fd = openat(dirfd, file, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	close(fd);
	return r;
}

/* Reads up to len-1 bytes and NUL-terminates. Returns the length or -errno. */
ssize_t cg_file_read(int dirfd, const char *file, char *buf, size_t len)
{
	size_t off = 0;
	int fd;

	fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (off < len - 1) {
		ssize_t n = read(fd, buf + off, len - 1 - off);

		if (n < 0) {
			int r = -errno;

			close(fd);
			return r;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	return (ssize_t)off;
}

int cg_parse_u64(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || (*end && *end != '\n' && *end != ' '))
		return -EINVAL;
	*ret = v;
	return 0;
}

int cg_file_read_s64(int dirfd, const char *file, int64_t *ret)
{
	char buf[64], *end;
	ssize_t n = cg_file_read(dirfd, file, buf, sizeof(buf));
	long long v;

	if (n < 0)
		return (int)n;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return -EINVAL;
	*ret = v;
	return 0;
}

int cg_file_read_u64(int dirfd, const char *file, uint64_t *ret)
{
	char buf[64];
	ssize_t n = cg_file_read(dirfd, file, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return cg_parse_u64(buf, ret);
}

/* "key value" lines (cpu.stat, memory.events, memory.oom_control). */
int cg_keyed_u64(const char *text, const char *key, uint64_t *ret)
{
	size_t klen = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, klen) == 0 && p[klen] == ' ')
			return cg_parse_u64(p + klen + 1, ret);
	return -ENOENT;
}

int cg_file_read_keyed(int dirfd, const char *file, const char *key, uint64_t *ret)
{
	char buf[1024];
	ssize_t n = cg_file_read(dirfd, file, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return cg_keyed_u64(buf, key, ret);
}

void cg_strip_newline(char *s)
{
	s[strcspn(s, "\n")] = '\0';
}

int cg_dir_open(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

bool cg_is_dir(const char *root, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/%s", root, name) >= (int)sizeof(path))
		return false;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void cg_fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* One directory, reached twice: a systemd hybrid tree has cpu and cpuacct
 * as symlinks to cpu,cpuacct. */
bool cg_same_dir(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Length of the first component of a group path ("qpool" of "qpool/n1"),
 * after *ret_skip leading slashes. */
size_t cg_first_component(const char *parent, size_t *ret_skip)
{
	size_t skip = strspn(parent, "/");

	*ret_skip = skip;
	return strcspn(parent + skip, "/");
}

/* Sends sig to every pid listed in dirfd/cgroup.procs. Returns how many
 * it listed (0: empty) or -errno. Reads in one buffer; pids past it are
 * caught by the caller's next pass. */
int cg_procs_signal(int dirfd, int sig)
{
	char buf[16384];
	ssize_t n = cg_file_read(dirfd, "cgroup.procs", buf, sizeof(buf));
	int count = 0;

	if (n < 0)
		return (int)n;
	for (char *p = buf, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		long pid;

		*nl = '\0';
		pid = strtol(p, NULL, 10);
		if (pid > 0) {
			kill((pid_t)pid, sig);
			count++;
		}
	}
	return count;
}

void cg_sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * NSEC_PER_MSEC };

	nanosleep(&ts, NULL);
}

/* SIGKILLs whatever is listed until cgroup.procs reads empty. Killed tasks
 * leave the list once they have exited (zombies are not listed), so this
 * does not depend on anyone reaping them. */
int cg_procs_drain(int dirfd, int timeout_ms)
{
	int64_t deadline = time_mono_ns() + (int64_t)timeout_ms * NSEC_PER_MSEC;
	int wait_ms = 1;

	for (;;) {
		int n = cg_procs_signal(dirfd, SIGKILL);

		if (n <= 0)
			return n;
		if (time_mono_ns() > deadline)
			return -ETIME;
		cg_sleep_ms(wait_ms);
		if (wait_ms < 16)
			wait_ms *= 2;
	}
}

/* Walks `parent` below dirfd, creating each component. For every level
 * calls level(fd, last, ctx) so v1 cpuset can give intermediate groups
 * the root's CPUs and the last one the node's. Returns the last level's
 * fd or -errno. */
int cg_path_create(int rootfd, const char *parent, cg_level_f level, void *ctx,
		       char *ret_failed, size_t failed_len)
{
	char comp[PATH_MAX];
	const char *p = parent;
	int dirfd = rootfd, r;

	while (*p == '/')
		p++;
	if (!*p)
		return -EINVAL;
	for (;;) {
		size_t len = strcspn(p, "/");
		bool last;
		int fd;

		if (len >= sizeof(comp) || (len == 2 && strncmp(p, "..", 2) == 0) ||
		    (len == 1 && *p == '.')) {
			r = -EINVAL;
			goto fail;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		while (*p == '/')
			p++;
		last = !*p;
		if (mkdirat(dirfd, comp, 0755) < 0 && errno != EEXIST) {
			r = -errno;
			goto fail;
		}
		fd = cg_dir_open(dirfd, comp);
		if (fd < 0) {
			r = fd;
			goto fail;
		}
		if (level) {
			r = level(fd, dirfd, last, ctx);
			if (r < 0) {
				close(fd);
				goto fail;
			}
		}
		if (dirfd != rootfd)
			close(dirfd);
		dirfd = fd;
		if (last)
			return fd;
	}
fail:
	snprintf(ret_failed, failed_len, "%s", comp);
	if (dirfd != rootfd)
		close(dirfd);
	return r;
}

/* Creates the job group `name` in dirfd and opens it. A group that exists
 * already is not this job's to adopt: it is removed when empty (rmdir of a
 * cgroup fails with EBUSY while it holds a task, so "empty" is the
 * kernel's word, atomic) and made anew, so no counter of an earlier
 * run leaks into this one; a populated one is refused with -EEXIST. In
 * find mode (job->found) nothing is created: -ENOENT when it is absent. */
int cg_job_dir_make(const struct cgroup_job *job, int dirfd, const char *name)
{
	if (!job->found && mkdirat(dirfd, name, 0755) < 0) {
		if (errno != EEXIST)
			return -errno;
		if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
			return errno == EBUSY || errno == ENOTEMPTY ? -EEXIST : -errno;
		if (mkdirat(dirfd, name, 0755) < 0)
			return errno == EEXIST ? -EEXIST : -errno;
	}
	return cg_dir_open(dirfd, name);
}

/* rmdir root/parent, then its ancestors up to the first component while
 * they are empty. Returns 0, -EBUSY when parent still holds groups. */
int cg_path_remove(const char *root, const char *parent)
{
	char path[PATH_MAX];
	int n;

	n = snprintf(path, sizeof(path), "%s/%s", root, parent);
	if (n >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (rmdir(path) < 0) {
		if (errno == EBUSY || errno == ENOTEMPTY)
			return -EBUSY;
		if (errno != ENOENT)
			return -errno;
	}
	/* Other nodes on this host may share the ancestors (qpool/): busy
	 * ancestors are theirs and stay. */
	for (char *slash = strrchr(path, '/'); slash && slash > path + strlen(root);
	     slash = strrchr(path, '/')) {
		*slash = '\0';
		if (strlen(path) <= strlen(root))
			break;
		if (rmdir(path) < 0 && errno != ENOENT)
			break;
	}
	return 0;
}

int cgroup_proc_count(const char *text, const char *controller, unsigned long *ret)
{
	size_t len = strlen(controller);

	/* "#subsys_name hierarchy num_cgroups enabled", a line each. */
	for (const char *line = text; *line;) {
		const char *next = strchr(line, '\n');
		unsigned long hier, num;

		if (strncmp(line, controller, len) == 0 && (line[len] == ' ' || line[len] == '\t')) {
			if (sscanf(line + len, "%lu %lu", &hier, &num) != 2)
				return -EINVAL;
			*ret = num;
			return 0;
		}
		if (!next)
			break;
		line = next + 1;
	}
	return -ENOENT;
}

/* Whether the host has reached the job's reclaim threshold: memory
 * cgroups, live and dying, as /proc/cgroups counts them (the count v1
 * caps at 65,535). Unreadable: assume so. */
bool cg_memcgs_at_threshold(const struct cgroup_job *job)
{
	char buf[4096];
	unsigned long n;
	ssize_t len;
	int fd;

	if (job->reclaim_threshold == 0)
		return true;
	/* Held by the launcher: read from its start, no open. */
	fd = cg_held_proc_cgroups();
	if (fd >= 0) {
		len = pread(fd, buf, sizeof(buf) - 1, 0);
	} else {
		fd = open("/proc/cgroups", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return true;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (len <= 0)
		return true;
	buf[len] = '\0';
	return cgroup_proc_count(buf, "memory", &n) < 0 || n >= job->reclaim_threshold;
}

/* cg_file_write on a path; sets errno on failure. */
int cg_dir_write(const char *dir, const char *file, const char *val)
{
	int fd = cg_dir_open(AT_FDCWD, dir), r;

	if (fd < 0) {
		errno = -fd;
		return fd;
	}
	r = cg_file_write(fd, file, val);
	close(fd);
	errno = r < 0 ? -r : 0;
	return r;
}
