// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A codec setting as text (docs/codecs.md): the value of a setting read
 * ("2^-10", "10", "16"), a codec with its setting as one word, the one
 * spelling every tool prints and the collective's INCNN_CODEC reads
 * ("ebq:2^-10", "trunc:16", "lz4"), and its error bound.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <incnn/codec_param.h>

/* Decimal digits only, no sign or suffix; -ERANGE beyond 2^64 - 1. */
static int plain_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned int d = *s - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (*s)
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * Split a decimal "[+]digits[.digits][e[+-]digits]" into its significant
 * digits (no leading or trailing zeros) and a power of ten: value =
 * digits * 10^@exp10. Returns the number of digits (0 for zero), or -1
 * for bad syntax or absurd sizes.
 */
static int split_decimal(const char *s, char *digits, size_t cap,
			 long *exp10)
{
	size_t n = 0;
	long e = 0, ex = 0;
	bool any = false, dot = false, eneg = false;
	const char *p = s;

	if (*p == '+')
		p++;
	for (; *p && *p != 'e' && *p != 'E'; p++) {
		if (*p == '.') {
			if (dot)
				return -1;
			dot = true;
			continue;
		}
		if (!isdigit((unsigned char)*p))
			return -1;
		any = true;
		if (!n && *p == '0') {
			if (dot)
				e--;
			continue;
		}
		if (n + 1 >= cap)
			return -1;
		digits[n++] = *p;
		if (dot)
			e--;
	}
	if (!any)
		return -1;
	if (*p) {
		p++;
		if (*p == '+' || *p == '-')
			eneg = *p++ == '-';
		if (!isdigit((unsigned char)*p))
			return -1;
		for (; isdigit((unsigned char)*p); p++) {
			ex = ex * 10 + (*p - '0');
			if (ex > 100000)
				return -1;
		}
		if (*p)
			return -1;
		e += eneg ? -ex : ex;
	}
	while (n && digits[n - 1] == '0') {
		n--;
		e++;
	}
	digits[n] = '\0';
	*exp10 = e;
	return (int)n;
}

/* The decimal digits of 5^@k (most significant first) into @buf. */
static void pow5_digits(unsigned int k, char *buf, size_t cap)
{
	unsigned char d[512];
	size_t n = 1, i;

	d[0] = 1;
	while (k--) {
		unsigned int carry = 0;

		for (i = 0; i < n; i++) {
			unsigned int v = d[i] * 5 + carry;

			d[i] = v % 10;
			carry = v / 10;
		}
		if (carry && n < sizeof(d))
			d[n++] = carry;
	}
	if (n >= cap)
		n = cap - 1;
	for (i = 0; i < n; i++)
		buf[i] = '0' + d[n - 1 - i];
	buf[n] = '\0';
}

/* Digits only, no suffix. */
static int parse_plain_u64(const char *s, uint64_t *v)
{
	size_t n = strlen(s);

	if (!n || !isdigit((unsigned char)s[n - 1]))
		return -EINVAL;
	return plain_u64(s, v);
}

/*
 * An error bound 2^-K: 2^-K, K, or a decimal that is exactly 2^-K (e.g.
 * 0.0009765625 or 9.765625e-4). -ERANGE when it is an exact power of two
 * with K outside @min..@max; -EINVAL otherwise.
 */
static int parse_bound(const char *s, unsigned int min, unsigned int max,
		       unsigned int *k)
{
	char digits[512], want[512];
	uint64_t v;
	long e;
	int n;

	if (!strncmp(s, "2^-", 3)) {
		if (parse_plain_u64(s + 3, &v))
			return -EINVAL;
		goto range;
	}
	if (!parse_plain_u64(s, &v))
		goto range;

	/* a decimal: exactly 2^-K = 5^K * 10^-K */
	n = split_decimal(s, digits, sizeof(digits), &e);
	if (n <= 0)
		return -EINVAL;
	if (e >= 0) {
		/* >= 1: a power of two 2^j, j >= 0, is out of range */
		if (e == 0 && !parse_plain_u64(digits, &v) && !(v & (v - 1)))
			return -ERANGE;
		return -EINVAL;
	}
	if (-e > 400)
		return -EINVAL;
	pow5_digits(-e, want, sizeof(want));
	if (strcmp(digits, want))
		return -EINVAL;
	v = -e;
range:
	if (v < min || v > max)
		return -ERANGE;
	*k = v;
	return 0;
}

const char *incnn_codec_param_key(unsigned int kind)
{
	switch (kind) {
	case INCNN_PARAM_BOUND:
		return "bound";
	case INCNN_PARAM_BITS:
		return "bits";
	default:
		return NULL;
	}
}

int incnn_codec_param_parse(const struct incnn_codec_param *p,
			    const char *s, unsigned int *param)
{
	uint64_t v;

	if (p->kind == INCNN_PARAM_BOUND)
		return parse_bound(s, p->min, p->max, param);
	if (plain_u64(s, &v))
		return -EINVAL;
	if (v < p->min || v > p->max ||
	    (p->kind == INCNN_PARAM_BITS && v % 8))
		return -ERANGE;
	*param = (unsigned int)v;
	return 0;
}

const char *incnn_codec_param_range(const struct incnn_codec_param *p,
				    char *buf, size_t len)
{
	size_t n = 0;

	if (p->kind == INCNN_PARAM_BOUND) {
		snprintf(buf, len, "2^-%u..2^-%u", p->min, p->max);
	} else if (p->kind == INCNN_PARAM_BITS) {
		buf[0] = '\0';
		/* "8, 16 or 24" */
		for (unsigned int b = (p->min + 7) / 8 * 8; b <= p->max && n < len;
		     b += 8)
			n += snprintf(buf + n, len - n, "%s%u",
				      !n ? "" : b + 8 > p->max ? " or " : ", ",
				      b);
	} else {
		snprintf(buf, len, "%u..%u", p->min, p->max);
	}
	return buf;
}

const char *incnn_codec_label(unsigned int id, unsigned int param, char *buf,
			      size_t len)
{
	const struct incnn_codec *c = incnn_codec_get(id);

	if (!id)
		snprintf(buf, len, "none");
	else if (!c)
		snprintf(buf, len, "codec %u param %u", id, param);
	else
		incnn_codec_param_label(c->name, &c->param, param, buf, len);
	return buf;
}

int incnn_codec_spec_split(const char *spec, char *name, size_t len,
			   const char **setting)
{
	const char *colon = strchr(spec, ':');
	size_t n = colon ? (size_t)(colon - spec) : strlen(spec);

	if (!n || n >= len)
		return -EINVAL;
	memcpy(name, spec, n);
	name[n] = '\0';
	*setting = colon ? colon + 1 : NULL;
	return 0;
}

int incnn_codec_spec_parse(const char *spec, unsigned int *id,
			   unsigned int *param)
{
	const struct incnn_codec *c;
	const char *setting;
	char name[32];

	if (!strcmp(spec, "none")) {
		*id = 0;
		*param = 0;
		return 0;
	}
	if (incnn_codec_spec_split(spec, name, sizeof(name), &setting))
		return -EINVAL;
	c = incnn_codec_find(name);
	if (!c)
		return -EINVAL;
	*param = c->param.def;
	if (setting) {
		int ret = incnn_codec_param_parse(&c->param, setting, param);

		if (ret)
			return ret;
	}
	*id = c->id;
	return 0;
}

double incnn_codec_max_err(unsigned int id, unsigned int param)
{
	const struct incnn_codec *c = incnn_codec_get(id);
	int k;

	if (!id)
		return 0;
	if (!c || param > 255 || incnn_codec_check_param(c, (u8)param))
		return -1;
	k = c->max_err((u8)param);
	if (k == INCNN_MAX_ERR_EXACT)
		return 0;
	if (k < 0 || k > 63)
		return -1;
	return 1.0 / (double)(1ull << k);
}
