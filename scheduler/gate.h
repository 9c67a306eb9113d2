/* SPDX-License-Identifier: MIT */
/* qpoold's TCP peers before their credential: a budget of their own, per
 * source address and in all, so they never take a user's slot. */
#ifndef QPOOL_GATE_H
#define QPOOL_GATE_H

#include <sys/socket.h>

/* A source address as the gate keys it: IPv4 as IPv4-mapped IPv6. */
struct gate_addr {
	unsigned char b[16];
};

struct gate;

int gate_create(struct gate **ret);
void gate_destroy(struct gate *g);

/* The key of sa (AF_INET or AF_INET6; anything else is one key, all zeros). */
struct gate_addr gate_addr_of(const struct sockaddr_storage *sa);

/* A peer from addr waits for its credential. 0 and counted; -EMFILE (not
 * counted) when max_total peers wait already, -EUSERS when max_per_addr
 * of them are from addr; -ENOMEM. O(addresses waiting). */
int gate_enter(struct gate *g, const struct gate_addr *addr, unsigned max_total, unsigned max_per_addr);

/* A peer counted by gate_enter authenticated or went. */
void gate_leave(struct gate *g, const struct gate_addr *addr);

/* Peers waiting, in all. */
unsigned gate_count(const struct gate *g);

/* Peers waiting from addr. */
unsigned gate_count_addr(const struct gate *g, const struct gate_addr *addr);

#endif
