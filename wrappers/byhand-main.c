/* SPDX-License-Identifier: MIT */
/* gded-byhand: gded's by-hand form (gded execs it), kept apart because it alone needs hwloc. */
#include "gded.h"
#include "version.h"

int main(int argc, char **argv)
{
	if (version_requested(argc, argv))
		return version_print("gded-byhand");
	return gded_byhand_main(argc, argv);
}
