/* SPDX-License-Identifier: MIT */
/* Node selection (lib/nodesel.h): node lists and Slurm's constraint
 * expressions, parsed once into postfix and matched per node. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "nodesel.h"
#include "sort.h"

enum op_kind { OP_FEATURE, OP_AND, OP_OR };

struct op {
	enum op_kind kind;
	unsigned off, len;       /* OP_FEATURE: the name in text */
};

#define OPS_MAX 128
#define ALTS_MAX 32

struct nodesel {
	char **req;              /* sorted, once each */
	size_t n_req;
	char **exc;
	size_t n_exc;
	char text[NODESEL_TEXT_MAX];
	struct op ops[OPS_MAX];
	unsigned n_ops;
	unsigned alt_start[ALTS_MAX + 1];   /* a matching OR: alternative k is ops[alt_start[k]..alt_start[k+1]) */
	unsigned n_alts;
	bool any;                /* a constraint at all */
	unsigned refs;
	uint64_t key;            /* nodesel_key's */
};

static bool feature_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '-' || c == '.' || c == '=';
}

int nodesel_feature_check(const char *name, size_t len, struct error *err)
{
	if (len == 0)
		return error_set(err, -EINVAL, "an empty feature name");
	if (len >= NODESEL_FEATURE_MAX)
		return error_set(err, -EINVAL, "feature '%.20s...': longer than %d bytes", name,
				 NODESEL_FEATURE_MAX - 1);
	if (!feature_char(name[0]) || name[0] == '-' || name[0] == '.' || name[0] == '=')
		return error_set(err, -EINVAL, "feature '%.*s': starts with '%c' (a letter or digit first)",
				 (int)len, name, name[0]);
	for (size_t i = 0; i < len; i++)
		if (!feature_char(name[i]))
			return error_set(err, -EINVAL, "feature '%.*s': '%c' is not allowed (letters, digits, "
					 "'_', '-', '.', '=')", (int)len, name, name[i]);
	return 0;
}

int nodesel_features_canon(const char *list, char *canon, size_t len, struct error *err)
{
	size_t at = 0;
	const char *p = list;

	if (len)
		canon[0] = '\0';
	while (*p) {
		size_t n = strcspn(p, ","), a = 0, b = n;
		int r;

		while (a < b && (p[a] == ' ' || p[a] == '\t'))
			a++;
		while (b > a && (p[b - 1] == ' ' || p[b - 1] == '\t'))
			b--;
		r = nodesel_feature_check(p + a, b - a, err);
		if (r < 0)
			return r;
		if (!nodesel_features_has(canon, p + a, b - a)) {
			if (at + (b - a) + 2 > len)
				return error_set(err, -EINVAL, "features: longer than %zu bytes in all", len - 1);
			at += (size_t)snprintf(canon + at, len - at, "%s%.*s", at ? "," : "", (int)(b - a), p + a);
		}
		p += n;
		if (*p == ',' && !p[1])
			return error_set(err, -EINVAL, "features: a trailing ','");
		if (*p == ',')
			p++;
	}
	return 0;
}

bool nodesel_features_has(const char *features, const char *name, size_t len)
{
	const char *p = features;

	if (!p)
		return false;
	while (*p) {
		size_t n = strcspn(p, ",");

		if (n == len && !memcmp(p, name, len))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

/* The parser: or := and ('|' and)*; and := prim ('&' prim)*;
 * prim := FEATURE | '(' or ')'. */
struct parser {
	struct nodesel *s;
	const char *t;
	size_t at;
	unsigned depth;
	struct error *err;
};

static int emit(struct parser *ps, enum op_kind k, size_t off, size_t len)
{
	if (ps->s->n_ops == OPS_MAX)
		return error_set(ps->err, -EINVAL, "more than %d terms", OPS_MAX / 2);
	ps->s->ops[ps->s->n_ops++] = (struct op){ k, (unsigned)off, (unsigned)len };
	return 0;
}

static int parse_or(struct parser *ps);

static int parse_prim(struct parser *ps)
{
	const char *t = ps->t;
	size_t start = ps->at, n;
	int r;

	if (t[start] == '(') {
		if (++ps->depth > 16)
			return error_set(ps->err, -EINVAL, "parentheses nested too deep");
		ps->at++;
		r = parse_or(ps);
		if (r < 0)
			return r;
		if (t[ps->at] != ')')
			return error_set(ps->err, -EINVAL, "'(' without ')'");
		ps->at++;
		ps->depth--;
		if (t[ps->at] == '*')
			return error_set(ps->err, -EINVAL, "node counts ('*%s') are not supported by qpool",
					 t + ps->at + 1);
		return 0;
	}
	n = 0;
	while (feature_char(t[start + n]))
		n++;
	if (n == 0) {
		if (t[start] == '[')
			return error_set(ps->err, -EINVAL, "a matching OR [a|b] must be the whole constraint in qpool");
		if (!t[start])
			return error_set(ps->err, -EINVAL, "a feature expected at the end");
		return error_set(ps->err, -EINVAL, "a feature expected at '%.20s'", t + start);
	}
	r = nodesel_feature_check(t + start, n, ps->err);
	if (r < 0)
		return r;
	ps->at += n;
	if (t[ps->at] == '*')
		return error_set(ps->err, -EINVAL, "node counts ('%.*s*%.8s') are not supported by qpool",
				 (int)n, t + start, t + ps->at + 1);
	return emit(ps, OP_FEATURE, start, n);
}

static int parse_and(struct parser *ps)
{
	int r = parse_prim(ps);

	while (r == 0 && ps->t[ps->at] == '&') {
		ps->at++;
		r = parse_prim(ps);
		if (r == 0)
			r = emit(ps, OP_AND, 0, 0);
	}
	return r;
}

static int parse_or(struct parser *ps)
{
	int r = parse_and(ps);

	while (r == 0 && ps->t[ps->at] == '|') {
		ps->at++;
		r = parse_and(ps);
		if (r == 0)
			r = emit(ps, OP_OR, 0, 0);
	}
	return r;
}

static int constraint_parse(struct nodesel *s, const char *text, struct error *err)
{
	struct parser ps = { s, s->text, 0, 0, err };
	size_t len = strlen(text);
	int r;

	if (len == 0)
		return error_set(err, -EINVAL, "an empty constraint");
	if (len >= sizeof(s->text))
		return error_set(err, -EINVAL, "longer than %zu bytes", sizeof(s->text) - 1);
	memcpy(s->text, text, len + 1);
	s->any = true;
	if (s->text[0] == '[') {
		/* [a|b|c]: each alternative an and-term; nothing outside. */
		ps.at = 1;
		for (;;) {
			if (s->n_alts == ALTS_MAX)
				return error_set(err, -EINVAL, "more than %d alternatives in [...]", ALTS_MAX);
			s->alt_start[s->n_alts++] = s->n_ops;
			r = parse_and(&ps);
			if (r < 0)
				return r;
			if (s->text[ps.at] == '|') {
				ps.at++;
				continue;
			}
			break;
		}
		s->alt_start[s->n_alts] = s->n_ops;
		if (s->text[ps.at] != ']')
			return error_set(err, -EINVAL, "'[' without ']' (a matching OR is [a|b|...])");
		if (s->text[ps.at + 1] == '*')
			return error_set(err, -EINVAL, "node counts ('*%s') are not supported by qpool",
					 s->text + ps.at + 2);
		if (s->text[ps.at + 1])
			return error_set(err, -EINVAL, "'%s' after ']': a matching OR [a|b] must be the whole "
					 "constraint in qpool", s->text + ps.at + 1);
		return 0;
	}
	r = parse_or(&ps);
	if (r < 0)
		return r;
	if (s->text[ps.at] == '[' || s->text[ps.at] == ']')
		return error_set(err, -EINVAL, "a matching OR [a|b] must be the whole constraint in qpool");
	if (s->text[ps.at] == ')')
		return error_set(err, -EINVAL, "')' without '('");
	if (s->text[ps.at])
		return error_set(err, -EINVAL, "unexpected '%c' at '%.20s'", s->text[ps.at], s->text + ps.at);
	return 0;
}

int nodesel_constraint_check(const char *text, struct error *err)
{
	struct nodesel *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	r = constraint_parse(s, text, err);
	free(s);
	return r;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* names sorted, duplicates dropped; the new count. */
static size_t names_sort(char **names, size_t n)
{
	size_t k = 0;

	qp_sort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(names[k - 1], names[i])) {
			free(names[i]);
			continue;
		}
		names[k++] = names[i];
	}
	return k;
}

static int list_load(const char *what, const char *list, char ***ret, size_t *ret_n, struct error *err)
{
	int n;

	if (!list)
		return 0;
	if (strlen(list) >= NODESEL_TEXT_MAX)
		return error_set(err, -EINVAL, "%s: longer than %d bytes", what, NODESEL_TEXT_MAX - 1);
	n = hostlist_expand(list, NODESEL_NAMES_MAX, ret);
	if (n == -E2BIG)
		return error_set(err, -EINVAL, "%s=%s: more than %d nodes", what, list, NODESEL_NAMES_MAX);
	if (n == -ENOMEM)
		return -ENOMEM;
	if (n <= 0)
		return error_set(err, -EINVAL, "%s=%s: not a node list", what, list);
	*ret_n = names_sort(*ret, (size_t)n);
	return 0;
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (h ^ 0xff) * 1099511628211ULL;   /* a separator no name holds */
}

static uint64_t key_of(const struct nodesel *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < s->n_req; i++)
		h = fnv(h, s->req[i]);
	h = fnv(h, "\x01");
	for (size_t i = 0; i < s->n_exc; i++)
		h = fnv(h, s->exc[i]);
	h = fnv(h, "\x01");
	return s->any ? fnv(h, s->text) : h;
}

uint64_t nodesel_key(const struct nodesel *s)
{
	return s ? s->key : 0;
}

int nodesel_create(const char *nodelist, const char *exclude, const char *constraint,
		   struct nodesel **ret, struct error *err)
{
	struct nodesel *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	r = list_load("nodelist", nodelist, &s->req, &s->n_req, err);
	if (r == 0)
		r = list_load("exclude", exclude, &s->exc, &s->n_exc, err);
	if (r == 0 && constraint) {
		r = constraint_parse(s, constraint, err);
		if (r < 0) {
			char why[sizeof(err->text)];

			snprintf(why, sizeof(why), "%s", err->text);
			r = error_set(err, -EINVAL, "constraint %.64s: %s", constraint, why);
		}
	}
	s->refs = 1;
	if (r < 0) {
		nodesel_destroy(s);
		return r;
	}
	s->key = key_of(s);
	*ret = s;
	return 0;
}

struct nodesel *nodesel_ref(struct nodesel *s)
{
	if (s)
		s->refs++;
	return s;
}

void nodesel_destroy(struct nodesel *s)
{
	if (!s || --s->refs > 0)
		return;
	hostlist_free(s->req, s->n_req);
	hostlist_free(s->exc, s->n_exc);
	free(s);
}

unsigned nodesel_alternatives(const struct nodesel *s)
{
	return s ? s->n_alts : 0;
}

static bool name_in(char *const *names, size_t n, const char *name)
{
	return n && bsearch(&name, names, n, sizeof(*names), name_cmp) != NULL;
}

bool nodesel_name_ok(const struct nodesel *s, const char *name)
{
	if (!s)
		return true;
	if (name_in(s->exc, s->n_exc, name))
		return false;
	return !s->n_req || name_in(s->req, s->n_req, name);
}

/* Evaluates ops[from..to) against features. */
static bool eval(const struct nodesel *s, unsigned from, unsigned to, const char *features)
{
	bool stack[OPS_MAX];
	unsigned sp = 0;

	for (unsigned i = from; i < to; i++) {
		const struct op *o = &s->ops[i];

		switch (o->kind) {
		case OP_FEATURE:
			stack[sp++] = nodesel_features_has(features, s->text + o->off, o->len);
			break;
		case OP_AND:
			sp--;
			stack[sp - 1] = stack[sp - 1] && stack[sp];
			break;
		case OP_OR:
			sp--;
			stack[sp - 1] = stack[sp - 1] || stack[sp];
			break;
		}
	}
	return sp == 1 && stack[0];
}

bool nodesel_node_ok(const struct nodesel *s, const char *name, const char *features, int alt)
{
	if (!s)
		return true;
	if (!nodesel_name_ok(s, name))
		return false;
	if (!s->any)
		return true;
	if (!s->n_alts)
		return eval(s, 0, s->n_ops, features ? features : "");
	if (alt >= 0)
		return (unsigned)alt < s->n_alts &&
		       eval(s, s->alt_start[alt], s->alt_start[alt + 1], features ? features : "");
	for (unsigned k = 0; k < s->n_alts; k++)
		if (eval(s, s->alt_start[k], s->alt_start[k + 1], features ? features : ""))
			return true;
	return false;
}

size_t nodesel_required(const struct nodesel *s, const char *const **ret_names)
{
	*ret_names = s ? (const char *const *)s->req : NULL;
	return s ? s->n_req : 0;
}

size_t nodesel_excluded(const struct nodesel *s, const char *const **ret_names)
{
	*ret_names = s ? (const char *const *)s->exc : NULL;
	return s ? s->n_exc : 0;
}

bool nodesel_text(const struct nodesel *s, int which, char *buf, size_t len)
{
	if (!s)
		return false;
	if (which == 2) {
		if (!s->any)
			return false;
		snprintf(buf, len, "%s", s->text);
		return true;
	}
	if (!(which == 0 ? s->n_req : s->n_exc))
		return false;
	return hostlist_compress((const char *const *)(which == 0 ? s->req : s->exc), which == 0 ? s->n_req : s->n_exc,
				 buf, len) >= 0;
}
