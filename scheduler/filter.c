/* SPDX-License-Identifier: MIT */
/* The site's submit filter ([server] submit_filter): each submit, alter and
 * move waits for it, off the loop's thread of work, before anything is
 * checked or committed; what it changes goes through the same checks as
 * the user's own request (docs/HOOKS.md). */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "parse.h"
#include "server-internal.h"
#include "srvhook.h"
#include "wire.h"

struct filter_req {
	struct conn *conn;
	long long req_id;
	char op[8];
	json_t *msg;
};

bool filter_wanted(const struct server *s, const char *op)
{
	return s->config->submit_filter[0] && s->hooks &&
	       (!strcmp(op, "submit") || !strcmp(op, "alter") || !strcmp(op, "move"));
}

static void set_str(json_t *o, const char *key, const char *v)
{
	json_object_set_new(o, key, v ? json_string(v) : json_null());
}

static json_t *member_or_null(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return v ? json_incref(v) : json_null();
}

/* The request as the filter sees it: what the user asked, and who. */
static json_t *filter_input(struct conn *c, const char *op, json_t *msg)
{
	struct server *s = c->server;
	json_t *job = json_object(), *in;
	json_t *attrs = json_object_get(msg, "attrs");
	const char *owner = server_user_name(s, c->uid);
	struct group gr, *gres = NULL;
	char gbuf[4096];

	if (!job)
		return NULL;
	set_str(job, "user", owner);
	json_object_set_new(job, "uid", json_integer(c->uid));
	if (getgrgid_r(c->gid, &gr, gbuf, sizeof(gbuf), &gres) == 0 && gres)
		set_str(job, "group", gres->gr_name);
	else
		json_object_set_new(job, "group", json_null());
	json_object_set_new(job, "gid", json_integer(c->gid));
	if (!strcmp(op, "submit")) {
		const char *q = wire_str(msg, "queue");
		const struct queue_conf *dq = config_default_queue(s->config);
		const char *script = wire_str(msg, "script");

		set_str(job, "queue", q && *q ? q : dq ? dq->name : NULL);
		json_object_set_new(job, "walltime", member_or_null(msg, "walltime"));
		json_object_set_new(job, "ncpus", member_or_null(msg, "ncpus"));
		json_object_set_new(job, "ngpus", member_or_null(msg, "ngpus"));
		set_str(job, "gpu_model", wire_str(msg, "gpu_model"));
		json_object_set_new(job, "mem", member_or_null(msg, "mem"));
		json_object_set_new(job, "select", member_or_null(msg, "chunks"));
		json_object_set_new(job, "place", member_or_null(msg, "place"));
		/* The nodes named (sbatch -w, qsub host=, nodes=NAME), as the
		 * request carries them (docs/RESOURCES.md). */
		set_str(job, "nodes", wire_str(msg, "nodelist"));
		set_str(job, "account", wire_str(attrs, "Account_Name"));
		json_object_set_new(job, "name", member_or_null(msg, "name"));
		json_object_set_new(job, "priority", member_or_null(msg, "priority"));
		json_object_set_new(job, "array", member_or_null(msg, "array"));
		json_object_set_new(job, "interactive", json_boolean(wire_bool(msg, "interactive", 0)));
		set_str(job, "dialect", wire_str(msg, "dialect") ? wire_str(msg, "dialect") : "pbs");
		json_object_set_new(job, "script_size", json_integer(script ? (json_int_t)strlen(script) : 0));
		json_object_set_new(job, "attrs", attrs ? json_incref(attrs) : json_object());
	} else {
		struct job *j = pool_job_find(s->pool, wire_int(msg, "jobid", 0));
		json_t *changes = json_object();
		static const char *const fields[] = { "queue", "name", "ncpus", "mem", "walltime", "stdout",
						      "stderr", "join", "rerunnable", "begin" };

		json_object_set_new(job, "id", json_integer(wire_int(msg, "jobid", 0)));
		if (j) {
			set_str(job, "queue", j->queue);
			json_object_set_new(job, "ncpus", json_integer(j->ncpus));
			json_object_set_new(job, "mem", json_integer((json_int_t)j->mem));
			json_object_set_new(job, "walltime", json_integer((json_int_t)j->walltime));
			set_str(job, "state", job_state_name(j->state));
		}
		for (size_t i = 0; changes && i < sizeof(fields) / sizeof(fields[0]); i++)
			if (json_object_get(msg, fields[i]))
				json_object_set(changes, fields[i], json_object_get(msg, fields[i]));
		json_object_set_new(job, "changes", changes ? changes : json_object());
	}
	in = json_pack("{s:i, s:s, s:o}", "version", HOOK_CONTRACT, "event", op, "job", job);
	return in;
}

static bool text_ok(json_t *v, size_t max)
{
	const char *t = json_string_value(v);

	if (!t || !*t || strlen(t) > max)
		return false;
	for (; *t; t++)
		if (iscntrl((unsigned char)*t))
			return false;
	return true;
}

/* A count, or seconds / bytes as an integer or in qpool's words
 * ("1:00:00", "4G"). */
static int amount(json_t *v, bool duration, long long *ret)
{
	uint64_t u;

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*ret = json_integer_value(v);
		return 0;
	}
	if (!json_is_string(v))
		return -EINVAL;
	if ((duration ? duration_parse(json_string_value(v), &u) : size_parse(json_string_value(v), &u)) < 0 ||
	    u > (uint64_t)INT64_MAX)
		return -EINVAL;
	*ret = (long long)u;
	return 0;
}

/* Applies the filter's changes to the request; -EINVAL with WHY for a
 * change it may not make (a member not its to set, or of the wrong type). */
static int changes_apply(const char *op, json_t *msg, json_t *out, char *why, size_t len)
{
	const char *key;
	json_t *v;
	long long n;
	bool submit = !strcmp(op, "submit");

	json_object_foreach(out, key, v) {
		if (!strcmp(key, "queue") && strcmp(op, "alter") != 0) {
			if (!text_ok(v, 64))
				goto bad;
			json_object_set(msg, "queue", v);
		} else if (!strcmp(key, "name") && strcmp(op, "move") != 0) {
			if (!text_ok(v, 255))
				goto bad;
			json_object_set(msg, "name", v);
		} else if ((!strcmp(key, "walltime") || !strcmp(key, "mem")) && strcmp(op, "move") != 0) {
			if (amount(v, !strcmp(key, "walltime"), &n) < 0)
				goto bad;
			json_object_set_new(msg, key, json_integer(n));
		} else if (!strcmp(key, "ncpus") && strcmp(op, "move") != 0) {
			if (!json_is_integer(v) || json_integer_value(v) < 1)
				goto bad;
			json_object_set(msg, "ncpus", v);
		} else if (submit && !strcmp(key, "ngpus")) {
			if (!json_is_integer(v) || json_integer_value(v) < 0)
				goto bad;
			json_object_set(msg, "ngpus", v);
		} else if (submit && !strcmp(key, "priority")) {
			if (!json_is_integer(v))
				goto bad;
			json_object_set(msg, "priority", v);
		} else if (submit && !strcmp(key, "nodes")) {
			/* The submit check reads it like the user's: an unknown
			 * node is refused there. */
			if (!json_is_null(v) && !text_ok(v, 255))
				goto bad;
			if (json_is_null(v))
				json_object_del(msg, "nodelist");
			else
				json_object_set(msg, "nodelist", v);
		} else if (submit && !strcmp(key, "gpu_model")) {
			/* The submit check reads it like the user's (a model
			 * no node has is refused there; docs/GPUS.md). */
			if (!json_is_null(v) && !text_ok(v, 31))
				goto bad;
			if (json_is_null(v))
				json_object_del(msg, "gpu_model");
			else
				json_object_set(msg, "gpu_model", v);
		} else if (submit && !strcmp(key, "account")) {
			json_t *attrs = json_object_get(msg, "attrs");
			const char *attr = "Account_Name";

			if (!json_is_null(v) && !text_ok(v, 255))
				goto bad;
			if (!attrs) {
				attrs = json_object();
				json_object_set_new(msg, "attrs", attrs);
			}
			if (!json_is_object(attrs))
				goto bad;
			if (json_is_null(v))
				json_object_del(attrs, attr);
			else
				json_object_set(attrs, attr, v);
		} else {
			snprintf(why, len, "it may not change \"%.40s\" on %s", key, op);
			return -EINVAL;
		}
	}
	return 0;
bad:
	snprintf(why, len, "\"%.40s\": not a value it may set", key);
	return -EINVAL;
}

static void req_free(struct filter_req *f)
{
	conn_unref(f->conn);
	json_decref(f->msg);
	free(f);
}

static void on_drop(void *arg)
{
	req_free(arg);
}

/* The policy for a filter that failed (timed out, died, flooded, spoke
 * nonsense): true to go on with the request as it came. */
static bool failure_accepts(struct filter_req *f, const char *what)
{
	struct server *s = f->conn->server;
	bool accept = s->config->submit_filter_failure == CONFIG_HOOK_ACCEPT;

	log_warn("submit filter failed on %s from uid %d: %s; request %s (submit_filter_failure = %s)", f->op,
		 (int)f->conn->uid, what, accept ? "accepted as it came" : "refused", accept ? "accept" : "reject");
	if (!accept)
		conn_reply_err(f->conn, f->req_id, EAGAIN, "the site's submit filter failed (%s); "
			       "the request is refused, try again or ask the administrator", what);
	return accept;
}

static void jobid_prefix(struct filter_req *f, char *buf, size_t len)
{
	if (strcmp(f->op, "submit") != 0)
		snprintf(buf, len, "job %lld: ", wire_int(f->msg, "jobid", 0));
	else
		buf[0] = '\0';
}

static void on_done(struct hook *h, void *arg)
{
	struct filter_req *f = arg;
	struct conn *c = f->conn;
	char line[256], what[256], pre[40];
	const char *p;
	size_t n;
	json_t *out = NULL;
	json_error_t jerr;
	bool go = false;

	if (c->closed)
		goto done;
	jobid_prefix(f, pre, sizeof(pre));
	/* Its stderr goes to the log, line by line, with the job's id. */
	for (const char *e = h->errbuf; *e;) {
		size_t k = strcspn(e, "\n");

		if (k)
			log_info("submit filter (%s%s by uid %d): %.*s", pre, f->op, (int)c->uid, (int)k, e);
		e += k + (e[k] == '\n');
	}
	switch (h->outcome) {
	case HOOK_OK:
		/* By its length: a hook that printed nothing may leave the
		 * buffer allocated but unwritten (lib/hook.c reads into it). */
		p = h->outbuf ? h->outbuf : "";
		n = h->outbuf ? h->out_len : 0;
		while (n && isspace((unsigned char)*p)) {
			p++;
			n--;
		}
		if (!n) {
			go = true;
			break;
		}
		out = json_loadb(p, n, JSON_REJECT_DUPLICATES, &jerr);
		if (!json_is_object(out)) {
			snprintf(what, sizeof(what), "its output is not a JSON object%s%.80s",
				 out ? "" : ": ", out ? "" : jerr.text);
			go = failure_accepts(f, what);
			break;
		}
		{
			json_t *copy = json_deep_copy(f->msg);

			if (copy && changes_apply(f->op, copy, out, line, sizeof(line)) == 0) {
				json_decref(f->msg);
				f->msg = copy;
				go = true;
				if (json_object_size(out)) {
					char *text = json_dumps(out, JSON_COMPACT);

					log_info("submit filter changed %s%s from uid %d: %.200s", pre, f->op,
						 (int)c->uid, text ? text : "?");
					free(text);
				}
			} else {
				json_decref(copy);
				snprintf(what, sizeof(what), "%s", copy ? line : "out of memory");
				go = failure_accepts(f, what);
			}
		}
		break;
	case HOOK_FAILED:
		/* Its verdict: the first line of its stderr is the user's. */
		hook_err_line(h, line, sizeof(line));
		log_info("submit filter rejected %s%s from uid %d: %s", pre, f->op, (int)c->uid,
			 line[0] ? line : "(no message)");
		conn_reply_err(c, f->req_id, ECANCELED, "%s%s", pre,
			       line[0] ? line : "rejected by the site's submit filter");
		break;
	default:
		go = failure_accepts(f, hook_describe(h, what, sizeof(what)));
		break;
	}
	if (go)
		c->server->filter_pass_f(c, f->op, f->req_id, f->msg);
done:
	json_decref(out);
	req_free(f);
}

void filter_request(struct conn *c, const char *op, long long req_id, json_t *msg)
{
	struct server *s = c->server;
	struct filter_req *f = calloc(1, sizeof(*f));
	json_t *in = NULL;
	int r = -ENOMEM;

	if (!f)
		goto fail;
	in = filter_input(c, op, msg);
	if (!in)
		goto fail;
	f->conn = c;
	conn_ref(c);
	f->req_id = req_id;
	snprintf(f->op, sizeof(f->op), "%s", op);
	f->msg = json_incref(msg);
	r = srvhooks_run(s->hooks, SRVHOOK_SUBMIT_FILTER, s->config->submit_filter, s->config->submit_filter_timeout,
			 in, NULL, on_done, on_drop, f);
	json_decref(in);
	in = NULL;
	if (r == 0)
		return;
	req_free(f);
	f = NULL;
fail:
	free(f);
	json_decref(in);
	{
		char what[120];

		snprintf(what, sizeof(what), "cannot start it: %s", strerror(-r));
		log_warn("submit filter: %s", what);
		if (s->config->submit_filter_failure == CONFIG_HOOK_ACCEPT)
			s->filter_pass_f(c, op, req_id, msg);
		else
			conn_reply_err(c, req_id, EAGAIN, "the site's submit filter failed (%s); "
				       "the request is refused, try again or ask the administrator", what);
	}
}
