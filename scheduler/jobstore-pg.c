/* SPDX-License-Identifier: MIT */
/* The job store's PostgreSQL driver: the primitives the operations of
 * jobstore-ops.c run on over one connection (prepare, bind and run,
 * pipelined in a transaction), its own migrations and texts where
 * PostgreSQL's SQL differs, its ids (job_seq) and batched inserts, the
 * bulk copy of qpoold --migrate. The only file that includes libpq-fe.h. */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobstore-internal.h"

/* libpq, loaded the first time a store is opened on PostgreSQL rather
 * than linked: it brings 19 libraries (OpenSSL, Kerberos, LDAP, GnuTLS,
 * ...) that a qpoold on SQLite, the default, never calls, and they were
 * half its idle RSS (11.5 MB, 7.8 of it their pages) and a relocation
 * each at every start. Each libpq function this file calls is in
 * PQ_FUNCS, once; the macros after it keep the calls reading as libpq's.
 * The Makefile links no libpq, so a call missing from the list fails
 * to link rather than linking it back. */
#define PQ_FUNCS(X) X(PQclear) X(PQcmdStatus) X(PQcmdTuples) X(PQconnectdb) \
	X(PQdb) X(PQenterPipelineMode) X(PQerrorMessage) X(PQexec) X(PQexecParams) \
	X(PQexecPrepared) X(PQexitPipelineMode) X(PQfinish) X(PQgetResult) \
	X(PQgetisnull) X(PQgetvalue) X(PQhost) X(PQntuples) X(PQpipelineSync) \
	X(PQport) X(PQprepare) X(PQputCopyData) X(PQputCopyEnd) X(PQreset) \
	X(PQresultErrorField) X(PQresultStatus) X(PQsendQueryParams) \
	X(PQsendQueryPrepared) X(PQsetNoticeProcessor) X(PQstatus)

static struct {
#define PQ_POINTER(f) __typeof__(f) *f;
	PQ_FUNCS(PQ_POINTER)
#undef PQ_POINTER
} pq;

/* 0 once every function is found; else the one-line reason. */
static int pq_load(struct error *err)
{
	static void *lib;
	void *h, *sym;

	if (lib)
		return 0;
	h = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return error_set(err, -ENOENT, "job store (postgresql): cannot load libpq (Debian: libpq5): %s",
				 dlerror());
#define PQ_RESOLVE(f)                              \
	{                                          \
		if (!(sym = dlsym(h, #f)))         \
			goto missing;              \
		memcpy(&pq.f, &sym, sizeof(sym));  \
	}
	PQ_FUNCS(PQ_RESOLVE)
#undef PQ_RESOLVE
	lib = h;
	return 0;
missing:
	error_set(err, -ENOENT, "job store (postgresql): libpq.so.5 is too old: %s", dlerror());
	dlclose(h);
	return -ENOENT;
}

/* From here on libpq's calls go through pq. */
#define PQclear pq.PQclear
#define PQcmdStatus pq.PQcmdStatus
#define PQcmdTuples pq.PQcmdTuples
#define PQconnectdb pq.PQconnectdb
#define PQdb pq.PQdb
#define PQenterPipelineMode pq.PQenterPipelineMode
#define PQerrorMessage pq.PQerrorMessage
#define PQexec pq.PQexec
#define PQexecParams pq.PQexecParams
#define PQexecPrepared pq.PQexecPrepared
#define PQexitPipelineMode pq.PQexitPipelineMode
#define PQfinish pq.PQfinish
#define PQgetResult pq.PQgetResult
#define PQgetisnull pq.PQgetisnull
#define PQgetvalue pq.PQgetvalue
#define PQhost pq.PQhost
#define PQntuples pq.PQntuples
#define PQpipelineSync pq.PQpipelineSync
#define PQport pq.PQport
#define PQprepare pq.PQprepare
#define PQputCopyData pq.PQputCopyData
#define PQputCopyEnd pq.PQputCopyEnd
#define PQreset pq.PQreset
#define PQresultErrorField pq.PQresultErrorField
#define PQresultStatus pq.PQresultStatus
#define PQsendQueryParams pq.PQsendQueryParams
#define PQsendQueryPrepared pq.PQsendQueryPrepared
#define PQsetNoticeProcessor pq.PQsetNoticeProcessor
#define PQstatus pq.PQstatus

/* PostgreSQL's own migrations by the version they lead to: a store here
 * starts at version 7 (the SQLite store's 7 migrations in one), and the
 * events table (seq a BIGINT); the others are jobstore-sql.c's, shared. */
static const char *const migrations[JOBSTORE_SCHEMA_VERSION + 1] = {
	[7] =
	  /* job_seq: the last id given. One row, updated in the submit
	   * transaction, so ids (an array reserves its subjobs' block) are
	   * as transactional as the rows: a sequence is not (nextval is never
	   * rolled back). */
	  "CREATE TABLE job_seq (last BIGINT NOT NULL);"
	  "INSERT INTO job_seq VALUES (0);"
	  "CREATE TABLE jobs ("
	  " id BIGINT PRIMARY KEY,"
	  " name TEXT NOT NULL, queue TEXT NOT NULL, owner TEXT NOT NULL,"
	  " uid BIGINT NOT NULL, gid BIGINT NOT NULL, state TEXT NOT NULL,"
	  " ncpus BIGINT NOT NULL, mem BIGINT NOT NULL, walltime BIGINT NOT NULL,"
	  " workdir TEXT NOT NULL, stdout TEXT NOT NULL, stderr TEXT NOT NULL,"
	  " join_oe INTEGER NOT NULL, rerunnable INTEGER NOT NULL,"
	  " node TEXT, cpus TEXT, exit_status INTEGER, exit_signal INTEGER,"
	  " reason TEXT, cpu_ns BIGINT, mem_peak BIGINT, oom INTEGER,"
	  " t_submit BIGINT, t_dispatch BIGINT, t_launch BIGINT, t_wrap BIGINT,"
	  " t_fenced BIGINT, t_exec BIGINT, t_exit BIGINT, t_released BIGINT,"
	  " t_done BIGINT, m_wrap BIGINT, m_fenced BIGINT, m_exec BIGINT, m_exit BIGINT,"
	  " m_released BIGINT, umask INTEGER, attrs TEXT, chunks TEXT, place TEXT,"
	  " array_spec TEXT, array_id BIGINT, array_index BIGINT, depend TEXT);"
	  "CREATE INDEX jobs_state ON jobs(state);"
	  /* Partial: a job is inserted without t_done, so a submit adds no
	   * entry here (queries ask t_done >= X, which implies NOT NULL). */
	  "CREATE INDEX jobs_done ON jobs(t_done) WHERE t_done IS NOT NULL;"
	  "CREATE INDEX jobs_array ON jobs(array_id) WHERE array_id IS NOT NULL;"
	  /* No REFERENCES jobs(id): a payload is only ever inserted with
	   * its job, in the same statement batch, and the foreign key's
	   * check (a trigger and a look-up per row) was a quarter of the
	   * server's CPU per submitted job (bench/store, 20,000 submits:
	   * 0.32 s with it, 0.24 s without). */
	  "CREATE TABLE job_payload ("
	  " job_id BIGINT PRIMARY KEY,"
	  " env TEXT NOT NULL, script TEXT NOT NULL);"
	  "CREATE TABLE iqs_rotation (queue TEXT NOT NULL, uid BIGINT NOT NULL,"
	  " seq BIGINT NOT NULL, PRIMARY KEY (queue, uid));"
	  "CREATE TABLE queue_admin (queue TEXT PRIMARY KEY, enabled INTEGER,"
	  " started INTEGER, reason TEXT);"
	  "CREATE TABLE node_admin (node TEXT PRIMARY KEY, drain INTEGER NOT NULL, reason TEXT);"
	  "CREATE TABLE job_alloc ("
	  " job_id BIGINT NOT NULL REFERENCES jobs(id), idx INTEGER NOT NULL,"
	  " node TEXT NOT NULL, ncpus BIGINT NOT NULL, cpus TEXT, mems TEXT, mem BIGINT,"
	  " mpiprocs BIGINT, ompthreads BIGINT,"
	  " t_launch BIGINT, t_wrap BIGINT, t_fenced BIGINT, t_exec BIGINT, t_exit BIGINT,"
	  " t_released BIGINT, t_done BIGINT, cpu_ns BIGINT, mem_peak BIGINT, result TEXT,"
	  " PRIMARY KEY (job_id, idx));",
	/* 12: the event stream (docs/EVENTS.md). */
	[12] = JOBSTORE_SQL_EVENTS_CREATE,
};

/* Serializes the migrations of qpoold instances that open one store at
 * once (any constant no other user of the database takes: "qpool"). */
#define MIGRATE_LOCK "7171706f6f6c"

static const char SQL_VERSION_TABLE[] =
	"CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)";
static const char SQL_VERSION[] = "SELECT coalesce(max(version), 0) FROM schema_version";
/* Whether schema_version exists, without writing: a newer store is
 * refused before anything is written. */
static const char SQL_VERSION_EXISTS[] = "SELECT to_regclass('schema_version') IS NOT NULL";

/* A job inserted outside a transaction (autocommit, tests): the id (and
 * an array's block after it) from job_seq, the row and its payload in
 * one statement. */
static const char SQL_INSERT[] =
	"WITH c AS (UPDATE job_seq SET last = last + 1 + $23::bigint RETURNING last - $23::bigint AS id),"
	" j AS (INSERT INTO jobs (id, name, queue, owner, uid, gid, state, ncpus, mem, walltime,"
	" workdir, stdout, stderr, join_oe, rerunnable, t_submit, umask, attrs, chunks, place, array_spec,"
	" depend, reason) SELECT c.id, $1::text, $2::text, $3::text, $4::bigint, $5::bigint, $6::text,"
	" $7::bigint, $8::bigint, $9::bigint, $10::text, $11::text, $12::text, $13::integer, $14::integer,"
	" $15::bigint, $16::integer, $17::text, $18::text, $19::text, $20::text, $21::text, $22::text FROM c"
	" RETURNING id)"
	" INSERT INTO job_payload (job_id, env, script) SELECT id, $24::text, $25::text FROM j RETURNING job_id";
/* Inside a transaction the submitted jobs are kept here and inserted
 * together, one statement per table over arrays (unnest), at the next
 * statement or at commit. Their ids are counted here from job_seq, read
 * FOR UPDATE once (and again after any failed or rolled back
 * transaction); each commit moves it on only from the value this writer
 * knows (SQL_SEQ_SET), else the transaction fails: ids stay the single
 * writer's and transactional, and a group of submits is one round trip. */
#define BATCH_COLS 25   /* the 23 columns of SQL_BATCH_JOBS, env, script */
static const char SQL_BATCH_JOBS[] =
	"INSERT INTO jobs (id, name, queue, owner, uid, gid, state, ncpus, mem, walltime,"
	" workdir, stdout, stderr, join_oe, rerunnable, t_submit, umask, attrs, chunks, place, array_spec,"
	" depend, reason) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[],"
	" $6::bigint[], $7::text[], $8::bigint[], $9::bigint[], $10::bigint[], $11::text[], $12::text[],"
	" $13::text[], $14::integer[], $15::integer[], $16::bigint[], $17::integer[], $18::text[], $19::text[],"
	" $20::text[], $21::text[], $22::text[], $23::text[])";
static const char SQL_BATCH_PAYLOAD[] =
	"INSERT INTO job_payload (job_id, env, script) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])";
static const char SQL_SEQ_LOCK[] = "SELECT last FROM job_seq FOR UPDATE";
/* 1 / 0, a division by zero, aborts the transaction (and so its COMMIT,
 * sent in the same pipeline) when job_seq is not at $1 any more. */
static const char SQL_SEQ_SET[] =
	"WITH u AS (UPDATE job_seq SET last = $2::bigint WHERE last = $1::bigint RETURNING 1)"
	" SELECT 1 / (SELECT count(*)::integer FROM u)";
/* The store's clock in ms (jobstore-internal.h, schema 9): clock_timestamp,
 * not now(), which stays at the transaction's start. */
#define PG_NOW_MS "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"

/* The driver's own statements: a job's insert (its id from job_seq),
 * alone or batched. */
enum {
	PQ_INSERT = ST_MAX, PQ_BATCH_JOBS, PQ_BATCH_PAYLOAD, PQ_SEQ_LOCK, PQ_SEQ_SET, PQ_ALL,
};

static const char *const own_sql[PQ_ALL - ST_MAX] = {
	[PQ_INSERT - ST_MAX] = SQL_INSERT,
	[PQ_BATCH_JOBS - ST_MAX] = SQL_BATCH_JOBS,
	[PQ_BATCH_PAYLOAD - ST_MAX] = SQL_BATCH_PAYLOAD,
	[PQ_SEQ_LOCK - ST_MAX] = SQL_SEQ_LOCK,
	[PQ_SEQ_SET - ST_MAX] = SQL_SEQ_SET,
};

/* Where PostgreSQL's SQL differs from SQLite's: its JSON functions (attrs
 * as jsonb), and the events' numbering (an array parameter, no rowid). */
static const char *const texts[ST_MAX] = {
	[ST_REQUEUE] =
		"UPDATE jobs SET state = 'queued', node = NULL, cpus = NULL, mems = NULL, t_dispatch = NULL,"
		" reason = $1::text,"
		" attrs = (jsonb_set(coalesce(attrs, '{}')::jsonb, '{run_count}',"
		" to_jsonb((coalesce(attrs::json->>'run_count', '0')::bigint + 1)::text)) - 'suspended_by')::text"
		" WHERE id = $2::bigint",
	[ST_ESTIMATE_SET] =
		"UPDATE jobs SET attrs = (coalesce(attrs, '{}')::jsonb ||"
		" jsonb_build_object('estimated.start_time', $1::bigint::text))::text WHERE id = $2::bigint",
	/* The first one kept: the row's own value wins. */
	[ST_ESTIMATE_FIRST] =
		"UPDATE jobs SET attrs = (jsonb_build_object('estimated.first_start_time', $1::bigint::text) ||"
		" coalesce(attrs, '{}')::jsonb)::text WHERE id = $2::bigint",
	[ST_BEGIN_SET] =
		"UPDATE jobs SET attrs = (CASE WHEN $1::bigint > 0 THEN jsonb_set(coalesce(attrs, '{}')::jsonb,"
		" '{Execution_Time}', to_jsonb($1::bigint::text)) ELSE coalesce(attrs, '{}')::jsonb - 'Execution_Time'"
		" END)::text WHERE id = $2::bigint AND state IN ('queued','held','running','exiting')",
	[ST_EV_JOB] = JOBSTORE_SQL_EV_JOBS_PG,
	[ST_EV_JOB_RANGE] = JOBSTORE_SQL_EV_JOB_RANGE_PG,
};

struct pg_store {
	struct jobstore base;   /* first: the door hands out &base */
	PGconn *conn;
	bool in_tx;
	bool pipeline;          /* sent statements whose answers are not read yet */
	int64_t next_id;        /* the next id; 0: job_seq to be read */
	int64_t seq_begin;      /* job_seq's value at this transaction's begin */
	bool ids_taken;         /* next_id moved: job_seq is written at commit */
	/* Jobs inserted in this transaction and not sent yet: each column
	 * an array literal being written ("{"a","b"" so far). */
	unsigned batch_n;
	FILE *batch_f[BATCH_COLS];
	char *batch_buf[BATCH_COLS];
	size_t batch_len[BATCH_COLS];
	/* Every statement as prepared, to prepare again on a new connection;
	 * one: also in its checked form (pg_prepare_all). */
	char *sql[PQ_ALL];
	bool one[PQ_ALL];
	char msg[256];          /* error_text's */
};

/* A statement's parameters as text (libpq's text format), in $n order. */
#define MAX_PARAMS 26
struct params {
	int n;
	const char *v[MAX_PARAMS];
	char num[MAX_PARAMS][24];
};

static void p_text(struct params *p, const char *s)
{
	p->v[p->n++] = s;
}

static void p_int(struct params *p, int64_t x)
{
	snprintf(p->num[p->n], sizeof(p->num[0]), "%" PRId64, x);
	p->v[p->n] = p->num[p->n];
	p->n++;
}



static int params_from(struct params *p, const struct jobstore_ev_params *ep);
static void pg_close(struct jobstore *base);

static struct pg_store *to_pg(struct jobstore *base)
{
	return (struct pg_store *)base;
}

static bool row_null_pg(const struct jobstore_row *r, int col)
{
	return PQgetisnull(r->res, r->row, col);
}

static int64_t row_i64_pg(const struct jobstore_row *r, int col)
{
	return strtoll(PQgetvalue(r->res, r->row, col), NULL, 10);
}

static const char *row_text_pg(const struct jobstore_row *r, int col)
{
	return PQgetisnull(r->res, r->row, col) ? NULL : PQgetvalue(r->res, r->row, col);
}

static const struct jobstore_row_ops pg_row_ops = {
	.null = row_null_pg,
	.i64 = row_i64_pg,
	.text = row_text_pg,
};

/* The one adapter from PostgreSQL's SQLSTATE (and a lost connection) to
 * negative errno. */
static int pg_errno(const struct pg_store *js, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (PQstatus(js->conn) != CONNECTION_OK)
		return -ECONNRESET;
	if (!state)
		return -EIO;
	if (strncmp(state, "23", 2) == 0)          /* integrity constraint violation */
		return -EEXIST;
	if (strcmp(state, "22012") == 0)           /* a checked write changed no row */
		return -ENOENT;
	if (strcmp(state, "53100") == 0)           /* disk_full */
		return -ENOSPC;
	if (strcmp(state, "53200") == 0)           /* out_of_memory */
		return -ENOMEM;
	if (strncmp(state, "40", 2) == 0 || strcmp(state, "55P03") == 0)   /* serialization, lock */
		return -EBUSY;
	if (strcmp(state, "42501") == 0 || strcmp(state, "25006") == 0)    /* privilege, read-only */
		return -EACCES;
	if (strncmp(state, "08", 2) == 0)
		return -ECONNRESET;
	return -EIO;
}

/* libpq's message as one line: its first (a multi-host string has one
 * line per host tried, then hints), tabs as spaces. */
static const char *one_line(const char *msg, char *buf, size_t size)
{
	size_t n = 0;

	for (const char *p = msg ? msg : ""; *p && *p != '\n' && n + 1 < size; p++)
		buf[n++] = *p == '\t' ? ' ' : *p;
	buf[n] = '\0';
	return n ? buf : "unknown error";
}

/* The server, as libpq names it, for messages: "host:port/dbname". */
static const char *where(const struct pg_store *js, char *buf, size_t size)
{
	const char *host = PQhost(js->conn), *port = PQport(js->conn), *db = PQdb(js->conn);

	snprintf(buf, size, "%s:%s/%s", host && *host ? host : "?", port && *port ? port : "?",
		 db && *db ? db : "?");
	return buf;
}

static int prepare_one(struct pg_store *js, const char *name, const char *sql)
{
	PGresult *res = PQprepare(js->conn, name, sql, 0, NULL);
	int r = PQresultStatus(res) == PGRES_COMMAND_OK ? 0 : pg_errno(js, res);

	PQclear(res);
	return r;
}

/* Statement i as "qpN". The writes that must change exactly one row
 * (RUN_ONE) also as "qcN", their checked form: in a transaction they are
 * pipelined, and a row count of 0 divides by zero and aborts the
 * transaction, so the -ENOENT a caller would have had at once comes at
 * commit, which fails whole. */
static int prepare_id(struct pg_store *js, int i)
{
	char name[16], *sql;
	int r;

	snprintf(name, sizeof(name), "qp%d", i);
	r = prepare_one(js, name, js->sql[i]);
	if (r < 0 || !js->one[i])
		return r;
	if (asprintf(&sql, "WITH u AS (%s RETURNING 1) SELECT 1 / (SELECT count(*)::integer FROM u)",
		     js->sql[i]) < 0)
		return -ENOMEM;
	snprintf(name, sizeof(name), "qc%d", i);
	r = prepare_one(js, name, sql);
	free(sql);
	return r;
}

/* Every statement prepared so far, again (a new connection). */
static int pg_prepare_all(struct pg_store *js)
{
	int r = 0;

	for (int i = 0; i < PQ_ALL && r == 0; i++)
		if (js->sql[i])
			r = prepare_id(js, i);
	return r;
}

static int pg_prepare(struct jobstore *base, int id, const char *sql, bool one)
{
	struct pg_store *js = to_pg(base);

	free(js->sql[id]);
	js->sql[id] = strdup(sql);
	if (!js->sql[id])
		return -ENOMEM;
	js->one[id] = one;
	return prepare_id(js, id);
}

static const char *pg_error_text(struct jobstore *base)
{
	struct pg_store *js = to_pg(base);

	return one_line(PQerrorMessage(js->conn), js->msg, sizeof(js->msg));
}

/* A lost connection between transactions is made again (libpq tries each
 * host of a multi-host store_dsn in turn, so qpoold follows a promoted
 * standby) and the statements prepared again. Inside a transaction it is
 * not: the caller's rollback gives every write of it up, and the next
 * transaction reconnects. */
static int lease_limits(struct pg_store *js, int64_t lease_ms);

static int pg_reconnect(struct pg_store *js)
{

	if (js->in_tx)
		return -ECONNRESET;
	PQreset(js->conn);
	if (PQstatus(js->conn) != CONNECTION_OK)
		return -ECONNRESET;
	if (js->base.lease_ms > 0 && lease_limits(js, js->base.lease_ms) < 0)
		return -ECONNRESET;
	return pg_prepare_all(js);
}

static void batch_reset(struct pg_store *js)
{
	for (int c = 0; c < BATCH_COLS; c++) {
		if (js->batch_f[c])
			fclose(js->batch_f[c]);
		free(js->batch_buf[c]);
		js->batch_f[c] = NULL;
		js->batch_buf[c] = NULL;
	}
	js->batch_n = 0;
}

/* Adds a row (p: BATCH_COLS values) to the batch's array literals. */
static int batch_add(struct pg_store *js, const struct params *p)
{
	for (int c = 0; c < BATCH_COLS; c++) {
		FILE *f = js->batch_f[c];

		if (!f) {
			f = js->batch_f[c] = open_memstream(&js->batch_buf[c], &js->batch_len[c]);
			if (!f)
				return -ENOMEM;
			fputc('{', f);
		} else {
			fputc(',', f);
		}
		if (!p->v[c]) {
			fputs("NULL", f);
			continue;
		}
		fputc('"', f);
		for (const char *s = p->v[c]; *s; s++) {
			if (*s == '"' || *s == '\\')
				fputc('\\', f);
			fputc(*s, f);
		}
		fputc('"', f);
	}
	js->batch_n++;
	return 0;
}

static int pg_send(struct pg_store *js, int id, bool checked, const char *sql, const struct params *p);

/* Sends the batch: one insert into jobs, one into job_payload. */
static int batch_flush(struct pg_store *js)
{
	struct params jobs = { 0 }, payload = { 0 };
	int r = 0;

	if (js->batch_n == 0)
		return 0;
	for (int c = 0; c < BATCH_COLS; c++) {
		fputc('}', js->batch_f[c]);
		if (fclose(js->batch_f[c]) != 0)
			r = -ENOMEM;
		js->batch_f[c] = NULL;
	}
	if (r == 0) {
		for (int c = 0; c < BATCH_COLS - 2; c++)
			p_text(&jobs, js->batch_buf[c]);
		p_text(&payload, js->batch_buf[0]);
		p_text(&payload, js->batch_buf[BATCH_COLS - 2]);
		p_text(&payload, js->batch_buf[BATCH_COLS - 1]);
		r = pg_send(js, PQ_BATCH_JOBS, false, NULL, &jobs);
		if (r == 0)
			r = pg_send(js, PQ_BATCH_PAYLOAD, false, NULL, &payload);
	}
	batch_reset(js);
	return r;
}

/* Pipelining. A transaction's BEGIN, its submitted jobs' inserts and its
 * COMMIT go out without waiting for each answer: the answers are read
 * once, here, before any statement whose answer is needed and at commit.
 * A group of submits then costs two round trips (BEGIN with job_seq's
 * read, then the inserts with COMMIT), not one per job: bench/store
 * measured 3,900 submits/s one round trip each, against SQLite's 9,300
 * on the same machine. An error anywhere aborts the transaction and
 * surfaces here: the commit fails and every job of the group with it. */
static int pg_pipeline_enter(struct pg_store *js)
{
	if (js->pipeline)
		return 0;
	if (PQenterPipelineMode(js->conn) != 1)
		return pg_errno(js, NULL);
	js->pipeline = true;
	return 0;
}

/* Reads every pending answer; the first error is returned, and the last
 * rows answered in ret_rows when given (the caller PQclears them). */
static int pg_drain(struct pg_store *js, PGresult **ret_rows)
{
	int r = batch_flush(js);

	if (!js->pipeline)
		return r;
	if (PQpipelineSync(js->conn) != 1) {
		r = pg_errno(js, NULL);
		goto done;
	}
	for (;;) {
		PGresult *res = PQgetResult(js->conn);
		ExecStatusType st;

		if (!res) {
			if (PQstatus(js->conn) != CONNECTION_OK) {
				r = -ECONNRESET;
				break;
			}
			continue;   /* the end of one statement's answers */
		}
		st = PQresultStatus(res);
		if (st == PGRES_PIPELINE_SYNC) {
			PQclear(res);
			break;
		}
		if (r == 0 && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
			r = st == PGRES_PIPELINE_ABORTED ? -EIO : pg_errno(js, res);
		/* COMMIT of a transaction that failed earlier answers ROLLBACK. */
		else if (r == 0 && strcmp(PQcmdStatus(res), "ROLLBACK") == 0)
			r = -EIO;
		if (st == PGRES_TUPLES_OK && ret_rows) {
			PQclear(*ret_rows);
			*ret_rows = res;
		} else {
			PQclear(res);
		}
	}
done:
	if (PQstatus(js->conn) == CONNECTION_OK)
		(void)PQexitPipelineMode(js->conn);
	js->pipeline = false;
	return r;
}

/* Sends prepared statement id (or, with sql, that text) into the pipeline;
 * checked: its checked form (prepare_id). */
static int pg_send(struct pg_store *js, int id, bool checked, const char *sql, const struct params *p)
{
	char name[16];
	int r = 0;

	/* Statements run in the order sent: the jobs kept for the batch
	 * go first, so a write after them finds them. */
	if (id != PQ_BATCH_JOBS && id != PQ_BATCH_PAYLOAD)
		r = batch_flush(js);
	if (r == 0)
		r = pg_pipeline_enter(js);
	if (r < 0)
		return r;
	snprintf(name, sizeof(name), checked ? "qc%d" : "qp%d", id);
	if (sql ? PQsendQueryParams(js->conn, sql, 0, NULL, NULL, NULL, NULL, 0) != 1 :
	    PQsendQueryPrepared(js->conn, name, p->n, p->v, NULL, NULL, 0) != 1)
		return pg_errno(js, NULL);
	return 0;
}

/* Runs prepared statement id with p; returns its result (the caller
 * PQclears it) or NULL with *ret_r the error. */
static PGresult *pg_run(struct pg_store *js, int id, const struct params *p, int *ret_r)
{
	char name[16];
	PGresult *res;

	*ret_r = pg_drain(js, NULL);
	if (*ret_r < 0)
		return NULL;
	snprintf(name, sizeof(name), "qp%d", (int)id);
	for (int attempt = 0; attempt < 2; attempt++) {
		ExecStatusType st;

		res = PQexecPrepared(js->conn, name, p->n, p->v, NULL, NULL, 0);
		st = PQresultStatus(res);
		if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
			*ret_r = 0;
			return res;
		}
		*ret_r = pg_errno(js, res);
		PQclear(res);
		if (*ret_r != -ECONNRESET || attempt > 0 || pg_reconnect(js) < 0)
			break;
	}
	return NULL;
}

/* A statement that returns no rows, or whose rows are not read. */
static int pg_exec(struct pg_store *js, int id, const struct params *p)
{
	int r;
	PGresult *res;

	/* In a transaction: pipelined, its answer read at the next read or
	 * at commit (a dispatch pass is then one round trip, not three per
	 * job). */
	if (js->in_tx)
		return pg_send(js, id, false, NULL, p);
	res = pg_run(js, id, p, &r);

	PQclear(res);
	return r;
}

/* A write that must change exactly one row; -ENOENT when none. */
static int pg_exec_one(struct pg_store *js, int id, const struct params *p)
{
	int r;
	PGresult *res;

	if (js->in_tx)
		return pg_send(js, id, true, NULL, p);
	res = pg_run(js, id, p, &r);

	if (res && strcmp(PQcmdTuples(res), "1") != 0)
		r = -ENOENT;
	PQclear(res);
	return r;
}

/* A plain command outside the prepared set (BEGIN, COMMIT, the schema). */
static int pg_simple(struct pg_store *js, const char *sql, PGresult **ret_res)
{
	PGresult *res;
	ExecStatusType st;
	int r = pg_drain(js, NULL);

	if (r < 0)
		return r;
	res = PQexec(js->conn, sql);
	st = PQresultStatus(res);
	r = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? 0 : pg_errno(js, res);

	if (ret_res && r == 0)
		*ret_res = res;
	else
		PQclear(res);
	return r;
}

static int schema_fail(struct pg_store *js, int r, struct error *err)
{
	char msg[256], at[256];

	(void)pg_simple(js, "ROLLBACK", NULL);
	return error_set(err, r, "job store %s: %s", where(js, at, sizeof(at)),
			 one_line(PQerrorMessage(js->conn), msg, sizeof(msg)));
}

static int schema_migrate(struct pg_store *js, struct error *err)
{
	PGresult *res = NULL;
	char at[256];
	int version = 0, r;

	r = pg_simple(js, "BEGIN", NULL);
	if (r == 0)
		r = pg_simple(js, "SELECT pg_advisory_xact_lock(x'" MIGRATE_LOCK "'::bigint)", NULL);
	if (r == 0)
		r = pg_simple(js, SQL_VERSION_EXISTS, &res);
	if (r < 0)
		return schema_fail(js, r, err);
	if (strcmp(PQgetvalue(res, 0, 0), "t") == 0) {
		PQclear(res);
		res = NULL;
		r = pg_simple(js, SQL_VERSION, &res);
		if (r < 0)
			return schema_fail(js, r, err);
		version = atoi(PQgetvalue(res, 0, 0));
	}
	PQclear(res);
	if (version > JOBSTORE_SCHEMA_VERSION) {
		(void)pg_simple(js, "ROLLBACK", NULL);
		return error_set(err, -EPROTO, "job store %s: schema version %d is newer than this qpoold (%d)",
				 where(js, at, sizeof(at)), version, JOBSTORE_SCHEMA_VERSION);
	}
	r = pg_simple(js, SQL_VERSION_TABLE, NULL);
	/* All in one transaction, under the lock. */
	for (int v = version < 7 ? 7 : version + 1; v <= JOBSTORE_SCHEMA_VERSION && r == 0; v++) {
		char sql[64], *text = NULL;

		r = jobstore_migration(&jobstore_driver_pg, v, &text);
		if (r < 0) {
			(void)pg_simple(js, "ROLLBACK", NULL);
			return error_set(err, r, "job store %s: no migration to schema version %d",
					 where(js, at, sizeof(at)), v);
		}
		r = pg_simple(js, text, NULL);
		free(text);
		snprintf(sql, sizeof(sql), "INSERT INTO schema_version VALUES (%d)", v);
		if (r == 0)
			r = pg_simple(js, sql, NULL);
	}
	if (r == 0)
		r = pg_simple(js, "COMMIT", NULL);
	return r < 0 ? schema_fail(js, r, err) : 0;
}

static void notice_quiet(void *arg, const char *message)
{
}

static int pg_open(const char *dsn, struct jobstore **ret, struct error *err)
{
	struct pg_store *js;
	char msg[256];
	int r;

	r = pq_load(err);
	if (r < 0)
		return r;
	js = calloc(1, sizeof(*js));
	if (!js)
		return error_set(err, -ENOMEM, "out of memory");
	js->base.drv = &jobstore_driver_pg;
	js->conn = PQconnectdb(dsn);
	if (!js->conn) {
		r = error_set(err, -ENOMEM, "job store: out of memory");
		goto done;
	}
	if (PQstatus(js->conn) != CONNECTION_OK) {
		/* libpq names the host or socket it tried in its message; the
		 * connection string itself may hold a password: not echoed. */
		r = error_set(err, -ECONNREFUSED, "job store (postgresql): %s",
			      one_line(PQerrorMessage(js->conn), msg, sizeof(msg)));
		goto done;
	}
	/* Notices ("no transaction in progress" after a failed COMMIT) are
	 * not ours to print: qpoold logs the error it returns, once. */
	PQsetNoticeProcessor(js->conn, notice_quiet, NULL);
	/* Quiet: notices ("relation exists, skipping") are not ours to log. */
	r = pg_simple(js, "SET client_min_messages = warning", NULL);
	if (r < 0) {
		r = schema_fail(js, r, err);
		goto done;
	}
	r = schema_migrate(js, err);
	/* Its own statements; the shared ones are the door's to prepare
	 * (jobstore_ops_prepare). */
	for (int i = ST_MAX; i < PQ_ALL && r == 0; i++) {
		r = pg_prepare(&js->base, i, own_sql[i - ST_MAX], false);
		if (r < 0)
			r = error_set(err, r, "job store %s: %s", where(js, msg, sizeof(msg)), pg_error_text(&js->base));
	}
done:
	if (r < 0) {
		pg_close(&js->base);
		return r;
	}
	*ret = &js->base;
	return 0;
}

static void pg_close(struct jobstore *base)
{
	struct pg_store *js = to_pg(base);

	if (!js)
		return;
	batch_reset(js);
	PQfinish(js->conn);
	for (int i = 0; i < PQ_ALL; i++)
		free(js->sql[i]);
	free(js);
}

/* Every write of qpoold runs between this BEGIN and jobstore_commit. The
 * door's fence (jobstore_begin) follows it with pg_lease_renew, the first
 * statement of the transaction, sent in the same round trip. */
static int pg_begin(struct jobstore *base)
{
	struct pg_store *js = to_pg(base);
	int r;

	if (PQstatus(js->conn) != CONNECTION_OK) {
		r = pg_reconnect(js);
		if (r < 0)
			return r;
	}
	js->seq_begin = js->next_id - 1;
	js->ids_taken = false;
	r = pg_send(js, 0, false, "BEGIN", NULL);
	if (r < 0) {
		(void)pg_drain(js, NULL);
		return r;
	}
	js->in_tx = true;
	return 0;
}

static int pg_commit(struct jobstore *base)
{
	struct pg_store *js = to_pg(base);
	struct params p = { 0 };
	int r = 0;

	r = batch_flush(js);
	if (r == 0 && js->ids_taken) {
		p_int(&p, js->seq_begin);
		p_int(&p, js->next_id - 1);
		r = pg_send(js, PQ_SEQ_SET, false, NULL, &p);
	}
	if (r == 0)
		r = pg_send(js, 0, false, "COMMIT", NULL);
	if (r == 0)
		r = pg_drain(js, NULL);
	else
		(void)pg_drain(js, NULL);
	/* An error before COMMIT aborted the pipeline: COMMIT never ran and
	 * the transaction is still open, failed. */
	if (r < 0)
		(void)pg_simple(js, "ROLLBACK", NULL);
	js->in_tx = false;
	if (r < 0)
		js->next_id = 0;
	js->ids_taken = false;
	return r;
}

static void pg_rollback(struct jobstore *base)
{
	struct pg_store *js = to_pg(base);

	batch_reset(js);
	(void)pg_drain(js, NULL);
	if (js->in_tx)
		(void)pg_simple(js, "ROLLBACK", NULL);
	js->in_tx = false;
	js->next_id = 0;
	js->ids_taken = false;
}

/* PostgreSQL checkpoints by itself (checkpoint_timeout, max_wal_size). */
static int pg_checkpoint(struct jobstore *base)
{
	return 0;
}

static int pg_job_insert(struct jobstore *base, const struct jobstore_ev_params *cols, int64_t reserve,
			 const char *env, const char *script, int64_t *ret_id)
{
	struct pg_store *js = to_pg(base);
	struct params p = { 0 };
	PGresult *res;
	int r;

	if (params_from(&p, cols) < 0)
		return -E2BIG;
	if (js->in_tx) {
		struct params row = { 0 };

		/* job_seq once per transaction, then ids counted here. */
		if (js->next_id == 0 || js->seq_begin < 0) {
			struct params none = { 0 };

			res = NULL;
			r = pg_send(js, PQ_SEQ_LOCK, false, NULL, &none);
			if (r == 0)
				r = pg_drain(js, &res);
			if (r == 0 && (!res || PQntuples(res) != 1))
				r = -EIO;
			if (r == 0) {
				js->seq_begin = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
				js->next_id = js->seq_begin + 1;
			}
			PQclear(res);
			if (r < 0)
				return r;
		}
		p_int(&row, js->next_id);
		for (int c = 0; c < p.n; c++)
			p_text(&row, p.v[c]);
		p_text(&row, env);
		p_text(&row, script);
		r = batch_add(js, &row);
		if (r < 0)
			return r;
		*ret_id = js->next_id;
		js->next_id += 1 + reserve;
		js->ids_taken = true;
		return 0;
	}
	p_int(&p, reserve);
	p_text(&p, env);
	p_text(&p, script);
	js->next_id = 0;   /* job_seq moved behind the count */
	res = pg_run(js, PQ_INSERT, &p, &r);
	if (res && PQntuples(res) == 1)
		*ret_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	else if (res)
		r = -EIO;
	PQclear(res);
	return r;
}

/* The shared statements' parameters as libpq's text ones. */
static int params_from(struct params *p, const struct jobstore_ev_params *ep)
{
	if (p->n + ep->n > MAX_PARAMS)
		return -E2BIG;
	for (int i = 0; i < ep->n; i++) {
		if (ep->v[i].is_text)
			p_text(p, ep->v[i].text);
		else
			p_int(p, ep->v[i].i);
	}
	return 0;
}

/* A write: in a transaction pipelined (its answer read at the next read
 * or at commit: a dispatch pass is then one round trip, not three per
 * job); a checked one (RUN_ONE) in its checked form. A read in a
 * transaction goes down the pipeline too and is read at once with what
 * was sent before it: one round trip (the fence's renewal after BEGIN). */
static int pg_run_stmt(struct jobstore *base, int id, const struct jobstore_ev_params *ep, enum jobstore_run how,
		       int (*cb)(const struct jobstore_row *r, void *ud), void *ud)
{
	struct pg_store *js = to_pg(base);
	struct params p = { 0 };
	struct jobstore_row row = { &pg_row_ops, NULL, 0 };
	PGresult *res = NULL;
	int r;

	if (params_from(&p, ep) < 0)
		return -E2BIG;
	switch (how) {
	case RUN_WRITE:
		return pg_exec(js, id, &p);
	case RUN_ONE:
		return pg_exec_one(js, id, &p);
	case RUN_COUNT:
		res = pg_run(js, id, &p, &r);
		if (res)
			r = (int)strtol(PQcmdTuples(res), NULL, 10);
		PQclear(res);
		return r;
	case RUN_ROWS:
		break;
	}
	if (js->in_tx) {
		r = pg_send(js, id, false, NULL, &p);
		if (r == 0)
			r = pg_drain(js, &res);
		else
			(void)pg_drain(js, NULL);
	} else {
		res = pg_run(js, id, &p, &r);
	}
	row.res = res;
	for (row.row = 0; res && r == 0 && row.row < PQntuples(res); row.row++)
		r = cb(&row, ud);
	PQclear(res);
	return r;
}

static int pg_run_text(struct jobstore *base, const char *sql, const struct jobstore_ev_params *ep,
		      int (*cb)(const struct jobstore_row *r, void *ud), void *ud)
{
	struct pg_store *js = to_pg(base);
	struct params p = { 0 };
	struct jobstore_row row = { &pg_row_ops, NULL, 0 };
	ExecStatusType st;
	PGresult *res;
	int r;

	if (params_from(&p, ep) < 0)
		return -E2BIG;
	/* After what this transaction sent: its answers first. */
	r = batch_flush(js);
	if (r == 0)
		r = pg_drain(js, NULL);
	if (r < 0)
		return r;
	res = PQexecParams(js->conn, sql, p.n, NULL, p.v, NULL, NULL, 0);
	st = PQresultStatus(res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		r = pg_errno(js, res);
		PQclear(res);
		return r;
	}
	row.res = res;
	for (row.row = 0; cb && r == 0 && row.row < PQntuples(res); row.row++)
		r = cb(&row, ud);
	PQclear(res);
	return r;
}

static void pg_describe(struct jobstore *base, char *buf, size_t size)
{
	char at[256];

	snprintf(buf, size, "postgresql %s", where(to_pg(base), at, sizeof(at)));
}

/* COPY FROM STDIN: one round trip for a whole table, not one per row. */
static int pg_copy_begin(struct jobstore *base, const struct jobstore_table *t)
{
	struct pg_store *js = to_pg(base);
	PGresult *res;
	char *sql;
	int r;

	r = pg_drain(js, NULL);
	if (r < 0)
		return r;
	if (asprintf(&sql, "COPY %s (%s) FROM STDIN", t->name, t->columns) < 0)
		return -ENOMEM;
	res = PQexec(js->conn, sql);
	free(sql);
	r = PQresultStatus(res) == PGRES_COPY_IN ? 0 : pg_errno(js, res);
	PQclear(res);
	return r;
}

/* A row in COPY's text format: tabs between columns, \N for NULL, and
 * backslash, tab, newline and carriage return escaped. */
static int pg_copy_row(struct jobstore *base, const struct jobstore_table *t, const char *const *values)
{
	struct pg_store *js = to_pg(base);
	char *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	int r = 0;

	if (!f)
		return -ENOMEM;
	for (int c = 0; c < t->ncols; c++) {
		if (c)
			fputc('\t', f);
		if (!values[c]) {
			fputs("\\N", f);
			continue;
		}
		for (const char *p = values[c]; *p; p++) {
			switch (*p) {
			case '\\': fputs("\\\\", f); break;
			case '\t': fputs("\\t", f); break;
			case '\n': fputs("\\n", f); break;
			case '\r': fputs("\\r", f); break;
			default: fputc(*p, f);
			}
		}
	}
	fputc('\n', f);
	if (fclose(f) != 0) {
		free(line);
		return -ENOMEM;
	}
	if (PQputCopyData(js->conn, line, (int)len) != 1)
		r = pg_errno(js, NULL);
	free(line);
	return r;
}

static int pg_copy_end(struct jobstore *base)
{
	struct pg_store *js = to_pg(base);
	PGresult *res;
	int r = 0;

	if (PQputCopyEnd(js->conn, NULL) != 1)
		r = -EIO;
	while ((res = PQgetResult(js->conn))) {
		if (r == 0 && PQresultStatus(res) != PGRES_COMMAND_OK)
			r = pg_errno(js, res);
		PQclear(res);
	}
	return r;
}

static int pg_last_id_set(struct jobstore *base, int64_t last)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "UPDATE job_seq SET last = %" PRId64, last);
	to_pg(base)->next_id = 0;
	return pg_simple(to_pg(base), sql, NULL);
}

/* A session's limits in lease terms. A takeover (lease_acquire) waits
 * for the row lock of the holder's transaction at most half a lease (it
 * polls again, a standby loop must not block); the holder's session is
 * ended by the server when one of its transactions idles a whole lease (a
 * qpoold paused or hung mid-transaction would hold that lock, and so its
 * lease, for ever: its transaction is rolled back instead and its next
 * begin finds the lease taken). */
static int lease_limits(struct pg_store *js, int64_t lease_ms)
{
	char sql[160];

	snprintf(sql, sizeof(sql), "SET lock_timeout = %" PRId64 "; SET idle_in_transaction_session_timeout = %"
		 PRId64, lease_ms / 2 > 0 ? lease_ms / 2 : 1, lease_ms);
	return pg_simple(js, sql, NULL);
}

static int pg_lease_session(struct jobstore *base, int64_t lease_ms)
{
	return lease_limits(to_pg(base), lease_ms);
}

const struct jobstore_driver jobstore_driver_pg = {
	.name = "postgresql",
	.now_ms = PG_NOW_MS,
	.attr_open = "attrs::json->>'",
	.attr_close = "'",
	.list_open = '{',
	.list_close = '}',
	.add_column = "ADD COLUMN IF NOT EXISTS",
	.last_id = "(SELECT last FROM job_seq)",
	.texts = texts,
	.first_version = 7,
	.migrations = migrations,
	.open = pg_open,
	.close = pg_close,
	.prepare = pg_prepare,
	.error_text = pg_error_text,
	.run = pg_run_stmt,
	.run_text = pg_run_text,
	.begin = pg_begin,
	.commit = pg_commit,
	.rollback = pg_rollback,
	.checkpoint = pg_checkpoint,
	.job_insert = pg_job_insert,
	.lease_session = pg_lease_session,
	.describe = pg_describe,
	.copy_begin = pg_copy_begin,
	.copy_row = pg_copy_row,
	.copy_end = pg_copy_end,
	.last_id_set = pg_last_id_set,
};
