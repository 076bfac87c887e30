// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * trunc: keep the top 8, 16 or 24 bits of each fp32 (the INCEPTIONN
 * paper's "xb-T" baselines). Value i occupies body bytes i*B/8 to
 * (i+1)*B/8 - 1: its top B bits, little-endian. Decoding zero-fills the
 * dropped low bits.
 */
#include "codec.h"

/*
 * Called with a constant width @w from the switches below, so that each
 * copy compiles to plain loads and stores.
 */
static __always_inline void trunc_enc_w(const u8 *in, u8 *out, size_t n,
					unsigned int w)
{
	size_t i;

	/* little-endian values: the top bytes are the last ones */
	for (i = 0; i < n; i++)
		memcpy(out + i * w, in + 4 * i + 4 - w, w);
}

static __always_inline void trunc_dec_w(const u8 *in, u8 *out, size_t n,
					unsigned int w)
{
	unsigned int j;
	size_t i;

	for (i = 0; i < n; i++) {
		u32 v = 0;

		for (j = 0; j < w; j++)
			v |= (u32)in[i * w + j] << (8 * (4 - w + j));
		put_unaligned_le32(v, out + 4 * i);
	}
}

static ssize_t trunc_encode(u8 bits, const u8 *in, size_t len, u8 *out,
			    size_t cap, void __always_unused *scratch,
			    struct incnn_hist __always_unused *hist)
{
	size_t n = len / 4;

	if (len % 4)
		return -EINVAL;
	if (n * (bits / 8) > cap)
		return -ENOSPC;
	switch (bits) {
	case 8:
		trunc_enc_w(in, out, n, 1);
		break;
	case 16:
		trunc_enc_w(in, out, n, 2);
		break;
	default:
		trunc_enc_w(in, out, n, 3);
		break;
	}
	return n * (bits / 8);
}

static int trunc_decode(u8 bits, const u8 *in, size_t len, u8 *out,
			size_t out_len)
{
	size_t n = out_len / 4;

	if (out_len % 4)
		return -EINVAL;
	if (len != n * (bits / 8))
		return -EBADMSG;
	switch (bits) {
	case 8:
		trunc_dec_w(in, out, n, 1);
		break;
	case 16:
		trunc_dec_w(in, out, n, 2);
		break;
	default:
		trunc_dec_w(in, out, n, 3);
		break;
	}
	return 0;
}

/* decode(encode()) in place: the dropped low bits cleared */
static int trunc_quantise(u8 bits, u8 *buf, size_t len)
{
	u32 keep = ~0u << ((32 - bits) & 31);
	size_t i;

	if (len % 4)
		return -EINVAL;
	for (i = 0; i < len; i += 4)
		put_unaligned_le32(get_unaligned_le32(buf + i) & keep, buf + i);
	return 0;
}

static size_t trunc_bound(size_t len)
{
	return len / 4 * 3;
}

/* the error is relative to the value (the bits dropped), not absolute */
static int trunc_max_err(u8 __always_unused param)
{
	return INCNN_MAX_ERR_NONE;
}

const struct incnn_codec incnn_codec_trunc = {
	.id = INCNN_CODEC_TRUNC,
	.name = "trunc",
	.lossy = true,
	.floats = true,
	.param = {
		.kind = INCNN_PARAM_BITS,
		.min = 8,
		.max = 24,
		.def = 16,
	},
	.max_err = trunc_max_err,
	.hist = false,
	.bound = trunc_bound,
	.encode = trunc_encode,
	.decode = trunc_decode,
	.quantise = trunc_quantise,
};
