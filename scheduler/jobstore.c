/* SPDX-License-Identifier: MIT */
/* The job store's door: picks a driver at open (a table by kind), then
 * wraps the operations of jobstore-ops.c that need it: transactions (the
 * group commit, the lease's fence), the events of each change, the
 * query's alloc and payload, qpoold --migrate's copy. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "jobstore-internal.h"
#include "timeutil.h"

/* The drivers, by kind. Each is reached only through its primitives
 * (struct jobstore_driver); the operations above them are written once
 * (jobstore-ops.c). */
static const struct jobstore_driver *const drivers[] = {
	[JOBSTORE_SQLITE] = &jobstore_driver_sqlite,
	[JOBSTORE_POSTGRESQL] = &jobstore_driver_pg,
};

int jobstore_open(enum jobstore_kind kind, const char *where, struct jobstore **ret, struct error *err)
{
	const char *off = getenv("QP_EVENTS_OFF");
	const struct jobstore_driver *drv;
	int r;

	if ((unsigned)kind >= sizeof(drivers) / sizeof(drivers[0]) || !drivers[kind])
		return error_set(err, -EINVAL, "job store: unknown kind %d", (int)kind);
	drv = drivers[kind];
	r = drv->open(where, ret, err);
	if (r < 0)
		return r;
	r = jobstore_ops_prepare(*ret, err);
	if (r < 0) {
		drv->close(*ret);
		*ret = NULL;
		return r;
	}
	/* bench/events measures a commit with events against one without;
	 * nothing else turns them off. */
	if (off && strcmp(off, "1") == 0)
		(*ret)->events_off = true;
	return 0;
}

static void ev_clear(struct jobstore *js)
{
	for (size_t i = 0; i < js->n_ev; i++) {
		free(js->ev[i].node);
		free(js->ev[i].reason);
	}
	js->n_ev = 0;
}

void jobstore_close(struct jobstore *js)
{
	if (!js)
		return;
	ev_clear(js);
	free(js->ev);
	js->ev = NULL;
	js->drv->close(js);
}

/* A change of the open transaction that is an event. A job already
 * among the last few changes is not added again: its row is read at the
 * commit, so two events would both tell its last state (a subjob made
 * and dispatched in one pass). */
static int ev_add_by(struct jobstore *js, int64_t jobid, const char *node, const char *state, const char *reason,
		     int64_t uid)
{
	struct jobstore_ev_pending *e;

	if (js->events_off)
		return 0;
	for (size_t i = js->n_ev, k = 0; jobid && i > 0 && k < 4; i--, k++)
		if (js->ev[i - 1].jobid == jobid)
			return 0;
	if (js->n_ev == js->cap_ev) {
		size_t cap = js->cap_ev ? js->cap_ev * 2 : 64;
		void *p = realloc(js->ev, cap * sizeof(*js->ev));

		if (!p)
			return -ENOMEM;
		js->ev = p;
		js->cap_ev = cap;
	}
	e = &js->ev[js->n_ev];
	*e = (struct jobstore_ev_pending){ .jobid = jobid, .state = state, .uid = uid };
	if ((node && !(e->node = strdup(node))) || (reason && !(e->reason = strdup(reason)))) {
		free(e->node);
		return -ENOMEM;
	}
	js->n_ev++;
	return 0;
}

static int ev_add(struct jobstore *js, int64_t jobid, const char *node, const char *state, const char *reason)
{
	return ev_add_by(js, jobid, node, state, reason, -1);
}

static void ev_int(struct jobstore_ev_params *p, int64_t i)
{
	p->v[p->n].is_text = false;
	p->v[p->n++].i = i;
}

static void ev_text(struct jobstore_ev_params *p, const char *t)
{
	p->v[p->n].is_text = true;
	p->v[p->n++].text = t;
}

/* The events of the transaction, in the order of their changes: each
 * run of job events in one statement (a submit group of 100 jobs: one
 * insert, not 100), a node's alone. */
static int ev_flush(struct jobstore *js)
{
	int64_t now = time_wall_ns(), *ids;
	size_t i = 0;
	int r = 0;

	ids = js->n_ev ? malloc(js->n_ev * sizeof(*ids)) : NULL;
	if (js->n_ev && !ids)
		return -ENOMEM;
	while (i < js->n_ev && r == 0) {
		struct jobstore_ev_params p = { 0 };
		const struct jobstore_ev_pending *e = &js->ev[i];

		ev_int(&p, now);
		ev_int(&p, js->epoch);
		if (e->jobid) {
			size_t n = 0;

			bool run = true;

			while (i < js->n_ev && js->ev[i].jobid) {
				ids[n] = js->ev[i++].jobid;
				run = run && ids[n] == ids[0] + (int64_t)n;
				n++;
			}
			if (run) {
				ev_int(&p, ids[0]);
				ev_int(&p, ids[n - 1]);
				r = jobstore_op_ev_run(js, EV_JOB_RANGE, &p, NULL, NULL);
			} else {
				p.ids = ids;
				p.n_ids = n;
				r = jobstore_op_ev_run(js, EV_JOB, &p, NULL, NULL);
			}
		} else {
			char uid[24];

			snprintf(uid, sizeof(uid), "%lld", (long long)e->uid);
			ev_text(&p, e->node);
			ev_text(&p, e->state);
			ev_text(&p, e->reason);
			ev_text(&p, e->uid >= 0 ? uid : NULL);
			r = jobstore_op_ev_run(js, EV_NODE, &p, NULL, NULL);
			i++;
		}
	}
	free(ids);
	return r;
}

/* A write outside a transaction gets one of its own, for its event. */
static int own_begin(struct jobstore *js, bool *own)
{
	*own = !js->in_tx;
	return *own ? jobstore_begin(js) : 0;
}

static int own_end(struct jobstore *js, bool own, int r)
{
	if (!own)
		return r;
	if (r == 0)
		r = jobstore_commit(js);
	if (r < 0)
		jobstore_rollback(js);
	return r;
}

/* A job write: the change, then its event. */
#define JOB_WRITE(js, id, call) \
	do { \
		bool own_; \
		int r_ = own_begin(js, &own_); \
		if (r_ == 0) \
			r_ = (call); \
		if (r_ == 0) \
			r_ = ev_add(js, id, NULL, NULL, NULL); \
		return own_end(js, own_, r_); \
	} while (0)

bool jobstore_in_tx(const struct jobstore *js)
{
	return js->in_tx;
}

uint64_t jobstore_events_committed(const struct jobstore *js)
{
	return js->ev_committed;
}

int jobstore_event_node(struct jobstore *js, const char *node, const char *state, const char *reason)
{
	bool own;
	int r = own_begin(js, &own);

	if (r == 0)
		r = ev_add(js, 0, node, state, reason);
	return own_end(js, own, r);
}

struct ev_read {
	int (*cb)(const struct jobstore_event *e, void *ud);
	void *ud;
};

static int ev_row(const struct jobstore_row *r, void *ud)
{
	struct ev_read *er = ud;
	struct jobstore_event e = {
		.seq = row_i64(r, EV_COL_SEQ),
		.t = row_i64(r, EV_COL_T),
		.epoch = row_i64(r, EV_COL_EPOCH),
		.jobid = row_null(r, EV_COL_JOBID) ? 0 : row_i64(r, EV_COL_JOBID),
		.uid = row_null(r, EV_COL_UID) ? -1 : row_i64(r, EV_COL_UID),
		.node = row_text(r, EV_COL_NODE),
		.state = row_text(r, EV_COL_STATE),
		.exit_status = row_null(r, EV_COL_EXIT_STATUS) ? -1 : row_i64(r, EV_COL_EXIT_STATUS),
		.exit_signal = row_null(r, EV_COL_EXIT_SIGNAL) ? 0 : row_i64(r, EV_COL_EXIT_SIGNAL),
		.reason = row_text(r, EV_COL_REASON),
	};

	return er->cb(&e, er->ud);
}

int jobstore_events_read(struct jobstore *js, int64_t after, unsigned limit,
			 int (*cb)(const struct jobstore_event *e, void *ud), void *ud)
{
	struct jobstore_ev_params p = { 0 };
	struct ev_read er = { cb, ud };

	ev_int(&p, after);
	ev_int(&p, limit);
	return jobstore_op_ev_run(js, EV_READ, &p, ev_row, &er);
}

static int bounds_row(const struct jobstore_row *r, void *ud)
{
	int64_t *b = ud;

	b[0] = row_i64(r, 0);
	b[1] = row_i64(r, 1);
	return 0;
}

int jobstore_events_bounds(struct jobstore *js, int64_t *ret_first, int64_t *ret_last)
{
	struct jobstore_ev_params p = { 0 };
	int64_t b[2] = { 0, 0 };
	int r = jobstore_op_ev_run(js, EV_BOUNDS, &p, bounds_row, b);

	if (r < 0)
		return r;
	*ret_first = b[0];
	*ret_last = b[1];
	return 0;
}

static int count_row(const struct jobstore_row *r, void *ud)
{
	(void)r;
	(*(int *)ud)++;
	return 0;
}

int jobstore_events_prune(struct jobstore *js, int64_t before, unsigned limit)
{
	struct jobstore_ev_params p = { 0 };
	int n = 0, r;

	ev_int(&p, before);
	ev_int(&p, limit);
	r = jobstore_begin(js);
	if (r == 0)
		r = jobstore_op_ev_run(js, EV_PRUNE, &p, count_row, &n);
	if (r == 0)
		r = jobstore_commit(js);
	if (r < 0) {
		jobstore_rollback(js);
		return r;
	}
	return n;
}

int jobstore_schema_version(void)
{
	return JOBSTORE_SCHEMA_VERSION;
}

/* A lazy begin's commit does not wait for the disk (the driver's
 * begin_lazy; a plain begin where it has none). */
static int drv_begin(struct jobstore *js, bool lazy)
{
	int r = lazy && js->drv->begin_lazy ? js->drv->begin_lazy(js) : js->drv->begin(js);

	if (r == 0)
		js->in_tx = true;
	return r;
}

/* The commit of a transaction that holds no job's change nor event (a
 * renewal, a stamp): not in the store's commit metrics; rolled back when
 * it fails. */
static int drv_commit_bare(struct jobstore *js)
{
	int r = js->drv->commit(js);

	if (r < 0)
		jobstore_rollback(js);
	js->in_tx = false;
	return r;
}

static int begin_fenced(struct jobstore *js, bool lazy)
{
	int r;

	if (js->lease_lost)
		return -ESTALE;
	r = drv_begin(js, lazy);
	if (r < 0 || !js->holder[0])
		return r;
	/* The fence: the one place every write transaction passes. One row
	 * updated per transaction: no qsub latency or qpoold CPU it adds
	 * shows above bench/qsub-latency's noise (docs/HA.md). */
	r = jobstore_op_lease_renew(js, js->holder, js->epoch, js->lease_ms);
	if (r < 0) {
		js->drv->rollback(js);
		js->in_tx = false;
		if (r == -ESTALE)
			js->lease_lost = true;
	}
	return r;
}

int jobstore_begin(struct jobstore *js)
{
	return begin_fenced(js, false);
}

int jobstore_commit(struct jobstore *js)
{
	int64_t t0 = time_mono_ns();
	size_t n = js->n_ev + js->n_ev_written;
	int r = ev_flush(js);

	if (r == 0)
		r = js->drv->commit(js);
	if (r == 0) {
		histogram_observe(&js->commit_hist, (uint64_t)(time_mono_ns() - t0));
		js->in_tx = false;
		js->ev_committed += n;
		js->n_ev_written = 0;
		ev_clear(js);
	}
	return r;
}

void jobstore_rollback(struct jobstore *js)
{
	js->drv->rollback(js);
	js->in_tx = false;
	js->n_ev_written = 0;
	ev_clear(js);
}

int jobstore_events_write(struct jobstore *js)
{
	size_t n = js->n_ev;
	int r;

	if (!js->in_tx)
		return -EINVAL;
	r = ev_flush(js);
	if (r == 0) {
		js->n_ev_written += n;
		ev_clear(js);
	}
	return r;
}

int jobstore_checkpoint(struct jobstore *js)
{
	return js->drv->checkpoint(js);
}

int jobstore_job_insert(struct jobstore *js, const struct job_submit *s, int64_t *ret_id)
{
	bool own;
	int r = own_begin(js, &own);

	if (r == 0)
		r = jobstore_op_job_insert(js, s, ret_id);
	if (r == 0)
		r = ev_add(js, *ret_id, NULL, NULL, NULL);
	return own_end(js, own, r);
}

int jobstore_job_set_state(struct jobstore *js, int64_t id, enum job_state state, const char *reason)
{
	JOB_WRITE(js, id, jobstore_op_job_set_state(js, id, state, reason));
}

int jobstore_job_dispatch(struct jobstore *js, int64_t id, const char *node, const char *cpus,
			  const char *mems, int64_t t_dispatch)
{
	JOB_WRITE(js, id, jobstore_op_job_dispatch(js, id, node, cpus, mems, t_dispatch));
}

struct attempt_row {
	char *attrs, *node, *cpus, *why;
	int64_t t_dispatch;
	bool ran;
};

static int attempt_row(const struct jobstore_row *r, void *ud)
{
	struct attempt_row *a = ud;

	if (a->ran || row_null(r, 3))
		return 0;
	a->ran = true;
	a->attrs = row_text(r, 0) ? strdup(row_text(r, 0)) : NULL;
	a->node = row_text(r, 1) ? strdup(row_text(r, 1)) : NULL;
	a->cpus = row_text(r, 2) ? strdup(row_text(r, 2)) : NULL;
	a->t_dispatch = row_i64(r, 3);
	a->why = row_text(r, 4) ? strdup(row_text(r, 4)) : NULL;
	return 0;
}

/* The run that ends in a requeue, appended to attrs.attempts with its own
 * stamps (docs/PREEMPTION.md, "Attempts"): the requeue clears the row's
 * node and dispatch stamp, and the next run writes its own. Its reason is
 * the row's (what asked for the requeue: "preempted by job 7"), else
 * reason; its time suspended what attrs.suspended_ns gained since the
 * earlier ones. */
static int attempt_append(struct jobstore *js, int64_t id, const char *reason, const struct job_result *res)
{
	static const char sql_get[] = "SELECT attrs, node, cpus, t_dispatch, reason FROM jobs WHERE id = $1";
	static const char sql_set[] = "UPDATE jobs SET attrs = $1 WHERE id = $2";
	struct jobstore_ev_params p = { .n = 1 };
	struct attempt_row a = { 0 };
	json_t *attrs = NULL, *list, *one, *times, *prev;
	int64_t sus, sus_before = 0;
	char *text = NULL;
	size_t i;
	int r;

	p.v[0].i = id;
	r = js->drv->run_text(js, sql_get, &p, attempt_row, &a);
	if (r < 0 || !a.ran)
		goto done;
	attrs = a.attrs ? json_loads(a.attrs, 0, NULL) : NULL;
	if (!json_is_object(attrs)) {
		json_decref(attrs);
		attrs = json_object();
	}
	list = json_object_get(attrs, "attempts");
	if (!json_is_array(list)) {
		list = json_array();
		json_object_set_new(attrs, "attempts", list);
	}
	json_array_foreach(list, i, prev)
		sus_before += json_integer_value(json_object_get(prev, "suspended_ns"));
	sus = json_integer_value(json_object_get(attrs, "suspended_ns")) - sus_before;
	times = json_pack("{s:I}", "dispatch", (json_int_t)a.t_dispatch);
	for (int k = STAMP_LAUNCH; res && k <= STAMP_RELEASED; k++)
		if (res->times[k])
			json_object_set_new(times, job_stamp_names[k], json_integer(res->times[k]));
	one = json_pack("{s:I, s:s?, s:s?, s:o, s:I, s:s?, s:I}", "attempt", (json_int_t)json_array_size(list) + 1,
			"node", a.node, "cpus", a.cpus, "times", times, "end", (json_int_t)time_wall_ns(),
			"reason", a.why ? a.why : reason, "suspended_ns", (json_int_t)(sus > 0 ? sus : 0));
	if (one && res) {
		json_object_set_new(one, "cpu_ns", json_integer(res->cpu_ns));
		if (res->exit_signal > 0)
			json_object_set_new(one, "exit_signal", json_integer(res->exit_signal));
		else if (res->exit_status >= 0)
			json_object_set_new(one, "exit_status", json_integer(res->exit_status));
	}
	if (!one || json_array_append_new(list, one) < 0 || !(text = json_dumps(attrs, JSON_COMPACT))) {
		r = -ENOMEM;
		goto done;
	}
	p = (struct jobstore_ev_params){ .n = 2 };
	p.v[0].text = text;
	p.v[0].is_text = true;
	p.v[1].i = id;
	r = js->drv->run_text(js, sql_set, &p, NULL, NULL);
done:
	json_decref(attrs);
	free(text);
	free(a.attrs);
	free(a.node);
	free(a.cpus);
	free(a.why);
	return r;
}

static int requeue_with_attempt(struct jobstore *js, int64_t id, const char *reason, const struct job_result *res)
{
	int r = attempt_append(js, id, reason, res);

	return r < 0 ? r : jobstore_op_job_requeue(js, id, reason);
}

int jobstore_job_requeue(struct jobstore *js, int64_t id, const char *reason)
{
	JOB_WRITE(js, id, requeue_with_attempt(js, id, reason, NULL));
}

int jobstore_job_requeue_result(struct jobstore *js, int64_t id, const char *reason, const struct job_result *res)
{
	JOB_WRITE(js, id, requeue_with_attempt(js, id, reason, res));
}

int jobstore_job_finish(struct jobstore *js, int64_t id, const struct job_result *res, int64_t t_done)
{
	JOB_WRITE(js, id, jobstore_op_job_finish(js, id, res, t_done));
}

int jobstore_query(struct jobstore *js, const struct jobstore_filter *f, json_t **ret_array)
{
	json_t *arr, *o;
	size_t i;
	int r;

	r = jobstore_op_query(js, f, &arr);
	if (r < 0)
		return r;
	js->rows_read += json_array_size(arr);
	/* Jobs across nodes: each node's share and stamps. */
	json_array_foreach(arr, i, o) {
		if ((json_is_array(json_object_get(o, "chunks")) || json_integer_value(json_object_get(o, "ngpus")) > 0) &&
		    json_is_string(json_object_get(o, "node")))
			json_object_set_new(o, "alloc",
					    jobstore_op_alloc_json(js, json_integer_value(json_object_get(o, "jobid"))));
		jobstore_json_exec_host_set(o);
	}
	/* After the scan: the payload statement must not run inside it. */
	if (f->payload) {
		json_array_foreach(arr, i, o) {
			uid_t uid = (uid_t)json_integer_value(json_object_get(o, "uid"));

			if (f->payload_uid == 0 || f->payload_uid == uid)
				(void)jobstore_op_payload_add(js, json_integer_value(json_object_get(o, "jobid")), o);
		}
	}
	*ret_array = arr;
	return 0;
}

uint64_t jobstore_rows_read(const struct jobstore *js)
{
	return js->rows_read;
}

const struct histogram *jobstore_commit_latency(const struct jobstore *js)
{
	return &js->commit_hist;
}

int jobstore_job_get(struct jobstore *js, int64_t id, bool payload, json_t **ret)
{
	struct jobstore_filter f = { .jobid = id, .finished = true, .payload = payload, .payload_uid = 0 };
	json_t *arr;
	int r;

	r = jobstore_query(js, &f, &arr);
	if (r < 0)
		return r;
	if (json_array_size(arr) == 0) {
		json_decref(arr);
		return -ENOENT;
	}
	*ret = json_incref(json_array_get(arr, 0));
	json_decref(arr);
	return 0;
}

int jobstore_subjob_insert(struct jobstore *js, int64_t array_id, int64_t id, int64_t index,
			   enum job_state state, const char *reason)
{
	JOB_WRITE(js, id, jobstore_op_subjob_insert(js, array_id, id, index, state, reason));
}

int jobstore_array_finish(struct jobstore *js, int64_t id, enum job_state state, int exit_status,
			  const char *reason, int64_t t_done)
{
	JOB_WRITE(js, id, jobstore_op_array_finish(js, id, state, exit_status, reason, t_done));
}

int jobstore_node_admin_set_by(struct jobstore *js, const char *node, int drain, const char *reason, int64_t by_uid,
			       int64_t *ret_t_drain)
{
	bool own;
	int r = own_begin(js, &own);

	if (r == 0)
		r = jobstore_op_node_admin_set(js, node, drain, reason, ret_t_drain);
	if (r == 0)
		r = ev_add_by(js, 0, node, drain ? "drained" : "resumed", reason, by_uid);
	return own_end(js, own, r);
}

int jobstore_sql_write(struct jobstore *js, const struct jobstore_sql *stmts, size_t n,
		       const struct jobstore_ev_params *p)
{
	bool own;
	int r = own_begin(js, &own);

	for (size_t i = 0; r == 0 && i < n; i++) {
		struct jobstore_ev_params some = *p;

		some.n = stmts[i].n_params;
		r = js->drv->run_text(js, stmts[i].sql, &some, NULL, NULL);
	}
	return own_end(js, own, r);
}

int jobstore_sql_rows(struct jobstore *js, const char *sql, const struct jobstore_ev_params *p,
		      int (*cb)(const struct jobstore_row *r, void *ud), void *ud)
{
	return js->drv->run_text(js, sql, p, cb, ud);
}

int jobstore_node_admin_set(struct jobstore *js, const char *node, int drain, const char *reason)
{
	return jobstore_node_admin_set_by(js, node, drain, reason, -1, NULL);
}

int jobstore_node_put(struct jobstore *js, const struct jobstore_node *n)
{
	bool own;
	int r = own_begin(js, &own);

	if (r == 0)
		r = jobstore_op_node_put(js, n);
	if (r == 0 && !n->up_told)
		r = ev_add(js, 0, n->name, "up", NULL);
	return own_end(js, own, r);
}

int jobstore_node_delete(struct jobstore *js, const char *name)
{
	bool own;
	int r = own_begin(js, &own);

	if (r == 0)
		r = jobstore_op_node_delete(js, name);
	if (r == 0)
		r = ev_add(js, 0, name, "deleted", NULL);
	return own_end(js, own, r);
}

void jobstore_describe(struct jobstore *js, char *buf, size_t size)
{
	js->drv->describe(js, buf, size);
}

const struct jobstore_table jobstore_tables[] = {
	{ "jobs", JOB_COLUMNS ", umask, mems", 46 },
	{ "job_payload", "job_id, env, script", 3 },
	{ "job_alloc", "job_id, idx, node, ncpus, cpus, mems, mem, mpiprocs, ompthreads, t_launch, t_wrap,"
	  " t_fenced, t_exec, t_exit, t_released, t_done, cpu_ns, mem_peak, result, gpus", 20 },
	{ "iqs_rotation", "queue, uid, seq", 3 },
	{ "queue_admin", "queue, enabled, started, reason", 4 },
	{ "node_admin", "node, drain, reason, t_drain", 4 },
	{ "nodes", "name, cpus, ncpus, mems, mem, topology, rt, cgroup, address, t_register", 10 },
	{ "pool", "id, name", 2 },
	{ "events", "seq, t, epoch, jobid, uid, node, state, exit_status, exit_signal, reason", 10 },
	{ "accounts", "name, parent, shares, description, grp_cpus, grp_gpus, grp_jobs", 7 },
	{ "account_users", "account, user_name, is_default", 3 },
	{ "qos", "name, priority, limits, preempt, preempt_mode, description", 6 },
	{ "qos_users", "user_name, qos, default_qos", 3 },
	{ "budgets", "kind, name, cpu_mins, gpu_mins", 4 },
	{ "reservations", "name, id, t_start, t_end, nodes, users, grps, accounts, flags, count", 10 },
	{ NULL, NULL, 0 },
};

const char *const jobstore_tables_uncopied[] = { "lease", "servers", NULL };

struct copy_state {
	struct jobstore *to;
	const struct jobstore_table *t;
	int64_t rows;
	int64_t max_id;
};

static int copy_one(const char *const *values, void *ud)
{
	struct copy_state *cs = ud;

	cs->rows++;
	if (cs->t == &jobstore_tables[0] && values[0]) {
		int64_t id = strtoll(values[0], NULL, 10);

		if (id > cs->max_id)
			cs->max_id = id;
	}
	return cs->to->drv->copy_row(cs->to, cs->t, values);
}

int jobstore_copy(struct jobstore *from, struct jobstore *to, int64_t *ret_jobs, struct error *err)
{
	struct copy_state cs = { .to = to };
	int64_t jobs, other, last, from_jobs, from_other, from_last;
	char at[512];
	int r;

	jobstore_describe(to, at, sizeof(at));
	if (!to->drv->copy_begin)
		return error_set(err, -EOPNOTSUPP, "job store %s: cannot be the target of a migration", at);
	r = jobstore_op_count(to, &jobs, &other, &last);
	if (r < 0)
		return error_set(err, r, "job store %s: %s", at, strerror(-r));
	if (jobs || other || last)
		return error_set(err, -ENOTEMPTY, "job store %s is not empty (%lld jobs, %lld other rows,"
				 " last id %lld): nothing copied", at, (long long)jobs, (long long)other,
				 (long long)last);
	r = jobstore_op_count(from, &from_jobs, &from_other, &from_last);
	if (r < 0) {
		jobstore_describe(from, at, sizeof(at));
		return error_set(err, r, "job store %s: %s", at, strerror(-r));
	}
	r = jobstore_begin(to);
	for (const struct jobstore_table *t = jobstore_tables; r == 0 && t->name; t++) {
		cs.t = t;
		r = to->drv->copy_begin(to, t);
		if (r == 0)
			r = jobstore_op_rows_each(from, t, copy_one, &cs);
		if (r == 0)
			r = to->drv->copy_end(to);
		if (t == jobstore_tables)
			*ret_jobs = cs.rows;
	}
	/* An array's reserved ids may lie past the last row. */
	if (r == 0)
		r = to->drv->last_id_set(to, from_last > cs.max_id ? from_last : cs.max_id);
	if (r == 0)
		r = jobstore_commit(to);
	if (r < 0) {
		jobstore_rollback(to);
		return error_set(err, r, "job store %s: copy failed, nothing copied: %s", at, strerror(-r));
	}
	return 0;
}

int jobstore_lease_acquire(struct jobstore *js, const char *holder, const char *address, int64_t lease_ms,
			   int64_t *ret_epoch)
{
	int64_t epoch;
	int r;

	if (!holder[0] || strlen(holder) >= sizeof(js->holder) || lease_ms <= 0)
		return -EINVAL;
	r = jobstore_op_lease_acquire(js, holder, address, lease_ms, &epoch);
	if (r < 0)
		return r;
	snprintf(js->holder, sizeof(js->holder), "%s", holder);
	js->epoch = epoch;
	js->lease_ms = lease_ms;
	js->lease_lost = false;
	*ret_epoch = epoch;
	return 0;
}

/* A renewal alone or with the stamp: a lazy commit, which does not wait
 * for the disk. Losing it to a power loss loses nothing: the lease then
 * ends sooner, and its holder's host is down. An idle active server so
 * syncs nothing (docs/HA.md, "The lease's commit"). */
int jobstore_lease_renew(struct jobstore *js)
{
	int r;

	if (!js->holder[0] || js->lease_lost)
		return -ESTALE;
	/* The fence is the renewal itself. */
	r = begin_fenced(js, true);
	return r < 0 ? r : drv_commit_bare(js);
}

int jobstore_lease_renew_seen(struct jobstore *js, const char *address)
{
	/* The fence is the renewal itself. */
	int r = begin_fenced(js, true);

	if (r == -ESTALE)
		return r;
	if (r == 0)
		r = jobstore_server_seen(js, js->holder, address, "active");
	if (r == 0)
		r = drv_commit_bare(js);
	if (r == 0)
		return 0;
	/* Only the stamp is lost: the renewal alone. A begin or commit that
	 * failed has left no transaction to roll back. */
	if (js->in_tx)
		jobstore_rollback(js);
	return jobstore_lease_renew(js);
}

int jobstore_standby_seen(struct jobstore *js, const char *id, const char *address)
{
	/* No fence: a standby holds no lease. */
	int r = drv_begin(js, true);

	if (r < 0)
		return r;
	r = jobstore_server_seen(js, id, address, "standby");
	if (r < 0) {
		jobstore_rollback(js);
		return r;
	}
	return drv_commit_bare(js);
}

int jobstore_lease_release(struct jobstore *js)
{
	int r;

	if (!js->holder[0] || js->lease_lost)
		return -ESTALE;
	r = jobstore_op_lease_release(js, js->holder, js->epoch);
	js->lease_lost = true;
	return r;
}

bool jobstore_lease_lost(const struct jobstore *js)
{
	return js->lease_lost;
}
