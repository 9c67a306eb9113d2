/* SPDX-License-Identifier: MIT */
/* QOS records, the QOS each user may use, and the budgets of accounts
 * (docs/QOS.md). As accounts.c: the SQL is written once and runs on either
 * backend through jobstore_sql_*; after each change the whole set is read
 * back and applied to the pool. */
#include <errno.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "accounts.h"
#include "conn.h"
#include "hctx.h"
#include "jobstore-internal.h"
#include "jobstore.h"
#include "log.h"
#include "ops.h"
#include "pool.h"
#include "qos-pool.h"
#include "qos.h"
#include "recset.h"
#include "reslimits.h"
#include "wire.h"

#define QOS_NAME_MAX 64
#define LIMIT_MAX 1000000000LL

struct qos_rec {
	char *name, *preempt, *mode, *descr;
	int64_t priority;
	struct pool_qos_limits lim;
	int64_t max_wall;   /* seconds; -1: none */
};

struct qos_user {
	char *user, *qos, *dflt;
};

struct budget {
	char *kind, *name;
	int64_t cpu_mins, gpu_mins;
};

struct qos_set {
	struct qos_rec *rec;
	size_t n_rec;
	struct qos_user *usr;
	size_t n_usr;
	struct budget *bud;
	size_t n_bud;
};

/* The limits' JSON keys, in struct pool_qos_limits's order, then max_wall. */
static const char *const limit_keys[] = { "max_cpus_per_user", "max_gpus_per_user", "max_jobs_per_user",
					  "grp_cpus", "grp_gpus", "max_wall" };
#define N_LIMITS (sizeof(limit_keys) / sizeof(limit_keys[0]))

static int64_t *limit_at(struct qos_rec *r, size_t k)
{
	switch (k) {
	case 0: return &r->lim.max_cpus_per_user;
	case 1: return &r->lim.max_gpus_per_user;
	case 2: return &r->lim.max_jobs_per_user;
	case 3: return &r->lim.grp_cpus;
	case 4: return &r->lim.grp_gpus;
	default: return &r->max_wall;
	}
}

static void rec_limits_parse(struct qos_rec *e, const char *text)
{
	json_t *o = text ? json_loads(text, 0, NULL) : NULL;

	for (size_t k = 0; k < N_LIMITS; k++)
		*limit_at(e, k) = wire_int(o, limit_keys[k], -1);
	json_decref(o);
}

static int qos_row(const struct jobstore_row *r, void *ud)
{
	struct qos_set *q = ud;
	struct qos_rec *grown = realloc(q->rec, (q->n_rec + 1) * sizeof(*grown)), *e;

	if (!grown)
		return -ENOMEM;
	q->rec = grown;
	e = &q->rec[q->n_rec++];
	memset(e, 0, sizeof(*e));
	e->name = recset_dup(row_text(r, 0));
	e->priority = row_i64(r, 1);
	rec_limits_parse(e, row_text(r, 2));
	e->preempt = strdup(row_text(r, 3) ? row_text(r, 3) : "");
	e->mode = strdup(row_text(r, 4) ? row_text(r, 4) : "requeue");
	e->descr = recset_dup(row_text(r, 5));
	return e->name && e->preempt && e->mode ? 0 : -ENOMEM;
}

static int user_row(const struct jobstore_row *r, void *ud)
{
	struct qos_set *q = ud;
	struct qos_user *grown = realloc(q->usr, (q->n_usr + 1) * sizeof(*grown)), *e;

	if (!grown)
		return -ENOMEM;
	q->usr = grown;
	e = &q->usr[q->n_usr++];
	e->user = recset_dup(row_text(r, 0));
	e->qos = recset_dup(row_text(r, 1));
	e->dflt = recset_dup(row_text(r, 2));
	return e->user && e->qos ? 0 : -ENOMEM;
}

static int budget_row(const struct jobstore_row *r, void *ud)
{
	struct qos_set *q = ud;
	struct budget *grown = realloc(q->bud, (q->n_bud + 1) * sizeof(*grown)), *e;

	if (!grown)
		return -ENOMEM;
	q->bud = grown;
	e = &q->bud[q->n_bud++];
	e->kind = recset_dup(row_text(r, 0));
	e->name = recset_dup(row_text(r, 1));
	e->cpu_mins = row_null(r, 2) ? -1 : row_i64(r, 2);
	e->gpu_mins = row_null(r, 3) ? -1 : row_i64(r, 3);
	return e->kind && e->name ? 0 : -ENOMEM;
}

void qos_free(struct qos_set *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->n_rec; i++) {
		free(q->rec[i].name);
		free(q->rec[i].preempt);
		free(q->rec[i].mode);
		free(q->rec[i].descr);
	}
	for (size_t i = 0; i < q->n_usr; i++) {
		free(q->usr[i].user);
		free(q->usr[i].qos);
		free(q->usr[i].dflt);
	}
	for (size_t i = 0; i < q->n_bud; i++) {
		free(q->bud[i].kind);
		free(q->bud[i].name);
	}
	free(q->rec);
	free(q->usr);
	free(q->bud);
	free(q);
}

static const struct qos_rec *rec_find(const struct qos_set *q, const char *name)
{
	for (size_t i = 0; q && name && i < q->n_rec; i++)
		if (!strcmp(q->rec[i].name, name))
			return &q->rec[i];
	return NULL;
}

/* "normal" always exists: priority 0, no limits, until changed. */
static int normal_add(void *set)
{
	struct qos_set *q = set;
	struct qos_rec *grown, *e;

	if (rec_find(q, QOS_NORMAL))
		return 0;
	grown = realloc(q->rec, (q->n_rec + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	q->rec = grown;
	e = &q->rec[q->n_rec++];
	memset(e, 0, sizeof(*e));
	rec_limits_parse(e, NULL);
	e->name = strdup(QOS_NORMAL);
	e->preempt = strdup("");
	e->mode = strdup("requeue");
	return e->name && e->preempt && e->mode ? 0 : -ENOMEM;
}

static void kind_free(void *set)
{
	qos_free(set);
}

static int kind_apply(void *set, struct pool *p)
{
	qos_apply(set, p);
	return 0;
}

static json_t *kind_reply(const void *set)
{
	return qos_json(set);
}

static const struct recset_table tables[] = {
	{ "SELECT name, priority, limits, preempt, preempt_mode, description FROM qos ORDER BY name", qos_row },
	{ "SELECT user_name, qos, default_qos FROM qos_users ORDER BY user_name", user_row },
	{ "SELECT kind, name, cpu_mins, gpu_mins FROM budgets ORDER BY kind, name", budget_row },
};

static const struct recset_kind set_kind = {
	.size = sizeof(struct qos_set),
	.tables = tables,
	.n_tables = sizeof(tables) / sizeof(tables[0]),
	.loaded = normal_add,
	.free = kind_free,
	.apply = kind_apply,
	.slot = offsetof(struct hctx, qos),
	.name = "qos",
	.reply = kind_reply,
};

int qos_load(struct jobstore *js, struct qos_set **ret)
{
	void *set;
	int r = recset_load(js, &set_kind, &set);

	if (r == 0)
		*ret = set;
	return r;
}

void qos_apply(const struct qos_set *q, struct pool *p)
{
	pool_qos_clear(p);
	for (size_t i = 0; q && i < q->n_rec; i++)
		if (pool_qos_set(p, q->rec[i].name, q->rec[i].priority, &q->rec[i].lim, q->rec[i].preempt,
				 q->rec[i].mode && !strcmp(q->rec[i].mode, "suspend")) < 0)
			log_err("qos: out of memory setting %s's", q->rec[i].name);
	pool_acct_budgets_clear(p);
	pool_user_budgets_clear(p);
	for (size_t i = 0; q && i < q->n_bud; i++) {
		const struct budget *b = &q->bud[i];
		struct passwd *pw;

		if (!strcmp(b->kind, "account") && pool_acct_budget_set(p, b->name, b->cpu_mins, b->gpu_mins) < 0)
			log_err("budgets: out of memory setting account %s's", b->name);
		if (!strcmp(b->kind, "user") && b->cpu_mins >= 0 && (pw = getpwnam(b->name)) &&
		    pool_user_budget_set(p, pw->pw_uid, b->name, b->cpu_mins) < 0)
			log_err("budgets: out of memory setting user %s's", b->name);
	}
}

/* Whether the pool defines QOS of its own (more than the implicit normal,
 * or a user's list): none, and a job records none unless it asks. */
static bool defined(const struct qos_set *q)
{
	return q && (q->n_rec > 1 || q->n_usr > 0 || (q->n_rec == 1 && strcmp(q->rec[0].name, QOS_NORMAL)));
}

static const struct qos_user *user_find(const struct qos_set *q, const char *user)
{
	for (size_t i = 0; q && user && i < q->n_usr; i++)
		if (!strcmp(q->usr[i].user, user))
			return &q->usr[i];
	return NULL;
}

/* Whether name is in the comma list. */
static bool list_has(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		size_t k = strcspn(p, ",");

		if (k == n && !strncmp(p, name, n))
			return true;
		p += k + (p[k] == ',');
	}
	return false;
}

int qos_submit_check(const struct qos_set *q, const char *user, bool is_root, const char *asked, uint64_t walltime,
		     const char **ret_qos, char *why, size_t len)
{
	const struct qos_user *u = user_find(q, user);
	const struct qos_rec *e;

	*ret_qos = asked;
	/* No QOS of the pool's own: nothing checked, --qos recorded as given
	 * (as -A is without accounts: docs/QOS.md). */
	if (!defined(q))
		return 0;
	if (!asked) {
		asked = u && u->dflt ? u->dflt : QOS_NORMAL;
		*ret_qos = asked;
	}
	e = rec_find(q, asked);
	if (!e) {
		log_info("refused a job of %s: no qos %s", user, asked);
		snprintf(why, len, QOS_REFUSED);
		return -EPERM;
	}
	/* A user's list, else normal alone (Slurm's association default). */
	if (!is_root && !(u ? list_has(u->qos, asked) : !strcmp(asked, QOS_NORMAL))) {
		log_info("refused a job of %s: may not use qos %s", user, asked);
		snprintf(why, len, QOS_REFUSED);
		return -EPERM;
	}
	if (e->max_wall >= 0 && walltime > (uint64_t)e->max_wall) {
		snprintf(why, len, "Job violates accounting/QOS policy (job submit limit, user's size and/or time "
			 "limits): QOSMaxWallDurationPerJobLimit: qos %s: MaxWall %lld s, the job asks %llu s", e->name,
			 (long long)e->max_wall, (unsigned long long)walltime);
		return -EPERM;
	}
	return 0;
}

bool qos_preempt_cancels(const struct qos_set *q, const char *name)
{
	const struct qos_rec *e = rec_find(q, name);

	return e && !strcmp(e->mode, "cancel");
}

json_t *qos_json(const struct qos_set *q)
{
	json_t *o = json_object(), *arr = json_array(), *users = json_array(), *bud = json_array();

	for (size_t i = 0; q && arr && i < q->n_rec; i++) {
		struct qos_rec *e = &q->rec[i];
		json_t *r = json_pack("{s:s, s:I, s:s, s:s}", "name", e->name, "priority", (json_int_t)e->priority,
				      "preempt", e->preempt, "preempt_mode", e->mode);

		for (size_t k = 0; r && k < N_LIMITS; k++)
			if (*limit_at(e, k) >= 0)
				json_object_set_new(r, limit_keys[k], json_integer(*limit_at(e, k)));
		if (r && e->descr)
			json_object_set_new(r, "description", json_string(e->descr));
		json_array_append_new(arr, r);
	}
	for (size_t i = 0; q && users && i < q->n_usr; i++) {
		json_t *r = json_pack("{s:s, s:s}", "user", q->usr[i].user, "qos", q->usr[i].qos);

		if (r && q->usr[i].dflt)
			json_object_set_new(r, "default_qos", json_string(q->usr[i].dflt));
		json_array_append_new(users, r);
	}
	for (size_t i = 0; q && bud && i < q->n_bud; i++) {
		json_t *r = json_pack("{s:s, s:s}", "kind", q->bud[i].kind, "name", q->bud[i].name);

		if (r && q->bud[i].cpu_mins >= 0)
			json_object_set_new(r, "cpu_mins", json_integer(q->bud[i].cpu_mins));
		if (r && q->bud[i].gpu_mins >= 0)
			json_object_set_new(r, "gpu_mins", json_integer(q->bud[i].gpu_mins));
		json_array_append_new(bud, r);
	}
	json_object_set_new(o, "qos", arr ? arr : json_array());
	json_object_set_new(o, "users", users ? users : json_array());
	json_object_set_new(o, "budgets", bud ? bud : json_array());
	return o;
}

/* Runs stmts with p, reads the set back and applies it; replies
 * (recset_change). */
static void change(struct conn *c, long long req_id, const struct jobstore_sql *stmts, size_t n,
		   const struct jobstore_ev_params *p, const char *what)
{
	recset_change(c, req_id, &set_kind, stmts, n, p, what);
}

/* Whether, with name preempting the list preempt, some QOS reaches name
 * again by what each preempts (a loop: A preempts B preempts A). */
static bool preempt_loops(const struct qos_set *q, const char *name, const char *preempt, size_t depth)
{
	for (const char *p = preempt; p && *p && depth <= q->n_rec + 1;) {
		size_t k = strcspn(p, ",");
		char one[QOS_NAME_MAX];
		const struct qos_rec *e;

		snprintf(one, sizeof(one), "%.*s", (int)(k < sizeof(one) ? k : sizeof(one) - 1), p);
		p += k + (p[k] == ',');
		if (!strcmp(one, name))
			return true;
		e = rec_find(q, one);
		if (e && preempt_loops(q, name, e->preempt, depth + 1))
			return true;
	}
	return false;
}

static void qos_put(struct conn *c, long long req_id, json_t *msg, bool modify)
{
	static const struct jobstore_sql put[] = {
		{ "INSERT INTO qos (name, priority, limits, preempt, preempt_mode, description)"
		  " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO UPDATE SET priority = excluded.priority,"
		  " limits = excluded.limits, preempt = excluded.preempt, preempt_mode = excluded.preempt_mode,"
		  " description = excluded.description", 6 },
	};
	const struct qos_set *q = conn_ctx(c)->qos;
	const char *name = wire_str(msg, "name");
	const struct qos_rec *old = rec_find(q, name);
	struct qos_rec e;
	const char *preempt, *mode, *descr;
	long long prio;
	json_t *lim = json_object();
	char *lim_text = NULL, what[160];
	struct jobstore_ev_params p = { 0 };

	if (!recset_name_ok(name, QOS_NAME_MAX, true)) {
		conn_reply_err(c, req_id, EINVAL, "qos name '%.64s': 1-%d letters, digits, '_', '-' or '.'",
			       name ? name : "", QOS_NAME_MAX - 1);
		goto done;
	}
	/* normal exists from the start: add of it is a modify. */
	if (!modify && old) {
		conn_reply_err(c, req_id, EEXIST, "qos %s exists already", name);
		goto done;
	}
	if (modify && !old) {
		conn_reply_err(c, req_id, ENOENT, "no qos %s", name);
		goto done;
	}
	prio = wire_int(msg, "priority", old ? old->priority : 0);
	if (prio < 0 || prio > LIMIT_MAX) {
		conn_reply_err(c, req_id, EINVAL, "priority=%lld: 0 to %lld", prio, LIMIT_MAX);
		goto done;
	}
	memset(&e, 0, sizeof(e));
	for (size_t k = 0; k < N_LIMITS; k++) {
		long long v = wire_int(msg, limit_keys[k], old ? *limit_at((struct qos_rec *)old, k) : -1);

		if (v < -1 || v > LIMIT_MAX) {
			conn_reply_err(c, req_id, EINVAL, "%s=%lld: -1 (none) or 0 to %lld", limit_keys[k], v, LIMIT_MAX);
			goto done;
		}
		if (v >= 0)
			json_object_set_new(lim, limit_keys[k], json_integer(v));
	}
	preempt = json_object_get(msg, "preempt") ? wire_str(msg, "preempt") : old ? old->preempt : "";
	if (!preempt)
		preempt = "";
	for (const char *s = preempt; *s;) {
		size_t k = strcspn(s, ",");
		char one[QOS_NAME_MAX];

		snprintf(one, sizeof(one), "%.*s", (int)(k < sizeof(one) ? k : sizeof(one) - 1), s);
		if (!k || !rec_find(q, one)) {
			conn_reply_err(c, req_id, ENOENT, "Preempt=%.100s: no qos %s", preempt, one);
			goto done;
		}
		if (!strcmp(one, name)) {
			conn_reply_err(c, req_id, ELOOP, "qos %s cannot preempt itself", name);
			goto done;
		}
		s += k + (s[k] == ',');
	}
	if (preempt_loops(q, name, preempt, 0)) {
		conn_reply_err(c, req_id, ELOOP, "qos %s: Preempt=%.100s makes a loop of preemption", name, preempt);
		goto done;
	}
	mode = wire_str(msg, "preempt_mode") ?: (old ? old->mode : "requeue");
	if (strcasecmp(mode, "requeue") && strcasecmp(mode, "cancel") && strcasecmp(mode, "suspend")) {
		conn_reply_err(c, req_id, EINVAL, "PreemptMode=%.40s: requeue, cancel or suspend", mode);
		goto done;
	}
	mode = !strcasecmp(mode, "cancel") ? "cancel" : !strcasecmp(mode, "suspend") ? "suspend" : "requeue";
	descr = wire_str(msg, "description") ?: (old ? old->descr : NULL);
	lim_text = json_dumps(lim, JSON_COMPACT | JSON_SORT_KEYS);
	if (!lim_text) {
		conn_reply_err(c, req_id, ENOMEM, "out of memory");
		goto done;
	}
	recset_param_text(&p, name);
	recset_param_int(&p, prio);
	recset_param_text(&p, lim_text);
	recset_param_text(&p, preempt);
	recset_param_text(&p, mode);
	recset_param_text(&p, descr);
	snprintf(what, sizeof(what), "%s qos %s", modify ? "modified" : "added", name);
	change(c, req_id, put, 1, &p, what);
done:
	free(lim_text);
	json_decref(lim);
}

static void qos_delete(struct conn *c, long long req_id, json_t *msg)
{
	static const struct jobstore_sql del[] = {
		{ "DELETE FROM qos WHERE name = $1", 1 },
	};
	const struct qos_set *q = conn_ctx(c)->qos;
	const char *name = wire_str(msg, "name");
	struct jobstore_ev_params p = { 0 };
	char what[160];

	if (!name || !rec_find(q, name)) {
		conn_reply_err(c, req_id, ENOENT, "no qos %.64s", name ? name : "");
		return;
	}
	if (!strcmp(name, QOS_NORMAL)) {
		conn_reply_err(c, req_id, EBUSY, "qos normal always exists");
		return;
	}
	for (size_t i = 0; i < q->n_rec; i++)
		if (list_has(q->rec[i].preempt, name)) {
			conn_reply_err(c, req_id, EBUSY, "qos %s preempts %s: change its Preempt= first", q->rec[i].name,
				       name);
			return;
		}
	for (size_t i = 0; i < q->n_usr; i++)
		if (list_has(q->usr[i].qos, name)) {
			conn_reply_err(c, req_id, EBUSY, "user %s may use qos %s: change its QOS= first", q->usr[i].user,
				       name);
			return;
		}
	recset_param_text(&p, name);
	snprintf(what, sizeof(what), "deleted qos %s", name);
	change(c, req_id, del, 1, &p, what);
}

/* A user's QOS: "qos" a comma list ("" back to normal alone), "default". */
static void user_set(struct conn *c, long long req_id, json_t *msg)
{
	static const struct jobstore_sql put[] = {
		{ "DELETE FROM qos_users WHERE user_name = $1", 1 },
		{ "INSERT INTO qos_users (user_name, qos, default_qos) VALUES ($1, $2, $3)", 3 },
	};
	const struct qos_set *q = conn_ctx(c)->qos;
	const char *user = wire_str(msg, "user");
	const struct qos_user *u = user_find(q, user);
	const char *list = json_object_get(msg, "qos") ? wire_str(msg, "qos") : u ? u->qos : QOS_NORMAL;
	const char *dflt = wire_str(msg, "default") ? NULL : wire_str(msg, "default_qos");
	struct jobstore_ev_params p = { 0 };
	char what[200], first[QOS_NAME_MAX] = "";

	if (!recset_name_ok(user, QOS_NAME_MAX, true)) {
		conn_reply_err(c, req_id, EINVAL, "user name '%.64s'", user ? user : "");
		return;
	}
	if (!list)
		list = "";
	for (const char *s = list; *s;) {
		size_t k = strcspn(s, ",");
		char one[QOS_NAME_MAX];

		snprintf(one, sizeof(one), "%.*s", (int)(k < sizeof(one) ? k : sizeof(one) - 1), s);
		if (!k || !rec_find(q, one)) {
			conn_reply_err(c, req_id, ENOENT, "QOS=%.100s: no qos %s", list, one);
			return;
		}
		if (!first[0])
			snprintf(first, sizeof(first), "%s", one);
		s += k + (s[k] == ',');
	}
	if (!dflt && u && u->dflt && list_has(list, u->dflt))
		dflt = u->dflt;
	if (dflt && !list_has(list, dflt)) {
		conn_reply_err(c, req_id, EINVAL, "DefaultQOS=%.64s is not in the user's QOS (%.100s)", dflt, list);
		return;
	}
	if (!dflt && *list)
		dflt = list_has(list, QOS_NORMAL) ? QOS_NORMAL : first;
	recset_param_text(&p, user);
	recset_param_text(&p, list);
	recset_param_text(&p, dflt);
	snprintf(what, sizeof(what), "user %s may use qos %.100s (default %s)", user, *list ? list : "normal",
		 dflt ? dflt : "normal");
	/* An empty list: the user is back to normal alone (no row). */
	change(c, req_id, put, *list ? 2 : 1, &p, what);
}

/* An account's budget (GrpTRESMins), or a user's ("user" instead of
 * "account"; CPU-minutes only): cpu_mins, gpu_mins; -1 lifts one. */
static void budget_set(struct conn *c, long long req_id, json_t *msg)
{
	static const struct jobstore_sql put[] = {
		{ "DELETE FROM budgets WHERE kind = $1 AND name = $2", 2 },
		{ "INSERT INTO budgets (kind, name, cpu_mins, gpu_mins) VALUES ($1, $2, $3, $4)", 4 },
	};
	const struct qos_set *q = conn_ctx(c)->qos;
	const char *kind = wire_str(msg, "user") ? "user" : "account";
	const char *name = wire_str(msg, kind);
	const struct budget *old = NULL;
	struct jobstore_ev_params p = { 0 };
	char what[160];
	long long v[2];

	if (!strcmp(kind, "account") && (!name || !accounts_has(conn_ctx(c)->accounts, name))) {
		conn_reply_err(c, req_id, ENOENT, "no account %.64s", name ? name : "");
		return;
	}
	if (!strcmp(kind, "user") && (!recset_name_ok(name, QOS_NAME_MAX, true) || !getpwnam(name))) {
		conn_reply_err(c, req_id, ENOENT, "no user %.64s on this host", name ? name : "");
		return;
	}
	for (size_t i = 0; i < q->n_bud; i++)
		if (!strcmp(q->bud[i].kind, kind) && !strcmp(q->bud[i].name, name))
			old = &q->bud[i];
	v[0] = wire_int(msg, "cpu_mins", old ? old->cpu_mins : -1);
	v[1] = wire_int(msg, "gpu_mins", old ? old->gpu_mins : -1);
	if (!strcmp(kind, "user") && v[1] >= 0) {
		conn_reply_err(c, req_id, EINVAL, "GrpTRESMins=gres/gpu= on a user: not made (a user's budget counts "
			       "CPU-minutes, a GPU weighing fairshare_gpu_weight CPUs)");
		return;
	}
	for (int k = 0; k < 2; k++)
		if (v[k] < -1 || v[k] > LIMIT_MAX) {
			conn_reply_err(c, req_id, EINVAL, "GrpTRESMins=%s=%lld: -1 (none) or 0 to %lld",
				       k ? "gres/gpu" : "cpu", v[k], LIMIT_MAX);
			return;
		}
	recset_param_text(&p, kind);
	recset_param_text(&p, name);
	for (int k = 0; k < 2; k++) {
		p.v[p.n].is_text = v[k] < 0;
		p.v[p.n].text = NULL;
		p.v[p.n++].i = v[k];
	}
	snprintf(what, sizeof(what), "%s %s's budget cpu=%lld gres/gpu=%lld minutes", kind, name, v[0], v[1]);
	change(c, req_id, put, 2, &p, what);
}

void op_qos(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	const char *action = wire_str(msg, "action");

	if (!action || !strcmp(action, "list")) {
		conn_reply_ok(c, req_id, qos_json(conn_ctx(c)->qos));
		return;
	}
	if (c->uid != 0) {
		conn_reply_err(c, req_id, EPERM, "only root may change QOS and budgets");
		return;
	}
	if (!strcmp(action, "add") || !strcmp(action, "modify"))
		qos_put(c, req_id, msg, action[0] == 'm');
	else if (!strcmp(action, "delete"))
		qos_delete(c, req_id, msg);
	else if (!strcmp(action, "user_set"))
		user_set(c, req_id, msg);
	else if (!strcmp(action, "budget"))
		budget_set(c, req_id, msg);
	else
		conn_reply_err(c, req_id, EINVAL, "qos: unknown action '%.40s'", action);
}
