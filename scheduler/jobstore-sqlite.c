/* SPDX-License-Identifier: MIT */
/* The job store's SQLite driver: the primitives the operations of
 * jobstore-ops.c run on (prepare, bind and run, transactions), its own
 * migrations and texts where SQLite's SQL differs, the write-ahead log's
 * handling. The only file that includes sqlite3.h. */
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

/* SQLite's own migrations by the version they lead to: 1..7, and 12;
 * the others are jobstore-sql.c's, shared. */
static const char *const migrations[JOBSTORE_SCHEMA_VERSION + 1] = {
	/* 1: jobs, their scripts kept apart so scans of jobs stay small. */
	[1] = "CREATE TABLE jobs ("
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
	[2] = "ALTER TABLE jobs ADD COLUMN m_wrap INTEGER;"
	"ALTER TABLE jobs ADD COLUMN m_fenced INTEGER;"
	"ALTER TABLE jobs ADD COLUMN m_exec INTEGER;"
	"ALTER TABLE jobs ADD COLUMN m_exit INTEGER;"
	"ALTER TABLE jobs ADD COLUMN m_released INTEGER;"
	"CREATE INDEX jobs_done ON jobs(t_done);",
	/* 3: what must survive a restart besides jobs: the IQS rotation, and
	 * the admin's qmgr settings of queues and nodes. */
	[3] = "CREATE TABLE iqs_rotation (queue TEXT NOT NULL, uid INTEGER NOT NULL,"
	" seq INTEGER NOT NULL, PRIMARY KEY (queue, uid));"
	"CREATE TABLE queue_admin (queue TEXT PRIMARY KEY, enabled INTEGER,"
	" started INTEGER, reason TEXT);"
	"CREATE TABLE node_admin (node TEXT PRIMARY KEY, drain INTEGER NOT NULL, reason TEXT);",
	/* 4: the submitter's umask, for the job's output files; NULL (rows
	 * from before) is launched with 022. */
	[4] = "ALTER TABLE jobs ADD COLUMN umask INTEGER;",
	/* 5: the PBS attributes qsub recorded (Account_Name, Mail_Points,
	 * Resource_List.place, ...) as a JSON object of strings; NULL: none. */
	[5] = "ALTER TABLE jobs ADD COLUMN attrs TEXT;",
	/* 6: jobs across nodes (docs/PARALLEL.md): the request's chunks (JSON
	 * array) and place ("scatter:excl", ...), NULL for a one-node job;
	 * and the allocation of a job across nodes, one row per node in job
	 * order (idx 0: the primary, also in jobs.node and jobs.cpus) with
	 * that node's share and stamps. A one-node job has no rows here. */
	[6] = "ALTER TABLE jobs ADD COLUMN chunks TEXT;"
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
	[7] = "ALTER TABLE jobs ADD COLUMN array_spec TEXT;"
	"ALTER TABLE jobs ADD COLUMN array_id INTEGER;"
	"ALTER TABLE jobs ADD COLUMN array_index INTEGER;"
	"ALTER TABLE jobs ADD COLUMN depend TEXT;"
	"CREATE INDEX jobs_array ON jobs(array_id) WHERE array_id IS NOT NULL;",
	/* 12: the event stream (docs/EVENTS.md); a store made before seq
	 * was the rowid is rebuilt at open (events_rowid). */
	[12] = JOBSTORE_SQL_EVENTS_CREATE_SQLITE,
};

/* The driver's own statements: a job's insert (its id SQLite's
 * AUTOINCREMENT), the transaction's. */
enum {
	SQ_INSERT = ST_MAX, SQ_INSERT_PAYLOAD, SQ_RESERVE, SQ_BEGIN, SQ_COMMIT, SQ_ROLLBACK, SQ_ALL,
};

static const char *const own_sql[SQ_ALL - ST_MAX] = {
	[SQ_INSERT - ST_MAX] = "INSERT INTO jobs (" JOBSTORE_SQL_INSERT_COLS ") VALUES ($1, $2, $3, $4, $5, $6,"
			       " $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)",
	[SQ_INSERT_PAYLOAD - ST_MAX] = "INSERT INTO job_payload (job_id, env, script) VALUES ($1, $2, $3)",
	/* The ids of an array's subjobs are reserved at submit:
	 * AUTOINCREMENT takes the next id above sqlite_sequence's. */
	[SQ_RESERVE - ST_MAX] = "UPDATE sqlite_sequence SET seq = seq + $1 WHERE name = 'jobs'",
	[SQ_BEGIN - ST_MAX] = "BEGIN IMMEDIATE",
	[SQ_COMMIT - ST_MAX] = "COMMIT",
	[SQ_ROLLBACK - ST_MAX] = "ROLLBACK",
};

/* Where SQLite's SQL differs from PostgreSQL's: its JSON functions, and
 * the events' seq, the rowid (jobstore-internal.h). */
static const char *const texts[ST_MAX] = {
	[ST_REQUEUE] =
		"UPDATE jobs SET state = 'queued', node = NULL, cpus = NULL, mems = NULL, t_dispatch = NULL, reason = $1,"
		" attrs = json_remove(json_set(coalesce(attrs, '{}'), '$.run_count',"
		" CAST(CAST(coalesce(json_extract(attrs, '$.run_count'), '0') AS INTEGER) + 1 AS TEXT)),"
		" '$.suspended_by') WHERE id = $2",
	[ST_ESTIMATE_SET] =
		"UPDATE jobs SET attrs = json_set(coalesce(attrs, '{}'), '$.\"estimated.start_time\"',"
		" CAST($1 AS TEXT)) WHERE id = $2",
	/* json_insert: the first one kept. */
	[ST_ESTIMATE_FIRST] =
		"UPDATE jobs SET attrs = json_insert(coalesce(attrs, '{}'), '$.\"estimated.first_start_time\"',"
		" CAST($1 AS TEXT)) WHERE id = $2",
	[ST_BEGIN_SET] =
		"UPDATE jobs SET attrs = CASE WHEN $1 > 0 THEN json_set(coalesce(attrs, '{}'), '$.Execution_Time',"
		" CAST($1 AS TEXT)) ELSE json_remove(coalesce(attrs, '{}'), '$.Execution_Time') END"
		" WHERE id = $2 AND state IN ('queued','held','running','exiting')",
	[ST_EV_JOB] = JOBSTORE_SQL_EV_JOBS_SQLITE,
	[ST_EV_JOB_RANGE] = JOBSTORE_SQL_EV_JOB_RANGE_SQLITE,
};

/* The store's clock in ms: the host's, read by SQLite ('now' is fixed for
 * one statement). julianday keeps the milliseconds unixepoch() drops
 * before SQLite 3.42 (Debian 12 has 3.40). */
#define SQLITE_NOW_MS "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"

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
	sqlite3_stmt *st[SQ_ALL];
	int wal_frames;         /* frames in the log after the last commit */
	int wal_next_checkpoint;
	bool lazy;              /* synchronous=NORMAL, for sqlite_begin_lazy's transaction */
};

static void sqlite_close(struct jobstore *base);
static int prepare_text(struct sqlite_store *js, int id, const char *sql);

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
	if (version > JOBSTORE_SCHEMA_VERSION)
		return error_set(err, -EPROTO, "job store schema version %d is newer than this qpoold (%d)",
				 version, JOBSTORE_SCHEMA_VERSION);
	/* One transaction per version. */
	for (int v = version + 1; v <= JOBSTORE_SCHEMA_VERSION; v++) {
		char sql[64], *text = NULL;
		int r = jobstore_migration(&jobstore_driver_sqlite, v, &text);

		if (r < 0)
			return error_set(err, r, "job store: no migration to schema version %d", v);
		rc = sqlite3_exec(js->db, "BEGIN IMMEDIATE", NULL, NULL, &msg);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(js->db, text, NULL, NULL, &msg);
		free(text);
		snprintf(sql, sizeof(sql), "INSERT INTO schema_version VALUES (%d)", v);
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

static int sqlite_open(const char *path, struct jobstore **ret, struct error *err)
{
	bool on_disk = strcmp(path, ":memory:") != 0 && path[0];
	struct sqlite_store *js;
	char *msg = NULL;
	int persist = 1;
	int rc, r;

	js = calloc(1, sizeof(*js));
	if (!js)
		return error_set(err, -ENOMEM, "out of memory");
	js->base.drv = &jobstore_driver_sqlite;
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
	/* Its own statements; the shared ones are the door's to prepare
	 * (jobstore_ops_prepare). */
	for (int i = ST_MAX; i < SQ_ALL; i++) {
		r = prepare_text(js, i, own_sql[i - ST_MAX]);
		if (r < 0) {
			r = error_set(err, r, "job store: %s", sqlite3_errmsg(js->db));
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
	for (int i = 0; i < SQ_ALL; i++)
		sqlite3_finalize(js->st[i]);
	sqlite3_close(js->db);
	free(js->path);
	free(js);
}

/* Runs a statement that returns no rows, then resets it. */
static int stmt_exec(struct sqlite_store *js, int id)
{
	sqlite3_stmt *st = js->st[id];
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : sql_errno(rc);
}

/* The commits' sync: FULL (the log synced at each commit) for every
 * write but a lazy one's. SQLite takes the level only outside a
 * transaction. */
static int sync_lazy(struct sqlite_store *js, bool lazy)
{
	int rc;

	if (js->lazy == lazy)
		return 0;
	rc = sqlite3_exec(js->db, lazy ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL", NULL, NULL,
			  NULL);
	if (rc != SQLITE_OK)
		return sql_errno(rc);
	js->lazy = lazy;
	return 0;
}

static int sqlite_begin(struct jobstore *base)
{
	struct sqlite_store *js = to_sqlite(base);
	int r = sync_lazy(js, false);

	return r < 0 ? r : stmt_exec(js, SQ_BEGIN);
}

/* With synchronous=NORMAL a commit appends to the log without a sync;
 * the log is one file written in order, so the next FULL commit's sync
 * makes this one durable too. Until then a power loss takes it back,
 * whole: the store stays consistent. */
static int sqlite_begin_lazy(struct jobstore *base)
{
	struct sqlite_store *js = to_sqlite(base);
	int r = sync_lazy(js, true);

	return r < 0 ? r : stmt_exec(js, SQ_BEGIN);
}

static int sqlite_commit(struct jobstore *base)
{
	struct sqlite_store *js = to_sqlite(base);
	int r = stmt_exec(js, SQ_COMMIT);

	/* Back to FULL at once, for writes made outside a transaction; if
	 * that fails, the next begin sets it again before it writes. */
	(void)sync_lazy(js, false);
	return r;
}

static void sqlite_rollback(struct jobstore *base)
{
	struct sqlite_store *js = to_sqlite(base);

	if (!sqlite3_get_autocommit(js->db))
		(void)stmt_exec(js, SQ_ROLLBACK);
	(void)sync_lazy(js, false);
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

/* p's parameters onto st, by index ($N is ?N). */
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

/* A shared text as SQLite runs it: each $N as ?N (SQLite numbers a $N
 * name by its first appearance, ?N is N: a text whose $3 comes before its
 * $2, or that skips one, binds as written); and an integer CAST of a
 * parameter, there for PostgreSQL's types, as the parameter alone (it is
 * bound as an integer: the CAST would be a no-op costing the statement an
 * operation per use; only in the statements written here, whose
 * binders bind integers there). Not inside quotes ('$.run_count'). */
static const char *const int_casts[] = { " AS BIGINT)", " AS INTEGER)", " AS BOOLEAN)" };

static char *dollar_rewrite(const char *sql, bool casts)
{
	char *out = malloc(strlen(sql) + 1), *o = out, quote = 0;

	if (!out)
		return NULL;
	for (const char *p = sql; *p; ) {
		if (quote) {
			if (*p == quote)
				quote = 0;
		} else if (*p == '\'' || *p == '"') {
			quote = *p;
		} else if (casts && strncmp(p, "CAST($", 6) == 0 && p[6] >= '0' && p[6] <= '9') {
			const char *d = p + 6;
			size_t n = strspn(d, "0123456789"), i;

			for (i = 0; i < sizeof(int_casts) / sizeof(int_casts[0]); i++)
				if (strncmp(d + n, int_casts[i], strlen(int_casts[i])) == 0)
					break;
			if (i < sizeof(int_casts) / sizeof(int_casts[0])) {
				*o++ = '?';
				memcpy(o, d, n);
				o += n;
				p = d + n + strlen(int_casts[i]);
				continue;
			}
		} else if (*p == '$' && p[1] >= '0' && p[1] <= '9') {
			*o++ = '?';
			p++;
			continue;
		}
		*o++ = *p++;
	}
	*o = '\0';
	return out;
}

static int prepare_text(struct sqlite_store *js, int id, const char *sql)
{
	char *text = dollar_rewrite(sql, true);
	int rc;

	if (!text)
		return -ENOMEM;
	rc = sqlite3_prepare_v3(js->db, text, -1, SQLITE_PREPARE_PERSISTENT, &js->st[id], NULL);
	free(text);
	return sql_errno(rc);
}

static int sqlite_prepare(struct jobstore *base, int id, const char *sql, bool one)
{
	return prepare_text(to_sqlite(base), id, sql);
}

static const char *sqlite_error_text(struct jobstore *base)
{
	return sqlite3_errmsg(to_sqlite(base)->db);
}

static int sqlite_run(struct jobstore *base, int id, const struct jobstore_ev_params *p, enum jobstore_run how,
		      int (*cb)(const struct jobstore_row *r, void *ud), void *ud)
{
	struct sqlite_store *js = to_sqlite(base);
	sqlite3_stmt *st = js->st[id];
	int r;

	params_bind(st, p);
	r = rows_step(st, how == RUN_ROWS ? cb : NULL, ud);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (r < 0)
		return r;
	if (how == RUN_ONE)
		return sqlite3_changes(js->db) == 1 ? 0 : -ENOENT;
	if (how == RUN_COUNT)
		return sqlite3_changes(js->db);
	return 0;
}

static int sqlite_run_text(struct jobstore *base, const char *sql, const struct jobstore_ev_params *p,
			   int (*cb)(const struct jobstore_row *r, void *ud), void *ud)
{
	char *text = dollar_rewrite(sql, false);
	sqlite3_stmt *st = NULL;
	int rc, r;

	if (!text)
		return -ENOMEM;
	rc = sqlite3_prepare_v2(to_sqlite(base)->db, text, -1, &st, NULL);
	free(text);
	if (rc != SQLITE_OK)
		return sql_errno(rc);
	params_bind(st, p);
	r = rows_step(st, cb, ud);
	sqlite3_finalize(st);
	return r;
}

static int sqlite_job_insert(struct jobstore *base, const struct jobstore_ev_params *cols, int64_t reserve,
			     const char *env, const char *script, int64_t *ret_id)
{
	struct sqlite_store *js = to_sqlite(base);
	struct jobstore_ev_params p = { .n = 1 };
	int64_t id;
	int r;

	r = sqlite_run(base, SQ_INSERT, cols, RUN_WRITE, NULL, NULL);
	if (r < 0)
		return r;
	id = sqlite3_last_insert_rowid(js->db);
	if (reserve > 0) {
		p.v[0].i = reserve;
		r = sqlite_run(base, SQ_RESERVE, &p, RUN_WRITE, NULL, NULL);
		if (r < 0)
			return r;
	}
	p = (struct jobstore_ev_params){ .n = 3 };
	p.v[0].i = id;
	p.v[1].is_text = p.v[2].is_text = true;
	p.v[1].text = env;
	p.v[2].text = script;
	r = sqlite_run(base, SQ_INSERT_PAYLOAD, &p, RUN_WRITE, NULL, NULL);
	if (r < 0)
		return r;
	*ret_id = id;
	return 0;
}

static void sqlite_describe(struct jobstore *base, char *buf, size_t size)
{
	snprintf(buf, size, "sqlite %s", to_sqlite(base)->path);
}

const struct jobstore_driver jobstore_driver_sqlite = {
	.name = "sqlite",
	.now_ms = SQLITE_NOW_MS,
	.attr_open = "json_extract(attrs, '$.\"",
	.attr_close = "\"')",
	.list_open = '[',
	.list_close = ']',
	.add_column = "ADD COLUMN",
	.last_id = "coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'jobs'), 0)",
	.texts = texts,
	.first_version = 1,
	.migrations = migrations,
	.open = sqlite_open,
	.close = sqlite_close,
	.prepare = sqlite_prepare,
	.error_text = sqlite_error_text,
	.run = sqlite_run,
	.run_text = sqlite_run_text,
	.begin = sqlite_begin,
	.begin_lazy = sqlite_begin_lazy,
	.commit = sqlite_commit,
	.rollback = sqlite_rollback,
	.checkpoint = sqlite_checkpoint,
	.job_insert = sqlite_job_insert,
	.describe = sqlite_describe,
};
