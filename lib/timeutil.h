/* SPDX-License-Identifier: MIT */
/* Clocks: wall time for stamps that cross hosts, monotonic for durations. */
#ifndef QPOOL_TIMEUTIL_H
#define QPOOL_TIMEUTIL_H

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC  1000000000LL
#define NSEC_PER_MSEC 1000000LL

static inline int64_t time_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Wall clock (CLOCK_REALTIME) in ns since the epoch. */
static inline int64_t time_wall_ns(void)
{
	return time_now_ns(CLOCK_REALTIME);
}

/* Monotonic clock in ns, for durations measured on one host. */
static inline int64_t time_mono_ns(void)
{
	return time_now_ns(CLOCK_MONOTONIC);
}

#endif
