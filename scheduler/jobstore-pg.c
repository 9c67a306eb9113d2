/* SPDX-License-Identifier: MIT */
/* The job store on PostgreSQL: schema, migrations, prepared statements,
 * one connection. The only file that includes libpq-fe.h. */
#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobstore-internal.h"

/* Migrations, each leading to its version. A PostgreSQL store starts at
 * version 7 (the SQLite store's 7 migrations in one); a new schema
 * version adds one entry here and one in jobstore-sqlite.c, the same SQL
 * text where it can be (jobstore-internal.h). */
static const struct {
	int version;
	const char *sql;
} migrations[] = {
	{ 7,
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
	  " PRIMARY KEY (job_id, idx));" },
	/* 8: the nodes qpoold knows (jobstore-sqlite.c's 8). */
	{ 8, JOBSTORE_SQL_NODES_CREATE },
	/* 9: leadership, the lease and the servers seen (docs/HA.md). */
	{ 9, JOBSTORE_SQL_LEASE_CREATE },
	/* 10: the GPUs of each node's share (jobstore-sqlite.c's 10). */
	{ 10, "ALTER TABLE job_alloc ADD COLUMN IF NOT EXISTS gpus TEXT;" },
	/* 11: the pool's name (jobstore-sqlite.c's 11). */
	{ 11, JOBSTORE_SQL_POOL_CREATE },
	/* 12: the event stream (jobstore-sqlite.c's 12). */
	{ 12, JOBSTORE_SQL_EVENTS_CREATE },
	/* 13: accounts (jobstore-sqlite.c's 13). */
	{ 13, JOBSTORE_SQL_ACCOUNTS_CREATE },
	/* 14: an account's limits (jobstore-sqlite.c's 14). */
	{ 14, "ALTER TABLE accounts ADD COLUMN IF NOT EXISTS grp_cpus BIGINT,"
	      " ADD COLUMN IF NOT EXISTS grp_gpus BIGINT, ADD COLUMN IF NOT EXISTS grp_jobs BIGINT;" },
	/* 15: when a node was drained (jobstore-sqlite.c's 15). */
	{ 15, "ALTER TABLE node_admin ADD COLUMN IF NOT EXISTS t_drain BIGINT;" },
	/* 16: QOS and budgets (jobstore-sqlite.c's 16). */
	{ 16, JOBSTORE_SQL_QOS_CREATE },
	/* 17: reservations (jobstore-sqlite.c's 17). */
	{ 17, JOBSTORE_SQL_RESV_CREATE },
};

#define N_MIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))
_Static_assert(N_MIGRATIONS == JOBSTORE_SCHEMA_VERSION - 6, "a migration for each schema version past 7");

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
/* RETURNING: a renewal pipelined after BEGIN tells by its rows whether it
 * changed the lease, in the same round trip. */
static const char SQL_LEASE_RENEW[] = JOBSTORE_SQL_LEASE_RENEW(PG_NOW_MS) " RETURNING epoch";
static const char SQL_SUBJOB_INSERT[] =
	"INSERT INTO jobs (id, name, queue, owner, uid, gid, state, ncpus, mem, walltime,"
	" workdir, stdout, stderr, join_oe, rerunnable, t_submit, umask, attrs, chunks, place, array_id, array_index, reason)"
	" SELECT $1::bigint, name, queue, owner, uid, gid, $2::text, ncpus, mem, walltime, workdir, stdout, stderr,"
	" join_oe, rerunnable, t_submit, umask, attrs, chunks, place, id, $3::bigint, $5::text FROM jobs WHERE id = $4::bigint";
static const char SQL_SUBJOBS[] =
	"SELECT array_index, state, exit_status FROM jobs WHERE array_id = $1::bigint";
static const char SQL_ARRAY_FINISH[] =
	"UPDATE jobs SET state = $1::text, exit_status = $2::integer, reason = $3::text, t_done = $4::bigint,"
	" cpu_ns = (SELECT sum(cpu_ns) FROM jobs WHERE array_id = $5::bigint),"
	" mem_peak = (SELECT max(mem_peak) FROM jobs WHERE array_id = $5::bigint),"
	" t_dispatch = (SELECT min(t_dispatch) FROM jobs WHERE array_id = $5::bigint),"
	" t_exec = (SELECT min(t_exec) FROM jobs WHERE array_id = $5::bigint),"
	" t_exit = (SELECT max(t_exit) FROM jobs WHERE array_id = $5::bigint),"
	" t_released = (SELECT max(t_released) FROM jobs WHERE array_id = $5::bigint) WHERE id = $5::bigint";
static const char SQL_DEPEND_SET[] = "UPDATE jobs SET depend = $1::text WHERE id = $2::bigint";
static const char SQL_SET_STATE[] = "UPDATE jobs SET state = $1::text, reason = $2::text WHERE id = $3::bigint";
static const char SQL_DISPATCH[] =
	"UPDATE jobs SET state = 'running', node = $1::text, cpus = $2::text, t_dispatch = $3::bigint,"
	" reason = NULL WHERE id = $4::bigint";
/* attrs.run_count: how often the job was requeued (scontrol's Restarts;
 * qstat -f's run_count counts its starts from it). */
static const char SQL_REQUEUE[] =
	"UPDATE jobs SET state = 'queued', node = NULL, cpus = NULL, t_dispatch = NULL, reason = $1::text,"
	" attrs = jsonb_set(coalesce(attrs, '{}')::jsonb, '{run_count}',"
	" to_jsonb((coalesce(attrs::json->>'run_count', '0')::bigint + 1)::text))::text"
	" WHERE id = $2::bigint";
/* As SQLite's: a job across nodes gets the sum of its nodes' CPU time
 * and the highest node's peak memory (job_alloc). */
static const char SQL_FINISH[] =
	"UPDATE jobs SET state = $1::text, exit_status = $2::integer, exit_signal = $3::integer, reason = $4::text,"
	" cpu_ns = coalesce((SELECT sum(cpu_ns) FROM job_alloc WHERE job_id = $20::bigint), $5::bigint),"
	" mem_peak = coalesce((SELECT max(mem_peak) FROM job_alloc WHERE job_id = $20::bigint), $6::bigint),"
	" oom = $7::integer, t_launch = $8::bigint, t_wrap = $9::bigint,"
	" t_fenced = $10::bigint, t_exec = $11::bigint, t_exit = $12::bigint, t_released = $13::bigint,"
	" t_done = $14::bigint, m_wrap = $15::bigint, m_fenced = $16::bigint, m_exec = $17::bigint,"
	" m_exit = $18::bigint, m_released = $19::bigint WHERE id = $20::bigint";
/* The attributes are a JSON object of strings: ->> gives the text
 * SQLite's json_extract gives. */
static const char SQL_ACTIVE[] =
	"SELECT id, queue, uid, state, ncpus, mem, walltime, node, cpus, t_submit, rerunnable, t_dispatch,"
	" attrs::json->>'Priority', attrs::json->>'Execution_Time', chunks, place,"
	" array_spec, array_id, array_index, depend, reason, attrs::json->>'Resource_List.ngpus',"
	" attrs::json->>'Resource_List.nodelist', attrs::json->>'Resource_List.exclude',"
	" attrs::json->>'Resource_List.constraint', attrs::json->>'Resource_List.gpu_model',"
	" attrs::json->>'Resource_List.licenses', attrs::json->>'Resource_List.node_res',"
	" attrs::json->>'Account_Name', attrs::json->>'Resource_List.qos', attrs::json->>'reservation' FROM jobs"
	" WHERE state IN ('queued','held','running','exiting') ORDER BY id";
static const char SQL_QUERY[] =
	"SELECT " JOB_COLUMNS " FROM jobs WHERE ($1::bigint = 0 OR id = $1::bigint OR ($8::boolean AND array_id = $1::bigint))"
	" AND ($2::text IS NULL OR owner = $2::text)"
	" AND ($3::boolean OR state IN ('queued','held','running','exiting'))"
	" AND ($4::bigint = 0 OR t_done IS NULL OR t_done >= $4::bigint) AND ($5::bigint = 0 OR t_submit <= $5::bigint)"
	" AND id > $6::bigint AND ($8::boolean OR array_id IS NULL) AND (NOT $9::boolean OR array_spec IS NULL)"
	" ORDER BY id LIMIT $7::bigint";
/* One job by its primary key: see SQL_QUERY_ID in jobstore-sqlite.c. */
static const char SQL_QUERY_ID[] =
	"SELECT " JOB_COLUMNS " FROM jobs WHERE id = $1::bigint AND ($2::text IS NULL OR owner = $2::text)"
	" AND ($3::boolean OR state IN ('queued','held','running','exiting'))"
	" AND ($4::bigint = 0 OR t_done IS NULL OR t_done >= $4::bigint) AND ($5::bigint = 0 OR t_submit <= $5::bigint)";
static const char SQL_LAUNCH[] =
	"SELECT " JOB_COLUMNS ", p.env, p.script, jobs.umask FROM jobs"
	" JOIN job_payload p ON p.job_id = coalesce(jobs.array_id, jobs.id) WHERE jobs.id = $1::bigint";
static const char SQL_PAYLOAD[] =
	"SELECT env, script FROM job_payload WHERE job_id ="
	" coalesce((SELECT array_id FROM jobs WHERE id = $1::bigint), $1::bigint)";
static const char SQL_ALLOC_INSERT[] =
	"INSERT INTO job_alloc (job_id, idx, node, ncpus, cpus, mems, mem, mpiprocs, ompthreads, gpus)"
	" VALUES ($1::bigint, $2::integer, $3::text, $4::bigint, $5::text, $6::text, $7::bigint, $8::bigint, $9::bigint,"
	" $10::text)"
	" ON CONFLICT (job_id, idx) DO UPDATE SET node = excluded.node, ncpus = excluded.ncpus, gpus = excluded.gpus,"
	" cpus = excluded.cpus, mems = excluded.mems, mem = excluded.mem, mpiprocs = excluded.mpiprocs,"
	" ompthreads = excluded.ompthreads, t_launch = NULL, t_wrap = NULL, t_fenced = NULL, t_exec = NULL,"
	" t_exit = NULL, t_released = NULL, t_done = NULL, cpu_ns = NULL, mem_peak = NULL, result = NULL";
static const char SQL_ALLOC_DELETE[] = "DELETE FROM job_alloc WHERE job_id = $1::bigint";
static const char SQL_ALLOC_RESULT[] =
	"UPDATE job_alloc SET t_launch = $1::bigint, t_wrap = $2::bigint, t_fenced = $3::bigint,"
	" t_exec = $4::bigint, t_exit = $5::bigint, t_released = $6::bigint, t_done = $7::bigint,"
	" cpu_ns = $8::bigint, mem_peak = $9::bigint, result = $10::text WHERE job_id = $11::bigint AND idx = $12::integer";
static const char SQL_ALLOC_LOAD[] =
	"SELECT idx, node, ncpus, cpus, mems, mem, mpiprocs, ompthreads, t_launch, t_wrap, t_fenced,"
	" t_exec, t_exit, t_released, t_done, cpu_ns, mem_peak, result, gpus FROM job_alloc WHERE job_id = $1::bigint"
	" ORDER BY idx";
static const char SQL_ROT_SET[] =
	"INSERT INTO iqs_rotation (queue, uid, seq) VALUES ($1::text, $2::bigint, $3::bigint)"
	" ON CONFLICT (queue, uid) DO UPDATE SET seq = excluded.seq";
static const char SQL_ROT_LOAD[] = "SELECT queue, uid, seq FROM iqs_rotation";
static const char SQL_QADMIN_SET[] =
	"INSERT INTO queue_admin (queue, enabled, started, reason) VALUES ($1::text, $2::integer, $3::integer, $4::text)"
	" ON CONFLICT (queue) DO UPDATE SET enabled = coalesce($2::integer, queue_admin.enabled),"
	" started = coalesce($3::integer, queue_admin.started), reason = $4::text";
static const char SQL_QADMIN_LOAD[] = "SELECT queue, enabled, started, reason FROM queue_admin";
static const char SQL_NADMIN_SET[] =
	"INSERT INTO node_admin (node, drain, reason, t_drain) VALUES ($1::text, $2::integer, $3::text,"
	" CASE WHEN $2::integer > 0 THEN extract(epoch FROM now())::bigint END)"
	" ON CONFLICT (node) DO UPDATE SET drain = $2::integer, reason = $3::text, t_drain = excluded.t_drain";
static const char SQL_NADMIN_LOAD[] = "SELECT node, drain, t_drain, reason FROM node_admin";
static const char SQL_ALTER[] =
	"UPDATE jobs SET name = $1::text, queue = $2::text, ncpus = $3::bigint, mem = $4::bigint,"
	" walltime = $5::bigint, stdout = coalesce($6::text, stdout), stderr = coalesce($7::text, stderr),"
	" join_oe = $8::integer, rerunnable = $9::integer WHERE id = $10::bigint AND state IN ('queued','held')";
/* qalter -a, scontrol update StartTime=: attrs.Execution_Time, or none
 * for 0; a job not ended yet (a running one keeps it for a start after a
 * requeue). */
/* A start estimate kept beside the job (docs/ESTIMATES.md): $1 1 for
 * the first (kept once: the row's own value wins), $2 epoch seconds. */
static const char SQL_ESTIMATE_SET[] =
	"UPDATE jobs SET attrs = (CASE WHEN $1::integer = 1 THEN jsonb_build_object('estimated.first_start_time',"
	" $2::bigint::text) || coalesce(attrs, '{}')::jsonb ELSE coalesce(attrs, '{}')::jsonb ||"
	" jsonb_build_object('estimated.start_time', $2::bigint::text) END)::text WHERE id = $3::bigint";
static const char SQL_BEGIN_SET[] =
	"UPDATE jobs SET attrs = (CASE WHEN $1::bigint > 0 THEN jsonb_set(coalesce(attrs, '{}')::jsonb,"
	" '{Execution_Time}', to_jsonb($1::bigint::text)) ELSE coalesce(attrs, '{}')::jsonb - 'Execution_Time'"
	" END)::text WHERE id = $2::bigint AND state IN ('queued','held','running','exiting')";

enum stmt_id {
	ST_INSERT, ST_SET_STATE, ST_DISPATCH, ST_REQUEUE, ST_FINISH, ST_ACTIVE, ST_QUERY, ST_QUERY_ID,
	ST_LAUNCH, ST_PAYLOAD, ST_ROT_SET, ST_ROT_LOAD, ST_QADMIN_SET, ST_QADMIN_LOAD, ST_NADMIN_SET,
	ST_NADMIN_LOAD, ST_ALTER, ST_BEGIN_SET, ST_ESTIMATE_SET, ST_ALLOC_INSERT, ST_ALLOC_DELETE, ST_ALLOC_RESULT, ST_ALLOC_LOAD,
	ST_SUBJOB_INSERT, ST_SUBJOBS, ST_ARRAY_FINISH, ST_DEPEND_SET, ST_BATCH_JOBS, ST_BATCH_PAYLOAD,
	ST_SEQ_LOCK, ST_SEQ_SET, ST_NODE_PUT, ST_NODE_DELETE, ST_NODE_ADMIN_DELETE, ST_NODES_LOAD,
	ST_LEASE_ACQUIRE, ST_LEASE_RENEW, ST_LEASE_RELEASE, ST_LEASE_READ, ST_SERVER_SEEN, ST_SERVERS_LOAD,
	ST_POOL_NAME_READ, ST_POOL_NAME_SET, ST_EV_JOB, ST_EV_NODE, ST_EV_READ, ST_EV_BOUNDS,
	ST_EV_PRUNE, ST_EV_JOB_RANGE, ST_MAX,
};

static const char *const stmt_sql[ST_MAX] = {
	[ST_INSERT] = SQL_INSERT,
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
	[ST_ALLOC_INSERT] = SQL_ALLOC_INSERT,
	[ST_ALLOC_DELETE] = SQL_ALLOC_DELETE,
	[ST_ALLOC_RESULT] = SQL_ALLOC_RESULT,
	[ST_ALLOC_LOAD] = SQL_ALLOC_LOAD,
	[ST_SUBJOB_INSERT] = SQL_SUBJOB_INSERT,
	[ST_SUBJOBS] = SQL_SUBJOBS,
	[ST_ARRAY_FINISH] = SQL_ARRAY_FINISH,
	[ST_DEPEND_SET] = SQL_DEPEND_SET,
	[ST_BATCH_JOBS] = SQL_BATCH_JOBS,
	[ST_BATCH_PAYLOAD] = SQL_BATCH_PAYLOAD,
	[ST_SEQ_LOCK] = SQL_SEQ_LOCK,
	[ST_SEQ_SET] = SQL_SEQ_SET,
	[ST_NODE_PUT] = JOBSTORE_SQL_NODE_PUT,
	[ST_NODE_DELETE] = JOBSTORE_SQL_NODE_DELETE,
	[ST_NODE_ADMIN_DELETE] = JOBSTORE_SQL_NODE_ADMIN_DELETE,
	[ST_NODES_LOAD] = JOBSTORE_SQL_NODES_LOAD,
	[ST_LEASE_ACQUIRE] = JOBSTORE_SQL_LEASE_ACQUIRE(PG_NOW_MS),
	[ST_LEASE_RENEW] = SQL_LEASE_RENEW,
	[ST_LEASE_RELEASE] = JOBSTORE_SQL_LEASE_RELEASE(PG_NOW_MS),
	[ST_LEASE_READ] = JOBSTORE_SQL_LEASE_READ(PG_NOW_MS),
	[ST_SERVER_SEEN] = JOBSTORE_SQL_SERVER_SEEN(PG_NOW_MS),
	[ST_SERVERS_LOAD] = JOBSTORE_SQL_SERVERS_LOAD(PG_NOW_MS),
	[ST_POOL_NAME_READ] = JOBSTORE_SQL_POOL_NAME_READ,
	[ST_POOL_NAME_SET] = JOBSTORE_SQL_POOL_NAME_SET,
	[ST_EV_JOB] = JOBSTORE_SQL_EV_JOBS_PG,
	[ST_EV_NODE] = JOBSTORE_SQL_EV_NODE,
	[ST_EV_READ] = JOBSTORE_SQL_EV_READ,
	[ST_EV_BOUNDS] = JOBSTORE_SQL_EV_BOUNDS,
	[ST_EV_PRUNE] = JOBSTORE_SQL_EV_PRUNE,
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

/* 0: not taken (NULL), as in the SQLite store. */
static void p_stamp(struct params *p, int64_t t)
{
	if (t)
		p_int(p, t);
	else
		p_text(p, NULL);
}

static void p_bool(struct params *p, bool b)
{
	p_text(p, b ? "t" : "f");
}

static const struct jobstore_ops pg_ops;
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

/* The writes that must change exactly one row (pg_exec_one). In a
 * transaction they are pipelined in their checked form: a row count of 0
 * divides by zero and aborts the transaction, so the -ENOENT a caller
 * would have had at once comes at commit, which fails whole. */
static bool stmt_checked(int i)
{
	return i == ST_SET_STATE || i == ST_DISPATCH || i == ST_REQUEUE || i == ST_FINISH || i == ST_ALTER ||
	       i == ST_BEGIN_SET ||
	       i == ST_SUBJOB_INSERT || i == ST_ARRAY_FINISH || i == ST_DEPEND_SET;
}

static int prepare_one(struct pg_store *js, const char *name, const char *sql, struct error *err)
{
	char msg[256], at[256];
	PGresult *res = PQprepare(js->conn, name, sql, 0, NULL);
	int r = 0;

	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		r = pg_errno(js, res);
		error_set(err, r, "job store %s: %s", where(js, at, sizeof(at)),
			  one_line(PQerrorMessage(js->conn), msg, sizeof(msg)));
	}
	PQclear(res);
	return r;
}

/* Prepares each statement as "qpN", and a checked one also as "qcN". */
static int pg_prepare_all(struct pg_store *js, struct error *err)
{
	int r = 0;

	for (int i = 0; i < ST_MAX && r == 0; i++) {
		char name[16], *sql;

		snprintf(name, sizeof(name), "qp%d", i);
		r = prepare_one(js, name, stmt_sql[i], err);
		if (r < 0 || !stmt_checked(i))
			continue;
		if (asprintf(&sql, "WITH u AS (%s RETURNING 1) SELECT 1 / (SELECT count(*)::integer FROM u)",
			     stmt_sql[i]) < 0)
			return error_set(err, -ENOMEM, "out of memory");
		snprintf(name, sizeof(name), "qc%d", i);
		r = prepare_one(js, name, sql, err);
		free(sql);
	}
	return r;
}

/* A lost connection between transactions is made again (libpq tries each
 * host of a multi-host store_dsn in turn, so qpoold follows a promoted
 * standby) and the statements prepared again. Inside a transaction it is
 * not: the caller's rollback gives every write of it up, and the next
 * transaction reconnects. */
static int lease_limits(struct pg_store *js, int64_t lease_ms);

static int pg_reconnect(struct pg_store *js)
{
	struct error err;

	if (js->in_tx)
		return -ECONNRESET;
	PQreset(js->conn);
	if (PQstatus(js->conn) != CONNECTION_OK)
		return -ECONNRESET;
	if (js->base.lease_ms > 0 && lease_limits(js, js->base.lease_ms) < 0)
		return -ECONNRESET;
	return pg_prepare_all(js, &err);
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

static int pg_send(struct pg_store *js, int id, const char *sql, const struct params *p);

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
		r = pg_send(js, ST_BATCH_JOBS, NULL, &jobs);
		if (r == 0)
			r = pg_send(js, ST_BATCH_PAYLOAD, NULL, &payload);
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
 * id + ST_MAX: its checked form (stmt_checked). */
static int pg_send(struct pg_store *js, int id, const char *sql, const struct params *p)
{
	char name[16];
	int r = 0;

	/* Statements run in the order sent: the jobs kept for the batch
	 * go first, so a write after them finds them. */
	if (id != ST_BATCH_JOBS && id != ST_BATCH_PAYLOAD)
		r = batch_flush(js);
	if (r == 0)
		r = pg_pipeline_enter(js);
	if (r < 0)
		return r;
	snprintf(name, sizeof(name), id >= ST_MAX ? "qc%d" : "qp%d", id % ST_MAX);
	if (sql ? PQsendQueryParams(js->conn, sql, 0, NULL, NULL, NULL, NULL, 0) != 1 :
	    PQsendQueryPrepared(js->conn, name, p->n, p->v, NULL, NULL, 0) != 1)
		return pg_errno(js, NULL);
	return 0;
}

/* Runs prepared statement id with p; returns its result (the caller
 * PQclears it) or NULL with *ret_r the error. */
static PGresult *pg_run(struct pg_store *js, enum stmt_id id, const struct params *p, int *ret_r)
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
static int pg_exec(struct pg_store *js, enum stmt_id id, const struct params *p)
{
	int r;
	PGresult *res;

	/* In a transaction: pipelined, its answer read at the next read or
	 * at commit (a dispatch pass is then one round trip, not three per
	 * job). */
	if (js->in_tx)
		return pg_send(js, id, NULL, p);
	res = pg_run(js, id, p, &r);

	PQclear(res);
	return r;
}

/* A write that must change exactly one row; -ENOENT when none. */
static int pg_exec_one(struct pg_store *js, enum stmt_id id, const struct params *p)
{
	int r;
	PGresult *res;

	if (js->in_tx)
		return pg_send(js, ST_MAX + id, NULL, p);
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
	for (int i = 0; i < N_MIGRATIONS && r == 0; i++) {
		char sql[64];

		if (migrations[i].version <= version)
			continue;
		r = pg_simple(js, migrations[i].sql, NULL);
		snprintf(sql, sizeof(sql), "INSERT INTO schema_version VALUES (%d)", migrations[i].version);
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

int jobstore_pg_open(const char *dsn, struct jobstore **ret, struct error *err)
{
	struct pg_store *js;
	char msg[256];
	int r;

	js = calloc(1, sizeof(*js));
	if (!js)
		return error_set(err, -ENOMEM, "out of memory");
	js->base.ops = &pg_ops;
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
	if (r == 0)
		r = pg_prepare_all(js, err);
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
	r = pg_send(js, ST_MAX, "BEGIN", NULL);
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
		r = pg_send(js, ST_SEQ_SET, NULL, &p);
	}
	if (r == 0)
		r = pg_send(js, ST_MAX, "COMMIT", NULL);
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

static int pg_job_insert(struct jobstore *base, const struct job_submit *s, int64_t *ret_id)
{
	struct pg_store *js = to_pg(base);
	struct params p = { 0 };
	PGresult *res;
	int r;

	p_text(&p, s->name);
	p_text(&p, s->queue);
	p_text(&p, s->owner);
	p_int(&p, s->uid);
	p_int(&p, s->gid);
	p_text(&p, job_state_name(s->hold ? JOB_HELD : JOB_QUEUED));
	p_int(&p, s->ncpus);
	p_int(&p, (int64_t)s->mem);
	p_int(&p, (int64_t)s->walltime);
	p_text(&p, s->workdir);
	p_text(&p, s->stdout_path ? s->stdout_path : "");
	p_text(&p, s->stderr_path ? s->stderr_path : "");
	p_int(&p, s->join);
	p_int(&p, s->rerunnable);
	p_int(&p, s->t_submit);
	if (s->umask >= 0)
		p_int(&p, s->umask & 0777);
	else
		p_text(&p, NULL);
	p_text(&p, s->attrs_json);
	p_text(&p, s->chunks_json);
	p_text(&p, s->place);
	p_text(&p, s->array_spec);
	p_text(&p, s->depend);
	p_text(&p, s->reason);
	if (js->in_tx) {
		struct params row = { 0 };

		/* job_seq once per transaction, then ids counted here. */
		if (js->next_id == 0 || js->seq_begin < 0) {
			struct params none = { 0 };

			res = NULL;
			r = pg_send(js, ST_SEQ_LOCK, NULL, &none);
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
		p_text(&row, s->env_json ? s->env_json : "{}");
		p_text(&row, s->script);
		r = batch_add(js, &row);
		if (r < 0)
			return r;
		*ret_id = js->next_id;
		js->next_id += 1 + (s->array_count > 0 ? s->array_count : 0);
		js->ids_taken = true;
		return 0;
	}
	p_int(&p, s->array_count > 0 ? s->array_count : 0);
	p_text(&p, s->env_json ? s->env_json : "{}");
	p_text(&p, s->script);
	js->next_id = 0;   /* job_seq moved behind the count */
	res = pg_run(js, ST_INSERT, &p, &r);
	if (res && PQntuples(res) == 1)
		*ret_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	else if (res)
		r = -EIO;
	PQclear(res);
	return r;
}

static int pg_job_set_state(struct jobstore *base, int64_t id, enum job_state state, const char *reason)
{
	struct params p = { 0 };

	p_text(&p, job_state_name(state));
	p_text(&p, reason);
	p_int(&p, id);
	return pg_exec_one(to_pg(base), ST_SET_STATE, &p);
}

static int pg_job_dispatch(struct jobstore *base, int64_t id, const char *node, const char *cpus,
			   int64_t t_dispatch)
{
	struct params p = { 0 };

	p_text(&p, node);
	p_text(&p, cpus);
	p_int(&p, t_dispatch);
	p_int(&p, id);
	return pg_exec_one(to_pg(base), ST_DISPATCH, &p);
}

static int pg_job_requeue(struct jobstore *base, int64_t id, const char *reason)
{
	struct pg_store *js = to_pg(base);
	struct params p = { 0 };
	int r;

	p_text(&p, reason);
	p_int(&p, id);
	r = pg_exec_one(js, ST_REQUEUE, &p);
	if (r < 0)
		return r;
	p.n = 0;
	p_int(&p, id);
	return pg_exec(js, ST_ALLOC_DELETE, &p);
}

static int pg_alloc_insert(struct jobstore *base, const struct job *j)
{
	struct pg_store *js = to_pg(base);
	int r = 0;

	for (unsigned i = 0; i < j->n_alloc && r == 0; i++) {
		const struct alloc_entry *e = &j->alloc[i];
		struct params p = { 0 };
		char cpus[4096], gpus[JOB_GPUS_TEXT_MAX];

		cpumask_format(&e->cpus, cpus, sizeof(cpus));
		job_gpus_format(e->gpus, gpus, sizeof(gpus));
		p_int(&p, j->id);
		p_int(&p, (int)i);
		p_text(&p, e->node);
		p_int(&p, e->ncpus);
		p_text(&p, cpus);
		p_text(&p, e->mems);
		p_int(&p, (int64_t)e->mem);
		p_int(&p, e->mpiprocs);
		p_int(&p, e->ompthreads);
		p_text(&p, e->gpus ? gpus : NULL);
		r = pg_exec(js, ST_ALLOC_INSERT, &p);
	}
	return r;
}

static int pg_alloc_result(struct jobstore *base, int64_t id, unsigned idx, const struct job_result *res,
			   int64_t t_done, const char *result_json)
{
	struct params p = { 0 };

	for (int i = STAMP_LAUNCH; i <= STAMP_RELEASED; i++)
		p_stamp(&p, res->times[i]);
	p_stamp(&p, t_done);
	p_int(&p, res->cpu_ns);
	p_int(&p, res->mem_peak);
	p_text(&p, result_json);
	p_int(&p, id);
	p_int(&p, (int)idx);
	return pg_exec(to_pg(base), ST_ALLOC_RESULT, &p);
}

static int pg_job_estimate_set(struct jobstore *base, int64_t id, bool first, int64_t t)
{
	struct params p = { 0 };

	p_int(&p, first);
	p_int(&p, t);
	p_int(&p, id);
	return pg_exec(to_pg(base), ST_ESTIMATE_SET, &p);
}

static int pg_job_begin_set(struct jobstore *base, int64_t id, int64_t t)
{
	struct params p = { 0 };

	p_int(&p, t);
	p_int(&p, id);
	return pg_exec_one(to_pg(base), ST_BEGIN_SET, &p);
}

static int pg_job_alter(struct jobstore *base, int64_t id, const struct job_submit *a)
{
	struct params p = { 0 };

	p_text(&p, a->name);
	p_text(&p, a->queue);
	p_int(&p, a->ncpus);
	p_int(&p, (int64_t)a->mem);
	p_int(&p, (int64_t)a->walltime);
	p_text(&p, a->stdout_path);
	p_text(&p, a->stderr_path);
	p_int(&p, a->join);
	p_int(&p, a->rerunnable);
	p_int(&p, id);
	return pg_exec_one(to_pg(base), ST_ALTER, &p);
}

static int pg_job_finish(struct jobstore *base, int64_t id, const struct job_result *res, int64_t t_done)
{
	struct params p = { 0 };

	p_text(&p, job_state_name(res->state));
	if (res->exit_status >= 0)
		p_int(&p, res->exit_status);
	else
		p_text(&p, NULL);
	if (res->exit_signal > 0)
		p_int(&p, res->exit_signal);
	else
		p_text(&p, NULL);
	p_text(&p, res->reason[0] ? res->reason : NULL);
	p_int(&p, res->cpu_ns);
	p_int(&p, res->mem_peak);
	p_int(&p, res->oom);
	for (int i = STAMP_LAUNCH; i <= STAMP_RELEASED; i++)
		p_stamp(&p, res->times[i]);
	p_int(&p, t_done);
	for (int i = STAMP_WRAP; i <= STAMP_RELEASED; i++)
		p_stamp(&p, res->mono[i]);
	p_int(&p, id);
	return pg_exec_one(to_pg(base), ST_FINISH, &p);
}

/* The allocation rows of j->id into j; none: j keeps what it has. */
static int alloc_load(struct pg_store *js, struct job *j)
{
	struct params p = { 0 };
	struct jobstore_row row = { &pg_row_ops, NULL, 0 };
	PGresult *res;
	int n, r;

	p_int(&p, j->id);
	res = pg_run(js, ST_ALLOC_LOAD, &p, &r);
	if (!res)
		return r;
	n = PQntuples(res);
	if (n > 0)
		r = job_alloc_init(j, (unsigned)n);
	row.res = res;
	for (row.row = 0; r == 0 && row.row < n; row.row++)
		r = jobstore_row_alloc_entry(&row, j, (unsigned)row.row);
	PQclear(res);
	return r;
}

static json_t *pg_alloc_json(struct jobstore *base, int64_t id)
{
	struct params p = { 0 };
	struct jobstore_row row = { &pg_row_ops, NULL, 0 };
	json_t *arr = json_array();
	PGresult *res;
	int r;

	p_int(&p, id);
	res = pg_run(to_pg(base), ST_ALLOC_LOAD, &p, &r);
	row.res = res;
	for (row.row = 0; arr && res && row.row < PQntuples(res); row.row++)
		json_array_append_new(arr, jobstore_row_alloc_json(&row));
	PQclear(res);
	return arr;
}

static int pg_load_active(struct jobstore *base, int (*cb)(struct job *j, void *userdata), void *userdata)
{
	struct pg_store *js = to_pg(base);
	struct params p = { 0 };
	struct jobstore_row row = { &pg_row_ops, NULL, 0 };
	PGresult *res;
	int r;

	res = pg_run(js, ST_ACTIVE, &p, &r);
	row.res = res;
	for (row.row = 0; res && r == 0 && row.row < PQntuples(res); row.row++) {
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
	}
	PQclear(res);
	return r;
}

static int pg_query(struct jobstore *base, const struct jobstore_filter *f, json_t **ret_array)
{
	bool by_id = f->jobid && !f->subjobs;
	struct params p = { 0 };
	struct jobstore_row row = { &pg_row_ops, NULL, 0 };
	json_t *arr;
	PGresult *res;
	int r;

	p_int(&p, f->jobid);
	p_text(&p, f->owner);
	p_bool(&p, f->finished || f->jobid);
	p_int(&p, f->from);
	p_int(&p, f->to);
	if (!by_id) {
		p_int(&p, f->after);
		if (f->limit)
			p_int(&p, f->limit);
		else
			p_text(&p, NULL);   /* LIMIT NULL: all */
		p_bool(&p, f->subjobs);
		p_bool(&p, f->no_arrays);
	}
	res = pg_run(to_pg(base), by_id ? ST_QUERY_ID : ST_QUERY, &p, &r);
	if (!res)
		return r;
	arr = json_array();
	row.res = res;
	for (row.row = 0; arr && row.row < PQntuples(res); row.row++)
		json_array_append_new(arr, jobstore_row_job_json(&row));
	PQclear(res);
	if (!arr)
		return -ENOMEM;
	*ret_array = arr;
	return 0;
}

static int pg_payload_add(struct jobstore *base, int64_t id, json_t *o)
{
	struct params p = { 0 };
	struct jobstore_row row = { &pg_row_ops, NULL, 0 };
	PGresult *res;
	int r;

	p_int(&p, id);
	res = pg_run(to_pg(base), ST_PAYLOAD, &p, &r);
	if (res && PQntuples(res) == 1) {
		row.res = res;
		jobstore_row_payload_set(o, &row, 0);
	} else if (res) {
		r = -ENOENT;
	}
	PQclear(res);
	return r;
}

static int pg_job_launch(struct jobstore *base, int64_t id, json_t **ret)
{
	struct params p = { 0 };
	struct jobstore_row row = { &pg_row_ops, NULL, 0 };
	PGresult *res;
	int r;

	p_int(&p, id);
	res = pg_run(to_pg(base), ST_LAUNCH, &p, &r);
	if (res && PQntuples(res) != 1) {
		r = -ENOENT;
	} else if (res) {
		row.res = res;
		if (!(*ret = jobstore_row_launch_json(&row)))
			r = -ENOMEM;
	}
	PQclear(res);
	return r;
}

static int pg_subjob_insert(struct jobstore *base, int64_t array_id, int64_t id, int64_t index,
			    enum job_state state, const char *reason)
{
	struct params p = { 0 };

	p_int(&p, id);
	p_text(&p, job_state_name(state));
	p_int(&p, index);
	p_int(&p, array_id);
	p_text(&p, reason);
	return pg_exec_one(to_pg(base), ST_SUBJOB_INSERT, &p);
}

static int pg_subjobs_load(struct jobstore *base, int64_t array_id,
			   int (*cb)(int64_t index, enum job_state state, int exit_status, void *ud), void *ud)
{
	struct params p = { 0 };
	PGresult *res;
	int r;

	p_int(&p, array_id);
	res = pg_run(to_pg(base), ST_SUBJOBS, &p, &r);
	for (int i = 0; res && r == 0 && i < PQntuples(res); i++) {
		enum job_state state = JOB_QUEUED;

		(void)job_state_parse(PQgetvalue(res, i, 1), &state);
		r = cb(strtoll(PQgetvalue(res, i, 0), NULL, 10), state,
		       PQgetisnull(res, i, 2) ? -1 : atoi(PQgetvalue(res, i, 2)), ud);
	}
	PQclear(res);
	return r;
}

static int pg_array_finish(struct jobstore *base, int64_t id, enum job_state state, int exit_status,
			   const char *reason, int64_t t_done)
{
	struct params p = { 0 };

	p_text(&p, job_state_name(state));
	p_int(&p, exit_status);
	p_text(&p, reason);
	p_int(&p, t_done);
	p_int(&p, id);
	return pg_exec_one(to_pg(base), ST_ARRAY_FINISH, &p);
}

static int pg_job_depend_set(struct jobstore *base, int64_t id, const char *depend)
{
	struct params p = { 0 };

	p_text(&p, depend);
	p_int(&p, id);
	return pg_exec_one(to_pg(base), ST_DEPEND_SET, &p);
}

static int pg_rotation_set(struct jobstore *base, const char *queue, uid_t uid, uint64_t seq)
{
	struct params p = { 0 };

	p_text(&p, queue);
	p_int(&p, uid);
	p_int(&p, (int64_t)seq);
	return pg_exec(to_pg(base), ST_ROT_SET, &p);
}

static int pg_queue_admin_set(struct jobstore *base, const char *queue, int enabled, int started,
			      const char *reason)
{
	struct params p = { 0 };

	p_text(&p, queue);
	if (enabled >= 0)
		p_int(&p, enabled);
	else
		p_text(&p, NULL);
	if (started >= 0)
		p_int(&p, started);
	else
		p_text(&p, NULL);
	p_text(&p, reason);
	return pg_exec(to_pg(base), ST_QADMIN_SET, &p);
}

static int pg_node_admin_set(struct jobstore *base, const char *node, int drain, const char *reason)
{
	struct params p = { 0 };

	p_text(&p, node);
	p_int(&p, drain);
	p_text(&p, reason);
	return pg_exec(to_pg(base), ST_NADMIN_SET, &p);
}

static int rows_load(struct pg_store *js, enum stmt_id id, int ncols,
		     int (*cb)(const char *key, long long a, long long b, const char *text, void *ud),
		     void *ud)
{
	struct params p = { 0 };
	struct jobstore_row row = { &pg_row_ops, NULL, 0 };
	PGresult *res;
	int r;

	res = pg_run(js, id, &p, &r);
	row.res = res;
	for (row.row = 0; res && r == 0 && row.row < PQntuples(res); row.row++)
		r = jobstore_row_admin(&row, ncols, cb, ud);
	PQclear(res);
	return r;
}

static int pg_admin_load(struct jobstore *base, const struct jobstore_admin_cbs *cbs, void *ud)
{
	struct pg_store *js = to_pg(base);
	int r;

	r = rows_load(js, ST_ROT_LOAD, 3, cbs->rotation, ud);
	if (r == 0)
		r = rows_load(js, ST_QADMIN_LOAD, 4, cbs->queue, ud);
	if (r == 0)
		r = rows_load(js, ST_NADMIN_LOAD, 4, cbs->node, ud);
	return r;
}

static int pg_node_put(struct jobstore *base, const struct jobstore_node *n)
{
	struct params p = { 0 };

	p_text(&p, n->name);
	p_text(&p, n->cpus);
	p_int(&p, n->ncpus);
	p_text(&p, n->mems);
	p_int(&p, (int64_t)n->mem);
	p_text(&p, n->topology);
	p_int(&p, n->rt);
	p_text(&p, n->cgroup);
	p_text(&p, n->address);
	p_int(&p, n->t_register);
	return pg_exec(to_pg(base), ST_NODE_PUT, &p);
}

/* Both deletes run now, not pipelined: -ENOENT needs their row counts. */
static int pg_node_delete(struct jobstore *base, const char *name)
{
	static const enum stmt_id ids[] = { ST_NODE_DELETE, ST_NODE_ADMIN_DELETE };
	struct pg_store *js = to_pg(base);
	struct params p = { 0 };
	long gone = 0;
	int r = 0;

	p_text(&p, name);
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]) && r == 0; i++) {
		PGresult *res = pg_run(js, ids[i], &p, &r);

		if (res)
			gone += strtol(PQcmdTuples(res), NULL, 10);
		PQclear(res);
	}
	if (r < 0)
		return r;
	return gone ? 0 : -ENOENT;
}

static int pg_nodes_load(struct jobstore *base, int (*cb)(const struct jobstore_node *n, void *ud), void *ud)
{
	struct params p = { 0 };
	struct jobstore_row row = { &pg_row_ops, NULL, 0 };
	struct jobstore_node n;
	PGresult *res;
	int r;

	res = pg_run(to_pg(base), ST_NODES_LOAD, &p, &r);
	row.res = res;
	for (row.row = 0; res && r == 0 && row.row < PQntuples(res); row.row++) {
		jobstore_row_node(&row, &n);
		r = cb(&n, ud);
	}
	PQclear(res);
	return r;
}

/* The shared statements' parameters as libpq's text ones. */
static void params_from(struct params *p, const struct jobstore_ev_params *ep)
{
	for (int i = 0; i < ep->n; i++) {
		if (ep->v[i].is_text)
			p_text(p, ep->v[i].text);
		else
			p_int(p, ep->v[i].i);
	}
}

static int pg_ev_run(struct jobstore *base, enum jobstore_ev_stmt id, const struct jobstore_ev_params *ep,
		     int (*cb)(const struct jobstore_row *r, void *ud), void *ud)
{
	struct pg_store *js = to_pg(base);
	struct params p = { 0 };
	struct jobstore_row row = { &pg_row_ops, NULL, 0 };
	PGresult *res;
	int r;

	params_from(&p, ep);
	/* An event of a transaction goes down its pipeline (libpq copies
	 * the parameters as it sends). */
	if (!cb && ep->ids) {
		char *ids = jobstore_ev_ids_text(ep, '{', '}');

		if (!ids)
			return -ENOMEM;
		p_text(&p, ids);
		r = pg_exec(js, ST_EV_JOB + id, &p);
		free(ids);
		return r;
	}
	if (!cb)
		return pg_exec(js, ST_EV_JOB + id, &p);
	res = pg_run(js, ST_EV_JOB + id, &p, &r);
	row.res = res;
	for (row.row = 0; res && r == 0 && row.row < PQntuples(res); row.row++)
		r = cb(&row, ud);
	PQclear(res);
	return r;
}

static int pg_sql_run(struct jobstore *base, const char *sql, const struct jobstore_ev_params *ep,
		      int (*cb)(const struct jobstore_row *r, void *ud), void *ud)
{
	struct pg_store *js = to_pg(base);
	struct params p = { 0 };
	struct jobstore_row row = { &pg_row_ops, NULL, 0 };
	ExecStatusType st;
	PGresult *res;
	int r;

	params_from(&p, ep);
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

static const char SQL_COUNT[] =
	"SELECT (SELECT count(*) FROM jobs),"
	" (SELECT count(*) FROM job_payload) + (SELECT count(*) FROM job_alloc) +"
	" (SELECT count(*) FROM iqs_rotation) + (SELECT count(*) FROM queue_admin) +"
	" (SELECT count(*) FROM node_admin) + (SELECT count(*) FROM nodes), (SELECT last FROM job_seq)";

static int pg_count(struct jobstore *base, int64_t *ret_jobs, int64_t *ret_other, int64_t *ret_last_id)
{
	struct pg_store *js = to_pg(base);
	PGresult *res = NULL;
	int r;

	r = pg_simple(js, SQL_COUNT, &res);
	if (r < 0)
		return r;
	*ret_jobs = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	*ret_other = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	*ret_last_id = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
	PQclear(res);
	return 0;
}

static int pg_rows_each(struct jobstore *base, const struct jobstore_table *t,
			int (*cb)(const char *const *values, void *ud), void *ud)
{
	struct pg_store *js = to_pg(base);
	const char *values[64];
	PGresult *res = NULL;
	char *sql;
	int r;

	if (t->ncols > (int)(sizeof(values) / sizeof(values[0])))
		return -E2BIG;
	if (asprintf(&sql, "SELECT %s FROM %s ORDER BY 1", t->columns, t->name) < 0)
		return -ENOMEM;
	r = pg_simple(js, sql, &res);
	free(sql);
	for (int i = 0; r == 0 && i < PQntuples(res); i++) {
		for (int c = 0; c < t->ncols; c++)
			values[c] = PQgetisnull(res, i, c) ? NULL : PQgetvalue(res, i, c);
		r = cb(values, ud);
	}
	PQclear(res);
	return r;
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

static int pg_lease_acquire(struct jobstore *base, const char *holder, const char *address, int64_t lease_ms,
			    int64_t *ret_epoch)
{
	struct params p = { 0 };
	PGresult *res;
	int r;

	r = lease_limits(to_pg(base), lease_ms);
	if (r < 0)
		return r;
	p_text(&p, holder);
	p_text(&p, address);
	p_int(&p, lease_ms);
	res = pg_run(to_pg(base), ST_LEASE_ACQUIRE, &p, &r);
	if (res && PQntuples(res) == 1)
		*ret_epoch = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	else if (res)
		r = -EBUSY;
	PQclear(res);
	return r;
}

/* In a transaction (the fence) BEGIN and this renewal go in one round
 * trip, read at once: a renewal that changed no row is -ESTALE before any
 * write is sent, and the door rolls the transaction back. Its row lock is
 * held to COMMIT: a takeover's UPDATE waits for this transaction, then
 * re-reads the row (READ COMMITTED) and finds the lease running. */
static int pg_lease_renew(struct jobstore *base, const char *holder, int64_t epoch, int64_t lease_ms)
{
	struct pg_store *js = to_pg(base);
	struct params p = { 0 };
	PGresult *res = NULL;
	int r;

	p_int(&p, lease_ms);
	p_text(&p, holder);
	p_int(&p, epoch);
	if (js->in_tx) {
		r = pg_send(js, ST_LEASE_RENEW, NULL, &p);
		if (r == 0)
			r = pg_drain(js, &res);
		else
			(void)pg_drain(js, NULL);
	} else {
		res = pg_run(js, ST_LEASE_RENEW, &p, &r);
	}
	if (r == 0 && (!res || PQntuples(res) != 1))
		r = -ESTALE;
	PQclear(res);
	return r;
}

static int pg_lease_release(struct jobstore *base, const char *holder, int64_t epoch)
{
	struct params p = { 0 };
	PGresult *res;
	int r;

	p_text(&p, holder);
	p_int(&p, epoch);
	res = pg_run(to_pg(base), ST_LEASE_RELEASE, &p, &r);
	if (res && strcmp(PQcmdTuples(res), "1") != 0)
		r = -ESTALE;
	PQclear(res);
	return r;
}

static int pg_lease_read(struct jobstore *base, struct jobstore_lease *ret)
{
	struct params p = { 0 };
	struct jobstore_row row = { &pg_row_ops, NULL, 0 };
	PGresult *res;
	int r;

	res = pg_run(to_pg(base), ST_LEASE_READ, &p, &r);
	row.res = res;
	if (res && PQntuples(res) == 1) {
		snprintf(ret->holder, sizeof(ret->holder), "%s", row_text_pg(&row, LEASE_HOLDER));
		snprintf(ret->address, sizeof(ret->address), "%s", row_text_pg(&row, LEASE_ADDRESS));
		ret->epoch = row_i64_pg(&row, LEASE_EPOCH);
		ret->expires = row_i64_pg(&row, LEASE_EXPIRES);
		ret->now = row_i64_pg(&row, LEASE_NOW);
	} else if (res) {
		r = -ENOENT;
	}
	PQclear(res);
	return r;
}

static int pg_server_seen(struct jobstore *base, const char *id, const char *address, const char *role)
{
	struct params p = { 0 };

	p_text(&p, id);
	p_text(&p, address);
	p_text(&p, role);
	return pg_exec(to_pg(base), ST_SERVER_SEEN, &p);
}

static int pg_servers_load(struct jobstore *base,
			   int (*cb)(const char *id, const char *address, const char *role, int64_t age_ms,
				     void *ud),
			   void *ud)
{
	struct params p = { 0 };
	struct jobstore_row row = { &pg_row_ops, NULL, 0 };
	PGresult *res;
	int r;

	res = pg_run(to_pg(base), ST_SERVERS_LOAD, &p, &r);
	row.res = res;
	for (row.row = 0; res && r == 0 && row.row < PQntuples(res); row.row++)
		r = cb(row_text_pg(&row, SERVER_ID), row_text_pg(&row, SERVER_ADDRESS),
		       row_text_pg(&row, SERVER_ROLE), row_i64_pg(&row, SERVER_AGE), ud);
	PQclear(res);
	return r;
}

static int pg_pool_name_read(struct jobstore *base, char *buf, size_t size)
{
	struct params p = { 0 };
	PGresult *res;
	int r;

	res = pg_run(to_pg(base), ST_POOL_NAME_READ, &p, &r);
	if (res && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
		snprintf(buf, size, "%s", PQgetvalue(res, 0, 0));
	else if (res)
		r = -ENOENT;
	PQclear(res);
	return r;
}

static int pg_pool_name_set(struct jobstore *base, const char *name)
{
	struct params p = { 0 };

	p_text(&p, name);
	return pg_exec(to_pg(base), ST_POOL_NAME_SET, &p);
}

static const struct jobstore_ops pg_ops = {
	.name = "postgresql",
	.close = pg_close,
	.begin = pg_begin,
	.commit = pg_commit,
	.rollback = pg_rollback,
	.checkpoint = pg_checkpoint,
	.job_insert = pg_job_insert,
	.job_set_state = pg_job_set_state,
	.job_dispatch = pg_job_dispatch,
	.alloc_insert = pg_alloc_insert,
	.alloc_result = pg_alloc_result,
	.job_requeue = pg_job_requeue,
	.job_begin_set = pg_job_begin_set,
	.job_estimate_set = pg_job_estimate_set,
	.job_alter = pg_job_alter,
	.job_finish = pg_job_finish,
	.load_active = pg_load_active,
	.query = pg_query,
	.alloc_json = pg_alloc_json,
	.payload_add = pg_payload_add,
	.job_launch = pg_job_launch,
	.subjob_insert = pg_subjob_insert,
	.subjobs_load = pg_subjobs_load,
	.array_finish = pg_array_finish,
	.job_depend_set = pg_job_depend_set,
	.rotation_set = pg_rotation_set,
	.queue_admin_set = pg_queue_admin_set,
	.node_admin_set = pg_node_admin_set,
	.admin_load = pg_admin_load,
	.node_put = pg_node_put,
	.node_delete = pg_node_delete,
	.nodes_load = pg_nodes_load,
	.describe = pg_describe,
	.count = pg_count,
	.rows_each = pg_rows_each,
	.copy_begin = pg_copy_begin,
	.copy_row = pg_copy_row,
	.copy_end = pg_copy_end,
	.last_id_set = pg_last_id_set,
	.lease_acquire = pg_lease_acquire,
	.lease_renew = pg_lease_renew,
	.lease_release = pg_lease_release,
	.lease_read = pg_lease_read,
	.server_seen = pg_server_seen,
	.pool_name_read = pg_pool_name_read,
	.pool_name_set = pg_pool_name_set,
	.sql_run = pg_sql_run,
	.ev_run = pg_ev_run,
	.servers_load = pg_servers_load,
};
