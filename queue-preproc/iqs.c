/* SPDX-License-Identifier: MIT */
/* Per-user round robin over a queue's waiting jobs. */
#include <stdlib.h>
#include <string.h>

#include "iqs.h"

/* One user's slice of the queue while ordering. */
struct slot {
	struct iqs_turn turn; /* uid, last_served, oldest waiting job's id */
	unsigned running;
	size_t first;         /* index of its first waiting job in by_user */
	size_t count;
};

const char *iqs_hold_name(enum iqs_hold h)
{
	static const char *names[] = { "go", "held", "queue limit", "user limit" };

	return (unsigned)h < 4 ? names[h] : "?";
}

static int turn_cmp(const struct iqs_turn *x, const struct iqs_turn *y)
{
	if (x->last_served != y->last_served)
		return x->last_served < y->last_served ? -1 : 1;
	return x->oldest < y->oldest ? -1 : x->oldest > y->oldest;
}

static int turn_qcmp(const void *a, const void *b)
{
	return turn_cmp(a, b);
}

void iqs_turns_sort(struct iqs_turn *turns, size_t n)
{
	qsort(turns, n, sizeof(*turns), turn_qcmp);
}

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return turn_cmp(&x->turn, &y->turn);
}

static int job_uid_cmp(const void *a, const void *b)
{
	const struct iqs_job *x = *(const struct iqs_job *const *)a;
	const struct iqs_job *y = *(const struct iqs_job *const *)b;

	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	/* qsub -p orders a user's own jobs; fairness between users stays. */
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static const struct iqs_user *user_find(const struct iqs_user *users, size_t n, uid_t uid)
{
	for (size_t i = 0; i < n; i++)
		if (users[i].uid == uid)
			return &users[i];
	return NULL;
}

size_t iqs_order(const struct iqs_job *jobs, size_t n, const struct iqs_user *users, size_t n_users,
		 const struct iqs_limits *lim, struct iqs_entry *ret)
{
	const struct iqs_job **by_user;
	struct slot *slots;
	size_t n_wait = 0, n_slots = 0, out = 0;
	unsigned queue_running = lim->running;

	by_user = malloc((n ? n : 1) * sizeof(*by_user));
	slots = malloc((n ? n : 1) * sizeof(*slots));
	if (!by_user || !slots) {
		/* No memory: submit order, which is still a valid order. */
		for (size_t i = 0; i < n; i++)
			ret[i] = (struct iqs_entry){ .job = &jobs[i], .round = 1,
						     .hold = jobs[i].held ? IQS_HELD : IQS_GO };
		free(by_user);
		free(slots);
		return n;
	}
	for (size_t i = 0; i < n; i++)
		if (!jobs[i].held)
			by_user[n_wait++] = &jobs[i];
	qsort(by_user, n_wait, sizeof(*by_user), job_uid_cmp);
	for (size_t i = 0; i < n_wait; i++) {
		if (i == 0 || by_user[i]->uid != by_user[i - 1]->uid) {
			const struct iqs_user *u = user_find(users, n_users, by_user[i]->uid);

			slots[n_slots++] = (struct slot){
				.turn = { .uid = by_user[i]->uid, .oldest = by_user[i]->id,
					  .last_served = u ? u->last_served : 0 },
				.first = i, .running = u ? u->running : 0,
			};
		}
		slots[n_slots - 1].count++;
	}
	qsort(slots, n_slots, sizeof(*slots), slot_cmp);

	for (unsigned round = 1; out < n_wait; round++) {
		for (size_t s = 0; s < n_slots; s++) {
			struct slot *sl = &slots[s];
			struct iqs_entry *e;

			if (round > sl->count)
				continue;
			e = &ret[out++];
			e->job = by_user[sl->first + round - 1];
			e->round = round;
			if (lim->max_running && queue_running >= lim->max_running) {
				e->hold = IQS_QUEUE_LIMIT;
			} else if (lim->max_running_per_user && sl->running >= lim->max_running_per_user) {
				e->hold = IQS_USER_LIMIT;
			} else {
				e->hold = IQS_GO;
				queue_running++;
				sl->running++;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		if (jobs[i].held)
			ret[out++] = (struct iqs_entry){ .job = &jobs[i], .hold = IQS_HELD };
	free(by_user);
	free(slots);
	return out;
}
