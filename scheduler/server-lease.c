/* SPDX-License-Identifier: MIT */
/* The server's side of leadership (lease.h): the lease's turns on the
 * loop, the takeover (today's start path), the step-down, and the standby
 * reply every request gets while this server is not the active. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "jobid.h"
#include "server-internal.h"
#include "timeutil.h"

static const char *host_name(char *buf, size_t size)
{
	if (gethostname(buf, size) < 0)
		snprintf(buf, size, "localhost");
	buf[size - 1] = '\0';
	return buf;
}

bool server_standby(const struct hctx *s)
{
	return !s->lease || !lease_active(s->lease);
}

void server_standby_reply(struct conn *c, long long req_id)
{
	char host[256];

	conn_send(c, lease_standby_reply(c->server->lease, req_id, host_name(host, sizeof(host))));
}

json_t *server_ha_json(struct hctx *s)
{
	return lease_ha_json(s->lease);
}

void server_lease_refresh(struct server *s)
{
	lease_refresh(s->lease);
}

void server_step_down(struct server *s, const char *why)
{
	if (s->stepping_down)
		return;
	s->stepping_down = true;
	log_err("stepping down to standby at epoch %lld: %s; nothing more is written by this server",
		(long long)lease_epoch(s->lease), why);
	/* main drops every piece of in-memory state with the server and
	 * starts a fresh one, a standby. */
	(void)sd_event_exit(s->event, SERVER_EXIT_STEPPED_DOWN);
}

/* The pool's name, the suffix of every job id (docs/HA.md, "What names
 * a job id"): the store's, so each server of the pool and each command
 * prints one id whichever server answered, before and after a takeover.
 * The first active writes it ([server] name, else its short host name);
 * an active whose [server] name differs renames the pool, said once in
 * the journal. */
int server_pool_name_settle(struct server *s)
{
	char stored[JOBID_SERVER_MAX] = "", want[JOBID_SERVER_MAX];
	int r;

	r = jobstore_pool_name_read(s->store, stored, sizeof(stored));
	if (r < 0 && r != -ENOENT)
		stored[0] = '\0';
	if (s->config->server_name[0] || !stored[0])
		jobid_server_name(s->config->server_name, want, sizeof(want));
	else
		snprintf(want, sizeof(want), "%s", stored);
	snprintf(s->pool_name, sizeof(s->pool_name), "%s", want);
	if (r < 0 && r != -ENOENT)
		return r;
	if (strcmp(want, stored) == 0)
		return 0;
	r = jobstore_begin(s->store);
	if (r == 0)
		r = jobstore_pool_name_set(s->store, want);
	if (r == 0)
		r = jobstore_commit(s->store);
	else
		jobstore_rollback(s->store);
	if (r < 0)
		return r;
	if (stored[0])
		log_warn("the pool's job ids are now ID.%s, were ID.%s ([server] name)", want, stored);
	else
		log_info("the pool's job ids are ID.%s", want);
	return 0;
}

static void takeover(struct server *s, int64_t now)
{
	const struct jobstore_lease *before = lease_last(s->lease);
	int64_t epoch = lease_epoch(s->lease);
	int r;

	r = s->state_load_f(s);
	if (r < 0) {
		/* As a start that cannot load: one line and exit (the lease
		 * is handed on); a retry here would fail the same way. */
		log_err("job store: cannot load jobs: %s", strerror(-r));
		s->stepping_down = true;
		(void)sd_event_exit(s->event, r);
		return;
	}
	/* A long load (a million jobs: ~1 s) must not eat the lease. */
	if (lease_loaded(s->lease, now) < 0) {
		server_step_down(s, "another server took the lease while the state loaded");
		return;
	}
	r = server_pool_name_settle(s);
	if (r == -ESTALE) {
		server_step_down(s, "another server took the lease while the pool's name was written");
		return;
	}
	if (r < 0)
		log_err("job store: cannot keep the pool's name %s: %s", s->pool_name, strerror(-r));
	if (before->holder[0] && strcmp(before->holder, lease_holder(s->lease)) != 0)
		log_info("active at epoch %lld, took over from %s (%s)", (long long)epoch, before->holder,
			 before->address);
	else
		log_info("active at epoch %lld", (long long)epoch);
	s->sched_dirty = true;
}

static int lease_handler(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct server *s = userdata;
	int64_t now = time_mono_ns();
	const char *why;

	switch (lease_tick(s->lease, now, &why)) {
	case LEASE_TAKEN:
		takeover(s, now);
		break;
	case LEASE_LOST:
		server_step_down(s, why);
		break;
	case LEASE_NOTHING:
		break;
	}
	if (s->stepping_down)
		return 0;
	sd_event_source_set_time(src, lease_next_at(s->lease, now, time_mono_ns()));
	sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
	return 0;
}

int server_lease_start(struct server *s, struct error *err)
{
	const struct config *c = s->config;
	char host[256], holder[JOBSTORE_HOLDER_MAX + 1], advertise[JOBSTORE_HOLDER_MAX + 1];
	const char *port = strrchr(c->listen, ':');
	int r;

	host_name(host, sizeof(host));
	/* Default id: no other live qpoold on this host holds this socket
	 * (listen_open refuses to start then), so a restart with it may take
	 * its own lease back at once. */
	if (c->server_id[0])
		snprintf(holder, sizeof(holder), "%s", c->server_id);
	else
		snprintf(holder, sizeof(holder), "%.64s:%.180s", host, c->socket);
	if (c->advertise[0])
		snprintf(advertise, sizeof(advertise), "%.256s", c->advertise);
	else if (port)
		snprintf(advertise, sizeof(advertise), "%.64s%.16s", host, port);
	else
		snprintf(advertise, sizeof(advertise), "%.180s", c->socket);
	r = lease_create(s->store, holder, advertise, (int64_t)c->lease_time * 1000, (int64_t)c->lease_renew * 1000,
			 &s->lease, err);
	if (r < 0)
		return r;
	/* At once: a lone server (or a restart of the holder) is active
	 * before its first client. */
	r = sd_event_add_time_relative(s->event, &s->lease_src, CLOCK_MONOTONIC, 0, 0, lease_handler, s);
	/* Before any request when both are due: a server back from a pause
	 * (SIGSTOP, a VM frozen) learns it lost the lease before it serves
	 * a read from its stale memory. Its writes are fenced either way. */
	if (r >= 0)
		r = sd_event_source_set_priority(s->lease_src, SD_EVENT_PRIORITY_IMPORTANT);
	if (r < 0)
		return error_set(err, r, "event loop: %s", strerror(-r));
	return 0;
}

void server_lease_stop(struct server *s)
{
	bool active = s->lease && lease_active(s->lease) && !jobstore_lease_lost(s->store);

	if (active)
		log_info("lease released at epoch %lld", (long long)lease_epoch(s->lease));
	lease_destroy(s->lease);
	s->lease = NULL;
	s->lease_src = sd_event_source_disable_unref(s->lease_src);
}
