/* SPDX-License-Identifier: MIT */
/* qpool-pmi's doors: accepted connections waiting for their first
 * message, with a deadline and a cap; the peer's uid over loopback TCP. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate.h"

struct gate {
	int deadline_ms;
	int n;
	struct gate_conn conn[GATE_MAX];
};

struct gate *gate_create(int deadline_ms)
{
	struct gate *g = calloc(1, sizeof(*g));

	if (g)
		g->deadline_ms = deadline_ms;
	return g;
}

void gate_destroy(struct gate *g)
{
	while (g && g->n > 0)
		gate_remove(g, g->n - 1, 0, NULL);
	free(g);
}

void gate_remove(struct gate *g, int i, int take, struct wirebuf *ret_in)
{
	struct gate_conn *c = &g->conn[i];

	if (!take)
		close(c->fd);
	if (ret_in)
		*ret_in = c->in;
	else
		wirebuf_free(&c->in);
	memmove(c, c + 1, sizeof(*c) * (size_t)(g->n - i - 1));
	g->n--;
}

int gate_add(struct gate *g, int fd, long long now_ms)
{
	int dropped = 0;

	if (g->n == GATE_MAX) {
		gate_remove(g, 0, 0, NULL);   /* the oldest: entries are in arrival order */
		dropped = 1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	g->conn[g->n++] = (struct gate_conn){ .fd = fd, .deadline = now_ms + g->deadline_ms };
	return dropped;
}

int gate_count(const struct gate *g)
{
	return g ? g->n : 0;
}

struct gate_conn *gate_at(struct gate *g, int i)
{
	return &g->conn[i];
}

int gate_expire(struct gate *g, long long now_ms)
{
	int n = 0;

	for (int i = 0; g && i < g->n;) {
		if (g->conn[i].deadline <= now_ms) {
			gate_remove(g, i, 0, NULL);
			n++;
		} else {
			i++;
		}
	}
	return n;
}

int gate_timeout(const struct gate *g, long long now_ms)
{
	if (!g || g->n == 0)
		return -1;
	/* arrival order is deadline order: one deadline for every entry */
	return g->conn[0].deadline > now_ms ? (int)(g->conn[0].deadline - now_ms) : 0;
}

int gate_peer_uid(int fd, uid_t *ret_uid)
{
	struct sockaddr_in me, peer;
	socklen_t mlen = sizeof(me), plen = sizeof(peer);
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = AF_INET, .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0u },
	};
	/* buf only sizes the answer: recv fills it, h reads its head. */
	union {
		struct nlmsghdr h;
		// cppcheck-suppress unusedStructMember
		char buf[8192];
	} ans;
	const struct inet_diag_msg *m;
	ssize_t n;
	int nl, e;

	if (getsockname(fd, (struct sockaddr *)&me, &mlen) < 0 || getpeername(fd, (struct sockaddr *)&peer, &plen) < 0)
		return -errno;
	if (me.sin_family != AF_INET || peer.sin_family != AF_INET)
		return -EAFNOSUPPORT;
	/* the peer's socket, seen from its side: its address is the source */
	req.r.id.idiag_sport = peer.sin_port;
	req.r.id.idiag_dport = me.sin_port;
	req.r.id.idiag_src[0] = peer.sin_addr.s_addr;
	req.r.id.idiag_dst[0] = me.sin_addr.s_addr;
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -errno;
	if (send(nl, &req, sizeof(req), 0) < 0 || (n = recv(nl, &ans, sizeof(ans), 0)) < 0) {
		e = -errno;
		close(nl);
		return e;
	}
	close(nl);
	if (!NLMSG_OK(&ans.h, (size_t)n))
		return -EPROTO;
	if (ans.h.nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *ne = NLMSG_DATA(&ans.h);

		return ne->error < 0 ? ne->error : -EPROTO;
	}
	if (ans.h.nlmsg_type != SOCK_DIAG_BY_FAMILY || ans.h.nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return -EPROTO;
	m = NLMSG_DATA(&ans.h);
	*ret_uid = m->idiag_uid;
	return 0;
}

int gate_sever_strangers(int local_port)
{
	DIR *dp = opendir("/proc/self/fd");
	struct dirent *e;
	int null = -1, n = 0;   /* a dead socket: epoll takes it, unlike /dev/null */

	if (!dp)
		return -errno;
	while ((e = readdir(dp))) {
		struct sockaddr_in peer, me;
		socklen_t plen = sizeof(peer), mlen = sizeof(me);
		struct stat st;
		uid_t uid;
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (*end || fd < 0 || fd == dirfd(dp) || fd == null)
			continue;
		if (fstat((int)fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
		    getpeername((int)fd, (struct sockaddr *)&peer, &plen) < 0 || peer.sin_family != AF_INET ||
		    getsockname((int)fd, (struct sockaddr *)&me, &mlen) < 0 ||
		    (local_port && ntohs(me.sin_port) != local_port))
			continue;
		/* a peer not on this host is not found: left alone (the
		 * sisters' links are proved by their token) */
		if (gate_peer_uid((int)fd, &uid) < 0 || uid == geteuid())
			continue;
		if (null < 0) {
			int sv[2];

			if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
				break;
			close(sv[1]);   /* sv[0] reads an end of stream */
			null = sv[0];
		}
		if (dup2(null, (int)fd) == (int)fd) {
			fcntl((int)fd, F_SETFD, FD_CLOEXEC);
			n++;
		}
	}
	closedir(dp);
	if (null >= 0)
		close(null);
	return n;
}
