/* SPDX-License-Identifier: MIT */
/* IQS, the queue preprocessor: turns a queue's waiting jobs into a dispatch
 * order, round robin over users, with the reason for each place. Pure: no
 * I/O, no clock, no allocation beyond what the caller passes. */
#ifndef QPOOL_IQS_H
#define QPOOL_IQS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct iqs_job {
	int64_t id;          /* ascending id = submit order */
	uid_t uid;
	bool held;           /* held jobs get a place in no round */
	int priority;        /* qsub -p: a user's jobs go highest first, then by id */
};

/* What the rotation remembers about one user of the queue: the sequence
 * number of the last time one of their jobs was dispatched (0: never).
 * The caller keeps these per queue and persists them. */
struct iqs_user {
	uid_t uid;
	uint64_t last_served;
	unsigned running;    /* the user's running jobs in this queue */
};

struct iqs_limits {
	unsigned max_running;           /* 0: none */
	unsigned max_running_per_user;  /* 0: none */
	unsigned running;               /* the queue's running jobs now */
};

enum iqs_hold {
	IQS_GO,              /* may start, if it fits */
	IQS_HELD,            /* held by qhold or qsub -h */
	IQS_QUEUE_LIMIT,     /* max_running reached */
	IQS_USER_LIMIT,      /* the user has max_running_per_user running */
};

struct iqs_entry {
	const struct iqs_job *job;
	unsigned round;      /* 1-based round of the rotation, which is also the
	                      * job's place among its user's waiting jobs (0: held) */
	enum iqs_hold hold;
};

/* One user's turn in the rotation: the round-robin order of users is
 * ascending last_served (0: never served, first), ties to the smaller
 * oldest (the id of the user's oldest waiting job). data is the caller's. */
struct iqs_turn {
	uid_t uid;
	uint64_t last_served;
	int64_t oldest;
	void *data;
};

/* Sorts turns (n of them) into rotation order. A caller that keeps each
 * user's waiting jobs itself (oldest first) gets iqs_order's order of the
 * jobs that are not held by taking, round after round, the next job of
 * each turn in this order. */
void iqs_turns_sort(struct iqs_turn *turns, size_t n);

/* Orders jobs (n of them, in submit order) into ret (room for n): round 1
 * takes each user's first waiting job (highest priority, then oldest), users in rotation order (the one
 * served least recently first; never-served users first, ties broken by
 * whose oldest job is oldest); round 2 their second oldest, and so on.
 * Held jobs follow, in submit order. Limits do not change the order; they
 * mark entries IQS_QUEUE_LIMIT / IQS_USER_LIMIT, counting the jobs before
 * them as if they started (so the marks say what would happen now).
 * users (n_users of them) gives the rotation state of users it knows;
 * others count as never served, with nothing running.
 * Returns the number of entries written (= n). */
size_t iqs_order(const struct iqs_job *jobs, size_t n, const struct iqs_user *users, size_t n_users,
		 const struct iqs_limits *lim, struct iqs_entry *ret);

const char *iqs_hold_name(enum iqs_hold h);

#endif
