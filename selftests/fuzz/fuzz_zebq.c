// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for zebq against ebq.
 *
 * Input: byte 0 selects k (1..30), byte 1 a zeroing pattern; the rest,
 * with whole runs of 8 values zeroed where the pattern says (so that
 * zero groups and their flags are exercised), is encoded with zebq and
 * with ebq. zebq must decode to exactly ebq's values, its body must be
 * at most ebq's plus one flag byte per 64 values, decoding it again must
 * be idempotent, and where the CPU has AVX2 both paths must agree (body,
 * return value, counts, and on the raw input as a hostile body).
 * fuzz_codec fuzzes zebq's decoder with every other codec's.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "fuzz_arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the arena slots of one run's buffers (fuzz_arena.h); check_avx2's reuse */
enum { S_IN, S_BZ, S_BE, S_BZ2, S_OZ, S_OE, S_OZ2 };
enum { S_B0 = S_BE, S_B1 = S_BZ2, S_O0 = S_OE, S_O1 = S_OZ2 };

static _Alignas(64) uint8_t scratch[INCNN_CODEC_SCRATCH];

static ssize_t enc(const struct incnn_codec *c, enum incnn_simd simd,
		   uint8_t k, const uint8_t *in, size_t len, unsigned int slot,
		   uint8_t **body, struct incnn_hist *h)
{
	size_t cap = c->bound(len);

	*body = fuzz_buf(slot, cap, FUZZ_FILL);
	return incnn_codec_encode(c, simd, k, in, len, *body, cap, scratch, h);
}

static void check_avx2(uint8_t k, const uint8_t *in, size_t len,
		       const uint8_t *body, ssize_t blen)
{
	const struct incnn_codec *z = &incnn_codec_zebq;
	struct incnn_hist h0 = { { 0 } }, h1 = { { 0 } };
	uint8_t *b0, *b1, *o0, *o1;
	ssize_t r0 = enc(z, INCNN_SIMD_NONE, k, in, len, S_B0, &b0, &h0);
	ssize_t r1 = enc(z, INCNN_SIMD_AVX2, k, in, len, S_B1, &b1, &h1);

	if (r0 != r1 || r0 != blen || memcmp(b0, b1, r0) ||
	    memcmp(body, b1, r1) || memcmp(&h0, &h1, sizeof(h0)))
		abort();
	/* one byte short: both refuse, neither writes past the cap */
	if (blen > 0 &&
	    (z->encode(k, in, len, b0, blen - 1, scratch, NULL) != -ENOSPC ||
	     z->encode_avx2(k, in, len, b1, blen - 1, scratch, NULL) !=
	     -ENOSPC))
		abort();
	/* the input itself as a hostile body */
	o0 = fuzz_buf(S_O0, len, 0);
	o1 = fuzz_buf(S_O1, len, 0);
	if (z->decode(k, in, len, o0, len) !=
	    z->decode_avx2(k, in, len, o1, len) || memcmp(o0, o1, len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct incnn_codec *z = &incnn_codec_zebq, *e = &incnn_codec_ebq;
	uint8_t *in, *bz, *be, *bz2, *oz, *oe, *oz2;
	size_t len, n;
	ssize_t lz, le, lz2;
	uint8_t k, pat;

	if (size < 2 || size > FUZZ_MAX_INPUT)
		return 0;
	k = 1 + data[0] % 30;
	pat = data[1];
	len = (size - 2) & ~(size_t)3;
	n = len / 4;
	in = fuzz_buf(S_IN, len, 0);
	memcpy(in, data + 2, len);
	for (size_t g = 0; 8 * g < n; g++)
		if ((pat >> (g % 8)) & 1)
			memset(in + 32 * g, 0, n - 8 * g < 8 ? 4 * (n - 8 * g) : 32);

	lz = enc(z, INCNN_SIMD_NONE, k, in, len, S_BZ, &bz, NULL);
	le = enc(e, INCNN_SIMD_NONE, k, in, len, S_BE, &be, NULL);
	if (lz < 0 || le < 0 || (size_t)lz > (size_t)le + (n + 63) / 64)
		abort();
	oz = fuzz_buf(S_OZ, len, FUZZ_FILL);
	oe = fuzz_buf(S_OE, len, FUZZ_FILL);
	oz2 = fuzz_buf(S_OZ2, len, FUZZ_FILL);
	if (z->decode(k, bz, lz, oz, len) || e->decode(k, be, le, oe, len) ||
	    memcmp(oz, oe, len))
		abort();
	lz2 = enc(z, INCNN_SIMD_NONE, k, oz, len, S_BZ2, &bz2, NULL);
	if (lz2 != lz || memcmp(bz, bz2, lz) || z->decode(k, bz2, lz2, oz2, len) ||
	    memcmp(oz, oz2, len))
		abort();
	if (incnn_simd_level() == INCNN_SIMD_AVX2)
		check_avx2(k, in, len, bz, lz);
	return 0;
}
