/* SPDX-License-Identifier: MIT */
/* The job store's operations, written once above its two drivers: one SQL
 * text per statement ($N parameters, types by CAST, which both engines
 * take), one binder per operation, each row read through the row
 * accessors. A driver (jobstore-sqlite.c, jobstore-pg.c) supplies the
 * primitives (struct jobstore_driver): prepare, bind and run, begin and
 * commit, the engine's "now", and its own text where the engines' SQL
 * truly differs. The operations of jobstore.h that need nothing of the
 * door are defined here; the door (jobstore.c) wraps the rest
 * (jobstore_op_*) with its transactions and events. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobstore-internal.h"

/* The store's clock in ms ({NOW}, the driver's expression) in seconds. */
#define NOW_S "CAST({NOW} / 1000 AS BIGINT)"

static const struct {
	const char *sql;    /* NULL: each driver's own (jobstore_driver.texts) */
	bool one;           /* run RUN_ONE: it must change one row */
} stmts[ST_MAX] = {
	[ST_SET_STATE] = { "UPDATE jobs SET state = CAST($1 AS TEXT), reason = CAST($2 AS TEXT)"
			   " WHERE id = CAST($3 AS BIGINT)", true },
	/* mems: the NUMA nodes its memory is counted on (schema 18), in the
	 * same statement: no new one on the dispatch path (issue 39). */
	[ST_DISPATCH] = { "UPDATE jobs SET state = 'running', node = CAST($1 AS TEXT), cpus = CAST($2 AS TEXT),"
			  " t_dispatch = CAST($3 AS BIGINT), reason = NULL, mems = CAST($5 AS TEXT)"
			  " WHERE id = CAST($4 AS BIGINT)", true },
	/* attrs.run_count: how often the job was requeued (scontrol's
	 * Restarts; qstat -f's run_count counts its starts from it). */
	[ST_REQUEUE] = { NULL, true },
	/* A job across nodes used what each node reported (job_alloc, one
	 * row per node, cpu_ns set as each report comes): its CPU time is
	 * their sum, its peak memory the highest node's; a job on one node
	 * has no reports there and keeps its own figures. */
	[ST_FINISH] = { "UPDATE jobs SET state = CAST($1 AS TEXT), exit_status = CAST($2 AS INTEGER),"
			" exit_signal = CAST($3 AS INTEGER), reason = CAST($4 AS TEXT),"
			" cpu_ns = coalesce((SELECT sum(cpu_ns) FROM job_alloc WHERE job_id = CAST($20 AS BIGINT)),"
			" CAST($5 AS BIGINT)),"
			" mem_peak = coalesce((SELECT max(mem_peak) FROM job_alloc WHERE job_id = CAST($20 AS BIGINT)),"
			" CAST($6 AS BIGINT)),"
			" oom = CAST($7 AS INTEGER), t_launch = CAST($8 AS BIGINT), t_wrap = CAST($9 AS BIGINT),"
			" t_fenced = CAST($10 AS BIGINT), t_exec = CAST($11 AS BIGINT), t_exit = CAST($12 AS BIGINT),"
			" t_released = CAST($13 AS BIGINT), t_done = CAST($14 AS BIGINT), m_wrap = CAST($15 AS BIGINT),"
			" m_fenced = CAST($16 AS BIGINT), m_exec = CAST($17 AS BIGINT), m_exit = CAST($18 AS BIGINT),"
			" m_released = CAST($19 AS BIGINT) WHERE id = CAST($20 AS BIGINT)", true },
	/* The attributes are a JSON object of strings: {ATTR:key} is the
	 * key's text on either engine. */
	[ST_ACTIVE] = { "SELECT id, queue, uid, state, ncpus, mem, walltime, node, cpus, t_submit, rerunnable,"
			" t_dispatch, {ATTR:Priority}, {ATTR:Execution_Time}, chunks, place, array_spec, array_id,"
			" array_index, depend, reason, {ATTR:Resource_List.ngpus}, {ATTR:Resource_List.nodelist},"
			" {ATTR:Resource_List.exclude}, {ATTR:Resource_List.constraint},"
			" {ATTR:Resource_List.gpu_model}, {ATTR:Resource_List.licenses},"
			" {ATTR:Resource_List.node_res}, {ATTR:Account_Name}, {ATTR:Resource_List.qos},"
			" {ATTR:reservation}, mems, {ATTR:suspended_by} FROM jobs WHERE state IN ('queued','held','running','exiting') ORDER BY id" },
	[ST_QUERY] = { "SELECT " JOB_COLUMNS " FROM jobs WHERE (CAST($1 AS BIGINT) = 0 OR id = CAST($1 AS BIGINT)"
		       " OR (CAST($8 AS BOOLEAN) AND array_id = CAST($1 AS BIGINT)))"
		       " AND (CAST($2 AS TEXT) IS NULL OR owner = CAST($2 AS TEXT))"
		       " AND (CAST($3 AS BOOLEAN) OR state IN ('queued','held','running','exiting'))"
		       " AND (CAST($4 AS BIGINT) = 0 OR t_done IS NULL OR t_done >= CAST($4 AS BIGINT))"
		       " AND (CAST($5 AS BIGINT) = 0 OR t_submit <= CAST($5 AS BIGINT))"
		       " AND id > CAST($6 AS BIGINT) AND (CAST($8 AS BOOLEAN) OR array_id IS NULL)"
		       " AND (NOT CAST($9 AS BOOLEAN) OR array_spec IS NULL) ORDER BY id LIMIT CAST($7 AS BIGINT)" },
	/* The same for one job: "($1 = 0 OR id = $1)" cannot use the
	 * primary key, so ST_QUERY scans every row; measured 85 s of
	 * dispatching for 100,000 jobs on 1,000 simulated nodes, as
	 * node_launch reads each job back. */
	[ST_QUERY_ID] = { "SELECT " JOB_COLUMNS " FROM jobs WHERE id = CAST($1 AS BIGINT)"
			  " AND (CAST($2 AS TEXT) IS NULL OR owner = CAST($2 AS TEXT))"
			  " AND (CAST($3 AS BOOLEAN) OR state IN ('queued','held','running','exiting'))"
			  " AND (CAST($4 AS BIGINT) = 0 OR t_done IS NULL OR t_done >= CAST($4 AS BIGINT))"
			  " AND (CAST($5 AS BIGINT) = 0 OR t_submit <= CAST($5 AS BIGINT))" },
	/* What job.launch carries of a job, payload included, in one look-up
	 * by primary key: node_launch's read-back through ST_QUERY_ID, a row
	 * object and a copy cost ~50,000 instructions per dispatch. */
	[ST_LAUNCH] = { "SELECT " JOB_COLUMNS ", p.env, p.script, jobs.umask FROM jobs"
			" JOIN job_payload p ON p.job_id = coalesce(jobs.array_id, jobs.id)"
			" WHERE jobs.id = CAST($1 AS BIGINT)" },
	[ST_PAYLOAD] = { "SELECT env, script FROM job_payload WHERE job_id ="
			 " coalesce((SELECT array_id FROM jobs WHERE id = CAST($1 AS BIGINT)), CAST($1 AS BIGINT))" },
	[ST_ROT_SET] = { "INSERT INTO iqs_rotation (queue, uid, seq) VALUES (CAST($1 AS TEXT), CAST($2 AS BIGINT),"
			 " CAST($3 AS BIGINT)) ON CONFLICT (queue, uid) DO UPDATE SET seq = excluded.seq" },
	[ST_ROT_LOAD] = { "SELECT queue, uid, seq FROM iqs_rotation" },
	[ST_QADMIN_SET] = { "INSERT INTO queue_admin (queue, enabled, started, reason) VALUES (CAST($1 AS TEXT),"
			    " CAST($2 AS INTEGER), CAST($3 AS INTEGER), CAST($4 AS TEXT))"
			    " ON CONFLICT (queue) DO UPDATE SET enabled = coalesce(CAST($2 AS INTEGER),"
			    " queue_admin.enabled), started = coalesce(CAST($3 AS INTEGER), queue_admin.started),"
			    " reason = CAST($4 AS TEXT)" },
	[ST_QADMIN_LOAD] = { "SELECT queue, enabled, started, reason FROM queue_admin" },
	/* t_drain: wall seconds on the store's clock, returned so qpoold
	 * shows the second it stored, not its own (they can straddle one). */
	[ST_NADMIN_SET] = { "INSERT INTO node_admin (node, drain, reason, t_drain) VALUES (CAST($1 AS TEXT),"
			    " CAST($2 AS INTEGER), CAST($3 AS TEXT), CASE WHEN CAST($2 AS INTEGER) > 0 THEN " NOW_S
			    " END) ON CONFLICT (node) DO UPDATE SET drain = CAST($2 AS INTEGER),"
			    " reason = CAST($3 AS TEXT), t_drain = excluded.t_drain RETURNING t_drain" },
	[ST_NADMIN_LOAD] = { "SELECT node, drain, t_drain, reason FROM node_admin" },
	[ST_ALTER] = { "UPDATE jobs SET name = CAST($1 AS TEXT), queue = CAST($2 AS TEXT), ncpus = CAST($3 AS BIGINT),"
		       " mem = CAST($4 AS BIGINT), walltime = CAST($5 AS BIGINT),"
		       " stdout = coalesce(CAST($6 AS TEXT), stdout), stderr = coalesce(CAST($7 AS TEXT), stderr),"
		       " join_oe = CAST($8 AS INTEGER), rerunnable = CAST($9 AS INTEGER),"
		       " attrs = coalesce(CAST($10 AS TEXT), attrs) WHERE id = CAST($11 AS BIGINT)"
		       " AND state IN ('queued','held')", true },
	/* qalter -a, scontrol update StartTime=: attrs.Execution_Time ($1
	 * epoch seconds as text), or none for 0; a job not ended yet (a
	 * running one keeps it for a start after a requeue). */
	[ST_BEGIN_SET] = { NULL, true },
	/* A start estimate kept beside the job (docs/ESTIMATES.md): $1 epoch
	 * seconds, $2 the job. The first one is kept once (a restart's
	 * replay does not overwrite it). */
	[ST_ESTIMATE_SET] = { NULL },
	[ST_ESTIMATE_FIRST] = { NULL },
	/* A node's share written again (a requeued job's next run) starts
	 * with no stamps. */
	[ST_ALLOC_INSERT] = { "INSERT INTO job_alloc (job_id, idx, node, ncpus, cpus, mems, mem, mpiprocs, ompthreads,"
			      " gpus) VALUES (CAST($1 AS BIGINT), CAST($2 AS INTEGER), CAST($3 AS TEXT),"
			      " CAST($4 AS BIGINT), CAST($5 AS TEXT), CAST($6 AS TEXT), CAST($7 AS BIGINT),"
			      " CAST($8 AS BIGINT), CAST($9 AS BIGINT), CAST($10 AS TEXT))"
			      " ON CONFLICT (job_id, idx) DO UPDATE SET node = excluded.node, ncpus = excluded.ncpus,"
			      " gpus = excluded.gpus, cpus = excluded.cpus, mems = excluded.mems, mem = excluded.mem,"
			      " mpiprocs = excluded.mpiprocs, ompthreads = excluded.ompthreads, t_launch = NULL,"
			      " t_wrap = NULL, t_fenced = NULL, t_exec = NULL, t_exit = NULL, t_released = NULL,"
			      " t_done = NULL, cpu_ns = NULL, mem_peak = NULL, result = NULL" },
	[ST_ALLOC_DELETE] = { "DELETE FROM job_alloc WHERE job_id = CAST($1 AS BIGINT)" },
	[ST_ALLOC_RESULT] = { "UPDATE job_alloc SET t_launch = CAST($1 AS BIGINT), t_wrap = CAST($2 AS BIGINT),"
			      " t_fenced = CAST($3 AS BIGINT), t_exec = CAST($4 AS BIGINT), t_exit = CAST($5 AS BIGINT),"
			      " t_released = CAST($6 AS BIGINT), t_done = CAST($7 AS BIGINT),"
			      " cpu_ns = CAST($8 AS BIGINT), mem_peak = CAST($9 AS BIGINT), result = CAST($10 AS TEXT)"
			      " WHERE job_id = CAST($11 AS BIGINT) AND idx = CAST($12 AS INTEGER)" },
	/* The last column: how many rows (struct job's allocation is sized
	 * at its first). */
	[ST_ALLOC_LOAD] = { "SELECT idx, node, ncpus, cpus, mems, mem, mpiprocs, ompthreads, t_launch, t_wrap,"
			    " t_fenced, t_exec, t_exit, t_released, t_done, cpu_ns, mem_peak, result, gpus,"
			    " count(*) OVER () FROM job_alloc WHERE job_id = CAST($1 AS BIGINT) ORDER BY idx" },
	/* A subjob's row, copied from its array's. */
	[ST_SUBJOB_INSERT] = { "INSERT INTO jobs (id, name, queue, owner, uid, gid, state, ncpus, mem, walltime,"
			       " workdir, stdout, stderr, join_oe, rerunnable, t_submit, umask, attrs, chunks, place,"
			       " array_id, array_index, reason) SELECT CAST($1 AS BIGINT), name, queue, owner, uid, gid,"
			       " CAST($2 AS TEXT), ncpus, mem, walltime, workdir, stdout, stderr, join_oe, rerunnable,"
			       " t_submit, umask, attrs, chunks, place, id, CAST($3 AS BIGINT), CAST($5 AS TEXT)"
			       " FROM jobs WHERE id = CAST($4 AS BIGINT)", true },
	[ST_SUBJOBS] = { "SELECT array_index, state, exit_status FROM jobs WHERE array_id = CAST($1 AS BIGINT)" },
	/* An array's own record: its state and status, and what its subjobs used. */
	[ST_ARRAY_FINISH] = { "UPDATE jobs SET state = CAST($1 AS TEXT), exit_status = CAST($2 AS INTEGER),"
			      " reason = CAST($3 AS TEXT), t_done = CAST($4 AS BIGINT),"
			      " cpu_ns = (SELECT sum(cpu_ns) FROM jobs WHERE array_id = CAST($5 AS BIGINT)),"
			      " mem_peak = (SELECT max(mem_peak) FROM jobs WHERE array_id = CAST($5 AS BIGINT)),"
			      " t_dispatch = (SELECT min(t_dispatch) FROM jobs WHERE array_id = CAST($5 AS BIGINT)),"
			      " t_exec = (SELECT min(t_exec) FROM jobs WHERE array_id = CAST($5 AS BIGINT)),"
			      " t_exit = (SELECT max(t_exit) FROM jobs WHERE array_id = CAST($5 AS BIGINT)),"
			      " t_released = (SELECT max(t_released) FROM jobs WHERE array_id = CAST($5 AS BIGINT))"
			      " WHERE id = CAST($5 AS BIGINT)", true },
	[ST_DEPEND_SET] = { "UPDATE jobs SET depend = CAST($1 AS TEXT) WHERE id = CAST($2 AS BIGINT)", true },
	[ST_NODE_PUT] = { JOBSTORE_SQL_NODE_PUT },
	[ST_NODE_DELETE] = { JOBSTORE_SQL_NODE_DELETE },
	[ST_NODE_ADMIN_DELETE] = { JOBSTORE_SQL_NODE_ADMIN_DELETE },
	[ST_NODES_LOAD] = { JOBSTORE_SQL_NODES_LOAD },
	[ST_LEASE_ACQUIRE] = { JOBSTORE_SQL_LEASE_ACQUIRE("{NOW}") },
	/* RETURNING: a renewal in a transaction tells by its rows whether it
	 * changed the lease, in the round trip of its BEGIN (PostgreSQL). */
	[ST_LEASE_RENEW] = { JOBSTORE_SQL_LEASE_RENEW("{NOW}") " RETURNING epoch" },
	[ST_LEASE_RELEASE] = { JOBSTORE_SQL_LEASE_RELEASE("{NOW}") },
	[ST_LEASE_READ] = { JOBSTORE_SQL_LEASE_READ("{NOW}") },
	[ST_SERVER_SEEN] = { JOBSTORE_SQL_SERVER_SEEN("{NOW}") },
	[ST_SERVERS_LOAD] = { JOBSTORE_SQL_SERVERS_LOAD("{NOW}") },
	[ST_POOL_NAME_READ] = { JOBSTORE_SQL_POOL_NAME_READ },
	[ST_POOL_NAME_SET] = { JOBSTORE_SQL_POOL_NAME_SET },
	[ST_EV_JOB] = { NULL },
	[ST_EV_NODE] = { JOBSTORE_SQL_EV_NODE },
	[ST_EV_READ] = { JOBSTORE_SQL_EV_READ },
	[ST_EV_BOUNDS] = { JOBSTORE_SQL_EV_BOUNDS },
	[ST_EV_PRUNE] = { JOBSTORE_SQL_EV_PRUNE },
	[ST_EV_JOB_RANGE] = { NULL },
};

int jobstore_ops_prepare(struct jobstore *js, struct error *err)
{
	const struct jobstore_driver *drv = js->drv;

	for (int i = 0; i < ST_MAX; i++) {
		const char *text = drv->texts && drv->texts[i] ? drv->texts[i] : stmts[i].sql;
		char *sql = text ? jobstore_sql_expand(drv, text) : NULL;
		int r;

		if (!sql)
			return error_set(err, text ? -ENOMEM : -EINVAL, "job store (%s): %s", drv->name,
					 text ? "out of memory" : "a statement without text");
		r = drv->prepare(js, i, sql, stmts[i].one);
		free(sql);
		if (r < 0)
			return error_set(err, r, "job store (%s): %s", drv->name, drv->error_text(js));
	}
	return 0;
}

static void p_int(struct jobstore_ev_params *p, int64_t i)
{
	p->v[p->n].is_text = false;
	p->v[p->n++].i = i;
}

static void p_text(struct jobstore_ev_params *p, const char *t)
{
	p->v[p->n].is_text = true;
	p->v[p->n++].text = t;
}

/* 0: not taken, NULL. */
static void p_stamp(struct jobstore_ev_params *p, int64_t t)
{
	if (t)
		p_int(p, t);
	else
		p_text(p, NULL);
}

static int run(struct jobstore *js, enum jobstore_stmt id, const struct jobstore_ev_params *p,
	       enum jobstore_run how)
{
	return js->drv->run(js, id, p, how, NULL, NULL);
}

static int rows(struct jobstore *js, enum jobstore_stmt id, const struct jobstore_ev_params *p,
		int (*cb)(const struct jobstore_row *r, void *ud), void *ud)
{
	return js->drv->run(js, id, p, RUN_ROWS, cb, ud);
}

/* The first row's first column into *ud; rows counted in its second. */
struct first_i64 {
	int64_t v;
	int n;
};

static int first_i64_row(const struct jobstore_row *r, void *ud)
{
	struct first_i64 *f = ud;

	if (f->n++ == 0)
		f->v = row_i64(r, 0);
	return 0;
}

int jobstore_op_job_insert(struct jobstore *js, const struct job_submit *s, int64_t *ret_id)
{
	struct jobstore_ev_params p = { 0 };

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
	return js->drv->job_insert(js, &p, s->array_count > 0 ? s->array_count : 0,
				   s->env_json ? s->env_json : "{}", s->script, ret_id);
}

int jobstore_op_job_set_state(struct jobstore *js, int64_t id, enum job_state state, const char *reason)
{
	struct jobstore_ev_params p = { 0 };

	p_text(&p, job_state_name(state));
	p_text(&p, reason);
	p_int(&p, id);
	return run(js, ST_SET_STATE, &p, RUN_ONE);
}

int jobstore_op_job_dispatch(struct jobstore *js, int64_t id, const char *node, const char *cpus,
			     const char *mems, int64_t t_dispatch)
{
	struct jobstore_ev_params p = { 0 };

	p_text(&p, node);
	p_text(&p, cpus);
	p_int(&p, t_dispatch);
	p_int(&p, id);
	p_text(&p, mems && *mems ? mems : NULL);
	return run(js, ST_DISPATCH, &p, RUN_ONE);
}

int jobstore_op_job_requeue(struct jobstore *js, int64_t id, const char *reason)
{
	struct jobstore_ev_params p = { 0 };
	int r;

	p_text(&p, reason);
	p_int(&p, id);
	r = run(js, ST_REQUEUE, &p, RUN_ONE);
	if (r < 0)
		return r;
	p.n = 0;
	p_int(&p, id);
	return run(js, ST_ALLOC_DELETE, &p, RUN_WRITE);
}

int jobstore_alloc_insert(struct jobstore *js, const struct job *j)
{
	int r = 0;

	for (unsigned i = 0; i < j->n_alloc && r == 0; i++) {
		const struct alloc_entry *e = &j->alloc[i];
		struct jobstore_ev_params p = { 0 };
		char cpus[4096], gpus[JOB_GPUS_TEXT_MAX];

		cpumask_format(&e->cpus, cpus, sizeof(cpus));
		if (e->gpus)
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
		r = run(js, ST_ALLOC_INSERT, &p, RUN_WRITE);
	}
	return r;
}

int jobstore_alloc_result(struct jobstore *js, int64_t id, unsigned idx, const struct job_result *res,
			   int64_t t_done, const char *result_json)
{
	struct jobstore_ev_params p = { 0 };

	for (int i = STAMP_LAUNCH; i <= STAMP_RELEASED; i++)
		p_stamp(&p, res->times[i]);
	p_stamp(&p, t_done);
	p_int(&p, res->cpu_ns);
	p_int(&p, res->mem_peak);
	p_text(&p, result_json);
	p_int(&p, id);
	p_int(&p, (int)idx);
	return run(js, ST_ALLOC_RESULT, &p, RUN_WRITE);
}

int jobstore_job_estimate_set(struct jobstore *js, int64_t id, bool first, int64_t t)
{
	struct jobstore_ev_params p = { 0 };

	p_int(&p, t);
	p_int(&p, id);
	return run(js, first ? ST_ESTIMATE_FIRST : ST_ESTIMATE_SET, &p, RUN_WRITE);
}

int jobstore_job_begin_set(struct jobstore *js, int64_t id, int64_t t)
{
	struct jobstore_ev_params p = { 0 };

	p_int(&p, t);
	p_int(&p, id);
	return run(js, ST_BEGIN_SET, &p, RUN_ONE);
}

int jobstore_job_alter(struct jobstore *js, int64_t id, const struct job_submit *a)
{
	struct jobstore_ev_params p = { 0 };

	p_text(&p, a->name);
	p_text(&p, a->queue);
	p_int(&p, a->ncpus);
	p_int(&p, (int64_t)a->mem);
	p_int(&p, (int64_t)a->walltime);
	p_text(&p, a->stdout_path);
	p_text(&p, a->stderr_path);
	p_int(&p, a->join);
	p_int(&p, a->rerunnable);
	p_text(&p, a->attrs_json);
	p_int(&p, id);
	return run(js, ST_ALTER, &p, RUN_ONE);
}

int jobstore_op_job_finish(struct jobstore *js, int64_t id, const struct job_result *res, int64_t t_done)
{
	struct jobstore_ev_params p = { 0 };

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
	return run(js, ST_FINISH, &p, RUN_ONE);
}

#define ALLOC_COL_COUNT 19   /* ST_ALLOC_LOAD's last column */

/* The allocation rows of job j->id into j (entries with names, cpus,
 * share); none: j keeps what it has. */
struct alloc_load {
	struct job *j;
	unsigned n;
	bool init;
};

static int alloc_load_row(const struct jobstore_row *r, void *ud)
{
	struct alloc_load *al = ud;
	int e;

	if (!al->init) {
		e = job_alloc_init(al->j, (unsigned)row_i64(r, ALLOC_COL_COUNT));
		if (e < 0)
			return e;
		al->init = true;
	}
	if (al->n >= al->j->n_alloc)
		return 0;
	return jobstore_row_alloc_entry(r, al->j, al->n++);
}

static int alloc_load(struct jobstore *js, struct job *j)
{
	struct jobstore_ev_params p = { 0 };
	struct alloc_load al = { .j = j };

	p_int(&p, j->id);
	return rows(js, ST_ALLOC_LOAD, &p, alloc_load_row, &al);
}

static int alloc_json_row(const struct jobstore_row *r, void *ud)
{
	json_array_append_new(ud, jobstore_row_alloc_json(r));
	return 0;
}

/* A job object's "alloc": each node's share and stamps, job order. */
json_t *jobstore_op_alloc_json(struct jobstore *js, int64_t id)
{
	struct jobstore_ev_params p = { 0 };
	json_t *arr = json_array();

	p_int(&p, id);
	if (arr)
		(void)rows(js, ST_ALLOC_LOAD, &p, alloc_json_row, arr);
	return arr;
}

struct active_load {
	struct jobstore *js;
	int (*cb)(struct job *j, void *userdata);
	void *userdata;
};

static int active_row(const struct jobstore_row *r, void *ud)
{
	struct active_load *al = ud;
	struct job *j;
	int e = jobstore_row_active_job(r, &j);

	if (e < 0)
		return e;
	if ((j->n_chunks || j->ngpus) && j->n_alloc) {
		e = alloc_load(al->js, j);
		if (e < 0) {
			job_free(j);
			return e;
		}
	}
	return al->cb(j, al->userdata);
}

int jobstore_load_active(struct jobstore *js, int (*cb)(struct job *j, void *userdata), void *userdata)
{
	struct jobstore_ev_params p = { 0 };
	struct active_load al = { js, cb, userdata };

	return rows(js, ST_ACTIVE, &p, active_row, &al);
}

static int job_json_row(const struct jobstore_row *r, void *ud)
{
	json_array_append_new(ud, jobstore_row_job_json(r));
	return 0;
}

int jobstore_op_query(struct jobstore *js, const struct jobstore_filter *f, json_t **ret_array)
{
	bool by_id = f->jobid && !f->subjobs;
	struct jobstore_ev_params p = { 0 };
	json_t *arr = json_array();
	int r;

	if (!arr)
		return -ENOMEM;
	p_int(&p, f->jobid);
	p_text(&p, f->owner);
	p_int(&p, f->finished || f->jobid);
	p_int(&p, f->from);
	p_int(&p, f->to);
	if (!by_id) {
		p_int(&p, f->after);
		p_int(&p, f->limit ? (int64_t)f->limit : INT64_MAX);
		p_int(&p, f->subjobs);
		p_int(&p, f->no_arrays);
	}
	r = rows(js, by_id ? ST_QUERY_ID : ST_QUERY, &p, job_json_row, arr);
	if (r < 0) {
		json_decref(arr);
		return r;
	}
	*ret_array = arr;
	return 0;
}

struct one_row {
	json_t *o;
	bool seen;
};

static int payload_row(const struct jobstore_row *r, void *ud)
{
	struct one_row *one = ud;

	if (!one->seen)
		jobstore_row_payload_set(one->o, r, 0);
	one->seen = true;
	return 0;
}

int jobstore_op_payload_add(struct jobstore *js, int64_t id, json_t *o)
{
	struct jobstore_ev_params p = { 0 };
	struct one_row one = { o, false };
	int r;

	p_int(&p, id);
	r = rows(js, ST_PAYLOAD, &p, payload_row, &one);
	return r < 0 ? r : one.seen ? 0 : -ENOENT;
}

static int launch_row(const struct jobstore_row *r, void *ud)
{
	struct one_row *one = ud;

	if (one->seen)
		return 0;
	one->seen = true;
	one->o = jobstore_row_launch_json(r);
	return one->o ? 0 : -ENOMEM;
}

int jobstore_job_launch(struct jobstore *js, int64_t id, json_t **ret)
{
	struct jobstore_ev_params p = { 0 };
	struct one_row one = { NULL, false };
	int r;

	p_int(&p, id);
	r = rows(js, ST_LAUNCH, &p, launch_row, &one);
	if (r < 0) {
		json_decref(one.o);
		return r;
	}
	if (!one.seen)
		return -ENOENT;
	*ret = one.o;
	return 0;
}

int jobstore_op_subjob_insert(struct jobstore *js, int64_t array_id, int64_t id, int64_t index,
			    enum job_state state, const char *reason)
{
	struct jobstore_ev_params p = { 0 };

	p_int(&p, id);
	p_text(&p, job_state_name(state));
	p_int(&p, index);
	p_int(&p, array_id);
	p_text(&p, reason);
	return run(js, ST_SUBJOB_INSERT, &p, RUN_ONE);
}

struct subjobs_load {
	int (*cb)(int64_t index, enum job_state state, int exit_status, void *ud);
	void *ud;
};

static int subjob_row(const struct jobstore_row *r, void *ud)
{
	struct subjobs_load *sl = ud;
	enum job_state state = JOB_QUEUED;
	const char *s = row_text(r, 1);

	if (s)
		(void)job_state_parse(s, &state);
	return sl->cb(row_i64(r, 0), state, row_null(r, 2) ? -1 : (int)row_i64(r, 2), sl->ud);
}

int jobstore_subjobs_load(struct jobstore *js, int64_t array_id,
			   int (*cb)(int64_t index, enum job_state state, int exit_status, void *ud), void *ud)
{
	struct jobstore_ev_params p = { 0 };
	struct subjobs_load sl = { cb, ud };

	p_int(&p, array_id);
	return rows(js, ST_SUBJOBS, &p, subjob_row, &sl);
}

int jobstore_op_array_finish(struct jobstore *js, int64_t id, enum job_state state, int exit_status,
			   const char *reason, int64_t t_done)
{
	struct jobstore_ev_params p = { 0 };

	p_text(&p, job_state_name(state));
	p_int(&p, exit_status);
	p_text(&p, reason);
	p_int(&p, t_done);
	p_int(&p, id);
	return run(js, ST_ARRAY_FINISH, &p, RUN_ONE);
}

int jobstore_job_depend_set(struct jobstore *js, int64_t id, const char *depend)
{
	struct jobstore_ev_params p = { 0 };

	p_text(&p, depend);
	p_int(&p, id);
	return run(js, ST_DEPEND_SET, &p, RUN_ONE);
}

int jobstore_rotation_set(struct jobstore *js, const char *queue, uid_t uid, uint64_t seq)
{
	struct jobstore_ev_params p = { 0 };

	p_text(&p, queue);
	p_int(&p, uid);
	p_int(&p, (int64_t)seq);
	return run(js, ST_ROT_SET, &p, RUN_WRITE);
}

int jobstore_queue_admin_set(struct jobstore *js, const char *queue, int enabled, int started,
			      const char *reason)
{
	struct jobstore_ev_params p = { 0 };

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
	return run(js, ST_QADMIN_SET, &p, RUN_WRITE);
}

int jobstore_op_node_admin_set(struct jobstore *js, const char *node, int drain, const char *reason,
			       int64_t *ret_t_drain)
{
	struct jobstore_ev_params p = { 0 };
	struct first_i64 f = { 0 };
	int r;

	p_text(&p, node);
	p_int(&p, drain);
	p_text(&p, reason);
	r = rows(js, ST_NADMIN_SET, &p, first_i64_row, &f);
	if (r >= 0 && ret_t_drain)
		*ret_t_drain = f.n == 1 ? f.v : 0;
	return r < 0 ? r : 0;
}

struct admin_load {
	int ncols;
	int (*cb)(const char *key, long long a, long long b, const char *text, void *ud);
	void *ud;
};

static int admin_row(const struct jobstore_row *r, void *ud)
{
	struct admin_load *al = ud;

	return jobstore_row_admin(r, al->ncols, al->cb, al->ud);
}

int jobstore_admin_load(struct jobstore *js, const struct jobstore_admin_cbs *cbs, void *ud)
{
	struct jobstore_ev_params p = { 0 };
	struct admin_load rot = { 3, cbs->rotation, ud }, q = { 4, cbs->queue, ud }, n = { 4, cbs->node, ud };
	int r;

	r = rows(js, ST_ROT_LOAD, &p, admin_row, &rot);
	if (r == 0)
		r = rows(js, ST_QADMIN_LOAD, &p, admin_row, &q);
	if (r == 0)
		r = rows(js, ST_NADMIN_LOAD, &p, admin_row, &n);
	return r;
}

int jobstore_op_node_put(struct jobstore *js, const struct jobstore_node *n)
{
	struct jobstore_ev_params p = { 0 };

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
	return run(js, ST_NODE_PUT, &p, RUN_WRITE);
}

/* Both deletes run now, not pipelined: -ENOENT needs their row counts. */
int jobstore_op_node_delete(struct jobstore *js, const char *name)
{
	struct jobstore_ev_params p = { 0 };
	int r, gone;

	p_text(&p, name);
	r = run(js, ST_NODE_DELETE, &p, RUN_COUNT);
	if (r < 0)
		return r;
	gone = r;
	r = run(js, ST_NODE_ADMIN_DELETE, &p, RUN_COUNT);
	if (r < 0)
		return r;
	return (gone + r) > 0 ? 0 : -ENOENT;
}

struct nodes_load {
	int (*cb)(const struct jobstore_node *n, void *ud);
	void *ud;
};

static int node_row(const struct jobstore_row *r, void *ud)
{
	struct nodes_load *nl = ud;
	struct jobstore_node n;

	jobstore_row_node(r, &n);
	return nl->cb(&n, nl->ud);
}

int jobstore_nodes_load(struct jobstore *js, int (*cb)(const struct jobstore_node *n, void *ud), void *ud)
{
	struct jobstore_ev_params p = { 0 };
	struct nodes_load nl = { cb, ud };

	return rows(js, ST_NODES_LOAD, &p, node_row, &nl);
}

int jobstore_op_lease_acquire(struct jobstore *js, const char *holder, const char *address, int64_t lease_ms,
			    int64_t *ret_epoch)
{
	struct jobstore_ev_params p = { 0 };
	struct first_i64 f = { 0 };
	int r = js->drv->lease_session ? js->drv->lease_session(js, lease_ms) : 0;

	if (r < 0)
		return r;
	p_text(&p, holder);
	p_text(&p, address);
	p_int(&p, lease_ms);
	r = rows(js, ST_LEASE_ACQUIRE, &p, first_i64_row, &f);
	if (r < 0)
		return r;
	if (f.n != 1)
		return -EBUSY;
	*ret_epoch = f.v;
	return 0;
}

/* In a transaction (the fence) this renewal is its first statement: on
 * PostgreSQL sent with its BEGIN, in one round trip, and read at once: a
 * renewal that changed no row is -ESTALE before any write is sent, and
 * the door rolls the transaction back. Its row lock is held to COMMIT: a
 * takeover's UPDATE waits for this transaction, then re-reads the row
 * (READ COMMITTED) and finds the lease running. */
int jobstore_op_lease_renew(struct jobstore *js, const char *holder, int64_t epoch, int64_t lease_ms)
{
	struct jobstore_ev_params p = { 0 };
	struct first_i64 f = { 0 };
	int r;

	p_int(&p, lease_ms);
	p_text(&p, holder);
	p_int(&p, epoch);
	r = rows(js, ST_LEASE_RENEW, &p, first_i64_row, &f);
	return r < 0 ? r : f.n == 1 ? 0 : -ESTALE;
}

int jobstore_op_lease_release(struct jobstore *js, const char *holder, int64_t epoch)
{
	struct jobstore_ev_params p = { 0 };
	int r;

	p_text(&p, holder);
	p_int(&p, epoch);
	r = run(js, ST_LEASE_RELEASE, &p, RUN_COUNT);
	return r < 0 ? r : r == 1 ? 0 : -ESTALE;
}

struct lease_read {
	struct jobstore_lease *l;
	bool seen;
};

static int lease_row(const struct jobstore_row *r, void *ud)
{
	struct lease_read *lr = ud;

	snprintf(lr->l->holder, sizeof(lr->l->holder), "%s", row_text(r, LEASE_HOLDER) ?: "");
	snprintf(lr->l->address, sizeof(lr->l->address), "%s", row_text(r, LEASE_ADDRESS) ?: "");
	lr->l->epoch = row_i64(r, LEASE_EPOCH);
	lr->l->expires = row_i64(r, LEASE_EXPIRES);
	lr->l->now = row_i64(r, LEASE_NOW);
	lr->seen = true;
	return 0;
}

int jobstore_lease_read(struct jobstore *js, struct jobstore_lease *ret)
{
	struct jobstore_ev_params p = { 0 };
	struct lease_read lr = { ret, false };
	int r = rows(js, ST_LEASE_READ, &p, lease_row, &lr);

	return r < 0 ? r : lr.seen ? 0 : -ENOENT;
}

int jobstore_server_seen(struct jobstore *js, const char *id, const char *address, const char *role)
{
	struct jobstore_ev_params p = { 0 };

	p_text(&p, id);
	p_text(&p, address);
	p_text(&p, role);
	return run(js, ST_SERVER_SEEN, &p, RUN_WRITE);
}

struct servers_load {
	int (*cb)(const char *id, const char *address, const char *role, int64_t age_ms, void *ud);
	void *ud;
};

static int server_row(const struct jobstore_row *r, void *ud)
{
	struct servers_load *sl = ud;

	return sl->cb(row_text(r, SERVER_ID) ?: "", row_text(r, SERVER_ADDRESS) ?: "",
		      row_text(r, SERVER_ROLE) ?: "", row_i64(r, SERVER_AGE), sl->ud);
}

int jobstore_servers_load(struct jobstore *js,
			   int (*cb)(const char *id, const char *address, const char *role, int64_t age_ms,
				     void *ud),
			   void *ud)
{
	struct jobstore_ev_params p = { 0 };
	struct servers_load sl = { cb, ud };

	return rows(js, ST_SERVERS_LOAD, &p, server_row, &sl);
}

struct name_read {
	char *buf;
	size_t size;
	bool seen;
};

static int name_row(const struct jobstore_row *r, void *ud)
{
	struct name_read *nr = ud;
	const char *s = row_text(r, 0);

	if (s && !nr->seen) {
		snprintf(nr->buf, nr->size, "%s", s);
		nr->seen = true;
	}
	return 0;
}

int jobstore_pool_name_read(struct jobstore *js, char *buf, size_t size)
{
	struct jobstore_ev_params p = { 0 };
	struct name_read nr = { buf, size, false };
	int r = rows(js, ST_POOL_NAME_READ, &p, name_row, &nr);

	return r < 0 ? r : nr.seen ? 0 : -ENOENT;
}

int jobstore_pool_name_set(struct jobstore *js, const char *name)
{
	struct jobstore_ev_params p = { 0 };

	p_text(&p, name);
	return run(js, ST_POOL_NAME_SET, &p, RUN_WRITE);
}

/* p's ids as the driver's array parameter, "[1,2,3]" or "{1,2,3}"
 * (malloc'd); NULL: out of memory. */
static char *ids_text(const struct jobstore_driver *drv, const struct jobstore_ev_params *p)
{
	char *buf = malloc(p->n_ids * 21 + 3), *at = buf;

	if (!buf)
		return NULL;
	*at++ = drv->list_open;
	for (size_t i = 0; i < p->n_ids; i++)
		at += sprintf(at, "%s%lld", i ? "," : "", (long long)p->ids[i]);
	*at++ = drv->list_close;
	*at = '\0';
	return buf;
}

/* An event of a transaction is a write (on PostgreSQL down its pipeline,
 * libpq copying the parameters as it sends); a read's rows go to cb. */
int jobstore_op_ev_run(struct jobstore *js, enum jobstore_ev_stmt id, const struct jobstore_ev_params *ep,
		     int (*cb)(const struct jobstore_row *r, void *ud), void *ud)
{
	struct jobstore_ev_params p = *ep;
	char *ids = NULL;
	int r;

	if (ep->ids) {
		ids = ids_text(js->drv, ep);
		if (!ids)
			return -ENOMEM;
		p_text(&p, ids);
		p.ids = NULL;
	}
	r = js->drv->run(js, ST_EV_JOB + id, &p, cb ? RUN_ROWS : RUN_WRITE, cb, ud);
	free(ids);
	return r;
}

static int count_row(const struct jobstore_row *r, void *ud)
{
	int64_t *v = ud;

	v[0] = row_i64(r, 0);
	v[1] = row_i64(r, 1);
	v[2] = row_i64(r, 2);
	return 0;
}

int jobstore_op_count(struct jobstore *js, int64_t *ret_jobs, int64_t *ret_other, int64_t *ret_last_id)
{
	static const char sql[] =
		"SELECT (SELECT count(*) FROM jobs),"
		" (SELECT count(*) FROM job_payload) + (SELECT count(*) FROM job_alloc) +"
		" (SELECT count(*) FROM iqs_rotation) + (SELECT count(*) FROM queue_admin) +"
		" (SELECT count(*) FROM node_admin) + (SELECT count(*) FROM nodes), {LAST_ID}";
	struct jobstore_ev_params p = { 0 };
	int64_t v[3] = { 0, 0, 0 };
	char *text = jobstore_sql_expand(js->drv, sql);
	int r;

	if (!text)
		return -ENOMEM;
	r = js->drv->run_text(js, text, &p, count_row, v);
	free(text);
	if (r < 0)
		return r;
	*ret_jobs = v[0];
	*ret_other = v[1];
	*ret_last_id = v[2];
	return 0;
}

struct rows_each {
	const struct jobstore_table *t;
	int (*cb)(const char *const *values, void *ud);
	void *ud;
};

static int each_row(const struct jobstore_row *r, void *ud)
{
	struct rows_each *e = ud;
	const char *values[64];

	for (int c = 0; c < e->t->ncols; c++)
		values[c] = row_text(r, c);
	return e->cb(values, e->ud);
}

/* Every column as text (NULL: SQL NULL), by primary key. */
int jobstore_op_rows_each(struct jobstore *js, const struct jobstore_table *t,
			int (*cb)(const char *const *values, void *ud), void *ud)
{
	struct jobstore_ev_params p = { 0 };
	struct rows_each e = { t, cb, ud };
	char *sql = NULL;
	int r;

	if (t->ncols > 64)
		return -E2BIG;
	if (asprintf(&sql, "SELECT %s FROM %s ORDER BY 1", t->columns, t->name) < 0)
		return -ENOMEM;
	r = js->drv->run_text(js, sql, &p, each_row, &e);
	free(sql);
	return r;
}
