/* SPDX-License-Identifier: MIT */
/* A submission's licenses and counted node resources, checked and made
 * canonical (docs/RESOURCES.md, "Licenses", "Counted node resources"). */
#ifndef QPOOL_SUBMIT_RES_H
#define QPOOL_SUBMIT_RES_H

#include <jansson.h>
#include <stddef.h>

#include "config.h"
#include "pool.h"

/* Slurm's -L text in msg's "licenses" and PBS's -l NAME=N that qsub
 * recorded as attrs' Resource_List.NAME where NAME is one of c's
 * [licenses]: each the pool's, no more than it has. Their canonical text
 * into canon ("": none); -EINVAL with why in buf (the front ends match
 * "license"). */
int submit_licenses_check(const struct config *c, json_t *msg, json_t *attrs, char *canon, size_t clen,
			  char *buf, size_t len);

/* msg's "node_res" (sbatch --gres=nvme:1, --tmp) and, of a constraint
 * that is an '&' list, each term NAME or NAME=VALUE whose NAME is a
 * counted resource of a known node and no node's feature (taken out of
 * msg's constraint). Some known node must have each as much; a job of
 * chunks gets place=scatter (pack is refused). Canonical text into canon
 * ("": none); -EINVAL with why ("node resource") in buf. */
int submit_noderes_check(struct pool *pool, json_t *msg, char *canon, size_t clen, char *buf, size_t len);

#endif
