/* SPDX-License-Identifier: MIT */
/* The job store on SQLite: schema, migrations, prepared statements. The
 * only file that includes sqlite3.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobstore-internal.h"

/* Migrations, applied in order; index + 1 is the version they lead to. */
static const char *const migrations[] = {
	/* 1: jobs, their scripts kept apart so scans of jobs stay small. */
	"CREATE TABLE jobs ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" name TEXT NOT NULL, queue TEXT NOT NULL, owner TEXT NOT NULL,"
	" uid INTEGER NOT NULL, gid INTEGER NOT NULL, state TEXT NOT NULL,"
	" ncpus INTEGER NOT NULL, mem INTEGER NOT NULL, walltime INTEGER NOT NULL,"
	" workdir TEXT NOT NULL, stdout TEXT NOT NULL, stderr TEXT NOT NULL,"
	" join_oe INTEGER NOT NULL, rerunnable INTEGER NOT NULL,"
	" node TEXT, cpus TEXT, exit_status INTEGER, exit_signal INTEGER,"
	" reason TEXT, cpu_ns INTEGER, mem_peak INTEGER, oom INTEGER,"
	" t_submit INTEGER, t_dispatch INTEGER, t_launch INTEGER, t_wrap INTEGER,"
	" t_fenced INTEGER, t_exec INTEGER, t_exit INTEGER, t_released INTEGER,"
	" t_done INTEGER);"
	"CREATE INDEX jobs_state ON jobs(state);"
	"CREATE TABLE job_payload ("
	" job_id INTEGER PRIMARY KEY REFERENCES jobs(id),"
	" env TEXT NOT NULL, script TEXT NOT NULL);",
	/* 2: gded's monotonic stamps, so durations on one node stay exact
	 * when a wall clock steps. */
	"ALTER TABLE jobs ADD COLUMN m_wrap INTEGER;"
	"ALTER TABLE jobs ADD COLUMN m_fenced INTEGER;"
	"ALTER TABLE jobs ADD COLUMN m_exec INTEGER;"
	"ALTER TABLE jobs ADD COLUMN m_exit INTEGER;"
	"ALTER TABLE jobs ADD COLUMN m_released INTEGER;"
	"CREATE INDEX jobs_done ON jobs(t_done);",
	/* 3: what must survive a restart besides jobs: the IQS rotation, and
	 * the admin's qmgr settings of queues and nodes. */
	"CREATE TABLE iqs_rotation (queue TEXT NOT NULL, uid INTEGER NOT NULL,"
	" seq INTEGER NOT NULL, PRIMARY KEY (queue, uid));"
	"CREATE TABLE queue_admin (queue TEXT PRIMARY KEY, enabled INTEGER,"
	" started INTEGER, reason TEXT);"
	"CREATE TABLE node_admin (node TEXT PRIMARY KEY, drain INTEGER NOT NULL, reason TEXT);",
	/* 4: the submitter's umask, for the job's output files; NULL (rows
	 * from before) is launched with 022. */
	"ALTER TABLE jobs ADD COLUMN umask INTEGER;",
	/* 5: the PBS attributes qsub recorded (Account_Name, Mail_Points,
	 * Resource_List.place, ...) as a JSON object of strings; NULL: none. */
	"ALTER TABLE jobs ADD COLUMN attrs TEXT;",
	/* 6: jobs across nodes (docs/PARALLEL.md): the request's chunks (JSON
	 * array) and place ("scatter:excl", ...), NULL for a one-node job;
	 * and the allocation of a job across nodes, one row per node in job
	 * order (idx 0: the primary, also in jobs.node and jobs.cpus) with
	 * that node's share and stamps. A one-node job has no rows here. */
	"ALTER TABLE jobs ADD COLUMN chunks TEXT;"
	"ALTER TABLE jobs ADD COLUMN place TEXT;"
	"CREATE TABLE job_alloc ("
	" job_id INTEGER NOT NULL REFERENCES jobs(id), idx INTEGER NOT NULL,"
	" node TEXT NOT NULL, ncpus INTEGER NOT NULL, cpus TEXT, mems TEXT, mem INTEGER,"
	" mpiprocs INTEGER, ompthreads INTEGER,"
	" t_launch INTEGER, t_wrap INTEGER, t_fenced INTEGER, t_exec INTEGER, t_exit INTEGER,"
	" t_released INTEGER, t_done INTEGER, cpu_ns INTEGER, mem_peak INTEGER, result TEXT,"
	" PRIMARY KEY (job_id, idx));",
	/* 7: job arrays and dependencies. An array is one row (array_spec,
	 * the canonical index set) and its subjobs get rows only once they
	 * are dispatched or acted on one by one (array_id, array_index;
	 * their id is the array's + 1 + position, reserved at submit).
	 * depend: the canonical -W depend list of the job. */
	"ALTER TABLE jobs ADD COLUMN array_spec TEXT;"
	"ALTER TABLE jobs ADD COLUMN array_id INTEGER;"
	"ALTER TABLE jobs ADD COLUMN array_index INTEGER;"
	"ALTER TABLE jobs ADD COLUMN depend TEXT;"
	"CREATE INDEX jobs_array ON jobs(array_id) WHERE array_id IS NOT NULL;",
	/* 8: the nodes qpoold knows, so a restarted one counts them before
	 * they register again (jobstore-internal.h: the same SQL on both). */
	JOBSTORE_SQL_NODES_CREATE,
	/* 9: leadership, the lease row and the servers seen (docs/HA.md). */
	JOBSTORE_SQL_LEASE_CREATE,
	/* 10: the GPUs each node's share holds (docs/GPUS.md), a list of the
	 * node's indices ("0,2"); a one-node job with GPUs has its row too. */
	"ALTER TABLE job_alloc ADD COLUMN gpus TEXT;",
	/* 11: the pool's name, the suffix of its job ids (docs/HA.md). */
	JOBSTORE_SQL_POOL_CREATE,
	/* 12: the event stream (docs/EVENTS.md); a store made before seq
	 * was the rowid is rebuilt at open (events_rowid). */
	JOBSTORE_SQL_EVENTS_CREATE_SQLITE,
	/* 13: accounts and their users (docs/ACCOUNTS.md). */
	JOBSTORE_SQL_ACCOUNTS_CREATE,
	/* 14: an account's limits (docs/LIMITS.md); NULL: none. */
	"ALTER TABLE accounts ADD COLUMN grp_cpus BIGINT;"
	"ALTER TABLE accounts ADD COLUMN grp_gpus BIGINT;"
	"ALTER TABLE accounts ADD COLUMN grp_jobs BIGINT;",
	/* 15: when a node was drained (wall s), so sinfo -R and pbsnodes
	 * tell it after a restart or a takeover; NULL: not drained. */
	"ALTER TABLE node_admin ADD COLUMN t_drain BIGINT;",
	/* 16: QOS and budgets (docs/QOS.md). */
	JOBSTORE_SQL_QOS_CREATE,
	/* 17: reservations (docs/RESERVATIONS.md). */
	JOBSTORE_SQL_RESV_CREATE,
};

#define N_MIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))
_Static_assert(N_MIGRATIONS == JOBSTORE_SCHEMA_VERSION, "a migration for each schema version");

static const char SQL_INSERT[] =
	"INSERT INTO jobs (name, queue, owner, uid, gid, state, ncpus, mem, walltime,"
	" workdir, stdout, stderr, join_oe, rerunnable, t_submit, umask, attrs, chunks, place, array_spec, depend, reason)"
	" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
/* The ids of an array's subjobs are reserved at submit: AUTOINCREMENT
 * takes the next id above sqlite_sequence's. */
static const char SQL_RESERVE[] =
	"UPDATE sqlite_sequence SET seq = seq + ?1 WHERE name = 'jobs'";
static const char SQL_SUBJOB_INSERT[] =
	"INSERT INTO jobs (id, name, queue, owner, uid, gid, state, ncpus, mem, walltime,"
	" workdir, stdout, stderr, join_oe, rerunnable, t_submit, umask, attrs, chunks, place, array_id, array_index, reason)"
	" SELECT ?1, name, queue, owner, uid, gid, ?2, ncpus, mem, walltime, workdir, stdout, stderr,"
	" join_oe, rerunnable, t_submit, umask, attrs, chunks, place, id, ?3, ?5 FROM jobs WHERE id = ?4";
static const char SQL_SUBJOBS[] =
	"SELECT array_index, state, exit_status FROM jobs WHERE array_id = ?";
/* An array's own record: its state and status, and what its subjobs used. */
static const char SQL_ARRAY_FINISH[] =
	"UPDATE jobs SET state = ?1, exit_status = ?2, reason = ?3, t_done = ?4,"
	" cpu_ns = (SELECT sum(cpu_ns) FROM jobs WHERE array_id = ?5),"
	" mem_peak = (SELECT max(mem_peak) FROM jobs WHERE array_id = ?5),"
	" t_dispatch = (SELECT min(t_dispatch) FROM jobs WHERE array_id = ?5),"
	" t_exec = (SELECT min(t_exec) FROM jobs WHERE array_id = ?5),"
	" t_exit = (SELECT max(t_exit) FROM jobs WHERE array_id = ?5),"
	" t_released = (SELECT max(t_released) FROM jobs WHERE array_id = ?5) WHERE id = ?5";
static const char SQL_DEPEND_SET[] =
	"UPDATE jobs SET depend = ?1 WHERE id = ?2";
static const char SQL_INSERT_PAYLOAD[] =
	"INSERT INTO job_payload (job_id, env, script) VALUES (?,?,?)";
static const char SQL_SET_STATE[] =
	"UPDATE jobs SET state = ?, reason = ? WHERE id = ?";
static const char SQL_DISPATCH[] =
	"UPDATE jobs SET state = 'running', node = ?, cpus = ?, t_dispatch = ?, reason = NULL WHERE id = ?";
/* attrs.run_count: how often the job was requeued (scontrol's Restarts;
 * qstat -f's run_count counts its starts from it). */
static const char SQL_REQUEUE[] =
	"UPDATE jobs SET state = 'queued', node = NULL, cpus = NULL, t_dispatch = NULL, reason = ?,"
	" attrs = json_set(coalesce(attrs, '{}'), '$.run_count',"
	" CAST(CAST(coalesce(json_extract(attrs, '$.run_count'), '0') AS INTEGER) + 1 AS TEXT)) WHERE id = ?";
/* A job across nodes used what each node reported (job_alloc, one row
 * per node, cpu_ns set as each report comes): its CPU time is their sum,
 * its peak memory the highest node's; a job on one node has no reports
 * there and keeps its own figures. */
static const char SQL_FINISH[] =
	"UPDATE jobs SET state = ?1, exit_status = ?2, exit_signal = ?3, reason = ?4,"
	" cpu_ns = coalesce((SELECT sum(cpu_ns) FROM job_alloc WHERE job_id = ?20), ?5),"
	" mem_peak = coalesce((SELECT max(mem_peak) FROM job_alloc WHERE job_id = ?20), ?6),"
	" oom = ?7, t_launch = ?8, t_wrap = ?9, t_fenced = ?10,"
	" t_exec = ?11, t_exit = ?12, t_released = ?13, t_done = ?14, m_wrap = ?15, m_fenced = ?16,"
	" m_exec = ?17, m_exit = ?18, m_released = ?19 WHERE id = ?20";
static const char SQL_ACTIVE[] =
	"SELECT id, queue, uid, state, ncpus, mem, walltime, node, cpus, t_submit, rerunnable, t_dispatch,"
	" json_extract(attrs, '$.Priority'), json_extract(attrs, '$.Execution_Time'), chunks, place,"
	" array_spec, array_id, array_index, depend, reason, json_extract(attrs, '$.\"Resource_List.ngpus\"'),"
	" json_extract(attrs, '$.\"Resource_List.nodelist\"'), json_extract(attrs, '$.\"Resource_List.exclude\"'),"
	" json_extract(attrs, '$.\"Resource_List.constraint\"'),"
	" json_extract(attrs, '$.\"Resource_List.gpu_model\"'),"
	" json_extract(attrs, '$.\"Resource_List.licenses\"'), json_extract(attrs, '$.\"Resource_List.node_res\"'),"
	" json_extract(attrs, '$.Account_Name'), json_extract(attrs, '$.\"Resource_List.qos\"'),"
	" json_extract(attrs, '$.reservation')"
	" FROM jobs WHERE state IN ('queued','held','running','exiting') ORDER BY id";
static const char SQL_QUERY[] =
	"SELECT " JOB_COLUMNS " FROM jobs WHERE (?1 = 0 OR id = ?1 OR (?8 AND array_id = ?1))"
	" AND (?2 IS NULL OR owner = ?2)"
	" AND (?3 OR state IN ('queued','held','running','exiting'))"
	" AND (?4 = 0 OR t_done IS NULL OR t_done >= ?4) AND (?5 = 0 OR t_submit <= ?5)"
	" AND id > ?6 AND (?8 OR array_id IS NULL) AND (?9 = 0 OR array_spec IS NULL) ORDER BY id LIMIT ?7";
/* The same for one job: "(?1 = 0 OR id = ?1)" cannot use the primary key,
 * so SQL_QUERY scans every row; measured 85 s of dispatching for 100,000
 * jobs on 1,000 simulated nodes, as node_launch reads each job back. */
static const char SQL_QUERY_ID[] =
	"SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?1 AND (?2 IS NULL OR owner = ?2)"
	" AND (?3 OR state IN ('queued','held','running','exiting'))"
	" AND (?4 = 0 OR t_done IS NULL OR t_done >= ?4) AND (?5 = 0 OR t_submit <= ?5)";
/* What job.launch carries of a job, payload included, in one look-up by
 * primary key: node_launch's read-back through SQL_QUERY_ID, a row object
 * and a copy cost ~50,000 instructions per dispatch. */
static const char SQL_LAUNCH[] =
	"SELECT " JOB_COLUMNS ", p.env, p.script, jobs.umask FROM jobs"
	" JOIN job_payload p ON p.job_id = coalesce(jobs.array_id, jobs.id)"
	" WHERE jobs.id = ?";
static const char SQL_PAYLOAD[] =
	"SELECT env, script FROM job_payload WHERE job_id ="
	" coalesce((SELECT array_id FROM jobs WHERE id = ?1), ?1)";
static const char SQL_ALLOC_INSERT[] =
	"INSERT OR REPLACE INTO job_alloc (job_id, idx, node, ncpus, cpus, mems, mem, mpiprocs, ompthreads, gpus)"
	" VALUES (?,?,?,?,?,?,?,?,?,?)";
static const char SQL_ALLOC_DELETE[] = "DELETE FROM job_alloc WHERE job_id = ?";
static const char SQL_ALLOC_RESULT[] =
	"UPDATE job_alloc SET t_launch = ?, t_wrap = ?, t_fenced = ?, t_exec = ?, t_exit = ?,"
	" t_released = ?, t_done = ?, cpu_ns = ?, mem_peak = ?, result = ? WHERE job_id = ? AND idx = ?";
static const char SQL_ALLOC_LOAD[] =
	"SELECT idx, node, ncpus, cpus, mems, mem, mpiprocs, ompthreads, t_launch, t_wrap, t_fenced,"
	" t_exec, t_exit, t_released, t_done, cpu_ns, mem_peak, result, gpus FROM job_alloc WHERE job_id = ? ORDER BY idx";
static const char SQL_ROT_SET[] =
	"INSERT INTO iqs_rotation (queue, uid, seq) VALUES (?,?,?)"
	" ON CONFLICT (queue, uid) DO UPDATE SET seq = excluded.seq";
static const char SQL_ROT_LOAD[] = "SELECT queue, uid, seq FROM iqs_rotation";
static const char SQL_QADMIN_SET[] =
	"INSERT INTO queue_admin (queue, enabled, started, reason) VALUES (?1,?2,?3,?4)"
	" ON CONFLICT (queue) DO UPDATE SET enabled = coalesce(?2, enabled),"
	" started = coalesce(?3, started), reason = ?4";
static const char SQL_QADMIN_LOAD[] = "SELECT queue, enabled, started, reason FROM queue_admin";
static const char SQL_NADMIN_SET[] =
	"INSERT INTO node_admin (node, drain, reason, t_drain)"
	" VALUES (?1,?2,?3, CASE WHEN ?2 > 0 THEN CAST(strftime('%s','now') AS INTEGER) END)"
	" ON CONFLICT (node) DO UPDATE SET drain = ?2, reason = ?3, t_drain = excluded.t_drain";
static const char SQL_NADMIN_LOAD[] = "SELECT node, drain, t_drain, reason FROM node_admin";
static const char SQL_ALTER[] =
	"UPDATE jobs SET name = ?, queue = ?, ncpus = ?, mem = ?, walltime = ?, stdout = coalesce(?, stdout),"
	" stderr = coalesce(?, stderr), join_oe = ?, rerunnable = ? WHERE id = ? AND state IN ('queued','held')";
/* qalter -a, scontrol update StartTime=: attrs.Execution_Time (epoch
 * seconds as text), or none for 0; a job not ended yet (a running one
 * keeps it for a start after a requeue). */
/* A start estimate kept beside the job (docs/ESTIMATES.md): ?1 epoch
 * seconds. The first one is kept once (a restart's replay does not
 * overwrite it: json_insert). */
static const char SQL_ESTIMATE_SET[] =
	"UPDATE jobs SET attrs = json_set(coalesce(attrs, '{}'), '$.\"estimated.start_time\"', CAST(?1 AS TEXT))"
	" WHERE id = ?2";
static const char SQL_ESTIMATE_FIRST[] =
	"UPDATE jobs SET attrs = json_insert(coalesce(attrs, '{}'), '$.\"estimated.first_start_time\"',"
	" CAST(?1 AS TEXT)) WHERE id = ?2";
static const char SQL_BEGIN_SET[] =
	"UPDATE jobs SET attrs = CASE WHEN ?1 > 0 THEN json_set(coalesce(attrs, '{}'), '$.Execution_Time',"
	" CAST(?1 AS TEXT)) ELSE json_remove(coalesce(attrs, '{}'), '$.Execution_Time') END"
	" WHERE id = ?2 AND state IN ('queued','held','running','exiting')";

/* The store's clock in ms: the host's, read by SQLite ('now' is fixed for
 * one statement). julianday keeps the milliseconds unixepoch() drops
 * before SQLite 3.42 (Debian 12 has 3.40). */
#define SQLITE_NOW_MS "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"

enum stmt_id {
	ST_INSERT, ST_INSERT_PAYLOAD, ST_SET_STATE, ST_DISPATCH, ST_REQUEUE, ST_FINISH,
	ST_ACTIVE, ST_QUERY, ST_QUERY_ID, ST_LAUNCH, ST_PAYLOAD, ST_ROT_SET, ST_ROT_LOAD, ST_QADMIN_SET, ST_QADMIN_LOAD,
	ST_NADMIN_SET, ST_NADMIN_LOAD, ST_ALTER, ST_BEGIN_SET, ST_ESTIMATE_SET, ST_ESTIMATE_FIRST, ST_ALLOC_INSERT, ST_ALLOC_DELETE, ST_ALLOC_RESULT,
	ST_ALLOC_LOAD, ST_RESERVE, ST_SUBJOB_INSERT, ST_SUBJOBS,
	ST_ARRAY_FINISH, ST_DEPEND_SET, ST_NODE_PUT, ST_NODE_DELETE, ST_NODE_ADMIN_DELETE, ST_NODES_LOAD,
	ST_LEASE_ACQUIRE, ST_LEASE_RENEW, ST_LEASE_RELEASE, ST_LEASE_READ, ST_SERVER_SEEN, ST_SERVERS_LOAD,
	ST_POOL_NAME_READ, ST_POOL_NAME_SET, ST_EV_JOB, ST_EV_NODE, ST_EV_READ, ST_EV_BOUNDS,
	ST_EV_PRUNE, ST_EV_JOB_RANGE, ST_BEGIN, ST_COMMIT, ST_ROLLBACK, ST_MAX,
};

static const char *const stmt_sql[ST_MAX] = {
	[ST_INSERT] = SQL_INSERT,
	[ST_INSERT_PAYLOAD] = SQL_INSERT_PAYLOAD,
	[ST_SET_STATE] = SQL_SET_STATE,
	[ST_DISPATCH] = SQL_DISPATCH,
	[ST_REQUEUE] = SQL_REQUEUE,
	[ST_FINISH] = SQL_FINISH,
	[ST_ACTIVE] = SQL_ACTIVE,
	[ST_QUERY] = SQL_QUERY,
	[ST_QUERY_ID] = SQL_QUERY_ID,
	[ST_LAUNCH] = SQL_LAUNCH,
	[ST_PAYLOAD] = SQL_PAYLOAD,
	[ST_ROT_SET] = SQL_ROT_SET,
	[ST_ROT_LOAD] = SQL_ROT_LOAD,
	[ST_QADMIN_SET] = SQL_QADMIN_SET,
	[ST_QADMIN_LOAD] = SQL_QADMIN_LOAD,
	[ST_NADMIN_SET] = SQL_NADMIN_SET,
	[ST_NADMIN_LOAD] = SQL_NADMIN_LOAD,
	[ST_ALTER] = SQL_ALTER,
	[ST_BEGIN_SET] = SQL_BEGIN_SET,
	[ST_ESTIMATE_SET] = SQL_ESTIMATE_SET,
	[ST_ESTIMATE_FIRST] = SQL_ESTIMATE_FIRST,
	[ST_ALLOC_INSERT] = SQL_ALLOC_INSERT,
	[ST_ALLOC_DELETE] = SQL_ALLOC_DELETE,
	[ST_ALLOC_RESULT] = SQL_ALLOC_RESULT,
	[ST_ALLOC_LOAD] = SQL_ALLOC_LOAD,
	[ST_RESERVE] = SQL_RESERVE,
	[ST_SUBJOB_INSERT] = SQL_SUBJOB_INSERT,
	[ST_SUBJOBS] = SQL_SUBJOBS,
	[ST_ARRAY_FINISH] = SQL_ARRAY_FINISH,
	[ST_DEPEND_SET] = SQL_DEPEND_SET,
	[ST_NODE_PUT] = JOBSTORE_SQL_NODE_PUT,
	[ST_NODE_DELETE] = JOBSTORE_SQL_NODE_DELETE,
	[ST_NODE_ADMIN_DELETE] = JOBSTORE_SQL_NODE_ADMIN_DELETE,
	[ST_NODES_LOAD] = JOBSTORE_SQL_NODES_LOAD,
	[ST_LEASE_ACQUIRE] = JOBSTORE_SQL_LEASE_ACQUIRE(SQLITE_NOW_MS),
	[ST_LEASE_RENEW] = JOBSTORE_SQL_LEASE_RENEW(SQLITE_NOW_MS),
	[ST_LEASE_RELEASE] = JOBSTORE_SQL_LEASE_RELEASE(SQLITE_NOW_MS),
	[ST_LEASE_READ] = JOBSTORE_SQL_LEASE_READ(SQLITE_NOW_MS),
	[ST_SERVER_SEEN] = JOBSTORE_SQL_SERVER_SEEN(SQLITE_NOW_MS),
	[ST_SERVERS_LOAD] = JOBSTORE_SQL_SERVERS_LOAD(SQLITE_NOW_MS),
	[ST_POOL_NAME_READ] = JOBSTORE_SQL_POOL_NAME_READ,
	[ST_POOL_NAME_SET] = JOBSTORE_SQL_POOL_NAME_SET,
	[ST_EV_JOB] = JOBSTORE_SQL_EV_JOBS_SQLITE,
	[ST_EV_NODE] = JOBSTORE_SQL_EV_NODE,
	[ST_EV_READ] = JOBSTORE_SQL_EV_READ,
	[ST_EV_BOUNDS] = JOBSTORE_SQL_EV_BOUNDS,
	[ST_EV_PRUNE] = JOBSTORE_SQL_EV_PRUNE,
	[ST_EV_JOB_RANGE] = JOBSTORE_SQL_EV_JOB_RANGE_SQLITE,
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
};

/* The write-ahead log is checkpointed once it holds this many frames
 * (SQLite's own wal_autocheckpoint default), by jobstore_checkpoint, after
 * the replies of the commit that filled it are out. */
#define WAL_CHECKPOINT_FRAMES 1000
/* Frame = 24-byte header + one page (4096, SQLite's default page size). */
#define WAL_FRAME_BYTES (24 + 4096)
/* The log is kept at this size, written once with zeros, so every commit
 * overwrites blocks the file already has: on ext4 here an fdatasync of an
 * overwrite costs ~0.1 ms, of an append (size and extent change to
 * journal) ~0.3-0.5 ms. Twice the checkpoint size: a large dispatch
 * transaction still fits before the checkpoint that follows it. */
#define WAL_PRESIZE_BYTES (2 * WAL_CHECKPOINT_FRAMES * WAL_FRAME_BYTES)

struct sqlite_store {
	struct jobstore base;   /* first: the door hands out &base */
	char *path;
	sqlite3 *db;
	sqlite3_stmt *st[ST_MAX];
	int wal_frames;         /* frames in the log after the last commit */
	int wal_next_checkpoint;
};

static const struct jobstore_ops sqlite_ops;
static void sqlite_close(struct jobstore *base);

static struct sqlite_store *to_sqlite(struct jobstore *base)
{
	return (struct sqlite_store *)base;
}

static bool row_null_sqlite(const struct jobstore_row *r, int col)
{
	return sqlite3_column_type(r->res, col) == SQLITE_NULL;
}

static int64_t row_i64_sqlite(const struct jobstore_row *r, int col)
{
	return sqlite3_column_int64(r->res, col);
}

static const char *row_text_sqlite(const struct jobstore_row *r, int col)
{
	return (const char *)sqlite3_column_text(r->res, col);
}

static const struct jobstore_row_ops sqlite_row_ops = {
	.null = row_null_sqlite,
	.i64 = row_i64_sqlite,
	.text = row_text_sqlite,
};

/* The one adapter from SQLite result codes to negative errno. */
static int sql_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return 0;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_CONSTRAINT:
		return -EEXIST;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return -EUCLEAN;
	default:
		return -EIO;
	}
}

static int schema_migrate(struct sqlite_store *js, struct error *err)
{
	sqlite3_stmt *st = NULL;
	char *msg = NULL;
	int version = 0;
	int rc;

	rc = sqlite3_exec(js->db, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
			  NULL, NULL, &msg);
	if (rc != SQLITE_OK)
		goto fail;
	rc = sqlite3_prepare_v2(js->db, "SELECT max(version) FROM schema_version", -1, &st, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	if (sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version > N_MIGRATIONS)
		return error_set(err, -EPROTO, "job store schema version %d is newer than this qpoold (%d)",
				 version, N_MIGRATIONS);
	for (int v = version; v < N_MIGRATIONS; v++) {
		char sql[64];

		rc = sqlite3_exec(js->db, "BEGIN IMMEDIATE", NULL, NULL, &msg);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(js->db, migrations[v], NULL, NULL, &msg);
		snprintf(sql, sizeof(sql), "INSERT INTO schema_version VALUES (%d)", v + 1);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(js->db, sql, NULL, NULL, &msg);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(js->db, "COMMIT", NULL, NULL, &msg);
		if (rc != SQLITE_OK) {
			sqlite3_exec(js->db, "ROLLBACK", NULL, NULL, NULL);
			goto fail;
		}
	}
	return 0;
fail:
	rc = error_set(err, sql_errno(rc), "job store: %s", msg ? msg : sqlite3_errmsg(js->db));
	sqlite3_free(msg);
	return rc;
}

/* A store whose events table was made with seq BIGINT PRIMARY KEY (a
 * table and a unique index, two b-trees per event) gets it rebuilt with
 * seq as the rowid, once, in one transaction: the same columns, so the
 * schema's version stays 12 and an older qpoold reads it as before. */
static int events_rowid(struct sqlite_store *js, struct error *err)
{
	sqlite3_stmt *st = NULL;
	char *msg = NULL;
	bool old = false;
	int rc;

	rc = sqlite3_prepare_v2(js->db, "SELECT 1 FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'"
				" AND name LIKE 'sqlite_autoindex_events_%'", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return error_set(err, sql_errno(rc), "job store: %s", sqlite3_errmsg(js->db));
	old = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (!old)
		return 0;
	rc = sqlite3_exec(js->db, "BEGIN IMMEDIATE; "
			  JOBSTORE_SQL_EVENTS_TABLE("events_rowid", "INTEGER")
			  " INSERT INTO events_rowid SELECT seq, t, epoch, jobid, uid, node, state, exit_status,"
			  " exit_signal, reason FROM events ORDER BY seq; DROP TABLE events;"
			  " ALTER TABLE events_rowid RENAME TO events; COMMIT;", NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		sqlite3_exec(js->db, "ROLLBACK", NULL, NULL, NULL);
		rc = error_set(err, sql_errno(rc), "job store: cannot rebuild the events table: %s",
			       msg ? msg : sqlite3_errmsg(js->db));
		sqlite3_free(msg);
		return rc;
	}
	return 0;
}

/* Extends path-wal with zeros up to WAL_PRESIZE_BYTES, between
 * transactions. Only past its end: SQLite finds the log's end from its
 * index, not the file's size, and zeros after the last frame read as
 * "no more frames" should the log ever be recovered. A disk without the
 * room gets the file back at its old size: the log then grows as it
 * needs, slower but correct. */
static int wal_presize(const char *path, struct error *err)
{
	static const char zeros[65536];
	char wal[PATH_MAX + 8];
	struct stat st;
	int fd, r = 0;

	if (snprintf(wal, sizeof(wal), "%s-wal", path) >= (int)sizeof(wal))
		return error_set(err, -ENAMETOOLONG, "job store %s: path too long", path);
	fd = open(wal, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return error_set(err, -errno, "job store %s: %s", wal, strerror(errno));
	if (fstat(fd, &st) < 0) {
		r = error_set(err, -errno, "job store %s: %s", wal, strerror(errno));
		goto done;
	}
	for (off_t off = st.st_size; off < WAL_PRESIZE_BYTES; ) {
		size_t n = sizeof(zeros);
		ssize_t w;

		if ((off_t)n > WAL_PRESIZE_BYTES - off)
			n = (size_t)(WAL_PRESIZE_BYTES - off);
		w = pwrite(fd, zeros, n, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w < 0 && (errno == ENOSPC || errno == EDQUOT || errno == EFBIG)) {
				/* Best effort only: give the space back. */
				if (ftruncate(fd, st.st_size) < 0)
					r = error_set(err, -errno, "job store %s: %s", wal, strerror(errno));
				goto done;
			}
			r = error_set(err, w < 0 ? -errno : -EIO, "job store %s: %s", wal,
				      w < 0 ? strerror(errno) : "short write");
			goto done;
		}
		off += w;
	}
	if (st.st_size < WAL_PRESIZE_BYTES && fdatasync(fd) < 0)
		r = error_set(err, -errno, "job store %s: %s", wal, strerror(errno));
done:
	close(fd);
	return r;
}

/* SQLite calls this after every commit in WAL mode; it replaces the
 * automatic checkpoint, which would run inside COMMIT, before the reply. */
static int wal_hook(void *userdata, sqlite3 *db, const char *name, int frames)
{
	struct sqlite_store *js = userdata;

	js->wal_frames = frames;
	return SQLITE_OK;
}

int jobstore_sqlite_open(const char *path, struct jobstore **ret, struct error *err)
{
	bool on_disk = strcmp(path, ":memory:") != 0 && path[0];
	struct sqlite_store *js;
	char *msg = NULL;
	int persist = 1;
	int rc, r;

	js = calloc(1, sizeof(*js));
	if (!js)
		return error_set(err, -ENOMEM, "out of memory");
	js->base.ops = &sqlite_ops;
	js->path = strdup(path);
	if (!js->path) {
		r = error_set(err, -ENOMEM, "out of memory");
		goto done;
	}
	js->wal_next_checkpoint = WAL_CHECKPOINT_FRAMES;
	rc = sqlite3_open_v2(path, &js->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			     SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		r = error_set(err, sql_errno(rc), "job store %s: %s", path,
			      js->db ? sqlite3_errmsg(js->db) : "cannot open");
		goto done;
	}
	/* The log stays at its size across checkpoints (journal_size_limit
	 * is -1) and across a close (persistent WAL): see WAL_PRESIZE_BYTES. */
	if (on_disk)
		(void)sqlite3_file_control(js->db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
	/* WAL with synchronous=FULL: a job acknowledged to qsub survives power
	 * loss; group commit keeps that affordable (~90 us per transaction). */
	rc = sqlite3_exec(js->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
			  " PRAGMA journal_size_limit=-1;"
			  " PRAGMA foreign_keys=ON; PRAGMA busy_timeout=5000;", NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		r = error_set(err, sql_errno(rc), "job store %s: %s", path, msg);
		sqlite3_free(msg);
		goto done;
	}
	sqlite3_wal_hook(js->db, wal_hook, js);
	r = schema_migrate(js, err);
	if (r == 0)
		r = events_rowid(js, err);
	if (r < 0)
		goto done;
	/* Not before: SQLite deletes the log of a database that has no pages. */
	if (on_disk) {
		r = wal_presize(path, err);
		if (r < 0)
			goto done;
	}
	for (int i = 0; i < ST_MAX; i++) {
		rc = sqlite3_prepare_v3(js->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &js->st[i], NULL);
		if (rc != SQLITE_OK) {
			r = error_set(err, sql_errno(rc), "job store: %s", sqlite3_errmsg(js->db));
			goto done;
		}
	}
	r = 0;
done:
	if (r < 0) {
		sqlite_close(&js->base);
		return r;
	}
	*ret = &js->base;
	return 0;
}

static void sqlite_close(struct jobstore *base)
{
	struct sqlite_store *js = to_sqlite(base);

	if (!js)
		return;
	for (int i = 0; i < ST_MAX; i++)
		sqlite3_finalize(js->st[i]);
	sqlite3_close(js->db);
	free(js->path);
	free(js);
}

/* Runs a statement that returns no rows, then resets it. */
static int stmt_exec(struct sqlite_store *js, enum stmt_id id)
{
	sqlite3_stmt *st = js->st[id];
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : sql_errno(rc);
}

static int sqlite_begin(struct jobstore *base)
{
	struct sqlite_store *js = to_sqlite(base);

	return stmt_exec(js, ST_BEGIN);
}

static int sqlite_commit(struct jobstore *base)
{
	struct sqlite_store *js = to_sqlite(base);

	return stmt_exec(js, ST_COMMIT);
}

static void sqlite_rollback(struct jobstore *base)
{
	struct sqlite_store *js = to_sqlite(base);

	if (!sqlite3_get_autocommit(js->db))
		(void)stmt_exec(js, ST_ROLLBACK);
}

static int sqlite_checkpoint(struct jobstore *base)
{
	struct sqlite_store *js = to_sqlite(base);
	int rc, log = 0, done = 0;

	if (js->wal_frames < js->wal_next_checkpoint)
		return 0;
	/* PASSIVE: never waits for a reader (a sqlite3 shell, qacct's own
	 * connection); what a reader still needs is copied next time. */
	rc = sqlite3_wal_checkpoint_v2(js->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
	if (rc == SQLITE_OK && done >= log) {
		/* The next commit restarts the log at its beginning. */
		js->wal_frames = 0;
		js->wal_next_checkpoint = WAL_CHECKPOINT_FRAMES;
	} else {
		js->wal_next_checkpoint = js->wal_frames + WAL_CHECKPOINT_FRAMES / 4;
	}
	/* BUSY: another connection is checkpointing; ours comes later. */
	return rc == SQLITE_BUSY ? 0 : sql_errno(rc);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static void bind_stamp(sqlite3_stmt *st, int i, int64_t t)
{
	if (t)
		sqlite3_bind_int64(st, i, t);
	else
		sqlite3_bind_null(st, i);
}

static int sqlite_job_insert(struct jobstore *base, const struct job_submit *s, int64_t *ret_id)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_INSERT];
	int64_t id;
	int r;

	bind_text(st, 1, s->name);
	bind_text(st, 2, s->queue);
	bind_text(st, 3, s->owner);
	sqlite3_bind_int64(st, 4, s->uid);
	sqlite3_bind_int64(st, 5, s->gid);
	bind_text(st, 6, job_state_name(s->hold ? JOB_HELD : JOB_QUEUED));
	sqlite3_bind_int64(st, 7, s->ncpus);
	sqlite3_bind_int64(st, 8, (int64_t)s->mem);
	sqlite3_bind_int64(st, 9, (int64_t)s->walltime);
	bind_text(st, 10, s->workdir);
	bind_text(st, 11, s->stdout_path ? s->stdout_path : "");
	bind_text(st, 12, s->stderr_path ? s->stderr_path : "");
	sqlite3_bind_int(st, 13, s->join);
	sqlite3_bind_int(st, 14, s->rerunnable);
	sqlite3_bind_int64(st, 15, s->t_submit);
	if (s->umask >= 0)
		sqlite3_bind_int(st, 16, s->umask & 0777);
	else
		sqlite3_bind_null(st, 16);
	bind_text(st, 17, s->attrs_json);
	bind_text(st, 18, s->chunks_json);
	bind_text(st, 19, s->place);
	bind_text(st, 20, s->array_spec);
	bind_text(st, 21, s->depend);
	bind_text(st, 22, s->reason);
	r = stmt_exec(js, ST_INSERT);
	if (r < 0)
		return r;
	id = sqlite3_last_insert_rowid(js->db);
	if (s->array_count > 0) {
		sqlite3_bind_int64(js->st[ST_RESERVE], 1, s->array_count);
		r = stmt_exec(js, ST_RESERVE);
		if (r < 0)
			return r;
	}
	st = js->st[ST_INSERT_PAYLOAD];
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, s->env_json ? s->env_json : "{}");
	bind_text(st, 3, s->script);
	r = stmt_exec(js, ST_INSERT_PAYLOAD);
	if (r < 0)
		return r;
	*ret_id = id;
	return 0;
}

static int changed_one(struct sqlite_store *js, int r)
{
	if (r < 0)
		return r;
	return sqlite3_changes(js->db) == 1 ? 0 : -ENOENT;
}

static int sqlite_job_set_state(struct jobstore *base, int64_t id, enum job_state state, const char *reason)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_SET_STATE];

	bind_text(st, 1, job_state_name(state));
	bind_text(st, 2, reason);
	sqlite3_bind_int64(st, 3, id);
	return changed_one(js, stmt_exec(js, ST_SET_STATE));
}

static int sqlite_job_dispatch(struct jobstore *base, int64_t id, const char *node, const char *cpus,
			  int64_t t_dispatch)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_DISPATCH];

	bind_text(st, 1, node);
	bind_text(st, 2, cpus);
	sqlite3_bind_int64(st, 3, t_dispatch);
	sqlite3_bind_int64(st, 4, id);
	return changed_one(js, stmt_exec(js, ST_DISPATCH));
}

static int sqlite_job_requeue(struct jobstore *base, int64_t id, const char *reason)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_REQUEUE];
	int r;

	bind_text(st, 1, reason);
	sqlite3_bind_int64(st, 2, id);
	r = changed_one(js, stmt_exec(js, ST_REQUEUE));
	if (r < 0)
		return r;
	sqlite3_bind_int64(js->st[ST_ALLOC_DELETE], 1, id);
	return stmt_exec(js, ST_ALLOC_DELETE);
}

static int sqlite_alloc_insert(struct jobstore *base, const struct job *j)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_ALLOC_INSERT];
	int r = 0;

	for (unsigned i = 0; i < j->n_alloc && r == 0; i++) {
		const struct alloc_entry *e = &j->alloc[i];
		char cpus[4096];

		cpumask_format(&e->cpus, cpus, sizeof(cpus));
		sqlite3_bind_int64(st, 1, j->id);
		sqlite3_bind_int(st, 2, (int)i);
		bind_text(st, 3, e->node);
		sqlite3_bind_int64(st, 4, e->ncpus);
		sqlite3_bind_text(st, 5, cpus, -1, SQLITE_TRANSIENT);
		bind_text(st, 6, e->mems);
		sqlite3_bind_int64(st, 7, (int64_t)e->mem);
		sqlite3_bind_int64(st, 8, e->mpiprocs);
		sqlite3_bind_int64(st, 9, e->ompthreads);
		if (e->gpus) {
			char gpus[JOB_GPUS_TEXT_MAX];

			job_gpus_format(e->gpus, gpus, sizeof(gpus));
			sqlite3_bind_text(st, 10, gpus, -1, SQLITE_TRANSIENT);
		} else {
			sqlite3_bind_null(st, 10);
		}
		r = stmt_exec(js, ST_ALLOC_INSERT);
	}
	return r;
}

static int sqlite_alloc_result(struct jobstore *base, int64_t id, unsigned idx, const struct job_result *res,
			  int64_t t_done, const char *result_json)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_ALLOC_RESULT];

	for (int i = STAMP_LAUNCH; i <= STAMP_RELEASED; i++)
		bind_stamp(st, 1 + i - STAMP_LAUNCH, res->times[i]);
	bind_stamp(st, 7, t_done);
	sqlite3_bind_int64(st, 8, res->cpu_ns);
	sqlite3_bind_int64(st, 9, res->mem_peak);
	bind_text(st, 10, result_json);
	sqlite3_bind_int64(st, 11, id);
	sqlite3_bind_int(st, 12, (int)idx);
	return stmt_exec(js, ST_ALLOC_RESULT);
}

/* The allocation rows of job id into j (entries with names, cpus, share);
 * none: j keeps what it has. */
static int alloc_load(struct sqlite_store *js, struct job *j)
{
	sqlite3_stmt *st = js->st[ST_ALLOC_LOAD];
	struct jobstore_row row = { &sqlite_row_ops, st, 0 };
	unsigned n = 0;
	int rc, r = 0;

	sqlite3_bind_int64(st, 1, j->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		n++;
	sqlite3_reset(st);
	if (n == 0 || rc != SQLITE_DONE)
		return rc == SQLITE_DONE ? 0 : sql_errno(rc);
	r = job_alloc_init(j, n);
	if (r < 0)
		return r;
	n = 0;
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW && n < j->n_alloc)
		r = jobstore_row_alloc_entry(&row, j, n++);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return r;
}

/* A job object's "alloc": each node's share and stamps, job order. */
static json_t *sqlite_alloc_json(struct jobstore *base, int64_t id)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_ALLOC_LOAD];
	struct jobstore_row row = { &sqlite_row_ops, st, 0 };
	json_t *arr = json_array();

	sqlite3_bind_int64(st, 1, id);
	while (arr && sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(arr, jobstore_row_alloc_json(&row));
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return arr;
}

static int sqlite_job_alter(struct jobstore *base, int64_t id, const struct job_submit *a)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_ALTER];

	bind_text(st, 1, a->name);
	bind_text(st, 2, a->queue);
	sqlite3_bind_int64(st, 3, a->ncpus);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)a->mem);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)a->walltime);
	bind_text(st, 6, a->stdout_path);
	bind_text(st, 7, a->stderr_path);
	sqlite3_bind_int(st, 8, a->join);
	sqlite3_bind_int(st, 9, a->rerunnable);
	sqlite3_bind_int64(st, 10, id);
	return changed_one(js, stmt_exec(js, ST_ALTER));
}

static int sqlite_job_begin_set(struct jobstore *base, int64_t id, int64_t t)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_BEGIN_SET];

	sqlite3_bind_int64(st, 1, t);
	sqlite3_bind_int64(st, 2, id);
	return changed_one(js, stmt_exec(js, ST_BEGIN_SET));
}

static int sqlite_job_estimate_set(struct jobstore *base, int64_t id, bool first, int64_t t)
{
	struct sqlite_store *js = to_sqlite(base);
	enum stmt_id i = first ? ST_ESTIMATE_FIRST : ST_ESTIMATE_SET;

	sqlite3_bind_int64(js->st[i], 1, t);
	sqlite3_bind_int64(js->st[i], 2, id);
	return stmt_exec(js, i);
}

static int sqlite_job_finish(struct jobstore *base, int64_t id, const struct job_result *res, int64_t t_done)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_FINISH];

	bind_text(st, 1, job_state_name(res->state));
	if (res->exit_status >= 0)
		sqlite3_bind_int(st, 2, res->exit_status);
	else
		sqlite3_bind_null(st, 2);
	if (res->exit_signal > 0)
		sqlite3_bind_int(st, 3, res->exit_signal);
	else
		sqlite3_bind_null(st, 3);
	bind_text(st, 4, res->reason[0] ? res->reason : NULL);
	sqlite3_bind_int64(st, 5, res->cpu_ns);
	sqlite3_bind_int64(st, 6, res->mem_peak);
	sqlite3_bind_int(st, 7, res->oom);
	for (int i = STAMP_LAUNCH; i <= STAMP_RELEASED; i++)
		bind_stamp(st, 8 + i - STAMP_LAUNCH, res->times[i]);
	sqlite3_bind_int64(st, 14, t_done);
	for (int i = STAMP_WRAP; i <= STAMP_RELEASED; i++)
		bind_stamp(st, 15 + i - STAMP_WRAP, res->mono[i]);
	sqlite3_bind_int64(st, 20, id);
	return changed_one(js, stmt_exec(js, ST_FINISH));
}

static int sqlite_load_active(struct jobstore *base, int (*cb)(struct job *j, void *userdata), void *userdata)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_ACTIVE];
	struct jobstore_row row = { &sqlite_row_ops, st, 0 };
	int rc, r = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct job *j;

		r = jobstore_row_active_job(&row, &j);
		if (r < 0)
			break;
		if ((j->n_chunks || j->ngpus) && j->n_alloc) {
			r = alloc_load(js, j);
			if (r < 0) {
				job_free(j);
				break;
			}
		}
		r = cb(j, userdata);
		if (r < 0)
			break;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = sql_errno(rc);
	sqlite3_reset(st);
	return r;
}

static int sqlite_payload_add(struct jobstore *base, int64_t id, json_t *o)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_PAYLOAD];
	struct jobstore_row row = { &sqlite_row_ops, st, 0 };
	int rc;

	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		jobstore_row_payload_set(o, &row, 0);
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : sql_errno(rc);
}

static int sqlite_query(struct jobstore *base, const struct jobstore_filter *f, json_t **ret_array)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[f->jobid && !f->subjobs ? ST_QUERY_ID : ST_QUERY];
	struct jobstore_row row = { &sqlite_row_ops, st, 0 };
	json_t *arr = json_array();
	int rc, r = 0;

	if (!arr)
		return -ENOMEM;
	sqlite3_bind_int64(st, 1, f->jobid);
	bind_text(st, 2, f->owner);
	sqlite3_bind_int(st, 3, f->finished || f->jobid);
	sqlite3_bind_int64(st, 4, f->from);
	sqlite3_bind_int64(st, 5, f->to);
	sqlite3_bind_int64(st, 6, f->after);
	sqlite3_bind_int64(st, 7, f->limit ? (int64_t)f->limit : -1);
	if (!f->jobid || f->subjobs) {
		sqlite3_bind_int(st, 8, f->subjobs);
		sqlite3_bind_int(st, 9, f->no_arrays);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(arr, jobstore_row_job_json(&row));
	if (rc != SQLITE_DONE)
		r = sql_errno(rc);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (r < 0) {
		json_decref(arr);
		return r;
	}
	*ret_array = arr;
	return 0;
}

static int sqlite_job_launch(struct jobstore *base, int64_t id, json_t **ret)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_LAUNCH];
	struct jobstore_row row = { &sqlite_row_ops, st, 0 };
	int rc, r = 0;

	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		r = rc == SQLITE_DONE ? -ENOENT : sql_errno(rc);
	else if (!(*ret = jobstore_row_launch_json(&row)))
		r = -ENOMEM;
	sqlite3_reset(st);
	return r;
}

static int sqlite_rotation_set(struct jobstore *base, const char *queue, uid_t uid, uint64_t seq)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_ROT_SET];

	bind_text(st, 1, queue);
	sqlite3_bind_int64(st, 2, uid);
	sqlite3_bind_int64(st, 3, (int64_t)seq);
	return stmt_exec(js, ST_ROT_SET);
}

static int sqlite_queue_admin_set(struct jobstore *base, const char *queue, int enabled, int started,
			     const char *reason)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_QADMIN_SET];

	bind_text(st, 1, queue);
	if (enabled >= 0)
		sqlite3_bind_int(st, 2, enabled);
	else
		sqlite3_bind_null(st, 2);
	if (started >= 0)
		sqlite3_bind_int(st, 3, started);
	else
		sqlite3_bind_null(st, 3);
	bind_text(st, 4, reason);
	return stmt_exec(js, ST_QADMIN_SET);
}

static int sqlite_node_admin_set(struct jobstore *base, const char *node, int drain, const char *reason)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_NADMIN_SET];

	bind_text(st, 1, node);
	sqlite3_bind_int(st, 2, drain);
	bind_text(st, 3, reason);
	return stmt_exec(js, ST_NADMIN_SET);
}

/* Runs an admin load statement, one callback per row (see
 * jobstore_row_admin for ncols). */
static int rows_load(struct sqlite_store *js, enum stmt_id id, int ncols,
		     int (*cb)(const char *key, long long a, long long b, const char *text, void *ud),
		     void *ud)
{
	sqlite3_stmt *st = js->st[id];
	struct jobstore_row row = { &sqlite_row_ops, st, 0 };
	int rc, r = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = jobstore_row_admin(&row, ncols, cb, ud);
		if (r < 0)
			break;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = sql_errno(rc);
	sqlite3_reset(st);
	return r;
}

static int sqlite_admin_load(struct jobstore *base, const struct jobstore_admin_cbs *cbs, void *ud)
{
	struct sqlite_store *js = to_sqlite(base);
	int r;

	r = rows_load(js, ST_ROT_LOAD, 3, cbs->rotation, ud);
	if (r == 0)
		r = rows_load(js, ST_QADMIN_LOAD, 4, cbs->queue, ud);
	if (r == 0)
		r = rows_load(js, ST_NADMIN_LOAD, 4, cbs->node, ud);
	return r;
}

static int sqlite_subjob_insert(struct jobstore *base, int64_t array_id, int64_t id, int64_t index,
			   enum job_state state, const char *reason)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_SUBJOB_INSERT];

	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, job_state_name(state));
	sqlite3_bind_int64(st, 3, index);
	sqlite3_bind_int64(st, 4, array_id);
	bind_text(st, 5, reason);
	return changed_one(js, stmt_exec(js, ST_SUBJOB_INSERT));
}

static int sqlite_subjobs_load(struct jobstore *base, int64_t array_id,
			  int (*cb)(int64_t index, enum job_state state, int exit_status, void *ud), void *ud)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_SUBJOBS];
	int rc, r = 0;

	sqlite3_bind_int64(st, 1, array_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		enum job_state state = JOB_QUEUED;

		(void)job_state_parse((const char *)sqlite3_column_text(st, 1), &state);
		r = cb(sqlite3_column_int64(st, 0), state,
		       sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 2), ud);
		if (r < 0)
			break;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = sql_errno(rc);
	sqlite3_reset(st);
	return r;
}

static int sqlite_array_finish(struct jobstore *base, int64_t id, enum job_state state, int exit_status,
			  const char *reason, int64_t t_done)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_ARRAY_FINISH];

	bind_text(st, 1, job_state_name(state));
	sqlite3_bind_int(st, 2, exit_status);
	bind_text(st, 3, reason);
	sqlite3_bind_int64(st, 4, t_done);
	sqlite3_bind_int64(st, 5, id);
	return changed_one(js, stmt_exec(js, ST_ARRAY_FINISH));
}

static int sqlite_job_depend_set(struct jobstore *base, int64_t id, const char *depend)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_DEPEND_SET];

	bind_text(st, 1, depend);
	sqlite3_bind_int64(st, 2, id);
	return changed_one(js, stmt_exec(js, ST_DEPEND_SET));
}

static int sqlite_node_put(struct jobstore *base, const struct jobstore_node *n)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_NODE_PUT];

	bind_text(st, 1, n->name);
	bind_text(st, 2, n->cpus);
	sqlite3_bind_int64(st, 3, n->ncpus);
	bind_text(st, 4, n->mems);
	sqlite3_bind_int64(st, 5, (int64_t)n->mem);
	bind_text(st, 6, n->topology);
	sqlite3_bind_int(st, 7, n->rt);
	bind_text(st, 8, n->cgroup);
	bind_text(st, 9, n->address);
	sqlite3_bind_int64(st, 10, n->t_register);
	return stmt_exec(js, ST_NODE_PUT);
}

static int sqlite_node_delete(struct jobstore *base, const char *name)
{
	struct sqlite_store *js = to_sqlite(base);
	int r, gone;

	bind_text(js->st[ST_NODE_DELETE], 1, name);
	r = stmt_exec(js, ST_NODE_DELETE);
	if (r < 0)
		return r;
	gone = sqlite3_changes(js->db);
	bind_text(js->st[ST_NODE_ADMIN_DELETE], 1, name);
	r = stmt_exec(js, ST_NODE_ADMIN_DELETE);
	if (r < 0)
		return r;
	gone += sqlite3_changes(js->db);
	return gone ? 0 : -ENOENT;
}

static int sqlite_nodes_load(struct jobstore *base, int (*cb)(const struct jobstore_node *n, void *ud), void *ud)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_NODES_LOAD];
	struct jobstore_row row = { &sqlite_row_ops, st, 0 };
	struct jobstore_node n;
	int rc, r = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		jobstore_row_node(&row, &n);
		r = cb(&n, ud);
		if (r < 0)
			break;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = sql_errno(rc);
	sqlite3_reset(st);
	return r;
}

/* p's parameters onto st, $N order. */
static void params_bind(sqlite3_stmt *st, const struct jobstore_ev_params *p)
{
	for (int i = 0; i < p->n; i++) {
		if (p->v[i].is_text)
			bind_text(st, i + 1, p->v[i].text);
		else
			sqlite3_bind_int64(st, i + 1, p->v[i].i);
	}
}

/* Steps st to its end, each row to cb (NULL: none read); 0 or -errno. */
static int rows_step(sqlite3_stmt *st, int (*cb)(const struct jobstore_row *r, void *ud), void *ud)
{
	struct jobstore_row row = { &sqlite_row_ops, st, 0 };
	int rc, r = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (cb)
			r = cb(&row, ud);
		if (r < 0)
			break;
	}
	return r == 0 && rc != SQLITE_DONE ? sql_errno(rc) : r;
}

static int sqlite_ev_run(struct jobstore *base, enum jobstore_ev_stmt id, const struct jobstore_ev_params *p,
			 int (*cb)(const struct jobstore_row *r, void *ud), void *ud)
{
	sqlite3_stmt *st = to_sqlite(base)->st[ST_EV_JOB + id];
	char *ids = NULL;
	int r;

	params_bind(st, p);
	if (p->ids) {
		ids = jobstore_ev_ids_text(p, '[', ']');
		if (!ids)
			return -ENOMEM;
		sqlite3_bind_text(st, p->n + 1, ids, -1, free);
	}
	r = rows_step(st, cb, ud);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return r;
}

static int sqlite_sql_run(struct jobstore *base, const char *sql, const struct jobstore_ev_params *p,
			  int (*cb)(const struct jobstore_row *r, void *ud), void *ud)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(to_sqlite(base)->db, sql, -1, &st, NULL), r;

	if (rc != SQLITE_OK)
		return sql_errno(rc);
	params_bind(st, p);
	r = rows_step(st, cb, ud);
	sqlite3_finalize(st);
	return r;
}

static void sqlite_describe(struct jobstore *base, char *buf, size_t size)
{
	snprintf(buf, size, "sqlite %s", to_sqlite(base)->path);
}

static const char SQL_COUNT[] =
	"SELECT (SELECT count(*) FROM jobs),"
	" (SELECT count(*) FROM job_payload) + (SELECT count(*) FROM job_alloc) +"
	" (SELECT count(*) FROM iqs_rotation) + (SELECT count(*) FROM queue_admin) +"
	" (SELECT count(*) FROM node_admin) + (SELECT count(*) FROM nodes),"
	" coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'jobs'), 0)";

static int sqlite_count(struct jobstore *base, int64_t *ret_jobs, int64_t *ret_other, int64_t *ret_last_id)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(js->db, SQL_COUNT, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*ret_jobs = sqlite3_column_int64(st, 0);
		*ret_other = sqlite3_column_int64(st, 1);
		*ret_last_id = sqlite3_column_int64(st, 2);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return sql_errno(rc);
}

static int sqlite_rows_each(struct jobstore *base, const struct jobstore_table *t,
			    int (*cb)(const char *const *values, void *ud), void *ud)
{
	struct sqlite_store *js = to_sqlite(base);
	const char *values[64];
	sqlite3_stmt *st = NULL;
	char *sql = NULL;
	int rc, r = 0;

	if (t->ncols > (int)(sizeof(values) / sizeof(values[0])))
		return -E2BIG;
	if (asprintf(&sql, "SELECT %s FROM %s ORDER BY 1", t->columns, t->name) < 0)
		return -ENOMEM;
	rc = sqlite3_prepare_v2(js->db, sql, -1, &st, NULL);
	free(sql);
	while (rc == SQLITE_OK || rc == SQLITE_ROW) {
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW)
			break;
		for (int i = 0; i < t->ncols; i++)
			values[i] = (const char *)sqlite3_column_text(st, i);
		r = cb(values, ud);
		if (r < 0)
			break;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = sql_errno(rc);
	sqlite3_finalize(st);
	return r;
}

static int sqlite_lease_acquire(struct jobstore *base, const char *holder, const char *address,
				int64_t lease_ms, int64_t *ret_epoch)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_LEASE_ACQUIRE];
	int rc, r = -EBUSY;

	bind_text(st, 1, holder);
	bind_text(st, 2, address);
	sqlite3_bind_int64(st, 3, lease_ms);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*ret_epoch = sqlite3_column_int64(st, 0);
		rc = sqlite3_step(st);
		r = 0;
	}
	if (rc != SQLITE_DONE)
		r = sql_errno(rc);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return r;
}

static int lease_change(struct sqlite_store *js, enum stmt_id id, const char *holder, int64_t epoch,
			int64_t lease_ms)
{
	sqlite3_stmt *st = js->st[id];
	int first = id == ST_LEASE_RENEW ? 2 : 1;   /* renew's $1 is the lease's length */
	int r;

	if (id == ST_LEASE_RENEW)
		sqlite3_bind_int64(st, 1, lease_ms);
	bind_text(st, first, holder);
	sqlite3_bind_int64(st, first + 1, epoch);
	r = stmt_exec(js, id);
	if (r < 0)
		return r;
	return sqlite3_changes(js->db) == 1 ? 0 : -ESTALE;
}

static int sqlite_lease_renew(struct jobstore *base, const char *holder, int64_t epoch, int64_t lease_ms)
{
	return lease_change(to_sqlite(base), ST_LEASE_RENEW, holder, epoch, lease_ms);
}

static int sqlite_lease_release(struct jobstore *base, const char *holder, int64_t epoch)
{
	return lease_change(to_sqlite(base), ST_LEASE_RELEASE, holder, epoch, 0);
}

static int sqlite_lease_read(struct jobstore *base, struct jobstore_lease *ret)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_LEASE_READ];
	struct jobstore_row row = { &sqlite_row_ops, st, 0 };
	int rc, r;

	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		snprintf(ret->holder, sizeof(ret->holder), "%s", row_text(&row, LEASE_HOLDER) ?: "");
		snprintf(ret->address, sizeof(ret->address), "%s", row_text(&row, LEASE_ADDRESS) ?: "");
		ret->epoch = row_i64(&row, LEASE_EPOCH);
		ret->expires = row_i64(&row, LEASE_EXPIRES);
		ret->now = row_i64(&row, LEASE_NOW);
		r = 0;
	} else {
		r = rc == SQLITE_DONE ? -ENOENT : sql_errno(rc);
	}
	sqlite3_reset(st);
	return r;
}

static int sqlite_server_seen(struct jobstore *base, const char *id, const char *address, const char *role)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_SERVER_SEEN];

	bind_text(st, 1, id);
	bind_text(st, 2, address);
	bind_text(st, 3, role);
	return stmt_exec(js, ST_SERVER_SEEN);
}

static int sqlite_servers_load(struct jobstore *base,
			       int (*cb)(const char *id, const char *address, const char *role, int64_t age_ms,
					 void *ud),
			       void *ud)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_SERVERS_LOAD];
	struct jobstore_row row = { &sqlite_row_ops, st, 0 };
	int rc, r = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = cb(row_text(&row, SERVER_ID) ?: "", row_text(&row, SERVER_ADDRESS) ?: "",
		       row_text(&row, SERVER_ROLE) ?: "", row_i64(&row, SERVER_AGE), ud);
		if (r < 0)
			break;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = sql_errno(rc);
	sqlite3_reset(st);
	return r;
}

static int sqlite_pool_name_read(struct jobstore *base, char *buf, size_t size)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[ST_POOL_NAME_READ];
	int rc, r = -ENOENT;

	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_text(st, 0)) {
		snprintf(buf, size, "%s", (const char *)sqlite3_column_text(st, 0));
		r = 0;
	} else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		r = sql_errno(rc);
	}
	sqlite3_reset(st);
	return r;
}

static int sqlite_pool_name_set(struct jobstore *base, const char *name)
{
	struct sqlite_store *js = to_sqlite(base);

	bind_text(js->st[ST_POOL_NAME_SET], 1, name);
	return stmt_exec(js, ST_POOL_NAME_SET);
}

static const struct jobstore_ops sqlite_ops = {
	.name = "sqlite",
	.close = sqlite_close,
	.begin = sqlite_begin,
	.commit = sqlite_commit,
	.rollback = sqlite_rollback,
	.checkpoint = sqlite_checkpoint,
	.job_insert = sqlite_job_insert,
	.job_set_state = sqlite_job_set_state,
	.job_dispatch = sqlite_job_dispatch,
	.alloc_insert = sqlite_alloc_insert,
	.alloc_result = sqlite_alloc_result,
	.job_requeue = sqlite_job_requeue,
	.job_begin_set = sqlite_job_begin_set,
	.job_estimate_set = sqlite_job_estimate_set,
	.job_alter = sqlite_job_alter,
	.job_finish = sqlite_job_finish,
	.load_active = sqlite_load_active,
	.query = sqlite_query,
	.alloc_json = sqlite_alloc_json,
	.payload_add = sqlite_payload_add,
	.job_launch = sqlite_job_launch,
	.subjob_insert = sqlite_subjob_insert,
	.subjobs_load = sqlite_subjobs_load,
	.array_finish = sqlite_array_finish,
	.job_depend_set = sqlite_job_depend_set,
	.rotation_set = sqlite_rotation_set,
	.queue_admin_set = sqlite_queue_admin_set,
	.node_admin_set = sqlite_node_admin_set,
	.admin_load = sqlite_admin_load,
	.node_put = sqlite_node_put,
	.node_delete = sqlite_node_delete,
	.nodes_load = sqlite_nodes_load,
	.describe = sqlite_describe,
	.count = sqlite_count,
	.rows_each = sqlite_rows_each,
	.lease_acquire = sqlite_lease_acquire,
	.lease_renew = sqlite_lease_renew,
	.lease_release = sqlite_lease_release,
	.lease_read = sqlite_lease_read,
	.server_seen = sqlite_server_seen,
	.pool_name_read = sqlite_pool_name_read,
	.pool_name_set = sqlite_pool_name_set,
	.sql_run = sqlite_sql_run,
	.ev_run = sqlite_ev_run,
	.servers_load = sqlite_servers_load,
};
