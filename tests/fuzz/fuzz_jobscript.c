/* SPDX-License-Identifier: MIT */
/* Job scripts: jobscript_check and the #QP/#PBS directive reader over any
 * text, and one qsub option (first byte the letter, the rest its argument). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "jobscript.h"
#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jobspec js, other;
	struct error err;
	char *arg;
	int r;

	r = jobscript_check((const char *)data, size, &err);
	/* A script that passes is what JSON can carry: no NUL, valid UTF-8. */
	if (r == 0)
		FUZZ_ASSERT(size > 0 && !memchr(data, 0, size) && utf8_valid((const char *)data, size));
	jobspec_init(&js);
	r = jobscript_parse((const char *)data, size, NULL, &js, &err);
	FUZZ_ASSERT(r == 0 || err.text[0]);
	if (r == 0) {
		FUZZ_ASSERT(!js.name || strlen(js.name) <= JOBSPEC_NAME_MAX);
		FUZZ_ASSERT(js.ncpus == -1 || (js.ncpus >= 1 && js.ncpus <= JOBSPEC_NCPUS_MAX));
		FUZZ_ASSERT(js.join >= -1 && js.join <= 1 && js.rerunnable >= -1 && js.rerunnable <= 1);
		/* A request across nodes: its CPUs are the chunks' total. */
		if (js.n_chunks) {
			int64_t total = 0;

			for (size_t i = 0; i < js.n_chunks; i++)
				total += js.chunks[i].count * js.chunks[i].ncpus;
			FUZZ_ASSERT(total == js.ncpus && js.n_chunks <= JOBSPEC_CHUNKS_MAX);
		}
	}
	if (size >= 1) {
		jobspec_init(&other);
		arg = fuzz_strndup(data + 1, size - 1);
		(void)jobspec_option(&other, data[0], jobspec_option_has_arg(data[0]) ? arg : NULL, &err);
		FUZZ_ASSERT(jobspec_merge(&js, &other) == 0);
		jobspec_clear(&other);
		free(arg);
	}
	jobspec_clear(&js);
	return 0;
}
