// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Strict parsing of numbers and error bounds for the tools' arguments.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "tu_parse.h"
#include <incnn/codec_param.h>

int tu_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned int d = *p - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	switch (*p) {
	case '\0':
		break;
	case 'k': case 'K':
		mul = 1ull << 10;
		p++;
		break;
	case 'm': case 'M':
		mul = 1ull << 20;
		p++;
		break;
	case 'g': case 'G':
		mul = 1ull << 30;
		p++;
		break;
	default:
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

int tu_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int tu_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	/* no hex floats, inf or nan: a leading sign, digits or '.' only */
	if (!*s || isspace((unsigned char)*s) || strpbrk(s, "xXnN"))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

int tu_parse_bound(const char *s, unsigned int *k)
{
	static const struct incnn_codec_param bound = {
		.kind = INCNN_PARAM_BOUND,
		.min = INCNN_BOUND_MIN_K,
		.max = INCNN_BOUND_MAX_K,
	};

	return incnn_codec_param_parse(&bound, s, k);
}
