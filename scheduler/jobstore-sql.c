/* SPDX-License-Identifier: MIT */
/* The SQL both drivers take, with the few fragments that differ filled in
 * by the driver: the schema's migrations, one list for both engines where
 * their SQL agrees, and the expansion of a shared text's fragments. Uses
 * no driver and no operation. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobstore-internal.h"

/* Each migration by the version it leads to. A version NULL here is each
 * driver's own (jobstore_driver.migrations): SQLite's 1..7 (a PostgreSQL
 * store starts at 7, those seven in one) and the events table, whose seq
 * is SQLite's rowid. {ADD_COLUMN} is the driver's words for a column
 * added to a table. */
static const char *const migrations[JOBSTORE_SCHEMA_VERSION + 1] = {
	/* 8: the nodes qpoold knows, so a restarted one counts them before
	 * they register again. */
	[8] = JOBSTORE_SQL_NODES_CREATE,
	/* 9: leadership, the lease row and the servers seen (docs/HA.md). */
	[9] = JOBSTORE_SQL_LEASE_CREATE,
	/* 10: the GPUs each node's share holds (docs/GPUS.md), a list of the
	 * node's indices ("0,2"); a one-node job with GPUs has its row too. */
	[10] = "ALTER TABLE job_alloc {ADD_COLUMN} gpus TEXT;",
	/* 11: the pool's name, the suffix of its job ids (docs/HA.md). */
	[11] = JOBSTORE_SQL_POOL_CREATE,
	/* 12: the event stream (docs/EVENTS.md): the drivers' own. */
	/* 13: accounts and their users (docs/ACCOUNTS.md). */
	[13] = JOBSTORE_SQL_ACCOUNTS_CREATE,
	/* 14: an account's limits (docs/LIMITS.md); NULL: none. */
	[14] = "ALTER TABLE accounts {ADD_COLUMN} grp_cpus BIGINT;"
	       "ALTER TABLE accounts {ADD_COLUMN} grp_gpus BIGINT;"
	       "ALTER TABLE accounts {ADD_COLUMN} grp_jobs BIGINT;",
	/* 15: when a node was drained (wall s), so sinfo -R and pbsnodes
	 * tell it after a restart or a takeover; NULL: not drained. */
	[15] = "ALTER TABLE node_admin {ADD_COLUMN} t_drain BIGINT;",
	/* 16: QOS and budgets (docs/QOS.md). */
	[16] = JOBSTORE_SQL_QOS_CREATE,
	/* 17: reservations (docs/RESERVATIONS.md). */
	[17] = JOBSTORE_SQL_RESV_CREATE,
	/* 18: a running one-node job's NUMA nodes (the kernel list its
	 * memory is counted on, docs/RESOURCES.md), written by its dispatch
	 * with its node and CPUs; NULL: spread over all its node's. */
	[18] = "ALTER TABLE jobs {ADD_COLUMN} mems TEXT;",
	/* 19: jobs_done partial on SQLite too (PostgreSQL's always was): a
	 * job inserted without t_done added an entry at the index's first
	 * page, which its end moved to the last, so every job wrote that
	 * first page twice (issue 39: WAL pages a job 8.3 -> 6.3). Every
	 * query of the index asks t_done >= X or > X, which implies it; the
	 * fair share's read of the running jobs goes by state (usage.c). */
	[19] = "DROP INDEX IF EXISTS jobs_done;"
	       "CREATE INDEX jobs_done ON jobs(t_done) WHERE t_done IS NOT NULL;",
};

char *jobstore_sql_expand(const struct jobstore_driver *drv, const char *text)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	for (const char *p = text; *p; ) {
		if (*p != '{') {
			fputc(*p++, f);
		} else if (strncmp(p, "{NOW}", 5) == 0) {
			fputs(drv->now_ms, f);
			p += 5;
		} else if (strncmp(p, "{LAST_ID}", 9) == 0) {
			fputs(drv->last_id, f);
			p += 9;
		} else if (strncmp(p, "{ADD_COLUMN}", 12) == 0) {
			fputs(drv->add_column, f);
			p += 12;
		} else if (strncmp(p, "{ATTR:", 6) == 0 && strchr(p, '}')) {
			const char *end = strchr(p, '}');

			fprintf(f, "%s%.*s%s", drv->attr_open, (int)(end - p - 6), p + 6, drv->attr_close);
			p = end + 1;
		} else {
			fputc(*p++, f);
		}
	}
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

int jobstore_migration(const struct jobstore_driver *drv, int version, char **ret)
{
	const char *text;

	if (version < drv->first_version || version > JOBSTORE_SCHEMA_VERSION)
		return -EINVAL;
	text = drv->migrations[version] ? drv->migrations[version] : migrations[version];
	if (!text)
		return -EINVAL;
	*ret = jobstore_sql_expand(drv, text);
	return *ret ? 0 : -ENOMEM;
}
