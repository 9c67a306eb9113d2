/* SPDX-License-Identifier: MIT */
/* Per-uid bookkeeping of a daemon's local peers: open connections (fair shares)
 * and how many log lines each may cause (rate limit). */
#ifndef QPOOL_PEERS_H
#define QPOOL_PEERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Log lines about one uid: the first PEERS_LOG_BURST per
 * PEERS_LOG_INTERVAL_NS, then a count of the rest once the interval ends. */
#define PEERS_LOG_BURST 10
#define PEERS_LOG_INTERVAL_NS (60LL * 1000000000LL)

struct peers;

int peers_create(struct peers **ret);
void peers_destroy(struct peers *p);

/* A connection of uid is opened. Returns 0 and counts it, or -EUSERS (not
 * counted) when uid holds max already; max 0 means no cap. uid 0 is never
 * capped here: root has its own reserve (the caller's).
 * -ENOMEM when the table cannot grow. O(1) on average. */
int peers_conn_add(struct peers *p, uid_t uid, unsigned max);

/* A connection counted by peers_conn_add is closed. */
void peers_conn_del(struct peers *p, uid_t uid);

/* Open connections of uid. */
unsigned peers_conns(const struct peers *p, uid_t uid);

/* Adds delta (may be negative) to the bytes uid's connections hold in
 * input buffers; returns the new total. */
uint64_t peers_input_add(struct peers *p, uid_t uid, int64_t delta);

/* Whether a log line about uid (last seen as pid) may be written at now
 * (monotonic ns); a line refused is counted for peers_log_flush. */
bool peers_log_pass(struct peers *p, uid_t uid, pid_t pid, int64_t now);

typedef void (*peers_suppressed_f)(uid_t uid, pid_t pid, unsigned count, void *userdata);

/* Calls f once for each uid whose interval has ended with lines refused,
 * with their count and the last pid, and starts its next interval. */
void peers_log_flush(struct peers *p, int64_t now, peers_suppressed_f f, void *userdata);

#endif
