// SPDX-License-Identifier: GPL-2.0
/*
 * Codec vectors: hand-derived encodings from the INCEPTIONN paper's
 * Algorithms 2 and 3 (and for ebq and trunc from their definitions), plus
 * bit-exact comparison against straightforward reference models on
 * millions of random values.
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

static const struct incnn_codec *inc = &incnn_codec_inceptionn;
static const struct incnn_codec *ebq = &incnn_codec_ebq;

/* Round trip of one value. */
static uint32_t rt1(const struct incnn_codec *c, uint8_t param, uint32_t x)
{
	uint8_t *body;
	uint32_t y = 0xdeadbeef;
	ssize_t r = enc_floats(c, param, &x, 1, &body, NULL);

	if (r < 0 || dec_floats(c, param, body, r, &y, 1))
		y = 0xdeadbeef;
	free(body);
	return y;
}

/*
 * One full burst at k = 10 (EB = 117, T16 = 122):
 *   0.5        e=126 tag 10  shifted=0x400000      v=0x4000
 *   1.0        e=127 tag 11  raw
 *   -0.0       e=0   tag 00
 *   0x3cffffff e=121 tag 01  shifted=0x3ffff       v=0x03
 *   -0.75      e=126 tag 10  shifted=0x600000      v=0x8000|0x6000
 *   0.1        e=123 tag 10  shifted=0xccccc       v=0x0ccc
 *   NaN        e=255 tag 11  raw
 *   2^-10      e=117 tag 01  shifted=0x2000        v=0x00
 * tag word: 2 | 3<<2 | 0<<4 | 1<<6 | 2<<8 | 2<<10 | 3<<12 | 1<<14 = 0x7a4e
 */
static const uint32_t burst_in[8] = {
	0x3f000000, 0x3f800000, 0x80000000, 0x3cffffff,
	0xbf400000, 0x3dcccccd, 0x7fc12345, 0x3a800000,
};

static const uint8_t burst_body[] = {
	0x4e, 0x7a,
	0x00, 0x40,
	0x00, 0x00, 0x80, 0x3f,
	0x03,
	0x00, 0xe0,
	0xcc, 0x0c,
	0x45, 0x23, 0xc1, 0x7f,
	0x00,
};

/* Algorithm 3 on the above: 3 * 2^-7, 0xccc * 2^-15; zeros are +0.0. */
static const uint32_t burst_out[8] = {
	0x3f000000, 0x3f800000, 0x00000000, 0x3cc00000,
	0xbf400000, 0x3dccc000, 0x7fc12345, 0x00000000,
};

TEST(inceptionn_burst_k10)
{
	uint32_t out[8];

	ASSERT_TRUE(body_is(inc, 10, burst_in, 8, burst_body,
			    sizeof(burst_body)));
	ASSERT_EQ(0, dec_floats(inc, 10, burst_body, sizeof(burst_body),
				out, 8));
	for (int i = 0; i < 8; i++) {
		EXPECT_EQ(burst_out[i], out[i]) TH_LOG("value %d", i);
	}
}

TEST(inceptionn_partial_group)
{
	/* three values: tags 10, 11, 01 -> 0x0000 | 2 | 3<<2 | 1<<4 = 0x1e */
	static const uint8_t expect[] = {
		0x1e, 0x00, 0x00, 0x40, 0x00, 0x00, 0x80, 0x3f, 0x00,
	};
	uint32_t in[3] = { 0x3f000000, 0x3f800000, 0x3a800000 };

	ASSERT_TRUE(body_is(inc, 10, in, 3, expect, sizeof(expect)));
	/* unused tag bits of a partial group must be zero */
	uint8_t bad[sizeof(expect)];
	uint32_t out[3];

	memcpy(bad, expect, sizeof(bad));
	bad[1] = 0x40;
	EXPECT_EQ(-EBADMSG, dec_floats(inc, 10, bad, sizeof(bad), out, 3));
}

TEST(inceptionn_thresholds)
{
	/* k = 10: EB = 117, T16 = 122 */
	EXPECT_EQ(0x00000000u, rt1(inc, 10, 0x3a7fffff)); /* e=116: 00 */
	EXPECT_EQ(0x00000000u, rt1(inc, 10, 0x3a800000)); /* e=117: 01, 0 */
	EXPECT_EQ(0x3c000000u, rt1(inc, 10, 0x3c000000)); /* 2^-7: 01 */
	EXPECT_EQ(0x3cc00000u, rt1(inc, 10, 0x3cffffff)); /* e=121: 01 */
	EXPECT_EQ(0x3d000000u, rt1(inc, 10, 0x3d000000)); /* e=122: 10 */
	EXPECT_EQ(0x3f7ffe00u, rt1(inc, 10, 0x3f7fffff)); /* e=126: 10 */
	EXPECT_EQ(0x3f800000u, rt1(inc, 10, 0x3f800000)); /* e=127: 11 */
	EXPECT_EQ(0xbf800001u, rt1(inc, 10, 0xbf800001));
	/* k = 6: EB = 121, T16 = 124 */
	EXPECT_EQ(0x00000000u, rt1(inc, 6, 0x3c7fffff)); /* 2^-7-: 00 */
	EXPECT_EQ(0x3c800000u, rt1(inc, 6, 0x3c800000)); /* 2^-6: 01 */
	EXPECT_EQ(0x3df00000u, rt1(inc, 6, 0x3dffffff)); /* e=123: 01 */
	EXPECT_EQ(0x3e000000u, rt1(inc, 6, 0x3e000000)); /* e=124: 10 */
	/* k = 1: EB = 126, T16 = 127: no 16-bit class */
	EXPECT_EQ(0x3f7e0000u, rt1(inc, 1, 0x3f7fffff)); /* 127 * 2^-7 */
	EXPECT_EQ(0x00000000u, rt1(inc, 1, 0x3effffff));
	/* k = 30: EB = 97, T16 = 112; the 8-bit class always decodes to 0 */
	EXPECT_EQ(0x38000000u, rt1(inc, 30, 0x38000000)); /* e=112: 10 */
	EXPECT_EQ(0x00000000u, rt1(inc, 30, 0x37ffffff)); /* e=111: 01 */
}

TEST(inceptionn_signs_specials)
{
	EXPECT_EQ(0xbf000000u, rt1(inc, 10, 0xbf000000));	/* -0.5 */
	EXPECT_EQ(0x00000000u, rt1(inc, 10, 0x80000000));	/* -0 */
	EXPECT_EQ(0x00000000u, rt1(inc, 10, 0x00000001));	/* denormal */
	EXPECT_EQ(0x00000000u, rt1(inc, 10, 0x807fffff));	/* -denormal */
	EXPECT_EQ(0x7f800000u, rt1(inc, 10, 0x7f800000));	/* +Inf */
	EXPECT_EQ(0xff800000u, rt1(inc, 10, 0xff800000));	/* -Inf */
	EXPECT_EQ(0x7fa00001u, rt1(inc, 10, 0x7fa00001));	/* sNaN */
	EXPECT_EQ(0xffffffffu, rt1(inc, 10, 0xffffffff));	/* -qNaN */
	EXPECT_EQ(0x7f7fffffu, rt1(inc, 10, 0x7f7fffff));	/* FLT_MAX */
	/* a negative value whose magnitude truncates to zero gives +0 */
	EXPECT_EQ(0x00000000u, rt1(inc, 10, 0xbc000000 - 1));
}

TEST(ebq_vectors_k10)
{
	/* step 2^-9: q = round(|x| * 512) */
	static const uint32_t in[8] = {
		0x3f000000,	/* 0.5: q=256, 10 */
		0x3a800000,	/* 2^-10: q=round(0.5)=1, 01 */
		0x3a7fffff,	/* below: q=0, 00 */
		0x3dcccccd,	/* 0.1: q=51, 01 */
		0xbdcccccd,	/* -0.1: 01, sign */
		0x427ff5c3,	/* 63.99: q=32763, 10 */
		0x42800000,	/* 64: q=32768, 11 */
		0x7fc00001,	/* NaN: 11 */
	};
	/* tags: byte0 = 2 | 1<<2 | 0<<4 | 1<<6, byte1 = 1 | 2<<2 | 3<<4 | 3<<6 */
	static const uint8_t expect[] = {
		0x46, 0xf9,
		0x00, 0x01,
		0x01,
		0x33,
		0xb3,
		0xfb, 0x7f,
		0x00, 0x00, 0x80, 0x42,
		0x01, 0x00, 0xc0, 0x7f,
	};
	static const uint32_t out_expect[8] = {
		0x3f000000, 0x3b000000, 0x00000000, 0x3dcc0000,
		0xbdcc0000, 0x427ff600, 0x42800000, 0x7fc00001,
	};
	uint32_t out[8];

	ASSERT_TRUE(body_is(ebq, 10, in, 8, expect, sizeof(expect)));
	ASSERT_EQ(0, dec_floats(ebq, 10, expect, sizeof(expect), out, 8));
	for (int i = 0; i < 8; i++) {
		EXPECT_EQ(out_expect[i], out[i]) TH_LOG("value %d", i);
	}
}

TEST(trunc_vectors)
{
	static const uint32_t in[2] = { 0x3dcccccd, 0xc0490fdb };
	static const uint8_t b8[] = { 0x3d, 0xc0 };
	static const uint8_t b16[] = { 0xcc, 0x3d, 0x49, 0xc0 };
	static const uint8_t b24[] = { 0xcc, 0xcc, 0x3d, 0x0f, 0x49, 0xc0 };
	const struct incnn_codec *t = &incnn_codec_trunc;

	EXPECT_TRUE(body_is(t, 8, in, 2, b8, sizeof(b8)));
	EXPECT_TRUE(body_is(t, 16, in, 2, b16, sizeof(b16)));
	EXPECT_TRUE(body_is(t, 24, in, 2, b24, sizeof(b24)));
	EXPECT_EQ(0x3d000000u, rt1(t, 8, in[0]));
	EXPECT_EQ(0x3dcc0000u, rt1(t, 16, in[0]));
	EXPECT_EQ(0x3dcccc00u, rt1(t, 24, in[0]));
}

TEST(codec_table)
{
	EXPECT_EQ(inc, incnn_codec_find("inceptionn"));
	EXPECT_EQ(ebq, incnn_codec_find("ebq"));
	EXPECT_EQ(&incnn_codec_trunc, incnn_codec_find("trunc"));
	EXPECT_EQ(&incnn_codec_lz4, incnn_codec_find("lz4"));
	EXPECT_EQ(&incnn_codec_zebq, incnn_codec_find("zebq"));
	EXPECT_EQ(&incnn_codec_zebq, incnn_codec_get(INCNN_CODEC_ZEBQ));
	EXPECT_NULL(incnn_codec_find("none"));
	EXPECT_NULL(incnn_codec_get(0));
	EXPECT_NULL(incnn_codec_get(INCNN_CODEC_MAX + 1));
	EXPECT_NULL(incnn_codec_get(~0u));
	EXPECT_EQ(-EINVAL, incnn_codec_check_param(inc, 0));
	EXPECT_EQ(0, incnn_codec_check_param(inc, 1));
	EXPECT_EQ(0, incnn_codec_check_param(inc, 30));
	EXPECT_EQ(-EINVAL, incnn_codec_check_param(inc, 31));
	EXPECT_EQ(-EINVAL, incnn_codec_check_param(&incnn_codec_trunc, 12));
	EXPECT_EQ(-EINVAL, incnn_codec_check_param(&incnn_codec_lz4, 1));
}

/* Each codec's self-description: exactly the parameters it accepts. */
TEST(codec_param_desc)
{
	static const struct {
		const struct incnn_codec *c;
		u8 kind, min, max, def;
		const char *valid;	/* the valid values, 1 per char */
	} want[] = {
		{ &incnn_codec_inceptionn, INCNN_PARAM_BOUND, 1, 30, 10, NULL },
		{ &incnn_codec_ebq, INCNN_PARAM_BOUND, 1, 30, 10, NULL },
		{ &incnn_codec_trunc, INCNN_PARAM_BITS, 8, 24, 16, "\x08\x10\x18" },
		{ &incnn_codec_lz4, INCNN_PARAM_NONE, 0, 0, 0, "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct incnn_codec *c = want[i].c;

		EXPECT_EQ(want[i].kind, c->param.kind);
		EXPECT_EQ(want[i].min, c->param.min);
		EXPECT_EQ(want[i].max, c->param.max);
		EXPECT_EQ(want[i].def, c->param.def);
		for (unsigned int p = 0; p < 256; p++) {
			bool ok = want[i].valid ?
				  (p && strchr(want[i].valid, (int)p)) ||
				  (!p && !want[i].valid[0]) :
				  p >= want[i].min && p <= want[i].max;

			EXPECT_EQ(ok ? 0 : -EINVAL,
				  incnn_codec_check_param(c, (u8)p))
				TH_LOG("%s param %u", c->name, p);
		}
	}
}

/* The one spelling of a codec setting: parse, label, range text. */
TEST(codec_param_text)
{
	const struct incnn_codec_param *b = &incnn_codec_ebq.param;
	const struct incnn_codec_param *t = &incnn_codec_trunc.param;
	const struct incnn_codec_param *n = &incnn_codec_lz4.param;
	/* a kind this library does not know: the number as it is */
	const struct incnn_codec_param other = { .kind = 9, .max = 255 };
	unsigned int v = 99;
	char buf[48];

	EXPECT_EQ(0, incnn_codec_param_parse(b, "2^-10", &v));
	EXPECT_EQ(10, v);
	EXPECT_EQ(0, incnn_codec_param_parse(b, "7", &v));
	EXPECT_EQ(7, v);
	EXPECT_EQ(0, incnn_codec_param_parse(b, "0.0009765625", &v));
	EXPECT_EQ(10, v);
	EXPECT_EQ(0, incnn_codec_param_parse(b, "9.765625e-4", &v));
	EXPECT_EQ(10, v);
	EXPECT_EQ(-ERANGE, incnn_codec_param_parse(b, "2^-31", &v));
	EXPECT_EQ(-ERANGE, incnn_codec_param_parse(b, "2^-0", &v));
	EXPECT_EQ(-ERANGE, incnn_codec_param_parse(b, "0", &v));
	EXPECT_EQ(-EINVAL, incnn_codec_param_parse(b, "2^10", &v));
	EXPECT_EQ(-EINVAL, incnn_codec_param_parse(b, "0.001", &v));
	EXPECT_EQ(-EINVAL, incnn_codec_param_parse(b, "2^-", &v));
	EXPECT_EQ(-EINVAL, incnn_codec_param_parse(b, "-3", &v));
	EXPECT_EQ(-EINVAL, incnn_codec_param_parse(b, "", &v));
	EXPECT_EQ(0, incnn_codec_param_parse(t, "16", &v));
	EXPECT_EQ(16, v);
	EXPECT_EQ(-ERANGE, incnn_codec_param_parse(t, "12", &v));
	EXPECT_EQ(-ERANGE, incnn_codec_param_parse(t, "32", &v));
	EXPECT_EQ(-ERANGE, incnn_codec_param_parse(t, "0", &v));
	EXPECT_EQ(-EINVAL, incnn_codec_param_parse(t, "8x", &v));
	EXPECT_EQ(-EINVAL, incnn_codec_param_parse(t, "2^-3", &v));
	EXPECT_EQ(0, incnn_codec_param_parse(n, "0", &v));
	EXPECT_EQ(0, v);
	EXPECT_EQ(-ERANGE, incnn_codec_param_parse(n, "1", &v));
	EXPECT_EQ(0, v);

	EXPECT_STREQ("x:2^-10", incnn_codec_param_label("x", b, 10, buf, sizeof(buf)));
	EXPECT_STREQ("x param 31", incnn_codec_param_label("x", b, 31, buf, sizeof(buf)));
	EXPECT_STREQ("x:24", incnn_codec_param_label("x", t, 24, buf, sizeof(buf)));
	EXPECT_STREQ("x param 12", incnn_codec_param_label("x", t, 12, buf, sizeof(buf)));
	EXPECT_STREQ("x", incnn_codec_param_label("x", n, 0, buf, sizeof(buf)));
	EXPECT_STREQ("x param 3", incnn_codec_param_label("x", n, 3, buf, sizeof(buf)));
	EXPECT_STREQ("x param 3", incnn_codec_param_label("x", &other, 3, buf, sizeof(buf)));
	EXPECT_STREQ("2^-1..2^-30", incnn_codec_param_range(b, buf, sizeof(buf)));
	EXPECT_STREQ("8, 16 or 24", incnn_codec_param_range(t, buf, sizeof(buf)));
	EXPECT_STREQ("0..0", incnn_codec_param_range(n, buf, sizeof(buf)));
	EXPECT_STREQ("bound", incnn_codec_param_key(INCNN_PARAM_BOUND));
	EXPECT_STREQ("bits", incnn_codec_param_key(INCNN_PARAM_BITS));
	EXPECT_NULL(incnn_codec_param_key(INCNN_PARAM_NONE));
}

/* incnn_codec.max_err and .hist of every codec, through the library's API */
TEST(codec_max_err)
{
	unsigned int id;

	for (id = 1; id <= INCNN_CODEC_MAX; id++) {
		const struct incnn_codec *c = incnn_codec_get(id);

		ASSERT_NE(NULL, c);
		ASSERT_NE(NULL, c->max_err);
		EXPECT_EQ(c->lossy, c->max_err(c->param.def) != INCNN_MAX_ERR_EXACT);
	}
	EXPECT_EQ(10, incnn_codec_ebq.max_err(10));
	EXPECT_EQ(30, incnn_codec_zebq.max_err(30));
	EXPECT_EQ(6, incnn_codec_inceptionn.max_err(6));
	EXPECT_EQ(7, incnn_codec_inceptionn.max_err(10));
	EXPECT_EQ(INCNN_MAX_ERR_NONE, incnn_codec_trunc.max_err(16));
	EXPECT_EQ(INCNN_MAX_ERR_EXACT, incnn_codec_lz4.max_err(0));
	EXPECT_TRUE(incnn_codec_ebq.hist && incnn_codec_zebq.hist &&
		    incnn_codec_inceptionn.hist);
	EXPECT_FALSE(incnn_codec_trunc.hist || incnn_codec_lz4.hist);

	EXPECT_TRUE(incnn_codec_max_err(INCNN_CODEC_EBQ, 10) == 0x1p-10);
	EXPECT_TRUE(incnn_codec_max_err(INCNN_CODEC_ZEBQ, 1) == 0.5);
	EXPECT_TRUE(incnn_codec_max_err(INCNN_CODEC_INCEPTIONN, 10) == 0x1p-7);
	EXPECT_TRUE(incnn_codec_max_err(INCNN_CODEC_LZ4, 0) == 0);
	EXPECT_TRUE(incnn_codec_max_err(0, 0) == 0);
	EXPECT_TRUE(incnn_codec_max_err(INCNN_CODEC_TRUNC, 16) == -1);
	EXPECT_TRUE(incnn_codec_max_err(INCNN_CODEC_EBQ, 31) == -1);
	EXPECT_TRUE(incnn_codec_max_err(INCNN_CODEC_EBQ, 266) == -1);
	EXPECT_TRUE(incnn_codec_max_err(INCNN_CODEC_MAX + 1, 0) == -1);
}

/* A codec with its setting as one word, and back */
TEST(codec_label)
{
	unsigned int id = 99, p = 99;
	const char *setting = "?";
	char buf[48], name[32];

	EXPECT_STREQ("ebq:2^-10", incnn_codec_label(INCNN_CODEC_EBQ, 10, buf, sizeof(buf)));
	EXPECT_STREQ("zebq:2^-8", incnn_codec_label(INCNN_CODEC_ZEBQ, 8, buf, sizeof(buf)));
	EXPECT_STREQ("inceptionn:2^-10",
		     incnn_codec_label(INCNN_CODEC_INCEPTIONN, 10, buf, sizeof(buf)));
	EXPECT_STREQ("trunc:16", incnn_codec_label(INCNN_CODEC_TRUNC, 16, buf, sizeof(buf)));
	EXPECT_STREQ("lz4", incnn_codec_label(INCNN_CODEC_LZ4, 0, buf, sizeof(buf)));
	EXPECT_STREQ("none", incnn_codec_label(0, 0, buf, sizeof(buf)));
	EXPECT_STREQ("ebq param 31", incnn_codec_label(INCNN_CODEC_EBQ, 31, buf, sizeof(buf)));
	EXPECT_STREQ("trunc param 12", incnn_codec_label(INCNN_CODEC_TRUNC, 12, buf, sizeof(buf)));
	EXPECT_STREQ("lz4 param 1", incnn_codec_label(INCNN_CODEC_LZ4, 1, buf, sizeof(buf)));
	EXPECT_STREQ("codec 200 param 3", incnn_codec_label(200, 3, buf, sizeof(buf)));

	EXPECT_EQ(0, incnn_codec_spec_parse("ebq:2^-10", &id, &p));
	EXPECT_EQ(INCNN_CODEC_EBQ, id);
	EXPECT_EQ(10, p);
	EXPECT_EQ(0, incnn_codec_spec_parse("zebq:12", &id, &p));
	EXPECT_EQ(INCNN_CODEC_ZEBQ, id);
	EXPECT_EQ(12, p);
	EXPECT_EQ(0, incnn_codec_spec_parse("inceptionn", &id, &p));
	EXPECT_EQ(INCNN_CODEC_INCEPTIONN, id);
	EXPECT_EQ(10, p);
	EXPECT_EQ(0, incnn_codec_spec_parse("trunc:24", &id, &p));
	EXPECT_EQ(INCNN_CODEC_TRUNC, id);
	EXPECT_EQ(24, p);
	EXPECT_EQ(0, incnn_codec_spec_parse("lz4", &id, &p));
	EXPECT_EQ(INCNN_CODEC_LZ4, id);
	EXPECT_EQ(0, p);
	EXPECT_EQ(0, incnn_codec_spec_parse("none", &id, &p));
	EXPECT_EQ(0, id);
	EXPECT_EQ(0, p);
	EXPECT_EQ(-ERANGE, incnn_codec_spec_parse("ebq:2^-31", &id, &p));
	EXPECT_EQ(-ERANGE, incnn_codec_spec_parse("trunc:12", &id, &p));
	EXPECT_EQ(-EINVAL, incnn_codec_spec_parse("ebq:x", &id, &p));
	EXPECT_EQ(-EINVAL, incnn_codec_spec_parse("foo:2^-10", &id, &p));
	EXPECT_EQ(-EINVAL, incnn_codec_spec_parse("", &id, &p));
	EXPECT_EQ(-EINVAL, incnn_codec_spec_parse("auto", &id, &p));
	EXPECT_EQ(-EINVAL, incnn_codec_spec_parse(":2^-10", &id, &p));
	EXPECT_EQ(-EINVAL, incnn_codec_spec_parse("ebq:", &id, &p));

	/* the split incctl shares: a name, and the setting or NULL */
	EXPECT_EQ(0, incnn_codec_spec_split("zfuture:2^-3", name, sizeof(name), &setting));
	EXPECT_STREQ("zfuture", name);
	EXPECT_STREQ("2^-3", setting);
	EXPECT_EQ(0, incnn_codec_spec_split("lz4", name, sizeof(name), &setting));
	EXPECT_STREQ("lz4", name);
	EXPECT_NULL(setting);
	EXPECT_EQ(0, incnn_codec_spec_split("ebq:", name, sizeof(name), &setting));
	EXPECT_STREQ("", setting);
	EXPECT_EQ(-EINVAL, incnn_codec_spec_split(":3", name, sizeof(name), &setting));
	EXPECT_EQ(-EINVAL, incnn_codec_spec_split("", name, sizeof(name), &setting));
	EXPECT_EQ(-EINVAL, incnn_codec_spec_split("abcdefgh:3", name, 8, &setting));
	EXPECT_EQ(0, incnn_codec_spec_split("abcdefg:3", name, 8, &setting));
	EXPECT_STREQ("abcdefg", name);

	/* every label of a valid setting parses back to it */
	for (id = 1; id <= INCNN_CODEC_MAX; id++) {
		const struct incnn_codec *c = incnn_codec_get(id);
		unsigned int v, got_id, got_p;

		for (v = c->param.min; v <= c->param.max; v++) {
			if (incnn_codec_check_param(c, v))
				continue;
			incnn_codec_label(id, v, buf, sizeof(buf));
			EXPECT_EQ(0, incnn_codec_spec_parse(buf, &got_id, &got_p));
			EXPECT_EQ(id, got_id);
			EXPECT_EQ(v, got_p);
		}
	}
}

/* --- reference models, written from the paper's pseudo-code ------------ */

/* Algorithm 2 for one value: returns the tag, stores the payload. */
static int ref_inc_compress(uint32_t x, int k, uint32_t *payload)
{
	uint32_t sign = x >> 31, e = (x >> 23) & 0xff, m = x & 0x7fffff;
	int eb = 127 - k;
	uint32_t shifted;

	if (e >= 127) {
		*payload = x;
		return 3;
	}
	if ((int)e < eb) {
		*payload = 0;
		return 0;
	}
	shifted = ((1u << 23) | m) >> (127 - e);
	if ((int)e >= eb + (127 - eb + 1) / 2) {
		*payload = (sign << 15) | ((shifted >> 8) & 0x7fff);
		return 2;
	}
	*payload = (sign << 7) | ((shifted >> 16) & 0x7f);
	return 1;
}

/* Algorithm 3 for one value, via floating point. */
static uint32_t ref_inc_decompress(int tag, uint32_t v)
{
	int bits = tag == 2 ? 15 : 7;
	uint32_t frac, sign;

	if (tag == 0)
		return 0;
	if (tag == 3)
		return v;
	sign = v >> bits;
	frac = v & ((1u << bits) - 1);
	if (!frac)
		return 0;
	return f2u(sign ? -ldexpf((float)frac, -bits) :
		   ldexpf((float)frac, -bits));
}

static size_t ref_inc_container(const uint32_t *in, size_t n, int k,
				uint8_t *out)
{
	size_t pos = 0;

	for (size_t g = 0; g < n; g += 8) {
		size_t tagpos = pos;
		uint16_t tags = 0;

		pos += 2;
		for (size_t i = g; i < n && i < g + 8; i++) {
			uint32_t v;
			int tag = ref_inc_compress(in[i], k, &v);
			int nb = tag == 3 ? 4 : tag;

			tags |= tag << (2 * (i - g));
			for (int b = 0; b < nb; b++)
				out[pos++] = v >> (8 * b);
		}
		out[tagpos] = tags;
		out[tagpos + 1] = tags >> 8;
	}
	return pos;
}

static uint32_t ref_ebq(uint32_t x, int k, int *tagp)
{
	float f = u2f(x);
	double q;

	if (!isfinite(f)) {
		*tagp = 3;
		return x;
	}
	q = floor(fabs((double)f) * ldexp(1, k - 1) + 0.5);
	if (q >= 32768) {
		*tagp = 3;
		return x;
	}
	*tagp = q == 0 ? 0 : q < 128 ? 1 : 2;
	if (q == 0)
		return 0;
	return f2u((float)(signbit(f) ? -q : q) * ldexpf(1, 1 - k));
}

TEST_F_TIMEOUT(rnd, inceptionn_matches_reference, 600)
{
	enum { N = 4099 };
	static uint32_t in[N], out[N];
	static uint8_t ref[N * 4 + N];
	struct incnn_rng r;
	long values = 0;

	incnn_rng_seed(&r, 1);
	for (int round = 0; values < 3000000; round++) {
		int k = 1 + round % 30;
		enum incnn_dist d = round % __INCNN_DIST_MAX;
		size_t n = incnn_rng_next(&r) % N;
		uint8_t *body;
		ssize_t len;
		size_t rlen;

		gen_bits(&r, d, ldexp(1, -(int)(round % 12)), in, n);
		rlen = ref_inc_container(in, n, k, ref);
		len = enc_floats(inc, k, in, n, &body, NULL);
		ASSERT_EQ((ssize_t)rlen, len);
		ASSERT_EQ(0, memcmp(ref, body, rlen))
			TH_LOG("k=%d dist=%s n=%zu", k, incnn_dist_name(d), n);
		ASSERT_EQ(0, dec_floats(inc, k, body, len, out, n));
		for (size_t i = 0; i < n; i++) {
			uint32_t v;
			int tag = ref_inc_compress(in[i], k, &v);

			ASSERT_EQ(ref_inc_decompress(tag, v), out[i])
				TH_LOG("k=%d x=0x%08x", k, in[i]);
		}
		free(body);
		values += n;
	}
}

TEST_F_TIMEOUT(rnd, ebq_matches_reference, 600)
{
	enum { N = 2053 };
	static uint32_t in[N], out[N];
	struct incnn_rng r;
	long values = 0;

	incnn_rng_seed(&r, 2);
	for (int round = 0; values < 3000000; round++) {
		int k = 1 + round % 30;
		enum incnn_dist d = round % __INCNN_DIST_MAX;
		size_t n = incnn_rng_next(&r) % N;
		uint8_t *body;
		ssize_t len;
		size_t expect_len = (n + 3) / 4;

		gen_bits(&r, d, ldexp(1, 5 - (int)(round % 16)), in, n);
		len = enc_floats(ebq, k, in, n, &body, NULL);
		for (size_t i = 0; i < n; i++) {
			int tag;

			ref_ebq(in[i], k, &tag);
			expect_len += tag == 3 ? 4 : tag;
			ASSERT_EQ(tag, (body[i / 4] >> (2 * (i % 4))) & 3)
				TH_LOG("k=%d x=0x%08x", k, in[i]);
		}
		ASSERT_EQ((ssize_t)expect_len, len);
		ASSERT_EQ(0, dec_floats(ebq, k, body, len, out, n));
		for (size_t i = 0; i < n; i++) {
			int tag;

			ASSERT_EQ(ref_ebq(in[i], k, &tag), out[i])
				TH_LOG("k=%d x=0x%08x", k, in[i]);
		}
		free(body);
		values += n;
	}
}

TEST_HARNESS_MAIN
