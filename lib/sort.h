/* SPDX-License-Identifier: MIT */
/* qsort for arrays that may be empty. */
#ifndef QPOOL_SORT_H
#define QPOOL_SORT_H

#include <stddef.h>
#include <stdlib.h>

/* qsort(base, n, size, cmp), and nothing when n < 2: qsort's base must
 * point at an array even for n == 0 (C11 7.22.5), and an empty one here
 * is often NULL, which UBSan reports (glibc's qsort is declared
 * nonnull). Every sort in scheduler/ and lib/ goes through this. */
static inline void qp_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

#endif
