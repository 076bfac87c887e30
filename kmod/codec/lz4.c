// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * lz4: a lossless LZ4 block, for marked streams that are not pure floats.
 * The kernel build uses lib/lz4, userspace uses liblz4 (see compat.h).
 */
#include "codec.h"

#define LZ4_MAX_LEN	0x7e000000u	/* LZ4_MAX_INPUT_SIZE */

static ssize_t lz4_encode(u8 __always_unused param, const u8 *in, size_t len,
			  u8 *out, size_t cap, void *scratch,
			  struct incnn_hist __always_unused *hist)
{
	int r;

	if (len > LZ4_MAX_LEN)
		return -EINVAL;
	if (!len)
		return 0;
	if (cap > LZ4_MAX_LEN)
		cap = LZ4_MAX_LEN;
	r = incnn_lz4_compress(scratch, in, len, out, cap);
	return r > 0 ? r : -ENOSPC;
}

static int lz4_decode(u8 __always_unused param, const u8 *in, size_t len,
		      u8 *out, size_t out_len)
{
	if (len > LZ4_MAX_LEN || out_len > LZ4_MAX_LEN)
		return -EBADMSG;
	if (!out_len)
		return len ? -EBADMSG : 0;
	if (!len)
		return -EBADMSG;
	return incnn_lz4_decompress(in, len, out, out_len) == (int)out_len ?
	       0 : -EBADMSG;
}

static size_t lz4_bound(size_t len)
{
	return len > LZ4_MAX_LEN ? 0 : incnn_lz4_bound(len);
}

static int lz4_max_err(u8 __always_unused param)
{
	return INCNN_MAX_ERR_EXACT;
}

const struct incnn_codec incnn_codec_lz4 = {
	.id = INCNN_CODEC_LZ4,
	.name = "lz4",
	.lossy = false,
	.floats = false,
	.param = {
		.kind = INCNN_PARAM_NONE,
		.min = 0,
		.max = 0,
		.def = 0,
	},
	.max_err = lz4_max_err,
	.hist = false,
	.bound = lz4_bound,
	.encode = lz4_encode,
	.decode = lz4_decode,
};
