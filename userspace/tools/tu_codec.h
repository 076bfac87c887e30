/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Codecs as the tools name and print them, and encoder scratch memory. */
#ifndef INCNN_TU_CODEC_H
#define INCNN_TU_CODEC_H

#include <stdbool.h>
#include <stddef.h>

#include "codec.h"
#include <incnn/codec_param.h>

/* "inceptionn, ebq, trunc, lz4" into @buf. */
void tu_codec_names(char *buf, size_t len);

/* Whether the codec's parameter is an error bound 2^-k. */
static inline bool tu_codec_takes_bound(const struct incnn_codec *c)
{
	return c->param.kind == INCNN_PARAM_BOUND;
}

/* Whether the codec's parameter is a bit count (trunc). */
static inline bool tu_codec_takes_bits(const struct incnn_codec *c)
{
	return c->param.kind == INCNN_PARAM_BITS;
}

/*
 * Memory for the codecs' encoder scratch: INCNN_CODEC_SCRATCH bytes,
 * 64-byte aligned. Free with free(). NULL when out of memory.
 */
void *tu_scratch_alloc(void);

#endif /* INCNN_TU_CODEC_H */
