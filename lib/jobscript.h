/* SPDX-License-Identifier: MIT */
/* qsub's job description: options and #QP/#PBS directives into one struct, purely. */
#ifndef QPOOL_JOBSCRIPT_H
#define QPOOL_JOBSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define JOBSPEC_NAME_MAX 255      /* bytes in a job name */
#define JOBSPEC_NCPUS_MAX 1000000 /* sanity bound; the server checks the queue */

/* A -v entry: value NULL means "take it from qsub's environment". */
struct jobspec_var {
	char *name;
	char *value;
};

/* What qsub options and directives say. Tri-state members are -1 when
 * unset; strings are NULL when unset; all strings are owned. */
struct jobspec {
	char *name;                 /* -N */
	char *queue;                /* -q */
	int64_t ncpus;              /* -l ncpus=N, -1 unset */
	int64_t mem;                /* -l mem=SIZE (bytes), -1 unset */
	int64_t walltime;           /* -l walltime=TIME (seconds), -1 unset */
	char *stdout_path;          /* -o, as given (may be relative) */
	char *stderr_path;          /* -e */
	int join;                   /* -j oe: 1, -j n: 0, -1 unset */
	int hold;                   /* -h: 1, -1 unset */
	int rerunnable;             /* -r y|n: 1|0, -1 unset */
	int export_all;             /* -V: 1, -1 unset */
	struct jobspec_var *vars;   /* -v, in the order given */
	size_t n_vars;
};

/* Sets every member to "unset". */
void jobspec_init(struct jobspec *js);

/* Frees what js owns and re-initialises it. */
void jobspec_clear(struct jobspec *js);

/* True when opt ('N', 'q', 'l', 'o', 'e', 'j', 'v', 'r') takes an argument;
 * false for the flags 'h' and 'V' and for unknown letters. */
bool jobspec_option_has_arg(int opt);

/* Applies one option as qsub and directives spell it: opt is the letter,
 * arg its argument (NULL for -h and -V). Later options override earlier
 * ones; -l and -v accumulate. Returns 0, -EINVAL with err naming the
 * offending text (e.g. "mem=12Q: not a size (e.g. 512M, 8G)"), -ENOMEM. */
int jobspec_option(struct jobspec *js, int opt, const char *arg, struct error *err);

/* Overrides dst with every member set in src (command line over
 * directives); src's -v entries are appended after dst's. 0 or -ENOMEM. */
int jobspec_merge(struct jobspec *dst, const struct jobspec *src);

/* Checks that text[0..len) is a job script: non-empty, no NUL byte, valid
 * UTF-8. Returns 0 or -EINVAL with err like "line 3: not valid UTF-8". */
int jobscript_check(const char *text, size_t len, struct error *err);

/* True when s[0..len) is valid UTF-8 (no overlong forms, no surrogates,
 * nothing above U+10FFFF: what JSON strings accept). */
bool utf8_valid(const char *s, size_t len);

/* Reads the directives at the top of text into js (which the caller has
 * initialised). A directive is a line starting with "#QP" or "#PBS"
 * followed by blanks and options, e.g. `#PBS -l ncpus=4,mem=8G -N "my job"`;
 * words split on blanks, with '...' and "..." quoting and \ escapes, and an
 * unquoted word starting with '#' begins a comment. Reading stops at the
 * first line (after an optional #! line) that is neither blank nor a
 * comment. Returns 0 or -EINVAL with err "line N: ...". */
int jobscript_parse(const char *text, size_t len, struct jobspec *js, struct error *err);

#endif
