/* SPDX-License-Identifier: MIT */
/* qhold: ask qpoold to hold jobs. */
#include "jobop.h"

int main(int argc, char **argv)
{
	static const struct jobop_cmd cmd = {
		.prog = "qhold",
		.op = "hold",
		.summary = "Holds queued jobs: they are not started until released with qrls.",
		.flags = JOBOP_HOLD_TYPES,
	};

	return jobop_main(&cmd, argc, argv);
}
