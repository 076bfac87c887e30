/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Whole-buffer I/O on file descriptors, retrying short transfers and EINTR. */
#ifndef INCNN_TU_IO_H
#define INCNN_TU_IO_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Read up to @len bytes, retrying short reads and EINTR. Returns the
 * number of bytes read (less than @len only at end of file) or -1 with
 * errno set.
 */
ssize_t tu_read_full(int fd, void *buf, size_t len);

/* Write all @len bytes. Returns 0 or -1 with errno set. */
int tu_write_full(int fd, const void *buf, size_t len);

#endif /* INCNN_TU_IO_H */
