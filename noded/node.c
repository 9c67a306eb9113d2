/* SPDX-License-Identifier: MIT */
/* The node's name and its directories under state_dir. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "log.h"
#include "noded.h"

bool noded_name_valid(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len >= NODED_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == len;
}

/* mkdir that accepts an existing directory, then insists on mode: a jobs/
 * directory left 0755 would let users list other users' jobs. */
static int dir_ensure(const char *path, mode_t mode, struct error *err)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return error_set(err, -errno, "cannot create %s: %m", path);
	if (chmod(path, mode) < 0)
		return error_set(err, -errno, "cannot set the mode of %s: %m", path);
	return 0;
}

/* Whether dir holds anything but . and .. (1), nothing (0), or -errno. */
static int dir_has_entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int r = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			r = 1;
			break;
		}
	closedir(d);
	return r;
}

/* The jobs tmpfs's mount options: at most a tenth of the host's memory,
 * and never less than 256 MiB (a script and a spec may each be up to a
 * message's 1 MiB: a node of many CPUs runs as many jobs). A cap, not a
 * reserve. */
static const char *jobs_tmpfs_options(char *buf, size_t size)
{
	unsigned long long mib = 0;
	struct sysinfo si;

	if (sysinfo(&si) == 0)
		mib = (unsigned long long)si.totalram * si.mem_unit / 10 / (1024 * 1024);
	snprintf(buf, size, "mode=0711,size=%llum", mib > 256 ? mib : 256);
	return buf;
}

/* jobs_tmpfs: a tmpfs on the jobs directory, mounted when it is empty
 * (files there are running jobs' and must stay visible) and not already
 * one mounted there (a previous qnoded's, kept because jobs ran: reused). */
static void jobs_tmpfs_mount(struct noded *nd)
{
	struct stat jobs, node;
	struct statfs sf;
	char opts[64];
	int r;

	/* A tmpfs of its own: one the directory merely sits on (a state_dir
	 * on a tmpfs) is not ours to reuse, nor to unmount. */
	if (statfs(nd->jobs_dir, &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
	    stat(nd->jobs_dir, &jobs) == 0 && stat(nd->node_dir, &node) == 0 && jobs.st_dev != node.st_dev) {
		nd->jobs_tmpfs = true;
		return;
	}
	r = dir_has_entries(nd->jobs_dir);
	if (r != 0) {
		log_warn("jobs_tmpfs: %s %s: not mounting a tmpfs over it", nd->jobs_dir,
			 r > 0 ? "holds job files" : "cannot be read");
		return;
	}
	if (mount("qpool-jobs", nd->jobs_dir, "tmpfs", MS_NOSUID | MS_NODEV, jobs_tmpfs_options(opts, sizeof(opts))) < 0) {
		log_warn("jobs_tmpfs: cannot mount a tmpfs on %s: %m; job files stay on disk", nd->jobs_dir);
		return;
	}
	nd->jobs_tmpfs = true;
	log_info("jobs_tmpfs: tmpfs mounted on %s", nd->jobs_dir);
}

void noded_jobs_tmpfs_release(struct noded *nd)
{
	if (!nd->jobs_tmpfs || dir_has_entries(nd->jobs_dir) != 0)
		return;
	if (nd->jobs_dirfd >= 0)
		close(nd->jobs_dirfd);
	nd->jobs_dirfd = -1;
	if (umount2(nd->jobs_dir, UMOUNT_NOFOLLOW) < 0)
		log_warn("jobs_tmpfs: cannot unmount %s: %m", nd->jobs_dir);
	nd->jobs_tmpfs = false;
}

int noded_dirs_open(struct noded *nd, struct error *err)
{
	char path[PATH_MAX];
	int r;

	/* state_dir and nodes/ normally exist (qpoold's); a node on a host of
	 * its own makes them, root-owned and world-traversable. */
	if (mkdir(nd->config->state_dir, 0755) < 0 && errno != EEXIST)
		return error_set(err, -errno, "cannot create %s: %m", nd->config->state_dir);
	if ((size_t)snprintf(path, sizeof(path), "%s/nodes", nd->config->state_dir) >= sizeof(path) ||
	    (size_t)snprintf(nd->node_dir, sizeof(nd->node_dir), "%s/%s", path, nd->name) >= sizeof(nd->node_dir) ||
	    (size_t)snprintf(nd->jobs_dir, sizeof(nd->jobs_dir), "%s/jobs", nd->node_dir) >= sizeof(nd->jobs_dir))
		return error_set(err, -ENAMETOOLONG, "state_dir %s: path too long", nd->config->state_dir);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return error_set(err, -errno, "cannot create %s: %m", path);
	r = dir_ensure(nd->node_dir, 0755, err);
	if (r < 0)
		return r;
	r = dir_ensure(nd->jobs_dir, 0711, err);
	if (r < 0)
		return r;
	if (nd->config->jobs_tmpfs && !nd->simulated) {
		/* A previous qnoded's kept inodes are not job files. */
		int fd = open(nd->jobs_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd >= 0) {
			jobfile_spares_clear(fd);
			close(fd);
		}
		jobs_tmpfs_mount(nd);
		/* A tmpfs has no inode allocator scan nor discard to save, and a
		 * spare would keep it from unmounting between jobs. */
		jobfile_spares_keep(!nd->jobs_tmpfs);
	}
	nd->jobs_dirfd = open(nd->jobs_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (nd->jobs_dirfd < 0)
		return error_set(err, -errno, "cannot open %s: %m", nd->jobs_dir);
	jobfile_spares_clear(nd->jobs_dirfd);
	/* Results a jobs tmpfs held, on disk (jobfile_held_copy): opened
	 * whatever jobs_tmpfs says now, since an earlier qnoded's copies are
	 * put back at start. */
	if ((size_t)snprintf(path, sizeof(path), "%s/held", nd->node_dir) >= sizeof(path))
		return error_set(err, -ENAMETOOLONG, "%s/held: path too long", nd->node_dir);
	r = dir_ensure(path, 0700, err);
	if (r < 0)
		return r;
	nd->held_dirfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (nd->held_dirfd < 0)
		return error_set(err, -errno, "cannot open %s: %m", path);
	return 0;
}

int noded_cgroup_lock(struct noded *nd, const char *lock_dir, struct error *err)
{
	char path[PATH_MAX], name[NAME_MAX + 1], pid[32];
	ssize_t n;
	int fd, r;

	/* "qpool/n1" -> "qpool+n1.lock": '+' is in no cgroup or node name. */
	if ((size_t)snprintf(name, sizeof(name), "%s.lock", nd->cgroup_parent) >= sizeof(name))
		return error_set(err, -ENAMETOOLONG, "cgroup parent %s: too long", nd->cgroup_parent);
	for (char *p = name; *p; p++)
		if (*p == '/')
			*p = '+';
	if (mkdir(lock_dir, 0755) < 0 && errno != EEXIST)
		return error_set(err, -errno, "cannot create %s: %m", lock_dir);
	snprintf(path, sizeof(path), "%s/%s", lock_dir, name);
again:
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return error_set(err, -errno, "cannot open %s: %m", path);
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		struct stat a, b;

		/* The holder unlinks the file at its stop (noded_cgroup_unlock):
		 * a lock won on a file no longer at path is no lock. */
		if (fstat(fd, &a) < 0 || stat(path, &b) < 0 || a.st_dev != b.st_dev ||
		    a.st_ino != b.st_ino) {
			close(fd);
			goto again;
		}
	} else {
		r = -errno;
		n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		close(fd);
		if (r == -EWOULDBLOCK)
			return error_set(err, -EBUSY, "cgroup %s is in use by another qnoded (pid %s, lock %s): "
					 "give each pool on this host its own [node] cgroup_parent",
					 nd->cgroup_parent, pid[0] ? pid : "?", path);
		return error_set(err, r, "cannot lock %s: %s", path, strerror(-r));
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
		r = -errno;
		close(fd);
		return error_set(err, r, "cannot write %s: %s", path, strerror(-r));
	}
	nd->cgroup_lock_fd = fd;
	snprintf(nd->cgroup_lock_path, sizeof(nd->cgroup_lock_path), "%s", path);
	return 0;
}

void noded_cgroup_unlock(struct noded *nd)
{
	if (nd->cgroup_lock_fd < 0)
		return;
	/* Unlinked while still held, so no one can lock it in between. */
	unlink(nd->cgroup_lock_path);
	close(nd->cgroup_lock_fd);
	nd->cgroup_lock_fd = -1;
}
