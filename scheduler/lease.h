/* SPDX-License-Identifier: MIT */
/* Leadership of one qpoold over the job store's lease (docs/HA.md): a
 * standby until it takes the lease, then the active until it loses it.
 * Takes the store and the clock from its caller, nothing of the server:
 * the server's glue (server-lease.c) runs it on a timer. */
#ifndef QPOOL_LEASE_H
#define QPOOL_LEASE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "jobstore.h"

struct lease;

/* The server with id holder, reached at advertise, holding the lease for
 * lease_ms and renewing it every renew_ms, on store js (not owned).
 * -ENAMETOOLONG (err says which) or -ENOMEM. */
int lease_create(struct jobstore *js, const char *holder, const char *advertise, int64_t lease_ms,
		 int64_t renew_ms, struct lease **ret, struct error *err);
/* Hands the lease on at once if this server still holds it. */
void lease_destroy(struct lease *l);

enum lease_event {
	LEASE_NOTHING,          /* still what it was */
	LEASE_TAKEN,            /* a standby took the lease: load, then lease_loaded */
	LEASE_LOST,             /* the active lost it: step down */
};

/* One turn at now (CLOCK_MONOTONIC ns): a standby reads the lease and takes
 * it when it is free, run out, or its own; an active renews it, and has
 * lost it when another holds it or no renewal succeeded for lease_ms.
 * *ret_why says why on LEASE_LOST. */
enum lease_event lease_tick(struct lease *l, int64_t now, const char **ret_why);
/* When the next turn is due (CLOCK_MONOTONIC µs), for one that started
 * at START and ended at END (ns): renew_ms after its start when active,
 * 0.5 s else; but never sooner than a tenth of that after its end, so
 * requests that waited through a slow turn are served before the next
 * (docs/HA.md, "A slow store"). */
uint64_t lease_next_at(const struct lease *l, int64_t start, int64_t end);
/* After LEASE_TAKEN and the state's load: renews, so a long load does not
 * eat the lease. 0, or -ESTALE (lost meanwhile: step down). */
int lease_loaded(struct lease *l, int64_t now);

bool lease_active(const struct lease *l);
int64_t lease_epoch(const struct lease *l);
const char *lease_holder(const struct lease *l);
/* The lease as last read (by a standby's turn, or a refused write). */
const struct jobstore_lease *lease_last(const struct lease *l);
/* Reads the lease again after a write was refused (-ESTALE). */
void lease_refresh(struct lease *l);

/* The standby reply (docs/PROTOCOL.md "Active and standby") to req_id,
 * from qpoold on host; NULL when out of memory. */
json_t *lease_standby_reply(const struct lease *l, long long req_id, const char *host);
/* role, id, active, epoch and the standbys seen within a lease: the "ha"
 * object of the queues reply (qstat -B, qmgr list server). */
json_t *lease_ha_json(struct lease *l);

#endif
