/* SPDX-License-Identifier: MIT */
/* Job ids as users type them: "12" or PBS-style "12.host". */
#ifndef QPOOL_JOBID_H
#define QPOOL_JOBID_H

#include <stdint.h>

/* Parses a positive decimal id, optionally followed by '.' and anything
 * (the host part is ignored). Returns 0 and *ret, -EINVAL when s is not a
 * job id, -ERANGE when the number does not fit 63 bits. */
int jobid_parse(const char *s, int64_t *ret);

#endif
