/* SPDX-License-Identifier: GPL-2.0 OR MIT */
#ifndef INCNN_TU_CRC32_H
#define INCNN_TU_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32 (IEEE 802.3, as zlib's crc32()); start with @crc = 0. */
uint32_t tu_crc32(uint32_t crc, const void *buf, size_t len);

#endif /* INCNN_TU_CRC32_H */
