/* SPDX-License-Identifier: MIT */
/* The node's health check ([node] health_check, qpool-hooks(5)): run out
 * of process on qnoded's own loop (never blocking it) at start and every
 * health_check_interval, its verdict sent to qpoold as node.health, which
 * drains the node on a failure and resumes it when a check that drained it
 * passes again. LBNL NHC's way: its first line of output is the reason. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "hook.h"
#include "log.h"
#include "noded.h"
#include "parse.h"

struct health {
	struct noded *nd;
	struct hook hook;
	bool running;
	char *input;
	sd_event_source *timer;
	sd_event_source *io[4];
	sd_event_source *deadline;
	unsigned runs;
};

static void health_io_drop(struct health *h)
{
	for (int i = 0; i < 4; i++)
		h->io[i] = sd_event_source_disable_unref(h->io[i]);
	h->deadline = sd_event_source_disable_unref(h->deadline);
}

/* The verdict: the first line of standard output (NHC prints "ERROR ...:"
 * there), else of standard error, else what ended the check. */
static void health_done(struct health *h)
{
	const struct config *c = h->nd->config;
	char reason[256] = "", desc[256];
	bool ok = h->hook.outcome == HOOK_OK;
	json_t *req;

	health_io_drop(h);
	h->running = false;
	h->runs++;
	if (!ok) {
		size_t n = h->hook.out_len ? strcspn(h->hook.outbuf, "\n") : 0;

		if (n)
			snprintf(reason, sizeof(reason), "%.*s", (int)(n < 255 ? n : 255), h->hook.outbuf);
		else
			hook_err_line(&h->hook, reason, sizeof(reason));
		/* A reason travels as JSON text: what is not UTF-8 is not one. */
		if (!reason[0] || !utf8_valid(reason, strlen(reason)))
			snprintf(reason, sizeof(reason), "health check %s",
				 hook_describe(&h->hook, desc, sizeof(desc)));
		log_warn("health check %s: %s: %s", c->health_check,
			 hook_describe(&h->hook, desc, sizeof(desc)), reason);
	} else {
		log_debug("health check %s: passes (%lld ms)", c->health_check,
			  (long long)hook_elapsed_ms(&h->hook));
	}
	hook_release(&h->hook);
	free(h->input);
	h->input = NULL;
	req = json_pack("{s:s, s:b, s:s}", "op", "node.health", "ok", ok, "reason", reason);
	/* Not registered yet: the next check tells it. */
	if (req && link_call(h->nd->link, req, NULL, 0) < 0)
		log_debug("health check: not connected to qpoold; the next check reports");
}

/* A pipe the check's pump closed is gone from its descriptors: its source
 * goes at once, in the same turn. Left for later, its number could be
 * taken (by a launch's notify socket or pidfd, the lowest free ones), and
 * the stale source's removal would take that one's epoll registration
 * with it: a job whose end qnoded never hears of. */
static void health_io_sync(struct health *h)
{
	int fds[4], n = hook_fds(&h->hook, fds, (short[4]){ 0 });

	for (int i = 0; i < 4; i++) {
		int mine = sd_event_source_get_io_fd(h->io[i]);
		bool kept = false;

		for (int k = 0; k < n; k++)
			kept |= fds[k] == mine;
		if (h->io[i] && !kept)
			h->io[i] = sd_event_source_disable_unref(h->io[i]);
	}
}

static int health_on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct health *h = userdata;

	if (hook_pump(&h->hook)) {
		health_done(h);
		return 0;
	}
	health_io_sync(h);
	return 0;
}

static int health_on_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct health *h = userdata;

	hook_expire(&h->hook);
	health_done(h);
	return 0;
}

static void health_start(struct health *h)
{
	const struct config *c = h->nd->config;
	char *argv[2] = { (char *)c->health_check, NULL };
	char conf[4200], node[300];
	/* QPOOL_HOOK=health: a drain or resume its commands make (LBNL NHC's
	 * scontrol or pbsnodes) is by health (docs/HOOKS.md); QPOOL_CONF: the
	 * pool qnoded is in; QPOOL_NODE: its name there. */
	char *env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "QPOOL_HOOK=health", conf, node, NULL };
	json_t *doc;
	int fds[4], n;
	short ev[4];

	if (h->running)
		return;
	snprintf(conf, sizeof(conf), "QPOOL_CONF=%s", h->nd->config_file ? h->nd->config_file : "");
	snprintf(node, sizeof(node), "QPOOL_NODE=%s", h->nd->name);
	doc = json_pack("{s:i, s:s, s:{s:s}}", "version", HOOK_CONTRACT, "event", "health", "node", "name",
			h->nd->name);
	h->input = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!h->input || hook_start(&h->hook, c->health_check, argv, env, h->input, strlen(h->input), 0) < 0) {
		char desc[256];

		log_warn("health check %s: %s", c->health_check,
			 h->input ? hook_describe(&h->hook, desc, sizeof(desc)) : "out of memory");
		free(h->input);
		h->input = NULL;
		return;
	}
	h->running = true;
	n = hook_fds(&h->hook, fds, ev);
	for (int i = 0; i < n; i++)
		if (sd_event_add_io(h->nd->event, &h->io[i], fds[i], ev[i] == POLLOUT ? EPOLLOUT : EPOLLIN,
				    health_on_io, h) < 0)
			log_warn("health check: cannot watch it: %s", strerror(ENOMEM));
	if (sd_event_add_time(h->nd->event, &h->deadline, CLOCK_MONOTONIC,
			      hook_deadline_us(&h->hook,
					       (c->health_check_timeout ? c->health_check_timeout : 60) * 1000000ULL),
			      1000, health_on_deadline, h) < 0)
		log_warn("health check: no deadline: %s", strerror(ENOMEM));
	/* What it can do at once (its input written, that pipe closed). */
	if (hook_pump(&h->hook))
		health_done(h);
	else
		health_io_sync(h);
}

static int health_on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct health *h = userdata;
	uint64_t every = h->nd->config->health_check_interval;

	health_start(h);
	sd_event_source_set_time_relative(s, (every ? every : 60) * 1000000ULL);
	sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

int health_create(struct noded *nd, struct health **ret)
{
	struct health *h;

	*ret = NULL;
	if (!nd->config->health_check[0])
		return 0;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->nd = nd;
	/* The first check at once: a node that comes up broken is drained
	 * before it takes a job. */
	if (sd_event_add_time_relative(nd->event, &h->timer, CLOCK_MONOTONIC, 0, 1000, health_on_timer, h) < 0) {
		free(h);
		return -ENOMEM;
	}
	*ret = h;
	return 0;
}

void health_destroy(struct health *h)
{
	if (!h)
		return;
	health_io_drop(h);
	h->timer = sd_event_source_disable_unref(h->timer);
	if (h->running)
		hook_release(&h->hook);
	free(h->input);
	free(h);
}
