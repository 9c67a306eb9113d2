/* SPDX-License-Identifier: MIT */
/* The body shared by qdel, qhold, qrls and qrerun: one job op per id given. */
#ifndef QPOOL_JOBOP_H
#define QPOOL_JOBOP_H

/* The PBS options a command takes beside -f FILE. */
enum jobop_flags {
	JOBOP_FORCE = 1 << 0,     /* -W force: "force": true */
	JOBOP_HISTORY = 1 << 1,   /* -x: a finished job is no error */
	JOBOP_HOLD_TYPES = 1 << 2,/* -h u|o|s: qpool has one kind of hold; o and s are root's */
};

/* What distinguishes one of the commands. */
struct jobop_cmd {
	const char *prog;     /* "qdel" */
	const char *op;       /* protocol op: "delete", "hold", "release", "rerun" */
	const char *summary;  /* one line for --help */
	unsigned flags;       /* enum jobop_flags */
};

/* Runs the command: parses [-f FILE] [its flags] [--help] JOBID... from argv, sends
 * cmd->op for each id, prints nothing on success and "prog: message" on
 * stderr for each id refused (the server's message as is), after trying
 * them all. Unlike other lib code this writes to stdout/stderr: it is the
 * whole of four commands. Returns the exit status: 0, 1 when any id
 * failed or qpoold cannot be reached, 2 on a usage error. */
int jobop_main(const struct jobop_cmd *cmd, int argc, char **argv);

#endif
