/* SPDX-License-Identifier: MIT */
/* Slurm's text forms, purely: its times, sizes and begin times read, its
 * %-patterns written (host lists and tasks per node: lib/hostlist.h, which
 * gded writes a job's SLURM_* with). */
#ifndef QPOOL_SLURMTEXT_H
#define QPOOL_SLURMTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "error.h"

/* A time limit as Slurm takes it (sbatch --time, scontrol TimeLimit=):
 * M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or UNLIMITED, INFINITE, -1 (0);
 * in seconds rounded up to whole minutes, as Slurm keeps it ("0:20" is
 * 60). 0 and *ret_seconds, or -EINVAL (a field over 10^8 too). */
int slurm_time_parse(const char *s, int64_t *ret_seconds);

/* A moment as Slurm's sbatch --begin and sacct -S/-E take it, local
 * time: now, now+N or now-N[seconds|minutes|hours|days|weeks] (N alone:
 * seconds), today, tomorrow, midnight, noon, HH:MM[:SS],
 * YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY]. A time of day without a date
 * (midnight, noon, HH:MM) is today's; with future (a start time) one
 * already past is tomorrow's. 0 and *ret, or -EINVAL. */
int slurm_when_parse(const char *s, time_t now, bool future, time_t *ret);

/* Slurm's memory size: a number of MiB, or with K, M, G, T. 0, -EINVAL. */
int slurm_mem_parse(const char *s, int64_t *ret_bytes);

/* An --output/--error pattern into the path qpoold records: %j (%J),
 * %A, %a become qpool's ^job_id^, ^array_id^, ^array_index^ (qpoold fills
 * them in for each job and subjob; %a of a job that is not an array, when
 * array is false, is Slurm's 4294967294); %x is name, %u user, %% a '%';
 * %N the first node, ^node^; %n, %t 0 and %s "batch" (the batch script's
 * node, task and step). A width (%4a) is dropped with a warning in
 * *ret_warned. 0, -EINVAL ("%q": not a pattern), -ENAMETOOLONG. */
int slurm_path_expand(const char *pat, const char *name, const char *user, bool array, char *buf,
		      size_t len, bool *ret_warned, struct error *err);

#endif
