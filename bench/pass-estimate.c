/* SPDX-License-Identifier: MIT */
/* bench/pass-estimate: start estimates (docs/ESTIMATES.md), in process.
 *   pass-estimate pass NODES JOBS DEPTH
 *     NODES simulated nodes (bench/sim's topology), JOBS queued jobs of
 *     1 CPU, every tenth of 4 (10 users): passes fill the pool, then one
 *     pass over the full pool (one-node reservations in play), then one
 *     replay of DEPTH waiting jobs (estimate_depth) beside it.
 *   pass-estimate error NODES JOBS SEED FRACTION [BACKFILL_DEPTH]
 *     a simulated run (the queue's backfill_depth, default 1): JOBS jobs of 1-8 CPUs and walltimes of 1-60
 *     minutes, all submitted at once, on NODES nodes; each runs a random
 *     FRACTION..1 of its walltime (1: all of it). After every pass a
 *     replay of every waiting job; each job's first estimate and the one
 *     current at its start are compared with its start.
 * Prints one JSON line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "estimate.h"
#include "placement.h"
#include "pool.h"

#define BATCH 512

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int pool_make(long nodes, struct pool **ret)
{
	const char *topo_text = "pack:2 numa:2 core:16 pu:2";
	struct error err;
	struct pool *p;

	if (pool_create(&p) < 0)
		return -1;
	for (long i = 0; i < nodes; i++) {
		char name[32];
		struct node *nd;

		snprintf(name, sizeof(name), "sim%ld", i);
		nd = pool_node_get(p, name);
		if (!nd || pool_topology_get(p, topo_text, strlen(topo_text), &nd->topo, &err) < 0)
			return -1;
		placement_topology_cpus(nd->topo, &nd->cpus);
		nd->free = nd->cpus;
		nd->rt_free = nd->cpus;
		nd->state = NODE_UP;
		nd->link = nd;
	}
	*ret = p;
	return 0;
}

static void conf_make(struct config *c, struct queue_conf *q, uint64_t depth)
{
	memset(c, 0, sizeof(*c));
	memset(q, 0, sizeof(*q));
	snprintf(q->name, sizeof(q->name), "batch");
	q->is_default = q->started = true;
	c->queues = q;
	c->n_queues = 1;
	c->estimate_depth = depth;
}

static int job_add(struct pool *p, long id, unsigned ncpus, uint64_t walltime, uid_t uid)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j)
		return -1;
	j->id = id;
	snprintf(j->queue, sizeof(j->queue), "batch");
	j->uid = uid;
	j->state = JOB_QUEUED;
	j->walltime = walltime;
	j->ncpus = ncpus;
	return pool_job_add(p, j);
}

static int bench_pass(long nodes, long jobs, long depth)
{
	static struct dispatch d[BATCH];
	struct pool_estimate_stats st;
	struct config c;
	struct queue_conf q;
	struct pool *p;
	double t, max = 0, full, est_ms, est2_ms;
	long passes = 0, placed = 0;
	size_t n;

	conf_make(&c, &q, (uint64_t)depth);
	if (pool_make(nodes, &p) < 0)
		return 1;
	pool_clock_set(p, 1000000);
	for (long id = 1; id <= jobs; id++)
		if (job_add(p, id, id % 10 == 0 ? 4 : 1, 3600 - (uint64_t)(id % 7) * 300, (uid_t)(1000 + id % 10)) < 0)
			return 1;
	do {
		t = now_ms();
		n = pool_schedule(p, &c, d, BATCH);
		t = now_ms() - t;
		placed += (long)n;
		passes++;
		if (t > max)
			max = t;
	} while (n == BATCH);
	/* A little later: a hundredth of the running jobs ended, the pass
	 * fills what they leave (reservations made for the blocked). */
	pool_clock_set(p, 1000600);
	{
		long k = 0;

		for (struct job *j = pool_jobs(p), *next; j; j = next) {
			next = j->next;
			if (j->state == JOB_RUNNING && k++ % 100 == 0)
				pool_job_remove(p, j);
		}
	}
	t = now_ms();
	n = pool_schedule(p, &c, d, BATCH);
	full = now_ms() - t;
	t = now_ms();
	if (pool_estimate(p, &c, 1000600, 1, &st) < 0)
		return 1;
	est_ms = now_ms() - t;
	free(st.fresh);
	/* A second replay over the same pool: the cost each interval. */
	t = now_ms();
	if (pool_estimate(p, &c, 1000600, 2, &st) < 0)
		return 1;
	est2_ms = now_ms() - t;
	free(st.fresh);
	printf("{\"nodes\": %ld, \"jobs\": %ld, \"passes\": %ld, \"pass_ms_max\": %.3f, \"placed\": %ld, "
	       "\"steady_pass_ms\": %.3f, \"steady_placed\": %zu, \"depth\": %ld, \"estimate_ms\": %.3f, "
	       "\"estimate_again_ms\": %.3f, \"estimated\": %zu, \"never\": %zu, \"us_per_job\": %.3f}\n",
	       nodes, jobs, passes, max, placed, full, n, depth, est_ms, est2_ms, st.estimated, st.none,
	       st.visited ? est_ms * 1000.0 / (double)st.visited : 0);
	pool_destroy(p);
	return 0;
}

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int64_t quantile(int64_t *v, size_t n, double f)
{
	if (!n)
		return -1;
	qsort(v, n, sizeof(*v), i64_cmp);
	return v[(size_t)(f * (double)(n - 1) + 0.5)];
}

struct rec {
	int64_t first, at_start, start, end;
	bool started;
};

static int bench_error(long nodes, long jobs, unsigned seed, double fraction, long bdepth)
{
	static struct dispatch d[BATCH];
	struct pool_estimate_stats st;
	struct rec *r = calloc((size_t)jobs + 1, sizeof(*r));
	int64_t *ef = calloc((size_t)jobs + 1, sizeof(*ef)), *es = calloc((size_t)jobs + 1, sizeof(*es));
	struct job **running = calloc((size_t)jobs + 1, sizeof(*running));
	size_t n_run = 0, n_ef = 0, n_es = 0, late = 0, started = 0;
	int64_t now = 1000000;
	uint64_t replay = 0;
	double est_ms = 0, est_max = 0;
	long replays = 0;
	struct config c;
	struct queue_conf q;
	struct pool *p;

	if (!r || !ef || !es || !running)
		return 1;
	conf_make(&c, &q, (uint64_t)jobs);
	q.backfill_depth = (uint64_t)bdepth;
	if (pool_make(nodes, &p) < 0)
		return 1;
	srand(seed);
	for (long id = 1; id <= jobs; id++)
		if (job_add(p, id, 1 + (unsigned)(rand() % 8), 60 * (1 + (uint64_t)(rand() % 60)),
			    (uid_t)(1000 + rand() % 20)) < 0)
			return 1;
	while (started < (size_t)jobs || n_run) {
		size_t n;
		int64_t next = INT64_MAX;
		double t;

		pool_clock_set(p, now);
		do {
			n = pool_schedule(p, &c, d, BATCH);
			for (size_t i = 0; i < n; i++) {
				struct job *j = d[i].job;
				double f = fraction + (1.0 - fraction) * ((double)rand() / RAND_MAX);
				struct rec *x = &r[j->id];

				x->started = true;
				x->start = now;
				x->first = j->est_first;
				x->at_start = j->est_seen == replay ? j->est_start : 0;
				x->end = now + (int64_t)((double)j->walltime * f + 0.5);
				if (x->end <= now)
					x->end = now + 1;
				running[n_run++] = j;
				started++;
			}
		} while (n == BATCH);
		t = now_ms();
		if (pool_estimate(p, &c, now, ++replay, &st) < 0)
			return 1;
		t = now_ms() - t;
		free(st.fresh);
		est_ms += t;
		est_max = t > est_max ? t : est_max;
		replays++;
		for (size_t i = 0; i < n_run; i++)
			if (r[running[i]->id].end < next)
				next = r[running[i]->id].end;
		if (next == INT64_MAX)
			break;   /* nothing runs and nothing starts: never fits */
		now = next;
		for (size_t i = 0; i < n_run;) {
			if (r[running[i]->id].end <= now) {
				pool_job_remove(p, running[i]);
				running[i] = running[--n_run];
			} else {
				i++;
			}
		}
	}
	for (long id = 1; id <= jobs; id++) {
		struct rec *x = &r[id];

		if (!x->started)
			continue;
		if (x->first)
			ef[n_ef++] = llabs(x->start - x->first);
		if (x->at_start) {
			es[n_es++] = llabs(x->start - x->at_start);
			late += x->start > x->at_start;
		}
	}
	printf("{\"nodes\": %ld, \"jobs\": %ld, \"backfill_depth\": %ld, \"runtime_fraction_min\": %.2f, \"started\": %zu, "
	       "\"with_first\": %zu, \"first_error_median_s\": %lld, \"first_error_p90_s\": %lld, "
	       "\"with_at_start\": %zu, \"at_start_error_median_s\": %lld, \"at_start_error_p90_s\": %lld, "
	       "\"started_after_estimate\": %zu, \"replays\": %ld, \"replay_ms_mean\": %.3f, \"replay_ms_max\": %.3f}\n",
	       nodes, jobs, bdepth, fraction, started, n_ef, (long long)quantile(ef, n_ef, 0.5),
	       (long long)quantile(ef, n_ef, 0.9), n_es, (long long)quantile(es, n_es, 0.5),
	       (long long)quantile(es, n_es, 0.9), late, replays, replays ? est_ms / (double)replays : 0, est_max);
	pool_destroy(p);
	free(r);
	free(ef);
	free(es);
	free(running);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "pass") == 0)
		return bench_pass(atol(argv[2]), atol(argv[3]), atol(argv[4]));
	if ((argc == 6 || argc == 7) && strcmp(argv[1], "error") == 0)
		return bench_error(atol(argv[2]), atol(argv[3]), (unsigned)atol(argv[4]), atof(argv[5]),
				   argc == 7 ? atol(argv[6]) : 1);
	fprintf(stderr, "usage: pass-estimate pass NODES JOBS DEPTH | error NODES JOBS SEED FRACTION [BACKFILL_DEPTH]\n");
	return 2;
}
