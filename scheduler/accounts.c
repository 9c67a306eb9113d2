/* SPDX-License-Identifier: MIT */
/* Accounts and their users (docs/ACCOUNTS.md). The SQL is written once,
 * here, and runs on either backend through jobstore_sql_*: a change is
 * rare (an admin's command), so the statements are not kept prepared,
 * and after each the whole set is read back, small as it is. */
#include <errno.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounts.h"
#include "conn.h"
#include "fairshare.h"
#include "hctx.h"
#include "jobstore-internal.h"
#include "jobstore.h"
#include "log.h"
#include "ops.h"
#include "pool.h"
#include "recset.h"
#include "reslimits.h"
#include "wire.h"

struct account {
	char *name, *parent, *description;
	int64_t shares;
	int64_t grp_cpus, grp_gpus, grp_jobs;   /* limits (docs/LIMITS.md); -1: none */
};

struct assoc {
	char *account, *user;
	bool is_default;
};

struct accounts {
	struct account *acc;
	size_t n_acc;
	struct assoc *assoc;
	size_t n_assoc;
};

#define SHARES_MAX 1000000000LL

static const char SQL_ACCOUNTS[] =
	"SELECT name, parent, shares, description, grp_cpus, grp_gpus, grp_jobs FROM accounts ORDER BY name";
static const char SQL_ASSOCS[] =
	"SELECT account, user_name, is_default FROM account_users ORDER BY user_name, account";

static int account_row(const struct jobstore_row *r, void *ud)
{
	struct accounts *a = ud;
	struct account *grown = realloc(a->acc, (a->n_acc + 1) * sizeof(*grown)), *e;

	if (!grown)
		return -ENOMEM;
	a->acc = grown;
	e = &a->acc[a->n_acc];
	e->name = recset_dup(row_text(r, 0));
	e->parent = recset_dup(row_text(r, 1));
	e->shares = row_i64(r, 2);
	e->description = recset_dup(row_text(r, 3));
	e->grp_cpus = row_null(r, 4) ? -1 : row_i64(r, 4);
	e->grp_gpus = row_null(r, 5) ? -1 : row_i64(r, 5);
	e->grp_jobs = row_null(r, 6) ? -1 : row_i64(r, 6);
	a->n_acc++;
	return e->name ? 0 : -ENOMEM;
}

static int assoc_row(const struct jobstore_row *r, void *ud)
{
	struct accounts *a = ud;
	struct assoc *grown = realloc(a->assoc, (a->n_assoc + 1) * sizeof(*grown)), *e;

	if (!grown)
		return -ENOMEM;
	a->assoc = grown;
	e = &a->assoc[a->n_assoc];
	e->account = recset_dup(row_text(r, 0));
	e->user = recset_dup(row_text(r, 1));
	e->is_default = row_i64(r, 2) != 0;
	a->n_assoc++;
	return e->account && e->user ? 0 : -ENOMEM;
}

void accounts_free(struct accounts *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_acc; i++) {
		free(a->acc[i].name);
		free(a->acc[i].parent);
		free(a->acc[i].description);
	}
	for (size_t i = 0; i < a->n_assoc; i++) {
		free(a->assoc[i].account);
		free(a->assoc[i].user);
	}
	free(a->acc);
	free(a->assoc);
	free(a);
}

static void kind_free(void *set)
{
	accounts_free(set);
}

static int kind_apply(void *set, struct pool *p)
{
	accounts_apply(set, p);
	return 0;
}

/* The op's answer: {"accounts": accounts_json}. */
static json_t *kind_reply(const void *set)
{
	return json_pack("{s:o}", "accounts", accounts_json(set));
}

static const struct recset_table tables[] = {
	{ SQL_ACCOUNTS, account_row },
	{ SQL_ASSOCS, assoc_row },
};

static const struct recset_kind set_kind = {
	.size = sizeof(struct accounts),
	.tables = tables,
	.n_tables = sizeof(tables) / sizeof(tables[0]),
	.free = kind_free,
	.apply = kind_apply,
	.slot = offsetof(struct hctx, accounts),
	.name = "accounts",
	.reply = kind_reply,
};

int accounts_load(struct jobstore *js, struct accounts **ret)
{
	void *set;
	int r = recset_load(js, &set_kind, &set);

	if (r == 0)
		*ret = set;
	return r;
}

bool accounts_defined(const struct accounts *a)
{
	return a && a->n_acc > 0;
}

static const struct account *account_find(const struct accounts *a, const char *name)
{
	for (size_t i = 0; a && i < a->n_acc; i++)
		if (!strcmp(a->acc[i].name, name))
			return &a->acc[i];
	return NULL;
}

static const struct assoc *assoc_find(const struct accounts *a, const char *account, const char *user)
{
	for (size_t i = 0; a && i < a->n_assoc; i++)
		if (!strcmp(a->assoc[i].user, user) && (!account || !strcmp(a->assoc[i].account, account)))
			return &a->assoc[i];
	return NULL;
}

static const char *user_default(const struct accounts *a, const char *user)
{
	for (size_t i = 0; a && i < a->n_assoc; i++)
		if (a->assoc[i].is_default && !strcmp(a->assoc[i].user, user))
			return a->assoc[i].account;
	return NULL;
}

int accounts_submit_check(const struct accounts *a, const char *user, bool is_root, const char *asked,
			  const char **ret_account, char *why, size_t len)
{
	*ret_account = asked;
	if (!accounts_defined(a))
		return 0;
	if (asked) {
		if (!account_find(a, asked)) {
			log_info("refused a job of %s: no account %s", user, asked);
			snprintf(why, len, ACCOUNT_REFUSED);
			return -EPERM;
		}
		if (!is_root && !assoc_find(a, asked, user)) {
			log_info("refused a job of %s: not a user of account %s", user, asked);
			snprintf(why, len, ACCOUNT_REFUSED);
			return -EPERM;
		}
		return 0;
	}
	/* None asked: the user's default account, as Slurm's sbatch takes
	 * it; root may run under none. */
	*ret_account = user_default(a, user);
	if (!*ret_account && !is_root) {
		log_info("refused a job of %s: a user of no account", user);
		snprintf(why, len, ACCOUNT_REFUSED);
		return -EPERM;
	}
	return 0;
}

bool accounts_has(const struct accounts *a, const char *name)
{
	return name && account_find(a, name) != NULL;
}

const char *accounts_user_default(const struct accounts *a, const char *user)
{
	return user_default(a, user);
}

/* Account e's fraction of the pool: its shares over its siblings', times
 * its parent's fraction (depth bounded: the tree has no loop). */
static double account_fraction(const struct accounts *a, const struct account *e, size_t depth)
{
	const struct account *parent = e->parent ? account_find(a, e->parent) : NULL;
	double sum = 0;

	for (size_t i = 0; i < a->n_acc; i++) {
		const char *pp = a->acc[i].parent;

		if ((pp && parent && !strcmp(pp, parent->name)) || (!pp && !parent))
			sum += (double)a->acc[i].shares;
	}
	if (sum <= 0)
		return 0;
	return (double)e->shares / sum * (parent && depth < a->n_acc ? account_fraction(a, parent, depth + 1) : 1);
}

void accounts_apply(const struct accounts *a, struct pool *p)
{
	double least = 0;

	/* The limits (docs/LIMITS.md). */
	pool_acct_limits_clear(p);
	for (size_t i = 0; a && i < a->n_acc; i++) {
		const struct account *e = &a->acc[i];

		if ((e->grp_cpus >= 0 || e->grp_gpus >= 0 || e->grp_jobs >= 0) &&
		    pool_acct_limit_set(p, e->name, e->grp_cpus, e->grp_gpus, e->grp_jobs) < 0)
			log_err("limits: out of memory setting account %s's", e->name);
	}
	/* The shares (docs/FAIRSHARE.md). No account: every user the same.
	 * Accounts: a user's default account's fraction split among its
	 * users; a user in none (root, say) gets the least any user has, so
	 * it is not first for having none. */
	pool_shares_clear(p, 1);
	for (size_t i = 0; accounts_defined(a) && i < a->n_assoc; i++) {
		const struct assoc *u = &a->assoc[i];
		const struct account *e = account_find(a, u->account);
		struct passwd *pw = u->is_default && e ? getpwnam(u->user) : NULL;
		double share;
		size_t n = 0;

		if (!pw)
			continue;
		for (size_t k = 0; k < a->n_assoc; k++)
			n += !strcmp(a->assoc[k].account, e->name);
		share = account_fraction(a, e, 0) / (double)(n ? n : 1);
		if (share <= 0)
			continue;
		if (pool_share_set(p, pw->pw_uid, share) < 0)
			log_err("fair share: out of memory setting %s's share", u->user);
		if (least <= 0 || share < least)
			least = share;
	}
	if (least > 0)
		pool_share_default_set(p, least);
}

json_t *accounts_json(const struct accounts *a)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && a && i < a->n_acc; i++) {
		const struct account *e = &a->acc[i];
		json_t *users = json_array();
		json_t *o;

		for (size_t k = 0; users && k < a->n_assoc; k++)
			if (!strcmp(a->assoc[k].account, e->name))
				json_array_append_new(users, json_pack("{s:s, s:b}", "user", a->assoc[k].user,
								       "default", a->assoc[k].is_default));
		o = json_pack("{s:s, s:I, s:o}", "name", e->name, "shares", (json_int_t)e->shares, "users",
			      users ? users : json_array());
		if (o && e->parent)
			json_object_set_new(o, "parent", json_string(e->parent));
		if (o && e->description)
			json_object_set_new(o, "description", json_string(e->description));
		if (o && e->grp_cpus >= 0)
			json_object_set_new(o, "grp_cpus", json_integer(e->grp_cpus));
		if (o && e->grp_gpus >= 0)
			json_object_set_new(o, "grp_gpus", json_integer(e->grp_gpus));
		if (o && e->grp_jobs >= 0)
			json_object_set_new(o, "grp_jobs", json_integer(e->grp_jobs));
		json_array_append_new(arr, o);
	}
	return arr;
}

#define PARAMS_MAX ((int)(sizeof(((struct jobstore_ev_params *)0)->v) / sizeof(((struct jobstore_ev_params *)0)->v[0])))
_Static_assert(PARAMS_MAX >= 7, "an account's insert takes 7 parameters");

/* Whether making parent the parent of name closes a circle. */
static bool parent_loops(const struct accounts *a, const char *name, const char *parent)
{
	for (size_t hops = 0; parent && hops <= a->n_acc; hops++) {
		const struct account *p;

		if (!strcmp(parent, name))
			return true;
		p = account_find(a, parent);
		parent = p ? p->parent : NULL;
	}
	return parent != NULL;
}

/* Runs stmts with p, then reads the set back; replies either way
 * (recset_change). Each statement's parameters appear in $N order
 * (SQLite numbers $N names as they first appear) and use every one it
 * takes (PostgreSQL must type each). */
static void change(struct conn *c, long long req_id, const struct jobstore_sql *stmts, size_t n,
		   const struct jobstore_ev_params *p, const char *what)
{
	recset_change(c, req_id, &set_kind, stmts, n, p, what);
}

static void account_add(struct conn *c, long long req_id, json_t *msg, bool modify)
{
	static const struct jobstore_sql add[] = {
		{ "INSERT INTO accounts (name, parent, shares, description, grp_cpus, grp_gpus, grp_jobs)"
		  " VALUES ($1, $2, $3, $4, $5, $6, $7)", 7 },
	};
	static const struct jobstore_sql mod[] = {
		{ "UPDATE accounts SET name = $1, parent = $2, shares = $3, description = $4, grp_cpus = $5,"
		  " grp_gpus = $6, grp_jobs = $7 WHERE name = $1", 7 },
	};
	const struct accounts *a = conn_ctx(c)->accounts;
	const char *name = wire_str(msg, "name"), *parent = wire_str(msg, "parent");
	const char *descr = wire_str(msg, "description");
	const struct account *old = name ? account_find(a, name) : NULL;
	long long shares = wire_int(msg, "shares", old ? old->shares : 1);
	struct jobstore_ev_params p = { 0 };
	char what[160];

	if (!recset_name_ok(name, ACCOUNT_NAME_MAX, true)) {
		conn_reply_err(c, req_id, EINVAL, "account name '%.64s': 1-%d letters, digits, '_', '-' or '.'",
			       name ? name : "", ACCOUNT_NAME_MAX - 1);
		return;
	}
	if (!modify && old) {
		conn_reply_err(c, req_id, EEXIST, "account %s exists already", name);
		return;
	}
	if (modify && !old) {
		conn_reply_err(c, req_id, ENOENT, "no account %s", name);
		return;
	}
	if (shares < 0 || shares > SHARES_MAX) {
		conn_reply_err(c, req_id, EINVAL, "shares=%lld: 0 to %lld", shares, SHARES_MAX);
		return;
	}
	if (modify && !json_object_get(msg, "parent"))
		parent = old->parent;
	if (modify && !descr)
		descr = old->description;
	/* "root" is Slurm's top of the tree: no parent. */
	if (parent && (!*parent || !strcmp(parent, "root")))
		parent = NULL;
	if (parent && !account_find(a, parent)) {
		conn_reply_err(c, req_id, ENOENT, "parent account %s does not exist", parent);
		return;
	}
	if (parent && parent_loops(a, name, parent)) {
		conn_reply_err(c, req_id, ELOOP, "account %s under %s would be its own ancestor", name, parent);
		return;
	}
	if (descr && strlen(descr) > 256) {
		conn_reply_err(c, req_id, EINVAL, "description: at most 256 bytes");
		return;
	}
	recset_param_text(&p, name);
	recset_param_text(&p, parent);
	recset_param_int(&p, shares);
	recset_param_text(&p, descr);
	/* Limits (docs/LIMITS.md): -1 clears one, absent keeps it. */
	{
		static const char *const keys[] = { "grp_cpus", "grp_gpus", "grp_jobs" };

		for (size_t k = 0; k < 3; k++) {
			int64_t had = !old ? -1 : k == 0 ? old->grp_cpus : k == 1 ? old->grp_gpus : old->grp_jobs;
			long long v = wire_int(msg, keys[k], had);

			if (v < -1 || v > 1000000000LL) {
				conn_reply_err(c, req_id, EINVAL, "%s=%lld: -1 (none) or 0 to 1000000000", keys[k], v);
				return;
			}
			p.v[p.n].is_text = v < 0;
			p.v[p.n].text = NULL;
			p.v[p.n++].i = v;
		}
	}
	snprintf(what, sizeof(what), "%s account %s", modify ? "modified" : "added", name);
	change(c, req_id, modify ? mod : add, 1, &p, what);
}

static void account_delete(struct conn *c, long long req_id, json_t *msg)
{
	static const struct jobstore_sql del[] = {
		{ "DELETE FROM account_users WHERE account = $1", 1 },
		{ "DELETE FROM accounts WHERE name = $1", 1 },
	};
	const struct accounts *a = conn_ctx(c)->accounts;
	const char *name = wire_str(msg, "name");
	struct jobstore_ev_params p = { 0 };
	char what[160];

	if (!name || !account_find(a, name)) {
		conn_reply_err(c, req_id, ENOENT, "no account %.64s", name ? name : "");
		return;
	}
	for (size_t i = 0; i < a->n_acc; i++)
		if (a->acc[i].parent && !strcmp(a->acc[i].parent, name)) {
			conn_reply_err(c, req_id, EBUSY, "account %s has sub-account %s: delete or move it first",
				       name, a->acc[i].name);
			return;
		}
	recset_param_text(&p, name);
	snprintf(what, sizeof(what), "deleted account %s", name);
	change(c, req_id, del, 2, &p, what);
}

static void user_add(struct conn *c, long long req_id, json_t *msg)
{
	/* A user's first account is its default, as sacctmgr's add user
	 * makes it; "default" moves the default to this one. */
	static const struct jobstore_sql put[] = {
		{ "UPDATE account_users SET is_default = 0 WHERE user_name = $1 AND 1 = $2", 2 },
		{ "INSERT INTO account_users (user_name, is_default, account) VALUES ($1, $2, $3)"
		  " ON CONFLICT (account, user_name) DO UPDATE SET is_default = excluded.is_default", 3 },
	};
	const struct accounts *a = conn_ctx(c)->accounts;
	const char *user = wire_str(msg, "user"), *account = wire_str(msg, "account");
	const struct assoc *have = user && account ? assoc_find(a, account, user) : NULL;
	bool dflt = wire_bool(msg, "default", false) || !user_default(a, user ? user : "");
	struct jobstore_ev_params p = { 0 };
	char what[200];

	if (!recset_name_ok(user, ACCOUNT_NAME_MAX, true) || !getpwnam(user)) {
		conn_reply_err(c, req_id, ENOENT, "no user %.64s on this host", user ? user : "");
		return;
	}
	if (!account || !account_find(a, account)) {
		conn_reply_err(c, req_id, ENOENT, "no account %.64s", account ? account : "");
		return;
	}
	if (have && !wire_bool(msg, "default", false)) {
		conn_reply_err(c, req_id, EEXIST, "user %s is a user of account %s already", user, account);
		return;
	}
	recset_param_text(&p, user);
	recset_param_int(&p, dflt ? 1 : have ? have->is_default : 0);
	recset_param_text(&p, account);
	snprintf(what, sizeof(what), "user %s in account %s%s", user, account, dflt ? " (default)" : "");
	change(c, req_id, put, 2, &p, what);
}

static void user_delete(struct conn *c, long long req_id, json_t *msg)
{
	/* The user's default passes to its first account left. */
	static const struct jobstore_sql del[] = {
		{ "DELETE FROM account_users WHERE user_name = $1 AND ($2 = '' OR account = $2)", 2 },
		{ "UPDATE account_users SET is_default = 1 WHERE user_name = $1 AND account ="
		  " (SELECT min(account) FROM account_users WHERE user_name = $1) AND NOT EXISTS"
		  " (SELECT 1 FROM account_users WHERE user_name = $1 AND is_default = 1)", 1 },
	};
	const struct accounts *a = conn_ctx(c)->accounts;
	const char *user = wire_str(msg, "user"), *account = wire_str(msg, "account");
	struct jobstore_ev_params p = { 0 };
	char what[200];

	if (!user || !assoc_find(a, account, user)) {
		conn_reply_err(c, req_id, ENOENT, "user %.64s is not a user of %s%.64s", user ? user : "",
			       account ? "account " : "any account", account ? account : "");
		return;
	}
	recset_param_text(&p, user);
	recset_param_text(&p, account ? account : "");
	snprintf(what, sizeof(what), "user %s out of %s", user, account ? account : "every account");
	change(c, req_id, del, 2, &p, what);
}

void op_accounts(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	const char *action = wire_str(msg, "action");

	if (!action || !strcmp(action, "list")) {
		conn_reply_ok(c, req_id, json_pack("{s:o}", "accounts", accounts_json(conn_ctx(c)->accounts)));
		return;
	}
	if (c->uid != 0) {
		conn_reply_err(c, req_id, EPERM, "only root may change accounts");
		return;
	}
	if (!strcmp(action, "add") || !strcmp(action, "modify"))
		account_add(c, req_id, msg, action[0] == 'm');
	else if (!strcmp(action, "delete"))
		account_delete(c, req_id, msg);
	else if (!strcmp(action, "user_add"))
		user_add(c, req_id, msg);
	else if (!strcmp(action, "user_delete"))
		user_delete(c, req_id, msg);
	else
		conn_reply_err(c, req_id, EINVAL, "accounts: unknown action '%.40s'", action);
}
