/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Unaligned little-endian loads and stores, and fp32 bit views. */
#ifndef INCNN_TU_BYTES_H
#define INCNN_TU_BYTES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t tu_get_le32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t tu_get_le64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void tu_put_le32(uint32_t v, void *p)
{
	memcpy(p, &v, sizeof(v));
}

static inline void tu_put_le64(uint64_t v, void *p)
{
	memcpy(p, &v, sizeof(v));
}

/* A biased fp32 exponent of 255: NaN or infinity. */
static inline bool tu_f32_nonfinite(uint32_t bits)
{
	return ((bits >> 23) & 0xff) == 0xff;
}

static inline float tu_u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

#endif /* INCNN_TU_BYTES_H */
