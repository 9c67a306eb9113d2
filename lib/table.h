/* SPDX-License-Identifier: MIT */
/* Text tables for the commands: columns sized to their widest cell. */
#ifndef QPOOL_TABLE_H
#define QPOOL_TABLE_H

#include <stddef.h>
#include <stdio.h>

struct table;

/* A table with ncols columns named by headers; align holds one 'l' or 'r'
 * per column (NULL: all left). Returns NULL when out of memory. */
struct table *table_create(size_t ncols, const char *const *headers, const char *align);

void table_destroy(struct table *t);

/* Appends a cell to the current row; a row is complete after ncols cells
 * and the next cell starts a new one. Control characters in the text are
 * shown as '?', so a cell never breaks a line. 0 or -ENOMEM. */
int table_cell(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Rows added so far (the header is not one). */
size_t table_rows(const struct table *t);

/* Prints the header, a rule of dashes under each header, and the rows,
 * columns two blanks apart, no trailing blanks. Widths count UTF-8
 * characters, not bytes. */
void table_print(const struct table *t, FILE *f);

#endif
