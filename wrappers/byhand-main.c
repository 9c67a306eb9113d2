/* SPDX-License-Identifier: MIT */
/* gded-byhand: gded's by-hand form (gded execs it), kept apart because it alone needs hwloc. */
#include "gded.h"

int main(int argc, char **argv)
{
	return gded_byhand_main(argc, argv);
}
