/* SPDX-License-Identifier: MIT */
/* Fair share at the server (docs/FAIRSHARE.md): the half-life and GPU
 * weight from qpool.conf, use read back from the store's jobs when the
 * server becomes active, a job's overhead taken back when it ends, and
 * the usage op (sshare, sprio). The shares are the accounts'
 * (accounts_apply). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounts.h"
#include "config.h"
#include "conn.h"
#include "fairshare.h"
#include "hctx.h"
#include "jobstore-internal.h"
#include "jobstore.h"
#include "log.h"
#include "ops.h"
#include "pool.h"
#include "reslimits.h"
#include "usage.h"
#include "users.h"

/* Use older than this many half-lives counts below 2^-30 of itself. */
#define USAGE_HALFLIVES 30

void usage_configure(struct hctx *s)
{
	pool_fairshare_config(s->pool, s->config->fairshare_halflife, s->config->fairshare_gpu_weight);
}

struct load {
	struct hctx *s;
	double now;
	size_t jobs;
};

static int usage_row(const struct jobstore_row *r, void *ud)
{
	struct load *l = ud;
	const char *state = row_text(r, 4);
	double w = (double)row_i64(r, 1), t0 = (double)row_i64(r, 2) / 1e9, t1;

	if (row_null(r, 3)) {
		/* Running: its use up to now; the pool counts it on. */
		if (!state || (strcmp(state, "running") != 0 && strcmp(state, "exiting") != 0))
			return 0;
		t1 = l->now;
	} else {
		t1 = (double)row_i64(r, 3) / 1e9;
	}
	/* Time suspended is not use (docs/PREEMPTION.md); the account's use
	 * is its budget's (docs/QOS.md). */
	if (row_text(r, 5)) {
		json_t *attrs = json_loads(row_text(r, 5), 0, NULL);
		const char *g = json_string_value(json_object_get(attrs, "Resource_List.ngpus"));
		const char *acct = json_string_value(json_object_get(attrs, "Account_Name"));
		double gpus = g ? strtod(g, NULL) : 0;
		int e;

		w += (double)l->s->config->fairshare_gpu_weight * gpus;
		t1 -= (double)json_integer_value(json_object_get(attrs, "suspended_ns")) / 1e9;
		if (t1 < t0)
			t1 = t0;
		/* The account's use, for its budget (docs/QOS.md). */
		e = acct ? pool_acct_usage_past(l->s->pool, acct, (double)row_i64(r, 1), gpus, t0, t1, l->now) : 0;
		json_decref(attrs);
		if (e < 0)
			return e;
	}
	l->jobs++;
	return pool_usage_past(l->s->pool, (uid_t)row_i64(r, 0), w, t0, t1, l->now);
}

/* A job's use is its connect time, exec to exit (its end when it has no
 * exit stamp), not the overhead before and after; an array's own row
 * stamps its subjobs' span, which its subjobs' rows count. The jobs that
 * ended since the horizon ($1) by jobs_done, the ones not ended (no
 * t_done: every ended job has one, jobstore_job_finish) by jobs_state:
 * jobs_done holds no job without t_done (schema 19), and an OR of the
 * two would read every job ever run. */
#define USAGE_COLS "SELECT uid, ncpus, t_exec, coalesce(t_exit, t_done), state, attrs FROM jobs" \
		   " WHERE t_exec IS NOT NULL AND array_spec IS NULL"
const char usage_load_sql[] =
	USAGE_COLS " AND t_done > $1"
	" UNION ALL " USAGE_COLS " AND t_done IS NULL AND state IN ('queued','held','running','exiting')";
#undef USAGE_COLS

int usage_load(struct hctx *s)
{
	struct load l = { s, pool_fairshare_now(s->pool), 0 };
	struct jobstore_ev_params p = { .n = 1 };
	double horizon = l.now - USAGE_HALFLIVES * (double)s->config->fairshare_halflife;
	int r;

	p.v[0].i = horizon > 0 ? (int64_t)(horizon * 1e9) : 0;
	r = jobstore_sql_rows(s->store, usage_load_sql, &p, usage_row, &l);
	if (r < 0)
		log_err("fair share: cannot read the jobs' use from the store: %s", strerror(-r));
	else
		log_debug("fair share: use of %zu jobs read back", l.jobs);
	return r;
}

void usage_job_finished(struct hctx *s, const struct job *j)
{
	const struct job_result *res = j->result;
	double over = 0, now = pool_fairshare_now(s->pool);

	/* The pool counted it from dispatch to now; its use is exec to
	 * exit: the overhead on either side is given back. */
	if (!res || !res->times[STAMP_EXEC] || !res->times[STAMP_EXIT] || !j->t_dispatch)
		return;
	if (res->times[STAMP_EXEC] > j->t_dispatch)
		over += (double)(res->times[STAMP_EXEC] - j->t_dispatch) / 1e9;
	if (now > (double)res->times[STAMP_EXIT] / 1e9)
		over += now - (double)res->times[STAMP_EXIT] / 1e9;
	if (over > 0) {
		pool_usage_adjust(s->pool, j->uid, -over * pool_usage_weight(s->pool, j), now);
		pool_acct_usage_adjust(s->pool, j, -over, now);
	}
}

void op_usage(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	json_t *users = pool_usage_json(s->pool, pool_fairshare_now(s->pool)), *u;
	size_t i;

	json_array_foreach(users, i, u) {
		uid_t uid = (uid_t)json_integer_value(json_object_get(u, "uid"));
		const char *name = server_user_name(s, uid);
		const char *acct = name ? accounts_user_default(s->accounts, name) : NULL;

		if (name)
			json_object_set_new(u, "user", json_string(name));
		if (acct)
			json_object_set_new(u, "account", json_string(acct));
	}
	conn_reply_ok(c, req_id, json_pack("{s:o, s:I, s:I}", "users", users, "halflife",
					   (json_int_t)s->config->fairshare_halflife, "gpu_weight",
					   (json_int_t)s->config->fairshare_gpu_weight));
}
