/* SPDX-License-Identifier: MIT */
/* Pool-wide counted resources (licenses): qpool.conf's [licenses] and a
 * job's request of them (Slurm -L matlab:2,comsol; PBS -l matlab=2). */
#ifndef QPOOL_LICENSE_H
#define QPOOL_LICENSE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define LICENSE_NAME_MAX 64        /* bytes of a name, NUL included */
#define LICENSES_MAX 32            /* licenses of a pool, and of one request */
#define LICENSE_COUNT_MAX 1000000000ULL
#define LICENSE_TEXT_MAX (LICENSES_MAX * (LICENSE_NAME_MAX + 12))

struct license {
	char name[LICENSE_NAME_MAX];
	uint64_t count;
};

/* Checks a license name: 1-63 bytes of letters, digits, '_', '-', '.',
 * starting with a letter or digit. 0 or -EINVAL with err. */
int license_name_check(const char *name, size_t len, struct error *err);

/* Parses a count: decimal digits, 0..LICENSE_COUNT_MAX. 0 or -EINVAL. */
int license_count_parse(const char *text, uint64_t *ret);

/* Parses a request in Slurm's form: "name[:count][,name[:count]...]"
 * (a name alone is one; a name twice adds up). "name@server" (Slurm's
 * remote licenses) and "a|b" are refused: qpool counts only its own.
 * Counts are 1..LICENSE_COUNT_MAX. Fills ret (max entries), *ret_n.
 * 0 or -EINVAL with err. */
int license_request_parse(const char *text, struct license *ret, size_t max, size_t *ret_n,
			  struct error *err);

/* Writes l[0..n) as "name:count,name:count" into buf; the length, or
 * -ENOSPC when it does not fit. */
int license_request_format(const struct license *l, size_t n, char *buf, size_t len);

#endif
