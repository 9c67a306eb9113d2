/* SPDX-License-Identifier: MIT */
/* Job arrays (array.c). */
#ifndef QPOOL_ARRAY_H
#define QPOOL_ARRAY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobstore.h"
#include "pool.h"

struct conn;
struct hctx;
struct job;

/* array.c: job arrays (ID[], ID[N]). */
int array_load(struct hctx *s, struct job *j);
void array_loaded(struct hctx *s);
int array_dispatch_record(struct hctx *s, struct job *sub, int64_t now);
void array_dispatch_done(struct hctx *s, struct job *sub, int64_t now);
void array_dispatch_undo(struct hctx *s, struct job *sub);
/* Ends the array when nothing of it waits or runs: its own commit. */
void array_check_done(struct hctx *s, struct job *a);
/* delete/hold/release of ID[], ID[N], ID[A-B] or an array's plain id:
 * true when it was one (and has been answered). */
bool array_request(struct conn *c, const char *op, long long req_id, json_t *msg);
int array_subjob_row(struct hctx *s, int64_t id, int64_t index, json_t **ret);
/* qstat -t: to a page of rows (jobs, from the store for f, "more" in
 * *more), the arrays' subjobs that have no row yet, made from their
 * array's row with the ids they will have, so pages stay in id order. At
 * most page of them: a full page sets *more, and the client asks again
 * after the last id. 0 or -ENOMEM. */
int array_stat_subjobs(struct hctx *s, const struct jobstore_filter *f, size_t page, json_t *jobs, bool *more);
json_t *array_waiting_row(const json_t *array_row, const struct job *a, int64_t index);
/* The array's row as its subjob at pos (index) in state. */
json_t *array_row_as_subjob(const json_t *array_row, int64_t id, int64_t pos, int64_t index, enum job_state state);

#endif
