/* SPDX-License-Identifier: MIT */
/* The node-local files qnoded shares with gded: script, spec, result; and the passwd cache. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirat.h"
#include "jobattr.h"
#include "log.h"
#include "noded.h"
#include "timeutil.h"
#include "wire.h"

#define RESULT_MAX (1u << 20)
#define USERCACHE_TTL_NS (300 * NSEC_PER_SEC)

struct usercache_entry {
	struct user_info info;
	int64_t stamp;   /* monotonic ns of the look-up */
};

struct usercache {
	struct usercache_entry *entries;
	size_t n, cap;
};

struct usercache *usercache_create(void)
{
	return calloc(1, sizeof(struct usercache));
}

void usercache_destroy(struct usercache *uc)
{
	if (!uc)
		return;
	for (size_t i = 0; i < uc->n; i++)
		free(uc->entries[i].info.groups);
	free(uc->entries);
	free(uc);
}

/* getgrouplist(name, gid): gid and every group listing name as a member,
 * what initgroups(3) would give. Returns the count and a malloc'ed array,
 * or -ENOMEM. */
static int groups_fetch(const char *name, gid_t gid, gid_t **ret)
{
	int n = 32;

	for (;;) {
		gid_t *groups = malloc((size_t)n * sizeof(gid_t));
		int want = n;

		if (!groups)
			return -ENOMEM;
		if (getgrouplist(name, gid, groups, &want) >= 0) {
			*ret = groups;
			return want;
		}
		free(groups);
		/* want is now the count needed; never shrink, so this ends. */
		n = want > n ? want : n * 2;
	}
}

static int user_fetch(uid_t uid, struct user_info *ret)
{
	long size = sysconf(_SC_GETPW_R_SIZE_MAX);
	struct passwd pw, *found = NULL;
	char *buf = NULL;
	int r;

	if (size < 1024)
		size = 1024;
	for (;;) {
		char *nbuf = realloc(buf, (size_t)size);

		if (!nbuf) {
			r = -ENOMEM;
			goto done;
		}
		buf = nbuf;
		r = getpwuid_r(uid, &pw, buf, (size_t)size, &found);
		if (r != ERANGE)
			break;
		size *= 2;
	}
	if (r != 0) {
		r = -r;
		goto done;
	}
	if (!found) {
		r = -ENOENT;
		goto done;
	}
	memset(ret, 0, sizeof(*ret));
	ret->uid = pw.pw_uid;
	ret->gid = pw.pw_gid;
	snprintf(ret->name, sizeof(ret->name), "%s", pw.pw_name);
	snprintf(ret->home, sizeof(ret->home), "%s", pw.pw_dir && *pw.pw_dir ? pw.pw_dir : "/");
	snprintf(ret->shell, sizeof(ret->shell), "%s",
		 pw.pw_shell && *pw.pw_shell ? pw.pw_shell : "/bin/sh");
	r = groups_fetch(ret->name, ret->gid, &ret->groups);
	if (r < 0)
		goto done;
	ret->ngroups = r;
	r = 0;
done:
	free(buf);
	return r;
}

int usercache_lookup(struct usercache *uc, uid_t uid, const struct user_info **ret)
{
	int64_t now = time_mono_ns();
	struct usercache_entry *e = NULL;
	int r;

	for (size_t i = 0; i < uc->n; i++) {
		if (uc->entries[i].info.uid == uid) {
			e = &uc->entries[i];
			break;
		}
	}
	if (e && now - e->stamp < USERCACHE_TTL_NS) {
		*ret = &e->info;
		return 0;
	}
	if (!e) {
		if (uc->n == uc->cap) {
			size_t cap = uc->cap ? uc->cap * 2 : 16;
			struct usercache_entry *n = realloc(uc->entries, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			uc->entries = n;
			uc->cap = cap;
		}
		e = &uc->entries[uc->n];
		r = user_fetch(uid, &e->info);
		if (r < 0)
			return r;
		uc->n++;
	} else {
		struct user_info fresh;

		r = user_fetch(uid, &fresh);
		free(e->info.groups);
		if (r < 0) {
			/* Gone from passwd: forget it. */
			*e = uc->entries[--uc->n];
			return r;
		}
		e->info = fresh;
	}
	e->stamp = now;
	*ret = &e->info;
	return 0;
}

void jobfile_path(const char *jobs_dir, int64_t jobid, const char *ext, char *buf)
{
	snprintf(buf, PATH_MAX, "%s/%" PRId64 ".%s", jobs_dir, jobid, ext);
}

static int json_set_str(json_t *o, const char *key, const char *value)
{
	return json_object_set_new(o, key, json_string(value)) < 0 ? -ENOMEM : 0;
}

/* The job's groups as a JSON array: the cached list when the job runs
 * with the user's passwd gid, else looked up for the gid it runs with
 * (a submitter under newgrp/sg), as initgroups would. */
static json_t *spec_groups(const struct user_info *user, gid_t gid)
{
	gid_t *own = NULL;
	const gid_t *groups = user->groups;
	int n = user->ngroups;
	json_t *a = json_array();

	if (gid != user->gid) {
		n = groups_fetch(user->name, gid, &own);
		if (n < 0) {
			json_decref(a);
			return NULL;
		}
		groups = own;
	}
	for (int i = 0; a && i < n; i++) {
		if (json_array_append_new(a, json_integer(groups[i])) < 0) {
			json_decref(a);
			a = NULL;
		}
	}
	free(own);
	return a;
}

/* A job whose allocation is this node only reads the node's shared file
 * of its line count (nodefiles.c): its one alloc entry's MPI slots
 * (mpiprocs), else a one-chunk select's (the attribute
 * Resource_List.mpiprocs, by gded's rule), else its CPUs; true with its
 * path. A multi-node job's text names other hosts, so it keeps a file of
 * its own; so does any job when the shared file cannot be had, or would
 * be empty, or would have more lines than the job has CPUs (gded writes
 * that one, gone with the job): the shared files, kept while qnoded
 * runs, stay bounded by the CPU counts jobs get here, whatever slot
 * counts users ask for. */
static bool nodefile_shared(const json_t *job, const struct spec_node *node, char *path,
			    size_t size)
{
	const json_t *alloc = json_object_get(job, "alloc");
	long long ncpus = wire_int(job, "ncpus", 1), lines;
	uint64_t slots1;

	if (!node->nodefiles || (alloc && !json_is_null(alloc) &&
				 !(json_is_array(alloc) && json_array_size(alloc) == 1)))
		return false;
	if (ncpus == 0)   /* gded's default */
		ncpus = 1;
	lines = ncpus;
	if (json_is_array(alloc))
		lines = wire_int(json_array_get(alloc, 0), "mpiprocs", lines);
	else if (jobattr_mpiprocs(wire_str(json_object_get(job, "attrs"), "Resource_List.mpiprocs"), &slots1))
		lines = (long long)slots1;
	return lines > 0 && lines <= ncpus && nodefiles_get(node->nodefiles, (uint64_t)lines, path, size) == 0;
}

int jobfile_spec_build(const json_t *job, const struct user_info *user,
		       const struct spec_node *node, int64_t launch,
		       json_t **ret, struct error *err)
{
	char path[PATH_MAX];
	json_t *spec = NULL, *cg = NULL, *groups = NULL, *times, *gpus = NULL, *gpus_node = NULL;
	struct error gerr;
	const char *name;
	long long jobid;
	int r;

	if (!json_is_object(job))
		return error_set(err, -EINVAL, "job is not an object");
	jobid = wire_int(job, "jobid", -1);
	if (jobid <= 0)
		return error_set(err, -EINVAL, "job has no positive jobid");
	if (wire_int(job, "uid", -1) < 0 || wire_int(job, "gid", -1) < 0)
		return error_set(err, -EINVAL, "job %lld: no uid or gid", jobid);
	if (!wire_str(job, "script"))
		return error_set(err, -EINVAL, "job %lld: no script", jobid);
	/* gded takes the job's ids and groups from the spec without asking
	 * nsswitch again: the name the server gave must be this uid's here. */
	name = wire_str(job, "user");
	if (!name || strcmp(name, user->name) != 0)
		return error_set(err, -EINVAL, "job %lld: uid %u is %s here, not %s", jobid,
				 (unsigned)user->uid, user->name, name ? name : "(no user)");

	/* The job's GPUs are the node's: an index it does not have fails
	 * the job here, before any file is made. */
	r = gpu_spec_json(node->gpus, node->n_gpus, json_object_get(job, "gpus"), &gpus, &gpus_node, &gerr);
	if (r < 0) {
		if (r == -ENOMEM)
			goto done;
		return error_set(err, r, "job %lld: %s", jobid, gerr.text);
	}
	spec = json_deep_copy(job);
	cg = json_object();
	groups = spec_groups(user, (gid_t)wire_int(job, "gid", -1));
	if (!spec || !cg || !groups) {
		r = -ENOMEM;
		goto done;
	}
	jobfile_path(node->jobs_dir, jobid, "sh", path);
	r = json_set_str(spec, "script", path);
	if (r == 0 && nodefile_shared(job, node, path, sizeof(path))) {
		r = json_set_str(spec, "nodefile", path);
		if (r == 0 && json_object_set_new(spec, "nodefile_shared", json_true()) < 0)
			r = -ENOMEM;
	} else {
		jobfile_path(node->jobs_dir, jobid, "nodes", path);
		r = r ?: json_set_str(spec, "nodefile", path);
	}
	jobfile_path(node->jobs_dir, jobid, "result", path);
	r = r ?: json_set_str(spec, "result", path);
	/* gded's control socket (docs/PARALLEL.md), and where the job's
	 * processes ask for remote starts (QPOOL_TASK_SOCKET). */
	jobfile_path(node->jobs_dir, jobid, "ctl", path);
	r = r ?: json_set_str(spec, "ctl", path);
	if (node->node_dir) {
		snprintf(path, sizeof(path), "%s/task.sock", node->node_dir);
		r = r ?: json_set_str(spec, "task_socket", path);
	}
	if (node->node_dir && node->hwloc_xml) {
		snprintf(path, sizeof(path), "%s/topology.xml", node->node_dir);
		r = r ?: json_set_str(spec, "hwloc_xml", path);
	}
	r = r ?: json_set_str(spec, "home", user->home);
	r = r ?: json_set_str(spec, "shell", user->shell);
	r = r ?: json_set_str(spec, "node", node->name);
	if (node->tmpdir && node->tmpdir[0])
		r = r ?: json_set_str(spec, "tmpdir_base", node->tmpdir);
	/* The site's hooks (qpool-hooks(5)): gded runs them. */
	if (node->prolog && node->prolog[0]) {
		r = r ?: json_set_str(spec, "prolog", node->prolog);
		if (r == 0 && json_object_set_new(spec, "prolog_timeout",
						  json_integer((json_int_t)node->prolog_timeout)) < 0)
			r = -ENOMEM;
	}
	if (node->epilog && node->epilog[0]) {
		r = r ?: json_set_str(spec, "epilog", node->epilog);
		if (r == 0 && json_object_set_new(spec, "epilog_timeout",
						  json_integer((json_int_t)node->epilog_timeout)) < 0)
			r = -ENOMEM;
	}
	r = r ?: json_set_str(cg, "mode", cgroup_mode_name(node->cgroup_mode));
	r = r ?: json_set_str(cg, "root", node->cgroup_root);
	r = r ?: json_set_str(cg, "parent", node->cgroup_parent);
	if (r == 0 && json_object_set_new(cg, "reclaim_threshold",
					  json_integer((json_int_t)node->reclaim_threshold)) < 0)
		r = -ENOMEM;
	if (r < 0)
		goto done;
	if (json_object_set(spec, "cgroup", cg) < 0 ||
	    json_object_set(spec, "groups", groups) < 0 ||
	    (gpus && json_object_set(spec, "gpus", gpus) < 0) ||
	    (node->n_gpus && json_object_set(spec, "gpus_node", gpus_node) < 0)) {
		r = -ENOMEM;
		goto done;
	}
	times = json_object_get(spec, "times");
	if (!json_is_object(times)) {
		times = json_object();
		if (!times || json_object_set_new(spec, "times", times) < 0) {
			r = -ENOMEM;
			goto done;
		}
	}
	if (json_object_set_new(times, "launch", json_integer(launch)) < 0) {
		r = -ENOMEM;
		goto done;
	}
	*ret = spec;
	spec = NULL;
	r = 0;
done:
	if (r == -ENOMEM)
		error_set(err, r, "out of memory building the spec");
	json_decref(gpus);
	json_decref(gpus_node);
	json_decref(groups);
	json_decref(cg);
	json_decref(spec);
	return r;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Kept inodes (issue 39). Every create in the jobs directory allocates an
 * inode, and on ext4 without a journal (this project's VMs) the
 * allocator skips each inode freed in the last seconds by reading it
 * (ialloc.c recently_deleted): in a burst the jobs' own churn made that
 * a fifth of qnoded's CPU and a tenth of gded's. So the files that were
 * root's alone (the spec and the result, 0600, one link) are not unlinked
 * at a job's end but renamed to ".spare.N", at most SPARE_MAX of them, and
 * a new spec's or result's temporary file is a spare renamed back,
 * written over and cut to length. A file a user ever owned (the script,
 * the nodefile) is never kept: the user may hold a descriptor to it; nor
 * is one of a job whose gded was not seen to end (jobs.c): it might
 * still write to it. */
#define SPARE_MAX 64
static unsigned spare_ids[SPARE_MAX], spare_n, spare_seq, spare_max = SPARE_MAX;

void jobfile_spares_keep(bool keep)
{
	spare_max = keep ? SPARE_MAX : 0;
}

static void spare_name(char *buf, size_t size, unsigned id)
{
	snprintf(buf, size, ".spare.%u", id);
}

/* Renames a spare to name (replacing it); false when none is left. */
static bool spare_take(int dirfd, const char *name)
{
	char s[32];

	while (spare_n > 0) {
		spare_name(s, sizeof(s), spare_ids[--spare_n]);
		if (renameat(dirfd, s, dirfd, name) == 0)
			return true;
	}
	return false;
}

/* Removes dirfd/name: kept as a spare when it is a plain file of ours,
 * mode 0600, with no other link; unlinked otherwise. */
static void spare_put(int dirfd, const char *name)
{
	struct stat st;
	char s[32];

	/* No room (or spares off, as on a tmpfs): no look first. */
	if (spare_n >= spare_max) {
		unlinkat(dirfd, name, 0);
		return;
	}
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			unlinkat(dirfd, name, 0);
		return;
	}
	if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_nlink == 1 &&
	    (st.st_mode & 07777) == 0600) {
		spare_name(s, sizeof(s), spare_seq);
		if (renameat(dirfd, name, dirfd, s) == 0) {
			spare_ids[spare_n++] = spare_seq++;
			return;
		}
	}
	unlinkat(dirfd, name, 0);
}

void jobfile_spares_clear(int dirfd)
{
	struct dirent *de;
	DIR *d;

	spare_n = 0;
	d = dir_stream_at(dirfd);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (strncmp(de->d_name, ".spare.", 7) == 0)
			unlinkat(dirfd, de->d_name, 0);
	closedir(d);
}

int jobfile_result_tmp_ready(int dirfd, int64_t jobid)
{
	char name[64];

	snprintf(name, sizeof(name), "%" PRId64 ".result.tmp", jobid);
	return spare_take(dirfd, name) ? 1 : 0;
}

/* Opens a spare to be written under its own name, which no one reads,
 * and renamed once into place (not renamed to name.tmp first: one rename
 * a launch fewer; issue 39); its name in buf. False when none is left. */
static bool spare_open(int dirfd, char *buf, size_t size, int *ret_fd)
{
	while (spare_n > 0) {
		spare_name(buf, size, spare_ids[--spare_n]);
		*ret_fd = openat(dirfd, buf, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		if (*ret_fd >= 0)
			return true;
	}
	return false;
}

/* Writes data to dirfd/name through a spare (when spare: dirfd is the
 * jobs directory) or name.tmp and rename, mode 0600, so a reader sees it
 * whole or not at all; with sync, fsynced before the rename, so that
 * holds across a power loss too. */
static int file_replace(int dirfd, const char *name, const char *data, size_t len, bool sync,
			bool spare)
{
	char tmp[128];
	int fd, r;

	/* No O_TRUNC: a spare's blocks are written over and the rest cut by
	 * ftruncate, so a file of one block keeps its block (freeing it costs
	 * a discard on a volume mounted with it). */
	if (!spare || !spare_open(dirfd, tmp, sizeof(tmp), &fd)) {
		snprintf(tmp, sizeof(tmp), "%s.tmp", name);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return -errno;
	r = write_all(fd, data, len);
	if (r == 0 && ftruncate(fd, (off_t)len) < 0)
		r = -errno;
	if (r == 0 && sync && fsync(fd) < 0)
		r = -errno;
	close(fd);
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dirfd, tmp, 0);
	return r;
}

int jobfile_write(int dirfd, int64_t jobid, const char *script, uid_t uid, gid_t gid,
		  const json_t *spec, struct error *err)
{
	char name[64];
	char *text = NULL;
	int fd = -1, r;

	/* The script: created fresh (a rerun must not reuse an old file the
	 * user may have a handle on), then handed to the user read+exec. An
	 * old one is unlinked only when there is one (a path lookup a job
	 * fewer, issue 39). */
	snprintf(name, sizeof(name), "%" PRId64 ".sh", jobid);
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
	if (fd < 0 && errno == EEXIST) {
		if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT) {
			r = error_set(err, -errno, "cannot replace %s: %m", name);
			goto done;
		}
		fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
	}
	if (fd < 0) {
		r = error_set(err, -errno, "cannot create %s: %m", name);
		goto done;
	}
	r = write_all(fd, script, strlen(script));
	if (r < 0) {
		errno = -r;
		r = error_set(err, r, "cannot write %s: %m", name);
		goto done;
	}
	if (fchown(fd, uid, gid) < 0 || fchmod(fd, 0500) < 0) {
		r = error_set(err, -errno, "cannot give %s to uid %u: %m", name, (unsigned)uid);
		goto done;
	}

	snprintf(name, sizeof(name), "%" PRId64 ".json", jobid);
	text = json_dumps(spec, JSON_COMPACT);
	if (!text) {
		r = error_set(err, -ENOMEM, "cannot encode %s", name);
		goto done;
	}
	/* No fsync: the spec only matters while this boot's gded runs. After
	 * a power loss no gded is left, and a spec lost with it makes qpoold
	 * requeue the job (it never reached the node), a whole one makes it
	 * fail as "wrapper vanished": the store stays right either way. The
	 * fsync cost a journal commit on every launch, ~0.4 ms on an idle
	 * disk here and several ms behind qpoold's own commits under load
	 * (launch -> wrap p95 6.4 ms in a 500-job burst). */
	r = file_replace(dirfd, name, text, strlen(text), false, true);
	if (r < 0) {
		errno = -r;
		r = error_set(err, r, "cannot write %s: %m", name);
		goto done;
	}
	r = 0;
done:
	if (fd >= 0)
		close(fd);
	free(text);
	return r;
}

/* Reads dirfd/name (at most RESULT_MAX bytes) as a JSON object. */
static int json_read_at(int dirfd, const char *name, json_t **ret, struct error *err)
{
	int fd, r;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = wire_load_fd(fd, RESULT_MAX, name, ret, err);
	close(fd);
	return r;
}

int jobfile_spec_read(int dirfd, int64_t jobid, json_t **ret)
{
	struct error err = { "" };
	char name[32];
	int fd;

	snprintf(name, sizeof(name), "%" PRId64 ".json", jobid);
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return wire_load_fd(fd, SPEC_MAX, name, ret, &err);
}

int jobfile_result_read(int dirfd, int64_t jobid, int64_t launch, json_t **ret,
			struct error *err)
{
	char name[64];
	json_t *res, *times, *id;
	int r;

	snprintf(name, sizeof(name), "%" PRId64 ".result", jobid);
	r = json_read_at(dirfd, name, &res, err);
	/* gded does not sync its result (wrappers/result.c): a crash before
	 * the disk had it can leave the name on an empty or torn file, or
	 * on a kept inode's older text, another job's or another run's.
	 * None of those is this run's result: the job is as if its wrapper
	 * ended without one (qnoded syncs what it holds: jobs.c). */
	if (r == -EBADMSG) {
		log_warn("job %" PRId64 ": %s: taken as no result", jobid, err->text);
		return -ENOENT;
	}
	if (r < 0)
		return r;
	times = json_object_get(res, "times");
	id = json_object_get(res, "jobid");
	if ((id && json_integer_value(id) != jobid) || (launch > 0 && wire_int(times, "launch", launch) != launch)) {
		log_warn("job %" PRId64 ": %s holds job %" JSON_INTEGER_FORMAT "'s result of launch %lld, "
			 "not this run's: taken as no result", jobid, name, json_integer_value(id),
			 wire_int(times, "launch", 0));
		json_decref(res);
		return -ENOENT;
	}
	if (!json_is_object(times)) {
		times = json_object();
		json_object_set_new(res, "times", times);
	}
	if (launch > 0 && times && !json_object_get(times, "launch"))
		json_object_set_new(times, "launch", json_integer(launch));
	json_object_set_new(res, "jobid", json_integer(jobid));
	*ret = res;
	return 0;
}

int jobfile_result_sync(int dirfd, int64_t jobid)
{
	char name[64];
	int fd, r = 0;

	snprintf(name, sizeof(name), "%" PRId64 ".result", jobid);
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fdatasync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

int jobfile_result_write(int dirfd, int64_t jobid, const json_t *result)
{
	char name[64];
	char *text;
	int r;

	snprintf(name, sizeof(name), "%" PRId64 ".result", jobid);
	text = json_dumps(result, JSON_COMPACT);
	if (!text)
		return -ENOMEM;
	r = file_replace(dirfd, name, text, strlen(text), true, true);
	free(text);
	return r;
}

json_t *jobfile_result_failed(int64_t jobid, int64_t launch, const char *reason)
{
	json_t *times = json_object();

	if (times && launch > 0)
		json_object_set_new(times, "launch", json_integer(launch));
	return json_pack("{s:I, s:s, s:n, s:n, s:b, s:b, s:b, s:s, s:o*}",
			 "jobid", (json_int_t)jobid, "status", "failed",
			 "exit_status", "exit_signal", "timeout", 0, "cancelled", 0,
			 "oom", 0, "reason", reason, "times", times);
}

int64_t jobfile_spec_time(int dirfd, int64_t jobid, const char *stamp)
{
	char name[64];
	json_t *spec;
	int64_t t;

	snprintf(name, sizeof(name), "%" PRId64 ".json", jobid);
	if (json_read_at(dirfd, name, &spec, NULL) < 0)
		return 0;
	t = wire_int(json_object_get(spec, "times"), stamp, 0);
	json_decref(spec);
	return t;
}

int64_t jobfile_spec_launch(int dirfd, int64_t jobid)
{
	return jobfile_spec_time(dirfd, jobid, "launch");
}

void jobfile_remove(int dirfd, int64_t jobid, bool keep_inodes, bool result_read)
{
	/* The three a result leaves first. */
	static const char *exts[] = { "sh", "json", "result", "json.tmp", "result.tmp", "nodes", "gpus",
				      "ctl" };
	static const bool keep[] = { false, true, true, true, true, false, false, false };
	char name[64];

	for (size_t i = 0; i < (result_read ? 3 : sizeof(exts) / sizeof(exts[0])); i++) {
		snprintf(name, sizeof(name), "%" PRId64 ".%s", jobid, exts[i]);
		if (keep[i] && keep_inodes)
			spare_put(dirfd, name);
		else
			unlinkat(dirfd, name, 0);
	}
}

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* "<digits>.json" or "<digits>.result" -> id, else 0. */
static int64_t job_name_id(const char *name)
{
	char *end;
	long long id;

	if (name[0] < '1' || name[0] > '9')
		return 0;
	errno = 0;
	id = strtoll(name, &end, 10);
	if (errno || id <= 0)
		return 0;
	if (strcmp(end, ".json") != 0 && strcmp(end, ".result") != 0)
		return 0;
	return id;
}

int jobfile_ids(int dirfd, int64_t **ret_ids)
{
	int64_t *ids = NULL;
	size_t n = 0, cap = 0, out = 0;
	struct dirent *de;
	DIR *d;
	int r;

	d = dir_stream_at(dirfd);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		int64_t id = job_name_id(de->d_name);

		if (id == 0)
			continue;
		if (n == cap) {
			int64_t *nids;

			cap = cap ? cap * 2 : 32;
			nids = realloc(ids, cap * sizeof(*ids));
			if (!nids) {
				r = -ENOMEM;
				goto done;
			}
			ids = nids;
		}
		ids[n++] = id;
	}
	if (n)
		qsort(ids, n, sizeof(*ids), cmp_id);
	for (size_t i = 0; i < n; i++)
		if (out == 0 || ids[out - 1] != ids[i])
			ids[out++] = ids[i];
	*ret_ids = ids;
	ids = NULL;
	r = (int)out;
done:
	free(ids);
	closedir(d);
	return r;
}

/* ---- results held on disk beside a jobs tmpfs ---- */

/* fromfd's JSON file name, copied to the same name in tofd (file_replace,
 * no spare: tofd is not the jobs directory's, or a start's, which has
 * none). 0, -ENOENT (no such file) or -errno. */
static int file_copy_at(int fromfd, int tofd, const char *name, bool sync)
{
	json_t *o = NULL;
	char *text;
	int r;

	r = json_read_at(fromfd, name, &o, NULL);
	if (r < 0)
		return r;
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!text)
		return -ENOMEM;
	r = file_replace(tofd, name, text, strlen(text), sync, false);
	free(text);
	return r;
}

int jobfile_held_copy(int dirfd, int helddirfd, int64_t jobid)
{
	char name[64];
	int r;

	/* The spec first: a result held is read back only with it there. */
	snprintf(name, sizeof(name), "%" PRId64 ".json", jobid);
	r = file_copy_at(dirfd, helddirfd, name, true);
	if (r < 0 && r != -ENOENT)
		return r;
	snprintf(name, sizeof(name), "%" PRId64 ".result", jobid);
	return file_copy_at(dirfd, helddirfd, name, true);
}

bool jobfile_held_has(int helddirfd, int64_t jobid)
{
	char name[64];

	snprintf(name, sizeof(name), "%" PRId64 ".result", jobid);
	return helddirfd >= 0 && faccessat(helddirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

void jobfile_held_remove(int helddirfd, int64_t jobid)
{
	/* A copy's temporary file goes with its failure, or at the next
	 * start after a crash (jobfile_held_restore). */
	static const char *exts[] = { "result", "json" };
	char name[64];

	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		snprintf(name, sizeof(name), "%" PRId64 ".%s", jobid, exts[i]);
		unlinkat(helddirfd, name, 0);
	}
}

int jobfile_held_restore(int helddirfd, int dirfd)
{
	int64_t *ids = NULL;
	struct dirent *de;
	int n, put = 0;
	DIR *d;

	/* What a crash in a copy left: its temporary files. */
	d = dir_stream_at(helddirfd);
	if (d) {
		while ((de = readdir(d))) {
			size_t len = strlen(de->d_name);

			if (len > 4 && strcmp(de->d_name + len - 4, ".tmp") == 0)
				unlinkat(helddirfd, de->d_name, 0);
		}
		closedir(d);
	}
	n = jobfile_ids(helddirfd, &ids);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		char name[64];
		int r;

		snprintf(name, sizeof(name), "%" PRId64 ".result", ids[i]);
		if (faccessat(helddirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
			/* A spec whose result's copy did not happen: no use. */
			jobfile_held_remove(helddirfd, ids[i]);
			continue;
		}
		if (faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		snprintf(name, sizeof(name), "%" PRId64 ".json", ids[i]);
		r = faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ? 0
		    : file_copy_at(helddirfd, dirfd, name, false);
		if (r == 0 || r == -ENOENT) {
			snprintf(name, sizeof(name), "%" PRId64 ".result", ids[i]);
			r = file_copy_at(helddirfd, dirfd, name, false);
		}
		if (r < 0) {
			log_warn("job %" PRId64 ": cannot put back its result held on disk: %s", ids[i],
				 strerror(-r));
			continue;
		}
		put++;
	}
	free(ids);
	return put;
}
