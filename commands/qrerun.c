/* SPDX-License-Identifier: MIT */
/* qrerun: ask qpoold to stop running jobs and put them back in their queue. */
#include "jobop.h"

int main(int argc, char **argv)
{
	static const struct jobop_cmd cmd = {
		.prog = "qrerun",
		.op = "rerun",
		.summary = "Requeues running jobs: each is stopped as qdel would and waits in its queue again.",
		.flags = JOBOP_FORCE,
	};

	return jobop_main(&cmd, argc, argv);
}
