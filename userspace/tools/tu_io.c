// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Whole-buffer reads and writes on file descriptors.
 */
#include <errno.h>
#include <unistd.h>

#include "tu_io.h"

ssize_t tu_read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = read(fd, (char *)buf + done, len - done);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (!r)
			break;
		done += r;
	}
	return done;
}

int tu_write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = write(fd, (const char *)buf + done, len - done);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += r;
	}
	return 0;
}
