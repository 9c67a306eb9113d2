/* SPDX-License-Identifier: MIT */
/* Undelivered output (PBS's undelivered/): an output file the user cannot create where asked is kept in their HOME, and the result and a mail say where. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gded-internal.h"
#include "jobid.h"

bool gded_output_undeliverable(const char *path, int r)
{
	struct stat st;

	/* A missing or unwritable directory (a path of the submit host that
	 * this node lacks), or a read-only file system: what PBS's copy-out
	 * would fail on. Something present under the name that the user may
	 * not write (a symbolic link, a FIFO, another user's file) is refused
	 * as before: keeping the output elsewhere would hide an attack. */
	if (r != -ENOENT && r != -ENOTDIR && r != -EACCES && r != -EROFS)
		return false;
	return lstat(path, &st) < 0 || (r == -EROFS && S_ISREG(st.st_mode));
}

int gded_output_kept_path(const struct gded_job *job, bool err, char *buf, size_t len)
{
	char id[JOBID_SERVER_MAX + 48];
	int n;

	if (!job->home || job->home[0] != '/')
		return -ENOENT;
	/* PBS_JOBID, as the job sees it: 12.server, or 12[3].server. */
	if (job->array_id)
		jobid_format_array((int64_t)job->array_id, (int64_t)job->array_index, job->server, id,
				   sizeof(id));
	else
		jobid_format((int64_t)job->jobid, job->server, id, sizeof(id));
	/* PBS Pro's names in its undelivered directory: ID.OU and ID.ER. */
	n = snprintf(buf, len, "%s/%s.%s", strcmp(job->home, "/") ? job->home : "", id,
		     err ? "ER" : "OU");
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Appends "; " (when text is not empty) and what to text, cut to fit. */
static void text_append(char *text, size_t len, const char *what)
{
	size_t n = strlen(text);

	if (n + 3 >= len)
		return;
	snprintf(text + n, len - n, "%s%s", n ? "; " : "", what);
}

bool gded_undelivered_note(const struct gded_job *job, const int errs[2], char *text, size_t len)
{
	static const char *const names[2] = { "output", "error" };
	bool any = false;

	for (int i = 0; i < 2; i++) {
		const char *path = i ? job->stderr_path : job->stdout_path;
		char kept[PATH_MAX], line[PATH_MAX * 2 + 160];

		if (!errs[i] || !path || gded_output_kept_path(job, i == 1, kept, sizeof(kept)) < 0)
			continue;
		snprintf(line, sizeof(line), "%s undelivered (%s: %s): kept in %s on %s", names[i], path,
			 strerror(errs[i]), kept, job->node ? job->node : "the node");
		text_append(text, len, line);
		any = true;
	}
	return any;
}
