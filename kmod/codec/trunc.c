// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * trunc: keep the top 8, 16 or 24 bits of each fp32 (the INCEPTIONN
 * paper's "xb-T" baselines). Value i occupies body bytes i*B/8 to
 * (i+1)*B/8 - 1: its top B bits, little-endian. Decoding zero-fills the
 * dropped low bits.
 */
#include "codec.h"

static int trunc_check(u8 bits)
{
	return bits == 8 || bits == 16 || bits == 24 ? 0 : -EINVAL;
}

static ssize_t trunc_encode(u8 bits, const u8 *in, size_t len, u8 *out,
			    size_t cap, void *scratch,
			    struct incnn_hist *hist)
{
	unsigned int w = bits / 8, drop = 4 - w;
	size_t n = len / 4, i;

	if (len % 4)
		return -EINVAL;
	if (n * w > cap)
		return -ENOSPC;
	/* little-endian: the top bytes are the last ones of each value */
	for (i = 0; i < n; i++)
		memcpy(out + i * w, in + 4 * i + drop, w);
	return n * w;
}

static int trunc_decode(u8 bits, const u8 *in, size_t len, u8 *out,
			size_t out_len)
{
	unsigned int w = bits / 8, drop = 4 - w;
	size_t n = out_len / 4, i;

	if (out_len % 4)
		return -EINVAL;
	if (len != n * w)
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		memset(out + 4 * i, 0, drop);
		memcpy(out + 4 * i + drop, in + i * w, w);
	}
	return 0;
}

static size_t trunc_bound(size_t len)
{
	return len / 4 * 3;
}

const struct incnn_codec incnn_codec_trunc = {
	.id = INCNN_CODEC_TRUNC,
	.name = "trunc",
	.lossy = true,
	.floats = true,
	.default_param = 16,
	.check_param = trunc_check,
	.bound = trunc_bound,
	.encode = trunc_encode,
	.decode = trunc_decode,
};
