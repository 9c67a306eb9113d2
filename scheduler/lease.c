/* SPDX-License-Identifier: MIT */
/* Leadership: a qpoold is a standby until it takes the store's lease, then
 * the active until it loses it (docs/HA.md). A standby answers every request
 * with the standby reply; the active renews, and steps down at once when
 * the fence in jobstore_begin or a renewal finds the lease taken. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "server-internal.h"
#include "timeutil.h"

/* A standby polls the lease this often: with lease_time 3 s a takeover
 * comes at most 3.5 s after the active's last renewal. */
#define LEASE_POLL_USEC (500 * 1000)
/* A standby stamps its row in the servers table at most this often. */
#define SEEN_EVERY_NS NSEC_PER_SEC

static const char *host_name(char *buf, size_t size)
{
	if (gethostname(buf, size) < 0)
		snprintf(buf, size, "localhost");
	buf[size - 1] = '\0';
	return buf;
}

bool server_standby(const struct server *s)
{
	return !s->ha.active;
}

/* The standby reply of docs/PROTOCOL.md ("Active and standby"). */
void server_standby_reply(struct conn *c, long long req_id)
{
	const struct jobstore_lease *l = &c->server->ha.last;
	bool has_active = l->holder[0] && l->expires > l->now && l->address[0];
	char host[256], text[640];
	json_t *msg;

	host_name(host, sizeof(host));
	if (has_active)
		snprintf(text, sizeof(text), "qpoold on %s is a standby; the active is %s (epoch %lld)", host,
			 l->address, (long long)l->epoch);
	else
		snprintf(text, sizeof(text), "qpoold on %s is a standby; no server is active", host);
	msg = json_pack("{s:I, s:b, s:i, s:s, s:b}", "id", (json_int_t)req_id, "ok", 0, "errno", EAGAIN,
			"error", text, "standby", 1);
	if (msg && has_active)
		json_object_set_new(msg, "active", json_string(l->address));
	conn_send(c, msg);
}

static int standbys_add(const char *id, const char *address, const char *role, int64_t age_ms, void *ud)
{
	struct server *s = ud;
	json_t *arr = s->ha.standbys;

	/* Seen within a lease: alive as far as anyone can tell. */
	if (strcmp(role, "standby") == 0 && age_ms <= (int64_t)s->config->lease_time * 1000 &&
	    strcmp(id, s->ha.holder) != 0)
		json_array_append_new(arr, json_pack("{s:s, s:s, s:I}", "id", id, "address", address,
						     "seen_ms", (json_int_t)age_ms));
	return 0;
}

json_t *server_ha_json(struct server *s)
{
	json_t *o;

	s->ha.standbys = json_array();
	if (!s->ha.standbys)
		return NULL;
	(void)jobstore_servers_load(s->store, standbys_add, s);
	o = json_pack("{s:s, s:s, s:s, s:I, s:o}", "role", s->ha.active ? "active" : "standby",
		      "id", s->ha.holder, "active", s->ha.active ? s->ha.advertise : s->ha.last.address,
		      "epoch", (json_int_t)(s->ha.active ? s->ha.epoch : s->ha.last.epoch),
		      "standbys", s->ha.standbys);
	s->ha.standbys = NULL;
	return o;
}

static void seen_stamp(struct server *s, int64_t now)
{
	int r;

	if (now - s->ha.seen_mono < SEEN_EVERY_NS)
		return;
	s->ha.seen_mono = now;
	r = jobstore_server_seen(s->store, s->ha.holder, s->ha.advertise, s->ha.active ? "active" : "standby");
	if (r < 0)
		log_debug("job store: cannot stamp this server's row: %s", strerror(-r));
}

void server_step_down(struct server *s, const char *why)
{
	if (!s->ha.active || s->ha.stepping_down)
		return;
	s->ha.stepping_down = true;
	log_err("stepping down to standby at epoch %lld: %s; nothing more is written by this server",
		(long long)s->ha.epoch, why);
	/* main drops every piece of in-memory state with the server and
	 * starts a fresh one, a standby. */
	(void)sd_event_exit(s->event, SERVER_EXIT_STEPPED_DOWN);
}

static void takeover(struct server *s, int64_t epoch)
{
	struct jobstore_lease before = s->ha.last;
	int r;

	s->ha.active = true;
	s->ha.epoch = epoch;
	r = server_state_load(s);
	/* A long load (a million jobs: ~1 s) must not eat the lease a
	 * standby would then take before this server's first renewal. */
	if (r == 0)
		r = jobstore_lease_renew(s->store);
	s->ha.renewed_mono = time_mono_ns();
	if (r == -ESTALE) {
		server_step_down(s, "another server took the lease while the state loaded");
		return;
	}
	if (r < 0) {
		log_err("job store: cannot load jobs after taking the lease: %s", strerror(-r));
		(void)jobstore_lease_release(s->store);
		server_step_down(s, "the state could not be loaded");
		return;
	}
	if (before.holder[0] && strcmp(before.holder, s->ha.holder) != 0)
		log_info("active at epoch %lld, took over from %s (%s)", (long long)epoch, before.holder,
			   before.address);
	else
		log_info("active at epoch %lld", (long long)epoch);
	s->sched_dirty = true;
	(void)jobstore_lease_read(s->store, &s->ha.last);
}

static void lease_poll(struct server *s, int64_t now)
{
	int64_t epoch;
	int r;

	r = jobstore_lease_read(s->store, &s->ha.last);
	if (r < 0) {
		log_debug("job store: cannot read the lease: %s", strerror(-r));
		return;
	}
	if (s->ha.last.holder[0] && strcmp(s->ha.last.holder, s->ha.holder) != 0 &&
	    s->ha.last.expires > s->ha.last.now) {
		seen_stamp(s, now);
		return;
	}
	r = jobstore_lease_acquire(s->store, s->ha.holder, s->ha.advertise,
				   (int64_t)s->config->lease_time * 1000, &epoch);
	if (r == 0)
		takeover(s, epoch);
	else if (r != -EBUSY)
		log_debug("job store: cannot take the lease: %s", strerror(-r));
}

static void lease_keep(struct server *s, int64_t now)
{
	int r = jobstore_lease_renew(s->store);

	if (r == 0) {
		s->ha.renewed_mono = now;
		seen_stamp(s, now);
		return;
	}
	if (r == -ESTALE) {
		server_step_down(s, "another server took the lease");
		return;
	}
	log_warn("job store: cannot renew the lease: %s", strerror(-r));
	/* Past its end another server may hold it: stop before the fence says so. */
	if (now - s->ha.renewed_mono >= (int64_t)s->config->lease_time * NSEC_PER_SEC)
		server_step_down(s, "the lease could not be renewed within lease_time");
}

static int lease_handler(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct server *s = userdata;
	int64_t now = time_mono_ns();

	if (s->ha.active)
		lease_keep(s, now);
	else
		lease_poll(s, now);
	if (s->ha.stepping_down)
		return 0;
	sd_event_source_set_time_relative(src, s->ha.active ? s->config->lease_renew * 1000000ULL : LEASE_POLL_USEC);
	sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
	return 0;
}

int server_lease_start(struct server *s, struct error *err)
{
	const struct config *c = s->config;
	char host[256];
	const char *port;
	int n, r;

	host_name(host, sizeof(host));
	if (c->server_id[0])
		n = snprintf(s->ha.holder, sizeof(s->ha.holder), "%s", c->server_id);
	else
		n = snprintf(s->ha.holder, sizeof(s->ha.holder), "%.*s:%.*s", 64, host, 180, c->socket);
	if (n < 0 || (size_t)n >= sizeof(s->ha.holder))
		return error_set(err, -ENAMETOOLONG, "server_id: longer than %zu characters",
				 sizeof(s->ha.holder) - 1);
	port = strrchr(c->listen, ':');
	if (c->advertise[0])
		n = snprintf(s->ha.advertise, sizeof(s->ha.advertise), "%.*s", 255, c->advertise);
	else if (port)
		n = snprintf(s->ha.advertise, sizeof(s->ha.advertise), "%.*s%.*s", 64, host, 16, port);
	else
		n = snprintf(s->ha.advertise, sizeof(s->ha.advertise), "%.*s", 255, c->socket);
	if (n < 0 || (size_t)n >= sizeof(s->ha.advertise) - 1)
		return error_set(err, -ENAMETOOLONG, "advertise: longer than %zu characters",
				 sizeof(s->ha.advertise) - 2);
	/* At once: a lone server (or a restart of the holder) is active
	 * before its first client. */
	r = sd_event_add_time_relative(s->event, &s->ha.src, CLOCK_MONOTONIC, 0, 0, lease_handler, s);
	/* Before any request when both are due: a server back from a pause
	 * (SIGSTOP, a VM frozen) learns it lost the lease before it serves
	 * a read from its stale memory. Its writes are fenced either way. */
	if (r >= 0)
		r = sd_event_source_set_priority(s->ha.src, SD_EVENT_PRIORITY_IMPORTANT);
	if (r < 0)
		return error_set(err, r, "event loop: %s", strerror(-r));
	return 0;
}

void server_lease_stop(struct server *s)
{
	int r;

	if (s->ha.active && !jobstore_lease_lost(s->store)) {
		r = jobstore_lease_release(s->store);
		if (r == 0)
			log_info("lease released at epoch %lld", (long long)s->ha.epoch);
	}
	s->ha.src = sd_event_source_disable_unref(s->ha.src);
}
