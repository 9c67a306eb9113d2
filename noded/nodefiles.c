/* SPDX-License-Identifier: MIT */
/* The shared node files of single-node jobs: root's, read-only, one per CPU count. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirat.h"
#include "noded.h"

/* A job whose allocation is this node only has "<name>\n" ncpus times as
 * its PBS_NODEFILE: the text depends on the count alone, so the jobs of
 * one count share a file, made once (docs/ARCHITECTURE.md "The node
 * file"). A file per job was a new inode and an unlink each (issue 39:
 * ext4's recently_deleted scan, ~7% of gded's CPU). */
struct nodefiles {
	int dirfd;
	char dir[PATH_MAX];
	char name[NODED_NAME_MAX];
	uint64_t *made;      /* bit n: <name>.<n> written by this qnoded */
	size_t made_words;
};

/* "<name>.<digits>" with no leading zero: a file of ours. */
static bool nodefiles_name_ours(const struct nodefiles *nf, const char *d_name)
{
	size_t len = strlen(nf->name);
	const char *p = d_name + len + 1;

	if (strncmp(d_name, nf->name, len) != 0 || d_name[len] != '.' || *p < '1' || *p > '9')
		return false;
	return strspn(p, "0123456789") == strlen(p);
}

/* Everything but our own names goes: temporaries of a qnoded that died
 * between write and rename, and whatever else is not ours. The files
 * themselves stay: jobs adopted at this start may be reading them. */
static void nodefiles_clean(struct nodefiles *nf)
{
	struct dirent *de;
	DIR *d = dir_stream_at(nf->dirfd);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    nodefiles_name_ours(nf, de->d_name))
			continue;
		if (unlinkat(nf->dirfd, de->d_name, 0) < 0 && errno == EISDIR)
			unlinkat(nf->dirfd, de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

int nodefiles_open(const char *node_dir, const char *name, struct nodefiles **ret,
		   struct error *err)
{
	struct nodefiles *nf;
	struct stat st;
	int r;

	/* The name is main.c's, checked there (noded_name_valid); here only
	 * what a file name of "<name>.<n>" needs. */
	if (!*name || *name == '.' || strchr(name, '/') || strlen(name) >= NODED_NAME_MAX)
		return error_set(err, -EINVAL, "node name \"%s\" cannot name a file", name);
	nf = calloc(1, sizeof(*nf));
	if (!nf)
		return error_set(err, -ENOMEM, "out of memory");
	nf->dirfd = -1;
	snprintf(nf->name, sizeof(nf->name), "%s", name);
	if ((size_t)snprintf(nf->dir, sizeof(nf->dir), "%s/nodefiles", node_dir) >= sizeof(nf->dir)) {
		r = error_set(err, -ENAMETOOLONG, "%s/nodefiles: path too long", node_dir);
		goto fail;
	}
	if (mkdir(nf->dir, 0711) < 0 && errno != EEXIST) {
		r = error_set(err, -errno, "cannot create %s: %m", nf->dir);
		goto fail;
	}
	nf->dirfd = open(nf->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (nf->dirfd < 0) {
		r = error_set(err, -errno, "cannot open %s: %m", nf->dir);
		goto fail;
	}
	/* Not listable: a user reaches only the names they can compute. */
	if (fstat(nf->dirfd, &st) < 0 || fchmod(nf->dirfd, 0711) < 0) {
		r = error_set(err, -errno, "cannot set the mode of %s: %m", nf->dir);
		goto fail;
	}
	if (st.st_uid != geteuid()) {
		r = error_set(err, -EPERM, "%s is uid %u's, not ours", nf->dir, (unsigned)st.st_uid);
		goto fail;
	}
	nodefiles_clean(nf);
	*ret = nf;
	return 0;
fail:
	nodefiles_close(nf);
	return r;
}

void nodefiles_close(struct nodefiles *nf)
{
	if (!nf)
		return;
	if (nf->dirfd >= 0)
		close(nf->dirfd);
	free(nf->made);
	free(nf);
}

/* Writes <name>.<ncpus> whole: a temporary name, then rename, so a job
 * never reads it torn; over an old one a running job may hold open, the
 * same text. Not fsynced: after a crash the next qnoded writes it again
 * before its first use. */
static int nodefiles_write(struct nodefiles *nf, uint64_t ncpus, const char *final)
{
	char tmp[NODED_NAME_MAX + 32], *text, *p;
	size_t nlen = strlen(nf->name), len = (nlen + 1) * ncpus, off = 0;
	int fd, r = 0;

	text = malloc(len);
	if (!text)
		return -ENOMEM;
	for (p = text; p < text + len; p += nlen + 1) {
		memcpy(p, nf->name, nlen);
		p[nlen] = '\n';
	}
	snprintf(tmp, sizeof(tmp), ".tmp.%" PRIu64, ncpus);
	unlinkat(nf->dirfd, tmp, 0);
	fd = openat(nf->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0) {
		r = -errno;
		goto done;
	}
	if (fchmod(fd, 0444) < 0)
		r = -errno;
	while (r == 0 && off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = -errno;
		else
			off += (size_t)n;
	}
	close(fd);
	if (r == 0 && renameat(nf->dirfd, tmp, nf->dirfd, final) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(nf->dirfd, tmp, 0);
done:
	free(text);
	return r;
}

int nodefiles_get(struct nodefiles *nf, uint64_t ncpus, char *buf, size_t size)
{
	char final[NODED_NAME_MAX + 32];
	size_t w = (size_t)(ncpus / 64);
	int r;

	if (ncpus == 0 || ncpus > NODEFILES_NCPUS_MAX)
		return -ERANGE;
	snprintf(final, sizeof(final), "%s.%" PRIu64, nf->name, ncpus);
	if ((size_t)snprintf(buf, size, "%s/%s", nf->dir, final) >= size)
		return -ENAMETOOLONG;
	if (w < nf->made_words && (nf->made[w] & (UINT64_C(1) << (ncpus % 64))))
		return 0;
	if (w >= nf->made_words) {
		uint64_t *m = realloc(nf->made, (w + 1) * sizeof(*m));

		if (!m)
			return -ENOMEM;
		memset(m + nf->made_words, 0, (w + 1 - nf->made_words) * sizeof(*m));
		nf->made = m;
		nf->made_words = w + 1;
	}
	r = nodefiles_write(nf, ncpus, final);
	if (r < 0)
		return r;
	nf->made[w] |= UINT64_C(1) << (ncpus % 64);
	return 0;
}
