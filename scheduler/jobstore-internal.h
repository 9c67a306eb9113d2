/* SPDX-License-Identifier: MIT */
/* Inside the job store: the operations written once (jobstore-ops.c) over
 * the primitives each driver supplies (struct jobstore_driver: SQLite in
 * jobstore-sqlite.c, PostgreSQL in jobstore-pg.c), the SQL both take, and
 * the row readers (jobstore-rows.c), so a job object reads the same from
 * either. */
#ifndef QPOOL_JOBSTORE_INTERNAL_H
#define QPOOL_JOBSTORE_INTERNAL_H

#include "histogram.h"
#include "jobstore.h"

/* One schema version for both drivers: version N holds the same tables
 * and columns on SQLite and on PostgreSQL. A new version is one entry of
 * jobstore-sql.c's list (a driver's own only where the SQL differs). */
#define JOBSTORE_SCHEMA_VERSION 19

/* The columns every job query selects, in this order, on both backends. */
#define JOB_COLUMNS \
	"id, name, queue, owner, uid, gid, state, ncpus, mem, walltime, workdir," \
	" stdout, stderr, join_oe, rerunnable, node, cpus, exit_status, exit_signal," \
	" reason, cpu_ns, mem_peak, oom, t_submit, t_dispatch, t_launch, t_wrap," \
	" t_fenced, t_exec, t_exit, t_released, t_done,"  \
	" m_wrap, m_fenced, m_exec, m_exit, m_released, attrs, chunks, place, array_spec, array_id, array_index, depend"
enum {
	COL_ID, COL_NAME, COL_QUEUE, COL_OWNER, COL_UID, COL_GID, COL_STATE, COL_NCPUS,
	COL_MEM, COL_WALLTIME, COL_WORKDIR, COL_STDOUT, COL_STDERR, COL_JOIN,
	COL_RERUN, COL_NODE, COL_CPUS, COL_EXIT_STATUS, COL_EXIT_SIGNAL, COL_REASON,
	COL_CPU_NS, COL_MEM_PEAK, COL_OOM, COL_T_FIRST,
	COL_M_FIRST = COL_T_FIRST + STAMP_MAX,   /* m_wrap .. m_released */
	COL_ATTRS = COL_M_FIRST + STAMP_RELEASED - STAMP_WRAP + 1,
	COL_CHUNKS, COL_PLACE,
	COL_ARRAY_SPEC, COL_ARRAY_ID, COL_ARRAY_INDEX, COL_DEPEND,
	COL_ENV,   /* the launch query's payload: env, script */
	COL_LAUNCH_UMASK = COL_ENV + 2,   /* the launch query's last column */
};

/* The active-jobs query's columns (ST_ACTIVE). */
enum {
	ACT_ID, ACT_QUEUE, ACT_UID, ACT_STATE, ACT_NCPUS, ACT_MEM, ACT_WALLTIME, ACT_NODE,
	ACT_CPUS, ACT_T_SUBMIT, ACT_RERUN, ACT_T_DISPATCH, ACT_PRIORITY, ACT_START_AFTER,
	ACT_CHUNKS, ACT_PLACE, ACT_ARRAY_SPEC, ACT_ARRAY_ID, ACT_ARRAY_INDEX, ACT_DEPEND,
	ACT_REASON, ACT_NGPUS, ACT_NODELIST, ACT_EXCLUDE, ACT_CONSTRAINT,
	ACT_GPU_MODEL, ACT_LICENSES, ACT_NODE_RES, ACT_ACCOUNT, ACT_QOS, ACT_RESV, ACT_MEMS,
	ACT_SUSPENDED_BY,
};

/* One result row, read through its driver's accessors. */
struct jobstore_row;
struct jobstore_row_ops {
	bool (*null)(const struct jobstore_row *r, int col);
	int64_t (*i64)(const struct jobstore_row *r, int col);
	const char *(*text)(const struct jobstore_row *r, int col);   /* NULL when null */
};
struct jobstore_row {
	const struct jobstore_row_ops *ops;
	void *res;   /* sqlite3_stmt *, PGresult * */
	int row;
};

static inline bool row_null(const struct jobstore_row *r, int col)
{
	return r->ops->null(r, col);
}

static inline int64_t row_i64(const struct jobstore_row *r, int col)
{
	return r->ops->i64(r, col);
}

static inline const char *row_text(const struct jobstore_row *r, int col)
{
	return r->ops->text(r, col);
}

/* The job object (docs/PROTOCOL.md) of a JOB_COLUMNS row, without alloc,
 * exec_host or payload. */
json_t *jobstore_row_job_json(const struct jobstore_row *r);
/* job.launch's job part of a launch row (JOB_COLUMNS, env, script, umask). */
json_t *jobstore_row_launch_json(const struct jobstore_row *r);
/* env and script from columns env_col, env_col + 1, into o. */
void jobstore_row_payload_set(json_t *o, const struct jobstore_row *r, int env_col);
/* One job_alloc row (the alloc query's columns) as an "alloc" entry. */
json_t *jobstore_row_alloc_json(const struct jobstore_row *r);
/* Fills j->alloc[idx] from an alloc row; 0 or -ENOMEM. */
int jobstore_row_alloc_entry(const struct jobstore_row *r, struct job *j, unsigned idx);
/* A struct job from an SQL_ACTIVE row; its allocation rows are the
 * backend's to add (when j->n_chunks && j->n_alloc). 0 or -ENOMEM. */
int jobstore_row_active_job(const struct jobstore_row *r, struct job **ret);
/* One admin row of 3 or 4 columns to its callback (NULL integers: -1). */
int jobstore_row_admin(const struct jobstore_row *r, int ncols,
		       int (*cb)(const char *key, long long a, long long b, const char *text, void *ud),
		       void *ud);

/* A job object's exec_host and exec_vnode, from its alloc or its node. */
void jobstore_json_exec_host_set(json_t *o);

#define UMASK_DEFAULT 022

/* Schema 8, the nodes qpoold knows: the same SQL text on both backends.
 * Parameters are $N, in order of first use: PostgreSQL's form, which
 * SQLite also takes (a "$AAAA" name, numbered as it first appears).
 * INSERT ... ON CONFLICT ... DO UPDATE needs SQLite 3.24 (Debian 12 has
 * 3.40) or PostgreSQL 9.5. Integers are BIGINT: SQLite reads it as
 * INTEGER (64-bit), PostgreSQL's INTEGER would be 32-bit. */
#define JOBSTORE_SQL_NODES_CREATE \
	"CREATE TABLE nodes (name TEXT PRIMARY KEY, cpus TEXT NOT NULL, ncpus BIGINT NOT NULL," \
	" mems TEXT NOT NULL, mem BIGINT NOT NULL, topology TEXT, rt INTEGER NOT NULL," \
	" cgroup TEXT NOT NULL, address TEXT NOT NULL, t_register BIGINT NOT NULL);"
#define JOBSTORE_SQL_NODE_PUT \
	"INSERT INTO nodes (name, cpus, ncpus, mems, mem, topology, rt, cgroup, address, t_register)" \
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)" \
	" ON CONFLICT (name) DO UPDATE SET cpus = excluded.cpus, ncpus = excluded.ncpus," \
	" mems = excluded.mems, mem = excluded.mem, topology = excluded.topology, rt = excluded.rt," \
	" cgroup = excluded.cgroup, address = excluded.address, t_register = excluded.t_register"
/* The columns of JOBSTORE_SQL_NODES_LOAD, in order. */
enum {
	NODE_NAME, NODE_CPUS, NODE_NCPUS, NODE_MEMS, NODE_MEM, NODE_TOPOLOGY, NODE_RT, NODE_CGROUP,
	NODE_ADDRESS, NODE_T_REGISTER,
};
#define JOBSTORE_SQL_NODES_LOAD \
	"SELECT name, cpus, ncpus, mems, mem, topology, rt, cgroup, address, t_register FROM nodes ORDER BY name"
#define JOBSTORE_SQL_NODE_DELETE "DELETE FROM nodes WHERE name = $1"
#define JOBSTORE_SQL_NODE_ADMIN_DELETE "DELETE FROM node_admin WHERE node = $1"

/* Schema 9, leadership (docs/HA.md): one lease row and the servers seen.
 * Times are milliseconds on the store's own clock, never a qpoold's: each
 * statement takes its backend's expression for "now" in ms (NOW), so two
 * servers with skewed clocks still agree on when a lease ends. SQLite:
 * JOBSTORE_SQLITE_NOW_MS; PostgreSQL: CAST(EXTRACT(EPOCH FROM
 * clock_timestamp()) * 1000 AS BIGINT). */
#define JOBSTORE_SQL_LEASE_CREATE \
	"CREATE TABLE lease (id INTEGER PRIMARY KEY CHECK (id = 1), holder TEXT NOT NULL," \
	" address TEXT NOT NULL, epoch BIGINT NOT NULL, expires BIGINT NOT NULL);" \
	"INSERT INTO lease (id, holder, address, epoch, expires) VALUES (1, '', '', 0, 0);" \
	"CREATE TABLE servers (id TEXT PRIMARY KEY, address TEXT NOT NULL, role TEXT NOT NULL," \
	" seen BIGINT NOT NULL);"
/* $1 holder, $2 address, $3 lease ms: taken when free, expired, or still
 * this holder's own (a restart of the same server_id); one row and the new
 * epoch back, or none. */
#define JOBSTORE_SQL_LEASE_ACQUIRE(NOW) \
	"UPDATE lease SET holder = $1, address = $2, epoch = epoch + 1, expires = " NOW " + $3" \
	" WHERE id = 1 AND (holder = '' OR holder = $1 OR expires <= " NOW ") RETURNING epoch"
/* $1 lease ms, $2 holder, $3 epoch: the fence. No row changed: the lease is
 * no longer (holder, epoch)'s. Runs alone (a renewal) and as the first
 * statement of every write transaction of an active server: its row lock
 * (PostgreSQL) or the write lock (SQLite) holds a takeover off until that
 * transaction ends, and a takeover that came first makes it change nothing. */
#define JOBSTORE_SQL_LEASE_RENEW(NOW) \
	"UPDATE lease SET expires = " NOW " + $1 WHERE id = 1 AND holder = $2 AND epoch = $3"
/* $1 holder, $2 epoch: a clean stop hands the lease on at once. */
#define JOBSTORE_SQL_LEASE_RELEASE(NOW) \
	"UPDATE lease SET expires = " NOW " WHERE id = 1 AND holder = $1 AND epoch = $2"
enum { LEASE_HOLDER, LEASE_ADDRESS, LEASE_EPOCH, LEASE_EXPIRES, LEASE_NOW };
#define JOBSTORE_SQL_LEASE_READ(NOW) \
	"SELECT holder, address, epoch, expires, " NOW " FROM lease WHERE id = 1"
/* $1 id, $2 address, $3 role. */
#define JOBSTORE_SQL_SERVER_SEEN(NOW) \
	"INSERT INTO servers (id, address, role, seen) VALUES ($1, $2, $3, " NOW ")" \
	" ON CONFLICT (id) DO UPDATE SET address = excluded.address, role = excluded.role," \
	" seen = excluded.seen"
enum { SERVER_ID, SERVER_ADDRESS, SERVER_ROLE, SERVER_AGE };
#define JOBSTORE_SQL_SERVERS_LOAD(NOW) \
	"SELECT id, address, role, " NOW " - seen FROM servers ORDER BY id"

/* Schema 11, the pool's name (docs/HA.md, "What names a job id"): one
 * row, written by the first server to be active (its [server] name, else
 * its short host name) or by an active whose [server] name differs; the
 * suffix of every job id any server of the pool prints. */
#define JOBSTORE_SQL_POOL_CREATE \
	"CREATE TABLE pool (id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL);"
#define JOBSTORE_SQL_POOL_NAME_READ "SELECT name FROM pool WHERE id = 1"
/* $1 name. */
#define JOBSTORE_SQL_POOL_NAME_SET \
	"INSERT INTO pool (id, name) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET name = excluded.name"

/* Schema 12, the event stream (docs/EVENTS.md): one row per change of a
 * job's or a node's state, written in the transaction of the change.
 * seq is the store's, one more than the last (a single writer, fenced by
 * the lease, makes MAX + 1 unambiguous; a sequence object's nextval would
 * leave holes at every rollback). A job event copies the job row as the
 * transaction leaves it. Parameters are CAST: PostgreSQL does not infer a
 * type for a parameter in INSERT ... SELECT's select list. */
#define JOBSTORE_SQL_EVENTS_TABLE(NAME, SEQ) \
	"CREATE TABLE " NAME " (seq " SEQ " PRIMARY KEY, t BIGINT NOT NULL, epoch BIGINT NOT NULL," \
	" jobid BIGINT, uid BIGINT, node TEXT, state TEXT NOT NULL, exit_status BIGINT," \
	" exit_signal BIGINT, reason TEXT);"
#define JOBSTORE_SQL_EVENTS_CREATE JOBSTORE_SQL_EVENTS_TABLE("events", "BIGINT")
/* On SQLite seq is the rowid (INTEGER PRIMARY KEY, 64-bit there): one
 * b-tree per event, not a table and its index (bench/events). */
#define JOBSTORE_SQL_EVENTS_CREATE_SQLITE JOBSTORE_SQL_EVENTS_TABLE("events", "INTEGER")
enum jobstore_ev_stmt {
	EV_JOB,      /* $1 t, $2 epoch, $3 the job ids (params' ids), one event each in order */
	EV_NODE,     /* $1 t, $2 epoch, $3 node, $4 state, $5 reason, $6 uid (text, NULL: qpoold) */
	EV_READ,     /* $1 after seq, $2 limit: rows of EV_COL_* */
	EV_BOUNDS,   /* one row: first seq, last seq (0, 0: none) */
	EV_PRUNE,    /* $1 before t, $2 limit: the seqs deleted */
	EV_JOB_RANGE, /* $1 t, $2 epoch, $3 first id, $4 last id: EV_JOB of a list first..last */
	EV_MAX,
};
#define JOBSTORE_SQL_EV_NEXT "(SELECT coalesce(max(seq), 0) + 1 FROM events)"
/* The jobs' events of a transaction in one statement, numbered by
 * their positions in the list, the order of their changes: SQLite walks
 * a JSON array (key from 0), PostgreSQL an array parameter (ordinality
 * from 1). No window function (a sort of the list per commit): every
 * job of the list is there, as a job's row is never deleted and its
 * event is noted only after its write succeeded, so the positions leave
 * no hole. */
#define JOBSTORE_SQL_EV_JOBS(LIST, SEQ) \
	"INSERT INTO events (seq, t, epoch, jobid, uid, node, state, exit_status, exit_signal, reason)" \
	" SELECT (SELECT coalesce(max(seq), 0) FROM events) + " SEQ "," \
	" CAST($1 AS BIGINT), CAST($2 AS BIGINT), j.id, j.uid, j.node, j.state, j.exit_status, j.exit_signal," \
	" j.reason FROM " LIST " JOIN jobs j ON j.id = p.id ORDER BY p.k"
/* On SQLite seq is the rowid: left out, each row gets the last rowid + 1
 * as it is inserted, in the select's order, the same numbers as above
 * without the select reading events (an INSERT whose select reads its
 * own table is first copied whole into a temporary table: ~2x the
 * insert's cost, bench/events). */
#define JOBSTORE_SQL_EV_JOBS_ROWID(FROM) \
	"INSERT INTO events (t, epoch, jobid, uid, node, state, exit_status, exit_signal, reason)" \
	" SELECT CAST($1 AS BIGINT), CAST($2 AS BIGINT), j.id, j.uid, j.node, j.state, j.exit_status," \
	" j.exit_signal, j.reason FROM " FROM
#define JOBSTORE_SQL_EV_JOBS_SQLITE \
	JOBSTORE_SQL_EV_JOBS_ROWID("(SELECT key AS k, value AS id FROM json_each($3)) AS p" \
				   " JOIN jobs j ON j.id = p.id ORDER BY p.k")
#define JOBSTORE_SQL_EV_JOBS_PG \
	JOBSTORE_SQL_EV_JOBS("unnest(CAST($3 AS BIGINT[])) WITH ORDINALITY AS p(id, k)", "p.k")
/* EV_JOB of a list that is a run of ids (first, first + 1, ... last: a
 * submit group, whose ids are taken in a row): a range of the jobs' key,
 * read in order, with no list to write as text, parse and join. Every id
 * of the run is a job of the list, so the range holds those jobs alone,
 * numbered as EV_JOB would. The parameters appear in their order (SQLite
 * numbers $N names by first appearance). */
#define JOBSTORE_SQL_EV_RANGE_WHERE \
	" WHERE j.id BETWEEN CAST($3 AS BIGINT) AND CAST($4 AS BIGINT) ORDER BY j.id"
#define JOBSTORE_SQL_EV_JOB_RANGE_SQLITE JOBSTORE_SQL_EV_JOBS_ROWID("jobs j" JOBSTORE_SQL_EV_RANGE_WHERE)
#define JOBSTORE_SQL_EV_JOB_RANGE_PG \
	"INSERT INTO events (t, epoch, seq, jobid, uid, node, state, exit_status, exit_signal, reason)" \
	" SELECT CAST($1 AS BIGINT), CAST($2 AS BIGINT)," \
	" (SELECT coalesce(max(seq), 0) FROM events) + (j.id - CAST($3 AS BIGINT)) + 1," \
	" j.id, j.uid, j.node, j.state, j.exit_status, j.exit_signal, j.reason FROM jobs j" \
	JOBSTORE_SQL_EV_RANGE_WHERE
#define JOBSTORE_SQL_EV_NODE \
	"INSERT INTO events (seq, t, epoch, node, state, reason, uid)" \
	" VALUES (" JOBSTORE_SQL_EV_NEXT ", CAST($1 AS BIGINT), CAST($2 AS BIGINT), $3, $4, $5, CAST($6 AS BIGINT))"
enum {
	EV_COL_SEQ, EV_COL_T, EV_COL_EPOCH, EV_COL_JOBID, EV_COL_UID, EV_COL_NODE, EV_COL_STATE,
	EV_COL_EXIT_STATUS, EV_COL_EXIT_SIGNAL, EV_COL_REASON,
};
#define JOBSTORE_SQL_EV_READ \
	"SELECT seq, t, epoch, jobid, uid, node, state, exit_status, exit_signal, reason FROM events" \
	" WHERE seq > CAST($1 AS BIGINT) ORDER BY seq LIMIT CAST($2 AS BIGINT)"
#define JOBSTORE_SQL_EV_BOUNDS "SELECT coalesce(min(seq), 0), coalesce(max(seq), 0) FROM events"
/* Of the oldest $2 events, those before $1. No index on t: t grows with
 * seq (the writer's wall clock at its commit), so the old ones are the
 * first by seq, and an index more would cost every event's insert. The
 * last row stays whatever its age: it carries the sequence on. */
#define JOBSTORE_SQL_EV_PRUNE \
	"DELETE FROM events WHERE t < CAST($1 AS BIGINT) AND seq IN (SELECT seq FROM events ORDER BY seq" \
	" LIMIT CAST($2 AS BIGINT)) AND seq < (SELECT max(seq) FROM events) RETURNING seq"

/* Schema 13, accounts (docs/ACCOUNTS.md): the same SQL on both backends,
 * run through the drivers' run_text (accounts-store.c holds the
 * statements). A user's association is a row of account_users; at most
 * one row of a user has is_default 1. */
#define JOBSTORE_SQL_ACCOUNTS_CREATE \
	"CREATE TABLE accounts (name TEXT PRIMARY KEY, parent TEXT, shares BIGINT NOT NULL," \
	" description TEXT);" \
	"CREATE TABLE account_users (account TEXT NOT NULL REFERENCES accounts(name)," \
	" user_name TEXT NOT NULL, is_default INTEGER NOT NULL, PRIMARY KEY (account, user_name));"
/* QOS, the QOS each user may use, and CPU-/GPU-minute budgets of accounts
 * and users (docs/QOS.md): the same text on both backends. A QOS's limits
 * are a JSON object of integers, a user's QOS a comma list (qos.c). */
#define JOBSTORE_SQL_QOS_CREATE \
	"CREATE TABLE qos (name TEXT PRIMARY KEY, priority BIGINT NOT NULL, limits TEXT," \
	" preempt TEXT, preempt_mode TEXT, description TEXT);" \
	"CREATE TABLE qos_users (user_name TEXT PRIMARY KEY, qos TEXT NOT NULL, default_qos TEXT);" \
	"CREATE TABLE budgets (kind TEXT NOT NULL, name TEXT NOT NULL, cpu_mins BIGINT, gpu_mins BIGINT," \
	" PRIMARY KEY (kind, name));"

/* Schema 15, reservations (docs/RESERVATIONS.md), the same SQL on both
 * backends (resv.c holds the statements): nodes "ALL" or a comma list;
 * users, grps, accounts comma lists (NULL: none); flags Slurm's words;
 * count the occurrences a standing one has left (NULL: for ever). */
#define JOBSTORE_SQL_RESV_CREATE \
	"CREATE TABLE reservations (name TEXT PRIMARY KEY, id BIGINT NOT NULL, t_start BIGINT NOT NULL," \
	" t_end BIGINT NOT NULL, nodes TEXT NOT NULL, users TEXT, grps TEXT, accounts TEXT, flags TEXT," \
	" count BIGINT);"

/* One statement's parameters, in $N order: int64, text, or NULL (a
 * text of NULL). Each driver binds them by index its own way. */
#define JOBSTORE_PARAMS_MAX 26
struct jobstore_ev_params {
	int n;
	struct {
		const char *text;   /* used when is_text (NULL: SQL NULL) */
		int64_t i;
		bool is_text;
	} v[JOBSTORE_PARAMS_MAX];
	const int64_t *ids;     /* EV_JOB's list, its last parameter */
	size_t n_ids;
};

/* SQL written once above both backends (the same text on each): a write
 * of several statements in one transaction (the caller's, else its
 * own), each taking the first n_params of p; and a read, each row to cb. */
struct jobstore_sql {
	const char *sql;
	int n_params;
};
int jobstore_sql_write(struct jobstore *js, const struct jobstore_sql *stmts, size_t n,
		       const struct jobstore_ev_params *p);
int jobstore_sql_rows(struct jobstore *js, const char *sql, const struct jobstore_ev_params *p,
		      int (*cb)(const struct jobstore_row *r, void *ud), void *ud);

/* A struct jobstore_node of a JOBSTORE_SQL_NODES_LOAD row (its strings
 * point into the row). */
void jobstore_row_node(const struct jobstore_row *r, struct jobstore_node *ret);

/* A table as qpoold --migrate copies it: every column, by name. */
struct jobstore_table {
	const char *name;
	const char *columns;   /* "a, b, c" */
	int ncols;
};
/* Every table of the schema (JOBSTORE_SCHEMA_VERSION), parents first;
 * ends with { NULL }. */
extern const struct jobstore_table jobstore_tables[];
/* The schema's tables qpoold --migrate leaves behind, on purpose: the
 * lease and the servers seen belong to the servers running on a store,
 * so a migrated store starts with no holder. Ends with NULL. */
extern const char *const jobstore_tables_uncopied[];

/* The statements written once (jobstore-ops.c holds their text, $N
 * parameters, and each binder), prepared by every driver at open. */
enum jobstore_stmt {
	ST_SET_STATE, ST_DISPATCH, ST_REQUEUE, ST_FINISH, ST_ACTIVE, ST_QUERY, ST_QUERY_ID, ST_LAUNCH,
	ST_PAYLOAD, ST_ROT_SET, ST_ROT_LOAD, ST_QADMIN_SET, ST_QADMIN_LOAD, ST_NADMIN_SET, ST_NADMIN_LOAD,
	ST_ALTER, ST_BEGIN_SET, ST_ESTIMATE_SET, ST_ESTIMATE_FIRST, ST_ALLOC_INSERT, ST_ALLOC_DELETE,
	ST_ALLOC_RESULT, ST_ALLOC_LOAD, ST_SUBJOB_INSERT, ST_SUBJOBS, ST_ARRAY_FINISH, ST_DEPEND_SET,
	ST_NODE_PUT, ST_NODE_DELETE, ST_NODE_ADMIN_DELETE, ST_NODES_LOAD, ST_LEASE_ACQUIRE, ST_LEASE_RENEW,
	ST_LEASE_RELEASE, ST_LEASE_READ, ST_SERVER_SEEN, ST_SERVERS_LOAD, ST_POOL_NAME_READ, ST_POOL_NAME_SET,
	ST_EV_JOB, ST_EV_NODE, ST_EV_READ, ST_EV_BOUNDS, ST_EV_PRUNE, ST_EV_JOB_RANGE,
	ST_MAX,   /* a driver's own statements (its insert, BEGIN, ...) are numbered from here */
};

/* How a driver runs a prepared statement. */
enum jobstore_run {
	RUN_WRITE,   /* no rows read; in a transaction its answer may come at commit */
	RUN_ONE,     /* a write that must change one row: -ENOENT (at commit, in a transaction) */
	RUN_COUNT,   /* a write run now: returns the rows it changed */
	RUN_ROWS,    /* each row to cb; a negative return of cb stops and is returned */
};

/* One engine: the primitives the operations (jobstore-ops.c) run on. The
 * only code that knows SQLite (jobstore-sqlite.c) or libpq (jobstore-pg.c). */
struct jobstore_driver {
	const char *name;
	/* Fragments of the shared texts: {NOW}, the store's clock in ms (an
	 * SQL expression), and {ATTR:key}, attrs' key as text (the key
	 * between attr_open and attr_close); an id list parameter's brackets. */
	const char *now_ms;
	const char *attr_open, *attr_close;
	const char *add_column;   /* {ADD_COLUMN}: "ADD COLUMN", maybe IF NOT EXISTS */
	const char *last_id;      /* {LAST_ID}: the last job id given, an SQL expression */
	char list_open, list_close;
	/* The driver's own text of a statement where the engines' SQL truly
	 * differs (JSON functions, the events' numbering), by id; NULL: the
	 * shared one. */
	const char *const *texts;
	/* Its schema starts at first_version; its own migrations by version
	 * (JOBSTORE_SCHEMA_VERSION + 1 entries), NULL: the shared one. */
	int first_version;
	const char *const *migrations;

	/* Connects, creates or migrates the schema, prepares the driver's
	 * own statements. */
	int (*open)(const char *where, struct jobstore **ret, struct error *err);
	void (*close)(struct jobstore *js);
	/* Prepares statement id (kept for the handle's life); one: it is run
	 * RUN_ONE. 0 or -errno, error_text then telling why. */
	int (*prepare)(struct jobstore *js, int id, const char *sql, bool one);
	const char *(*error_text)(struct jobstore *js);
	/* Binds p (int64, text, NULL by index) to statement id and runs it. */
	int (*run)(struct jobstore *js, int id, const struct jobstore_ev_params *p, enum jobstore_run how,
		   int (*cb)(const struct jobstore_row *r, void *ud), void *ud);
	/* The same for SQL text not kept prepared (the rare writes and loads
	 * of accounts-store.c, recset.c): each row to cb. */
	int (*run_text)(struct jobstore *js, const char *sql, const struct jobstore_ev_params *p,
			int (*cb)(const struct jobstore_row *r, void *ud), void *ud);
	int (*begin)(struct jobstore *js);
	/* A begin whose commit need not reach the disk before it returns (a
	 * lease's renewal: docs/HA.md, "The lease's commit"); a later
	 * durable commit makes it durable too. NULL: begin. */
	int (*begin_lazy)(struct jobstore *js);
	int (*commit)(struct jobstore *js);
	void (*rollback)(struct jobstore *js);
	int (*checkpoint)(struct jobstore *js);
	/* A job's row (cols: the 22 columns of JOBSTORE_SQL_INSERT_COLS, in
	 * order) and payload, its id the next one, and reserve more ids after
	 * it (an array's subjobs): the engines' ids differ (SQLite's
	 * AUTOINCREMENT, PostgreSQL's job_seq row). */
	int (*job_insert)(struct jobstore *js, const struct jobstore_ev_params *cols, int64_t reserve,
			  const char *env, const char *script, int64_t *ret_id);
	/* Before a lease is taken: the session's limits in its terms; NULL: none. */
	int (*lease_session)(struct jobstore *js, int64_t lease_ms);

	/* For qpoold --migrate (jobstore_copy). */
	/* "sqlite PATH", "postgresql HOST:PORT/DB": no secret in it. */
	void (*describe)(struct jobstore *js, char *buf, size_t size);
	/* Bulk load into t (inside a transaction); NULL where the engine
	 * is never a target. */
	int (*copy_begin)(struct jobstore *js, const struct jobstore_table *t);
	int (*copy_row)(struct jobstore *js, const struct jobstore_table *t, const char *const *values);
	int (*copy_end)(struct jobstore *js);
	/* The last id given becomes last (ids continue past it). */
	int (*last_id_set)(struct jobstore *js, int64_t last);
};

/* The columns a job's insert writes, $1..$22 in this order. */
#define JOBSTORE_SQL_INSERT_COLS \
	"name, queue, owner, uid, gid, state, ncpus, mem, walltime, workdir, stdout, stderr, join_oe," \
	" rerunnable, t_submit, umask, attrs, chunks, place, array_spec, depend, reason"

/* A shared text with drv's fragments ({NOW}, {ATTR:key}, {ADD_COLUMN}, {LAST_ID})
 * filled in (malloc'd); NULL: out of memory. */
char *jobstore_sql_expand(const struct jobstore_driver *drv, const char *text);
/* The migration that leads drv's store to version, expanded (malloc'd
 * into *ret); -EINVAL: none. */
int jobstore_migration(const struct jobstore_driver *drv, int version, char **ret);

extern const struct jobstore_driver jobstore_driver_sqlite;
extern const struct jobstore_driver jobstore_driver_pg;

/* The operations, written once above the drivers (jobstore-ops.c): the
 * ones jobstore.h declares that need nothing of the door are defined
 * there under their own names; these the door (jobstore.c) wraps with a
 * transaction, an event or the lease's state. */
int jobstore_op_job_insert(struct jobstore *js, const struct job_submit *s, int64_t *ret_id);
int jobstore_op_job_set_state(struct jobstore *js, int64_t id, enum job_state state, const char *reason);
int jobstore_op_job_dispatch(struct jobstore *js, int64_t id, const char *node, const char *cpus, const char *mems,
			     int64_t t_dispatch);
/* Back to queued, its allocation rows deleted. */
int jobstore_op_job_requeue(struct jobstore *js, int64_t id, const char *reason);
int jobstore_op_job_finish(struct jobstore *js, int64_t id, const struct job_result *res, int64_t t_done);
/* The rows of f as job objects (jobstore_row_job_json), id order. */
int jobstore_op_query(struct jobstore *js, const struct jobstore_filter *f, json_t **ret_array);
/* Job id's "alloc" array (empty when none). */
json_t *jobstore_op_alloc_json(struct jobstore *js, int64_t id);
/* Job id's env and script into o; -ENOENT. */
int jobstore_op_payload_add(struct jobstore *js, int64_t id, json_t *o);
int jobstore_op_subjob_insert(struct jobstore *js, int64_t array_id, int64_t id, int64_t index,
			      enum job_state state, const char *reason);
int jobstore_op_array_finish(struct jobstore *js, int64_t id, enum job_state state, int exit_status,
			     const char *reason, int64_t t_done);
/* *ret_t_drain (may be NULL): the drain's stored wall seconds, 0 if none. */
int jobstore_op_node_admin_set(struct jobstore *js, const char *node, int drain, const char *reason,
			       int64_t *ret_t_drain);
int jobstore_op_node_put(struct jobstore *js, const struct jobstore_node *n);
int jobstore_op_node_delete(struct jobstore *js, const char *name);
/* The lease (JOBSTORE_SQL_LEASE_*): acquire gives the new epoch or
 * -EBUSY; renew and release -ESTALE when no row changed. Renew runs
 * inside the caller's transaction when there is one. */
int jobstore_op_lease_acquire(struct jobstore *js, const char *holder, const char *address, int64_t lease_ms,
			      int64_t *ret_epoch);
int jobstore_op_lease_renew(struct jobstore *js, const char *holder, int64_t epoch, int64_t lease_ms);
int jobstore_op_lease_release(struct jobstore *js, const char *holder, int64_t epoch);
/* The event statements: a write inside the open transaction (its
 * answer may come at commit), or a read whose rows go to cb one by one
 * (a negative return stops and is returned). */
int jobstore_op_ev_run(struct jobstore *js, enum jobstore_ev_stmt id, const struct jobstore_ev_params *p,
		       int (*cb)(const struct jobstore_row *r, void *ud), void *ud);
/* For qpoold --migrate (jobstore_copy): rows in the store (jobs, the
 * other tables', the last id given); every row of t, its columns as text
 * (NULL: SQL NULL), in primary key order. */
int jobstore_op_count(struct jobstore *js, int64_t *ret_jobs, int64_t *ret_other, int64_t *ret_last_id);
int jobstore_op_rows_each(struct jobstore *js, const struct jobstore_table *t,
			  int (*cb)(const char *const *values, void *ud), void *ud);
/* Prepares every statement of jobstore-ops.c on js's driver. */
int jobstore_ops_prepare(struct jobstore *js, struct error *err);

struct jobstore_ev_pending {
	int64_t jobid;          /* 0: a node's */
	char *node;
	const char *state;      /* a node's: static text */
	char *reason;
	int64_t uid;            /* a node's: who changed it; -1: qpoold */
};

/* Each driver's struct starts with this. */
struct jobstore {
	const struct jobstore_driver *drv;
	uint64_t rows_read;     /* job rows jobstore_query made, ever */
	struct histogram commit_hist;   /* jobstore_commit's time, the successful ones */
	/* The fence (jobstore_lease_acquire): set, every write transaction
	 * first renews the lease at (holder, epoch), or is refused. */
	char holder[JOBSTORE_HOLDER_MAX];
	int64_t epoch;
	int64_t lease_ms;
	bool lease_lost;
	/* The transaction jobstore_begin opened, and the changes in it that
	 * are events: written, in order, just before its commit. */
	bool in_tx;
	bool events_off;        /* bench only: QP_EVENTS_OFF=1 */
	struct jobstore_ev_pending *ev;
	size_t n_ev, cap_ev;
	size_t n_ev_written;    /* of the open transaction, written before its commit (jobstore_events_write) */
	uint64_t ev_committed;  /* events this handle committed, ever */
};


#endif
