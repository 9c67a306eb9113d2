/* SPDX-License-Identifier: MIT */
/* Reports as typed tables, printed as text, CSV or JSON; and the one-job detail report. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acct.h"
#include "license.h"
#include "table.h"
#include "timeutil.h"

struct cell {
	bool null;
	char *text;          /* ACCT_CELL_TEXT */
	int64_t i;           /* INT, SECONDS, MS, BYTES, TIME */
	double v;            /* REAL, PERCENT */
};

struct acct_report {
	char *title;
	const struct acct_column *cols;
	size_t ncols;
	struct cell *cells;
	size_t n_cells, cap;
	char **captions;
	size_t n_captions;
	json_t *meta;
};

struct acct_report *acct_report_create(const char *title, const struct acct_column *columns,
				       size_t ncols)
{
	struct acct_report *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->title = strdup(title);
	r->meta = json_object();
	r->cols = columns;
	r->ncols = ncols;
	if (!r->title || !r->meta) {
		acct_report_destroy(r);
		return NULL;
	}
	return r;
}

void acct_report_destroy(struct acct_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_cells; i++)
		free(r->cells[i].text);
	for (size_t i = 0; i < r->n_captions; i++)
		free(r->captions[i]);
	free(r->captions);
	free(r->cells);
	json_decref(r->meta);
	free(r->title);
	free(r);
}

static struct cell *cell_new(struct acct_report *r)
{
	if (r->n_cells == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct cell *c = realloc(r->cells, cap * sizeof(*c));

		if (!c)
			return NULL;
		r->cells = c;
		r->cap = cap;
	}
	memset(&r->cells[r->n_cells], 0, sizeof(struct cell));
	return &r->cells[r->n_cells++];
}

int acct_report_text(struct acct_report *r, const char *s)
{
	struct cell *c = cell_new(r);

	if (!c)
		return -ENOMEM;
	if (!s) {
		c->null = true;
		return 0;
	}
	c->text = strdup(s);
	return c->text ? 0 : -ENOMEM;
}

int acct_report_int(struct acct_report *r, int64_t v)
{
	struct cell *c = cell_new(r);

	if (!c)
		return -ENOMEM;
	c->i = v;
	c->v = (double)v;
	return 0;
}

int acct_report_real(struct acct_report *r, double v)
{
	struct cell *c = cell_new(r);

	if (!c)
		return -ENOMEM;
	c->v = v;
	c->i = (int64_t)v;
	return 0;
}

int acct_report_null(struct acct_report *r)
{
	struct cell *c = cell_new(r);

	if (!c)
		return -ENOMEM;
	c->null = true;
	return 0;
}

int acct_report_caption(struct acct_report *r, const char *fmt, ...)
{
	char **c = realloc(r->captions, (r->n_captions + 1) * sizeof(*c));
	va_list ap;
	int n;

	if (!c)
		return -ENOMEM;
	r->captions = c;
	va_start(ap, fmt);
	n = vasprintf(&c[r->n_captions], fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	r->n_captions++;
	return 0;
}

int acct_report_meta(struct acct_report *r, const char *key, json_t *value)
{
	return json_object_set_new(r->meta, key, value) == 0 ? 0 : -ENOMEM;
}

size_t acct_report_rows(const struct acct_report *r)
{
	return r->n_cells / r->ncols;
}

static void local_time(char *buf, size_t len, int64_t ns)
{
	time_t t = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;
	size_t n;

	localtime_r(&t, &tm);
	n = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03lld", (long long)(ns % NSEC_PER_SEC / NSEC_PER_MSEC));
}

static void bytes_human(char *buf, size_t len, int64_t b)
{
	static const char units[] = "KMGTP";
	double v = (double)b;
	int u = -1;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%lld", (long long)b);
	else
		snprintf(buf, len, "%.1f%c", v, units[u]);
}

/* The cell as text: human for the table, machine for CSV. */
static void cell_format(const struct cell *c, enum acct_cell_kind kind, bool human, char *buf,
			size_t len)
{
	if (c->null) {
		snprintf(buf, len, "%s", human ? "-" : "");
		return;
	}
	switch (kind) {
	case ACCT_CELL_TEXT:
		snprintf(buf, len, "%s", c->text);
		break;
	case ACCT_CELL_INT:
		snprintf(buf, len, "%lld", (long long)c->i);
		break;
	case ACCT_CELL_SECONDS:
		snprintf(buf, len, human ? "%.3f" : "%.6f", (double)c->i / NSEC_PER_SEC);
		break;
	case ACCT_CELL_MS:
		snprintf(buf, len, human ? "%.2f" : "%.6f", (double)c->i / NSEC_PER_MSEC);
		break;
	case ACCT_CELL_REAL:
		snprintf(buf, len, human ? "%.3f" : "%.6f", c->v);
		break;
	case ACCT_CELL_PERCENT:
		snprintf(buf, len, human ? "%.1f" : "%.4f", c->v);
		break;
	case ACCT_CELL_BYTES:
		if (human)
			bytes_human(buf, len, c->i);
		else
			snprintf(buf, len, "%lld", (long long)c->i);
		break;
	case ACCT_CELL_TIME:
		local_time(buf, len, c->i);
		break;
	}
}

static json_t *cell_json(const struct cell *c, enum acct_cell_kind kind)
{
	if (c->null)
		return json_null();
	switch (kind) {
	case ACCT_CELL_TEXT:
		return json_string(c->text);
	case ACCT_CELL_INT:
	case ACCT_CELL_BYTES:
	case ACCT_CELL_TIME:
		return json_integer(c->i);
	case ACCT_CELL_SECONDS:
		return json_real((double)c->i / NSEC_PER_SEC);
	case ACCT_CELL_MS:
		return json_real((double)c->i / NSEC_PER_MSEC);
	case ACCT_CELL_REAL:
	case ACCT_CELL_PERCENT:
		return json_real(c->v);
	}
	return json_null();
}

void acct_csv_field(FILE *f, const char *s)
{
	size_t n = strlen(s);
	bool quote = strpbrk(s, ",\"\r\n") != NULL || (n && (s[0] == ' ' || s[n - 1] == ' '));

	if (!quote) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int print_csv(const struct acct_report *r, FILE *f)
{
	char buf[512];

	for (size_t c = 0; c < r->ncols; c++) {
		if (c)
			fputc(',', f);
		acct_csv_field(f, r->cols[c].key);
	}
	fputs("\r\n", f);
	for (size_t i = 0; i < r->n_cells; i++) {
		size_t c = i % r->ncols;

		if (c)
			fputc(',', f);
		cell_format(&r->cells[i], r->cols[c].kind, false, buf, sizeof(buf));
		acct_csv_field(f, buf);
		if (c + 1 == r->ncols)
			fputs("\r\n", f);
	}
	return 0;
}

static int print_json(const struct acct_report *r, FILE *f)
{
	json_t *doc = json_pack("{s:s}", "report", r->title), *rows = json_array();
	json_t *row = NULL;
	int ret = -ENOMEM;

	if (!doc || !rows || json_object_update(doc, r->meta) < 0)
		goto done;
	for (size_t i = 0; i < r->n_cells; i++) {
		size_t c = i % r->ncols;

		if (c == 0) {
			row = json_object();
			if (!row || json_array_append_new(rows, row) < 0)
				goto done;
		}
		if (json_object_set_new(row, r->cols[c].key, cell_json(&r->cells[i], r->cols[c].kind)) < 0)
			goto done;
	}
	if (json_object_set(doc, "rows", rows) < 0)
		goto done;
	json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
	fputc('\n', f);
	ret = 0;
done:
	json_decref(rows);
	json_decref(doc);
	return ret;
}

static int print_text(const struct acct_report *r, FILE *f)
{
	const char **headers = calloc(r->ncols, sizeof(*headers));
	char *align = calloc(r->ncols + 1, 1);
	struct table *t = NULL;
	char buf[512];
	int ret = -ENOMEM;

	if (!headers || !align)
		goto done;
	for (size_t c = 0; c < r->ncols; c++) {
		headers[c] = r->cols[c].title;
		align[c] = r->cols[c].kind == ACCT_CELL_TEXT || r->cols[c].kind == ACCT_CELL_TIME ? 'l' : 'r';
	}
	t = table_create(r->ncols, headers, align);
	if (!t)
		goto done;
	for (size_t i = 0; i < r->n_cells; i++) {
		cell_format(&r->cells[i], r->cols[i % r->ncols].kind, true, buf, sizeof(buf));
		if (table_cell(t, "%s", buf) < 0)
			goto done;
	}
	for (size_t i = 0; i < r->n_captions; i++)
		fprintf(f, "%s\n", r->captions[i]);
	if (r->n_captions)
		fputc('\n', f);
	table_print(t, f);
	ret = 0;
done:
	table_destroy(t);
	free(align);
	free(headers);
	return ret;
}

int acct_report_print(const struct acct_report *r, enum acct_format fmt, FILE *f)
{
	int ret;

	switch (fmt) {
	case ACCT_FORMAT_CSV: ret = print_csv(r, f); break;
	case ACCT_FORMAT_JSON: ret = print_json(r, f); break;
	default: ret = print_text(r, f); break;
	}
	if (ret == 0 && ferror(f))
		ret = -EIO;
	return ret;
}

/* ---- the one-job report ---- */

static const struct acct_column job_columns[] = {
	{ "field", "Field", ACCT_CELL_TEXT },
	{ "value", "Value", ACCT_CELL_TEXT },
	{ "unit", "Unit", ACCT_CELL_TEXT },
};

static int job_row(struct acct_report *r, const char *field, const char *value, const char *unit)
{
	int ret = acct_report_text(r, field);

	if (ret == 0)
		ret = acct_report_text(r, value);
	if (ret == 0)
		ret = acct_report_text(r, unit);
	return ret;
}

static int job_row_int(struct acct_report *r, const char *field, int64_t v, const char *unit)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	return job_row(r, field, v < 0 ? NULL : buf, unit);
}

static int job_row_ns(struct acct_report *r, const char *field, int64_t ns)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.6f", (double)ns / NSEC_PER_SEC);
	return job_row(r, field, ns < 0 ? NULL : buf, "s");
}

/* A node's figure of its record, -1 (shown as none) when it has none. */
static int64_t node_int(const json_t *e, const char *key)
{
	const json_t *v = json_object_get(e, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

int acct_report_job_nodes(struct acct_report *r, const json_t *record)
{
	const json_t *alloc = json_object_get(record, "alloc"), *e;
	int64_t dispatch = json_integer_value(json_object_get(json_object_get(record, "times"), "dispatch"));
	int64_t last = 0, slowest = -1;
	const char *slow = NULL;
	char field[160];
	size_t i;
	int err = 0;

	if (json_array_size(alloc) < 2)
		return 0;
	err = job_row_int(r, "nodes", (int64_t)json_array_size(alloc), "");
	json_array_foreach(alloc, i, e) {
		const json_t *t = json_object_get(e, "times");
		const char *name = json_string_value(json_object_get(e, "node"));
		int64_t fenced = json_integer_value(json_object_get(t, "fenced"));
		int64_t ex = json_integer_value(json_object_get(t, "exit"));
		int64_t rel = json_integer_value(json_object_get(t, "released"));
		int64_t up = dispatch && fenced >= dispatch ? fenced - dispatch : -1;

		name = name ? name : "?";
		snprintf(field, sizeof(field), "startup@%s", name);
		err = err ? err : job_row_ns(r, field, up);
		snprintf(field, sizeof(field), "teardown@%s", name);
		err = err ? err : job_row_ns(r, field, ex && rel >= ex ? rel - ex : -1);
		/* What the job's cpu_time sums and its mem_peak takes the
		 * highest of: each node's own, known once it reported. */
		snprintf(field, sizeof(field), "cpu_time@%s", name);
		err = err ? err : job_row_int(r, field, node_int(e, "cpu_ns"), "ns");
		snprintf(field, sizeof(field), "mem_peak@%s", name);
		err = err ? err : job_row_int(r, field, node_int(e, "mem_peak"), "bytes");
		if (up > slowest) {
			slowest = up;
			slow = name;
		}
		if (fenced > last)
			last = fenced;
	}
	/* The job's startup across nodes: dispatch, then every node fenced,
	 * then the script's exec (startup above). */
	err = err ? err : job_row_ns(r, "all_fenced", dispatch && last >= dispatch ? last - dispatch : -1);
	err = err ? err : job_row(r, "slowest_node", slow, "");
	return err;
}

int acct_report_job_attempts(struct acct_report *r, const json_t *record)
{
	static const char *const stamps[] = { "dispatch", "exec", "exit", "released" };
	const json_t *attrs = json_object_get(record, "attrs"), *list = json_object_get(attrs, "attempts"), *a;
	int64_t sus = json_integer_value(json_object_get(attrs, "suspended_ns"));
	char field[64], buf[64];
	size_t i;
	int e = 0;

	if (sus > 0)
		e = job_row_ns(r, "suspended", sus);
	if (json_array_size(list) == 0)
		return e;
	e = e ? e : job_row_int(r, "attempts", (int64_t)json_array_size(list) + 1, "");
	json_array_foreach(list, i, a) {
		const json_t *t = json_object_get(a, "times");

		snprintf(field, sizeof(field), "attempt%zu_node", i + 1);
		e = e ? e : job_row(r, field, json_string_value(json_object_get(a, "node")), "");
		for (size_t k = 0; k < sizeof(stamps) / sizeof(stamps[0]) && !e; k++) {
			int64_t ns = json_integer_value(json_object_get(t, stamps[k]));

			snprintf(field, sizeof(field), "attempt%zu_%s_time", i + 1, stamps[k]);
			if (ns)
				local_time(buf, sizeof(buf), ns);
			e = job_row(r, field, ns ? buf : NULL, "local");
		}
		snprintf(field, sizeof(field), "attempt%zu_end_time", i + 1);
		local_time(buf, sizeof(buf), json_integer_value(json_object_get(a, "end")));
		e = e ? e : job_row(r, field, buf, "local");
		snprintf(field, sizeof(field), "attempt%zu_reason", i + 1);
		e = e ? e : job_row(r, field, json_string_value(json_object_get(a, "reason")), "");
		if (json_integer_value(json_object_get(a, "suspended_ns")) > 0) {
			snprintf(field, sizeof(field), "attempt%zu_suspended", i + 1);
			e = e ? e : job_row_ns(r, field, json_integer_value(json_object_get(a, "suspended_ns")));
		}
	}
	return e;
}

int acct_report_job_gpus(struct acct_report *r, const struct acct_job *j, const json_t *record)
{
	const json_t *alloc = json_object_get(record, "alloc"), *e, *g;
	int64_t ngpus = json_integer_value(json_object_get(record, "ngpus"));
	struct acct_derived d;
	char list[512] = "", hours[32];
	size_t i, k, at = 0;
	int err;

	if (ngpus <= 0)
		return 0;
	json_array_foreach(alloc, i, e) {
		const char *name = json_string_value(json_object_get(e, "node"));
		int w;

		if (!json_array_size(json_object_get(e, "gpus")))
			continue;
		w = snprintf(list + at, sizeof(list) - at, "%s%s:", at ? " " : "", name ? name : "?");
		if (w < 0 || (size_t)w >= sizeof(list) - at)
			break;
		at += (size_t)w;
		json_array_foreach(json_object_get(e, "gpus"), k, g) {
			w = snprintf(list + at, sizeof(list) - at, "%s%lld", k ? "," : "",
				     (long long)json_integer_value(g));
			if (w < 0 || (size_t)w >= sizeof(list) - at)
				break;
			at += (size_t)w;
		}
	}
	acct_job_derive(j, &d);
	snprintf(hours, sizeof(hours), "%.4f", (double)ngpus * (double)d.elapsed / 3600e9);
	err = job_row_int(r, "ngpus", ngpus, "");
	err = err ? err : job_row(r, "gpus", list[0] ? list : NULL, "");
	err = err ? err : job_row(r, "gpu_hours", d.elapsed < 0 ? NULL : hours, "h");
	return err;
}

int acct_report_job_licenses(struct acct_report *r, const struct acct_job *j, const json_t *record)
{
	const char *text = json_string_value(json_object_get(json_object_get(record, "attrs"),
							     "Resource_List.licenses"));
	struct license l[LICENSES_MAX];
	struct acct_derived d;
	struct error err;
	char hours[LICENSE_TEXT_MAX];
	size_t n = 0, at = 0;
	int e;

	if (!text || license_request_parse(text, l, LICENSES_MAX, &n, &err) < 0 || !n)
		return 0;
	acct_job_derive(j, &d);
	hours[0] = '\0';
	for (size_t i = 0; i < n && d.elapsed >= 0; i++) {
		int w = snprintf(hours + at, sizeof(hours) - at, "%s%s:%.4f", i ? "," : "", l[i].name,
				 (double)l[i].count * (double)d.elapsed / 3600e9);

		if (w < 0 || (size_t)w >= sizeof(hours) - at)
			break;
		at += (size_t)w;
	}
	e = job_row(r, "licenses", text, "");
	return e ? e : job_row(r, "license_hours", hours[0] ? hours : NULL, "h");
}

int acct_report_job(const struct acct_job *j, struct acct_report **ret)
{
	struct acct_report *r = acct_report_create("job", job_columns, 3);
	struct acct_derived d;
	char buf[64], field[32];
	int e = 0;

	if (!r)
		return -ENOMEM;
	acct_job_derive(j, &d);
	e = e ? e : job_row_int(r, "jobid", j->jobid, "");
	e = e ? e : job_row(r, "name", j->name, "");
	e = e ? e : job_row(r, "owner", j->owner, "");
	e = e ? e : job_row(r, "queue", j->queue, j->realtime ? "realtime" : "");
	e = e ? e : job_row(r, "state", j->state, "");
	e = e ? e : job_row(r, "node", j->node[0] ? j->node : NULL, "");
	e = e ? e : job_row(r, "cpus", j->cpus[0] ? j->cpus : NULL, "");
	e = e ? e : job_row_int(r, "ncpus", j->ncpus, "");
	e = e ? e : job_row_int(r, "mem", j->mem, "bytes");
	e = e ? e : job_row_int(r, "mem_peak", j->mem_peak, "bytes");
	e = e ? e : job_row_int(r, "cpu_time", j->cpu_ns, "ns");
	e = e ? e : job_row(r, "oom", j->oom ? "yes" : "no", "");
	e = e ? e : job_row_int(r, "exit_status", j->exit_status, "");
	e = e ? e : job_row_int(r, "exit_signal", j->exit_signal, "");
	for (int i = 0; i < ACCT_STAMP_MAX && !e; i++) {
		snprintf(field, sizeof(field), "%s_time", acct_stamp_name(i));
		if (j->t[i])
			local_time(buf, sizeof(buf), j->t[i]);
		e = job_row(r, field, j->t[i] ? buf : NULL, "local");
		if (!e && j->t[i]) {
			snprintf(field, sizeof(field), "%s_wall_ns", acct_stamp_name(i));
			e = job_row_int(r, field, j->t[i], "ns");
		}
		if (!e && j->mono[i]) {
			snprintf(field, sizeof(field), "%s_mono_ns", acct_stamp_name(i));
			e = job_row_int(r, field, j->mono[i], "ns");
		}
	}
	e = e ? e : job_row_ns(r, "wait", d.wait);
	e = e ? e : job_row_ns(r, "startup", d.startup);
	e = e ? e : job_row_ns(r, "connect", d.connect);
	e = e ? e : job_row_ns(r, "teardown", d.teardown);
	e = e ? e : job_row_ns(r, "elapsed", d.elapsed);
	e = e ? e : job_row_ns(r, "overhead", d.overhead);
	e = e ? e : job_row_ns(r, "report", d.report);
	snprintf(buf, sizeof(buf), "%.2f", d.cpu_delivered * 100);
	e = e ? e : job_row(r, "cpu_delivered", d.cpu_delivered < 0 ? NULL : buf, "%");
	/* Its start estimates (docs/ESTIMATES.md), when it had any. */
	if (!e && j->est_first) {
		local_time(buf, sizeof(buf), j->est_first * NSEC_PER_SEC);
		e = job_row(r, "estimated_first_start", buf, "local");
	}
	if (!e && j->est_start) {
		local_time(buf, sizeof(buf), j->est_start * NSEC_PER_SEC);
		e = job_row(r, "estimated_start", buf, "local");
		/* Signed (job_row_int takes a negative for unknown). */
		snprintf(buf, sizeof(buf), "%lld", (long long)(j->t[ACCT_DISPATCH] / NSEC_PER_SEC - j->est_start));
		if (!e && j->t[ACCT_DISPATCH])
			e = job_row(r, "start_minus_estimate", buf, "s");
	}
	if (e) {
		acct_report_destroy(r);
		return e;
	}
	*ret = r;
	return 0;
}
