/* SPDX-License-Identifier: MIT */
/* qpoold --migrate: the SQLite store of state_dir into the PostgreSQL
 * store the config names. */
#ifndef QPOOL_MIGRATE_H
#define QPOOL_MIGRATE_H

#include <stdint.h>

#include "config.h"
#include "error.h"

/* Copies state_dir/qpool.db (which must exist; qpoold must be stopped)
 * into store_dsn (config store = postgresql), which must be empty.
 * Returns 0 and the jobs copied, with ret_text (at least 160 bytes) the
 * line to print; -errno and err (one line) else, nothing written. */
int migrate_store(const struct config *c, int64_t *ret_jobs, char *ret_text, size_t size, struct error *err);

#endif
