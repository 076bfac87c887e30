/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Integer-only fp32 helpers for the codecs (no FPU use in the kernel).
 */
#ifndef _INCNN_FP32_H
#define _INCNN_FP32_H

#include "compat.h"

#define INCNN_F32_EXP(x)	(((x) >> 23) & 0xff)
#define INCNN_F32_MANT(x)	((x) & 0x7fffff)
#define INCNN_F32_SIGN(x)	((x) >> 31)

/* Bytes sent for a value of each 2-bit tag: 0, 1, 2 or 4. */
#define INCNN_TAG_BYTES(t)	((0x4210u >> (4 * (t))) & 0xf)

/*
 * The fp32 bit pattern of (-1)^@sign * @mag * 2^@e0 for 0 <= @mag < 2^23.
 * The result must be a normal number for @mag != 0 (callers guarantee
 * -150 < @e0 + fls(@mag) - 1 < 128). A zero magnitude gives +0.0.
 */
static inline u32 incnn_fx_to_f32(u32 sign, u32 mag, int e0)
{
	int p = fls(mag | 1) - 1;
	u32 bits = (sign << 31) | ((u32)(127 + e0 + p) << 23) |
		   ((mag << (23 - p)) & 0x7fffff);

	return mag ? bits : 0;
}

#endif /* _INCNN_FP32_H */
