/* SPDX-License-Identifier: MIT */
/* A record set kept in the job store (accounts, QOS, reservations): the
 * shape accounts.c, qos.c and resv.c share, written once. A set is read
 * whole, table by table, each row to the kind's callback; after a change
 * is written the whole set is read back, put in the server's place and
 * applied to the pool (the sets are small and a change is an admin's
 * rare command, so nothing is patched in place). */
#ifndef QPOOL_RECSET_H
#define QPOOL_RECSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct conn;
struct jobstore;
struct jobstore_ev_params;
struct jobstore_row;
struct jobstore_sql;
struct pool;
struct hctx;

/* One table of a set: its SELECT and what takes each row (0, or a
 * negative errno that stops the read). */
typedef int (*recset_row_f)(const struct jobstore_row *r, void *set);
struct recset_table {
	const char *sql;
	recset_row_f row;
};

struct recset_kind {
	size_t size;                        /* the set's struct, calloc'd zeroed */
	const struct recset_table *tables;  /* read in this order */
	size_t n_tables;
	int (*loaded)(void *set);           /* after the rows (a default record); NULL: none */
	void (*free)(void *set);            /* NULL-safe */
	int (*apply)(void *set, struct pool *p);
	size_t slot;                        /* offsetof(struct hctx, the set's pointer) */
	const char *name;                   /* in the log: "accounts" */
	json_t *(*reply)(const void *set);  /* the op's answer after a change */
};

/* A fresh set of kind k from the store into *ret; 0 or -errno (nothing
 * made then). */
int recset_load(struct jobstore *js, const struct recset_kind *k, void **ret);
/* Reads the set back into the server's slot (the old one freed) and
 * applies it to the pool; the pass is made dirty. A failed read leaves
 * the old set in place. 0 or -errno (the read's, else the apply's). */
int recset_reload(struct hctx *s, const struct recset_kind *k);
/* Writes stmts with p (jobstore_sql_write), then recset_reload. */
int recset_write(struct hctx *s, const struct recset_kind *k, const struct jobstore_sql *stmts, size_t n,
		 const struct jobstore_ev_params *p);

/* An admin's change through the set's op: recset_write, then a reply to c
 * (the job store's error, or k->reply of the new set) and a log line
 * "NAME: WHAT by uid N". */
void recset_change(struct conn *c, long long req_id, const struct recset_kind *k, const struct jobstore_sql *stmts,
		   size_t n, const struct jobstore_ev_params *p, const char *what);

/* Whether s names a record: 1 to max - 1 letters, digits, '_', '-' and,
 * with dot, '.' (what Slurm's sacctmgr and scontrol take and a PBS
 * attribute value can hold: no blank, comma or quote). */
bool recset_name_ok(const char *s, size_t max, bool dot);
/* strdup of s, NULL for NULL. */
char *recset_dup(const char *s);
/* Appends one parameter to p (its next $N). */
void recset_param_text(struct jobstore_ev_params *p, const char *text);
void recset_param_int(struct jobstore_ev_params *p, int64_t i);

#endif
