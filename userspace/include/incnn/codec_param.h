/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A codec setting as text (userspace/lib/codec_param.c), for a codec
 * described by struct incnn_codec_param: the codec library's own
 * (incnn_codec_get(id)->param) or the kernel's (INCNN_CMD_GET_CODECS).
 * One spelling everywhere:
 *
 *	kind			incctl		tools		INCNN_CODEC
 *	INCNN_PARAM_BOUND	bound 2^-K	--bound 2^-K	NAME:2^-K
 *	INCNN_PARAM_BITS	bits B		--bits B	NAME:B
 *	INCNN_PARAM_NONE	(nothing)	(nothing)	NAME
 *
 * A bound is read as 2^-K, K, or a decimal that is exactly 2^-K.
 */
#ifndef _INCNN_CODEC_PARAM_H
#define _INCNN_CODEC_PARAM_H

#include <stddef.h>

#include "codec.h"

/* part of libincnn.so's API */
#pragma GCC visibility push(default)

/* "bound", "bits", or NULL for a kind without a keyword */
const char *incnn_codec_param_key(unsigned int kind);

/*
 * Parse @s, the value of a setting of @p (the text after the keyword).
 * Returns 0 and *@param; -ERANGE for a well-formed value @p does not
 * accept (outside min..max, bits not a multiple of 8); -EINVAL for a
 * malformed one.
 */
int incnn_codec_param_parse(const struct incnn_codec_param *p,
			    const char *s, unsigned int *param);

/*
 * @param as a setting: "bound 2^-10", "bits 16", "" (a codec without a
 * parameter, 0), else "param N". Returns @buf.
 */
const char *incnn_codec_param_format(const struct incnn_codec_param *p,
				     unsigned int param, char *buf,
				     size_t len);

/* The values @p accepts: "2^-1..2^-30", "8, 16 or 24", "0..0". */
const char *incnn_codec_param_range(const struct incnn_codec_param *p,
				    char *buf, size_t len);

#pragma GCC visibility pop

#endif /* _INCNN_CODEC_PARAM_H */
