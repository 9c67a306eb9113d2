/* SPDX-License-Identifier: MIT */
/* A script that is one plain command, run without its shell (wrappers/direct.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gded.h"
#include "unit.h"

/* Parses script; returns argc and the words joined by '|' in out, the
 * #! shell in *ret_interp (a copy, or NULL). */
static int simple(const char *script, char *out, size_t len, const char **ret_interp)
{
	static char copy[64];
	size_t n = strlen(script);
	char *text = malloc(n + 1), *argv[8], *interp, *arg;
	int argc;

	memcpy(text, script, n);
	argc = gded_script_simple(text, n, &interp, &arg, argv, 8);
	*ret_interp = interp;
	out[0] = '\0';
	for (int i = 0; i < argc; i++) {
		if (i)
			strncat(out, "|", len - strlen(out) - 1);
		strncat(out, argv[i], len - strlen(out) - 1);
	}
	if (argc)
		CU_ASSERT_PTR_NULL(argv[argc]);
	if (*ret_interp) {
		snprintf(copy, sizeof(copy), "%s", *ret_interp);
		*ret_interp = copy;
	}
	free(text);
	return argc;
}

static void test_direct_plain(void)
{
	static const struct {
		const char *script, *words, *interp;
	} rows[] = {
		{ "true\n", "true", NULL },
		{ "true", "true", NULL },
		{ "/bin/hostname\n", "/bin/hostname", NULL },
		{ "  ./a.out  -n 4\tin.dat \n", "./a.out|-n|4|in.dat", NULL },
		{ "#!/bin/bash\n#PBS -l select=1:ncpus=1\n#PBS -N x\n\nsleep 30\n\n", "sleep|30", "/bin/bash" },
		{ "#!/bin/sh  \nhostname # where\n# done\n", "hostname", "/bin/sh" },
		{ "echo hello world\n", "echo|hello|world", NULL },
		{ "false\n", "false", NULL },
		{ "python3 run.py --steps=10 a,b:c+d@e%f\n", "python3|run.py|--steps=10|a,b:c+d@e%f", NULL },
	};
	const char *interp;
	char out[256];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (simple(rows[i].script, out, sizeof(out), &interp) == 0)
			fprintf(stderr, "\n  row %zu (%s) read as needing its shell\n", i, rows[i].script);
		CU_ASSERT_STRING_EQUAL(out, rows[i].words);
		if (rows[i].interp) {
			CU_ASSERT_STRING_EQUAL(interp ? interp : "(none)", rows[i].interp);
		} else {
			CU_ASSERT_PTR_NULL(interp);
		}
	}
}

/* Each of these needs its shell: quoting, expansion, globbing, an
 * operator, a second command, a builtin, an option to the shell. */
static void test_direct_needs_shell(void)
{
	static const char *const rows[] = {
		"", "\n# only a comment\n", "#!/bin/bash\n",
		"echo $HOME\n", "echo 'a b'\n", "echo \"a\"\n", "ls *.c\n", "ls ~\n", "a.out > log\n",
		"a.out < in\n", "true && false\n", "true; false\n", "sleep 1 &\n", "a | b\n",
		"echo a\\\nb\n", "f() { :; }\n", "{ true; }\n", "(true)\n", "echo `date`\n",
		"echo $(date)\n", "x=1\n", "X=1 env\n", "true\nfalse\n", "hostname\nhostname\n",
		"cd /tmp\n", "exit 3\n", "exec sleep 1\n", ". ./env.sh\n", "source env.sh\n",
		"export A=1\n", "ulimit -c 0\n", "umask 077\n", "kill 1\n", "echo -e a\n",
		"true x\n", "false --help\n", "if\n", "time sleep 1\n", "printf a\n", "test -f x\n",
		"[ -f x ]\n", "pwd\n", "wait\n", "set -e\n", "read x\n", "trap '' TERM\n",
		"true\r\n", "a#b\n", "echo a!b\n", "echo {a,b}\n", "echo a?\n", "echo [ab]\n",
		"#!/bin/bash -x\ntrue\n", "#!/usr/bin/python3\nprint(1)\n", "#!/bin/zsh\ntrue\n",
		"#!/bin/bash\r\ntrue\n", "hostname\n#!/bin/sh\nx y\n",
		"a b c d e f g h i\n",   /* more words than argv holds */
	};
	const char *interp;
	char out[256];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int argc = simple(rows[i], out, sizeof(out), &interp);

		if (argc != 0)
			fprintf(stderr, "\n  row %zu (%s) read as plain: %s\n", i, rows[i], out);
		CU_ASSERT_EQUAL(argc, 0);
	}
}

/* A NUL in the script: bash refuses it; the words would stop at it. */
static void test_direct_nul(void)
{
	char text[] = "true\0rm -rf x\n", *argv[8], *interp, *arg;

	CU_ASSERT_EQUAL(gded_script_simple(text, sizeof(text) - 1, &interp, &arg, argv, 8), 0);
}

/* The #! line comes back whatever the answer: gded execs it when the
 * script keeps its shell. */
static void test_direct_shebang_kept(void)
{
	static const struct {
		const char *script, *interp, *arg;
		int argc;
	} rows[] = {
		{ "#!/bin/bash -x\ntrue\n", "/bin/bash", "-x", 0 },
		{ "#!/usr/bin/python3\nprint(1)\n", "/usr/bin/python3", NULL, 0 },
		{ "#! /usr/bin/env  python3 \nprint(1)\n", "/usr/bin/env", "python3", 0 },
		{ "#!/bin/sh\nhostname\n", "/bin/sh", NULL, 1 },
		{ "#!/bin/sh\nls *\n", "/bin/sh", NULL, 0 },
		{ "#!/bin/bash\r\ntrue\n", "/bin/bash", NULL, 0 },
		{ "true\n", NULL, NULL, 1 },
		{ "#!sh\ntrue\n", NULL, NULL, 1 },   /* not absolute: a comment */
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t n = strlen(rows[i].script);
		char *text = malloc(n + 1), *argv[8], *interp, *arg;

		memcpy(text, rows[i].script, n);
		CU_ASSERT_EQUAL(gded_script_simple(text, n, &interp, &arg, argv, 8), rows[i].argc);
		if (rows[i].interp) {
			CU_ASSERT_STRING_EQUAL(interp ? interp : "(none)", rows[i].interp);
		} else {
			CU_ASSERT_PTR_NULL(interp);
		}
		if (rows[i].arg) {
			CU_ASSERT_STRING_EQUAL(arg ? arg : "(none)", rows[i].arg);
		} else {
			CU_ASSERT_PTR_NULL(arg);
		}
		free(text);
	}
}

static void test_direct_shells(void)
{
	CU_ASSERT(gded_shell_is_plain("/bin/bash"));
	CU_ASSERT(gded_shell_is_plain("/bin/sh"));
	CU_ASSERT(gded_shell_is_plain("/usr/bin/dash"));
	CU_ASSERT(!gded_shell_is_plain("/bin/zsh"));
	CU_ASSERT(!gded_shell_is_plain("/bin/tcsh"));
	CU_ASSERT(!gded_shell_is_plain("bash"));
	CU_ASSERT(!gded_shell_is_plain(NULL));
}

static void test_direct_env_refused(void)
{
	char *ok[] = { "PATH=/bin", "HOME=/h", "BASHX=1", "MY_BASH_ENV=1", NULL };
	char *fn[] = { "PATH=/bin", "BASH_FUNC_hostname%%=() {  echo no\n}", NULL };
	char *benv[] = { "BASH_ENV=/h/.rc", NULL };
	char *opts[] = { "SHELLOPTS=xtrace", NULL };
	char *bopts[] = { "BASHOPTS=extglob", NULL };
	char *ign[] = { "EXECIGNORE=/usr/bin/*", NULL };

	CU_ASSERT(gded_direct_env_ok(ok));
	CU_ASSERT(!gded_direct_env_ok(fn));
	CU_ASSERT(!gded_direct_env_ok(benv));
	CU_ASSERT(!gded_direct_env_ok(opts));
	CU_ASSERT(!gded_direct_env_ok(bopts));
	CU_ASSERT(!gded_direct_env_ok(ign));
}

static const char *env_get(char **env, const char *name)
{
	size_t len = strlen(name);
	const char *v = NULL;

	for (char **p = env; *p; p++)
		if (strncmp(*p, name, len) == 0 && (*p)[len] == '=') {
			CU_ASSERT_PTR_NULL(v);   /* once */
			v = *p + len + 1;
		}
	return v;
}

/* What bash and dash add to the program's environment (checked against
 * `env -i ... bash script` here: PWD, SHLVL, _ last; dash PWD only). */
static void test_direct_env_build(void)
{
	static const struct {
		const char *in, *out;
	} lv[] = { { NULL, "1" }, { "SHLVL=4", "5" }, { "SHLVL=x", "1" }, { "SHLVL=-3", "1" },
		   { "SHLVL=999", "1" }, { "SHLVL=998", "999" } };
	char *base[] = { "PATH=/bin", "PWD=/old", "_=/x", NULL, NULL }, **env, *u;
	char *dash_in[] = { "PATH=/bin", "SHLVL=7", "_=/x", NULL };

	for (size_t i = 0; i < sizeof(lv) / sizeof(lv[0]); i++) {
		base[3] = (char *)lv[i].in;
		env = gded_direct_env(base, "/work/dir", true, 64, &u);
		CU_ASSERT_PTR_NOT_NULL_FATAL(env);
		CU_ASSERT_STRING_EQUAL(env_get(env, "SHLVL"), lv[i].out);
		CU_ASSERT_STRING_EQUAL(env_get(env, "PWD"), "/work/dir");
		CU_ASSERT_STRING_EQUAL(env_get(env, "PATH"), "/bin");
		CU_ASSERT_PTR_NOT_NULL_FATAL(u);
		strcpy(u, "_=/usr/bin/hostname");
		CU_ASSERT_STRING_EQUAL(env_get(env, "_"), "/usr/bin/hostname");
		free(env);
	}
	env = gded_direct_env(dash_in, "/w", false, 64, &u);
	CU_ASSERT_PTR_NOT_NULL_FATAL(env);
	CU_ASSERT_PTR_NULL(u);
	CU_ASSERT_STRING_EQUAL(env_get(env, "PWD"), "/w");
	CU_ASSERT_STRING_EQUAL(env_get(env, "SHLVL"), "7");
	CU_ASSERT_STRING_EQUAL(env_get(env, "_"), "/x");
	free(env);
}

static const struct unit_test direct_tests[] = {
	{ "plain commands", test_direct_plain },
	{ "what needs the shell", test_direct_needs_shell },
	{ "a NUL in the script", test_direct_nul },
	{ "the #! line comes back either way", test_direct_shebang_kept },
	{ "plain shells", test_direct_shells },
	{ "variables that keep the shell", test_direct_env_refused },
	{ "the environment the shell would give", test_direct_env_build },
	{ NULL, NULL },
};

UNIT_SUITE(direct, direct_tests);
