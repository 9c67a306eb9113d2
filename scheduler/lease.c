/* SPDX-License-Identifier: MIT */
/* Leadership over the job store's lease: the standby's poll and takeover,
 * the active's renewals, the standby reply (docs/HA.md). The fence itself
 * is the store's (jobstore_begin); this only decides when to act. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease.h"
#include "timeutil.h"

/* A standby polls the lease this often: with lease_time 3 s a takeover
 * comes at most 3.5 s after the active's last renewal. */
#define LEASE_POLL_USEC (500 * 1000)
/* A server stamps its row in the servers table at most this often. */
#define SEEN_EVERY_NS NSEC_PER_SEC

struct lease {
	struct jobstore *store;
	char holder[JOBSTORE_HOLDER_MAX];
	char advertise[JOBSTORE_HOLDER_MAX];
	int64_t lease_ms, renew_ms;
	bool active;
	int64_t epoch;
	int64_t renewed;             /* mono ns of the last renewal that held */
	int64_t seen;                /* mono ns of the last servers stamp; 0: never */
	struct jobstore_lease last;
	char why[160];
	json_t *standbys;            /* while lease_ha_json collects */
};

int lease_create(struct jobstore *js, const char *holder, const char *advertise, int64_t lease_ms,
		 int64_t renew_ms, struct lease **ret, struct error *err)
{
	struct lease *l;

	if (!holder[0] || strlen(holder) >= JOBSTORE_HOLDER_MAX)
		return error_set(err, -ENAMETOOLONG, "server_id: empty or longer than %d characters",
				 JOBSTORE_HOLDER_MAX - 1);
	if (strlen(advertise) >= JOBSTORE_HOLDER_MAX)
		return error_set(err, -ENAMETOOLONG, "advertise: longer than %d characters",
				 JOBSTORE_HOLDER_MAX - 1);
	l = calloc(1, sizeof(*l));
	if (!l)
		return error_set(err, -ENOMEM, "out of memory");
	l->store = js;
	strcpy(l->holder, holder);
	strcpy(l->advertise, advertise);
	l->lease_ms = lease_ms;
	l->renew_ms = renew_ms;
	*ret = l;
	return 0;
}

void lease_destroy(struct lease *l)
{
	if (!l)
		return;
	if (l->active && !jobstore_lease_lost(l->store))
		(void)jobstore_lease_release(l->store);
	json_decref(l->standbys);
	free(l);
}

static bool seen_due(const struct lease *l, int64_t now)
{
	return !l->seen || now - l->seen >= SEEN_EVERY_NS;
}

/* A standby's stamp; the active's goes with its renewal (lease_tick). */
static void seen_stamp(struct lease *l, int64_t now)
{
	if (!seen_due(l, now))
		return;
	l->seen = now;
	/* Only what qstat -B lists: a failure costs a line there, nothing else. */
	(void)jobstore_standby_seen(l->store, l->holder, l->advertise);
}

static enum lease_event lost(struct lease *l, const char **ret_why)
{
	l->active = false;
	*ret_why = l->why;
	return LEASE_LOST;
}

enum lease_event lease_tick(struct lease *l, int64_t now, const char **ret_why)
{
	int64_t epoch;
	int r;

	*ret_why = NULL;
	if (l->active) {
		/* The stamp, when due, in the renewal's transaction: an idle
		 * active writes once a tick and syncs nothing (docs/HA.md). */
		if (seen_due(l, now)) {
			l->seen = now;
			r = jobstore_lease_renew_seen(l->store, l->advertise);
		} else {
			r = jobstore_lease_renew(l->store);
		}
		if (r == 0) {
			l->renewed = now;
			return LEASE_NOTHING;
		}
		if (r == -ESTALE) {
			snprintf(l->why, sizeof(l->why), "another server took the lease");
			return lost(l, ret_why);
		}
		/* A full store refuses every writer: no other server can take
		 * the lease while it lasts, and the fence still guards every
		 * write of ours, so the server stays active and serves what
		 * needs no write (t-faults: queued jobs stay queued and run
		 * when space returns). Once space is back, whoever writes
		 * first wins, and a loser learns it by -ESTALE. */
		if (r == -ENOSPC)
			return LEASE_NOTHING;
		/* Past its end another server may hold it: stop before the
		 * fence says so. */
		if (now - l->renewed < l->lease_ms * NSEC_PER_MSEC)
			return LEASE_NOTHING;
		snprintf(l->why, sizeof(l->why), "the lease could not be renewed within lease_time (%s)",
			 strerror(-r));
		return lost(l, ret_why);
	}
	if (jobstore_lease_read(l->store, &l->last) < 0)
		return LEASE_NOTHING;
	if (l->last.holder[0] && strcmp(l->last.holder, l->holder) != 0 && l->last.expires > l->last.now) {
		seen_stamp(l, now);
		return LEASE_NOTHING;
	}
	if (jobstore_lease_acquire(l->store, l->holder, l->advertise, l->lease_ms, &epoch) < 0)
		return LEASE_NOTHING;
	l->active = true;
	l->epoch = epoch;
	l->renewed = now;
	return LEASE_TAKEN;
}

int lease_loaded(struct lease *l, int64_t now)
{
	/* With the stamp whether due or not: the row says "active" from now. */
	int r = jobstore_lease_renew_seen(l->store, l->advertise);

	l->seen = now;
	if (r == -ESTALE) {
		l->active = false;
		return r;
	}
	if (r == 0)
		l->renewed = now;
	return 0;
}

/* EVERY after the start keeps the lease's statements EVERY apart however
 * long a commit takes. A turn a slow store held past EVERY (seconds, on
 * a disk throttled or failing) would then be due the moment it ended,
 * and at its source's priority the turns would go before every request
 * for as long as the store stayed slow: none was answered
 * (t-lease-slow-disk). */
uint64_t lease_next_at(const struct lease *l, int64_t start, int64_t end)
{
	uint64_t every = l->active ? (uint64_t)l->renew_ms * 1000 : LEASE_POLL_USEC;
	uint64_t at = (uint64_t)start / 1000 + every, least = (uint64_t)end / 1000 + every / 10;

	return at > least ? at : least;
}

bool lease_active(const struct lease *l)
{
	return l->active;
}

int64_t lease_epoch(const struct lease *l)
{
	return l->epoch;
}

const char *lease_holder(const struct lease *l)
{
	return l->holder;
}

const struct jobstore_lease *lease_last(const struct lease *l)
{
	return &l->last;
}

void lease_refresh(struct lease *l)
{
	(void)jobstore_lease_read(l->store, &l->last);
}

json_t *lease_standby_reply(const struct lease *l, long long req_id, const char *host)
{
	const struct jobstore_lease *x = &l->last;
	bool has_active = x->holder[0] && x->address[0] && x->expires > x->now;
	char text[640];
	json_t *msg;

	if (has_active)
		snprintf(text, sizeof(text), "qpoold on %s is a standby; the active is %s (epoch %lld)", host,
			 x->address, (long long)x->epoch);
	else
		snprintf(text, sizeof(text), "qpoold on %s is a standby; no server is active", host);
	msg = json_pack("{s:I, s:b, s:i, s:s, s:b}", "id", (json_int_t)req_id, "ok", 0, "errno", EAGAIN,
			"error", text, "standby", 1);
	if (msg && has_active && json_object_set_new(msg, "active", json_string(x->address)) < 0) {
		json_decref(msg);
		return NULL;
	}
	return msg;
}

static int standbys_add(const char *id, const char *address, const char *role, int64_t age_ms, void *ud)
{
	struct lease *l = ud;

	/* Seen within a lease: alive as far as anyone can tell. */
	if (strcmp(role, "standby") == 0 && age_ms <= l->lease_ms && strcmp(id, l->holder) != 0)
		json_array_append_new(l->standbys, json_pack("{s:s, s:s, s:I}", "id", id, "address", address,
							     "seen_ms", (json_int_t)age_ms));
	return 0;
}

json_t *lease_ha_json(struct lease *l)
{
	json_t *o;

	l->standbys = json_array();
	if (!l->standbys)
		return NULL;
	(void)jobstore_servers_load(l->store, standbys_add, l);
	o = json_pack("{s:s, s:s, s:s, s:I, s:o}", "role", l->active ? "active" : "standby", "id", l->holder,
		      "active", l->active ? l->advertise : l->last.address,
		      "epoch", (json_int_t)(l->active ? l->epoch : l->last.epoch), "standbys", l->standbys);
	l->standbys = NULL;
	return o;
}
