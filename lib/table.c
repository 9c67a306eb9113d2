/* SPDX-License-Identifier: MIT */
/* Column-aligned text tables for qstat and friends. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

struct table {
	size_t ncols;
	const char *const *headers;
	const char *align;
	char **cells;      /* row-major, n_cells of them */
	size_t n_cells;
	size_t cap;
};

struct table *table_create(size_t ncols, const char *const *headers, const char *align)
{
	struct table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ncols = ncols;
	t->headers = headers;
	t->align = align;
	return t;
}

void table_destroy(struct table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_cells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

int table_cell(struct table *t, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	if (t->n_cells == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **c = realloc(t->cells, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		t->cells = c;
		t->cap = cap;
	}
	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			*p = '?';
	t->cells[t->n_cells++] = s;
	return 0;
}

size_t table_rows(const struct table *t)
{
	return (t->n_cells + t->ncols - 1) / t->ncols;
}

/* Display width: UTF-8 characters (continuation bytes do not count). */
static size_t text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static void cell_print(const struct table *t, FILE *f, size_t col, const char *s,
		       const size_t *width)
{
	size_t pad = width[col] - text_width(s);
	bool last = col + 1 == t->ncols;
	bool right = t->align && t->align[col] == 'r';

	if (col > 0)
		fputs("  ", f);
	if (right)
		fprintf(f, "%*s", (int)pad, "");
	fputs(s, f);
	if (!right && !last)
		fprintf(f, "%*s", (int)pad, "");
}

void table_print(const struct table *t, FILE *f)
{
	size_t *width = calloc(t->ncols, sizeof(*width));

	if (!width)
		return;
	for (size_t c = 0; c < t->ncols; c++)
		width[c] = text_width(t->headers[c]);
	for (size_t i = 0; i < t->n_cells; i++) {
		size_t w = text_width(t->cells[i]);

		if (w > width[i % t->ncols])
			width[i % t->ncols] = w;
	}
	for (size_t c = 0; c < t->ncols; c++)
		cell_print(t, f, c, t->headers[c], width);
	fputc('\n', f);
	for (size_t c = 0; c < t->ncols; c++) {
		fputs(c ? "  " : "", f);
		for (size_t i = 0; i < width[c]; i++)
			fputc('-', f);
	}
	fputc('\n', f);
	for (size_t i = 0; i < t->n_cells; i++) {
		cell_print(t, f, i % t->ncols, t->cells[i], width);
		if (i % t->ncols == t->ncols - 1 || i + 1 == t->n_cells)
			fputc('\n', f);
	}
	free(width);
}
