/* SPDX-License-Identifier: MIT */
/* qpoold's Prometheus metrics: the counters kept and the text served (docs/METRICS.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "histogram.h"
#include "lease.h"
#include "metrics-http.h"
#include "server-internal.h"
#include "version.h"

/* What one queue saw since this server started (counters). */
struct queue_counts {
	char name[QUEUE_NAME_MAX];
	uint64_t submitted;
	uint64_t ended[JOB_STATE_MAX];
};

struct server_metrics {
	struct metrics_http *http;
	struct queue_counts *queues;
	size_t n_queues;
	uint64_t ended_changes;      /* finishes: pool_job_state_set does not see them */
	uint64_t submitted_changes;
	uint64_t scrapes;
};

static struct queue_counts *queue_counts_get(struct server_metrics *m, const char *name)
{
	struct queue_counts *q;

	for (size_t i = 0; i < m->n_queues; i++)
		if (strcmp(m->queues[i].name, name) == 0)
			return &m->queues[i];
	q = realloc(m->queues, (m->n_queues + 1) * sizeof(*q));
	if (!q)
		return NULL;
	m->queues = q;
	q = &m->queues[m->n_queues++];
	memset(q, 0, sizeof(*q));
	snprintf(q->name, sizeof(q->name), "%s", name);
	return q;
}

void server_metrics_submitted(struct server *s, const char *queue)
{
	struct queue_counts *q;

	if (!s->metrics)
		return;
	s->metrics->submitted_changes++;
	q = queue_counts_get(s->metrics, queue);
	if (q)
		q->submitted++;
}

void server_metrics_ended(struct server *s, const char *queue, enum job_state state)
{
	struct queue_counts *q;

	if (!s->metrics || (unsigned)state >= JOB_STATE_MAX)
		return;
	s->metrics->ended_changes++;
	q = queue_counts_get(s->metrics, queue);
	if (q)
		q->ended[state]++;
}

/* A label value as the format wants it: \, " and newline escaped. */
static void label_write(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static uint64_t self_rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "re");
	unsigned long long pages = 0, rss = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &pages, &rss) != 2)
		rss = 0;
	fclose(f);
	return (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

static double self_cpu_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Jobs by queue and state (the pooled states), queue by queue in the
 * config's order; a job of a queue no longer configured is not shown. */
static void jobs_write(struct server *s, FILE *f)
{
	static const enum job_state live[] = { JOB_QUEUED, JOB_HELD, JOB_RUNNING, JOB_EXITING };
	size_t nq = s->config->n_queues;
	uint64_t *n = calloc(nq ? nq : 1, JOB_STATE_MAX * sizeof(*n));
	struct server_metrics *m = s->metrics;

	family(f, "qpool_jobs", "gauge", "Jobs in the pool now, by queue and state (queued, held, running, exiting).");
	for (struct job *j = pool_jobs(s->pool); j && n; j = j->next)
		for (size_t q = 0; q < nq; q++)
			if (strcmp(s->config->queues[q].name, j->queue) == 0) {
				if ((unsigned)j->state < JOB_STATE_MAX)
					n[q * JOB_STATE_MAX + j->state]++;
				break;
			}
	for (size_t q = 0; q < nq && n; q++)
		for (size_t k = 0; k < sizeof(live) / sizeof(live[0]); k++) {
			fputs("qpool_jobs{queue=\"", f);
			label_write(f, s->config->queues[q].name);
			fprintf(f, "\",state=\"%s\"} %llu\n", job_state_name(live[k]),
				(unsigned long long)n[q * JOB_STATE_MAX + live[k]]);
		}
	free(n);

	family(f, "qpool_jobs_ended_total", "counter",
	       "Jobs that ended since this server became active, by queue and final state.");
	for (size_t q = 0; q < m->n_queues; q++)
		for (int st = JOB_COMPLETED; st < JOB_STATE_MAX; st++) {
			fputs("qpool_jobs_ended_total{queue=\"", f);
			label_write(f, m->queues[q].name);
			fprintf(f, "\",state=\"%s\"} %llu\n", job_state_name((enum job_state)st),
				(unsigned long long)m->queues[q].ended[st]);
		}
	family(f, "qpool_jobs_submitted_total", "counter", "Jobs committed by qsub or sbatch since this server became active, by queue.");
	for (size_t q = 0; q < m->n_queues; q++) {
		fputs("qpool_jobs_submitted_total{queue=\"", f);
		label_write(f, m->queues[q].name);
		fprintf(f, "\"} %llu\n", (unsigned long long)m->queues[q].submitted);
	}
}

/* Nodes by state; CPUs, GPUs and memory allocated, idle (free on a
 * usable node) and unavailable (free on a down or drained node). */
static void nodes_write(struct server *s, FILE *f)
{
	uint64_t nodes[3] = { 0 }, cpus[3] = { 0 }, gpus[3] = { 0 }, mem[3] = { 0 };
	static const char *const use[3] = { "allocated", "idle", "unavailable" };

	for (struct node *n = pool_nodes(s->pool); n; n = n->next) {
		unsigned total = cpumask_count(&n->cpus), avail = 0;
		uint64_t m_all = pool_node_mem(n), m_free = pool_node_mem_free(n);
		unsigned g_free = pool_node_gpus_free(n);
		int spare = pool_node_usable(n) ? 1 : 2;

		for (size_t w = 0; w < CPUMASK_MAX / 64; w++)
			avail += (unsigned)__builtin_popcountll(n->cpus.bits[w] & n->free.bits[w] & n->rt_free.bits[w]);
		if ((unsigned)n->state < 3)
			nodes[n->state]++;
		cpus[0] += total - avail;
		cpus[spare] += avail;
		gpus[0] += n->n_gpus - g_free;
		gpus[spare] += g_free;
		if (m_free > m_all)
			m_free = m_all;
		mem[0] += m_all - m_free;
		mem[spare] += m_free;
	}
	family(f, "qpool_nodes", "gauge", "Known nodes by state.");
	for (int st = NODE_UP; st <= NODE_DRAINED; st++)
		fprintf(f, "qpool_nodes{state=\"%s\"} %llu\n", node_state_name((enum node_state)st),
			(unsigned long long)nodes[st]);
	family(f, "qpool_cpus", "gauge", "CPUs of known nodes: allocated to jobs, idle on usable nodes, unavailable (free on down or drained nodes).");
	for (int k = 0; k < 3; k++)
		fprintf(f, "qpool_cpus{state=\"%s\"} %llu\n", use[k], (unsigned long long)cpus[k]);
	family(f, "qpool_gpus", "gauge", "GPUs of known nodes: allocated, idle, unavailable (as qpool_cpus).");
	for (int k = 0; k < 3; k++)
		fprintf(f, "qpool_gpus{state=\"%s\"} %llu\n", use[k], (unsigned long long)gpus[k]);
	family(f, "qpool_memory_bytes", "gauge", "Memory nodes offer their jobs: allocated, idle, unavailable (as qpool_cpus).");
	for (int k = 0; k < 3; k++)
		fprintf(f, "qpool_memory_bytes{state=\"%s\"} %llu\n", use[k], (unsigned long long)mem[k]);
}

static int render(void *userdata, FILE *f)
{
	struct server *s = userdata;
	struct server_metrics *m = s->metrics;
	bool active = !server_standby(&s->h);
	struct pool_stats st;

	m->scrapes++;
	family(f, "qpool_build_info", "gauge", "Always 1; the version of qpoold.");
	fprintf(f, "qpool_build_info{version=\"%s\"} 1\n", QPOOL_VERSION);
	family(f, "qpool_server_active", "gauge", "1 while this qpoold holds the lease (active), 0 while it is a standby.");
	fprintf(f, "qpool_server_active %d\n", active ? 1 : 0);
	family(f, "qpool_server_epoch", "gauge", "The lease's epoch as this server last saw it (each takeover adds one).");
	fprintf(f, "qpool_server_epoch %lld\n", (long long)lease_epoch(s->lease));
	family(f, "process_cpu_seconds_total", "counter", "CPU time qpoold has used, user and system.");
	fprintf(f, "process_cpu_seconds_total %.6f\n", self_cpu_seconds());
	family(f, "process_resident_memory_bytes", "gauge", "qpoold's resident set size.");
	fprintf(f, "process_resident_memory_bytes %llu\n", (unsigned long long)self_rss_bytes());
	family(f, "qpool_metrics_refused_total", "counter",
	       "HTTP requests to the metrics port refused (4xx) or closed for want of time or room.");
	fprintf(f, "qpool_metrics_refused_total %llu\n", metrics_http_refused(m->http));
	family(f, "qpool_metrics_scrapes_total", "counter", "Metrics served, this one included.");
	fprintf(f, "qpool_metrics_scrapes_total %llu\n", (unsigned long long)m->scrapes);
	/* A standby has not loaded the pool: zeros would be wrong, not empty. */
	if (!active)
		return 0;
	jobs_write(s, f);
	nodes_write(s, f);
	pool_stats_get(s->pool, &st);
	family(f, "qpool_job_state_changes_total", "counter",
	       "Changes of a job's state: submits, holds, releases, dispatches, requeues and ends.");
	fprintf(f, "qpool_job_state_changes_total %llu\n",
		(unsigned long long)(st.state_changes + m->ended_changes + m->submitted_changes));
	family(f, "qpool_dispatches_total", "counter", "Jobs dispatched to nodes by scheduling passes.");
	fprintf(f, "qpool_dispatches_total %llu\n", (unsigned long long)st.dispatches);
	family(f, "qpool_schedule_pass_seconds", "histogram", "Time of each scheduling pass.");
	histogram_write(&st.pass_hist, "qpool_schedule_pass_seconds", f);
	family(f, "qpool_store_commit_seconds", "histogram", "Time of each job store commit (group commit, fsync included).");
	histogram_write(jobstore_commit_latency(s->store), "qpool_store_commit_seconds", f);
	return 0;
}

int server_metrics_start(struct server *s, struct error *err)
{
	struct server_metrics *m = calloc(1, sizeof(*m));
	int r;

	if (!m)
		return error_set(err, -ENOMEM, "out of memory");
	s->metrics = m;
	if (!s->config->metrics_listen[0])
		return 0;
	r = metrics_http_create(s->event, s->config->metrics_listen, render, s, &m->http, err);
	if (r < 0)
		return r;
	return 0;
}

void server_metrics_stop(struct server *s)
{
	if (!s->metrics)
		return;
	metrics_http_destroy(s->metrics->http);
	free(s->metrics->queues);
	free(s->metrics);
	s->metrics = NULL;
}
