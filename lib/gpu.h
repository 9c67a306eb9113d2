/* SPDX-License-Identifier: MIT */
/* A node's GPUs (docs/GPUS.md): what qnoded finds or is told, what
 * node.register carries, what qpoold places and gded fences. */
#pragma once

#include <stdint.h>

#include "parse.h"

#define NODE_GPUS_MAX 64        /* per node: a job's share is a 64-bit mask */

struct node_gpu {
	unsigned index;          /* the node's own numbering, 0.. in list order */
	char file[256];          /* its device file, e.g. /dev/nvidia0 */
	unsigned major, minor;   /* its character device number */
	struct cpumask cpus;     /* the CPUs closest to it; empty: unknown */
	int numa;                /* its NUMA node; -1: unknown */
};
