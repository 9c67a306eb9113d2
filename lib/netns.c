/* SPDX-License-Identifier: MIT */
/* netns: which network namespace of which running kernel this process is in. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "netns.h"

int netns_id(char *buf, size_t len)
{
	char boot[64];
	struct stat st;
	ssize_t n;
	size_t need;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -ENOENT;
	n = read(fd, boot, sizeof(boot) - 1);
	close(fd);
	while (n > 0 && (boot[n - 1] == '\n' || boot[n - 1] == ' '))
		n--;
	if (n <= 0 || stat("/proc/self/ns/net", &st) < 0)
		return -ENOENT;
	boot[n] = '\0';
	/* the boot id is 36 characters, the inode at most 20 digits */
	need = (size_t)n + 1 + 20 + 1;
	if (len < need)
		return -ENOSPC;
	memcpy(buf, boot, (size_t)n);
	buf[n] = ':';
	{
		char digits[24];
		int k = 0;
		unsigned long long v = (unsigned long long)st.st_ino;

		do {
			digits[k++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		for (int i = 0; i < k; i++)
			buf[n + 1 + i] = digits[k - 1 - i];
		buf[n + 1 + k] = '\0';
	}
	return 0;
}
