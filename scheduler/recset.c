/* SPDX-License-Identifier: MIT */
/* A record set kept in the job store: load, reload after a write (recset.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "hctx.h"
#include "jobstore-internal.h"
#include "jobstore.h"
#include "log.h"
#include "recset.h"

int recset_load(struct jobstore *js, const struct recset_kind *k, void **ret)
{
	struct jobstore_ev_params none = { 0 };
	void *set = calloc(1, k->size);
	int r = 0;

	if (!set)
		return -ENOMEM;
	for (size_t i = 0; r == 0 && i < k->n_tables; i++)
		r = jobstore_sql_rows(js, k->tables[i].sql, &none, k->tables[i].row, set);
	if (r == 0 && k->loaded)
		r = k->loaded(set);
	if (r < 0) {
		k->free(set);
		return r;
	}
	*ret = set;
	return 0;
}

int recset_reload(struct hctx *s, const struct recset_kind *k)
{
	void **slot = (void **)((char *)s + k->slot);
	void *fresh;
	int r = recset_load(s->store, k, &fresh);

	if (r < 0)
		return r;
	k->free(*slot);
	*slot = fresh;
	r = k->apply(fresh, s->pool);
	/* What a pass may place changed: it sees it now. */
	hctx_resched(s);
	return r;
}

int recset_write(struct hctx *s, const struct recset_kind *k, const struct jobstore_sql *stmts, size_t n,
		 const struct jobstore_ev_params *p)
{
	int r = jobstore_sql_write(s->store, stmts, n, p);

	return r < 0 ? r : recset_reload(s, k);
}

void recset_change(struct conn *c, long long req_id, const struct recset_kind *k, const struct jobstore_sql *stmts,
		   size_t n, const struct jobstore_ev_params *p, const char *what)
{
	struct hctx *s = conn_ctx(c);
	int r = recset_write(s, k, stmts, n, p);

	if (r < 0) {
		conn_reply_err(c, req_id, -r, "job store: %s", strerror(-r));
		return;
	}
	log_info("%s: %s by uid %d", k->name, what, (int)c->uid);
	conn_reply_ok(c, req_id, k->reply(*(void **)((char *)s + k->slot)));
}

bool recset_name_ok(const char *s, size_t max, bool dot)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n >= max)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '-' || (dot && *s == '.')))
			return false;
	return true;
}

char *recset_dup(const char *s)
{
	return s ? strdup(s) : NULL;
}

void recset_param_text(struct jobstore_ev_params *p, const char *text)
{
	p->v[p->n].is_text = true;
	p->v[p->n++].text = text;
}

void recset_param_int(struct jobstore_ev_params *p, int64_t i)
{
	p->v[p->n].is_text = false;
	p->v[p->n++].i = i;
}
