/* SPDX-License-Identifier: MIT */
/* qrls: ask qpoold to release jobs. */
#include "jobop.h"

int main(int argc, char **argv)
{
	static const struct jobop_cmd cmd = {
		.prog = "qrls",
		.op = "release",
		.summary = "Releases held jobs, so they may run.",
		.flags = JOBOP_HOLD_TYPES,
	};

	return jobop_main(&cmd, argc, argv);
}
