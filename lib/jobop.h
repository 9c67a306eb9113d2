/* SPDX-License-Identifier: MIT */
/* The body shared by qdel, qhold and qrls: one job op per id given. */
#ifndef QPOOL_JOBOP_H
#define QPOOL_JOBOP_H

/* What distinguishes one of the three commands. */
struct jobop_cmd {
	const char *prog;     /* "qdel" */
	const char *op;       /* protocol op: "delete", "hold", "release" */
	const char *summary;  /* one line for --help */
};

/* Runs the command: parses [-f FILE] [--help] JOBID... from argv, sends
 * cmd->op for each id, prints nothing on success and "prog: message" on
 * stderr for each id refused (the server's message as is), after trying
 * them all. Unlike other lib code this writes to stdout/stderr: it is the
 * whole of three commands. Returns the exit status: 0, 1 when any id
 * failed or qpoold cannot be reached, 2 on a usage error. */
int jobop_main(const struct jobop_cmd *cmd, int argc, char **argv);

#endif
