/* SPDX-License-Identifier: MIT */
/* A node's counted resources (`[node] resources = scratch:800G nvme:2`)
 * and a job's request of them per node (--gres=nvme:1, --tmp=10G,
 * select=...:nvme=1): counts, or sizes in bytes. */
#ifndef QPOOL_NODERES_H
#define QPOOL_NODERES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define NODERES_MAX 16             /* resources of a node, or of one request */
#define NODERES_NAME_MAX 64
#define NODERES_TEXT_MAX 1024

struct noderes {
	char name[NODERES_NAME_MAX];
	uint64_t value;          /* a count, or bytes */
	bool bytes;              /* given as a size (800G) */
};

/* Parses "NAME:VALUE" items separated by blanks or commas (VALUE a
 * count, 0 to 10^15, or a size with a unit: 800G, 2tb); a name twice
 * adds up. The names are checked as license names (lib/license.h) and
 * "gpu" is refused (GPUs are the node's devices, docs/GPUS.md). Fills
 * ret (max entries) and *ret_n. 0 or -EINVAL with err. */
int noderes_parse(const char *text, struct noderes *ret, size_t max, size_t *ret_n, struct error *err);

/* The canonical text of r[0..n): "name:N,name:Nb" (b: bytes), which
 * noderes_parse reads back. Its length, or -ENOSPC. */
int noderes_format(const struct noderes *r, size_t n, char *buf, size_t len);

/* The value of name in r[0..n), 0 when absent. */
uint64_t noderes_value(const struct noderes *r, size_t n, const char *name);

/* r's value for a person: "2", or a size in PBS's form ("800gb"). */
void noderes_item_format(const struct noderes *r, char *buf, size_t len);

#endif
