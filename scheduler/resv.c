/* SPDX-License-Identifier: MIT */
/* Reservations and maintenance windows (docs/RESERVATIONS.md). As with
 * the accounts, the SQL is written once, here, and runs on either backend
 * through jobstore_sql_*; after each change the whole set is read back
 * and handed to placement (pool-resv.c). */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "accounts.h"
#include "conn.h"
#include "hctx.h"
#include "hostlist.h"
#include "job-end.h"
#include "jobstore-internal.h"
#include "jobstore.h"
#include "log.h"
#include "ops.h"
#include "pool.h"
#include "recset.h"
#include "resv.h"
#include "users.h"
#include "wire.h"

enum {
	RESV_MAINT = 1 << 0,
	RESV_IGNORE_JOBS = 1 << 1,
	RESV_DAILY = 1 << 2,
	RESV_WEEKLY = 1 << 3,
	RESV_REQUEUE = 1 << 4,   /* qpool's: requeue the jobs crossing it at its start */
};

static const struct {
	const char *name;
	unsigned bit;
} flag_names[] = {
	{ "MAINT", RESV_MAINT }, { "IGNORE_JOBS", RESV_IGNORE_JOBS }, { "DAILY", RESV_DAILY },
	{ "WEEKLY", RESV_WEEKLY }, { "REQUEUE", RESV_REQUEUE },
};

struct resv {
	char *name;
	int64_t id;
	int64_t start, end;      /* wall s */
	char *nodes;             /* "ALL" or a comma list */
	char *users, *grps, *accounts;   /* comma lists; NULL: none */
	unsigned flags;
	int64_t count;           /* standing: occurrences left, this one included; -1: for ever */
};

struct resvs {
	struct resv *v;
	size_t n;
	int64_t edge;            /* the next start or end a pass must follow; 0: none */
};

#define NODES_MAX 100000
#define DAY 86400

static const char SQL_RESVS[] =
	"SELECT name, id, t_start, t_end, nodes, users, grps, accounts, flags, count FROM reservations ORDER BY id";

/* s, or NULL for NULL or "" (an empty list is none). */
static char *dup_nonempty(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

static unsigned flags_parse(const char *s, const char **ret_bad)
{
	unsigned f = 0;

	*ret_bad = NULL;
	while (s && *s) {
		size_t n = strcspn(s, ","), k;

		for (k = 0; k < sizeof(flag_names) / sizeof(flag_names[0]); k++)
			if (strlen(flag_names[k].name) == n && !strncasecmp(s, flag_names[k].name, n))
				break;
		if (k == sizeof(flag_names) / sizeof(flag_names[0])) {
			if (n) {
				*ret_bad = s;
				return 0;
			}
		} else {
			f |= flag_names[k].bit;
		}
		s += n;
		s += *s == ',';
	}
	return f;
}

static void flags_format(unsigned f, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < sizeof(flag_names) / sizeof(flag_names[0]) && at < len; k++)
		if (f & flag_names[k].bit)
			at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? "," : "", flag_names[k].name);
}

static int resv_row(const struct jobstore_row *r, void *ud)
{
	struct resvs *a = ud;
	struct resv *grown = realloc(a->v, (a->n + 1) * sizeof(*grown)), *e;
	const char *bad;

	if (!grown)
		return -ENOMEM;
	a->v = grown;
	e = &a->v[a->n++];
	memset(e, 0, sizeof(*e));
	e->name = dup_nonempty(row_text(r, 0));
	e->id = row_i64(r, 1);
	e->start = row_i64(r, 2);
	e->end = row_i64(r, 3);
	e->nodes = dup_nonempty(row_text(r, 4));
	e->users = dup_nonempty(row_text(r, 5));
	e->grps = dup_nonempty(row_text(r, 6));
	e->accounts = dup_nonempty(row_text(r, 7));
	e->flags = flags_parse(row_text(r, 8), &bad);
	e->count = row_null(r, 9) ? -1 : row_i64(r, 9);
	return e->name && e->nodes ? 0 : -ENOMEM;
}

void resvs_free(struct resvs *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].name);
		free(a->v[i].nodes);
		free(a->v[i].users);
		free(a->v[i].grps);
		free(a->v[i].accounts);
	}
	free(a->v);
	free(a);
}

static bool all_nodes(const struct resv *e)
{
	return !strcasecmp(e->nodes, "ALL");
}

int resvs_apply(const struct resvs *a, struct pool *p)
{
	struct pool_resv_spec *v = calloc(a && a->n ? a->n : 1, sizeof(*v));
	char ***names = calloc(a && a->n ? a->n : 1, sizeof(*names));
	int *counts = calloc(a && a->n ? a->n : 1, sizeof(*counts));
	int r = -ENOMEM;

	if (!v || !names || !counts)
		goto done;
	for (size_t i = 0; a && i < a->n; i++) {
		const struct resv *e = &a->v[i];

		v[i] = (struct pool_resv_spec){ e->name, e->start, e->end, e->flags & RESV_MAINT, all_nodes(e), NULL, 0 };
		if (!v[i].all) {
			counts[i] = hostlist_expand(e->nodes, NODES_MAX, &names[i]);
			if (counts[i] < 0)
				counts[i] = 0;
			v[i].nodes = (const char *const *)names[i];
			v[i].n_nodes = (size_t)counts[i];
		}
	}
	r = pool_resv_set(p, v, a ? a->n : 0);
done:
	for (size_t i = 0; names && a && i < a->n; i++)
		hostlist_free(names[i], (size_t)counts[i]);
	free(names);
	free(counts);
	free(v);
	return r;
}

static void kind_free(void *set)
{
	resvs_free(set);
}

/* Applies the set and finds the next edge a pass must follow. */
static int kind_apply(void *set, struct pool *p)
{
	struct resvs *a = set;
	int r = resvs_apply(a, p);

	a->edge = pool_resv_next_edge(p, time(NULL));
	return r;
}

static const struct recset_table tables[] = {
	{ SQL_RESVS, resv_row },
};

static const struct recset_kind set_kind = {
	.size = sizeof(struct resvs),
	.tables = tables,
	.n_tables = sizeof(tables) / sizeof(tables[0]),
	.free = kind_free,
	.apply = kind_apply,
	.slot = offsetof(struct hctx, resvs),
	.name = "reservations",
};

int resvs_load(struct jobstore *js, struct resvs **ret)
{
	void *set;
	int r = recset_load(js, &set_kind, &set);

	if (r == 0)
		*ret = set;
	return r;
}

static const struct resv *resv_find(const struct resvs *a, const char *name)
{
	for (size_t i = 0; a && name && i < a->n; i++)
		if (!strcmp(a->v[i].name, name))
			return &a->v[i];
	return NULL;
}

const char *resvs_by_queue(const struct resvs *a, const char *queue)
{
	for (size_t i = 0; a && queue && i < a->n; i++) {
		char q[32];

		snprintf(q, sizeof(q), "R%lld", (long long)a->v[i].id);
		if (!strcmp(q, queue) || !strcmp(a->v[i].name, queue))
			return a->v[i].name;
	}
	return NULL;
}

/* Whether item is in the comma list. */
static bool list_has(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *at = list; at && *at; ) {
		size_t k = strcspn(at, ",");

		if (k == n && !strncmp(at, item, n))
			return true;
		at += k;
		at += *at == ',';
	}
	return false;
}

static bool user_in_grps(const char *user, const char *grps)
{
	struct passwd *pw = grps ? getpwnam(user) : NULL;
	gid_t g[256];
	int n = 256;

	if (!pw || getgrouplist(user, pw->pw_gid, g, &n) < 0)
		return false;
	for (int i = 0; i < n; i++) {
		struct group *gr = getgrgid(g[i]);

		if (gr && list_has(grps, gr->gr_name))
			return true;
	}
	return false;
}

static bool may_use(const struct resv *e, const char *user, uid_t uid, const char *account)
{
	return uid == 0 || (e->users && list_has(e->users, user)) || user_in_grps(user, e->grps) ||
	       (account && e->accounts && list_has(e->accounts, account));
}

int resvs_submit_check(const struct resvs *a, const char *name, const char *user, uid_t uid, const char *account,
		       char *why, size_t len)
{
	const struct resv *e = resv_find(a, name);

	if (!e) {
		log_info("refused a job of %s: no reservation %s", user, name);
		snprintf(why, len, RESV_INVALID);
		return -ENOENT;
	}
	if (!may_use(e, user, uid, account)) {
		log_info("refused a job of %s: not a user of reservation %s", user, name);
		snprintf(why, len, RESV_DENIED);
		return -EPERM;
	}
	return 0;
}

static json_t *resv_json(const struct resv *e, int64_t now, size_t all_count)
{
	char flags[96], q[32];
	json_t *o;

	flags_format(e->flags, flags, sizeof(flags));
	snprintf(q, sizeof(q), "R%lld", (long long)e->id);
	o = json_pack("{s:s, s:I, s:s, s:I, s:I, s:s, s:s, s:s, s:I}", "name", e->name, "id", (json_int_t)e->id,
		      "queue", q, "start", (json_int_t)e->start, "end", (json_int_t)e->end, "nodes", e->nodes, "flags",
		      flags, "state", now >= e->start && now < e->end ? "ACTIVE" : "INACTIVE", "count",
		      (json_int_t)e->count);
	if (o) {
		char **names = NULL;
		int n = all_nodes(e) ? -1 : hostlist_expand(e->nodes, NODES_MAX, &names);

		hostlist_free(names, n > 0 ? (size_t)n : 0);
		json_object_set_new(o, "node_cnt", json_integer(n >= 0 ? n : (json_int_t)all_count));
	}
	if (o && e->users)
		json_object_set_new(o, "users", json_string(e->users));
	if (o && e->grps)
		json_object_set_new(o, "groups", json_string(e->grps));
	if (o && e->accounts)
		json_object_set_new(o, "accounts", json_string(e->accounts));
	return o;
}

static size_t pool_count(struct hctx *s)
{
	size_t n = 0;

	for (struct node *nd = pool_nodes(s->pool); nd; nd = nd->next)
		n++;
	return n;
}

static json_t *resvs_json(struct hctx *s, const char *user, uid_t uid, const char *account)
{
	const struct resvs *a = s->resvs;
	json_t *arr = json_array();
	int64_t now = time(NULL);
	size_t all = pool_count(s);

	for (size_t i = 0; arr && a && i < a->n; i++)
		if (may_use(&a->v[i], user, uid, account))
			json_array_append_new(arr, resv_json(&a->v[i], now, all));
	return arr;
}

#define PARAMS_MAX ((int)(sizeof(((struct jobstore_ev_params *)0)->v) / sizeof(((struct jobstore_ev_params *)0)->v[0])))

/* Reads the set back into the server and the pool after a write. */
static int reload(struct hctx *s)
{
	return recset_reload(s, &set_kind);
}

/* A reservation's record as one insert (name first); the statements'
 * parameters in $N order, each used. */
static int store_put(struct hctx *s, const struct resv *e, bool replace, const char *old_name)
{
	static const struct jobstore_sql del[] = { { "DELETE FROM reservations WHERE name = $1", 1 } };
	static const struct jobstore_sql ins[] = {
		{ "INSERT INTO reservations (name, id, t_start, t_end, nodes, users, grps, accounts)"
		  " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", 8 },
	};
	static const struct jobstore_sql more[] = {
		{ "UPDATE reservations SET flags = $1, count = $2 WHERE name = $3", 3 },
	};
	struct jobstore_ev_params p = { 0 }, q = { 0 }, d = { 0 };
	char flags[96];
	int r = 0;

	/* Three statements (jobstore_sql_write binds at most eight
	 * parameters), one transaction: an update is a delete and an insert,
	 * all or nothing. */
	r = jobstore_begin(s->store);
	if (r == 0 && replace) {
		recset_param_text(&d, old_name);
		r = jobstore_sql_write(s->store, del, 1, &d);
	}
	recset_param_text(&p, e->name);
	recset_param_int(&p, e->id);
	recset_param_int(&p, e->start);
	recset_param_int(&p, e->end);
	recset_param_text(&p, e->nodes);
	recset_param_text(&p, e->users);
	recset_param_text(&p, e->grps);
	recset_param_text(&p, e->accounts);
	if (r == 0)
		r = jobstore_sql_write(s->store, ins, 1, &p);
	flags_format(e->flags, flags, sizeof(flags));
	recset_param_text(&q, flags);
	q.v[q.n].is_text = e->count < 0;   /* NULL: for ever */
	q.v[q.n].text = NULL;
	q.v[q.n++].i = e->count;
	recset_param_text(&q, e->name);
	if (r == 0)
		r = jobstore_sql_write(s->store, more, 1, &q);
	if (r == 0)
		r = jobstore_commit(s->store);
	if (r < 0)
		jobstore_rollback(s->store);
	return r;
}

static int store_delete(struct hctx *s, const char *name)
{
	static const struct jobstore_sql del[] = { { "DELETE FROM reservations WHERE name = $1", 1 } };
	struct jobstore_ev_params d = { 0 };

	recset_param_text(&d, name);
	return jobstore_sql_write(s->store, del, 1, &d);
}

/* The nodes of e (all: every node the pool knows), *ret for
 * hostlist_free; the count or -errno. */
static int resv_nodes(struct hctx *s, const struct resv *e, char ***ret)
{
	size_t n = 0;
	char **v;

	if (!all_nodes(e))
		return hostlist_expand(e->nodes, NODES_MAX, ret);
	for (struct node *nd = pool_nodes(s->pool); nd; nd = nd->next)
		n++;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	n = 0;
	for (struct node *nd = pool_nodes(s->pool); nd; nd = nd->next)
		if (!(v[n++] = strdup(nd->name))) {
			hostlist_free(v, n);
			return -ENOMEM;
		}
	*ret = v;
	return (int)n;
}

static int64_t job_end(const struct job *j)
{
	return j->walltime ? j->t_dispatch / 1000000000 + (int64_t)j->walltime : INT64_MAX;
}

/* The running jobs on names (not e's own) that would cross e's start,
 * as "12 (n1, till 09:10)" items into buf; their count. */
static size_t crossing(struct hctx *s, const struct resv *e, char **names, int n, char *buf, size_t len)
{
	int64_t seen[32];
	size_t n_seen = 0, count = 0, at = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		struct node *nd = pool_node_find(s->pool, names[i]);

		for (const struct alloc_entry *a = nd ? nd->jobs : NULL; a; a = a->nnext) {
			const struct job *j = a->job;
			bool dup = false;
			char till[32];

			if (!j || j->state != JOB_RUNNING || job_end(j) <= e->start || (j->resv && !strcmp(j->resv, e->name)))
				continue;
			for (size_t k = 0; k < n_seen; k++)
				dup = dup || seen[k] == j->id;
			if (dup)
				continue;
			if (n_seen < 32)
				seen[n_seen++] = j->id;
			count++;
			if (job_end(j) == INT64_MAX) {
				snprintf(till, sizeof(till), "no walltime");
			} else {
				time_t t = (time_t)job_end(j);
				struct tm tm;

				localtime_r(&t, &tm);
				strftime(till, sizeof(till), "till %H:%M:%S", &tm);
			}
			if (at < len && count <= 8)
				at += (size_t)snprintf(buf + at, len - at, "%s%lld (%s, %s)", at ? ", " : "",
						       (long long)j->id, nd->name, till);
		}
	}
	if (count > 8 && at < len)
		snprintf(buf + at, len - at, ", ...");
	return count;
}

/* Checks e (a new one, or old's change) against the pool and the other
 * reservations; 0, or -errno with the one line in why. */
static int resv_check(struct hctx *s, const struct resv *e, const char *old_name, char *why, size_t len)
{
	char **names = NULL, jobs[400];
	int n = resv_nodes(s, e, &names), r = 0;
	size_t k;

	if (n < 0) {
		snprintf(why, len, "Invalid node name specified: %s", e->nodes);
		return -EINVAL;
	}
	if (n == 0) {
		snprintf(why, len, "Invalid node name specified: no nodes");
		r = -EINVAL;
		goto done;
	}
	for (int i = 0; i < n; i++)
		if (!pool_node_find(s->pool, names[i])) {
			snprintf(why, len, "Invalid node name specified: %s", names[i]);
			r = -EINVAL;
			goto done;
		}
	for (k = 0; k < s->resvs->n; k++) {
		const struct resv *o = &s->resvs->v[k];
		char **on = NULL;
		int m;
		bool meet = false;

		if ((old_name && !strcmp(o->name, old_name)) || e->start >= o->end || e->end <= o->start)
			continue;
		m = all_nodes(o) || all_nodes(e) ? -1 : hostlist_expand(o->nodes, NODES_MAX, &on);
		for (int i = 0; i < n && !meet; i++)
			for (int x = 0; x < m && !meet; x++)
				meet = !strcmp(names[i], on[x]);
		hostlist_free(on, m > 0 ? (size_t)m : 0);
		if (m < 0 || meet) {
			snprintf(why, len, "Requested nodes are busy: reservation %s holds them from %lld to %lld", o->name,
				 (long long)o->start, (long long)o->end);
			r = -EBUSY;
			goto done;
		}
	}
	if (!(e->flags & (RESV_IGNORE_JOBS | RESV_REQUEUE)) && crossing(s, e, names, n, jobs, sizeof(jobs))) {
		snprintf(why, len,
			 "Requested nodes are busy: running jobs would cross its start: %s; Flags=IGNORE_JOBS leaves them"
			 " running, Flags=REQUEUE requeues them at its start",
			 jobs);
		r = -EBUSY;
	}
done:
	hostlist_free(names, n > 0 ? (size_t)n : 0);
	return r;
}

/* NodeCnt=N: the first N nodes, in registration order, no overlapping
 * reservation holds and no running job would cross its start on. */
static char *nodes_pick(struct hctx *s, struct resv *e, long long want)
{
	char **v = calloc((size_t)want, sizeof(*v)), *out = NULL;
	size_t n = 0, len = 0;

	if (!v)
		return NULL;
	for (struct node *nd = pool_nodes(s->pool); nd && (long long)n < want; nd = nd->next) {
		char *one[1] = { nd->name }, jobs[8];
		struct resv t = *e;
		bool taken = false;

		t.nodes = nd->name;
		for (size_t k = 0; k < s->resvs->n && !taken; k++) {
			const struct resv *o = &s->resvs->v[k];

			taken = e->start < o->end && e->end > o->start &&
				(all_nodes(o) || list_has(o->nodes, nd->name) || !strcmp(o->nodes, nd->name));
		}
		if (taken || (!(e->flags & (RESV_IGNORE_JOBS | RESV_REQUEUE)) && crossing(s, &t, one, 1, jobs, sizeof(jobs))))
			continue;
		v[n++] = nd->name;
		len += strlen(nd->name) + 1;
	}
	if ((long long)n == want && (out = malloc(len + 1))) {
		size_t at = 0;

		for (size_t i = 0; i < n; i++)
			at += (size_t)sprintf(out + at, "%s%s", i ? "," : "", v[i]);
		out[at] = '\0';
	}
	free(v);
	return out;
}

static void create_update(struct conn *c, long long req_id, json_t *msg, bool update)
{
	struct hctx *s = conn_ctx(c);
	const char *name = wire_str(msg, "name");
	const struct resv *old = resv_find(s->resvs, name);
	int64_t now = time(NULL), max_id = 0;
	struct resv e = { 0 };
	const char *bad, *fl = wire_str(msg, "flags");
	char why[600], *picked = NULL, flags[96];
	long long dur = wire_int(msg, "duration", -1), cnt = wire_int(msg, "node_cnt", 0);
	int r;

	if (update && !old) {
		conn_reply_err(c, req_id, ENOENT, "Reservation %.64s not found", name ? name : "");
		return;
	}
	if (!update && old) {
		conn_reply_err(c, req_id, EEXIST, "Reservation request failed: reservation %s exists already", name);
		return;
	}
	if (!update && name && !recset_name_ok(name, RESV_NAME_MAX, false)) {
		conn_reply_err(c, req_id, EINVAL, "ReservationName=%.64s: 1-%d letters, digits, '_' or '-'", name,
			       RESV_NAME_MAX - 1);
		return;
	}
	for (size_t i = 0; s->resvs && i < s->resvs->n; i++)
		if (s->resvs->v[i].id > max_id)
			max_id = s->resvs->v[i].id;
	if (old)
		e = *old;
	else
		e.id = max_id + 1;
	e.start = wire_int(msg, "start", old ? old->start : now);
	if (json_object_get(msg, "end"))
		e.end = wire_int(msg, "end", 0);
	else if (dur >= 0)
		e.end = e.start + dur;
	else if (old && json_object_get(msg, "start"))
		e.end = e.start + (old->end - old->start);   /* moved: the same length */
	else if (!old)
		e.end = e.start + DAY * 365;   /* Slurm's default: open-ended; a year here */
	if (fl) {
		e.flags = flags_parse(fl, &bad);
		if (bad) {
			conn_reply_err(c, req_id, EINVAL, "Invalid flag: %.40s (MAINT, IGNORE_JOBS, DAILY, WEEKLY, REQUEUE)", bad);
			return;
		}
	}
	if ((e.flags & RESV_DAILY) && (e.flags & RESV_WEEKLY)) {
		conn_reply_err(c, req_id, EINVAL, "Invalid flag: DAILY and WEEKLY together");
		return;
	}
	e.count = wire_int(msg, "count", old ? old->count : -1);
	if (e.count == 0 || e.count < -1) {
		conn_reply_err(c, req_id, EINVAL, "count=%lld: 1 or more occurrences", (long long)e.count);
		return;
	}
	if ((!old || json_object_get(msg, "start")) && e.start < now - 5) {
		conn_reply_err(c, req_id, EINVAL, "Invalid time specification: StartTime is in the past");
		return;
	}
	if (e.end <= e.start) {
		conn_reply_err(c, req_id, EINVAL, "Invalid time specification: EndTime is not after StartTime");
		return;
	}
	if ((e.flags & RESV_DAILY && e.end - e.start > DAY) || (e.flags & RESV_WEEKLY && e.end - e.start > 7 * DAY)) {
		conn_reply_err(c, req_id, EINVAL, "Invalid time specification: longer than its period");
		return;
	}
	if (!update) {
		char gen[32];

		/* A made-up name no waiting job still names (a reservation
		 * of that name was deleted): jobs keep a reservation's name. */
		for (bool taken = true; !name && taken; e.id++) {
			snprintf(gen, sizeof(gen), "R%lld", (long long)e.id);
			taken = false;
			for (const struct job *j = pool_jobs(s->pool); j && !taken; j = j->next)
				taken = j->resv && !strcmp(j->resv, gen);
			if (!taken)
				break;
		}
		e.name = (char *)(name ? name : gen);
		e.name = strdup(e.name);
	} else {
		e.name = strdup(old->name);
	}
	e.users = (char *)(json_object_get(msg, "users") ? wire_str(msg, "users") : e.users);
	e.grps = (char *)(json_object_get(msg, "groups") ? wire_str(msg, "groups") : e.grps);
	e.accounts = (char *)(json_object_get(msg, "accounts") ? wire_str(msg, "accounts") : e.accounts);
	for (const char *u = e.users; u && *u; ) {
		char one[64];
		size_t k = strcspn(u, ",");

		snprintf(one, sizeof(one), "%.*s", (int)(k < 63 ? k : 63), u);
		if (!getpwnam(one)) {
			conn_reply_err(c, req_id, EINVAL, "Invalid user id: %s", one);
			goto out;
		}
		u += k;
		u += *u == ',';
	}
	for (const char *g = e.grps; g && *g; ) {
		char one[64];
		size_t k = strcspn(g, ",");

		snprintf(one, sizeof(one), "%.*s", (int)(k < 63 ? k : 63), g);
		if (!getgrnam(one)) {
			conn_reply_err(c, req_id, EINVAL, "Invalid group id: %s", one);
			goto out;
		}
		g += k;
		g += *g == ',';
	}
	if (wire_str(msg, "nodes"))
		e.nodes = (char *)wire_str(msg, "nodes");
	else if (cnt > 0) {
		if (cnt > NODES_MAX || !(picked = nodes_pick(s, &e, cnt))) {
			conn_reply_err(c, req_id, EBUSY, "Requested nodes are busy: no %lld nodes free of running jobs"
				       " and reservations then", cnt);
			goto out;
		}
		e.nodes = picked;
	} else if (!old) {
		conn_reply_err(c, req_id, EINVAL, "Nodes= or NodeCnt= is required");
		goto out;
	}
	if (!e.users && !e.grps && !e.accounts && !(e.flags & RESV_MAINT)) {
		conn_reply_err(c, req_id, EINVAL, "Users=, Groups= or Accounts= is required (or Flags=MAINT)");
		goto out;
	}
	r = resv_check(s, &e, old ? old->name : NULL, why, sizeof(why));
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "%s", why);
		goto out;
	}
	flags_format(e.flags, flags, sizeof(flags));
	snprintf(why, sizeof(why), "reservation %s %s by uid %d: %.200s from %lld to %lld%s%s", e.name,
		 update ? "updated" : "created", (int)c->uid, e.nodes, (long long)e.start, (long long)e.end,
		 flags[0] ? ", flags " : "", flags);
	/* (e's strings may be the old set's, which reload frees.) */
	r = store_put(s, &e, update, old ? old->name : NULL);
	if (r == 0)
		r = reload(s);
	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		goto out;
	}
	log_info("%s", why);
	conn_reply_ok(c, req_id, json_pack("{s:o}", "reservation", resv_json(resv_find(s->resvs, e.name), now, pool_count(s))));
out:
	free(e.name);
	free(picked);
}

void op_resv(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct hctx *s = conn_ctx(c);
	const char *action = wire_str(msg, "action"), *name = wire_str(msg, "name");

	if (!action || !strcmp(action, "list")) {
		const char *user = server_user_name(s, c->uid);
		const char *acct = user && s->accounts ? accounts_user_default(s->accounts, user) : NULL;

		conn_reply_ok(c, req_id, json_pack("{s:o}", "reservations", resvs_json(s, user ? user : "",
											c->uid, acct)));
		return;
	}
	if (c->uid != 0) {
		conn_reply_err(c, req_id, EPERM, "Access/permission denied: only root may change reservations");
		return;
	}
	if (!strcmp(action, "create") || !strcmp(action, "update")) {
		create_update(c, req_id, msg, action[0] == 'u');
	} else if (!strcmp(action, "delete")) {
		int r;

		char kept[RESV_NAME_MAX];

		/* pbs_rdel R12: its queue's name stands for it. (A copy:
		 * reload frees the set it points into.) */
		if (!resv_find(s->resvs, name) && resvs_by_queue(s->resvs, name))
			name = resvs_by_queue(s->resvs, name);
		snprintf(kept, sizeof(kept), "%s", name ? name : "");
		name = kept;

		if (!resv_find(s->resvs, name)) {
			conn_reply_err(c, req_id, ENOENT, "Reservation %.64s not found", name);
			return;
		}
		r = store_delete(s, name);
		if (r == 0)
			r = reload(s);
		if (r < 0) {
			conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
			return;
		}
		log_info("reservation %s deleted by uid %d", name, (int)c->uid);
		conn_reply_ok(c, req_id, NULL);
	} else {
		conn_reply_err(c, req_id, EINVAL, "resv: unknown action '%.40s'", action);
	}
}

/* A window that requeues: the jobs still crossing it at its start. */
static void requeue_crossing(struct hctx *s, const struct resv *e, int64_t now)
{
	char **names = NULL, why[128];
	int n = resv_nodes(s, e, &names);

	snprintf(why, sizeof(why), "requeued: maintenance reservation %s started", e->name);
	for (int i = 0; i < n; i++) {
		struct node *nd = pool_node_find(s->pool, names[i]);

		/* server_job_requeue unlinks nothing now (the job stays till its
		 * node reports it gone), so the walk goes on safely. */
		for (struct alloc_entry *a = nd ? nd->jobs : NULL; a; a = a->nnext) {
			struct job *j = a->job;

			if (j && j->state == JOB_RUNNING && job_end(j) > now && !(j->resv && !strcmp(j->resv, e->name)) &&
			    server_job_requeue(s, j, why) >= 0)
				log_info("job %lld requeued for reservation %s", (long long)j->id, e->name);
		}
	}
	hostlist_free(names, n > 0 ? (size_t)n : 0);
}

void resv_tick(struct hctx *s)
{
	int64_t now = time(NULL);
	bool changed = false;

	if (!s->resvs)
		return;
	for (size_t i = 0; i < s->resvs->n; i++) {
		struct resv *e = &s->resvs->v[i];
		int64_t period = e->flags & RESV_DAILY ? DAY : e->flags & RESV_WEEKLY ? 7 * DAY : 0;

		if ((e->flags & RESV_REQUEUE) && now >= e->start && now < e->end)
			requeue_crossing(s, e, now);
		if (now < e->end)
			continue;
		if (period && e->count != 1) {
			struct resv next = *e;

			/* The next occurrence (after a long stop, the first
			 * still to come; each skipped one counts). */
			while (next.end <= now && next.count != 1) {
				next.start += period;
				next.end += period;
				if (next.count > 0)
					next.count--;
			}
			if (next.end > now) {
				if (store_put(s, &next, true, e->name) < 0)
					log_err("reservation %s: its next occurrence was not stored", e->name);
				else
					log_info("reservation %s: next occurrence from %lld", e->name, (long long)next.start);
				changed = true;
				continue;
			}
		}
		if (store_delete(s, e->name) < 0)
			log_err("reservation %s: ended, but not removed from the store", e->name);
		else
			log_info("reservation %s ended", e->name);
		changed = true;
	}
	if (changed) {
		if (reload(s) < 0)
			log_err("reservations: could not read them back");
	} else if (s->resvs->edge && now >= s->resvs->edge) {
		s->resvs->edge = pool_resv_next_edge(s->pool, now);
		hctx_resched(s);
	}
}
