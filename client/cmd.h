/* SPDX-License-Identifier: MIT */
/* What every command shares: its one-line error, its output paths. */
#ifndef QPOOL_CMD_H
#define QPOOL_CMD_H

/* Prints "<program>: <message>" and a newline on stderr, the program being
 * the command's own name (qsub, qdel, ...). Returns status, so a command
 * can write `return cmd_fail(1, "...")`. */
int cmd_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Who a node drain or resume from this command is by (docs/HOOKS.md):
 * "health" when run from qnoded's health check (QPOOL_HOOK=health in its
 * environment: LBNL NHC's scontrol and pbsnodes), "hook" from a node
 * prolog or epilog (QPOOL_HOOK=prolog/epilog), else "admin". */
const char *cmd_drain_by(void);

/* Slurm's words for a word left after the options, with its "Try ...
 * --help" line. Returns 1. */
int cmd_slurm_extra(const char *word);

/* Appends s to *buf (*len bytes long, NUL-terminated), shell-quoted
 * ('...', a ' as '\''), after a blank unless *buf is empty; for the
 * command lines qexec and srun hand to a shell. 0 or -ENOMEM. */
int cmd_quote(char **buf, size_t *len, const char *s);

/* After getopt_long (opterr 0, the optstring starting with ':') returned
 * c, '?' or ':': glibc's own line for it ("invalid option -- 'x'",
 * "unrecognized option '--x'", "option requires an argument -- 'x'"),
 * then "Try \"<program> --help\" ...", as Slurm's commands print them.
 * Returns 1, the exit status. */
int cmd_getopt_fail(int c, char **argv);

/* An output path of -o or -e (opt) as PBS takes it, [host:]path, made
 * absolute against cwd into buf (len bytes; jobspec_output_path), host
 * being this host (its full or short name, or localhost): qpool writes
 * outputs in place. 0, or 1 (an exit status) after a one-line error. */
int cmd_output_path(const char *cwd, const char *opt, const char *arg, char *buf, size_t len);

#endif
