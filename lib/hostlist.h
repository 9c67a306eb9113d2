/* SPDX-License-Identifier: MIT */
/* Slurm's compressed host lists: "n[1-3,7],login" from n1 n2 n3 n7 login. */
#ifndef QPOOL_HOSTLIST_H
#define QPOOL_HOSTLIST_H

#include <stddef.h>
#include <stdint.h>

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

/* The counts per node of such a list, counts[0..n), with runs folded:
 * "2(x3),1", Slurm's SLURM_TASKS_PER_NODE and SLURM_JOB_CPUS_PER_NODE.
 * Returns what snprintf returns. */
int hostlist_counts_format(const uint64_t *counts, size_t n, char *buf, size_t len);

/* Expands a host list as scontrol show hostnames does: "n[1-3,7],login"
 * is n1 n2 n3 n7 login, in the list's order with duplicates kept; a
 * range keeps the width of its low bound ("n[08-10]": n08 n09 n10);
 * brackets in one name multiply ("r[1-2]n[1-2]": r1n1 r1n2 r2n1 r2n2);
 * commas and blanks outside brackets separate names. Returns the count,
 * with *ret_names for hostlist_free (NULL for none); -EINVAL for a
 * malformed list (an unclosed or nested bracket, a bound that is not a
 * number, a range that falls, a name of 256 bytes or more), -E2BIG for
 * more than max names, -ENOMEM. */
int hostlist_expand(const char *list, size_t max, char ***ret_names);

/* Frees the n names of hostlist_expand and their array; NULL is fine. */
void hostlist_free(char **names, size_t n);

#endif
