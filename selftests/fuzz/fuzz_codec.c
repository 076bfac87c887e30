// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for every codec, both directions.
 *
 * Input: byte 0 selects the codec, byte 1 its parameter, bytes 2-3 the
 * decoded length; the rest is (a) decoded as a hostile body into an
 * exact-size buffer and (b) encoded as data, which must then decode
 * (exactly, for lossless codecs and raw values) and, for the 2^-k codecs,
 * be idempotent.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Alignas(64) uint8_t scratch[INCNN_CODEC_SCRATCH];

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
	p = c->check_param(data[1]) ? c->default_param : data[1];
	out_len = (data[2] | data[3] << 8) % 16384;
	if (c->floats)
		out_len &= ~3u;
	body_len = size - 4;

	body = malloc(body_len + 1);
	memcpy(body, data + 4, body_len);
	out = malloc(out_len + 1);
	c->decode(p, body, body_len, out, out_len);
	free(out);

	check_encode(c, p, body, c->floats ? body_len & ~3u : body_len);
	free(body);
	return 0;
}
