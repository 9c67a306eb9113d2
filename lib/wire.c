/* SPDX-License-Identifier: MIT */
/* Framing of JSON messages on stream sockets, blocking and non-blocking. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wire.h"

void wirebuf_free(struct wirebuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* wire_send's first buffer: 64 KiB, below malloc's mmap threshold. */
#define WIRE_SEND_ROOM (64u * 1024)

int wirebuf_reserve(struct wirebuf *b, size_t more)
{
	size_t need;
	char *d;

	/* Drop the consumed prefix before growing. */
	if (b->off && b->off == b->len) {
		b->off = b->len = 0;
	} else if (b->off > b->cap / 2) {
		memmove(b->data, b->data + b->off, b->len - b->off);
		b->len -= b->off;
		b->off = 0;
	}
	need = b->len + more;
	if (need <= b->cap)
		return 0;
	if (need < 4096)
		need = 4096;
	if (need < b->cap * 2)
		need = b->cap * 2;
	d = realloc(b->data, need);
	if (!d)
		return -ENOMEM;
	b->data = d;
	b->cap = need;
	return 0;
}

ssize_t wire_read(int fd, struct wirebuf *in)
{
	ssize_t n;
	int r;

	r = wirebuf_reserve(in, 16384);
	if (r < 0)
		return r;
	n = read(fd, in->data + in->len, in->cap - in->len);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	in->len += (size_t)n;
	return n;
}

size_t wire_announced(const struct wirebuf *in)
{
	const unsigned char *p = (const unsigned char *)in->data + in->off;

	if (in->len - in->off < 4)
		return 0;
	return (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
}

int wire_next(struct wirebuf *in, json_t **ret, struct error *err)
{
	const unsigned char *p;
	json_error_t jerr;
	uint32_t size;
	json_t *msg;

	if (in->len - in->off < 4)
		return 0;
	p = (const unsigned char *)in->data + in->off;
	size = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	if (size > WIRE_MAX)
		return error_set(err, -EMSGSIZE, "message of %u bytes is above the %u-byte limit", size, WIRE_MAX);
	if (in->len - in->off - 4 < size)
		return 0;
	msg = json_loadb((const char *)p + 4, size, JSON_REJECT_DUPLICATES, &jerr);
	in->off += 4 + size;
	if (!msg)
		return error_set(err, -EBADMSG, "malformed message: %s", jerr.text);
	if (!json_is_object(msg)) {
		json_decref(msg);
		return error_set(err, -EBADMSG, "malformed message: not a JSON object");
	}
	*ret = msg;
	return 1;
}

int wire_queue_frames(struct wirebuf *out, const void *frames, size_t len)
{
	int r = wirebuf_reserve(out, len);

	if (r < 0)
		return r;
	memcpy(out->data + out->len, frames, len);
	out->len += len;
	return 0;
}

int wire_queue(struct wirebuf *out, const json_t *msg)
{
	size_t size, room;
	unsigned char *p;
	int r;

	/* Encoded once, straight into the buffer's free room; again only when
	 * it did not fit (json_dumpb returns the size it needs). Encoding was
	 * ~20% of qpoold's instructions per job when done twice every time. */
	r = wirebuf_reserve(out, 4 + 4096);
	if (r < 0)
		return r;
	room = out->cap - out->len - 4;
	p = (unsigned char *)out->data + out->len;
	size = json_dumpb(msg, (char *)p + 4, room, JSON_COMPACT);
	if (size == 0 || size > WIRE_MAX)
		return -EMSGSIZE;
	if (size > room) {
		r = wirebuf_reserve(out, size + 4);
		if (r < 0)
			return r;
		p = (unsigned char *)out->data + out->len;
		json_dumpb(msg, (char *)p + 4, size, JSON_COMPACT);
	}
	p[0] = (unsigned char)(size >> 24);
	p[1] = (unsigned char)(size >> 16);
	p[2] = (unsigned char)(size >> 8);
	p[3] = (unsigned char)size;
	out->len += size + 4;
	return 0;
}

int wire_flush(int fd, struct wirebuf *out)
{
	while (out->off < out->len) {
		ssize_t n = send(fd, out->data + out->off, out->len - out->off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 1;
			return -errno;
		}
		out->off += (size_t)n;
	}
	out->off = out->len = 0;
	return 0;
}

int wire_send(int fd, const json_t *msg)
{
	struct wirebuf out = { 0 };
	int r;

	/* One message on a buffer of its own: room for a job with its
	 * environment up front, so it is encoded once, not twice. */
	r = wirebuf_reserve(&out, WIRE_SEND_ROOM);
	if (r == 0)
		r = wire_queue(&out, msg);
	if (r == 0)
		r = wire_flush(fd, &out);
	wirebuf_free(&out);
	return r == 1 ? -EAGAIN : r;
}

int wire_recv(int fd, json_t **ret, struct error *err)
{
	struct wirebuf in = { 0 };
	int r;

	r = wire_recv_buffered(fd, &in, ret, err);
	wirebuf_free(&in);
	return r;
}

int wire_recv_buffered(int fd, struct wirebuf *in, json_t **ret, struct error *err)
{
	int r;

	for (;;) {
		ssize_t n;

		r = wire_next(in, ret, err);
		if (r != 0)
			break;
		n = wire_read(fd, in);
		if (n == -EINTR)
			continue;
		if (n < 0) {
			r = error_set(err, (int)n, "receive: %s", strerror((int)-n));
			break;
		}
		if (n == 0) {
			r = error_set(err, -ECONNRESET, "connection closed by peer");
			break;
		}
	}
	return r < 0 ? r : 0;
}

int wire_load_fd(int fd, size_t max, const char *what, json_t **ret, struct error *err)
{
	json_error_t jerr;
	struct stat st;
	char *buf;
	size_t len = 0, cap;
	json_t *o;
	int r;

	/* The buffer as large as the file, one byte over to see its end
	 * (a file that grows is read on, doubling, up to max + 1): a
	 * buffer of max + 1 (1 MiB) is an mmap and munmap at every read of
	 * a 1 KiB spec or result (issue 39). */
	cap = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size < max ?
		      (size_t)st.st_size + 1 : max + 1;
	if (cap < 4096 && cap <= max)
		cap = 4096;
	buf = malloc(cap);
	if (!buf)
		return error_set(err, -ENOMEM, "%s: out of memory", what);
	for (;;) {
		ssize_t n;

		if (len == cap) {
			size_t more = cap > (max + 1) / 2 ? max + 1 : cap * 2;
			char *b = realloc(buf, more);

			if (!b) {
				r = error_set(err, -ENOMEM, "%s: out of memory", what);
				goto done;
			}
			buf = b;
			cap = more;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = error_set(err, -errno, "cannot read %s: %s", what, strerror(errno));
			goto done;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			r = error_set(err, -EBADMSG, "%s is larger than %zu bytes", what, max);
			goto done;
		}
	}
	o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o) {
		r = error_set(err, -EBADMSG, "%s:%d: %s", what, jerr.line, jerr.text);
		goto done;
	}
	if (!json_is_object(o)) {
		json_decref(o);
		r = error_set(err, -EBADMSG, "%s: not a JSON object", what);
		goto done;
	}
	*ret = o;
	r = 0;
done:
	free(buf);
	return r;
}

const char *wire_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

long long wire_int(const json_t *o, const char *key, long long def)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) : def;
}

int wire_bool(const json_t *o, const char *key, int def)
{
	json_t *v = json_object_get(o, key);

	return json_is_boolean(v) ? json_is_true(v) : def;
}
