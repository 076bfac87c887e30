// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for every codec, both directions.
 *
 * Input: byte 0 selects the codec, byte 1 its parameter, bytes 2-3 the
 * decoded length; the rest is (a) decoded as a hostile body into an
 * exact-size buffer and (b) encoded as data, which must then decode
 * (exactly, for lossless codecs and raw values) to what the codec's
 * quantise op (if any) makes of the data in place, and, for the 2^-k
 * codecs, be idempotent. Where the codec has a SIMD path and the CPU runs it,
 * both directions must also match the scalar code bit for bit (return
 * value, bytes, Table III counts), including encodes into a short cap,
 * and the SIMD quantise op must give decode(encode()) too.
 * Every buffer is exact-size, in a poisoned arena (fuzz_arena.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "fuzz_arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the arena slots of one run's buffers (fuzz_arena.h) */
enum { S_IN, S_A, S_B, S_BODY, S_OUT, S_BODY2, S_OUT2, S_Q };

static _Alignas(64) uint8_t scratch[INCNN_CODEC_SCRATCH];

/* a hostile body, and where the codec has one, SIMD decode == scalar */
static void hostile_decode(const struct incnn_codec *c, uint8_t p,
			   const uint8_t *body, size_t len, size_t out_len)
{
	bool simd = incnn_simd_level() == INCNN_SIMD_AVX2 && c->decode_avx2;
	uint8_t *o0, *o1;
	int r0, r1;

	o0 = fuzz_buf(S_A, out_len, simd ? 0 : FUZZ_FILL);
	r0 = c->decode(p, body, len, o0, out_len);
	if (!simd)
		return;
	o1 = fuzz_buf(S_B, out_len, 0);
	r1 = c->decode_avx2(p, body, len, o1, out_len);
	if (r0 != r1 || memcmp(o0, o1, out_len))
		abort();
}

/* SIMD encode into exactly @cap bytes == scalar: @r0, @b0, @h0 (if any) */
static void simd_encode(const struct incnn_codec *c, uint8_t p,
			const uint8_t *in, size_t len, size_t cap, ssize_t r0,
			const uint8_t *b0, const struct incnn_hist *h0)
{
	struct incnn_hist h1 = { { 0 } };
	uint8_t *b1 = fuzz_buf(S_B, cap, FUZZ_FILL);
	ssize_t r1 = c->encode_avx2(p, in, len, b1, cap, scratch, &h1);

	if (r0 != r1 || (r0 > 0 && memcmp(b0, b1, r0)) ||
	    (h0 && memcmp(h0->n, h1.n, sizeof(h0->n))))
		abort();
}

/* scalar and SIMD encode into a short (or long) @cap agree */
static void simd_encode_cap(const struct incnn_codec *c, uint8_t p,
			    const uint8_t *in, size_t len, size_t cap)
{
	struct incnn_hist h0 = { { 0 } };
	uint8_t *b0 = fuzz_buf(S_A, cap, FUZZ_FILL);
	ssize_t r0 = c->encode(p, in, len, b0, cap, scratch, &h0);

	simd_encode(c, p, in, len, cap, r0, b0, &h0);
}

/* the quantise op (scalar, and SIMD where it runs) == @out, decode(encode) */
static void check_quantise(const struct incnn_codec *c, uint8_t p,
			   const uint8_t *in, size_t len, const uint8_t *out)
{
	bool simd = incnn_simd_level() == INCNN_SIMD_AVX2 && c->quantise_avx2;
	uint8_t *q;

	if (!c->quantise)
		return;
	q = fuzz_buf(S_Q, len, 0);
	memcpy(q, in, len);
	if (c->quantise(p, q, len) || memcmp(q, out, len))
		abort();
	if (!simd)
		return;
	q = fuzz_buf(S_Q, len, 0);
	memcpy(q, in, len);
	if (c->quantise_avx2(p, q, len) || memcmp(q, out, len))
		abort();
}

static void check_encode(const struct incnn_codec *c, uint8_t p,
			 const uint8_t *in, size_t len)
{
	size_t cap = c->bound(len);
	uint8_t *body = fuzz_buf(S_BODY, cap, FUZZ_FILL);
	uint8_t *out = fuzz_buf(S_OUT, len, FUZZ_FILL);
	bool simd = incnn_simd_level() == INCNN_SIMD_AVX2 && c->encode_avx2;
	/* counts for every other float count: NULL is a path too */
	struct incnn_hist h = { { 0 } }, *hp = simd && !(len & 4) ? &h : NULL;
	uint8_t *body2, *out2;
	ssize_t n, n2;

	n = c->encode(p, in, len, body, cap, scratch, hp);
	if (n < 0 || (size_t)n > cap)
		abort();
	if (simd) {
		simd_encode(c, p, in, len, cap, n, body, hp);
		/* a cap a few bytes either side of the exact size */
		simd_encode_cap(c, p, in, len,
				n < 3 ? 0 : (size_t)n - 3 + len % 7);
	}
	if (c->decode(p, body, n, out, len))
		abort();
	if (!c->lossy && memcmp(in, out, len))
		abort();
	check_quantise(c, p, in, len, out);
	if (c->id == INCNN_CODEC_INCEPTIONN || c->id == INCNN_CODEC_EBQ) {
		body2 = fuzz_buf(S_BODY2, cap, FUZZ_FILL);
		out2 = fuzz_buf(S_OUT2, len, FUZZ_FILL);
		n2 = c->encode(p, out, len, body2, cap, scratch, NULL);
		if (n2 < 0 || c->decode(p, body2, n2, out2, len) ||
		    memcmp(out, out2, len))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct incnn_codec *c;
	size_t out_len, body_len;
	uint8_t p, *body;

	if (size < 4 || size > FUZZ_MAX_INPUT)
		return 0;
	c = incnn_codec_get(1 + data[0] % INCNN_CODEC_MAX);
	p = incnn_codec_check_param(c, data[1]) ? c->param.def : data[1];
	out_len = (data[2] | data[3] << 8) % 16384;
	if (c->floats)
		out_len &= ~3u;
	body_len = size - 4;

	body = fuzz_buf(S_IN, body_len, 0);
	memcpy(body, data + 4, body_len);
	hostile_decode(c, p, body, body_len, out_len);

	check_encode(c, p, body, c->floats ? body_len & ~3u : body_len);
	return 0;
}
