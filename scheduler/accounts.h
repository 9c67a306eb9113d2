/* SPDX-License-Identifier: MIT */
/* Accounts (projects) and their users (docs/ACCOUNTS.md): kept in the job
 * store (schema 13, the same SQL on both backends), a copy in memory that
 * submit checks, and the op that lists and changes them (qmgr, sacctmgr). */
#ifndef QPOOL_ACCOUNTS_H
#define QPOOL_ACCOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct jobstore;
struct accounts;
struct pool;

#define ACCOUNT_NAME_MAX 64
/* Slurm's words for a job whose account the user may not use. */
#define ACCOUNT_REFUSED "Invalid account or account/partition combination specified"

/* What the store holds into *ret (an empty set when none); 0 or -errno. */
int accounts_load(struct jobstore *js, struct accounts **ret);
void accounts_free(struct accounts *a);
/* Whether the pool defines any account: none, and nothing is checked. */
bool accounts_defined(const struct accounts *a);
/* A job of user (root: is_root) asking for account asked (NULL: none):
 * 0 with *ret_account the account it runs under (asked, or the user's
 * default; NULL: none, when the pool defines none or root asks none), or
 * -EPERM with why (ACCOUNT_REFUSED, Slurm's words exactly: scripts match
 * them; the detail goes to the log). */
int accounts_submit_check(const struct accounts *a, const char *user, bool is_root, const char *asked,
			  const char **ret_account, char *why, size_t len);
/* The accounts into the pool (at activation, after each change): each
 * account's limits (docs/LIMITS.md), and each user's share, a fraction of
 * the pool (docs/FAIRSHARE.md): its default account's share among its
 * siblings, times its parent's, down from the top, split evenly among the
 * account's users. */
void accounts_apply(const struct accounts *a, struct pool *p);
/* Whether account name exists. */
bool accounts_has(const struct accounts *a, const char *name);
/* The default account of user, or NULL. */
const char *accounts_user_default(const struct accounts *a, const char *user);
/* The accounts and their users, name order, as the op replies them. */
json_t *accounts_json(const struct accounts *a);

#endif
