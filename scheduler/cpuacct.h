/* SPDX-License-Identifier: MIT */
/* qpoold's CPU by part (cpuacct.c; docs/PERFORMANCE.md): the loop's
 * iteration is charged whole to its owner, set by the handler sd-event
 * dispatched. Knows no connection: an owner is a pointer with its charge
 * and release (conn.c's for a client connection), or a part's name. */
#ifndef QPOOL_CPUACCT_H
#define QPOOL_CPUACCT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

/* This thread's CPU clock, ns. */
int64_t cpu_thread_ns(void);
/* The iteration's owner: ud, charged its CPU by charge at the
 * iteration's end, then release(ud) (release also when another takes
 * over). */
void cpu_owner(void *ud, void (*charge)(void *ud, int64_t ns), void (*release)(void *ud));
/* Whether ud owns the iteration. */
bool cpu_owner_is(const void *ud);
/* The iteration's owner is part (static text). */
void cpu_owner_part(const char *part);
/* ns to part (static text). */
void cpu_part_add(const char *part, int64_t ns);
/* ns timed inside another's iteration, to part, and not to its owner. */
void cpu_charge(const char *part, int64_t ns);
/* {part: ns} for the `stats` op. */
json_t *cpu_parts_json(void);
/* sd_event_loop, with qpoold's CPU charged by part. */
int cpu_event_loop(sd_event *e);

#endif
