/* SPDX-License-Identifier: MIT */
/* A script that is one plain command: run it without its shell, as the shell would have. */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gded.h"

/* The shells whose start-up, given a script and none of the variables
 * gded_direct_env_ok refuses, reads nothing and runs a plain command
 * exactly as execve would (bash(1) INVOCATION: a non-interactive bash
 * reads only $BASH_ENV; dash(1): $ENV only when interactive). zsh reads
 * ~/.zshenv and csh ~/.cshrc for every script: those keep their shell. */
static const char *const posix_shells[] = {
	"/bin/sh", "/usr/bin/sh", "/bin/bash", "/usr/bin/bash", "/bin/dash", "/usr/bin/dash", NULL,
};

/* Words that a shell reads as something other than a program's name:
 * bash's reserved words and builtins (bash 5.2 `enable -a`, `compgen -k`)
 * and dash's. A builtin may differ from the program of the same name
 * (echo, kill, test, pwd) or act on the shell itself (cd, exec, .). */
static const char *const shell_words[] = {
	".", "alias", "bg", "bind", "break", "builtin", "caller", "case", "cd", "command",
	"compgen", "complete", "compopt", "continue", "coproc", "declare", "dirs", "disown",
	"do", "done", "echo", "elif", "else", "enable", "esac", "eval", "exec", "exit",
	"export", "false", "fc", "fg", "fi", "for", "function", "getopts", "hash", "help",
	"history", "if", "in", "jobs", "kill", "let", "local", "logout", "mapfile", "popd",
	"printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "select", "set",
	"shift", "shopt", "source", "suspend", "test", "then", "time", "times", "trap", "true",
	"type", "typeset", "ulimit", "umask", "unalias", "unset", "until", "wait", "while",
	NULL,
};

static bool in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

bool gded_shell_is_plain(const char *path)
{
	return path && in_list(posix_shells, path);
}

/* Characters a word may hold and mean only itself to every shell above:
 * no quoting, expansion, globbing, redirection, operator or separator. */
static bool word_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("_./,:+=@%-", ch) != NULL);
}

/* A builtin that does what its program does, for these arguments: true
 * and false with none (the programs answer --help), echo with no option
 * (the words hold no backslash, so dash's echo and the program agree). */
static bool builtin_same(char **argv, int argc)
{
	if (strcmp(argv[0], "true") == 0 || strcmp(argv[0], "false") == 0)
		return argc == 1;
	if (strcmp(argv[0], "echo") == 0) {
		for (int i = 1; i < argc; i++)
			if (argv[i][0] == '-')
				return false;
		return true;
	}
	return false;
}

bool gded_shebang_parse(char *line, char **ret_interp, char **ret_arg)
{
	char *p, *end;

	if (line[0] != '#' || line[1] != '!')
		return false;
	end = strchr(line, '\n');
	for (p = line + 2; *p == ' ' || *p == '\t'; p++)
		;
	/* Not one: the line stays whole (a shell reads it as a comment). */
	if (!end || *p != '/')
		return false;
	*end = '\0';
	if (end > line && end[-1] == '\r')
		*--end = '\0';
	*ret_interp = p;
	p += strcspn(p, " \t");
	*ret_arg = NULL;
	if (*p) {
		*p++ = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (*p)
			*ret_arg = p;
	}
	return true;
}

int gded_script_simple(char *text, size_t len, char **ret_interp, char **ret_arg, char **argv, int max)
{
	/* bash refuses a script with a NUL in it ("cannot execute binary
	 * file"); the words below would stop at it. */
	bool nul = memchr(text, '\0', len) != NULL, seen = false, cr;
	char *p = text, *next;
	size_t first;
	int argc = 0;

	text[len] = '\0';
	first = strcspn(text, "\n");
	cr = first > 0 && text[first - 1] == '\r';
	*ret_interp = *ret_arg = NULL;
	if (gded_shebang_parse(text, ret_interp, ret_arg)) {
		/* An argument changes how the shell runs (#!/bin/bash -x);
		 * a CR (a file saved with DOS line ends) keeps the shell,
		 * which says what it makes of the other lines' CRs. */
		if (*ret_arg || cr || !gded_shell_is_plain(*ret_interp))
			return 0;
		p = text + first + 1;
	}
	if (nul)
		return 0;
	for (; *p; p = next) {
		char *eol = p + strcspn(p, "\n");

		next = *eol ? eol + 1 : eol;
		*eol = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		/* A second command, even a plain one, needs the shell to run
		 * the two in turn. */
		if (seen)
			return 0;
		seen = true;
		while (*p) {
			if (*p == ' ' || *p == '\t') {
				*p++ = '\0';
				continue;
			}
			if (*p == '#')   /* a word starting with #: a comment */
				break;
			if (!word_char(*p) || argc == max - 1)
				return 0;
			argv[argc++] = p;
			while (word_char(*p))
				p++;
			if (*p && *p != ' ' && *p != '\t')
				return 0;
		}
	}
	if (argc == 0)
		return 0;
	argv[argc] = NULL;
	/* VAR=value: an assignment, with or without a command after it. */
	if (strchr(argv[0], '='))
		return 0;
	if (in_list(shell_words, argv[0]) && !builtin_same(argv, argc))
		return 0;
	return argc;
}

/* Each of these changes how bash runs even a plain command: startup
 * code (BASH_ENV), options such as xtrace (SHELLOPTS, BASHOPTS), names
 * the PATH search skips (EXECIGNORE), an exported function that would
 * run instead of the program (BASH_FUNC_name%%). */
bool gded_direct_env_ok(char *const *envp)
{
	static const char *const refused[] = { "BASH_ENV=", "SHELLOPTS=", "BASHOPTS=", "EXECIGNORE=", NULL };

	for (char *const *e = envp; *e; e++) {
		if (strncmp(*e, "BASH_FUNC_", 10) == 0)
			return false;
		for (const char *const *r = refused; *r; r++)
			if (strncmp(*e, *r, strlen(*r)) == 0)
				return false;
	}
	return true;
}

const char *gded_direct_shell(const char *forced, const char *interp, const char *shell,
			      char *const *envp, const char **ret_path, bool *ret_bash)
{
	char real[PATH_MAX];

	/* qsub -S wins over #!, which that shell reads as a comment. */
	if (forced)
		interp = forced;
	else if (!interp)
		interp = shell;
	if (!gded_shell_is_plain(interp) || !gded_direct_env_ok(envp))
		return NULL;
	*ret_path = NULL;
	for (char *const *e = envp; *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			*ret_path = *e + 5;
	if (!*ret_path)
		return NULL;
	if (strcmp(strrchr(interp, '/'), "/sh") == 0)
		*ret_bash = realpath(interp, real) && strcmp(strrchr(real, '/'), "/bash") == 0;
	else
		*ret_bash = strcmp(strrchr(interp, '/'), "/bash") == 0;
	return interp;
}

bool gded_path_next(const char **pos, const char **ret_dir, int *ret_len)
{
	const char *d = *pos, *end;

	if (!d)
		return false;
	end = d + strcspn(d, ":");
	*ret_dir = end > d ? d : ".";
	*ret_len = end > d ? (int)(end - d) : 1;
	*pos = *end ? end + 1 : NULL;
	return true;
}

/* bash's rule (variables.c, adjust_shell_level): one more than the
 * inherited level; 0 below when it is not a number or negative; 1 again
 * past 999. */
static long shlvl_next(const char *v)
{
	char *end;
	long l;

	if (!v)
		return 1;
	l = strtol(v, &end, 10);
	if (end == v || *end || l < 0)
		l = 0;
	l++;
	return l >= 1000 ? 1 : l;
}

static bool env_is(const char *e, const char *name)
{
	size_t n = strlen(name);

	return strncmp(e, name, n) == 0 && e[n] == '=';
}

char **gded_direct_env(char *const *envp, const char *cwd, bool bash, size_t path_max,
		       char **ret_underscore)
{
	const char *shlvl = NULL;
	size_t n = 0, strs;
	char **env, *s;
	int k;

	for (char *const *e = envp; *e; e++, n++)
		if (env_is(*e, "SHLVL"))
			shlvl = *e + 6;
	strs = 4 + strlen(cwd) + 1 + (bash ? 6 + 21 + 1 + 2 + path_max + 1 : 0);
	env = malloc((n + 4) * sizeof(*env) + strs);
	if (!env)
		return NULL;
	s = (char *)(env + n + 4);
	n = 0;
	for (char *const *e = envp; *e; e++)
		if (!env_is(*e, "PWD") && !(bash && (env_is(*e, "SHLVL") || env_is(*e, "_"))))
			env[n++] = *e;
	env[n++] = s;
	k = sprintf(s, "PWD=%s", cwd);
	s += k + 1;
	*ret_underscore = NULL;
	if (bash) {
		env[n++] = s;
		k = sprintf(s, "SHLVL=%ld", shlvl_next(shlvl));
		s += k + 1;
		env[n++] = s;
		strcpy(s, "_=");
		*ret_underscore = s;
	}
	env[n] = NULL;
	return env;
}
