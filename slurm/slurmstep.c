/* SPDX-License-Identifier: MIT */
/* srun's job steps: the tasks' layout, --multi-prog's lines, a step's %-patterns. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurmstep.h"

/* A task number as --multi-prog takes it (and its bound: a step's size
 * is qexec's -n, at most 2^20). */
#define TASK_MAX 1048576

int slurmstep_layout(const int *slots, int nnodes, int64_t ntasks, int64_t ppn, int *ret_ranks)
{
	int64_t left = ntasks;
	int used = 0;

	if (ntasks < 1)
		return -EINVAL;
	for (int i = 0; i < nnodes; i++) {
		int64_t cap = ppn > 0 && slots[i] > ppn ? ppn : slots[i];
		int64_t take = left < cap ? left : cap;

		/* --ntasks-per-node M: a node that is needed holds M (qexec
		 * refuses one with fewer slots) */
		if (ppn > 0 && left > 0 && cap < (left < ppn ? left : ppn))
			return -E2BIG;
		ret_ranks[i] = (int)take;
		left -= take;
		if (take > 0)
			used = i + 1;
	}
	return left > 0 ? -E2BIG : used;
}

int slurmstep_node_of(const int *ranks, int nnodes, int64_t task)
{
	for (int i = 0; i < nnodes; i++) {
		if (task < ranks[i])
			return task >= 0 ? i : -1;
		task -= ranks[i];
	}
	return -1;
}

/* The next line of text from *at: [*ret_line, +*ret_len), without its
 * newline; false at the end. */
static bool line_next(const char **at, const char **ret_line, size_t *ret_len)
{
	const char *p = *at, *nl;

	if (!*p)
		return false;
	nl = strchr(p, '\n');
	*ret_line = p;
	*ret_len = nl ? (size_t)(nl - p) : strlen(p);
	*at = nl ? nl + 1 : p + *ret_len;
	return true;
}

/* The first word of a line (the tasks) and where the rest starts; false
 * for a blank or '#' line. */
static bool line_tasks(const char *line, size_t len, char *tasks, size_t tlen, const char **ret_rest,
		       size_t *ret_rest_len)
{
	size_t i = 0, n;

	while (i < len && isspace((unsigned char)line[i]))
		i++;
	if (i == len || line[i] == '#')
		return false;
	n = i;
	while (n < len && !isspace((unsigned char)line[n]))
		n++;
	snprintf(tasks, tlen, "%.*s", (int)(n - i), line + i);
	*ret_rest = line + n;
	*ret_rest_len = len - n;
	return true;
}

/* Whether task is in a TASKS word ('*' or N,N-M...); *ret_offset its
 * place among them. 1 yes, 0 no, -EINVAL a bad word. */
static int tasks_has(const char *spec, int64_t task, int64_t *ret_offset)
{
	int64_t offset = 0;
	int found = 0;

	if (!strcmp(spec, "*")) {
		*ret_offset = task;
		return 1;
	}
	for (const char *p = spec; *p;) {
		char *end;
		long long lo, hi;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		lo = strtoll(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -EINVAL;
			hi = strtoll(end + 1, &end, 10);
		}
		if ((*end && *end != ',') || hi < lo || hi >= TASK_MAX)
			return -EINVAL;
		if (!found && task >= lo && task <= hi) {
			*ret_offset = offset + (task - lo);
			found = 1;
		}
		offset += hi - lo + 1;
		p = *end ? end + 1 : end;
	}
	return found;
}

/* Marks in seen[0..ntasks) the tasks a TASKS word names. 0, or -EINVAL
 * with err (a bad word, a task past the last, one named twice). Each
 * range is walked once: a 64 KiB file cannot cost tasks x lines. */
static int tasks_mark(const char *spec, unsigned char *seen, int64_t ntasks, struct error *err)
{
	if (!strcmp(spec, "*")) {
		for (int64_t t = 0; t < ntasks; t++)
			if (seen[t]++)
				return error_set(err, -EINVAL, "Duplicate executable entry for task %" PRId64, t);
		return 0;
	}
	for (const char *p = spec; *p;) {
		char *end;
		long long lo, hi;

		if (!isdigit((unsigned char)*p))
			return error_set(err, -EINVAL, "Invalid task id specification %.40s", spec);
		lo = strtoll(p, &end, 10);
		hi = lo;
		if (*end == '-' && isdigit((unsigned char)end[1]))
			hi = strtoll(end + 1, &end, 10);
		if ((*end && *end != ',') || hi < lo || hi >= TASK_MAX)
			return error_set(err, -EINVAL, "Invalid task id specification %.40s", spec);
		if (hi >= ntasks)
			return error_set(err, -EINVAL, "Invalid task id in %.40s: past the last task %" PRId64,
					 spec, ntasks - 1);
		for (long long t = lo; t <= hi; t++)
			if (seen[t]++)
				return error_set(err, -EINVAL, "Duplicate executable entry for task %lld", t);
		p = *end ? end + 1 : end;
	}
	return 0;
}

int slurmstep_multiprog_check(const char *text, int64_t ntasks, struct error *err)
{
	const char *at = text, *line, *rest;
	size_t len, rlen;
	char tasks[256];
	unsigned char *seen;
	int r = 0;

	if (ntasks < 1 || ntasks > TASK_MAX)
		return error_set(err, -EINVAL, "invalid number of tasks %" PRId64, ntasks);
	seen = calloc((size_t)ntasks, 1);
	if (!seen)
		return -ENOMEM;
	while (r == 0 && line_next(&at, &line, &len)) {
		if (!line_tasks(line, len, tasks, sizeof(tasks), &rest, &rlen))
			continue;
		if (strspn(rest, " \t\r") >= rlen)
			r = error_set(err, -EINVAL, "Invalid MPMD configuration line: no program for %s", tasks);
		else
			r = tasks_mark(tasks, seen, ntasks, err);
	}
	for (int64_t t = 0; r == 0 && t < ntasks; t++)
		if (!seen[t])
			r = error_set(err, -EINVAL, "Missing executable entry for task %" PRId64, t);
	free(seen);
	return r;
}

/* Appends word[0..n) to *v (NULL-terminated). */
static int argv_add(char ***v, size_t *nv, const char *word, size_t n)
{
	char **w = realloc(*v, (*nv + 2) * sizeof(char *));

	if (!w)
		return -ENOMEM;
	*v = w;
	w[*nv] = strndup(word, n);
	if (!w[*nv])
		return -ENOMEM;
	w[++*nv] = NULL;
	return 0;
}

int slurmstep_multiprog_argv(const char *text, int64_t task, char ***ret_argv, struct error *err)
{
	const char *at = text, *line, *rest;
	size_t len, rlen;
	char tasks[256];

	while (line_next(&at, &line, &len)) {
		char **v = NULL, *word;
		size_t nv = 0, i = 0;
		int64_t off = 0;
		int k, r = 0;

		if (!line_tasks(line, len, tasks, sizeof(tasks), &rest, &rlen))
			continue;
		k = tasks_has(tasks, task, &off);
		if (k < 0)
			return error_set(err, -EINVAL, "Invalid task id specification %.40s", tasks);
		if (!k)
			continue;
		/* a word grows at most by a task's or an offset's digits per '%' */
		word = malloc(rlen * 12 + 1);
		if (!word)
			return -ENOMEM;
		while (r == 0) {
			size_t n = 0;
			char quote = 0;

			while (i < rlen && isspace((unsigned char)rest[i]))
				i++;
			if (i == rlen)
				break;
			for (; i < rlen && (quote || !isspace((unsigned char)rest[i])); i++) {
				char ch = rest[i];

				if (quote && ch == quote)
					quote = 0;
				else if (!quote && (ch == '\'' || ch == '"'))
					quote = ch;
				else if (ch == '%' && i + 1 < rlen && (rest[i + 1] == 't' || rest[i + 1] == 'o'))
					n += (size_t)sprintf(word + n, "%" PRId64, rest[++i] == 't' ? task : off);
				else
					word[n++] = ch;
			}
			r = argv_add(&v, &nv, word, n);
		}
		free(word);
		if (r == 0 && nv == 0)
			r = error_set(err, -EINVAL, "Invalid MPMD configuration line: no program for %s", tasks);
		if (r < 0) {
			for (size_t j = 0; j < nv; j++)
				free(v[j]);
			free(v);
			return r;
		}
		*ret_argv = v;
		return 0;
	}
	return error_set(err, -ENOENT, "Missing executable entry for task %" PRId64, task);
}

/* Where a '%' pattern letter follows its width, or NULL at the end. */
static const char *pattern_next(const char *p, int *ret_width)
{
	const char *q = strchr(p, '%');

	if (!q)
		return NULL;
	q++;
	*ret_width = 0;
	while (isdigit((unsigned char)*q))
		*ret_width = *ret_width * 10 + (*q++ - '0');
	return q;
}

bool slurmstep_path_per_task(const char *pat)
{
	int w;

	for (const char *p = pat; (p = pattern_next(p, &w)) && *p; p++)
		if (*p == 't')
			return true;
	return false;
}

bool slurmstep_path_per_node(const char *pat)
{
	bool node = false;
	int w;

	for (const char *p = pat; (p = pattern_next(p, &w)) && *p; p++)
		node |= *p == 'n' || *p == 'N';
	return node && !slurmstep_path_per_task(pat);
}

int slurmstep_path_expand(const char *pat, const struct slurmstep_ids *ids, char *buf, size_t len,
			  struct error *err)
{
	size_t at = 0;

	for (const char *p = pat; *p; p++) {
		char num[64];
		const char *add = num;
		int width = 0;
		int64_t v = -1;

		if (*p != '%') {
			snprintf(num, sizeof(num), "%c", *p);
		} else {
			p++;
			while (isdigit((unsigned char)*p))
				width = width * 10 + (*p++ - '0');
			if (width > 10)
				width = 10;
			switch (*p) {
			case '%':
				add = "%";
				break;
			case 'j':
				add = ids->jobid;
				break;
			case 'J':
				snprintf(num, sizeof(num), "%s.%" PRId64, ids->jobid, ids->step);
				break;
			case 'A':
				add = ids->array_job ? ids->array_job : ids->jobid;
				break;
			case 'a':
				add = ids->array_task ? ids->array_task : "4294967294";
				break;
			case 'x':
				add = ids->name;
				break;
			case 'u':
				add = ids->user;
				break;
			case 'N':
				add = ids->nodename;
				break;
			case 's':
				v = ids->step;
				break;
			case 't':
				v = ids->task;
				break;
			case 'n':
				v = ids->node;
				break;
			default:
				return error_set(err, -EINVAL, "%s: %%%c is not a filename pattern", pat,
						 *p ? *p : ' ');
			}
			if (strchr("stn", *p)) {
				if (v < 0)
					return error_set(err, -EINVAL, "%s: %%%c is not known here", pat, *p);
				snprintf(num, sizeof(num), "%0*" PRId64, width, v);
			}
			if (!add)
				add = "";
		}
		if (at + strlen(add) >= len)
			return error_set(err, -ENAMETOOLONG, "%s: path too long", pat);
		memcpy(buf + at, add, strlen(add));
		at += strlen(add);
	}
	buf[at] = '\0';
	return 0;
}
