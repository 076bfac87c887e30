/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Strict parsing of the tools' numeric arguments: the whole string must
 * be consumed.
 */
#ifndef INCNN_TU_PARSE_H
#define INCNN_TU_PARSE_H

#include <stdint.h>

/*
 * Parse an unsigned decimal integer, optionally followed by a binary
 * suffix K, M or G (x1024, x1024^2, x1024^3). The whole string must be
 * consumed. Returns 0, -EINVAL (syntax) or -ERANGE (overflow).
 */
int tu_parse_u64(const char *s, uint64_t *out);

/*
 * Parse an integer in [@min, @max], decimal or 0x hex, without a sign or
 * leading space; the whole string. 0 or -EINVAL.
 */
int tu_parse_long(const char *s, long min, long max, long *out);

/* Parse a finite floating-point number (whole string). 0 or -EINVAL. */
int tu_parse_double(const char *s, double *out);

/*
 * Parse an error bound 2^-K and return K. Accepted forms:
 *	2^-K		e.g. 2^-10
 *	K		a plain decimal integer, e.g. 10
 *	a decimal	that is exactly 2^-K, e.g. 0.0009765625 or 9.765625e-4
 * Returns 0; -ERANGE when the value is an exact power of two but K is
 * outside INCNN_BOUND_MIN_K..INCNN_BOUND_MAX_K; -EINVAL otherwise.
 */
int tu_parse_bound(const char *s, unsigned int *k);

#endif /* INCNN_TU_PARSE_H */
