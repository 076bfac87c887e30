// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The codec table.
 */
#include "codec.h"

static const struct incnn_codec *const incnn_codecs[] = {
	[INCNN_CODEC_INCEPTIONN] = &incnn_codec_inceptionn,
	[INCNN_CODEC_EBQ] = &incnn_codec_ebq,
	[INCNN_CODEC_TRUNC] = &incnn_codec_trunc,
	[INCNN_CODEC_LZ4] = &incnn_codec_lz4,
};

const struct incnn_codec *incnn_codec_get(unsigned int id)
{
	if (id >= ARRAY_SIZE(incnn_codecs))
		return NULL;
	return incnn_codecs[id];
}

const struct incnn_codec *incnn_codec_find(const char *name)
{
	unsigned int id;

	for (id = 0; id <= INCNN_CODEC_MAX; id++) {
		const struct incnn_codec *c = incnn_codec_get(id);

		if (c && !strcmp(c->name, name))
			return c;
	}
	return NULL;
}

int incnn_codec_check_k(u8 k)
{
	return k >= INCNN_BOUND_MIN_K && k <= INCNN_BOUND_MAX_K ? 0 : -EINVAL;
}
