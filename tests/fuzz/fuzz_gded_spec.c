/* SPDX-License-Identifier: MIT */
/* gded's launch spec: any JSON text through gded_spec_parse and, when it
 * is accepted, the job environment built from it and the devices its
 * fence denies. */
#include <string.h>

#include "fuzz.h"
#include "gded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gded_job job;
	struct error err;
	json_t *spec;
	char **env;

	spec = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!spec)
		return 0;
	if (gded_spec_parse(spec, &job, &err) == 0) {
		FUZZ_ASSERT(job.jobid > 0 && job.user && job.workdir && job.script && job.result);
		env = gded_env_build(&job, NULL);
		FUZZ_ASSERT(env != NULL);
		for (char **e = env; *e; e++)
			FUZZ_ASSERT(strchr(*e, '=') != NULL);
		gded_env_free(env);
		{
			struct cgroup_dev deny[GDED_GPUS_MAX];

			FUZZ_ASSERT(gded_gpus_denied(&job, deny) + job.ngpus <= job.ngpus_node);
		}
		gded_job_clear(&job);
	} else {
		FUZZ_ASSERT(err.text[0]);
	}
	json_decref(spec);
	return 0;
}
