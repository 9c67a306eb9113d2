/* SPDX-License-Identifier: MIT */
/* The ops that change a job after qsub: alter, move, swap, signal, rerun
 * (the requeue itself and forced delete are job-end.c's). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "conn.h"
#include "hctx.h"
#include "jobattr.h"
#include "job-end.h"
#include "jobstore.h"
#include "log.h"
#include "node-send.h"
#include "ops.h"
#include "pool.h"
#include "timeutil.h"
#include "wire.h"

#define NAME_MAX_LEN 255

/* What qsub's resources must satisfy in queue q (the checks submit makes
 * once the queue's defaults are applied). 0, or -EINVAL with errbuf. */
static int limits_check(struct hctx *s, const struct queue_conf *q, const struct job *j, uint64_t ncpus,
			uint64_t mem, uint64_t walltime, char *errbuf, size_t len)
{
	/* A one-node job: what no known node could ever hold (CPUs, GPUs,
	 * memory) is refused as at submit. A job across nodes was checked
	 * at submit, and qalter cannot change its chunks. */
	struct job probe = { .ncpus = (uint32_t)ncpus, .ngpus = j->ngpus, .mem = mem, .sel = j->sel,
			     .gpu_model = j->gpu_model };
	char why[200];

#define REFUSE(...) do { snprintf(errbuf, len, __VA_ARGS__); return -EINVAL; } while (0)
	if (q->ncpus && ncpus != q->ncpus)
		REFUSE("ncpus=%llu: queue %s runs jobs of exactly %llu CPUs", (unsigned long long)ncpus,
		       q->name, (unsigned long long)q->ncpus);
	if (q->ncpus_max && ncpus > q->ncpus_max)
		REFUSE("ncpus=%llu: above queue %s's limit of %llu", (unsigned long long)ncpus, q->name,
		       (unsigned long long)q->ncpus_max);
	if (!j->n_chunks && pool_request_check(s->pool, &probe, why, sizeof(why)) < 0)
		REFUSE("%s", why);
	if (q->max_ngpus && j->ngpus > q->max_ngpus)
		REFUSE("ngpus=%u: above queue %s's limit of %llu", j->ngpus, q->name,
		       (unsigned long long)q->max_ngpus);
	if (q->mem_max && mem > q->mem_max)
		REFUSE("mem=%llu: above queue %s's limit of %llu bytes", (unsigned long long)mem, q->name,
		       (unsigned long long)q->mem_max);
	if (q->walltime_max && walltime > q->walltime_max)
		REFUSE("walltime=%llus: above queue %s's limit of %llus", (unsigned long long)walltime,
		       q->name, (unsigned long long)q->walltime_max);
#undef REFUSE
	return 0;
}

static bool waiting(const struct job *j)
{
	return j->state == JOB_QUEUED || j->state == JOB_HELD;
}

/* Whether an alter asks only for a begin time (qalter -a, scontrol
 * update StartTime=): that one change a running job takes too, for its
 * start after a requeue (a self-requeueing job's chain, issue 33). */
static bool alter_only_begin(const json_t *msg)
{
	static const char *const keys[] = { "name", "ncpus", "mem", "walltime", "stdout", "stderr", "join",
					    "rerunnable", "attrs" };

	if (!json_object_get(msg, "begin"))
		return false;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (json_object_get(msg, keys[i]))
			return false;
	return true;
}

/* The begin time of msg ("begin", wall seconds, 0: none) into the store
 * and the pool; with later_only, only when later than the job's own. 0,
 * or a negative errno with text. */
static int begin_apply(struct hctx *s, struct job *j, const json_t *msg, bool later_only, char *text,
		       size_t len)
{
	json_int_t t = json_integer_value(json_object_get(msg, "begin"));
	int r;

	if (!json_is_integer(json_object_get(msg, "begin")) || t < 0) {
		snprintf(text, len, "a begin time is wall seconds, 0 for none");
		return -EINVAL;
	}
	if (later_only && t <= j->start_after)
		return 0;
	r = jobstore_job_begin_set(s->store, j->id, t);
	if (r < 0) {
		snprintf(text, len, "job store: %s", strerror(-r));
		return r;
	}
	j->start_after = t;
	return 0;
}

/* The request's "attrs" (a name of jobattr_shape to a string, or null
 * to remove it) over the row's, as JSON text into *ret; NULL when the
 * request has none. 0, or -EINVAL with text, or -ENOMEM. */
static int alter_attrs(const json_t *msg, const json_t *row, char **ret, char *text, size_t len)
{
	const json_t *req = json_object_get(msg, "attrs"), *v;
	json_t *attrs;
	const char *name;
	uint64_t n;

	*ret = NULL;
	if (!req)
		return 0;
	if (!json_is_object(req)) {
		snprintf(text, len, "\"attrs\" is not an object");
		return -EINVAL;
	}
	json_object_foreach((json_t *)req, name, v) {
		const char *val = json_string_value(v);

		if (!jobattr_is_shape(name)) {
			snprintf(text, len, "%.64s cannot be altered", name);
			return -EINVAL;
		}
		if (json_is_null(v))
			continue;
		if (!val || !*val || strlen(val) > 256 || strspn(val, "0123456789abcdefghijklmnopqrstuvwxyz"
								"ABCDEFGHIJKLMNOPQRSTUVWXYZ:=+._-#,") != strlen(val)) {
			snprintf(text, len, "%s: not a value qsub would take", name);
			return -EINVAL;
		}
		if (strcmp(name, "Resource_List.select") && strcmp(name, "Resource_List.nodes") &&
		    !jobattr_mpiprocs(val, &n)) {
			snprintf(text, len, "%s=%.32s: not a count from 1 to %u", name, val, JOBATTR_SLOTS_MAX);
			return -EINVAL;
		}
	}
	attrs = json_deep_copy(json_object_get(row, "attrs"));
	if (!json_is_object(attrs)) {
		json_decref(attrs);
		attrs = json_object();
	}
	json_object_foreach((json_t *)req, name, v) {
		if (json_is_null(v))
			json_object_del(attrs, name);
		else
			json_object_set(attrs, name, (json_t *)v);
	}
	*ret = attrs ? json_dumps(attrs, JSON_COMPACT) : NULL;
	json_decref(attrs);
	return *ret ? 0 : -ENOMEM;
}

/* The request's "expect": attributes its client read from the job and
 * built the request from (scontrol's NumCPUs= keeps the tasks it read),
 * each a string or null for absent. The alter applies only while the
 * row still has them: a change between that read and this write (its
 * handler runs whole, the row read and written in it) is refused, not
 * overwritten unseen. 0, -EAGAIN or -EINVAL with text. */
static int alter_expect(const json_t *msg, const json_t *row, char *text, size_t len)
{
	const json_t *want = json_object_get(msg, "expect"), *have = json_object_get(row, "attrs"), *v;
	const char *name;

	if (!want)
		return 0;
	if (!json_is_object(want) || json_object_size(want) > JOBATTR_SHAPE_N + 1) {
		snprintf(text, len, "\"expect\" is not an object of at most %d attributes", JOBATTR_SHAPE_N + 1);
		return -EINVAL;
	}
	json_object_foreach((json_t *)want, name, v) {
		const json_t *h = json_object_get(have, name);

		if (!json_is_null(v) && !json_is_string(v)) {
			snprintf(text, len, "\"expect\": %.64s is not a string or null", name);
			return -EINVAL;
		}
		if (json_is_null(v) ? h && !json_is_null(h)
				    : !json_is_string(h) || strcmp(json_string_value(h), json_string_value(v))) {
			snprintf(text, len, "its %.64s changed after it was read; run the command again", name);
			return -EAGAIN;
		}
	}
	return 0;
}

/* alter (qalter) and move (qmove): the job's row with the request's
 * changes, checked as qsub would be, written, and mirrored in the pool. */
void op_alter_move(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	bool move = strcmp(op, "move") == 0;
	struct job *j = job_for_change(c, req_id, msg);
	const struct queue_conf *q;
	struct job_submit a = { 0 };
	json_t *row = NULL;
	char text[256], *attrs_text = NULL;
	int r;

	if (!j)
		return;
	if (!move && alter_only_begin(msg) && (j->state == JOB_RUNNING || j->state == JOB_EXITING)) {
		r = begin_apply(s, j, msg, false, text, sizeof(text));
		if (r < 0) {
			conn_reply_err(c, req_id, -r, "job %lld: %s", (long long)j->id, text);
			return;
		}
		log_info("job %lld: begin time set by uid %d, for its start after a requeue", (long long)j->id,
			 (int)c->uid);
		conn_reply_ok(c, req_id, json_pack("{s:s, s:s}", "state", job_state_name(j->state), "queue", j->queue));
		return;
	}
	if (!waiting(j)) {
		conn_reply_err(c, req_id, EBUSY, "job %lld is %s; only queued and held jobs can be %s",
			       (long long)j->id, job_state_name(j->state), move ? "moved" : "altered");
		return;
	}
	if (j->n_chunks && (json_object_get(msg, "ncpus") || json_object_get(msg, "mem") ||
			    json_object_get(msg, "attrs"))) {
		/* Both dialects' alter commands send this: words of neither. */
		conn_reply_err(c, req_id, EINVAL, "job %lld asks for chunks across nodes; its ncpus, mem or "
			       "slots cannot be altered (delete it and submit again)", (long long)j->id);
		return;
	}
	r = jobstore_job_get(s->store, j->id, false, &row);
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		return;
	}
	a.name = json_object_get(msg, "name") && !move ? wire_str(msg, "name") : wire_str(row, "name");
	a.queue = move ? wire_str(msg, "queue") : j->queue;
	a.ncpus = (uint32_t)(json_object_get(msg, "ncpus") ? wire_int(msg, "ncpus", 0) : j->ncpus);
	a.mem = (uint64_t)(json_object_get(msg, "mem") ? wire_int(msg, "mem", 0) : (long long)j->mem);
	a.walltime = (uint64_t)(json_object_get(msg, "walltime") ? wire_int(msg, "walltime", 0)
								  : (long long)j->walltime);
	/* NULL keeps what is stored: a default path follows a new name. */
	a.stdout_path = wire_str(msg, "stdout");
	a.stderr_path = wire_str(msg, "stderr");
	a.join = wire_bool(msg, "join", wire_bool(row, "join", 0));
	a.rerunnable = wire_bool(msg, "rerunnable", j->rerunnable);
	q = a.queue ? config_queue(s->config, a.queue) : NULL;
	if (move && !q) {
		snprintf(text, sizeof(text), "unknown queue '%s'", a.queue ? a.queue : "");
		r = -ENOENT;
	} else if (move && !q->enabled) {
		snprintf(text, sizeof(text), "queue %s is disabled: %s", q->name,
			 q->reason[0] ? q->reason : "it accepts no new jobs");
		r = -EINVAL;
	} else if (!a.name || !*a.name || strlen(a.name) > NAME_MAX_LEN || strchr(a.name, '/')) {
		snprintf(text, sizeof(text), "job name must be 1-%d bytes without '/'", NAME_MAX_LEN);
		r = -EINVAL;
	} else if ((a.stdout_path && *a.stdout_path && a.stdout_path[0] != '/') ||
		   (a.stderr_path && *a.stderr_path && a.stderr_path[0] != '/')) {
		snprintf(text, sizeof(text), "output paths must be absolute");
		r = -EINVAL;
	} else if (wire_int(msg, "ncpus", 1) <= 0 || wire_int(msg, "mem", 0) < 0 ||
		   wire_int(msg, "walltime", 1) <= 0) {
		snprintf(text, sizeof(text), "ncpus and walltime must be positive, mem not negative");
		r = -EINVAL;
	} else if (!q) {
		snprintf(text, sizeof(text), "the job's queue %s is gone from the configuration", j->queue);
		r = -ENOENT;
	} else {
		r = limits_check(s, q, j, a.ncpus, a.mem, a.walltime, text, sizeof(text));
	}
	if (r == 0 && !move)
		r = alter_expect(msg, row, text, sizeof(text));
	if (r == 0 && !move)
		r = alter_attrs(msg, row, &attrs_text, text, sizeof(text));
	a.attrs_json = attrs_text;

	/* Into another queue, the job is one more waiting there: its caps
	 * hold as for a qsub into it. */
	if (r == 0 && move && strcmp(q->name, j->queue) != 0 && waiting(j))
		r = queued_limit_check(s, j->uid, wire_str(row, "owner") ? wire_str(row, "owner") : "?", q,
				       text, sizeof(text), pool_job_weight(j), true);
	if (r == 0) {
		r = jobstore_job_alter(s->store, j->id, &a);
		if (r < 0)
			snprintf(text, sizeof(text), "job store: %s", strerror(-r));
	}
	if (r == 0 && !move && json_object_get(msg, "begin"))
		r = begin_apply(s, j, msg, false, text, sizeof(text));
	if (r == 0 && move)
		r = pool_job_move(s->pool, j, q->name);
	free(attrs_text);
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job %lld: %s", (long long)j->id, text);
		json_decref(row);
		return;
	}
	j->ncpus = a.ncpus;
	j->mem = a.mem;
	j->walltime = a.walltime;
	j->rerunnable = a.rerunnable;
	log_info("job %lld %s by uid %d", (long long)j->id, move ? "moved" : "altered", (int)c->uid);
	hctx_resched(s);
	json_decref(row);
	conn_reply_ok(c, req_id, json_pack("{s:s, s:s}", "state", job_state_name(j->state),
					   "queue", j->queue));
}

/* swap (qorder): two queued jobs of one owner in one queue trade places. */
void op_swap(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	struct job *a = job_for_change(c, req_id, msg), *b;
	json_t *other;

	if (!a)
		return;
	other = json_pack("{s:I}", "jobid", (json_int_t)wire_int(msg, "other", 0));
	b = job_for_change(c, req_id, other);
	json_decref(other);
	if (!b)
		return;
	if (a->uid != b->uid || strcmp(a->queue, b->queue) != 0) {
		conn_reply_err(c, req_id, EINVAL, "jobs %lld and %lld are not of one owner in one queue",
			       (long long)a->id, (long long)b->id);
		return;
	}
	if (pool_job_swap(s->pool, a, b) < 0) {
		conn_reply_err(c, req_id, EBUSY, "jobs %lld (%s) and %lld (%s): only queued jobs can be reordered",
			       (long long)a->id, job_state_name(a->state), (long long)b->id,
			       job_state_name(b->state));
		return;
	}
	log_info("jobs %lld and %lld swapped by uid %d", (long long)a->id, (long long)b->id, (int)c->uid);
	hctx_resched(s);
	conn_reply_ok(c, req_id, NULL);
}

/* signal (qsig): the node's gded forwards SIGRTMIN + N to the job's
 * process group as N (gded's own TERM means "cancel"), so a job can be
 * sent any of signals 1-30, STOP and KILL included. */
void op_signal(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct job *j = job_for_change(c, req_id, msg);
	long long sig = wire_int(msg, "signal", 0);

	if (!j)
		return;
	if (sig < 1 || sig > 30 || SIGRTMIN + sig > SIGRTMAX) {
		conn_reply_err(c, req_id, EINVAL, "signal %lld: not a signal qpool forwards (1-30)", sig);
		return;
	}
	if (j->state != JOB_RUNNING) {
		conn_reply_err(c, req_id, EBUSY, "job %lld is %s; only running jobs can be signalled",
			       (long long)j->id, job_state_name(j->state));
		return;
	}
	if (!node_signal(conn_ctx(c), j, SIGRTMIN + (int)sig)) {
		conn_reply_err(c, req_id, EHOSTUNREACH, "job %lld: node %s is down", (long long)j->id,
			       job_node(j) ? job_node(j) : "?");
		return;
	}
	log_info("job %lld: signal %lld sent by uid %d", (long long)j->id, sig, (int)c->uid);
	conn_reply_ok(c, req_id, NULL);
}

void op_rerun(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	struct job *j = job_for_change(c, req_id, msg);
	int r;

	if (!j)
		return;
	if (j->state != JOB_RUNNING) {
		conn_reply_err(c, req_id, EBUSY, "job %lld is %s; only running jobs can be rerun",
			       (long long)j->id, job_state_name(j->state));
		return;
	}
	if (!j->rerunnable && !wire_bool(msg, "force", 0)) {
		conn_reply_err(c, req_id, EPERM, "job %lld is not rerunnable (qsub -r n); qrerun -W force does it",
			       (long long)j->id);
		return;
	}
	/* scontrol requeue's "begin": Slurm's requeued job waits (its
	 * begin time now + 121 s), so a script's "scontrol requeue; scontrol
	 * update StartTime=" finds it waiting. A later begin time of the
	 * job's own stays. */
	if (json_object_get(msg, "begin")) {
		char text[160];

		r = begin_apply(s, j, msg, true, text, sizeof(text));
		if (r < 0) {
			conn_reply_err(c, req_id, -r, "job %lld: %s", (long long)j->id, text);
			return;
		}
	}
	r = server_job_requeue(s, j, "rerun requested");
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		return;
	}
	log_info("job %lld: rerun requested by uid %d", (long long)j->id, (int)c->uid);
	conn_reply_ok(c, req_id, json_pack("{s:s}", "state", job_state_name(j->state)));
}

