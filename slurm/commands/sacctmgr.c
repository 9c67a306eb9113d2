/* SPDX-License-Identifier: MIT */
/* sacctmgr: Slurm's accounts tool over qpool's accounts (docs/ACCOUNTS.md):
 * add, modify, delete and show accounts and their users (associations),
 * as the accounts op of qpoold keeps them in its job store; QOS, the QOS
 * each user may use and account budgets (GrpTRESMins) through the qos op
 * (docs/QOS.md). The pool is the one cluster, as squeue and sacct print. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client.h"
#include "cmd.h"
#include "slurmsel.h"
#include "slurmtext.h"
#include "version.h"
#include "wire.h"

static const char usage_text[] =
	"Usage: sacctmgr [-n] [-p|-P] [-i] COMMAND ENTITY [NAME[,NAME...]] [where KEY=VALUE...] [set KEY=VALUE...]\n"
	"  add|create account NAME [Description=TEXT] [Parent=ACCOUNT] [Fairshare=N]\n"
	"  add|create user NAME Account=ACCOUNT[,...] [DefaultAccount=ACCOUNT]\n"
	"  modify account NAME set [Description=TEXT] [Parent=ACCOUNT] [Fairshare=N] [GrpTRES=cpu=N,gres/gpu=N]\n"
	"         [GrpJobs=N] [GrpTRESMins=cpu=N,gres/gpu=N]\n"
	"  modify user NAME set [DefaultAccount=ACCOUNT] [QOS=QOS[,...]] [DefaultQOS=QOS] [GrpTRESMins=cpu=N]\n"
	"  add|modify qos NAME [set] [Priority=N] [MaxTRESPerUser=cpu=N,gres/gpu=N] [MaxJobsPerUser=N]\n"
	"         [GrpTRES=cpu=N,gres/gpu=N] [MaxWall=TIME] [Preempt=QOS[,...]] [PreemptMode=requeue|cancel|suspend]\n"
	"  delete|remove account NAME    delete|remove user NAME [Account=ACCOUNT]    delete qos NAME\n"
	"  show|list account|user|association|qos|cluster [withassoc] [format=F,...] [where KEY=VALUE...]\n"
	"Changes are root's and take effect at once (-i is accepted).\n"
	"  -n, --noheader     no header line\n"
	"  -p, --parsable     fields ended by '|'\n"
	"  -P, --parsable2    fields separated by '|'\n"
	"  -i, --immediate    commit without asking (always so)\n"
	"      --help, --usage  show this help\n";

static bool arg_noheader, arg_parsable, arg_parsable2;

/* Whether word names entity (Slurm takes any case and the plural). */
static bool entity_is(const char *word, const char *entity)
{
	size_t n = strlen(entity);

	return strncasecmp(word, entity, n) == 0 && (!word[n] || strcasecmp(word + n, "s") == 0);
}

/* KEY=VALUE words, the same KEY any case; where/set only switch which
 * list a word lands in. */
struct words {
	const char *names;        /* the bare NAME[,NAME] word, if any */
	const char *where[16][2];
	int n_where;
	const char *set[16][2];
	int n_set;
	bool withassoc;
	const char *format;
};

static const char *word_get(const char *const list[][2], int n, const char *key)
{
	for (int i = 0; i < n; i++)
		if (strcasecmp(list[i][0], key) == 0)
			return list[i][1];
	return NULL;
}

static int words_parse(int argc, char **argv, struct words *w, bool modify)
{
	static char keys[32][64];
	int nk = 0;
	bool in_set = false;

	memset(w, 0, sizeof(*w));
	for (int i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');

		if (strcasecmp(argv[i], "where") == 0) {
			in_set = false;
		} else if (strcasecmp(argv[i], "set") == 0) {
			in_set = true;
		} else if (strcasecmp(argv[i], "withassoc") == 0) {
			w->withassoc = true;
		} else if (!eq) {
			if (w->names)
				return cmd_fail(1, "error: Unknown condition: %s", argv[i]);
			w->names = argv[i];
		} else if (strncasecmp(argv[i], "format=", 7) == 0) {
			w->format = eq + 1;
		} else {
			size_t kl = (size_t)(eq - argv[i]);
			int *n = in_set ? &w->n_set : &w->n_where;

			if (kl == 0 || kl >= sizeof(keys[0]) || nk == 32 || *n == 16)
				return cmd_fail(1, "error: Unknown condition: %s", argv[i]);
			memcpy(keys[nk], argv[i], kl);
			keys[nk][kl] = '\0';
			/* add's KEY=VALUE are the new record's: a "set" list. */
			if (in_set || !modify) {
				w->set[w->n_set][0] = keys[nk];
				w->set[w->n_set++][1] = eq + 1;
			} else {
				w->where[w->n_where][0] = keys[nk];
				w->where[w->n_where++][1] = eq + 1;
			}
			nk++;
		}
	}
	/* "where name=X" names the record too. */
	if (!w->names)
		w->names = word_get(w->where, w->n_where, "name") ?: word_get(w->where, w->n_where, "names");
	return 0;
}

/* The accounts op; 0 or cmd_fail's status. *ret_reply when asked. */
static int call(json_t *req, json_t **ret_reply)
{
	struct client *cl;
	struct error err;
	json_t *reply = NULL;
	int r;

	if (client_open(NULL, &cl, &err) < 0) {
		json_decref(req);
		return cmd_fail(1, "error: %s", err.text);
	}
	r = client_call(cl, req, &reply, &err);
	client_close(cl);
	if (r < 0)
		return cmd_fail(1, "error: %s", r == -EPERM && strstr(err.text, "only root") ?
			       "Your user doesn't have privilege to perform this action" : err.text);
	if (ret_reply)
		*ret_reply = reply;
	else
		json_decref(reply);
	return 0;
}

/* Each NAME of a comma list, one request each. */
static int each_name(const char *names, const char *what, int (*fn)(const char *name, void *ud), void *ud)
{
	char *copy, *save = NULL;
	int status = 0;

	if (!names || !*names)
		return cmd_fail(1, "error: no %s name given", what);
	copy = strdup(names);
	if (!copy)
		return cmd_fail(1, "error: out of memory");
	for (char *n = strtok_r(copy, ",", &save); n; n = strtok_r(NULL, ",", &save))
		status |= fn(n, ud);
	free(copy);
	return status;
}

/* "cpu=N,gres/gpu=M" into req's cpu_key and gpu_key; -1 lifts one, as
 * Slurm's. 0, or cmd_fail's status with the option's name. */
static int tres_words(const char *v, const char *what, json_t *req, const char *cpu_key, const char *gpu_key)
{
	char *copy = strdup(v), *save = NULL;
	int n_set = 0;

	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '='), *end = NULL;
		long long n = eq ? strtoll(eq + 1, &end, 10) : 0;
		const char *key = NULL;

		if (eq && end && *end == '\0' && eq[1] && n >= -1) {
			*eq = '\0';
			key = !strcasecmp(t, "cpu") ? cpu_key : !strcasecmp(t, "gres/gpu") ? gpu_key : NULL;
		}
		if (!key) {
			free(copy);
			return cmd_fail(1, "error: Invalid %s value: %s (qpool counts cpu= and gres/gpu=, -1 or more)",
					what, v);
		}
		json_object_set_new(req, key, json_integer(n));
		n_set++;
	}
	free(copy);
	return n_set ? 0 : cmd_fail(1, "error: Invalid %s value: %s", what, v);
}

/* The qos op's budget (docs/QOS.md) of kind ("account", "user") name
 * from GrpTRESMins=mins into *ret; 0, or cmd_fail's status. */
static int budget_req(const char *kind, const char *name, const char *mins, json_t **ret)
{
	json_t *b = json_pack("{s:s, s:s, s:s}", "op", "qos", "action", "budget", kind, name);

	if (tres_words(mins, "GrpTRESMins", b, "cpu_mins", "gpu_mins") != 0) {
		json_decref(b);
		return 1;
	}
	*ret = b;
	return 0;
}

/* What an add or a modify of one NAME takes (each_name's ud). */
struct put {
	const char *action;   /* "add", "modify" */
	const struct words *w;
};

/* add or modify of one account, with the words' Description=,
 * Parent= and Fairshare=. */
static int account_req(const char *name, void *ud)
{
	const struct put *put = ud;
	const struct words *w = put->w;
	const char *v;
	json_t *req = json_pack("{s:s, s:s, s:s}", "op", "accounts", "action", put->action, "name", name);

	if ((v = word_get(w->set, w->n_set, "description")) || (v = word_get(w->set, w->n_set, "descr")))
		json_object_set_new(req, "description", json_string(v));
	if ((v = word_get(w->set, w->n_set, "parent")))
		json_object_set_new(req, "parent", json_string(v));
	if ((v = word_get(w->set, w->n_set, "fairshare")) || (v = word_get(w->set, w->n_set, "share"))) {
		char *end;
		long long s = strtoll(v, &end, 10);

		if (!*v || *end || s < 0) {
			json_decref(req);
			return cmd_fail(1, "error: Invalid Fairshare value: %s", v);
		}
		json_object_set_new(req, "shares", json_integer(s));
	}
	/* Limits (docs/LIMITS.md): GrpTRES=cpu=N,gres/gpu=N and GrpJobs=N;
	 * -1 clears one, as Slurm's. */
	if ((v = word_get(w->set, w->n_set, "grptres")) && tres_words(v, "GrpTRES", req, "grp_cpus", "grp_gpus") != 0) {
		json_decref(req);
		return 1;
	}
	if ((v = word_get(w->set, w->n_set, "grpjobs"))) {
		char *end;
		long long n = strtoll(v, &end, 10);

		if (!*v || *end || n < -1) {
			json_decref(req);
			return cmd_fail(1, "error: Invalid GrpJobs value: %s", v);
		}
		json_object_set_new(req, "grp_jobs", json_integer(n));
	}
	/* A budget (docs/QOS.md): GrpTRESMins=cpu=N,gres/gpu=N, the qos op's. */
	if ((v = word_get(w->set, w->n_set, "grptresmins"))) {
		json_t *b;

		if (budget_req("account", name, v, &b) != 0) {
			json_decref(req);
			return 1;
		}
		/* The account first (an add makes it), then its budget. */
		if (call(req, NULL) != 0) {
			json_decref(b);
			return 1;
		}
		return call(b, NULL);
	}
	return call(req, NULL);
}

static int account_delete(const char *name, void *ud)
{
	return call(json_pack("{s:s, s:s, s:s}", "op", "accounts", "action", "delete", "name", name), NULL);
}

struct user_ctx {
	const char *user;
	const char *dflt;
};

static int user_assoc(const char *account, void *ud)
{
	const struct user_ctx *u = ud;
	bool dflt = u->dflt && strcmp(u->dflt, account) == 0;

	return call(json_pack("{s:s, s:s, s:s, s:s, s:b}", "op", "accounts", "action", "user_add", "user", u->user,
			      "account", account, "default", dflt), NULL);
}

static int user_qos(const char *user, const struct words *w);

static int user_add(const char *user, void *ud)
{
	const struct words *w = ((const struct put *)ud)->w;
	struct user_ctx u = { user, NULL };
	const char *accounts = word_get(w->set, w->n_set, "account") ?: word_get(w->set, w->n_set, "accounts");

	u.dflt = word_get(w->set, w->n_set, "defaultaccount");
	if (!accounts)
		accounts = u.dflt;
	if (!accounts)
		return cmd_fail(1, "error: Need a default account for these users to add.");
	/* The default first, so it is the user's default from the start. */
	if (u.dflt && strstr(accounts, u.dflt) == NULL && user_assoc(u.dflt, &u) != 0)
		return 1;
	if (each_name(accounts, "account", user_assoc, &u) != 0)
		return 1;
	return user_qos(user, w);
}

/* The QOS a user may use (QOS=, DefaultQOS=), through the qos op. */
static int user_qos(const char *user, const struct words *w)
{
	const char *list = word_get(w->set, w->n_set, "qos");
	const char *dflt = word_get(w->set, w->n_set, "defaultqos");
	json_t *req;

	if (!list && !dflt)
		return 0;
	req = json_pack("{s:s, s:s, s:s}", "op", "qos", "action", "user_set", "user", user);
	if (list && (*list == '+' || *list == '-')) {
		json_decref(req);
		return cmd_fail(1, "error: QOS%c=: give the whole list (QOS=a,b)", *list);
	}
	if (list)
		json_object_set_new(req, "qos", json_string(list));
	if (dflt)
		json_object_set_new(req, "default_qos", json_string(dflt));
	return call(req, NULL);
}

static int user_modify(const char *user, void *ud)
{
	const struct words *w = ((const struct put *)ud)->w;
	const char *dflt = word_get(w->set, w->n_set, "defaultaccount");
	const char *mins = word_get(w->set, w->n_set, "grptresmins");

	if (!dflt && !mins && !word_get(w->set, w->n_set, "qos") && !word_get(w->set, w->n_set, "defaultqos"))
		return cmd_fail(1, "error: modify user: DefaultAccount=, QOS=, DefaultQOS= and GrpTRESMins= are "
				"changed here");
	if (mins) {
		json_t *b;

		if (budget_req("user", user, mins, &b) != 0 || call(b, NULL) != 0)
			return 1;
	}
	if (dflt && call(json_pack("{s:s, s:s, s:s, s:s, s:b}", "op", "accounts", "action", "user_add", "user",
				   user, "account", dflt, "default", 1), NULL) != 0)
		return 1;
	return user_qos(user, w);
}

static int user_delete(const char *user, void *ud)
{
	const struct words *w = ((const struct put *)ud)->w;
	const char *account = word_get(w->where, w->n_where, "account") ?: word_get(w->set, w->n_set, "account");
	json_t *req = json_pack("{s:s, s:s, s:s}", "op", "accounts", "action", "user_delete", "user", user);

	if (account)
		json_object_set_new(req, "account", json_string(account));
	return call(req, NULL);
}

/* One table: the header (unless -n), then each row's fields. */
struct table {
	char fields[32][48];
	int n;
};

static void table_fields(struct table *t, const char *format)
{
	char *copy = strdup(format), *save = NULL;

	t->n = 0;
	for (char *f = copy ? strtok_r(copy, ",", &save) : NULL; f && t->n < 32; f = strtok_r(NULL, ",", &save))
		snprintf(t->fields[t->n++], sizeof(t->fields[0]), "%s", f);
	free(copy);
}

static void table_row(const struct table *t, const char *const *values)
{
	for (int i = 0; i < t->n; i++) {
		const char *v = values[i] ? values[i] : "";

		if (i && arg_parsable2)
			fputc('|', stdout);
		else if (i && !arg_parsable)
			fputc(' ', stdout);
		printf(arg_parsable || arg_parsable2 ? "%s" : "%-10s", v);
		if (arg_parsable)
			fputc('|', stdout);
	}
	fputc('\n', stdout);
}

static void table_header(const struct table *t)
{
	const char *v[32] = { NULL };   /* gcc 12 cannot see t->n <= 32 once show is called through a pointer */

	if (arg_noheader)
		return;
	for (int i = 0; i < t->n; i++)
		v[i] = t->fields[i];
	table_row(t, v);
}

static char tres_buf[80];
/* The qos op's list (QOS, users' QOS, budgets), for show. */
static json_t *qos_list;

static const json_t *qos_user(const char *user)
{
	size_t i;
	json_t *u;

	json_array_foreach(json_object_get(qos_list, "users"), i, u) {
		if (user && !strcmp(wire_str(u, "user"), user))
			return u;
	}
	return NULL;
}

static const json_t *budget_of(const char *kind, const char *name)
{
	size_t i;
	json_t *b;

	json_array_foreach(json_object_get(qos_list, "budgets"), i, b) {
		if (name && !strcmp(wire_str(b, "kind"), kind) && !strcmp(wire_str(b, "name"), name))
			return b;
	}
	return NULL;
}

/* "cpu=N,gres/gpu=M" of o's keys (absent or -1: left out). */
static const char *tres_text(const json_t *o, const char *cpu_key, const char *gpu_key)
{
	long long c = o ? wire_int(o, cpu_key, -1) : -1, g = o ? wire_int(o, gpu_key, -1) : -1;
	char cpu[32] = "", gpu[40] = "";

	if (c >= 0)
		snprintf(cpu, sizeof(cpu), "cpu=%lld", c);
	if (g >= 0)
		snprintf(gpu, sizeof(gpu), "gres/gpu=%lld", g);
	snprintf(tres_buf, sizeof(tres_buf), "%s%s%s", cpu, cpu[0] && gpu[0] ? "," : "", gpu);
	return tres_buf;
}

/* A field of an account (user: one of its users, NULL: the account's own
 * association) as Slurm names it. */
static const char *field(const char *name, const json_t *acct, const json_t *user, const char *dflt,
			 char *buf, size_t len)
{
	if (!strcasecmp(name, "account") || !strcasecmp(name, "name") || !strcasecmp(name, "org") ||
	    !strcasecmp(name, "organization"))
		return acct ? wire_str(acct, "name") : NULL;
	if (!strcasecmp(name, "descr") || !strcasecmp(name, "description"))
		return acct ? (wire_str(acct, "description") ?: wire_str(acct, "name")) : NULL;
	if (!strcasecmp(name, "parentname") || !strcasecmp(name, "parent"))
		return acct ? (user ? wire_str(acct, "name") : wire_str(acct, "parent") ?: "root") : NULL;
	if (!strcasecmp(name, "share") || !strcasecmp(name, "fairshare") || !strcasecmp(name, "shares")) {
		snprintf(buf, len, "%lld", acct && !user ? wire_int(acct, "shares", 1) : 1LL);
		return buf;
	}
	if (!strcasecmp(name, "user"))
		return user ? wire_str(user, "user") : NULL;
	if (!strcasecmp(name, "def acct") || !strcasecmp(name, "defaultaccount"))
		return dflt;
	if (!strcasecmp(name, "admin") || !strcasecmp(name, "adminlevel"))
		return "None";
	if (!strcasecmp(name, "grptres"))
		return tres_text(acct && !user ? acct : NULL, "grp_cpus", "grp_gpus");
	if (!strcasecmp(name, "grpjobs")) {
		long long n = acct && !user ? wire_int(acct, "grp_jobs", -1) : -1;

		if (n < 0)
			return "";
		snprintf(buf, len, "%lld", n);
		return buf;
	}
	if (!strcasecmp(name, "cluster"))
		return "qpool";
	if (!strcasecmp(name, "grptresmins"))
		return acct && !user ? tres_text(budget_of("account", wire_str(acct, "name")), "cpu_mins", "gpu_mins")
		       : user && !acct ? tres_text(budget_of("user", wire_str(user, "user")), "cpu_mins", "gpu_mins")
				       : "";
	if (!strcasecmp(name, "qos")) {
		const json_t *u = user ? qos_user(wire_str(user, "user")) : NULL;

		return u ? wire_str(u, "qos") : "normal";
	}
	if (!strcasecmp(name, "defaultqos") || !strcasecmp(name, "def qos")) {
		const json_t *u = user ? qos_user(wire_str(user, "user")) : NULL;

		return u && wire_str(u, "default_qos") ? wire_str(u, "default_qos") : "normal";
	}
	return NULL;
}

/* The default account of user in accounts. */
static const char *default_of(const json_t *accounts, const char *user)
{
	size_t i, k;
	json_t *a, *u;

	json_array_foreach(accounts, i, a) {
		json_array_foreach(json_object_get(a, "users"), k, u) {
			if (!strcmp(wire_str(u, "user"), user) && json_is_true(json_object_get(u, "default")))
				return wire_str(a, "name");
		}
	}
	return NULL;
}

static bool name_in(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

static int show(const char *entity, const struct words *w)
{
	json_t *reply = NULL, *accounts;
	const char *users = word_get(w->where, w->n_where, "user") ?: word_get(w->where, w->n_where, "users");
	const char *accts = word_get(w->where, w->n_where, "account") ?: word_get(w->where, w->n_where, "accounts");
	bool is_user = entity_is(entity, "user"), is_assoc = entity_is(entity, "association") ||
							     entity_is(entity, "assoc");
	struct table t;
	char buf[32];
	size_t i, k;
	json_t *a, *u;
	int r;

	if (is_user && !users)
		users = w->names;
	if (!is_user && !is_assoc && !accts)
		accts = w->names;
	r = call(json_pack("{s:s, s:s}", "op", "accounts", "action", "list"), &reply);
	if (r)
		return r;
	r = call(json_pack("{s:s, s:s}", "op", "qos", "action", "list"), &qos_list);
	if (r) {
		json_decref(reply);
		return r;
	}
	accounts = json_object_get(reply, "accounts");
	table_fields(&t, w->format ? w->format : is_user ? (w->withassoc ? "User,Def Acct,Admin,Cluster,Account"
								      : "User,Def Acct,Admin")
					     : is_assoc ? "Cluster,Account,User,Share,QOS"
					     : w->withassoc ? "Account,Descr,Org,Cluster,ParentName,User,Share"
							    : "Account,Descr,Org");
	table_header(&t);
	if (is_user && !w->withassoc) {
		/* One row per user, with its default account. */
		const char *seen[1024];
		size_t n_seen = 0;

		json_array_foreach(accounts, i, a) {
			json_array_foreach(json_object_get(a, "users"), k, u) {
				const char *name = wire_str(u, "user"), *v[32];

				if (name_in(seen, n_seen, name) || n_seen == 1024 || !slurmsel_list_wants(users, name))
					continue;
				seen[n_seen++] = name;
				for (int f = 0; f < t.n; f++)
					v[f] = field(t.fields[f], NULL, u, default_of(accounts, name), buf, sizeof(buf));
				table_row(&t, v);
			}
		}
	} else {
		json_array_foreach(accounts, i, a) {
			const char *v[32];

			if (!slurmsel_list_wants(accts, wire_str(a, "name")))
				continue;
			/* The account's own row (not for show user withassoc). */
			if (!is_user && !users) {
				for (int f = 0; f < t.n; f++)
					v[f] = field(t.fields[f], a, NULL, NULL, buf, sizeof(buf));
				table_row(&t, v);
			}
			if (!is_user && !is_assoc && !w->withassoc)
				continue;
			json_array_foreach(json_object_get(a, "users"), k, u) {
				if (!slurmsel_list_wants(users, wire_str(u, "user")))
					continue;
				for (int f = 0; f < t.n; f++)
					v[f] = field(t.fields[f], a, u, default_of(accounts, wire_str(u, "user")), buf,
						     sizeof(buf));
				table_row(&t, v);
			}
		}
	}
	json_decref(reply);
	json_decref(qos_list);
	qos_list = NULL;
	return fflush(stdout) == 0 ? 0 : cmd_fail(1, "cannot write");
}

/* Slurm's [days-]hh:mm:ss of a time limit. */
static const char *wall_text(long long secs, char *buf, size_t len)
{
	if (secs < 0)
		return "";
	if (secs >= 86400)
		snprintf(buf, len, "%lld-%02lld:%02lld:%02lld", secs / 86400, secs % 86400 / 3600, secs % 3600 / 60,
			 secs % 60);
	else
		snprintf(buf, len, "%02lld:%02lld:%02lld", secs / 3600, secs % 3600 / 60, secs % 60);
	return buf;
}

/* A QOS's field as Slurm's show qos names it. */
static const char *qos_field(const char *name, const json_t *q, char *buf, size_t len)
{
	long long v;

	if (!strcasecmp(name, "name"))
		return wire_str(q, "name");
	if (!strcasecmp(name, "priority")) {
		snprintf(buf, len, "%lld", wire_int(q, "priority", 0));
		return buf;
	}
	if (!strcasecmp(name, "description") || !strcasecmp(name, "descr"))
		return wire_str(q, "description") ?: wire_str(q, "name");
	if (!strcasecmp(name, "gracetime"))
		return "00:00:00";
	if (!strcasecmp(name, "preempt"))
		return wire_str(q, "preempt");
	if (!strcasecmp(name, "preemptmode"))
		return wire_str(q, "preempt_mode");
	if (!strcasecmp(name, "usagefactor"))
		return "1.000000";
	if (!strcasecmp(name, "grptres"))
		return tres_text(q, "grp_cpus", "grp_gpus");
	if (!strcasecmp(name, "maxtrespu") || !strcasecmp(name, "maxtresperuser"))
		return tres_text(q, "max_cpus_per_user", "max_gpus_per_user");
	if (!strcasecmp(name, "maxjobspu") || !strcasecmp(name, "maxjobsperuser")) {
		if ((v = wire_int(q, "max_jobs_per_user", -1)) < 0)
			return "";
		snprintf(buf, len, "%lld", v);
		return buf;
	}
	if (!strcasecmp(name, "maxwall"))
		return wall_text(wire_int(q, "max_wall", -1), buf, len);
	return "";
}

static int qos_show(const char *entity, const struct words *w)
{
	json_t *reply = NULL, *q;
	struct table t;
	char bufs[32][32];
	size_t i;
	int r = call(json_pack("{s:s, s:s}", "op", "qos", "action", "list"), &reply);

	if (r)
		return r;
	table_fields(&t, w->format ? w->format
				   : "Name,Priority,GraceTime,Preempt,PreemptMode,UsageFactor,GrpTRES,MaxWall,"
				     "MaxTRESPU,MaxJobsPU");
	table_header(&t);
	json_array_foreach(json_object_get(reply, "qos"), i, q) {
		const char *v[32];

		if (!slurmsel_list_wants(w->names, wire_str(q, "name")))
			continue;
		/* Each field its own buffer: tres_text's is one, copied. */
		for (int f = 0; f < t.n; f++) {
			const char *x = qos_field(t.fields[f], q, bufs[f], sizeof(bufs[f]));

			if (x != bufs[f])
				snprintf(bufs[f], sizeof(bufs[f]), "%s", x ? x : "");
			v[f] = bufs[f];
		}
		table_row(&t, v);
	}
	json_decref(reply);
	return fflush(stdout) == 0 ? 0 : cmd_fail(1, "cannot write");
}

/* add or modify of one QOS, with the words' Slurm names. */
static int qos_req(const char *name, void *ud)
{
	const struct put *put = ud;
	const struct words *w = put->w;
	json_t *req = json_pack("{s:s, s:s, s:s}", "op", "qos", "action", put->action, "name", name);
	const char *v;

	for (int i = 0; i < w->n_set; i++) {
		const char *key = w->set[i][0];
		char *end;
		long long n;

		v = w->set[i][1];
		if (!strcasecmp(key, "priority") || !strcasecmp(key, "maxjobsperuser") ||
		    !strcasecmp(key, "maxjobspu")) {
			n = strtoll(v, &end, 10);
			if (!*v || *end || n < (key[0] == 'p' || key[0] == 'P' ? 0 : -1)) {
				json_decref(req);
				return cmd_fail(1, "error: Invalid %s value: %s", key, v);
			}
			json_object_set_new(req, key[0] == 'p' || key[0] == 'P' ? "priority" : "max_jobs_per_user",
					    json_integer(n));
		} else if (!strcasecmp(key, "maxtresperuser") || !strcasecmp(key, "maxtrespu")) {
			if (tres_words(v, "MaxTRESPerUser", req, "max_cpus_per_user", "max_gpus_per_user") != 0) {
				json_decref(req);
				return 1;
			}
		} else if (!strcasecmp(key, "grptres")) {
			if (tres_words(v, "GrpTRES", req, "grp_cpus", "grp_gpus") != 0) {
				json_decref(req);
				return 1;
			}
		} else if (!strcasecmp(key, "maxwall")) {
			int64_t secs = -1;

			if (strcmp(v, "-1") != 0 && (slurm_time_parse(v, &secs) < 0 || secs < 0)) {
				json_decref(req);
				return cmd_fail(1, "error: Invalid MaxWall value: %s", v);
			}
			json_object_set_new(req, "max_wall", json_integer(secs));
		} else if (!strcasecmp(key, "preempt")) {
			json_object_set_new(req, "preempt", json_string(!strcmp(v, "''") ? "" : v));
		} else if (!strcasecmp(key, "preemptmode")) {
			json_object_set_new(req, "preempt_mode", json_string(v));
		} else if (!strcasecmp(key, "description") || !strcasecmp(key, "descr")) {
			json_object_set_new(req, "description", json_string(v));
		} else if (strcasecmp(key, "name") != 0) {
			json_decref(req);
			return cmd_fail(1, "error: Unknown option: %s=%s (qpool's QOS take Priority, MaxTRESPerUser, "
					"MaxJobsPerUser, GrpTRES, MaxWall, Preempt, PreemptMode, Description)", key, v);
		}
	}
	return call(req, NULL);
}

static int qos_delete(const char *name, void *ud)
{
	return call(json_pack("{s:s, s:s, s:s}", "op", "qos", "action", "delete", "name", name), NULL);
}

/* The entities a command adds, modifies, deletes and shows: one NAME
 * each through each_name (ud a struct put). */
static const struct entity {
	const char *word;
	int (*add)(const char *name, void *ud);
	int (*modify)(const char *name, void *ud);
	int (*del)(const char *name, void *ud);
	int (*show)(const char *entity, const struct words *w);
} entities[] = {
	{ "account", account_req, account_req, account_delete, show },
	{ "user", user_add, user_modify, user_delete, show },
	{ "qos", qos_req, qos_req, qos_delete, qos_show },
	{ NULL, NULL, NULL, NULL, NULL },
};

static void table_one(const char *format, const char *name)
{
	struct table t;
	const char *v[32];

	table_fields(&t, format);
	table_header(&t);
	for (int f = 0; f < t.n; f++)
		v[f] = !strcasecmp(t.fields[f], "name") || !strcasecmp(t.fields[f], "cluster") ? name : NULL;
	table_row(&t, v);
}

int main(int argc, char **argv)
{
	enum { OPT_HELP = 256 };
	static const struct option longopts[] = {
		{ "noheader", no_argument, NULL, 'n' },
		{ "parsable", no_argument, NULL, 'p' },
		{ "parsable2", no_argument, NULL, 'P' },
		{ "immediate", no_argument, NULL, 'i' },
		{ "quiet", no_argument, NULL, 'Q' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "usage", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd, *entity;
	struct words w;
	bool add, modify, del;
	int c;

	if (version_requested(argc, argv))
		return version_print("sacctmgr");
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:npPiQ", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': arg_noheader = true; break;
		case 'p': arg_parsable = true; break;
		case 'P': arg_parsable2 = true; break;
		case 'i': case 'Q': break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			return 0;
		default:   /* '?' or ':' */
			return cmd_getopt_fail(c, argv);
		}
	}
	if (optind + 2 > argc)
		return cmd_fail(1, "error: too few arguments: sacctmgr COMMAND ENTITY ...");
	cmd = argv[optind++];
	entity = argv[optind++];
	add = !strcasecmp(cmd, "add") || !strcasecmp(cmd, "create");
	modify = !strcasecmp(cmd, "modify") || !strcasecmp(cmd, "update");
	del = !strcasecmp(cmd, "delete") || !strcasecmp(cmd, "remove");
	if (!add && !modify && !del && strcasecmp(cmd, "show") != 0 && strcasecmp(cmd, "list") != 0)
		return cmd_fail(1, "error: Unknown command: %s", cmd);
	if (words_parse(argc - optind, argv + optind, &w, modify || !add) != 0)
		return 1;
	for (const struct entity *e = entities; e->word; e++) {
		struct put put = { add ? "add" : "modify", &w };

		if (!entity_is(entity, e->word))
			continue;
		if (add || modify)
			return each_name(w.names, e->word, add ? e->add : e->modify, &put);
		if (del)
			return each_name(w.names, e->word, e->del, &put);
		return e->show(entity, &w);
	}
	if (entity_is(entity, "association") || entity_is(entity, "assoc")) {
		if (add || modify || del)
			return cmd_fail(1, "error: %s association: use the account and user forms", cmd);
		return show(entity, &w);
	}
	if (add || modify || del)
		return cmd_fail(1, "error: %s %s: qpool keeps one cluster", cmd, entity);
	if (entity_is(entity, "cluster"))
		table_one(w.format ? w.format : "Cluster,ControlHost,RPC", "qpool");
	else
		return cmd_fail(1, "error: Unknown entity: %s", entity);
	return fflush(stdout) == 0 ? 0 : cmd_fail(1, "cannot write");
}
