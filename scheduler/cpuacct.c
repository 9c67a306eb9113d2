/* SPDX-License-Identifier: MIT */
/* qpoold's CPU by who asked for it (docs/PERFORMANCE.md, "qpoold's CPU by
 * part"). The loop's thread CPU clock is read once per iteration (an
 * epoll_wait and the one source sd-event dispatches then), and the
 * iteration is charged whole to its owner: a client connection's
 * iterations (its accept, reads, requests, replies, close) to the name of
 * its first request (`stat` for `qstat ID`), the watchers' turns and
 * their timers to "watch". The post handler sd-event runs after
 * dispatches is nobody's: it does the group commit and the pass for
 * whatever came before, and a poller's dispatch may precede the commit
 * of a node's message. A watchers' turn run inside it (the flush after a
 * commit) is timed on its own and charged to "watch". What nobody owns
 * (node links, timers, passes, the post handler) is not charged. The `stats` op reports the
 * totals, so a figure such as "50 watchers against 50 qstat pollers" is
 * each side's own CPU, loop and kernel included, measured side by side,
 * not the difference of two noisy totals. Cost: a clock read per
 * iteration (~0.2 us). */
#include <string.h>
#include <time.h>

#include "cpuacct.h"

#define CPU_PARTS 96

static struct {
	const char *name;   /* static text: an op's name in the door's table */
	int64_t ns;
} parts[CPU_PARTS];

/* The iteration under way: its start, what was charged inside it, its
 * owner (a connection, held, or a part). */
static int64_t it_start, it_inner;
static void *own_ud;
static void (*own_charge)(void *ud, int64_t ns);
static void (*own_release)(void *ud);
static const char *own_part;

int64_t cpu_thread_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void cpu_part_add(const char *part, int64_t ns)
{
	unsigned i;

	for (i = 0; i < CPU_PARTS && parts[i].name; i++)
		if (parts[i].name == part || !strcmp(parts[i].name, part))
			break;
	if (i == CPU_PARTS)
		i = CPU_PARTS - 1;   /* never: the door has fewer ops; the last one takes the rest */
	if (!parts[i].name)
		parts[i].name = part;
	parts[i].ns += ns;
}

void cpu_charge(const char *part, int64_t ns)
{
	cpu_part_add(part, ns);
	it_inner += ns;
}

static void own_drop(void)
{
	if (own_release)
		own_release(own_ud);
	own_ud = NULL;
	own_charge = NULL;
	own_release = NULL;
	own_part = NULL;
}

bool cpu_owner_is(const void *ud)
{
	return ud && own_ud == ud;
}

void cpu_owner(void *ud, void (*charge)(void *ud, int64_t ns), void (*release)(void *ud))
{
	own_drop();
	own_ud = ud;
	own_charge = charge;
	own_release = release;
}

void cpu_owner_part(const char *part)
{
	own_drop();
	own_part = part;
}

/* One iteration ended: its CPU to its owner. */
static void iteration_end(void)
{
	int64_t now = cpu_thread_ns(), ns = now - it_start - it_inner;

	if (own_charge)
		own_charge(own_ud, ns);
	else if (own_part)
		cpu_part_add(own_part, ns);
	it_start = now;
	it_inner = 0;
	own_drop();
}

int cpu_event_loop(sd_event *e)
{
	int r, code = 0;

	it_start = cpu_thread_ns();
	for (;;) {
		r = sd_event_get_state(e);
		if (r < 0 || r == SD_EVENT_FINISHED)
			break;
		r = sd_event_run(e, UINT64_MAX);
		if (r < 0)
			break;
		iteration_end();
	}
	own_drop();
	if (r < 0)
		return r;
	(void)sd_event_get_exit_code(e, &code);
	return code;
}

json_t *cpu_parts_json(void)
{
	json_t *o = json_object();

	for (unsigned i = 0; o && i < CPU_PARTS && parts[i].name; i++)
		json_object_set_new(o, parts[i].name, json_integer(parts[i].ns));
	return o;
}
