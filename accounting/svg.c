/* SPDX-License-Identifier: MIT */
/* The SVG timeline: one row per core and per GPU, coloured by what it was doing, with legend and time axis. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acct.h"
#include "gpu.h"
#include "timeutil.h"

#define LABEL_W 120.0   /* the row labels */
#define PLOT_W 960.0
#define ROW_H 16.0
#define ROW_GAP 2.0
#define TOP 56.0        /* title and legend */
#define AXIS_H 40.0

struct row {
	const char *node;
	unsigned index;      /* the CPU, or the GPU */
	bool gpu;
};

enum phase { PH_STARTING, PH_EXECUTING, PH_TEARDOWN, PH_IDLE, PH_MAX };

static const struct {
	const char *cls, *label, *colour;
} phases[PH_MAX] = {
	[PH_STARTING] = { "starting", "starting (dispatch to exec)", "#f5a623" },
	[PH_EXECUTING] = { "executing", "executing (exec to exit)", "#3b7dd8" },
	[PH_TEARDOWN] = { "teardown", "tearing down (exit to released)", "#d0021b" },
	[PH_IDLE] = { "idle", "idle", "#ececec" },
};

/* Text with the five XML special characters escaped and control
 * characters (not allowed in XML 1.0) shown as '?'. */
static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			fputc((unsigned char)*s < ' ' ? '?' : *s, f);
		}
	}
}

static int row_add(struct row **rows, size_t *n, size_t *cap, const char *node, unsigned index, bool gpu)
{
	if (*n == *cap) {
		struct row *r;

		*cap = *cap ? *cap * 2 : 64;
		r = realloc(*rows, *cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		*rows = r;
	}
	(*rows)[(*n)++] = (struct row){ .node = node, .index = index, .gpu = gpu };
	return 0;
}

/* Every core of every node, then every GPU of every node: GPU indices
 * are 0..ngpus-1 on each node (docs/GPUS.md). */
static int rows_build(const struct acct_node *nodes, size_t n_nodes, struct row **ret, size_t *ret_n,
		      size_t *ret_gpu_rows)
{
	size_t n = 0, cap = 0, cores;
	struct row *rows = NULL;
	int r = 0;

	for (size_t i = 0; i < n_nodes && r == 0; i++) {
		struct cpumask m = nodes[i].cpus;

		/* Only the count known: number them from 0. */
		if (cpumask_count(&m) == 0)
			for (int64_t c = 0; c < nodes[i].ncpus && c < CPUMASK_MAX; c++)
				cpumask_set(&m, (unsigned)c);
		for (int c = cpumask_next(&m, 0); c >= 0 && r == 0; c = cpumask_next(&m, c + 1))
			r = row_add(&rows, &n, &cap, nodes[i].name, (unsigned)c, false);
	}
	cores = n;
	for (size_t i = 0; i < n_nodes && r == 0; i++)
		for (int64_t g = 0; g < nodes[i].ngpus && g < NODE_GPUS_MAX && r == 0; g++)
			r = row_add(&rows, &n, &cap, nodes[i].name, (unsigned)g, true);
	if (r < 0) {
		free(rows);
		return r;
	}
	*ret = rows;
	*ret_n = n;
	*ret_gpu_rows = n - cores;
	return 0;
}

static double xpos(int64_t t, int64_t from, int64_t to)
{
	return LABEL_W + PLOT_W * (double)(t - from) / (double)(to - from);
}

static void bar(FILE *f, enum phase ph, const struct acct_job *j, int64_t a, int64_t b, int64_t from,
		int64_t to, double y)
{
	double x0, x1;

	if (a < from)
		a = from;
	if (b > to)
		b = to;
	if (b <= a)
		return;
	x0 = xpos(a, from, to);
	x1 = xpos(b, from, to);
	fprintf(f, "<rect class=\"%s\" x=\"%.2f\" y=\"%.1f\" width=\"%.3f\" height=\"%.1f\" fill=\"%s\">",
		phases[ph].cls, x0, y, x1 - x0, ROW_H, phases[ph].colour);
	fprintf(f, "<title>job %lld (", (long long)j->jobid);
	xml_text(f, j->owner);
	fputs(", ", f);
	xml_text(f, j->queue);
	fprintf(f, ") %s %.3f s</title></rect>", phases[ph].cls, (double)(b - a) / NSEC_PER_SEC);
	if (ph == PH_EXECUTING && x1 - x0 >= 36)
		fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" font-size=\"10\" fill=\"#fff\">%lld</text>", x0 + 3,
			y + ROW_H - 4, (long long)j->jobid);
}

/* Seconds between axis ticks: the smallest of a 1-2-5-like ladder that
 * gives at most 10 ticks. */
static int64_t tick_step(int64_t span_ns)
{
	static const int64_t steps[] = { 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
					 7200, 10800, 21600, 43200, 86400, 172800, 604800 };
	int64_t span = span_ns / NSEC_PER_SEC;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (span / steps[i] <= 10)
			return steps[i];
	return span / 10 + 1;
}

static void axis(FILE *f, int64_t from, int64_t to, double y)
{
	int64_t step = tick_step(to - from) * NSEC_PER_SEC;
	int64_t t = (from + step - 1) / step * step;
	bool days = to - from > 86400 * NSEC_PER_SEC;

	fprintf(f, "<g class=\"axis\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
		LABEL_W, y, LABEL_W + PLOT_W, y);
	for (; t <= to; t += step) {
		time_t s = (time_t)(t / NSEC_PER_SEC);
		struct tm tm;
		char label[32];
		double x = xpos(t, from, to);

		localtime_r(&s, &tm);
		if (days)
			strftime(label, sizeof(label), "%m-%d %H:%M", &tm);
		else
			strftime(label, sizeof(label), "%H:%M:%S", &tm);
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#333\"/>", x, y, x, y + 5);
		fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">%s</text>\n", x,
			y + 17, label);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">local time</text></g>\n",
		LABEL_W + PLOT_W / 2, y + 32);
}

static void job_bars(FILE *f, const struct acct_job *j, int64_t from, int64_t to, int64_t now_ns, double y)
{
	struct acct_phases p;

	if (!acct_job_phases(j, now_ns, &p))
		return;
	bar(f, PH_STARTING, j, p.start, p.exec, from, to, y);
	bar(f, PH_EXECUTING, j, p.exec, p.exit, from, to, y);
	bar(f, PH_TEARDOWN, j, p.exit, p.end, from, to, y);
}

/* A core's jobs: those whose node and CPU list hold it. */
static void core_bars(FILE *f, const struct row *row, const struct acct_job *jobs, size_t n_jobs, int64_t from,
		      int64_t to, int64_t now_ns, double y)
{
	for (size_t k = 0; k < n_jobs; k++) {
		struct cpumask m;

		if (strcmp(jobs[k].node, row->node) == 0 && cpumask_parse(jobs[k].cpus, &m) == 0 &&
		    cpumask_test(&m, row->index))
			job_bars(f, &jobs[k], from, to, now_ns, y);
	}
}

/* A GPU's jobs: those that held it, over the time they held their CPUs
 * (dispatch to released, as --utilization counts GPU time). */
static void gpu_bars(FILE *f, const struct row *row, const struct acct_job *jobs, size_t n_jobs,
		     const struct acct_gpu_hold *holds, size_t n_holds, int64_t from, int64_t to, int64_t now_ns,
		     double y)
{
	for (size_t k = 0; k < n_holds; k++)
		if (holds[k].job < n_jobs && (holds[k].gpus & (UINT64_C(1) << row->index)) &&
		    strcmp(holds[k].node, row->node) == 0)
			job_bars(f, &jobs[holds[k].job], from, to, now_ns, y);
}

static void legend(FILE *f)
{
	double x = LABEL_W;

	fputs("<g class=\"legend\">", f);
	for (int p = 0; p < PH_MAX; p++) {
		fprintf(f, "<rect x=\"%.1f\" y=\"30\" width=\"12\" height=\"12\" fill=\"%s\" stroke=\"#999\"/>", x,
			phases[p].colour);
		fprintf(f, "<text x=\"%.1f\" y=\"40\" font-size=\"11\">%s</text>", x + 16, phases[p].label);
		x += 16 + 7.0 * (double)strlen(phases[p].label) + 18;
	}
	fputs("</g>\n", f);
}

int acct_svg_write(FILE *f, const struct acct_job *jobs, size_t n_jobs, const struct acct_node *nodes,
		   size_t n_nodes, const struct acct_gpu_hold *holds, size_t n_holds, int64_t from, int64_t to,
		   int64_t now_ns)
{
	struct row *rows = NULL;
	size_t n_rows, gpu_rows;
	const char *what;
	double height;
	char a[32], b[32];
	int r;

	if (to <= from)
		return -EINVAL;
	r = rows_build(nodes, n_nodes, &rows, &n_rows, &gpu_rows);
	if (r < 0)
		return r;
	what = gpu_rows ? "cores and GPUs" : "cores";
	height = TOP + (double)n_rows * (ROW_H + ROW_GAP) + AXIS_H + 8;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		   "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n",
		LABEL_W + PLOT_W + 20, height, LABEL_W + PLOT_W + 20, height);
	{
		time_t s = (time_t)(from / NSEC_PER_SEC), e = (time_t)(to / NSEC_PER_SEC);
		struct tm tm;

		localtime_r(&s, &tm);
		strftime(a, sizeof(a), "%Y-%m-%d %H:%M:%S", &tm);
		localtime_r(&e, &tm);
		strftime(b, sizeof(b), "%Y-%m-%d %H:%M:%S", &tm);
	}
	fprintf(f, "<title>qpool %s from %s to %s</title>\n", what, a, b);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
		   "<text x=\"%.1f\" y=\"18\" font-size=\"14\">qpool %s from %s to %s</text>\n", LABEL_W, what, a,
		b);
	legend(f);
	for (size_t i = 0; i < n_rows; i++) {
		double y = TOP + (double)i * (ROW_H + ROW_GAP);

		const char *sep = rows[i].gpu ? ":gpu" : ":";

		fputs(rows[i].gpu ? "<g class=\"gpu\" data-gpu=\"" : "<g class=\"core\" data-core=\"", f);
		xml_text(f, rows[i].node);
		fprintf(f, "%s%u\">", sep, rows[i].index);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">", LABEL_W - 6,
			y + ROW_H - 4);
		xml_text(f, rows[i].node);
		fprintf(f, "%s%u</text>", sep, rows[i].index);
		fprintf(f, "<rect class=\"idle\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>",
			LABEL_W, y, PLOT_W, ROW_H, phases[PH_IDLE].colour);
		if (rows[i].gpu)
			gpu_bars(f, &rows[i], jobs, n_jobs, holds, n_holds, from, to, now_ns, y);
		else
			core_bars(f, &rows[i], jobs, n_jobs, from, to, now_ns, y);
		fputs("</g>\n", f);
	}
	axis(f, from, to, TOP + (double)n_rows * (ROW_H + ROW_GAP) + 4);
	fputs("</svg>\n", f);
	free(rows);
	return ferror(f) ? -EIO : 0;
}
