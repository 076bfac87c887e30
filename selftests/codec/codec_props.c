// SPDX-License-Identifier: GPL-2.0
/*
 * Codec properties over millions of random values from several
 * distributions: error bounds, idempotence, exactness of raw and lossless
 * classes, size limits, ebq never larger than inceptionn for k <= 14, and
 * decoder robustness against truncation and corruption.
 */
#include "kselftest_harness.h"

#include "codec_util.h"

/* Long randomised tests run as TEST_F_TIMEOUT(rnd, ...): 600 s, for hangs only */
FIXTURE(rnd) {
};

static FIXTURE_SETUP(rnd)
{
}

static FIXTURE_TEARDOWN(rnd)
{
}

#define N_MAX	4096

struct case_gen {
	struct incnn_rng rng;
	long round;
};

/* Next random case: distribution, scale and length vary by round. */
static size_t next_case(struct case_gen *g, uint32_t *in)
{
	static const double scales[] = { 1e-4, 1e-3, 1e-2, 1e-1, 1, 100 };
	enum incnn_dist d = g->round % __INCNN_DIST_MAX;
	double scale = scales[(g->round / __INCNN_DIST_MAX) % 6];
	size_t n = incnn_rng_next(&g->rng) % N_MAX;

	g->round++;
	gen_bits(&g->rng, d, scale, in, n);
	return n;
}

static int tag_of(const struct incnn_codec *c, const uint8_t *body,
		  size_t i)
{
	if (c == &incnn_codec_ebq)
		return (body[i / 4] >> (2 * (i % 4))) & 3;
	/* inceptionn: find the group's tag word */
	size_t pos = 0;

	for (size_t g = 0; g < i / 8; g++) {
		uint16_t tags = body[pos] | body[pos + 1] << 8;

		pos += 2;
		for (int j = 0; j < 8; j++)
			pos += INCNN_TAG_BYTES((tags >> (2 * j)) & 3);
	}
	return ((body[pos] | body[pos + 1] << 8) >> (2 * (i % 8))) & 3;
}

/* |decode(x) - x| <= 2^-k for every finite x; raw classes are exact. */
TEST_F_TIMEOUT(rnd, ebq_bound_idempotent_exact, 600)
{
	static uint32_t in[N_MAX], out[N_MAX], out2[N_MAX];
	struct case_gen g = { .round = 0 };
	long values = 0;

	incnn_rng_seed(&g.rng, 11);
	while (values < 4000000) {
		int k = 1 + g.round % 30;
		size_t n = next_case(&g, in);
		/* the codec's own bound (incnn_codec.max_err): 2^-k */
		double bound = incnn_codec_max_err(INCNN_CODEC_EBQ, k);
		uint8_t *body, *body2;
		ssize_t len, len2;

		len = enc_floats(&incnn_codec_ebq, k, in, n, &body, NULL);
		ASSERT_GE(len, 0);
		ASSERT_LE((size_t)len, incnn_codec_ebq.bound(4 * n));
		ASSERT_EQ(0, dec_floats(&incnn_codec_ebq, k, body, len, out, n));
		for (size_t i = 0; i < n; i++) {
			float x = u2f(in[i]), y = u2f(out[i]);

			if (tag_of(&incnn_codec_ebq, body, i) == 3 ||
			    !isfinite(x)) {
				ASSERT_EQ(in[i], out[i]);
			} else {
				ASSERT_LE(fabs((double)y - x), bound)
					TH_LOG("k=%d x=0x%08x y=0x%08x", k,
					       in[i], out[i]);
			}
		}
		/* decode(encode(.)) is idempotent */
		len2 = enc_floats(&incnn_codec_ebq, k, out, n, &body2, NULL);
		ASSERT_EQ(len, len2);
		ASSERT_EQ(0, dec_floats(&incnn_codec_ebq, k, body2, len2, out2,
					n));
		ASSERT_EQ(0, memcmp(out, out2, 4 * n));
		free(body);
		free(body2);
		values += n;
	}
}

/*
 * For k <= 14 ebq never spends more bits on a value than inceptionn, so
 * its body is never larger.
 */
TEST_F_TIMEOUT(rnd, ebq_never_larger_than_inceptionn, 600)
{
	static uint32_t in[N_MAX];
	struct case_gen g = { .round = 0 };
	long values = 0;

	incnn_rng_seed(&g.rng, 12);
	while (values < 3000000) {
		int k = 1 + g.round % 14;
		size_t n = next_case(&g, in);
		uint8_t *be, *bi;
		ssize_t le, li;

		le = enc_floats(&incnn_codec_ebq, k, in, n, &be, NULL);
		li = enc_floats(&incnn_codec_inceptionn, k, in, n, &bi, NULL);
		ASSERT_LE(le, li);
		for (size_t i = 0; i < n; i++) {
			ASSERT_LE(INCNN_TAG_BYTES(tag_of(&incnn_codec_ebq, be, i)),
				  INCNN_TAG_BYTES(tag_of(&incnn_codec_inceptionn,
							 bi, i)))
				TH_LOG("k=%d x=0x%08x", k, in[i]);
		}
		free(be);
		free(bi);
		values += n;
	}
}

/* inceptionn: raw class exact, idempotent, error < 2^-min(k,7). */
TEST_F_TIMEOUT(rnd, inceptionn_properties, 600)
{
	static uint32_t in[N_MAX], out[N_MAX], out2[N_MAX];
	struct case_gen g = { .round = 0 };
	long values = 0;

	incnn_rng_seed(&g.rng, 13);
	while (values < 3000000) {
		int k = 1 + g.round % 30;
		size_t n = next_case(&g, in);
		/* the codec's own bound (incnn_codec.max_err): 2^-min(k, 7) */
		double bound = incnn_codec_max_err(INCNN_CODEC_INCEPTIONN, k);
		uint8_t *body;
		ssize_t len;

		len = enc_floats(&incnn_codec_inceptionn, k, in, n, &body,
				 NULL);
		ASSERT_GE(len, 0);
		ASSERT_LE((size_t)len, incnn_codec_inceptionn.bound(4 * n));
		ASSERT_EQ(0, dec_floats(&incnn_codec_inceptionn, k, body, len,
					out, n));
		free(body);
		for (size_t i = 0; i < n; i++) {
			float x = u2f(in[i]);

			if (!isfinite(x) || fabsf(x) >= 1) {
				ASSERT_EQ(in[i], out[i]);
			} else {
				ASSERT_LT(fabs((double)u2f(out[i]) - x), bound);
			}
		}
		len = enc_floats(&incnn_codec_inceptionn, k, out, n, &body,
				 NULL);
		ASSERT_EQ(0, dec_floats(&incnn_codec_inceptionn, k, body, len,
					out2, n));
		ASSERT_EQ(0, memcmp(out, out2, 4 * n));
		free(body);
		values += n;
	}
}

/* trunc keeps exactly the top bits; lz4 is lossless on any bytes. */
TEST_F_TIMEOUT(rnd, trunc_and_lz4_exact, 120)
{
	static uint32_t in[N_MAX], out[N_MAX];
	struct case_gen g = { .round = 0 };

	incnn_rng_seed(&g.rng, 14);
	for (int round = 0; round < 600; round++) {
		uint8_t bits = 8 * (1 + round % 3);
		uint32_t mask = ~0u << (32 - bits);
		size_t n = next_case(&g, in), cut;
		uint8_t *body;
		ssize_t len;

		len = enc_floats(&incnn_codec_trunc, bits, in, n, &body, NULL);
		ASSERT_EQ((ssize_t)(n * bits / 8), len);
		ASSERT_EQ(0, dec_floats(&incnn_codec_trunc, bits, body, len,
					out, n));
		for (size_t i = 0; i < n; i++) {
			ASSERT_EQ(in[i] & mask, out[i]);
		}
		free(body);

		/* lz4 on any byte length, with repetitive data mixed in */
		cut = n ? incnn_rng_next(&g.rng) % (4 * n) : 0;
		if (round % 2)
			memset(in, round, cut / 2);
		body = malloc(incnn_codec_lz4.bound(cut) + 1);
		len = incnn_codec_lz4.encode(0, (uint8_t *)in, cut, body,
					     incnn_codec_lz4.bound(cut),
					     test_scratch(), NULL);
		ASSERT_GE(len, cut ? 1 : 0);
		ASSERT_EQ(0, incnn_codec_lz4.decode(0, body, len,
						    (uint8_t *)out, cut));
		ASSERT_EQ(0, memcmp(in, out, cut));
		free(body);
	}
}

/* -ENOSPC when the output does not fit; never a write past @cap. */
TEST(encode_respects_cap)
{
	static uint32_t in[1000];
	struct incnn_rng r;
	const struct incnn_codec *cs[] = {
		&incnn_codec_inceptionn, &incnn_codec_ebq, &incnn_codec_trunc,
		&incnn_codec_lz4, &incnn_codec_zebq,
	};

	incnn_rng_seed(&r, 15);
	gen_bits(&r, INCNN_DIST_LAPLACE, 0.01, in, 1000);
	for (size_t c = 0; c < ARRAY_SIZE(cs); c++) {
		uint8_t p = cs[c]->param.def;
		uint8_t *full;
		ssize_t need = enc_floats(cs[c], p, in, 1000, &full, NULL);

		ASSERT_GT(need, 0);
		for (ssize_t cap = need - 40; cap <= need; cap++) {
			uint8_t *out = malloc(cap > 0 ? cap : 1);
			ssize_t r2 = cs[c]->encode(p, (uint8_t *)in, 4000, out,
						   cap, test_scratch(), NULL);

			if (cap < need) {
				EXPECT_EQ(-ENOSPC, r2);
			} else {
				EXPECT_EQ(need, r2);
				EXPECT_EQ(0, memcmp(out, full, need));
			}
			free(out);
		}
		/* float codecs refuse a length that is not whole floats */
		if (cs[c]->floats) {
			EXPECT_EQ(-EINVAL, cs[c]->encode(p, (uint8_t *)in, 6,
							 full, need,
							 test_scratch(), NULL));
		}
		free(full);
	}
}

/* The histogram counts every value once, in its class. */
TEST(histogram_counts)
{
	static const uint32_t in[5] = {
		0x3f800000, 0x3f000000, 0x3c000000, 0x00000000, 0x7f800000,
	};
	struct incnn_hist h = { { 0 } };
	uint8_t *body;

	ASSERT_GT(enc_floats(&incnn_codec_inceptionn, 10, in, 5, &body, &h),
		  0);
	free(body);
	EXPECT_EQ(1ULL, h.n[0]);
	EXPECT_EQ(1ULL, h.n[1]);
	EXPECT_EQ(1ULL, h.n[2]);
	EXPECT_EQ(2ULL, h.n[3]);
	ASSERT_GT(enc_floats(&incnn_codec_ebq, 10, in, 5, &body, &h), 0);
	free(body);
	/* ebq adds: 0 -> 0 bits, 2^-7 (q=4) -> 8, 0.5 (q=256) -> 16, 1.0
	 * (q=512) -> 16, Inf -> 32 */
	EXPECT_EQ(2ULL, h.n[0]);
	EXPECT_EQ(2ULL, h.n[1]);
	EXPECT_EQ(3ULL, h.n[2]);
	EXPECT_EQ(3ULL, h.n[3]);
}

/*
 * Hostile bodies: every truncation and extension of a valid body is
 * rejected; random corruption never reads or writes out of bounds (ASan
 * checks), and a decoder that accepts produces exactly out_len bytes.
 */
TEST_F_TIMEOUT(rnd, decoders_reject_truncation_and_survive_corruption, 600)
{
	static uint32_t in[N_MAX], out[N_MAX + 1];
	const struct incnn_codec *cs[] = {
		&incnn_codec_inceptionn, &incnn_codec_ebq, &incnn_codec_trunc,
		&incnn_codec_lz4, &incnn_codec_zebq,
	};
	struct case_gen g = { .round = 0 };

	incnn_rng_seed(&g.rng, 16);
	for (int round = 0; round < 300; round++) {
		const struct incnn_codec *c = cs[round % ARRAY_SIZE(cs)];
		uint8_t p = c->param.def;
		size_t n = next_case(&g, in) % 700 + 1;
		uint8_t *body;
		ssize_t len = enc_floats(c, p, in, n, &body, NULL);

		ASSERT_GT(len, 0);
		for (ssize_t cut = 0; cut < len; cut++) {
			ASSERT_NE(0, dec_floats(c, p, body, cut, out, n))
				TH_LOG("%s n=%zu cut=%zd of %zd", c->name, n,
				       cut, len);
		}
		body = realloc(body, len + 1);
		body[len] = 0;
		ASSERT_NE(0, dec_floats(c, p, body, len + 1, out, n));
		for (int i = 0; i < 200; i++) {
			uint8_t *bad = malloc(len);

			memcpy(bad, body, len);
			for (int j = 0; j <= i % 4; j++)
				bad[incnn_rng_next(&g.rng) % len] ^=
					1 + incnn_rng_next(&g.rng) % 255;
			out[n] = 0x5a5a5a5a;
			dec_floats(c, p, bad, len, out, n);
			ASSERT_EQ(0x5a5a5a5au, out[n]);
			free(bad);
		}
		free(body);
	}
}

TEST_HARNESS_MAIN
