/* SPDX-License-Identifier: MIT */
/* The server's hooks on qpoold's event loop: started, fed, read and killed
 * at their bound without ever blocking the loop (lib/hook.h); the last
 * outcome of each kind kept for qmgr's `list hook`. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include "hook.h"
#include "log.h"
#include "server-internal.h"
#include "srvhook.h"
#include "timeutil.h"

struct srvhook_run {
	struct srvhooks *owner;
	enum srvhook_kind kind;
	struct hook h;
	char *input;                 /* owned; the hook reads it */
	sd_event_source *io[4];
	sd_event_source *timer;
	srvhook_done_f done;
	srvhook_drop_f drop;
	void *arg;
	struct srvhook_run *next, *prev;
};

struct srvhook_last {
	int64_t wall_ns;             /* when the last run ended; 0: never ran */
	int64_t elapsed_ms;
	char result[200];
	uint64_t runs, failures;
};

struct srvhooks {
	sd_event *event;
	struct srvhook_run *runs;
	unsigned n_running;
	struct srvhook_last last[SRVHOOK_KIND_MAX];
};

static const char *kind_names[SRVHOOK_KIND_MAX] = { "submit_filter", "server_prolog", "server_epilog" };

const char *srvhook_kind_name(enum srvhook_kind k)
{
	return k < SRVHOOK_KIND_MAX ? kind_names[k] : "?";
}

int srvhooks_config_check(const struct config *c, struct error *err)
{
	const char *paths[SRVHOOK_KIND_MAX] = { c->submit_filter, c->server_prolog, c->server_epilog };
	char why[200];

	for (int k = 0; k < SRVHOOK_KIND_MAX; k++)
		if (paths[k][0] && hook_path_check(paths[k], why, sizeof(why)) < 0)
			return error_set(err, -EPERM, "%s: [server] %s: %s", c->path, kind_names[k], why);
	return 0;
}

int srvhooks_create(sd_event *e, struct srvhooks **ret)
{
	struct srvhooks *hs = calloc(1, sizeof(*hs));

	if (!hs)
		return -ENOMEM;
	hs->event = sd_event_ref(e);
	*ret = hs;
	return 0;
}

static void run_unwatch(struct srvhook_run *r)
{
	for (int i = 0; i < 4; i++)
		r->io[i] = sd_event_source_disable_unref(r->io[i]);
}

static void run_free(struct srvhook_run *r)
{
	struct srvhooks *hs = r->owner;

	run_unwatch(r);
	r->timer = sd_event_source_disable_unref(r->timer);
	hook_release(&r->h);
	if (r->prev)
		r->prev->next = r->next;
	else
		hs->runs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	hs->n_running--;
	free(r->input);
	free(r);
}

static void run_ended(struct srvhook_run *r)
{
	struct srvhook_last *l = &r->owner->last[r->kind];
	char why[200];

	l->wall_ns = time_wall_ns();
	l->elapsed_ms = hook_elapsed_ms(&r->h);
	l->runs++;
	if (r->h.outcome != HOOK_OK)
		l->failures++;
	snprintf(l->result, sizeof(l->result), "%s", hook_describe(&r->h, why, sizeof(why)));
	/* The callback may start another run: this one leaves the list
	 * after it, so its hook's output is still there to read. */
	r->done(&r->h, r->arg);
	run_free(r);
}

static int on_io(sd_event_source *src, int fd, uint32_t revents, void *userdata);

/* The descriptors change as the hook closes them: watched afresh after
 * each pump (at most four, a handful of epoll_ctl calls per event). */
static int run_watch(struct srvhook_run *r)
{
	int fds[4];
	short events[4];
	int n, rc;

	run_unwatch(r);
	n = hook_fds(&r->h, fds, events);
	for (int i = 0; i < n; i++) {
		rc = sd_event_add_io(r->owner->event, &r->io[i], fds[i],
				     (events[i] & POLLOUT) ? EPOLLOUT : EPOLLIN, on_io, r);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int on_io(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct srvhook_run *r = userdata;

	(void)src;
	(void)fd;
	(void)revents;
	if (hook_pump(&r->h)) {
		run_ended(r);
		return 0;
	}
	if (run_watch(r) < 0) {
		hook_expire(&r->h);
		run_ended(r);
	}
	return 0;
}

static int on_timer(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct srvhook_run *r = userdata;

	(void)src;
	(void)usec;
	/* What it finished just in time counts: pump once more first. */
	if (!hook_pump(&r->h))
		hook_expire(&r->h);
	run_ended(r);
	return 0;
}

int srvhooks_run(struct srvhooks *hs, enum srvhook_kind kind, const char *path, uint64_t timeout_s,
		 json_t *input, char *const env[], srvhook_done_f done, srvhook_drop_f drop, void *arg)
{
	struct srvhook_run *r = calloc(1, sizeof(*r));
	char *const argv[] = { (char *)path, (char *)kind_names[kind], NULL };
	int rc;

	if (!r)
		return -ENOMEM;
	r->owner = hs;
	r->kind = kind;
	r->done = done;
	r->drop = drop;
	r->arg = arg;
	r->input = json_dumps(input, JSON_COMPACT);
	if (!r->input) {
		free(r);
		return -ENOMEM;
	}
	rc = hook_start(&r->h, path, argv, env, r->input, strlen(r->input), 0);
	if (rc < 0) {
		free(r->input);
		free(r);
		return rc;
	}
	r->next = hs->runs;
	if (hs->runs)
		hs->runs->prev = r;
	hs->runs = r;
	hs->n_running++;
	rc = sd_event_add_time(hs->event, &r->timer, CLOCK_MONOTONIC,
			       hook_deadline_us(&r->h, (timeout_s ? timeout_s : 1) * 1000000ULL), 1000, on_timer, r);
	if (rc >= 0)
		rc = run_watch(r);
	if (rc < 0) {
		r->done = NULL;
		run_free(r);
		return rc;
	}
	return 0;
}

void srvhooks_kill(struct srvhooks *hs, const void *arg)
{
	for (struct srvhook_run *r = hs ? hs->runs : NULL; r; r = r->next)
		if (r->arg == arg && r->h.pid > 0 && !r->h.exited)
			kill(-r->h.pid, SIGKILL);
}

json_t *srvhooks_json(const struct srvhooks *hs, const struct config *c)
{
	json_t *list = json_array();
	const char *paths[SRVHOOK_KIND_MAX] = { c->submit_filter, c->server_prolog, c->server_epilog };
	const uint64_t timeouts[SRVHOOK_KIND_MAX] = { c->submit_filter_timeout, c->server_prolog_timeout,
						     c->server_epilog_timeout };

	for (int k = 0; list && k < SRVHOOK_KIND_MAX; k++) {
		const struct srvhook_last *l = &hs->last[k];
		char when[32] = "";
		struct tm tm;
		time_t t = (time_t)(l->wall_ns / 1000000000LL);

		if (!paths[k][0] && !l->runs)
			continue;
		if (l->wall_ns && localtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		json_array_append_new(list, json_pack("{s:s, s:s, s:I, s:s, s:I, s:s, s:I, s:I}",
			"name", kind_names[k], "path", paths[k][0] ? paths[k] : "(none)",
			"timeout", (json_int_t)timeouts[k], "last_time", when,
			"last_elapsed_ms", (json_int_t)l->elapsed_ms,
			"last_result", l->runs ? l->result : "never run",
			"runs", (json_int_t)l->runs, "failures", (json_int_t)l->failures));
	}
	return list;
}

void srvhooks_destroy(struct srvhooks *hs)
{
	if (!hs)
		return;
	/* The loop is ending (stop, step-down): a run in flight is killed and
	 * its request dropped uncommitted; its client hears the link close. */
	while (hs->runs) {
		struct srvhook_run *r = hs->runs;

		if (r->drop)
			r->drop(r->arg);
		run_free(r);
	}
	sd_event_unref(hs->event);
	free(hs);
}
