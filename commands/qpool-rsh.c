/* SPDX-License-Identifier: MIT */
/* qpool-rsh: rsh's syntax, a command started on a node of the caller's job through qnoded. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobenv.h"
#include "taskclient.h"
#include "version.h"

static const char usage_text[] =
	"usage: qpool-rsh [--env] [-nxTtqAa46] [-l USER] [-o OPTION] [-p PORT] [-i FILE] [-F FILE] HOST\n"
	"                 COMMAND [ARG...]\n"
	"Runs COMMAND on HOST, a node of the job this process is in, inside the job's share\n"
	"of that node, as the job's owner. COMMAND and its ARGs are joined with spaces and run\n"
	"by the job's shell (-c), as rsh and ssh run a remote command. The ssh and rsh options\n"
	"are accepted and ignored, but -n: the command's stdin is /dev/null.\n"
	"--env: COMMAND gets this environment, not the job's there (the batch system's own\n"
	"variables stay the node's).\n"
	"Exits with the command's status, 128+N when a signal N ended it, 255 when it could not run.\n";

/* The job's shell ($SHELL, which gded sets to the owner's), else /bin/sh. */
static const char *shell(void)
{
	const char *s = getenv("SHELL");

	return s && s[0] == '/' ? s : "/bin/sh";
}

int main(int argc, char **argv)
{
	struct taskclient t;
	struct error err = { "" };
	bool with_stdin = true, want_env = false;
	json_t *targv = NULL, *env = NULL;
	const char *host;
	char *cmd = NULL;
	size_t len = 0;
	sigset_t ss;
	int i, status = 255;

	if (version_requested(argc, argv))
		return version_print("qpool-rsh");
	/* By hand, not getopt: options may follow HOST (ssh host -n ...is not
	 * valid, but `rsh host -l user cmd` is) and the command's own options
	 * must never be taken for ours. */
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *o = argv[i] + 1;

		if (strcmp(argv[i], "--help") == 0) {
			fputs(usage_text, stdout);
			return 0;
		}
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "--env") == 0) {
			want_env = true;
			continue;
		}
		for (; *o; o++) {
			if (strchr("lopiFeEcmbBDILJOQRSWw", *o)) {
				/* Takes a value: the rest of this word, or the next. */
				if (!o[1] && ++i >= argc) {
					fprintf(stderr, "qpool-rsh: option -%c needs a value\n%s", *o, usage_text);
					return 255;
				}
				break;
			}
			if (*o == 'n')
				with_stdin = false;
			else if (!strchr("xXTtqAaCfgkKNsvVY46", *o)) {
				fprintf(stderr, "qpool-rsh: unknown option -%c\n%s", *o, usage_text);
				return 255;
			}
		}
	}
	if (i >= argc) {
		fprintf(stderr, "qpool-rsh: no HOST\n%s", usage_text);
		return 255;
	}
	host = argv[i++];
	/* user@host: the user is the job's owner whatever is written. */
	if (strchr(host, '@'))
		host = strchr(host, '@') + 1;
	if (i >= argc) {
		fprintf(stderr, "qpool-rsh: no COMMAND: remote logins are not offered, only commands\n");
		return 255;
	}
	for (int k = i; k < argc; k++)
		len += strlen(argv[k]) + 1;
	cmd = malloc(len + 1);
	if (!cmd) {
		fprintf(stderr, "qpool-rsh: out of memory\n");
		return 255;
	}
	cmd[0] = '\0';
	for (int k = i; k < argc; k++) {
		if (k > i)
			strcat(cmd, " ");
		strcat(cmd, argv[k]);
	}
	targv = json_pack("[s, s, s]", shell(), "-c", cmd);
	if (want_env && !(env = jobenv_environ())) {
		fprintf(stderr, "qpool-rsh: out of memory\n");
		goto done;
	}
	/* Forwarded as task.signal by the relay, not acted on here. */
	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGHUP);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (!targv || taskclient_start(&t, getenv(TASKCLIENT_SOCKET_ENV), host, targv, NULL, env, with_stdin,
					   &err) < 0) {
		fprintf(stderr, "qpool-rsh: %s\n", targv ? err.text : "out of memory");
		goto done;
	}
	if (taskclient_relay(&t, 1, with_stdin ? STDIN_FILENO : -1, "qpool-rsh") < 0)
		fprintf(stderr, "qpool-rsh: cannot wait for the task: %m\n");
	else
		status = t.status;
	taskclient_close(&t);
done:
	json_decref(targv);
	json_decref(env);
	free(cmd);
	return status;
}
