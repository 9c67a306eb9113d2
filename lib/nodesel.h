/* SPDX-License-Identifier: MIT */
/* Which nodes may hold a job: names it needs (-w, host=), names it must
 * not have (-x), and a feature constraint (-C, select=...:bigmem=true). */
#ifndef QPOOL_NODESEL_H
#define QPOOL_NODESEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define NODESEL_TEXT_MAX 1024      /* bytes of a constraint or a node list */
#define NODESEL_NAMES_MAX 4096     /* names of one node list, expanded */
#define NODESEL_FEATURE_MAX 64     /* bytes of one feature */

struct nodesel;

/* Checks a feature name: 1-63 bytes of letters, digits, '_', '-', '.',
 * '=', starting with a letter or digit. 0 or -EINVAL with err. */
int nodesel_feature_check(const char *name, size_t len, struct error *err);

/* Checks a node's list of features as `[node] features =` gives it:
 * names separated by commas (blanks around them ignored), into canon
 * (len bytes) with single commas and no blanks. 0 or -EINVAL with err. */
int nodesel_features_canon(const char *list, char *canon, size_t len, struct error *err);

/* Whether the canonical comma list features holds name[0..len). */
bool nodesel_features_has(const char *features, const char *name, size_t len);

/* Checks a Slurm constraint (--constraint): features joined by '&' (and)
 * and '|' (or; '&' binds tighter), parentheses, or one matching OR
 * "[a|b|c]" as the whole expression (every node of the job has the same
 * one of them). Counts ("a*2") are refused. 0 or -EINVAL with err naming
 * the fault. */
int nodesel_constraint_check(const char *text, struct error *err);

/* Makes a selection from a node list to use (hostlist form, NULL: any
 * node), a node list not to use (NULL: none) and a constraint (NULL:
 * none). -EINVAL with err for a malformed one, -ENOMEM. */
int nodesel_create(const char *nodelist, const char *exclude, const char *constraint,
		   struct nodesel **ret, struct error *err);
/* Another holder of s (a job array's subjobs share their array's);
 * nodesel_destroy frees it when the last lets go. */
struct nodesel *nodesel_ref(struct nodesel *s);
void nodesel_destroy(struct nodesel *s);

/* The matching OR's alternatives ("[a|b|c]": 3); 0 for none. */
unsigned nodesel_alternatives(const struct nodesel *s);

/* Whether a node named name with the canonical features list may hold
 * the job: not excluded, on the node list when there is one, and
 * matching the constraint (alt: which of a matching OR's alternatives,
 * counted from 0; ignored without one; -1: any of them). NULL s: true. */
bool nodesel_node_ok(const struct nodesel *s, const char *name, const char *features, int alt);

/* Whether a node named name may hold the job by names alone. */
bool nodesel_name_ok(const struct nodesel *s, const char *name);

/* A hash of what s selects (its names and constraint text): selections
 * with equal keys select the same nodes (but for a collision, 2^-64). */
uint64_t nodesel_key(const struct nodesel *s);

/* The selection's texts as kept with the job: which 0 the node list,
 * 1 the excluded nodes (both compressed, "n[1-3]"), 2 the constraint as
 * given; into buf (len bytes). False when s has none of it. */
bool nodesel_text(const struct nodesel *s, int which, char *buf, size_t len);

/* The node list's names (sorted, once each), or 0 with none. */
size_t nodesel_required(const struct nodesel *s, const char *const **ret_names);
/* The excluded names. */
size_t nodesel_excluded(const struct nodesel *s, const char *const **ret_names);

#endif
