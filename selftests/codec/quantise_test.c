// SPDX-License-Identifier: GPL-2.0
/*
 * The quantise op (decode(encode(x)) in place, one pass) against the
 * codec's own scalar encode then decode, exact bytes: every codec with
 * the op, every valid parameter, the scalar op, the AVX2 op (skipped
 * without AVX2) and the dispatcher; random values of every distribution
 * and several scales, NaN payloads, infinities, denormals, +-0, ebq's
 * rounding ties, a sweep of every exponent; lengths 0, 4, odd multiples
 * of 4, 1448 and 64 KiB, unaligned buffers.
 */
#include "kselftest_harness.h"

#include "codec_util.h"

/* 64 KiB of values, and room to misalign them */
#define N_MAX	16384
#define PAD	8

static const struct incnn_codec *const qcs[] = {
	&incnn_codec_inceptionn, &incnn_codec_ebq, &incnn_codec_zebq,
	&incnn_codec_trunc,
};

/* value counts: 0, 1 (4 bytes), odd ones, 1448 bytes, 64 KiB */
static const size_t lens[] = { 0, 1, 3, 7, 9, 15, 17, 33, 101, 362, N_MAX };

enum qpath { Q_SCALAR, Q_AVX2, Q_DISPATCH, Q_PATHS };

static const char *const qpath_name[] = { "scalar", "avx2", "dispatch" };

/* the op of @path, 1 if there is none to test */
static int quantise(const struct incnn_codec *c, enum qpath path, uint8_t p,
		    uint8_t *buf, size_t len)
{
	switch (path) {
	case Q_SCALAR:
		return c->quantise(p, buf, len);
	case Q_AVX2:
		if (!c->quantise_avx2 || !have_avx2())
			return 1;
		return c->quantise_avx2(p, buf, len);
	default:
		return incnn_codec_quantise(c, incnn_simd_level(), p, buf, len);
	}
}

/* every valid parameter of @c in turn: 0 after the last */
static unsigned int next_param(const struct incnn_codec *c, unsigned int p)
{
	for (p = p ? p + 1 : c->param.min; p <= c->param.max; p++)
		if (!incnn_codec_check_param(c, p))
			return p;
	return 0;
}

/* adversarial values: specials, ebq ties at 2^-@k, every exponent */
static uint32_t special(struct incnn_rng *r, unsigned int k)
{
	uint64_t x = incnn_rng_next(r);
	uint32_t sign = (uint32_t)(x >> 63) << 31;
	uint32_t mant = (uint32_t)(x >> 8) & 0x7fffff;
	uint32_t e = (x >> 40) & 0xff;

	switch (x % 8) {
	case 0:		/* ebq ties: (2q + 1) * 2^-k */
		return f2u(ldexpf((float)(2 * ((x >> 8) & 0xffff) + 1),
				  -(int)k)) | sign;
	case 1:		/* +-0, denormals */
		return sign | ((x >> 40) & 1 ? mant : 0);
	case 2:		/* Inf, NaN with any payload */
		return sign | 0x7f800000 | ((x >> 41) & 1 ? mant : 0);
	case 3:		/* extreme mantissas */
		mant = (x >> 50) & 1 ? 0x7fffff : (x >> 51) & 1;
		break;
	case 4:		/* around 2^-k */
		e = 127 - k + (int)((x >> 40) % 20) - 10;
		break;
	default:
		break;
	}
	return sign | e << 23 | mant;
}

/* the values of case @round (of 6 distributions x 4 scales) */
static void gen_round(struct incnn_rng *r, unsigned int round,
		      unsigned int k, uint32_t *v, size_t n)
{
	static const double scales[] = { 1e-3, 1, 1e-6, 100 };
	unsigned int d = round % (__INCNN_DIST_MAX + 1);

	if (d == __INCNN_DIST_MAX) {
		for (size_t i = 0; i < n; i++)
			v[i] = special(r, k);
		return;
	}
	gen_bits(r, d, scales[(round / (__INCNN_DIST_MAX + 1)) % 4], v, n);
}

/* what encode then decode (both scalar) give for @n values @v */
static void reference(struct __test_metadata *_metadata,
		      const struct incnn_codec *c, uint8_t p,
		      const uint32_t *v, size_t n, uint32_t *out)
{
	uint8_t *body;
	ssize_t len = enc_floats(c, p, v, n, &body, NULL);

	ASSERT_LE(0, len);
	ASSERT_EQ(0, dec_floats(c, p, body, len, out, n));
	free(body);
}

struct qbufs {
	uint32_t in[N_MAX], ref[N_MAX];
	uint8_t buf[4 * N_MAX + PAD];
};

/* @n values of @in through every path at every offset, against ref */
static void check_paths(struct __test_metadata *_metadata, struct qbufs *b,
			const struct incnn_codec *c, uint8_t p, size_t n)
{
	reference(_metadata, c, p, b->in, n, b->ref);
	for (unsigned int path = 0; path < Q_PATHS; path++) {
		size_t off = (n + path) % 4;
		int ret;

		memset(b->buf, 0xa5, sizeof(b->buf));
		memcpy(b->buf + off, b->in, 4 * n);
		ret = quantise(c, path, p, b->buf + off, 4 * n);
		if (ret == 1)
			continue;
		ASSERT_EQ(0, ret);
		EXPECT_EQ(0, memcmp(b->buf + off, b->ref, 4 * n)) {
			for (size_t i = 0; i < n; i++) {
				uint32_t got;

				memcpy(&got, b->buf + off + 4 * i, 4);
				if (got != b->ref[i]) {
					TH_LOG("%s:%u %s n=%zu: value %zu %08x gives %08x, not %08x",
					       c->name, p, qpath_name[path], n,
					       i, b->in[i], got, b->ref[i]);
					break;
				}
			}
			return;
		}
		/* nothing touched around it */
		for (size_t j = 0; j < off; j++)
			ASSERT_EQ(0xa5, b->buf[j]);
		for (size_t j = off + 4 * n; j < sizeof(b->buf); j++)
			ASSERT_EQ(0xa5, b->buf[j]);
	}
}

FIXTURE(q) {
	struct qbufs *b;
};

static FIXTURE_SETUP(q)
{
	self->b = malloc(sizeof(*self->b));
	ASSERT_NE(NULL, self->b);
}

static FIXTURE_TEARDOWN(q)
{
	free(self->b);
}

TEST(ops)
{
	uint8_t buf[8] = { 0 };

	/* the codecs that have one, the one that has none */
	for (unsigned int i = 0; i < ARRAY_SIZE(qcs); i++) {
		ASSERT_NE(NULL, qcs[i]->quantise);
		ASSERT_EQ(-EINVAL, qcs[i]->quantise(qcs[i]->param.def, buf, 6));
		ASSERT_EQ(-EINVAL, incnn_codec_quantise(qcs[i],
							incnn_simd_level(),
							qcs[i]->param.def,
							buf, 3));
	}
	ASSERT_EQ(NULL, incnn_codec_lz4.quantise);
	ASSERT_EQ(-EOPNOTSUPP, incnn_codec_quantise(&incnn_codec_lz4,
						    incnn_simd_level(), 0,
						    buf, 8));
	if (have_avx2()) {
		ASSERT_NE(NULL, incnn_codec_ebq.quantise_avx2);
		ASSERT_NE(NULL, incnn_codec_inceptionn.quantise_avx2);
		ASSERT_EQ(-EINVAL, incnn_codec_ebq.quantise_avx2(10, buf, 7));
	}
}

/* exact values: ebq at 2^-8 (step 2^-7, round half up) */
TEST(vectors_ebq_k8)
{
	static const uint32_t in[] = {
		0x3c000000, 0xbf000000, 0x3b000000, 0x80000000,
		0x3b7fffff, 0x3b800000, 0xbb800000, 0x7f800000,
		0x7fc01234, 0xff800001, 0x00000001, 0x3f800000,
		0x43800000, 0x44000000, 0x3c400001,
	};
	/*
	 * 2^-7 (q 1), -0.5 (q 64), 2^-9 and -0 and 2^-8 - ulp (q 0): +0,
	 * +-2^-8 (a tie, q 1): +-2^-7, Inf and NaNs as sent, a denormal: +0,
	 * 1.0 (q 128), 256 (q 2^15) and 512: raw, 1.5 * 2^-7 + ulp: 2^-6
	 */
	static const uint32_t want[] = {
		0x3c000000, 0xbf000000, 0x00000000, 0x00000000,
		0x00000000, 0x3c000000, 0xbc000000, 0x7f800000,
		0x7fc01234, 0xff800001, 0x00000000, 0x3f800000,
		0x43800000, 0x44000000, 0x3c800000,
	};
	uint32_t v[ARRAY_SIZE(in)];

	for (unsigned int path = 0; path < Q_PATHS; path++) {
		memcpy(v, in, sizeof(v));
		if (quantise(&incnn_codec_ebq, path, 8, (uint8_t *)v,
			     sizeof(v)) == 1)
			continue;
		for (unsigned int i = 0; i < ARRAY_SIZE(in); i++) {
			EXPECT_EQ(want[i], v[i]) {
				TH_LOG("%s value %u", qpath_name[path], i);
			}
		}
	}
}

/* the @j-th mantissa of an exponent: edges, then random */
static uint32_t mantissa(struct incnn_rng *r, uint32_t j)
{
	if (j < 4)
		return 0x7fffff >> j;
	if (j < 8)
		return j - 4;
	if (j < 12)
		return 0x400000 >> (j - 8);
	return incnn_rng_next(r) & 0x7fffff;
}

/* every exponent, both signs, edge and random mantissas, every parameter */
TEST_F(q, exponents)
{
	struct incnn_rng r;

	incnn_rng_seed(&r, 0xe4);
	for (unsigned int ci = 0; ci < ARRAY_SIZE(qcs); ci++) {
		const struct incnn_codec *c = qcs[ci];

		for (unsigned int p = next_param(c, 0); p;
		     p = next_param(c, p)) {
			size_t n = 0;

			for (uint32_t e = 0; e < 256; e++)
				for (uint32_t j = 0; j < 24; j++) {
					self->b->in[n++] = (j & 1) << 31 |
							   e << 23 |
							   mantissa(&r, j);
				}
			check_paths(_metadata, self->b, c, p, n);
		}
	}
}

/* distributions, scales, specials; every parameter; every length */
TEST_F_TIMEOUT(q, random, 300)
{
	struct incnn_rng r;
	unsigned int round = 0;

	incnn_rng_seed(&r, 0x9a4);
	for (unsigned int ci = 0; ci < ARRAY_SIZE(qcs); ci++) {
		const struct incnn_codec *c = qcs[ci];

		for (unsigned int p = next_param(c, 0); p;
		     p = next_param(c, p)) {
			for (unsigned int li = 0; li < ARRAY_SIZE(lens);
			     li++, round++) {
				size_t n = lens[li];

				gen_round(&r, round, p, self->b->in, n);
				check_paths(_metadata, self->b, c, p, n);
			}
			/* 64 KiB of every distribution, a scale by p */
			for (unsigned int d = 0; d <= __INCNN_DIST_MAX; d++) {
				gen_round(&r, d + 6 * p, p, self->b->in,
					  N_MAX);
				check_paths(_metadata, self->b, c, p, N_MAX);
			}
		}
	}
}

TEST_HARNESS_MAIN
