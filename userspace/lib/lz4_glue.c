// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * liblz4 behind the interface kmod/codec/compat.h gives the lz4 codec
 * (the kernel build maps the same calls to lib/lz4).
 */
#include <lz4.h>

#include "compat.h"

_Static_assert(INCNN_LZ4_SCRATCH >= LZ4_STREAM_MINSIZE,
	       "INCNN_LZ4_SCRATCH too small for liblz4's state");

int incnn_lz4_compress(void *scratch, const u8 *in, int len, u8 *out,
		       int cap)
{
	return LZ4_compress_fast_extState(scratch, (const char *)in,
					  (char *)out, len, cap, 1);
}

int incnn_lz4_decompress(const u8 *in, int len, u8 *out, int cap)
{
	return LZ4_decompress_safe((const char *)in, (char *)out, len, cap);
}

int incnn_lz4_bound(int len)
{
	return LZ4_compressBound(len);
}
