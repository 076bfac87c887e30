// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Command-line argument parsing helpers for incctl.
 */
#include "parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/incnn.h>

int cli_error(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	fprintf(stderr, "incctl: %s\n", buf);
	return EXIT_USAGE;
}

static bool is_digit(char c, bool hex)
{
	if (c >= '0' && c <= '9')
		return true;
	return hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
}

int parse_uint(const char *s, bool hex, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	int base = 10;
	char *end;

	if (hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	/* strtoull() would accept space, a sign and an empty string */
	if (!is_digit(s[0], base == 16))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int arg_value(int argc, char **argv, int *i, const char **val)
{
	if (*i + 1 >= argc)
		return cli_error("missing value after \"%s\"", argv[*i]);
	*i += 1;
	*val = argv[*i];
	return 0;
}

int arg_dscp(const char *kw, const char *s, uint8_t *dscp)
{
	uint64_t v;
	int err = parse_uint(s, false, 63, &v);

	if (err == -ERANGE)
		return cli_error("%s %s out of range (0..63)", kw, s);
	if (err && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return cli_error("%s takes a decimal DSCP 0..63; for a ToS byte such as %s use \"%s\"",
				 kw, s, strcmp(kw, "dscp") ? "wire-tos" : "tos");
	if (err)
		return cli_error("invalid %s \"%s\" (expected 0..63)", kw, s);
	*dscp = (uint8_t)v;
	return 0;
}

int arg_tos(const char *kw, const char *s, uint8_t *dscp)
{
	uint64_t v;
	int err = parse_uint(s, true, 255, &v);

	if (err == -ERANGE)
		return cli_error("%s %s out of range (0..0xff)", kw, s);
	if (err)
		return cli_error("invalid %s \"%s\" (expected a ToS byte such as 0x28)",
				 kw, s);
	if (v & 3)
		return cli_error("%s 0x%02x: ECN bits must be zero (did you mean 0x%02x?)",
				 kw, (unsigned int)v, (unsigned int)(v & 0xfc));
	*dscp = (uint8_t)(v >> 2);
	return 0;
}

int arg_onoff(const char *kw, const char *s, bool *on)
{
	if (!strcmp(s, "on")) {
		*on = true;
		return 0;
	}
	if (!strcmp(s, "off")) {
		*on = false;
		return 0;
	}
	return cli_error("invalid %s \"%s\" (expected on or off)", kw, s);
}

int arg_u32(const char *kw, const char *s, uint32_t min, uint32_t max,
	    uint32_t *out)
{
	uint64_t v;
	int err = parse_uint(s, false, max, &v);

	if (err == -ERANGE || (!err && v < min))
		return cli_error("%s %s out of range (%u..%u)", kw, s, min, max);
	if (err)
		return cli_error("invalid %s \"%s\" (expected an integer %u..%u)",
				 kw, s, min, max);
	*out = (uint32_t)v;
	return 0;
}

int arg_end(const char *what, int argc, char **argv, int i)
{
	if (i < argc)
		return cli_error("%s: unexpected argument \"%s\"", what,
				 argv[i]);
	return 0;
}
