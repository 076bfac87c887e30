// SPDX-License-Identifier: GPL-2.0
/*
 * zebq: hand-derived bodies, rejection of non-canonical bodies, and its
 * properties on millions of random values, sparse ones included: it
 * decodes to exactly ebq's values (so ebq's bound and idempotence hold),
 * its body is the flags followed by ebq's body of the flagged groups
 * (so never larger than ebq's plus the flags), and its histogram is
 * ebq's. Scalar against AVX2 is in codec_simd.c.
 */
#include "kselftest_harness.h"

#include "codec_util.h"

FIXTURE(rnd) {
};

static FIXTURE_SETUP(rnd)
{
}

static FIXTURE_TEARDOWN(rnd)
{
}

static const struct incnn_codec *zq = &incnn_codec_zebq;
static const struct incnn_codec *ebq = &incnn_codec_ebq;

#define N_MAX	4096
#define CEIL(a, b)	(((a) + (b) - 1) / (b))

/*
 * k = 8 (step 2^-7, zero below 2^-8), 20 values, groups of 8, 8 and 4:
 * group 0: all |x| < 2^-8                      no flag
 * group 1: 0, 2^-7 (q 1, tag 01: 01), -0.5 (q 64, tag 01: 0xc0),
 *          1.0 (q 128, tag 10: 80 00), 2^-9, -0.0, 0, +Inf (tag 11)
 *          tags 0 | 1<<2 | 1<<4 | 2<<6 | 3<<14 = 0xc094
 * group 2: 0, 0, 3 * 2^-7 (q 3, tag 01: 03), 0  tags 1<<4 = 0x10
 * flags: groups 1 and 2 = 0x06
 */
static const uint32_t vec_in[20] = {
	0x00000000, 0x3b7fffff, 0xbb000000, 0x3b7fffff,
	0x80000000, 0x00000001, 0xbb7fffff, 0x3a000000,
	0x00000000, 0x3c000000, 0xbf000000, 0x3f800000,
	0x3b000000, 0x80000000, 0x00000000, 0x7f800000,
	0x00000000, 0x00000000, 0x3cc00000, 0x00000000,
};

static const uint8_t vec_body[] = {
	0x06,				/* flags */
	0x94, 0xc0, 0x10,		/* tags of groups 1 and 2 */
	0x01, 0xc0, 0x80, 0x00, 0x00, 0x00, 0x80, 0x7f, 0x03,
};

TEST(vectors_k8)
{
	static const uint8_t one[] = { 0x01, 0x01, 0x01 }, none[] = { 0 };
	static const uint8_t zbody[] = { 0x00, 0x00 };
	uint32_t out[20], zeros[65] = { 0 }, z[65];
	uint32_t half = 0x3b800000, under = 0x3b7fffff;

	/* 2^-8 rounds half up to q = 1; just under it is a zero group */
	EXPECT_TRUE(body_is(zq, 8, &half, 1, one, sizeof(one)));
	EXPECT_TRUE(body_is(zq, 8, &under, 1, none, sizeof(none)));

	EXPECT_TRUE(body_is(zq, 8, vec_in, 20, vec_body, sizeof(vec_body)));
	ASSERT_EQ(0, dec_floats(zq, 8, vec_body, sizeof(vec_body), out, 20));
	for (int i = 0; i < 20; i++) {
		uint32_t want = i == 9 || i == 10 || i == 11 || i == 15 ||
				i == 18 ? vec_in[i] : 0;

		EXPECT_EQ(want, out[i]) TH_LOG("value %d", i);
	}
	/* 65 zeros (-0.0 too): two flag bytes, nothing else */
	zeros[64] = 0x80000000;
	EXPECT_TRUE(body_is(zq, 8, zeros, 65, zbody, sizeof(zbody)));
	ASSERT_EQ(0, dec_floats(zq, 8, zbody, sizeof(zbody), z, 65));
	EXPECT_EQ(0u, z[64]);
	/* nothing at all for no values */
	EXPECT_TRUE(body_is(zq, 8, zeros, 0, zbody, 0));
}

/* Non-canonical and inconsistent bodies are rejected. */
TEST(rejects)
{
	uint32_t out[20];
	uint8_t b[sizeof(vec_body)];

	/* an unused flag bit (3 groups: bits 3..7 unused) */
	memcpy(b, vec_body, sizeof(b));
	b[0] |= 0x08;
	EXPECT_EQ(-EBADMSG, dec_floats(zq, 8, b, sizeof(b), out, 20));
	/* a flagged group whose tags are all 00 */
	memcpy(b, vec_body, sizeof(b));
	b[3] = 0;
	EXPECT_EQ(-EBADMSG, dec_floats(zq, 8, b, sizeof(b) - 1, out, 20));
	/* an unused tag bit of a partial group (3 values: bits 6..7) */
	{
		static const uint32_t in11[11] = { [8] = 0x3c000000 };
		static const uint8_t ok[] = { 0x02, 0x01, 0x01 };
		static const uint8_t bad[] = { 0x02, 0x41, 0x01 };

		EXPECT_TRUE(body_is(zq, 8, in11, 11, ok, sizeof(ok)));
		EXPECT_EQ(0, dec_floats(zq, 8, ok, sizeof(ok), out, 11));
		EXPECT_EQ(-EBADMSG, dec_floats(zq, 8, bad, sizeof(bad), out,
					       11));
		/* 13 values: the group has 5 values, two tag bytes */
		EXPECT_EQ(-EBADMSG, dec_floats(zq, 8, ok, sizeof(ok), out, 13));
	}
	/* trailing and missing bytes */
	EXPECT_EQ(-EBADMSG, dec_floats(zq, 8, vec_body, sizeof(vec_body) - 1,
				       out, 20));
	memcpy(b, vec_body, sizeof(b));
	EXPECT_EQ(-EBADMSG, dec_floats(zq, 8, b, 0, out, 20));
	EXPECT_EQ(-EINVAL, zq->decode(8, b, sizeof(b), (uint8_t *)out, 6));
}

/* a random fraction of the values (by runs and single values) zeroed */
static void sparsify(struct incnn_rng *r, uint32_t *in, size_t n, long round)
{
	static const unsigned int per_mille[] = { 0, 500, 900, 990, 1000 };
	unsigned int pm = per_mille[round % 5];

	for (size_t i = 0; i < n; i++) {
		if (round % 2 && i % 16 == 0 &&
		    incnn_rng_next(r) % 1000 < pm) {
			size_t end = i + 16 < n ? i + 16 : n;

			for (; i < end; i++)
				in[i] = 0;
			i--;
			continue;
		}
		if (incnn_rng_next(r) % 1000 < pm)
			in[i] = incnn_rng_next(r) % 2 ? 0 : 0x80000000;
	}
}

/* ebq's body length of the values of the groups flagged in @flags */
static ssize_t ebq_len_flagged(uint8_t k, const uint32_t *in, size_t n,
			       const uint8_t *flags)
{
	static uint32_t sel[N_MAX];
	size_t m = 0;
	uint8_t *body;
	ssize_t r;

	for (size_t g = 0; 8 * g < n; g++) {
		if (!((flags[g / 8] >> (g % 8)) & 1))
			continue;
		for (size_t i = 8 * g; i < n && i < 8 * g + 8; i++)
			sel[m++] = in[i];
	}
	r = enc_floats(ebq, k, sel, m, &body, NULL);
	free(body);
	return r;
}

TEST_F_TIMEOUT(rnd, same_values_as_ebq, 300)
{
	static uint32_t in[N_MAX], oz[N_MAX], oe[N_MAX], o2[N_MAX];
	static const double scales[] = { 1e-4, 1e-3, 1e-2, 1e-1, 1, 100 };
	struct incnn_rng r;

	incnn_rng_seed(&r, 0x2eb9);
	for (long round = 0; round < 6000; round++) {
		enum incnn_dist d = round % __INCNN_DIST_MAX;
		uint8_t k = 1 + (round / 3) % 30;
		size_t n = incnn_rng_next(&r) % N_MAX, nf = CEIL(CEIL(n, 8), 8);
		struct incnn_hist hz = { { 0 } }, he = { { 0 } };
		uint8_t *bz, *be, *bz2;
		ssize_t lz, le, lz2;

		gen_bits(&r, d, scales[(round / 7) % 6], in, n);
		sparsify(&r, in, n, round / 11);
		lz = enc_floats(zq, k, in, n, &bz, &hz);
		le = enc_floats(ebq, k, in, n, &be, &he);
		ASSERT_GE(lz, 0);
		ASSERT_GE(le, 0);
		ASSERT_LE((size_t)lz, zq->bound(4 * n));
		/* the size: flags + ebq of the flagged groups <= ebq + flags */
		ASSERT_EQ(lz, (ssize_t)nf + ebq_len_flagged(k, in, n, bz));
		ASSERT_LE(lz, le + (ssize_t)nf);
		ASSERT_EQ(0, memcmp(&hz, &he, sizeof(hz)));
		/* the values: ebq's, bit for bit */
		ASSERT_EQ(0, dec_floats(zq, k, bz, lz, oz, n));
		ASSERT_EQ(0, dec_floats(ebq, k, be, le, oe, n));
		ASSERT_EQ(0, memcmp(oz, oe, 4 * n)) {
			TH_LOG("k=%u n=%zu dist=%d", k, n, d);
		}
		for (size_t i = 0; i < n; i++) {
			float x = u2f(in[i]);

			if (isfinite(x) && !(fabsf(u2f(oz[i]) - x) <=
					     ldexpf(1.0f, -k)))
				ASSERT_TRUE(0) TH_LOG("k=%u x=%08x", k, in[i]);
		}
		/* idempotent: the same body again, the same values */
		lz2 = enc_floats(zq, k, oz, n, &bz2, NULL);
		ASSERT_EQ(0, dec_floats(zq, k, bz2, lz2, o2, n));
		ASSERT_EQ(0, memcmp(oz, o2, 4 * n));
		free(bz);
		free(be);
		free(bz2);
	}
}

/* The body of an all-zero packet: 1/256 of the input, 64x below ebq. */
TEST(ratio_all_zero)
{
	static uint32_t in[16384];
	uint8_t *b;

	EXPECT_EQ(256, enc_floats(zq, 10, in, 16384, &b, NULL));
	free(b);
	EXPECT_EQ(4096, enc_floats(ebq, 10, in, 16384, &b, NULL));
	free(b);
}

TEST_HARNESS_MAIN
