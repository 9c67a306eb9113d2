/* SPDX-License-Identifier: MIT */
/* pbsqmgr_parse: one PBS qmgr directive into verb, object, name, attribute and value. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pbsqmgr.h"

#define MAX_WORDS 8

/* Splits line into words: blanks separate, '=' is a word of its own,
 * "..." and '...' quote. Returns the count, or -1 when too many or too
 * long, -2 for an unterminated quote. */
static int words_split(const char *line, char words[][256])
{
	int n = 0;

	for (const char *p = line; *p;) {
		size_t len = 0;

		if (*p == ' ' || *p == '\t' || *p == '\n') {
			p++;
			continue;
		}
		if (n == MAX_WORDS)
			return -1;
		if (*p == '=') {
			words[n][len++] = *p++;
		} else {
			while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '=') {
				if (*p == '"' || *p == '\'') {
					char q = *p++;

					while (*p && *p != q) {
						if (len + 1 >= 256)
							return -1;
						words[n][len++] = *p++;
					}
					if (!*p)
						return -2;
					p++;
					continue;
				}
				if (len + 1 >= 256)
					return -1;
				words[n][len++] = *p++;
			}
		}
		words[n++][len] = '\0';
	}
	return n;
}

/* word is name or an abbreviation of it at least min characters long. */
static int abbrev(const char *word, const char *name, size_t min)
{
	size_t n = strlen(word);

	return n >= min && n <= strlen(name) && strncmp(word, name, n) == 0;
}

static int copy(char *dst, size_t len, const char *src, struct error *err, const char *what)
{
	if (strlen(src) >= len)
		return error_set(err, -EINVAL, "%s %.40s...: too long", what, src);
	snprintf(dst, len, "%s", src);
	return 0;
}

int pbsqmgr_parse(const char *line, struct pbsqmgr_cmd *ret, struct error *err)
{
	static const struct {
		const char *name;
		enum pbsqmgr_verb verb;
	} verbs[] = {
		{ "list", PBSQMGR_LIST }, { "print", PBSQMGR_PRINT }, { "set", PBSQMGR_SET },
		{ "unset", PBSQMGR_UNSET }, { "create", PBSQMGR_CREATE }, { "delete", PBSQMGR_DELETE },
	};
	char words[MAX_WORDS][256];
	int n = words_split(line, words), eq = -1, rest;
	size_t v;

	memset(ret, 0, sizeof(*ret));
	if (n == -2)
		return error_set(err, -EINVAL, "%s: a quote is not closed", line);
	if (n < 0)
		return error_set(err, -EINVAL, "directive too long");
	if (n < 2)
		return error_set(err, -EINVAL, "'%s': not VERB OBJECT [NAME] [ATTR = VALUE]", line);
	for (v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
		if (abbrev(words[0], verbs[v].name, 1))
			break;
	if (v == sizeof(verbs) / sizeof(verbs[0]))
		return error_set(err, -EINVAL, "%s: not a qmgr verb (list, print, set, unset, create, delete)",
				 words[0]);
	ret->verb = verbs[v].verb;
	if (abbrev(words[1], "server", 1))
		ret->object = PBSQMGR_SERVER;
	else if (abbrev(words[1], "queue", 1))
		ret->object = PBSQMGR_QUEUE;
	else if (abbrev(words[1], "node", 1))
		ret->object = PBSQMGR_NODE;
	else if (abbrev(words[1], "hook", 1))
		ret->object = PBSQMGR_HOOK;
	else if (abbrev(words[1], "account", 1))
		ret->object = PBSQMGR_ACCOUNT;
	else
		return error_set(err, -EINVAL, "%s: not a qmgr object (server, queue, node, hook, account)", words[1]);
	for (int i = 2; i < n; i++)
		if (strcmp(words[i], "=") == 0 && eq < 0)
			eq = i;
	if (eq >= 0) {
		if (ret->verb != PBSQMGR_SET)
			return error_set(err, -EINVAL, "'=' only goes with set");
		if (eq == 2 || eq + 2 != n || eq > 4)
			return error_set(err, -EINVAL, "set takes [NAME] ATTR = VALUE");
		if (copy(ret->attr, sizeof(ret->attr), words[eq - 1], err, "attribute") < 0 ||
		    copy(ret->value, sizeof(ret->value), words[eq + 1], err, "value") < 0)
			return -EINVAL;
		rest = eq - 1;   /* words[2..rest) name the object */
	} else if (ret->verb == PBSQMGR_SET) {
		return error_set(err, -EINVAL, "set needs ATTR = VALUE");
	} else if (ret->verb == PBSQMGR_UNSET) {
		if (n < 3 || n > 4)
			return error_set(err, -EINVAL, "unset takes [NAME] ATTR");
		if (copy(ret->attr, sizeof(ret->attr), words[n - 1], err, "attribute") < 0)
			return -EINVAL;
		rest = n - 1;
	} else {
		rest = n;
	}
	if (rest > 3)
		return error_set(err, -EINVAL, "%s: one name at most", words[3]);
	if (rest == 3 && copy(ret->name, sizeof(ret->name), words[2], err, "name") < 0)
		return -EINVAL;
	return 0;
}
