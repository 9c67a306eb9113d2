/* SPDX-License-Identifier: MIT */
/* Slurm's compressed host lists: "n[1-3,7],login" from n1 n2 n3 n7 login. */
#ifndef QPOOL_HOSTLIST_H
#define QPOOL_HOSTLIST_H

#include <stddef.h>

/* Writes the n host names as Slurm prints a node list: sorted (prefix,
 * then number), duplicates once, names sharing a prefix and a numeric
 * suffix of one padding in brackets with ranges ("n[01-03,07]"), a lone
 * numbered name as is ("n7"), groups comma-separated. Zero-padded and
 * unpadded numbers of one prefix are separate groups, as in Slurm.
 * Returns the length the whole list needs (without the NUL), as snprintf
 * does: a result >= len means buf holds a cut copy. -ENOMEM. */
int hostlist_compress(const char *const *names, size_t n, char *buf, size_t len);

/* The same, in the given order and with every name: only neighbours of
 * one prefix and padding share a bracket ("b7,n[1-2]" from b7 n1 n2).
 * For a job's SLURM_JOB_NODELIST, whose order SLURM_TASKS_PER_NODE and
 * SLURM_NODEID follow (the first node runs the script). */
int hostlist_compress_ordered(const char *const *names, size_t n, char *buf, size_t len);

#endif
