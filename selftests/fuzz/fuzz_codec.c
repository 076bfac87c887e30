// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for every codec, both directions.
 *
 * Input: byte 0 selects the codec, byte 1 its parameter, bytes 2-3 the
 * decoded length; the rest is (a) decoded as a hostile body into an
 * exact-size buffer and (b) encoded as data, which must then decode
 * (exactly, for lossless codecs and raw values) and, for the 2^-k codecs,
 * be idempotent. Where the codec has a SIMD path and the CPU runs it,
 * both directions must also match the scalar code bit for bit (return
 * value, bytes, Table III counts), including encodes into a short cap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Alignas(64) uint8_t scratch[INCNN_CODEC_SCRATCH];

/* SIMD decode of a hostile body == scalar decode */
static void simd_decode(const struct incnn_codec *c, uint8_t p,
			const uint8_t *body, size_t len, size_t out_len)
{
	uint8_t *o0, *o1;
	int r0, r1;

	if (incnn_simd_level() != INCNN_SIMD_AVX2 || !c->decode_avx2)
		return;
	o0 = calloc(1, out_len + 1);
	o1 = calloc(1, out_len + 1);
	r0 = c->decode(p, body, len, o0, out_len);
	r1 = c->decode_avx2(p, body, len, o1, out_len);
	if (r0 != r1 || memcmp(o0, o1, out_len))
		abort();
	free(o0);
	free(o1);
}

/* SIMD encode == scalar encode, into exactly @cap bytes */
static void simd_encode(const struct incnn_codec *c, uint8_t p,
			const uint8_t *in, size_t len, size_t cap)
{
	struct incnn_hist h0 = { { 0 } }, h1 = { { 0 } };
	uint8_t *b0, *b1;
	ssize_t r0, r1;

	if (incnn_simd_level() != INCNN_SIMD_AVX2 || !c->encode_avx2)
		return;
	b0 = malloc(cap + 1);
	b1 = malloc(cap + 1);
	r0 = c->encode(p, in, len, b0, cap, scratch, &h0);
	r1 = c->encode_avx2(p, in, len, b1, cap, scratch, &h1);
	if (r0 != r1 || (r0 > 0 && memcmp(b0, b1, r0)) ||
	    memcmp(h0.n, h1.n, sizeof(h0.n)))
		abort();
	free(b0);
	free(b1);
}

static void check_encode(const struct incnn_codec *c, uint8_t p,
			 const uint8_t *in, size_t len)
{
	size_t cap = c->bound(len);
	uint8_t *body = malloc(cap + 1), *out = malloc(len + 1);
	uint8_t *body2 = malloc(cap + 1), *out2 = malloc(len + 1);
	ssize_t n, n2;

	n = c->encode(p, in, len, body, cap, scratch, NULL);
	if (n < 0 || (size_t)n > cap)
		abort();
	simd_encode(c, p, in, len, cap);
	/* a cap a few bytes either side of the exact size */
	simd_encode(c, p, in, len, n < 3 ? 0 : (size_t)n - 3 + len % 7);
	if (c->decode(p, body, n, out, len))
		abort();
	if (!c->lossy && memcmp(in, out, len))
		abort();
	if (c->id == INCNN_CODEC_INCEPTIONN || c->id == INCNN_CODEC_EBQ) {
		n2 = c->encode(p, out, len, body2, cap, scratch, NULL);
		if (n2 < 0 || c->decode(p, body2, n2, out2, len) ||
		    memcmp(out, out2, len))
			abort();
	}
	free(body);
	free(out);
	free(body2);
	free(out2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct incnn_codec *c;
	size_t out_len, body_len;
	uint8_t p, *body, *out;

	if (size < 4)
		return 0;
	c = incnn_codec_get(1 + data[0] % INCNN_CODEC_MAX);
	p = incnn_codec_check_param(c, data[1]) ? c->param.def : data[1];
	out_len = (data[2] | data[3] << 8) % 16384;
	if (c->floats)
		out_len &= ~3u;
	body_len = size - 4;

	body = malloc(body_len + 1);
	memcpy(body, data + 4, body_len);
	out = malloc(out_len + 1);
	c->decode(p, body, body_len, out, out_len);
	free(out);
	simd_decode(c, p, body, body_len, out_len);

	check_encode(c, p, body, c->floats ? body_len & ~3u : body_len);
	free(body);
	return 0;
}
