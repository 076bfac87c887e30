// SPDX-License-Identifier: GPL-2.0
/*
 * Wire frame: layout, round trips with raw head and tail, the "strictly
 * smaller" rule, and every reason a receiver rejects a frame.
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

#define PAY_MAX	9000

struct frame_buf {
	uint8_t payload[PAY_MAX];
	uint8_t frame[PAY_MAX];
	uint8_t out[PAY_MAX];
};

static ssize_t frame_enc(struct frame_buf *b, const struct incnn_codec *c,
			 uint8_t param, uint8_t dscp, size_t len, size_t head)
{
	return incnn_frame_encode(c, param, dscp, b->payload, len, head,
				  b->frame, len - 1, test_scratch(), NULL);
}

/* Decode from an exact-size heap copy so ASan sees any over-read. */
static int frame_dec(const uint8_t *frame, size_t len, uint8_t *out,
		     size_t cap, struct incnn_frame_info *fi)
{
	uint8_t *copy = malloc(len ? len : 1);
	int r;

	memcpy(copy, frame, len);
	r = incnn_frame_decode(copy, len, out, cap, fi);
	free(copy);
	return r;
}

static void fill_laplace(uint8_t *p, size_t len, uint64_t seed)
{
	struct incnn_rng r;
	float tmp[PAY_MAX / 4 + 1];

	incnn_rng_seed(&r, seed);
	incnn_gen_f32(&r, INCNN_DIST_LAPLACE, 1e-3, tmp, len / 4 + 1);
	memcpy(p, tmp, len);
}

TEST(header_layout)
{
	static struct frame_buf b;
	ssize_t n;

	fill_laplace(b.payload, 1000, 1);
	n = frame_enc(&b, &incnn_codec_ebq, 10, 0x28, 1000, 5);
	ASSERT_GT(n, 8);
	ASSERT_LT(n, 1000);
	EXPECT_EQ(0x10, b.frame[0]);
	EXPECT_EQ(INCNN_CODEC_EBQ, b.frame[1]);
	EXPECT_EQ(10, b.frame[2]);
	EXPECT_EQ(0x28, b.frame[3]);
	EXPECT_EQ(0x03, b.frame[4]);	/* 1000 = 0x03e8, big-endian */
	EXPECT_EQ(0xe8, b.frame[5]);
	EXPECT_EQ(0x00, b.frame[6]);
	EXPECT_EQ(0x05, b.frame[7]);
	/* raw head right after the header, raw tail (3 bytes) at the end */
	EXPECT_EQ(0, memcmp(b.frame + 8, b.payload, 5));
	EXPECT_EQ(0, memcmp(b.frame + n - 3, b.payload + 997, 3));
}

/* Frame = header, head, body of exactly what the codec alone produces. */
TEST(body_is_codec_body)
{
	static struct frame_buf b;
	static uint8_t body[PAY_MAX * 2];
	ssize_t n, blen;

	fill_laplace(b.payload, 1448, 2);
	n = frame_enc(&b, &incnn_codec_inceptionn, 10, 0x28, 1448, 0);
	ASSERT_GT(n, 0);
	blen = incnn_codec_inceptionn.encode(10, b.payload, 1448, body,
					     sizeof(body), test_scratch(),
					     NULL);
	ASSERT_EQ(n, blen + 8);
	ASSERT_EQ(0, memcmp(b.frame + 8, body, blen));
}

TEST_F_TIMEOUT(rnd, roundtrip_every_head_and_tail, 600)
{
	static struct frame_buf b;
	const struct incnn_codec *cs[] = {
		&incnn_codec_inceptionn, &incnn_codec_ebq, &incnn_codec_trunc,
		&incnn_codec_lz4,
	};

	for (size_t c = 0; c < 4; c++) {
		for (size_t len = 40; len < 1600; len += 37) {
			for (size_t head = 0; head < 9 && head < len; head++) {
				struct incnn_frame_info fi;
				static uint8_t expect[PAY_MAX];
				size_t tail;
				ssize_t n;
				uint8_t p = cs[c]->param.def;

				/* floats start after the head */
				memset(b.payload, 0xee, head);
				fill_laplace(b.payload + head, len - head,
					     len * 31 + head);
				tail = cs[c]->floats ? (len - head) % 4 : 0;
				n = frame_enc(&b, cs[c], p, 0xfc, len, head);
				if (n == -E2BIG) {
					/* only when header + head + body +
					 * tail would not be smaller */
					static uint8_t body[2 * PAY_MAX];
					ssize_t bl = cs[c]->encode(p,
						b.payload + head,
						len - head - tail, body,
						sizeof(body), test_scratch(),
						NULL);

					ASSERT_GE(8 + head + tail + bl,
						  len);
					continue;
				}
				ASSERT_GT(n, 0) TH_LOG("%s len=%zu head=%zu",
						       cs[c]->name, len, head);
				ASSERT_LT(n, (ssize_t)len);
				ASSERT_EQ(INCNN_FRAME_OK,
					  frame_dec(b.frame, n, b.out,
						    sizeof(b.out), &fi));
				EXPECT_EQ(len, fi.orig_len);
				EXPECT_EQ(head, fi.head_len);
				EXPECT_EQ(0xfc, fi.dscp);
				EXPECT_EQ(cs[c]->id, fi.codec);
				/* what the receiver gets: head and tail raw,
				 * the float part through the codec alone */
				memcpy(expect, b.payload, len);
				{
					uint8_t *body;
					size_t nf = (len - head - tail) / 4;
					uint32_t tmp[PAY_MAX / 4];
					ssize_t bl;

					memcpy(tmp, b.payload + head, 4 * nf);
					if (cs[c]->floats) {
						bl = enc_floats(cs[c], p, tmp, nf,
								&body, NULL);
						ASSERT_EQ(0, dec_floats(cs[c], p,
							body, bl,
							(uint32_t *)(expect + head),
							nf));
						free(body);
					}
				}
				ASSERT_EQ(0, memcmp(expect, b.out, len));
			}
		}
	}
}

/*
 * Version 2 (superframes): the same layout with version nibble 2, and
 * orig_len far above any MSS; it decodes to the same bytes as version 1.
 */
TEST(version2_superframe)
{
	static uint8_t pay[65532], f1[65532], f2[65532], out[65532];
	struct incnn_frame_info fi;
	struct incnn_rng r;
	ssize_t n1, n2;

	incnn_rng_seed(&r, 7);
	incnn_gen_f32(&r, INCNN_DIST_LAPLACE, 1e-3, (float *)pay,
		      sizeof(pay) / 4);
	n1 = incnn_frame_encode(&incnn_codec_ebq, 10, 0x28, pay, sizeof(pay),
				0, f1, sizeof(f1) - 1, test_scratch(), NULL);
	n2 = incnn_frame_encode_ver(INCNN_SIMD_NONE, INCNN_FRAME_VERSION_2,
				    &incnn_codec_ebq, 10, 0x28, pay,
				    sizeof(pay), 0, f2, sizeof(f2) - 1,
				    test_scratch(), NULL);
	ASSERT_GT(n2, 8);
	ASSERT_EQ(n1, n2);
	EXPECT_EQ(0x20, f2[0]);
	EXPECT_EQ(0xff, f2[4]);		/* 65532 = 0xfffc, big-endian */
	EXPECT_EQ(0xfc, f2[5]);
	EXPECT_EQ(0, memcmp(f1 + 1, f2 + 1, n1 - 1));
	ASSERT_EQ(INCNN_FRAME_OK, frame_dec(f2, n2, out, sizeof(out), &fi));
	EXPECT_EQ(2, fi.version);
	EXPECT_EQ(65532, fi.orig_len);
	ASSERT_EQ(INCNN_FRAME_OK, frame_dec(f1, n1, pay, sizeof(pay), &fi));
	EXPECT_EQ(1, fi.version);
	EXPECT_EQ(0, memcmp(out, pay, sizeof(out)));
	/* a version other than 1 and 2 is refused by the encoder */
	EXPECT_EQ(-EINVAL, incnn_frame_encode_ver(INCNN_SIMD_NONE, 3,
						  &incnn_codec_ebq, 10, 0x28,
						  pay, 1000, 0, f2, 999,
						  test_scratch(), NULL));
}

TEST(not_smaller_goes_raw)
{
	static struct frame_buf b;
	struct incnn_rng r;

	/* |x| >= 1 is always raw: inceptionn cannot shrink it */
	incnn_rng_seed(&r, 3);
	incnn_gen_f32(&r, INCNN_DIST_UNIFORM, 1e6, (float *)b.payload, 256);
	EXPECT_EQ(-E2BIG, frame_enc(&b, &incnn_codec_inceptionn, 10, 0x28,
				    1024, 0));
	/* too short to gain anything */
	fill_laplace(b.payload, 16, 4);
	EXPECT_EQ(-E2BIG, frame_enc(&b, &incnn_codec_ebq, 10, 0x28, 9, 0));
	EXPECT_EQ(-E2BIG, frame_enc(&b, &incnn_codec_ebq, 10, 0x28, 16, 8));
	/* all head: nothing to compress */
	fill_laplace(b.payload, 400, 5);
	EXPECT_EQ(-E2BIG, frame_enc(&b, &incnn_codec_ebq, 10, 0x28, 400,
				    400));
	/* bad arguments */
	EXPECT_EQ(-EINVAL, frame_enc(&b, &incnn_codec_ebq, 31, 0x28, 400, 0));
	EXPECT_EQ(-EINVAL, frame_enc(&b, &incnn_codec_ebq, 10, 0x29, 400, 0));
	EXPECT_EQ(-EINVAL, frame_enc(&b, &incnn_codec_ebq, 10, 0x28, 400,
				     401));
}

/* Build a valid frame, then break one field at a time. */
FIXTURE(reject) {
	struct frame_buf b;
	ssize_t n;
	struct incnn_frame_info fi;
};

static FIXTURE_SETUP(reject)
{
	fill_laplace(self->b.payload, 1002, 6);
	self->n = frame_enc(&self->b, &incnn_codec_ebq, 8, 0x28, 1002, 3);
	ASSERT_GT(self->n, 16);
	ASSERT_EQ(INCNN_FRAME_OK, frame_dec(self->b.frame, self->n,
					    self->b.out, PAY_MAX, &self->fi));
}

static FIXTURE_TEARDOWN(reject)
{
}

#define REJECTS(reason) \
	EXPECT_EQ(reason, frame_dec(self->b.frame, self->n, self->b.out, \
				    PAY_MAX, &self->fi))

TEST_F(reject, short_header)
{
	for (self->n = 0; self->n < 8; self->n++)
		REJECTS(INCNN_FRAME_ERR_SHORT);
}

TEST_F(reject, version_and_flags)
{
	self->b.frame[0] = 0x00;
	REJECTS(INCNN_FRAME_ERR_VERSION);
	self->b.frame[0] = 0x30;
	REJECTS(INCNN_FRAME_ERR_VERSION);
	self->b.frame[0] = 0xf0;
	REJECTS(INCNN_FRAME_ERR_VERSION);
	self->b.frame[0] = 0x21;
	REJECTS(INCNN_FRAME_ERR_VERSION);
	self->b.frame[0] = 0x11;
	REJECTS(INCNN_FRAME_ERR_VERSION);
	self->b.frame[0] = 0x10;
	self->b.frame[3] |= 1;
	REJECTS(INCNN_FRAME_ERR_VERSION);
}

TEST_F(reject, unknown_codec)
{
	self->b.frame[1] = 0;
	REJECTS(INCNN_FRAME_ERR_CODEC);
	self->b.frame[1] = INCNN_CODEC_MAX + 1;
	REJECTS(INCNN_FRAME_ERR_CODEC);
	self->b.frame[1] = 255;
	REJECTS(INCNN_FRAME_ERR_CODEC);
}

TEST_F(reject, bad_param)
{
	self->b.frame[2] = 0;
	REJECTS(INCNN_FRAME_ERR_PARAM);
	self->b.frame[2] = 31;
	REJECTS(INCNN_FRAME_ERR_PARAM);
	self->b.frame[1] = INCNN_CODEC_TRUNC;
	self->b.frame[2] = 12;
	REJECTS(INCNN_FRAME_ERR_PARAM);
	self->b.frame[1] = INCNN_CODEC_LZ4;
	self->b.frame[2] = 1;
	REJECTS(INCNN_FRAME_ERR_PARAM);
}

TEST_F(reject, lengths)
{
	uint8_t *f = self->b.frame;

	put_unaligned_be16(0, f + 4);			/* orig_len 0 */
	REJECTS(INCNN_FRAME_ERR_LENGTH);
	put_unaligned_be16(self->n, f + 4);		/* not smaller */
	REJECTS(INCNN_FRAME_ERR_LENGTH);
	put_unaligned_be16(1002, f + 4);
	put_unaligned_be16(1003, f + 6);		/* head > orig */
	REJECTS(INCNN_FRAME_ERR_LENGTH);
	put_unaligned_be16(self->n - 8, f + 6);		/* no room for tail */
	REJECTS(INCNN_FRAME_ERR_LENGTH);
	put_unaligned_be16(3, f + 6);
	/* receiver buffer too small */
	EXPECT_EQ(INCNN_FRAME_ERR_LENGTH,
		  frame_dec(f, self->n, self->b.out, 1001, &self->fi));
	/*
	 * An orig_len whose float count needs more tag bytes than the body
	 * holds cannot decode. (Smaller lies may decode: only the TCP
	 * checksum protects a frame's integrity.)
	 */
	put_unaligned_be16(65535, f + 4);
	{
		static uint8_t big[65535];

		EXPECT_EQ(INCNN_FRAME_ERR_BODY,
			  frame_dec(f, self->n, big, sizeof(big), &self->fi));
	}
}

TEST_F(reject, every_truncation)
{
	ssize_t full = self->n;

	for (self->n = 0; self->n < full; self->n++) {
		EXPECT_NE(INCNN_FRAME_OK,
			  frame_dec(self->b.frame, self->n, self->b.out,
				    PAY_MAX, &self->fi));
	}
}

TEST_F(reject, random_corruption)
{
	struct incnn_rng r;
	static uint8_t bad[PAY_MAX];

	incnn_rng_seed(&r, 7);
	for (int i = 0; i < 20000; i++) {
		memcpy(bad, self->b.frame, self->n);
		for (int j = 0; j <= i % 3; j++)
			bad[incnn_rng_next(&r) % self->n] ^=
				1 + incnn_rng_next(&r) % 255;
		self->b.out[1002] = 0xa5;
		frame_dec(bad, self->n, self->b.out, 1002, &self->fi);
		ASSERT_EQ(0xa5, self->b.out[1002]);
	}
}

TEST_HARNESS_MAIN
