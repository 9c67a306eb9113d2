/* SPDX-License-Identifier: MIT */
/* The limits on a job's environment: count of variables and total size. */
#include <errno.h>
#include <string.h>

#include "jobenv.h"

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
