/* SPDX-License-Identifier: MIT */
/* qpoold --migrate: SQLite (state_dir/qpool.db) to PostgreSQL (store_dsn). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jobstore.h"
#include "migrate.h"

int migrate_store(const struct config *c, int64_t *ret_jobs, char *ret_text, size_t size, struct error *err)
{
	struct jobstore *from = NULL, *to = NULL;
	char path[PATH_MAX + 16], a[256], b[256];
	int r;

	if (c->store != CONFIG_STORE_POSTGRESQL)
		return error_set(err, -EINVAL, "%s: [server] store is sqlite: set store = postgresql and"
				 " store_dsn to the target first", c->path);
	snprintf(path, sizeof(path), "%s/qpool.db", c->state_dir);
	/* Opening a missing file would make an empty store: say so instead. */
	if (access(path, R_OK | W_OK) < 0)
		return error_set(err, -errno, "%s: %s", path, strerror(errno));
	r = jobstore_open(JOBSTORE_POSTGRESQL, c->store_dsn, &to, err);
	if (r < 0)
		goto done;
	r = jobstore_open(JOBSTORE_SQLITE, path, &from, err);
	if (r < 0)
		goto done;
	r = jobstore_copy(from, to, ret_jobs, err);
	if (r < 0)
		goto done;
	jobstore_describe(from, a, sizeof(a));
	jobstore_describe(to, b, sizeof(b));
	snprintf(ret_text, size, "%lld jobs moved from %s to %s", (long long)*ret_jobs, a, b);
done:
	jobstore_close(from);
	jobstore_close(to);
	return r;
}
