/* SPDX-License-Identifier: MIT */
/* qpoold's one door (door.c) and the submit filter before it (filter.c). */
#ifndef QPOOL_DOOR_H
#define QPOOL_DOOR_H

#include <jansson.h>
#include <stdbool.h>

struct conn;
struct hctx;

/* door.c: a request of an authenticated peer, to its handler (ops.h) by
 * one table of who may ask what; door_table_sorted for the unit test. */
void door_request(struct conn *c, const char *op, long long req_id, json_t *msg);
bool door_table_sorted(void);
/* door.c: request_run is the door past the submit filter (its checks
 * done): the op's handler. filter.c: whether op goes through [server]
 * submit_filter first, and running it: the request goes on to
 * request_run, or is answered with the filter's refusal (qpool-hooks(5)). */
void request_run(struct conn *c, const char *op, long long req_id, json_t *msg);
bool filter_wanted(const struct hctx *s, const char *op);
void filter_request(struct conn *c, const char *op, long long req_id, json_t *msg);

#endif
