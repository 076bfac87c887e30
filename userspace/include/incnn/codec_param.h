/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A codec setting as text (userspace/lib/codec_param.c), for a codec
 * described by struct incnn_codec_param: the codec library's own
 * (incnn_codec_get(id)->param) or the kernel's (INCNN_CMD_GET_CODECS).
 * A codec with its setting has one spelling in every output, which
 * INCNN_CODEC and incctl's "codec" read back (incnn_codec_param_label(),
 * incnn_codec_label(); read by incnn_codec_spec_parse()). The long forms
 * are input only:
 *
 *	kind	printed		long forms (incctl; tools)
 *	BOUND	NAME:2^-K	codec NAME bound 2^-K;	--codec NAME --bound 2^-K
 *	BITS	NAME:B		codec NAME bits B;	--codec NAME --bits B
 *	NONE	NAME		codec NAME;		--codec NAME
 *
 * e.g. "ebq:2^-10", "trunc:16", "lz4", "none".
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

/* The values @p accepts: "2^-1..2^-30", "8, 16 or 24", "0..0". */
const char *incnn_codec_param_range(const struct incnn_codec_param *p,
				    char *buf, size_t len);

/*
 * incnn_codec_param_label(name, p, param, buf, len), the one formatter
 * (incnn_codec_label() and incctl, with the kernel's name and kind, call
 * it; so does the module's log), is declared in codec.h: it is the codec
 * library's (kmod/codec/codec.c), built into the module too.
 */

/*
 * Codec @id with parameter @param as one word (incnn_codec_param_label()
 * with the codec library's own name and parameter): "ebq:2^-10",
 * "trunc:16", "lz4", "none" (id 0); "codec N param P" for an unknown id
 * and "NAME param P" for a parameter the codec does not accept. Returns
 * @buf.
 */
const char *incnn_codec_label(unsigned int id, unsigned int param, char *buf,
			      size_t len);

/*
 * Split "NAME" or "NAME:SETTING" into the codec's name (into @name, @len
 * bytes) and *@setting: the text after the colon, NULL without one.
 * -EINVAL for an empty name or one of @len bytes or more.
 */
int incnn_codec_spec_split(const char *spec, char *name, size_t len,
			   const char **setting);

/*
 * The inverse of incnn_codec_label(): "none" (id 0, param 0), "NAME" (its
 * default parameter) or "NAME:SETTING" (incnn_codec_param_parse()).
 * Returns 0 with *@id and *@param; -EINVAL for an unknown codec or a
 * malformed setting, -ERANGE for a setting out of the codec's range.
 */
int incnn_codec_spec_parse(const char *spec, unsigned int *id,
			   unsigned int *param);

/*
 * The error bound of codec @id at @param (incnn_codec.max_err()): every
 * finite value comes back within it; 0 for "none" and lossless codecs;
 * -1 where there is no absolute bound (trunc's is relative), for an
 * unknown id or a parameter the codec does not accept.
 */
double incnn_codec_max_err(unsigned int id, unsigned int param);

#pragma GCC visibility pop

#endif /* _INCNN_CODEC_PARAM_H */
