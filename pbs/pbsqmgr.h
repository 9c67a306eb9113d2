/* SPDX-License-Identifier: MIT */
/* PBS qmgr directives ("set queue batch enabled = False"), parsed. */
#ifndef QPOOL_PBSQMGR_H
#define QPOOL_PBSQMGR_H

#include "error.h"

enum pbsqmgr_verb {
	PBSQMGR_LIST, PBSQMGR_PRINT, PBSQMGR_SET, PBSQMGR_UNSET, PBSQMGR_CREATE, PBSQMGR_DELETE,
};

enum pbsqmgr_object { PBSQMGR_SERVER, PBSQMGR_QUEUE, PBSQMGR_NODE, PBSQMGR_HOOK, PBSQMGR_ACCOUNT };

struct pbsqmgr_cmd {
	enum pbsqmgr_verb verb;
	enum pbsqmgr_object object;
	char name[128];     /* the queue, node or server named; "" for none (all) */
	char attr[128];     /* set/unset: the attribute; "" otherwise */
	char value[256];    /* set: the value, quotes removed */
};

/* Parses one directive: VERB OBJECT [NAME] [ATTR [= VALUE]], where VERB
 * is list, print, set, unset, create or delete (or l, p, s, u, c, d),
 * OBJECT is server, queue, node, hook or account (s, q, n, h, a), VALUE may be quoted and
 * "ATTR=VALUE" may be written without blanks. set needs "ATTR = VALUE",
 * unset an ATTR. Returns 0, or -EINVAL with err naming what is wrong. */
int pbsqmgr_parse(const char *line, struct pbsqmgr_cmd *ret, struct error *err);

#endif
