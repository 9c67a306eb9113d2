/* SPDX-License-Identifier: MIT */
/* Parsers for the strings people type: sizes, walltimes, CPU lists, booleans. */
#ifndef QPOOL_PARSE_H
#define QPOOL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Size with an optional binary suffix: "512", "64k", "8M", "150G", "1T",
 * "2gb", "4GiB", "1pb", and PBS's words "10w", "4kw" (8 bytes a word)
 * (case-insensitive; k=1024). Returns 0, or -EINVAL when s is
 * not a size, -ERANGE when it overflows 64 bits. */
int size_parse(const char *s, uint64_t *ret_bytes);

/* Formats bytes as the shortest exact "%lluK/M/G/T" (or plain bytes). */
void size_format(uint64_t bytes, char *buf, size_t len);

/* Walltime as "SS", "MM:SS", "HH:MM:SS" or "D:HH:MM:SS"; minutes and
 * seconds after the first field must be < 60. Returns 0, -EINVAL, -ERANGE. */
int duration_parse(const char *s, uint64_t *ret_seconds);

/* Formats seconds as "HH:MM:SS" (hours may exceed 99). */
void duration_format(uint64_t seconds, char *buf, size_t len);

/* PBS's -a [[[[CC]YY]MM]DD]hhmm[.SS] (qsub, qalter) in local time, as
 * jobspec_option checked its syntax: the next such moment after now when
 * only a time of day (or day) is given, as PBS reads it. 0, or -EINVAL. */
int pbs_datetime_parse(const char *s, time_t now, time_t *ret);

/* yes/no, true/false, on/off, 1/0 (case-insensitive). 0 or -EINVAL. */
int bool_parse(const char *s, bool *ret);

/* A set of CPU numbers, 0..CPUMASK_MAX-1. Plain value type. */
#define CPUMASK_MAX 1024
struct cpumask {
	uint64_t bits[CPUMASK_MAX / 64];
};

static inline void cpumask_set(struct cpumask *m, unsigned cpu)
{
	m->bits[cpu / 64] |= 1ULL << (cpu % 64);
}

static inline void cpumask_clear(struct cpumask *m, unsigned cpu)
{
	m->bits[cpu / 64] &= ~(1ULL << (cpu % 64));
}

static inline bool cpumask_test(const struct cpumask *m, unsigned cpu)
{
	return cpu < CPUMASK_MAX && (m->bits[cpu / 64] >> (cpu % 64)) & 1;
}

/* Number of CPUs in the set. */
unsigned cpumask_count(const struct cpumask *m);

/* Lowest CPU in the set at or after start, or -1. */
int cpumask_next(const struct cpumask *m, int start);

/* True when every CPU of sub is in m. */
bool cpumask_subset(const struct cpumask *sub, const struct cpumask *m);

/* Kernel list syntax "0-3,8,10-11" (empty string is the empty set).
 * Returns 0, -EINVAL on syntax, -ERANGE for a CPU >= CPUMASK_MAX. */
int cpumask_parse(const char *s, struct cpumask *ret);

/* Formats in kernel list syntax; "" for the empty set. Returns the length
 * that the full string needs (like snprintf). */
int cpumask_format(const struct cpumask *m, char *buf, size_t len);

/* True when s[0..len) is valid UTF-8 (no overlong forms, no surrogates,
 * nothing above U+10FFFF: what JSON strings accept). */
bool utf8_valid(const char *s, size_t len);

/* A signal by name ("USR1", "SIGUSR1", any case) or number, 1-30; -1
 * otherwise. */
int signal_parse(const char *s);

/* Notice before a job's end (Slurm's --signal, Moab's -l signal=):
 * "[B:]SIG[@SECONDS]". batch: to the batch shell alone, not to every
 * process of the job. */
struct end_notice {
	int sig;
	unsigned secs;      /* that long before the walltime */
	bool batch;
};

#define END_NOTICE_SECS_DEFAULT 60   /* Slurm's, when @SECONDS is not given */
#define END_NOTICE_SECS_MAX     65535

/* Parses s into ret. 0, or -EINVAL (a reservation's "R:", an unknown
 * signal, seconds out of 0..END_NOTICE_SECS_MAX). */
int end_notice_parse(const char *s, struct end_notice *ret);

#endif
