/* SPDX-License-Identifier: MIT */
/* A directory stream over an open directory, leaving that one open. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "dirat.h"

DIR *dir_stream_at(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), e;
	DIR *d;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		e = errno;
		close(fd);
		errno = e;
	}
	return d;
}
