// SPDX-License-Identifier: GPL-2.0
/*
 * The SIMD codecs against the scalar reference, bit for bit: encoded
 * bytes, return values (-ENOSPC at the same caps), Table III counts, and
 * decoded bytes and return codes for valid, truncated, corrupted and
 * random bodies. Random values of every distribution plus adversarial
 * ones (thresholds of every k, ebq rounding ties, ±0, Inf, NaN payloads,
 * denormals), every k, every length 0..1024, unaligned buffers.
 * Skips when the CPU has no SIMD path.
 */
#include "kselftest_harness.h"

#include "codec_util.h"
#include "simd.h"

#define N_MAX	4096
#define PAD	64

static const struct incnn_codec *const fcs[] = {
	&incnn_codec_inceptionn, &incnn_codec_ebq, &incnn_codec_zebq,
};
#define NFCS	ARRAY_SIZE(fcs)

#define NEED_AVX2() do {						\
	if (!have_avx2())						\
		SKIP(return, "no AVX2 on this CPU/build: SIMD not tested"); \
} while (0)

/* adversarial values: thresholds, ties, specials */
static uint32_t adversarial(struct incnn_rng *r)
{
	uint64_t x = incnn_rng_next(r);
	uint32_t sign = (uint32_t)(x >> 63) << 31;
	uint32_t mant = (uint32_t)(x >> 8) & 0x7fffff;
	uint32_t e;

	switch (x % 8) {
	case 0:		/* exponents 127-40 .. 128: every k's thresholds */
		e = 87 + (x >> 40) % 42;
		break;
	case 1:		/* extreme mantissas at those exponents */
		e = 87 + (x >> 40) % 42;
		mant = (x >> 50) & 1 ? 0x7fffff : (x >> 51) & 1;
		break;
	case 2: {	/* ebq ties: (2q + 1) * 2^-k, exact in fp32 */
		uint32_t q = (x >> 8) & 0xffff, k = 1 + (x >> 30) % 30;
		float f = ldexpf((float)(2 * q + 1), -(int)k);

		return f2u(f) | sign;
	}
	case 3:		/* ±0, denormals */
		return sign | ((x >> 40) & 1 ? mant : 0);
	case 4:		/* Inf and NaN with any payload */
		return sign | 0x7f800000 | ((x >> 40) & 1 ? mant : 0);
	default:	/* all bits random */
		return (uint32_t)(x >> 16);
	}
	return sign | e << 23 | mant;
}

/*
 * Zero values for zebq's zero groups: none, 90 % or 99 % of single
 * values, or 70 % of aligned runs of 8, by @round.
 */
static void sparsify(struct incnn_rng *r, long round, uint32_t *in, size_t n)
{
	static const unsigned int per_mille[] = { 0, 900, 990, 700 };
	unsigned int mode = round % 4, pm = per_mille[mode];

	for (size_t i = 0; pm && i < n; i++) {
		if (incnn_rng_next(r) % 1000 >= pm)
			continue;
		if (mode < 3)
			in[i] = 0;
		else
			for (size_t e = (i | 7) + 1; i < n && i < e; i++)
				in[i] = i % 2 ? 0x80000000 : 0;
	}
}

/* n values of a distribution chosen by @round */
static void gen_case(struct incnn_rng *r, long round, uint32_t *in, size_t n)
{
	static const double scales[] = { 1e-3, 1e-2, 1e-4, 1e-1, 1, 100 };
	int d = round % (__INCNN_DIST_MAX + 1);

	if (d == __INCNN_DIST_MAX) {
		for (size_t i = 0; i < n; i++)
			in[i] = adversarial(r);
	} else {
		gen_bits(r, d, scales[(round / (__INCNN_DIST_MAX + 1)) % 6],
			 in, n);
	}
	sparsify(r, round / 5, in, n);
}

struct bufs {
	uint8_t in[4 * N_MAX + PAD], b0[5 * N_MAX + PAD], b1[5 * N_MAX + PAD];
	uint8_t o0[4 * N_MAX + PAD], o1[4 * N_MAX + PAD];
};

/*
 * Encode n values at in+ioff with both paths into exactly cap bytes at
 * offset boff; compare. Returns the body length (or error) and leaves
 * the bodies in b0 (scalar) and b1 (SIMD) at boff.
 */
static ssize_t enc_both(struct __test_metadata *_metadata, struct bufs *b,
			const struct incnn_codec *c, uint8_t k, size_t n,
			size_t ioff, size_t boff, size_t cap)
{
	struct incnn_hist h0 = { { 1, 2, 3, 4 } }, h1 = h0;
	const uint8_t *in = b->in + ioff;
	ssize_t r0, r1;

	size_t end = boff + cap + PAD;

	memset(b->b0, 0xa5, end);
	memset(b->b1, 0xa5, end);
	/* with and without hist: the SIMD encoders count only if asked */
	bool count = (n + cap) % 2;

	r0 = c->encode(k, in, 4 * n, b->b0 + boff, cap, test_scratch(),
		       count ? &h0 : NULL);
	r1 = c->encode_avx2(k, in, 4 * n, b->b1 + boff, cap, test_scratch(),
			    count ? &h1 : NULL);
	EXPECT_EQ(r0, r1) {
		TH_LOG("%s k=%u n=%zu cap=%zu", c->name, k, n, cap);
		return r0;
	}
	/* nothing written past cap */
	for (size_t j = boff + cap; j < end; j++)
		ASSERT_EQ(0xa5, b->b1[j]);
	if (r0 >= 0)
		EXPECT_EQ(0, memcmp(b->b0 + boff, b->b1 + boff, r0)) {
			TH_LOG("%s k=%u n=%zu: bodies differ", c->name, k, n);
		}
	EXPECT_EQ(0, memcmp(h0.n, h1.n, sizeof(h0.n))) {
		TH_LOG("%s k=%u n=%zu: hist differs", c->name, k, n);
	}
	return r0;
}

/* Decode body (len bytes at b0+boff) into n values with both paths. */
static void dec_both(struct __test_metadata *_metadata, struct bufs *b,
		     const struct incnn_codec *c, uint8_t k,
		     size_t boff, size_t len, size_t ooff, size_t out_len)
{
	/* an exact heap copy, so ASan sees any read past the body */
	uint8_t *body = malloc(len ? len : 1);
	size_t end = ooff + out_len + PAD;
	int r0, r1;

	memcpy(body, b->b0 + boff, len);
	memset(b->o0, 0x5a, end);
	memset(b->o1, 0x5a, end);
	r0 = c->decode(k, body, len, b->o0 + ooff, out_len);
	r1 = c->decode_avx2(k, body, len, b->o1 + ooff, out_len);
	free(body);
	EXPECT_EQ(r0, r1) {
		TH_LOG("%s k=%u len=%zu out_len=%zu", c->name, k, len,
		       out_len);
	}
	/* the same bytes, also on error, and nothing outside out_len */
	EXPECT_EQ(0, memcmp(b->o0, b->o1, end)) {
		TH_LOG("%s k=%u len=%zu out_len=%zu: outputs differ (r=%d)",
		       c->name, k, len, out_len, r0);
	}
	for (size_t j = ooff + out_len; j < end; j++)
		ASSERT_EQ(0x5a, b->o1[j]);
}

/* long randomised tests run as TEST_F_TIMEOUT(simd, ...) */
FIXTURE(simd) {
};

static FIXTURE_SETUP(simd)
{
}

static FIXTURE_TEARDOWN(simd)
{
}

TEST(tables)
{
	for (unsigned int t = 0; t < 256; t++) {
		uint8_t enc[16], dec[16], enc_hi[16], dec_hi[16];
		unsigned int off = 0;

		memset(enc, 128, sizeof(enc));
		memset(enc_hi, 128, sizeof(enc_hi));
		for (unsigned int j = 0; j < 4; j++) {
			unsigned int l = INCNN_TAG_BYTES((t >> (2 * j)) & 3);

			for (unsigned int i = 0; i < 4; i++) {
				dec[4 * j + i] = i < l ? off + i : 128;
				/* a 1-byte value: byte 1 of its lane */
				dec_hi[4 * j + i] = l == 1 ? (i == 1 ? off : 128)
							   : dec[4 * j + i];
				if (i < l) {
					enc[off + i] = 4 * j + i;
					enc_hi[off + i] = 4 * j + i + (l == 1);
				}
			}
			off += l;
		}
		uint16_t spread = 0;

		for (unsigned int j = 0; j < 8; j++)
			spread |= ((t >> j) & 1) << (2 * j);
		ASSERT_EQ(spread, incnn_simd_spread[t]);
		ASSERT_EQ(off, incnn_simd_len[t]);
		ASSERT_EQ(0, memcmp(enc, incnn_simd_enc_shuf[t], 16));
		ASSERT_EQ(0, memcmp(dec, incnn_simd_dec_shuf[t], 16));
		ASSERT_EQ(0, memcmp(enc_hi, incnn_simd_enc_shuf_hi[t], 16));
		ASSERT_EQ(0, memcmp(dec_hi, incnn_simd_dec_shuf_hi[t], 16));
	}
}

/* the byte tables: 8 values of tags 00 and 01 */
TEST(byte_tables)
{
	for (unsigned int t = 0; t < 256; t++) {
		uint8_t pack[8], unpack[8];
		unsigned int r = 0;

		/* pack8[t]: the kept lanes (bit j of t) in order */
		memset(pack, 128, sizeof(pack));
		for (unsigned int j = 0; j < 8; j++)
			if ((t >> j) & 1)
				pack[r++] = j;
		ASSERT_EQ(0, memcmp(pack, incnn_simd_pack8[t], 8));
		/*
		 * unpack8 by the keep byte of the tag word with value j's
		 * tag 01 iff bit j of t: each lane its rank, or 128
		 */
		uint32_t tags = 0;

		for (unsigned int j = 0; j < 8; j++)
			tags |= ((t >> j) & 1) << (2 * j);
		uint32_t kb = (tags | tags >> 7) & 0xff;

		r = 0;
		for (unsigned int j = 0; j < 8; j++)
			unpack[j] = (t >> j) & 1 ? r++ : 128;
		ASSERT_EQ(0, memcmp(unpack, incnn_simd_unpack8[kb], 8));
	}
}

TEST(dispatch)
{
	NEED_AVX2();
	for (unsigned int i = 0; i < ARRAY_SIZE(fcs); i++) {
		ASSERT_NE(NULL, fcs[i]->encode_avx2);
		ASSERT_NE(NULL, fcs[i]->decode_avx2);
	}
	/* INCNN_SIMD=0 in the environment forces scalar */
	ASSERT_EQ(getenv("INCNN_SIMD") && !strcmp(getenv("INCNN_SIMD"), "0") ?
		  INCNN_SIMD_NONE : INCNN_SIMD_AVX2, (int)incnn_simd_level());
	ASSERT_STREQ("avx2", incnn_simd_name(INCNN_SIMD_AVX2));
	ASSERT_STREQ("none", incnn_simd_name(INCNN_SIMD_NONE));
}

/* random lengths, every k, unaligned buffers: ~24M values in all */
TEST_F_TIMEOUT(simd, random, 600)
{
	struct bufs *b = malloc(sizeof(*b));
	struct incnn_rng r;
	long round;

	NEED_AVX2();
	incnn_rng_seed(&r, 0x5111d);
	for (round = 0; round < 6000 * (long)NFCS; round++) {
		const struct incnn_codec *c = fcs[round % NFCS];
		uint8_t k = 1 + (round / NFCS) % 30;
		size_t n = incnn_rng_next(&r) % N_MAX;
		size_t ioff = round % 4, boff = (round / 4) % 4;
		ssize_t len;

		gen_case(&r, round / 60, (uint32_t *)b->in, n + 1);
		memmove(b->in + ioff, b->in, 4 * n);
		len = enc_both(_metadata, b, c, k, n, ioff, boff,
			       c->bound(4 * n));
		ASSERT_GE(len, 0);
		dec_both(_metadata, b, c, k, boff, len, (round / 16) % 4,
			 4 * n);
		if (_metadata->passed == 0)
			break;
	}
	free(b);
}

/* every length 0..1024, every cap around the exact size */
TEST_F_TIMEOUT(simd, lengths_caps, 600)
{
	struct bufs *b = malloc(sizeof(*b));
	struct incnn_rng r;

	NEED_AVX2();
	incnn_rng_seed(&r, 1024);
	for (size_t n = 0; n <= 1024; n++) {
		for (unsigned int ci = 0; ci < ARRAY_SIZE(fcs); ci++) {
			const struct incnn_codec *c = fcs[ci];
			uint8_t k = n % 3 == 0 ? 6 : n % 3 == 1 ? 8 : 10;
			ssize_t len;
			size_t cap;

			gen_case(&r, n, (uint32_t *)b->in, n);
			len = enc_both(_metadata, b, c, k, n, 0, 0,
				       c->bound(4 * n));
			ASSERT_GE(len, 0);
			for (cap = len > 40 ? len - 40 : 0;
			     cap <= (size_t)len + 40; cap++)
				enc_both(_metadata, b, c, k, n, n % 4, 0, cap);
			len = enc_both(_metadata, b, c, k, n, 0, 0,
				       c->bound(4 * n));
			/* exact, every truncation near the end, too long */
			for (size_t l = len > 40 ? len - 40 : 0;
			     l <= (size_t)len + 8; l++)
				dec_both(_metadata, b, c, k, 0, l, n % 4,
					 4 * n);
			if (_metadata->passed == 0)
				goto out;
		}
	}
out:
	free(b);
}

/* valid bodies with bytes corrupted, and random bodies */
TEST_F_TIMEOUT(simd, corrupt, 600)
{
	struct bufs *b = malloc(sizeof(*b));
	struct incnn_rng r;

	NEED_AVX2();
	incnn_rng_seed(&r, 0xbad);
	for (long round = 0; round < 10000 * (long)NFCS; round++) {
		const struct incnn_codec *c = fcs[round % NFCS];
		uint8_t k = 1 + (round / NFCS) % 30;
		size_t n = incnn_rng_next(&r) % 1200, len;
		ssize_t l;

		gen_case(&r, round, (uint32_t *)b->in, n);
		l = enc_both(_metadata, b, c, k, n, 0, 0, c->bound(4 * n));
		ASSERT_GE(l, 0);
		len = l;
		if (round % 5 == 4) {		/* all random */
			len = incnn_rng_next(&r) % (5 * n + 8);
			for (size_t j = 0; j < len; j++)
				b->b0[j] = incnn_rng_next(&r);
		} else {			/* 1..4 bytes changed */
			for (int f = 0; len && f <= round % 4; f++)
				b->b0[incnn_rng_next(&r) % len] ^=
					1 + incnn_rng_next(&r) % 255;
			len += (long)(incnn_rng_next(&r) % 9) - 4;
			if ((ssize_t)len < 0)
				len = 0;
		}
		dec_both(_metadata, b, c, k, 0, len, round % 4, 4 * n);
		if (_metadata->passed == 0)
			break;
	}
	free(b);
}

TEST_HARNESS_MAIN
