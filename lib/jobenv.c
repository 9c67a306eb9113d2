/* SPDX-License-Identifier: MIT */
/* The limits on a job's environment (count of variables, total size), and this process's as one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobenv.h"
#include "parse.h"

json_t *jobenv_environ(void)
{
	json_t *env = json_object();

	for (char **e = environ; env && e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char name[256];

		if (!eq || eq == *e || (size_t)(eq - *e) >= sizeof(name) || !utf8_valid(*e, strlen(*e)))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
		if (json_object_set_new(env, name, json_string(eq + 1)) < 0) {
			json_decref(env);
			return NULL;
		}
	}
	return env;
}

int jobenv_check(const json_t *env, struct error *err)
{
	size_t n = json_object_size(env), bytes = 0;
	const char *key;
	json_t *v;

	if (n > JOBENV_MAX_VARS)
		return error_set(err, -E2BIG, "the job's environment has %zu variables; at most %d",
				 n, JOBENV_MAX_VARS);
	json_object_foreach((json_t *)env, key, v) {
		if (!json_is_string(v))
			return error_set(err, -EINVAL, "the job's environment: %s is not a string",
					 key);
		bytes += strlen(key) + 1 + json_string_length(v) + 1;
	}
	if (bytes > JOBENV_MAX_BYTES)
		return error_set(err, -E2BIG, "the job's environment is %zu KiB; at most %d KiB",
				 (bytes + 1023) / 1024, JOBENV_MAX_BYTES / 1024);
	return 0;
}

void jobenv_origin(json_t *env, const char *cwd, const char *queue)
{
	static const char *const copied[][2] = {
		{ "HOME", "PBS_O_HOME" }, { "LOGNAME", "PBS_O_LOGNAME" }, { "PATH", "PBS_O_PATH" },
		{ "SHELL", "PBS_O_SHELL" }, { "MAIL", "PBS_O_MAIL" }, { "LANG", "PBS_O_LANG" },
		{ "TZ", "PBS_O_TZ" },
	};
	char host[256];

	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		const char *v = getenv(copied[i][0]);

		if (!v && strcmp(copied[i][0], "LOGNAME") == 0)
			v = getenv("USER");
		if (v && utf8_valid(v, strlen(v)))
			json_object_set_new(env, copied[i][1], json_string(v));
	}
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		if (utf8_valid(host, strlen(host)))
			json_object_set_new(env, "PBS_O_HOST", json_string(host));
	}
	json_object_set_new(env, "PBS_O_SYSTEM", json_string("Linux"));
	json_object_set_new(env, "PBS_O_WORKDIR", json_string(cwd));
	if (queue)
		json_object_set_new(env, "PBS_O_QUEUE", json_string(queue));
}
