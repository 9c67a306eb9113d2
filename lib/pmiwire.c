/* SPDX-License-Identifier: MIT */
/* PMI-1 and PMI-2 wire protocols, server side, as MPICH 4.0's simple PMI
 * client speaks them (src/pmi/maint/pmi-1.1.txt and pmi-2.0.txt there):
 * PMI-1 is lines of space-separated key=value pairs; PMI-2 starts with a
 * PMI-1 init line, then each message is a 6-character decimal length and
 * "cmd=NAME;key=value;..." where ";;" is a ';' inside a value. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmiwire.h"

#define MAX_PAIRS 64
#define V2_LENLEN 6

struct kv {
	const char *key;
	const char *val;
};

struct msg {
	int npairs;
	struct kv pairs[MAX_PAIRS];
};

struct client {
	int used;
	int rank;
	int version;              /* 0 until init, then 1 or 2 */
	enum pmiwire_state state;
	char *in;                 /* bytes not yet a whole message */
	size_t inlen;
	size_t incap;
	int in_spawn;             /* PMI-1: inside mcmd=spawn ... endcmd */
	char *wait_key;           /* PMI-2: info-getnodeattr wait=TRUE, not there yet */
	char *wait_thrid;
};

struct pmiwire {
	const struct pmiwire_ops *ops;
	void *arg;
	char kvsname[PMIWIRE_KVSNAME_MAX];
	int size;
	int universe;
	int appnum;
	char *mapping;
	int max_clients;
	struct client *clients;
	unsigned char *claimed;   /* per rank of the job: a connection had it */
};

struct pmiwire *pmiwire_create(const struct pmiwire_ops *ops, void *arg,
			       const struct pmiwire_job *job, int max_clients)
{
	struct pmiwire *w;

	if (!ops || !ops->send || !job || !job->kvsname || job->size < 1 ||
	    max_clients < 1 || strlen(job->kvsname) >= PMIWIRE_KVSNAME_MAX ||
	    strpbrk(job->kvsname, " ;=\n"))
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->ops = ops;
	w->arg = arg;
	strcpy(w->kvsname, job->kvsname);
	w->size = job->size;
	w->universe = job->universe > 0 ? job->universe : job->size;
	w->appnum = job->appnum;
	w->max_clients = max_clients;
	w->clients = calloc((size_t)max_clients, sizeof(*w->clients));
	w->claimed = calloc((size_t)job->size, 1);
	if (job->process_mapping)
		w->mapping = strdup(job->process_mapping);
	if (!w->clients || !w->claimed || (job->process_mapping && !w->mapping)) {
		pmiwire_destroy(w);
		return NULL;
	}
	return w;
}

void pmiwire_destroy(struct pmiwire *w)
{
	if (!w)
		return;
	for (int i = 0; w->clients && i < w->max_clients; i++) {
		free(w->clients[i].in);
		free(w->clients[i].wait_key);
		free(w->clients[i].wait_thrid);
	}
	free(w->clients);
	free(w->claimed);
	free(w->mapping);
	free(w);
}

static struct client *client_get(const struct pmiwire *w, int client)
{
	if (!w || client < 0 || client >= w->max_clients || !w->clients[client].used)
		return NULL;
	return &w->clients[client];
}

int pmiwire_client_add(struct pmiwire *w, int client, int rank)
{
	struct client *c;

	if (!w || client < 0 || client >= w->max_clients || rank < -1 || rank >= w->size)
		return -EINVAL;
	c = &w->clients[client];
	if (c->used || (rank >= 0 && w->claimed[rank]))
		return -EBUSY;
	memset(c, 0, sizeof(*c));
	c->used = 1;
	c->rank = rank;
	if (rank >= 0)
		w->claimed[rank] = 1;
	return 0;
}

int pmiwire_rank_claimed(const struct pmiwire *w, int rank)
{
	return w && rank >= 0 && rank < w->size && w->claimed[rank];
}

void pmiwire_client_remove(struct pmiwire *w, int client)
{
	struct client *c = client_get(w, client);

	if (!c)
		return;
	free(c->in);
	free(c->wait_key);
	free(c->wait_thrid);
	memset(c, 0, sizeof(*c));
}

enum pmiwire_state pmiwire_client_state(const struct pmiwire *w, int client)
{
	const struct client *c = client_get(w, client);

	return c ? c->state : PMIWIRE_NEW;
}

int pmiwire_client_rank(const struct pmiwire *w, int client)
{
	const struct client *c = client_get(w, client);

	return c ? c->rank : -1;
}

int pmiwire_client_version(const struct pmiwire *w, int client)
{
	const struct client *c = client_get(w, client);

	return c ? c->version : 0;
}

static const char *msg_get(const struct msg *m, const char *key)
{
	for (int i = 0; i < m->npairs; i++)
		if (strcmp(m->pairs[i].key, key) == 0)
			return m->pairs[i].val;
	return NULL;
}

/* A whole decimal int, nothing else. */
static int parse_int(const char *s, int *ret)
{
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < INT_MIN || v > INT_MAX)
		return -EINVAL;
	*ret = (int)v;
	return 0;
}

/* --- PMI-1 ------------------------------------------------------------ */

/* Splits a line (no newline) in place into key=value pairs. */
static int v1_parse(char *line, struct msg *m, struct error *err)
{
	char *save = NULL;

	m->npairs = 0;
	for (char *tok = strtok_r(line, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			return error_set(err, -EPROTO, "PMI-1: '%.40s' is not key=value", tok);
		if (m->npairs == MAX_PAIRS)
			return error_set(err, -EPROTO, "PMI-1: more than %d pairs", MAX_PAIRS);
		*eq = '\0';
		m->pairs[m->npairs].key = tok;
		m->pairs[m->npairs].val = eq + 1;
		m->npairs++;
	}
	if (m->npairs == 0)
		return error_set(err, -EPROTO, "PMI-1: empty line");
	return 0;
}

static int sendf(struct pmiwire *w, int client, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int sendf(struct pmiwire *w, int client, const char *fmt, ...)
{
	char buf[PMIWIRE_VAL_MAX + 512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EMSGSIZE;
	return w->ops->send(w->arg, client, buf, (size_t)n);
}

/* A value on a PMI-1 line cannot hold a space or a newline. */
static int v1_value_ok(const char *v)
{
	return v && !strpbrk(v, " \n\r\t") && strlen(v) < PMIWIRE_VAL_MAX;
}

static const char *job_attr(struct pmiwire *w, const char *key)
{
	if (strcmp(key, "PMI_process_mapping") == 0)
		return w->mapping;
	return NULL;
}

static int claim(struct pmiwire *w, int client, struct client *c, int rank)
{
	int rc;

	if (rank < 0 || rank >= w->size)
		return -ERANGE;
	if (c->rank >= 0)
		return c->rank == rank ? 0 : -EPERM;
	/* once per job: the rank's own connection had it (and may have ended) */
	if (w->claimed[rank])
		return -EADDRINUSE;
	rc = w->ops->claim ? w->ops->claim(w->arg, client, rank) : 0;
	if (rc == 0) {
		c->rank = rank;
		w->claimed[rank] = 1;
	}
	return rc;
}

int pmiwire_initack_parse(const char *buf, size_t len, int *ret_rank)
{
	static const char head[] = "cmd=initack";
	const char *nl = memchr(buf, '\n', len < PMIWIRE_INITACK_MAX ? len : PMIWIRE_INITACK_MAX);
	char line[PMIWIRE_INITACK_MAX];
	struct msg m;
	struct error err;
	size_t n;
	int rank;

	if (!nl)
		return len < PMIWIRE_INITACK_MAX ? 0 : -EPROTO;
	n = (size_t)(nl - buf);
	memcpy(line, buf, n);
	line[n] = '\0';
	if (strncmp(line, head, sizeof(head) - 1) != 0 || memchr(line, '\0', n) ||
	    v1_parse(line, &m, &err) < 0 || m.npairs != 2 || strcmp(m.pairs[0].key, "cmd") != 0 ||
	    strcmp(m.pairs[0].val, "initack") != 0 || strcmp(m.pairs[1].key, "pmiid") != 0 ||
	    parse_int(m.pairs[1].val, &rank) < 0 || rank < 0)
		return -EPROTO;
	*ret_rank = rank;
	return 1;
}

int pmiwire_token_ok(const char *want, const char *got)
{
	unsigned char diff = 0;
	size_t n;

	if (!want || !*want)
		return 1;
	if (!got || (n = strlen(want)) != strlen(got))
		return 0;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(want[i] ^ got[i]);
	return diff == 0;
}

static int v1_handle(struct pmiwire *w, int client, struct client *c, const struct msg *m,
		     struct error *err)
{
	const char *cmd = msg_get(m, "cmd");
	const char *key, *val;
	int n, rc;

	if (!cmd)
		return error_set(err, -EPROTO, "PMI-1: no cmd");
	if (strcmp(cmd, "init") == 0) {
		int ver = 0, sub = 0;

		if (parse_int(msg_get(m, "pmi_version"), &ver) < 0 ||
		    parse_int(msg_get(m, "pmi_subversion"), &sub) < 0)
			return sendf(w, client, "cmd=response_to_init rc=-1 msg=bad_version\n");
		if (ver != 1 && ver != 2)
			return sendf(w, client, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n");
		c->version = ver;
		if (c->state == PMIWIRE_NEW)
			c->state = PMIWIRE_INIT;
		if (ver == 2)
			return sendf(w, client, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n");
		return sendf(w, client, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
	}
	if (strcmp(cmd, "initack") == 0) {
		if (parse_int(msg_get(m, "pmiid"), &n) < 0)
			return sendf(w, client, "cmd=initack rc=-1 msg=bad_pmiid\n");
		rc = claim(w, client, c, n);
		if (rc < 0)
			return sendf(w, client, "cmd=initack rc=-1 msg=pmiid_%d_refused\n", n);
		return sendf(w, client, "cmd=initack rc=0\ncmd=set size=%d\ncmd=set rank=%d\ncmd=set debug=0\n",
			     w->size, c->rank);
	}
	/* a PMI_PORT client is nobody until its initack was accepted */
	if (c->rank < 0 && strcmp(cmd, "init") != 0)
		return error_set(err, -EPROTO, "PMI-1: %.40s before a rank was claimed", cmd);
	if (c->version == 0)
		return error_set(err, -EPROTO, "PMI-1: %.40s before init", cmd);
	if (strcmp(cmd, "get_maxes") == 0)
		return sendf(w, client, "cmd=maxes kvsname_max=%d keylen_max=%d vallen_max=%d rc=0\n",
			     PMIWIRE_KVSNAME_MAX, PMIWIRE_KEY_MAX, PMIWIRE_VAL_MAX);
	if (strcmp(cmd, "get_appnum") == 0)
		return sendf(w, client, "cmd=appnum appnum=%d rc=0\n", w->appnum);
	if (strcmp(cmd, "get_universe_size") == 0)
		return sendf(w, client, "cmd=universe_size size=%d rc=0\n", w->universe);
	if (strcmp(cmd, "get_my_kvsname") == 0)
		return sendf(w, client, "cmd=my_kvsname kvsname=%s rc=0\n", w->kvsname);
	if (strcmp(cmd, "barrier_in") == 0) {
		if (c->state == PMIWIRE_FENCE)
			return error_set(err, -EPROTO, "PMI-1: barrier_in twice");
		c->state = PMIWIRE_FENCE;
		if (w->ops->fence)
			w->ops->fence(w->arg, client);
		return 0;
	}
	if (strcmp(cmd, "put") == 0) {
		key = msg_get(m, "key");
		val = msg_get(m, "value");
		if (!key || !*key || strlen(key) >= PMIWIRE_KEY_MAX || !val || strlen(val) >= PMIWIRE_VAL_MAX)
			return sendf(w, client, "cmd=put_result rc=-1 msg=bad_key_or_value\n");
		rc = w->ops->put ? w->ops->put(w->arg, client, key, val) : -ENOSYS;
		if (rc < 0)
			return sendf(w, client, "cmd=put_result rc=-1 msg=put_failed\n");
		return sendf(w, client, "cmd=put_result rc=0 msg=success\n");
	}
	if (strcmp(cmd, "get") == 0) {
		key = msg_get(m, "key");
		if (!key || !*key || strlen(key) >= PMIWIRE_KEY_MAX)
			return sendf(w, client, "cmd=get_result rc=-1 msg=bad_key\n");
		val = job_attr(w, key);
		if (!val && w->ops->get)
			val = w->ops->get(w->arg, client, key);
		if (!val)
			return sendf(w, client, "cmd=get_result rc=-1 msg=key_%s_not_found\n", key);
		if (!v1_value_ok(val))
			return sendf(w, client, "cmd=get_result rc=-1 msg=value_not_sendable\n");
		return sendf(w, client, "cmd=get_result rc=0 msg=success value=%s\n", val);
	}
	if (strcmp(cmd, "finalize") == 0) {
		c->state = PMIWIRE_FINALIZED;
		rc = sendf(w, client, "cmd=finalize_ack rc=0\n");
		if (w->ops->finalize)
			w->ops->finalize(w->arg, client);
		return rc;
	}
	if (strcmp(cmd, "abort") == 0) {
		if (parse_int(msg_get(m, "exitcode"), &n) < 0)
			n = 1;
		c->state = PMIWIRE_ABORTED;
		if (w->ops->abort)
			w->ops->abort(w->arg, client, n, msg_get(m, "message"));
		return 0;
	}
	if (strcmp(cmd, "publish_name") == 0)
		return sendf(w, client, "cmd=publish_result rc=-1 msg=not_supported\n");
	if (strcmp(cmd, "unpublish_name") == 0)
		return sendf(w, client, "cmd=unpublish_result rc=-1 msg=not_supported\n");
	if (strcmp(cmd, "lookup_name") == 0)
		return sendf(w, client, "cmd=lookup_result rc=-1 msg=not_supported\n");
	return sendf(w, client, "cmd=%.40s_result rc=-1 msg=unknown_command\n", cmd);
}

/* --- PMI-2 ------------------------------------------------------------ */

/* Splits a PMI-2 body in place: "k=v;k=v;" with ";;" a ';' in a value. */
static int v2_parse(char *s, struct msg *m, struct error *err)
{
	m->npairs = 0;
	while (*s) {
		char *key = s, *val, *out;

		while (*s && *s != '=' && *s != ';')
			s++;
		if (*s != '=' || s == key)
			return error_set(err, -EPROTO, "PMI-2: pair without a key=");
		*s++ = '\0';
		val = out = s;
		for (;;) {
			if (*s == '\0')
				return error_set(err, -EPROTO, "PMI-2: value of %.40s not ended by ';'", key);
			if (*s == ';') {
				if (s[1] == ';') {
					*out++ = ';';
					s += 2;
					continue;
				}
				s++;
				break;
			}
			*out++ = *s++;
		}
		*out = '\0';
		if (m->npairs == MAX_PAIRS)
			return error_set(err, -EPROTO, "PMI-2: more than %d pairs", MAX_PAIRS);
		m->pairs[m->npairs].key = key;
		m->pairs[m->npairs].val = val;
		m->npairs++;
	}
	if (m->npairs == 0 || strcmp(m->pairs[0].key, "cmd") != 0)
		return error_set(err, -EPROTO, "PMI-2: message does not start with cmd=");
	return 0;
}

struct v2out {
	char buf[PMIWIRE_VAL_MAX * 2 + 512];
	size_t len;
	int overflow;
};

static void v2_add(struct v2out *o, const char *key, const char *val)
{
	size_t need = strlen(key) + 2;

	for (const char *p = val; *p; p++)
		need += *p == ';' ? 2 : 1;
	if (o->len + need >= sizeof(o->buf)) {
		o->overflow = 1;
		return;
	}
	o->len += (size_t)sprintf(o->buf + o->len, "%s=", key);
	for (const char *p = val; *p; p++) {
		o->buf[o->len++] = *p;
		if (*p == ';')
			o->buf[o->len++] = ';';
	}
	o->buf[o->len++] = ';';
	o->buf[o->len] = '\0';
}

static void v2_addi(struct v2out *o, const char *key, int v)
{
	char num[16];

	snprintf(num, sizeof(num), "%d", v);
	v2_add(o, key, num);
}

/* Starts a response: cmd, and the request's thrid echoed when it had one
 * (a threaded MPICH matches responses to requests by it). */
static void v2_start(struct v2out *o, const char *cmd, const struct msg *req)
{
	const char *thrid = req ? msg_get(req, "thrid") : NULL;

	o->len = V2_LENLEN;
	o->overflow = 0;
	v2_add(o, "cmd", cmd);
	if (thrid)
		v2_add(o, "thrid", thrid);
}

static int v2_send(struct pmiwire *w, int client, struct v2out *o)
{
	char lenbuf[V2_LENLEN + 1];

	if (o->overflow)
		return -EMSGSIZE;
	snprintf(lenbuf, sizeof(lenbuf), "%-6zu", o->len - V2_LENLEN);
	memcpy(o->buf, lenbuf, V2_LENLEN);
	return w->ops->send(w->arg, client, o->buf, o->len);
}

static int v2_reply(struct pmiwire *w, int client, const struct msg *req, const char *cmd,
		    int rc, const char *errmsg)
{
	struct v2out o;

	v2_start(&o, cmd, req);
	v2_addi(&o, "rc", rc);
	if (errmsg)
		v2_add(&o, "errmsg", errmsg);
	return v2_send(w, client, &o);
}

static int v2_found(struct pmiwire *w, int client, const struct msg *req, const char *cmd,
		    const char *val)
{
	struct v2out o;

	v2_start(&o, cmd, req);
	v2_addi(&o, "rc", 0);
	v2_add(&o, "found", val ? "TRUE" : "FALSE");
	if (val)
		v2_add(&o, "value", val);
	return v2_send(w, client, &o);
}

/* A node attribute was put: answers the clients waiting for it. */
static void nodeattr_wake(struct pmiwire *w, const char *key, const char *val)
{
	for (int i = 0; i < w->max_clients; i++) {
		struct client *c = &w->clients[i];
		struct msg req = { 0 };

		if (!c->used || !c->wait_key || strcmp(c->wait_key, key) != 0)
			continue;
		if (c->wait_thrid) {
			req.pairs[0].key = "thrid";
			req.pairs[0].val = c->wait_thrid;
			req.npairs = 1;
		}
		v2_found(w, i, &req, "info-getnodeattr-response", val);
		free(c->wait_key);
		free(c->wait_thrid);
		c->wait_key = c->wait_thrid = NULL;
	}
}

static int v2_handle(struct pmiwire *w, int client, struct client *c, const struct msg *m,
		     struct error *err)
{
	const char *cmd = m->pairs[0].val;
	const char *key, *val;
	struct v2out o;
	int n, rc;

	if (strcmp(cmd, "fullinit") == 0) {
		if (parse_int(msg_get(m, "pmirank"), &n) == 0)
			rc = claim(w, client, c, n);
		else
			rc = c->rank >= 0 ? 0 : -EINVAL;
		if (rc < 0)
			return v2_reply(w, client, m, "fullinit-response", -1, "rank refused");
		v2_start(&o, "fullinit-response", m);
		v2_addi(&o, "rc", 0);
		v2_add(&o, "pmi-version", "2");
		v2_add(&o, "pmi-subversion", "0");
		v2_addi(&o, "rank", c->rank);
		v2_addi(&o, "size", w->size);
		v2_addi(&o, "appnum", w->appnum);
		v2_add(&o, "debugged", "FALSE");
		v2_add(&o, "pmiverbose", "FALSE");
		return v2_send(w, client, &o);
	}
	if (c->rank < 0)
		return error_set(err, -EPROTO, "PMI-2: %.40s before fullinit", cmd);
	if (strcmp(cmd, "job-getid") == 0) {
		v2_start(&o, "job-getid-response", m);
		v2_addi(&o, "rc", 0);
		v2_add(&o, "jobid", w->kvsname);
		return v2_send(w, client, &o);
	}
	if (strcmp(cmd, "info-getjobattr") == 0) {
		key = msg_get(m, "key");
		if (!key)
			return v2_reply(w, client, m, "info-getjobattr-response", -1, "no key");
		val = job_attr(w, key);
		if (!val && strcmp(key, "universeSize") == 0) {
			char num[16];

			snprintf(num, sizeof(num), "%d", w->universe);
			return v2_found(w, client, m, "info-getjobattr-response", num);
		}
		return v2_found(w, client, m, "info-getjobattr-response", val);
	}
	if (strcmp(cmd, "kvs-put") == 0) {
		key = msg_get(m, "key");
		val = msg_get(m, "value");
		if (!key || !*key || !val || strlen(key) >= PMIWIRE_KEY_MAX || strlen(val) >= PMIWIRE_VAL_MAX)
			return v2_reply(w, client, m, "kvs-put-response", -1, "bad key or value");
		rc = w->ops->put ? w->ops->put(w->arg, client, key, val) : -ENOSYS;
		return v2_reply(w, client, m, "kvs-put-response", rc < 0 ? -1 : 0, rc < 0 ? "put failed" : NULL);
	}
	if (strcmp(cmd, "kvs-get") == 0) {
		key = msg_get(m, "key");
		if (!key || !*key)
			return v2_reply(w, client, m, "kvs-get-response", -1, "no key");
		val = job_attr(w, key);
		if (!val && w->ops->get)
			val = w->ops->get(w->arg, client, key);
		return v2_found(w, client, m, "kvs-get-response", val);
	}
	if (strcmp(cmd, "kvs-fence") == 0) {
		if (c->state == PMIWIRE_FENCE)
			return error_set(err, -EPROTO, "PMI-2: kvs-fence twice");
		c->state = PMIWIRE_FENCE;
		if (w->ops->fence)
			w->ops->fence(w->arg, client);
		return 0;
	}
	if (strcmp(cmd, "info-putnodeattr") == 0) {
		key = msg_get(m, "key");
		val = msg_get(m, "value");
		if (!key || !*key || !val)
			return v2_reply(w, client, m, "info-putnodeattr-response", -1, "no key or value");
		rc = w->ops->nodeattr_put ? w->ops->nodeattr_put(w->arg, client, key, val) : -ENOSYS;
		n = v2_reply(w, client, m, "info-putnodeattr-response", rc < 0 ? -1 : 0,
			     rc < 0 ? "put failed" : NULL);
		if (rc == 0)
			nodeattr_wake(w, key, val);
		return n;
	}
	if (strcmp(cmd, "info-getnodeattr") == 0) {
		const char *wait = msg_get(m, "wait");

		key = msg_get(m, "key");
		if (!key || !*key || strlen(key) >= PMIWIRE_KEY_MAX)
			return v2_reply(w, client, m, "info-getnodeattr-response", -1, "no key");
		val = w->ops->nodeattr_get ? w->ops->nodeattr_get(w->arg, client, key) : NULL;
		/* wait=TRUE: answered when some local rank puts the key (MVAPICH2
		 * and MPICH's PMI-2 shared-memory set-up wait on a leader's put) */
		if (!val && wait && strcmp(wait, "TRUE") == 0) {
			const char *thrid = msg_get(m, "thrid");

			free(c->wait_key);
			free(c->wait_thrid);
			c->wait_key = strdup(key);
			c->wait_thrid = thrid ? strdup(thrid) : NULL;
			return c->wait_key ? 0 : -ENOMEM;
		}
		return v2_found(w, client, m, "info-getnodeattr-response", val);
	}
	if (strcmp(cmd, "finalize") == 0) {
		c->state = PMIWIRE_FINALIZED;
		rc = v2_reply(w, client, m, "finalize-response", 0, NULL);
		if (w->ops->finalize)
			w->ops->finalize(w->arg, client);
		return rc;
	}
	if (strcmp(cmd, "abort") == 0) {
		val = msg_get(m, "msg");
		c->state = PMIWIRE_ABORTED;
		if (w->ops->abort)
			w->ops->abort(w->arg, client, 1, val);
		return 0;
	}
	if (strcmp(cmd, "spawn") == 0)
		return v2_reply(w, client, m, "spawn-response", -1, "spawn is not supported");
	if (strcmp(cmd, "name-publish") == 0 || strcmp(cmd, "name-unpublish") == 0 ||
	    strcmp(cmd, "name-lookup") == 0) {
		char resp[64];

		snprintf(resp, sizeof(resp), "%s-response", cmd);
		return v2_reply(w, client, m, resp, -1, "not supported");
	}
	{
		char resp[80];

		snprintf(resp, sizeof(resp), "%.60s-response", cmd);
		return v2_reply(w, client, m, resp, -1, "unknown command");
	}
}

/* --- framing ------------------------------------------------------------ */

static int buffer_add(struct client *c, const char *data, size_t len)
{
	if (c->inlen + len > PMIWIRE_MSG_MAX)
		return -EMSGSIZE;
	if (c->inlen + len + 1 > c->incap) {
		size_t cap = c->incap ? c->incap : 256;
		char *n;

		while (cap < c->inlen + len + 1)
			cap *= 2;
		n = realloc(c->in, cap);
		if (!n)
			return -ENOMEM;
		c->in = n;
		c->incap = cap;
	}
	memcpy(c->in + c->inlen, data, len);
	c->inlen += len;
	c->in[c->inlen] = '\0';
	return 0;
}

static void buffer_drop(struct client *c, size_t n)
{
	memmove(c->in, c->in + n, c->inlen - n);
	c->inlen -= n;
	c->in[c->inlen] = '\0';
}

/* One message from c->in if a whole one is there: 1 handled, 0 none yet,
 * < 0 error. */
static int next_message(struct pmiwire *w, int client, struct client *c, struct error *err)
{
	struct msg m;
	char *copy, *nl;
	size_t used;
	int rc;

	if (c->version == 2 && c->state != PMIWIRE_NEW) {
		char lenbuf[V2_LENLEN + 1], *end;
		long n;

		if (c->inlen < V2_LENLEN)
			return 0;
		memcpy(lenbuf, c->in, V2_LENLEN);
		lenbuf[V2_LENLEN] = '\0';
		n = strtol(lenbuf, &end, 10);
		while (*end == ' ')
			end++;
		if (end == lenbuf || *end || n <= 0 || n > PMIWIRE_MSG_MAX - V2_LENLEN)
			return error_set(err, -EPROTO, "PMI-2: bad length field '%s'", lenbuf);
		if (c->inlen < V2_LENLEN + (size_t)n)
			return 0;
		copy = strndup(c->in + V2_LENLEN, (size_t)n);
		if (!copy)
			return -ENOMEM;
		if (strlen(copy) != (size_t)n) {
			free(copy);
			return error_set(err, -EPROTO, "PMI-2: NUL inside a message");
		}
		buffer_drop(c, V2_LENLEN + (size_t)n);
		rc = v2_parse(copy, &m, err);
		if (rc == 0)
			rc = v2_handle(w, client, c, &m, err);
		free(copy);
		return rc < 0 ? rc : 1;
	}
	nl = memchr(c->in, '\n', c->inlen);
	if (!nl)
		return c->inlen > 4096 && !c->in_spawn ?
			error_set(err, -EPROTO, "PMI-1: line longer than 4096 bytes") : 0;
	used = (size_t)(nl - c->in) + 1;
	*nl = '\0';
	if (strlen(c->in) != used - 1)
		return error_set(err, -EPROTO, "PMI-1: NUL inside a line");
	/* PMI_Spawn_multiple sends "mcmd=spawn", key=value lines, "endcmd":
	 * refused as a whole once its end is in. */
	if (c->in_spawn || strcmp(c->in, "mcmd=spawn") == 0) {
		int end = strcmp(c->in, "endcmd") == 0;

		c->in_spawn = !end;
		buffer_drop(c, used);
		if (!end)
			return 1;
		rc = sendf(w, client, "cmd=spawn_result rc=-1 errmsg=spawn_is_not_supported\n");
		return rc < 0 ? rc : 1;
	}
	copy = strdup(c->in);
	if (!copy)
		return -ENOMEM;
	buffer_drop(c, used);
	rc = v1_parse(copy, &m, err);
	if (rc == 0)
		rc = v1_handle(w, client, c, &m, err);
	free(copy);
	return rc < 0 ? rc : 1;
}

int pmiwire_feed(struct pmiwire *w, int client, const char *data, size_t len,
		 struct error *err)
{
	struct client *c = client_get(w, client);
	int rc;

	if (!c)
		return error_set(err, -EINVAL, "PMI: no client %d", client);
	rc = buffer_add(c, data, len);
	if (rc < 0)
		return error_set(err, rc == -EMSGSIZE ? -EPROTO : rc,
				 "PMI: message longer than %d bytes", PMIWIRE_MSG_MAX);
	while ((rc = next_message(w, client, c, err)) > 0)
		;
	return rc;
}

int pmiwire_fence_done(struct pmiwire *w)
{
	int first = 0;

	for (int i = 0; i < w->max_clients; i++) {
		struct client *c = &w->clients[i];
		int rc;

		if (!c->used || c->state != PMIWIRE_FENCE)
			continue;
		c->state = PMIWIRE_INIT;
		if (c->version == 2) {
			struct v2out o;

			v2_start(&o, "kvs-fence-response", NULL);
			v2_addi(&o, "rc", 0);
			rc = v2_send(w, i, &o);
		} else {
			rc = sendf(w, i, "cmd=barrier_out rc=0\n");
		}
		if (rc < 0 && !first)
			first = rc;
	}
	return first;
}

int pmiwire_process_mapping(const int *per_node, int nnodes, char *buf, size_t len)
{
	size_t off;
	int n;

	if (!per_node || nnodes < 1 || !buf)
		return -EINVAL;
	n = snprintf(buf, len, "(vector");
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	off = (size_t)n;
	for (int i = 0; i < nnodes;) {
		int j = i;

		if (per_node[i] < 1)
			return -EINVAL;
		while (j + 1 < nnodes && per_node[j + 1] == per_node[i])
			j++;
		n = snprintf(buf + off, len - off, ",(%d,%d,%d)", i, j - i + 1, per_node[i]);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
		i = j + 1;
	}
	n = snprintf(buf + off, len - off, ")");
	if (n < 0 || (size_t)n >= len - off)
		return -ENOSPC;
	return (int)(off + (size_t)n);
}
