/* SPDX-License-Identifier: MIT */
/* qdel: ask qpoold to delete jobs. */
#include "jobop.h"

int main(int argc, char **argv)
{
	static const struct jobop_cmd cmd = {
		.prog = "qdel",
		.op = "delete",
		.summary = "Deletes (cancels) jobs: queued and held jobs are removed, running ones are killed.",
		.flags = JOBOP_FORCE | JOBOP_HISTORY,
	};

	return jobop_main(&cmd, argc, argv);
}
