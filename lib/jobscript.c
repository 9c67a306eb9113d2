/* SPDX-License-Identifier: MIT */
/* Job options and script directives: a pure parser, text in, struct jobspec out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobscript.h"
#include "parse.h"

#define DIRECTIVE_WORDS_MAX 64

void jobspec_init(struct jobspec *js)
{
	*js = (struct jobspec){
		.ncpus = -1, .mem = -1, .walltime = -1,
		.join = -1, .hold = -1, .rerunnable = -1, .export_all = -1,
	};
}

void jobspec_clear(struct jobspec *js)
{
	free(js->name);
	free(js->queue);
	free(js->stdout_path);
	free(js->stderr_path);
	for (size_t i = 0; i < js->n_vars; i++) {
		free(js->vars[i].name);
		free(js->vars[i].value);
	}
	free(js->vars);
	jobspec_init(js);
}

bool jobspec_option_has_arg(int opt)
{
	return opt && strchr("Nqloejvr", opt);
}

bool utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		unsigned char c = *p;
		unsigned n;
		uint32_t cp, min;

		if (c < 0x80) {
			p++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			n = 1, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			n = 2, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			n = 3, cp = c & 0x07, min = 0x10000;
		} else {
			return false;
		}
		if ((size_t)(end - p) <= n)
			return false;
		for (unsigned i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		p += n + 1;
	}
	return true;
}

static int string_set(char **dst, const char *src)
{
	char *s = strdup(src);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static int text_arg_check(const char *opt, const char *what, const char *arg, struct error *err)
{
	if (!*arg)
		return error_set(err, -EINVAL, "%s: empty %s", opt, what);
	if (!utf8_valid(arg, strlen(arg)))
		return error_set(err, -EINVAL, "%s: %s is not valid UTF-8", opt, what);
	return 0;
}

static int name_set(struct jobspec *js, const char *arg, struct error *err)
{
	int r = text_arg_check("-N", "job name", arg, err);

	if (r < 0)
		return r;
	if (strchr(arg, '/'))
		return error_set(err, -EINVAL, "-N %s: a job name cannot contain '/'", arg);
	if (strlen(arg) > JOBSPEC_NAME_MAX)
		return error_set(err, -EINVAL, "-N: job name longer than %d bytes", JOBSPEC_NAME_MAX);
	return string_set(&js->name, arg);
}

/* One "key=value" of -l; item is not NUL-terminated (len bytes). */
static int resource_set(struct jobspec *js, const char *item, size_t len, struct error *err)
{
	char buf[128];
	const char *eq, *val;
	uint64_t v;
	int r;

	if (len == 0)
		return error_set(err, -EINVAL, "-l: empty resource (expected ncpus=N,mem=SIZE,walltime=TIME)");
	if (len >= sizeof(buf))
		return error_set(err, -EINVAL, "-l %.40s...: resource too long", item);
	memcpy(buf, item, len);
	buf[len] = '\0';
	eq = strchr(buf, '=');
	if (!eq)
		return error_set(err, -EINVAL, "-l %s: expected name=value", buf);
	val = eq + 1;
	if (strncmp(buf, "ncpus=", 6) == 0) {
		size_t nd = strspn(val, "0123456789");

		v = nd && nd == strlen(val) && nd <= 7 ? strtoull(val, NULL, 10) : 0;
		if (v == 0 || v > JOBSPEC_NCPUS_MAX)
			return error_set(err, -EINVAL, "%s: not a number of CPUs (1 to %d)", buf,
					 JOBSPEC_NCPUS_MAX);
		js->ncpus = (int64_t)v;
	} else if (strncmp(buf, "mem=", 4) == 0) {
		r = size_parse(val, &v);
		if (r == -ERANGE || (r == 0 && v > INT64_MAX))
			return error_set(err, -EINVAL, "%s: size too large", buf);
		if (r < 0)
			return error_set(err, -EINVAL, "%s: not a size (e.g. 512M, 8G)", buf);
		js->mem = (int64_t)v;
	} else if (strncmp(buf, "walltime=", 9) == 0) {
		r = duration_parse(val, &v);
		if (r == -ERANGE || (r == 0 && v > INT64_MAX))
			return error_set(err, -EINVAL, "%s: time too large", buf);
		if (r < 0)
			return error_set(err, -EINVAL, "%s: not a time (e.g. 01:30:00)", buf);
		js->walltime = (int64_t)v;
	} else {
		return error_set(err, -EINVAL, "-l %s: unknown resource '%.*s' (known: ncpus, mem, walltime)",
				 buf, (int)(eq - buf), buf);
	}
	return 0;
}

static int resources_set(struct jobspec *js, const char *arg, struct error *err)
{
	const char *p = arg;
	int r;

	for (;;) {
		size_t n = strcspn(p, ",");

		r = resource_set(js, p, n, err);
		if (r < 0)
			return r;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

static bool var_name_valid(const char *s, size_t len)
{
	if (len == 0 || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

static int var_add(struct jobspec *js, const char *name, size_t name_len, const char *value)
{
	struct jobspec_var *v = realloc(js->vars, (js->n_vars + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	js->vars = v;
	v = &js->vars[js->n_vars];
	v->name = strndup(name, name_len);
	v->value = value ? strdup(value) : NULL;
	if (!v->name || (value && !v->value)) {
		free(v->name);
		free(v->value);
		return -ENOMEM;
	}
	js->n_vars++;
	return 0;
}

/* -v A,B=x,C=: the value runs to the next comma, as in PBS. */
static int vars_set(struct jobspec *js, const char *arg, struct error *err)
{
	const char *p = arg;
	int r;

	if (!utf8_valid(arg, strlen(arg)))
		return error_set(err, -EINVAL, "-v: not valid UTF-8");
	for (;;) {
		size_t n = strcspn(p, ","), name_len = strcspn(p, ",=");
		char *value = NULL;

		if (!var_name_valid(p, name_len))
			return error_set(err, -EINVAL, "-v %.*s: not a variable name", (int)n, p);
		if (name_len < n) {
			value = strndup(p + name_len + 1, n - name_len - 1);
			if (!value)
				return -ENOMEM;
		}
		r = var_add(js, p, name_len, value);
		free(value);
		if (r < 0)
			return r;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

int jobspec_option(struct jobspec *js, int opt, const char *arg, struct error *err)
{
	int r;

	switch (opt) {
	case 'N':
		return name_set(js, arg, err);
	case 'q':
		r = text_arg_check("-q", "queue name", arg, err);
		return r < 0 ? r : string_set(&js->queue, arg);
	case 'l':
		return resources_set(js, arg, err);
	case 'o':
		r = text_arg_check("-o", "path", arg, err);
		return r < 0 ? r : string_set(&js->stdout_path, arg);
	case 'e':
		r = text_arg_check("-e", "path", arg, err);
		return r < 0 ? r : string_set(&js->stderr_path, arg);
	case 'j':
		if (strcmp(arg, "oe") == 0)
			js->join = 1;
		else if (strcmp(arg, "n") == 0)
			js->join = 0;
		else
			return error_set(err, -EINVAL, "-j %s: expected oe (join stderr into stdout) or n", arg);
		return 0;
	case 'v':
		return vars_set(js, arg, err);
	case 'V':
		js->export_all = 1;
		return 0;
	case 'h':
		js->hold = 1;
		return 0;
	case 'r':
		if (strcmp(arg, "y") == 0)
			js->rerunnable = 1;
		else if (strcmp(arg, "n") == 0)
			js->rerunnable = 0;
		else
			return error_set(err, -EINVAL, "-r %s: expected y or n", arg);
		return 0;
	default:
		if (opt > ' ' && opt < 0x7f)
			return error_set(err, -EINVAL, "unknown option -%c", opt);
		return error_set(err, -EINVAL, "unknown option");
	}
}

static int merge_string(char **dst, const char *src)
{
	return src ? string_set(dst, src) : 0;
}

int jobspec_merge(struct jobspec *dst, const struct jobspec *src)
{
	int r = 0;

	r = r ?: merge_string(&dst->name, src->name);
	r = r ?: merge_string(&dst->queue, src->queue);
	r = r ?: merge_string(&dst->stdout_path, src->stdout_path);
	r = r ?: merge_string(&dst->stderr_path, src->stderr_path);
	if (r < 0)
		return r;
	if (src->ncpus >= 0)
		dst->ncpus = src->ncpus;
	if (src->mem >= 0)
		dst->mem = src->mem;
	if (src->walltime >= 0)
		dst->walltime = src->walltime;
	if (src->join >= 0)
		dst->join = src->join;
	if (src->hold >= 0)
		dst->hold = src->hold;
	if (src->rerunnable >= 0)
		dst->rerunnable = src->rerunnable;
	if (src->export_all >= 0)
		dst->export_all = src->export_all;
	for (size_t i = 0; i < src->n_vars; i++) {
		const struct jobspec_var *v = &src->vars[i];

		r = var_add(dst, v->name, strlen(v->name), v->value);
		if (r < 0)
			return r;
	}
	return 0;
}

int jobscript_check(const char *text, size_t len, struct error *err)
{
	const char *nul;
	size_t line = 1, start = 0;

	if (len == 0)
		return error_set(err, -EINVAL, "script is empty");
	nul = memchr(text, '\0', len);
	if (nul) {
		for (const char *p = text; p < nul; p++)
			line += *p == '\n';
		return error_set(err, -EINVAL, "line %zu: NUL byte: a script must be text", line);
	}
	/* Line by line, so the message can say where. */
	while (start < len) {
		const char *nl = memchr(text + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - text) : len;

		if (!utf8_valid(text + start, end - start))
			return error_set(err, -EINVAL, "line %zu: not valid UTF-8: a script must be text", line);
		start = end + 1;
		line++;
	}
	return 0;
}

/* Splits a directive's rest into words, in place into buf (which holds at
 * least len + 1 bytes). Returns the number of words, or -EINVAL. */
static int words_split(const char *s, size_t len, char *buf, char **words, struct error *err)
{
	const char *end = s + len;
	char *out = buf;
	int n = 0;

	for (;;) {
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		if (s == end || *s == '#')
			return n;
		if (n == DIRECTIVE_WORDS_MAX)
			return error_set(err, -EINVAL, "too many words");
		words[n++] = out;
		while (s < end && *s != ' ' && *s != '\t') {
			char q = *s;

			if (q == '\'' || q == '"') {
				for (s++; s < end && *s != q; s++) {
					if (q == '"' && *s == '\\' && s + 1 < end &&
					    (s[1] == '"' || s[1] == '\\'))
						s++;
					*out++ = *s;
				}
				if (s == end)
					return error_set(err, -EINVAL, "unterminated %c quote", q);
				s++;
			} else if (q == '\\' && s + 1 < end) {
				*out++ = s[1];
				s += 2;
			} else {
				*out++ = *s++;
			}
		}
		*out++ = '\0';
	}
}

/* Applies the options of one directive (the text after #QP / #PBS). */
static int directive_apply(struct jobspec *js, const char *s, size_t len, struct error *err)
{
	char *words[DIRECTIVE_WORDS_MAX];
	char *buf = malloc(len + DIRECTIVE_WORDS_MAX + 1);
	int n, r = 0;

	if (!buf)
		return -ENOMEM;
	n = words_split(s, len, buf, words, err);
	if (n < 0) {
		r = n;
		goto done;
	}
	for (int i = 0; i < n && r == 0; i++) {
		const char *w = words[i];

		if (w[0] != '-' || w[1] == '\0' || w[1] == '-') {
			r = error_set(err, -EINVAL, "unexpected '%.60s' (a directive holds qsub options)", w);
			goto done;
		}
		/* Like getopt: flags may be grouped, an argument may be attached. */
		for (const char *o = w + 1; *o && r == 0; o++) {
			if (!jobspec_option_has_arg(*o)) {
				if (*o != 'h' && *o != 'V') {
					r = error_set(err, -EINVAL, "unknown option -%c", *o);
					goto done;
				}
				r = jobspec_option(js, *o, NULL, err);
				continue;
			}
			if (o[1]) {
				r = jobspec_option(js, *o, o + 1, err);
			} else if (i + 1 < n) {
				r = jobspec_option(js, *o, words[++i], err);
			} else {
				r = error_set(err, -EINVAL, "option -%c needs an argument", *o);
			}
			break;
		}
	}
done:
	free(buf);
	return r;
}

static bool line_is_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

static bool line_is_comment(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i < len && s[i] == '#';
}

/* The length of the directive prefix this line starts with, or 0. */
static size_t directive_prefix(const char *s, size_t len)
{
	static const char *prefixes[] = { "#QP", "#PBS" };

	for (size_t i = 0; i < 2; i++) {
		size_t n = strlen(prefixes[i]);

		if (len >= n && memcmp(s, prefixes[i], n) == 0 &&
		    (len == n || s[n] == ' ' || s[n] == '\t' || s[n] == '\r'))
			return n;
	}
	return 0;
}

int jobscript_parse(const char *text, size_t len, struct jobspec *js, struct error *err)
{
	size_t start = 0, line = 0;
	struct error e;
	int r;

	while (start < len) {
		const char *s = text + start, *nl = memchr(s, '\n', len - start);
		size_t n = nl ? (size_t)(nl - s) : len - start, p;

		line++;
		start += n + 1;
		if (line == 1 && n >= 2 && s[0] == '#' && s[1] == '!')
			continue;
		if (n > 0 && s[n - 1] == '\r')
			n--;
		if (line_is_blank(s, n))
			continue;
		if (!line_is_comment(s, n))
			break;
		p = directive_prefix(s, n);
		if (!p)
			continue;
		r = directive_apply(js, s + p, n - p, &e);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			return error_set(err, r, "line %zu: %s", line, e.text);
	}
	return 0;
}
