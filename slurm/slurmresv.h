/* SPDX-License-Identifier: MIT */
/* Slurm's reservations over qpool's resv op (docs/RESERVATIONS.md):
 * scontrol create|update reservation's words read into a request, and a
 * reservation written as scontrol show reservation and sinfo -T print. */
#ifndef QPOOL_SLURMRESV_H
#define QPOOL_SLURMRESV_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

/* Reads Key=Value words (ReservationName= StartTime= Duration= EndTime=
 * Nodes= NodeCnt= Users= Groups= Accounts= Flags=) into a new request of
 * the resv op with action (create or update); now for the times. The
 * request, or NULL with why (Slurm's words: "Invalid time specification
 * ..."), and errno ENOMEM when out of memory. */
json_t *slurmresv_request(const char *action, int n, char **args, time_t now, char *why, size_t len);

/* One reservation as scontrol show reservation prints it (one line with
 * oneline). */
void slurmresv_show(const json_t *r, bool oneline);

/* sinfo -T's heading, and one reservation's line. */
void slurmresv_sinfo_head(void);
void slurmresv_sinfo_line(const json_t *r);

#endif
