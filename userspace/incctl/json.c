// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A tiny streaming JSON writer (RFC 8259). Strings are escaped as the RFC
 * requires; bytes that are not valid UTF-8 are replaced by U+FFFD so the
 * output is always valid JSON.
 */
#include "json.h"

#include <math.h>

void json_init(struct json *j, FILE *f, bool pretty)
{
	j->f = f;
	j->pretty = pretty;
	j->depth = 0;
	for (unsigned int i = 0; i <= JSON_MAX_DEPTH; i++)
		j->nonempty[i] = false;
}

void json_end(struct json *j)
{
	fputc('\n', j->f);
}

static void indent(struct json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->f);
	for (unsigned int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* Length of the valid UTF-8 sequence at @s, 0 if invalid. */
static int utf8_len(const unsigned char *s)
{
	unsigned int c = s[0];
	int n, i;
	unsigned int cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

void json_write_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	while (*s) {
		int n;

		switch (*s) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*s < 0x20) {
				fprintf(f, "\\u%04x", *s);
				break;
			}
			n = utf8_len(s);
			if (!n) {
				fputs("\\ufffd", f);
				break;
			}
			fwrite(s, 1, (size_t)n, f);
			s += n - 1;
			break;
		}
		s++;
	}
	fputc('"', f);
}

/* Separator, indentation and key before a value. */
static void member(struct json *j, const char *key)
{
	unsigned int d = j->depth < JSON_MAX_DEPTH ? j->depth : JSON_MAX_DEPTH;

	if (j->depth > 0) {
		if (j->nonempty[d])
			fputc(',', j->f);
		indent(j);
	}
	j->nonempty[d] = true;
	if (key) {
		json_write_string(j->f, key);
		fputs(j->pretty ? ": " : ":", j->f);
	}
}

static void open_container(struct json *j, const char *key, char ch)
{
	member(j, key);
	fputc(ch, j->f);
	j->depth++;
	if (j->depth <= JSON_MAX_DEPTH)
		j->nonempty[j->depth] = false;
}

static void close_container(struct json *j, char ch)
{
	unsigned int d = j->depth < JSON_MAX_DEPTH ? j->depth : JSON_MAX_DEPTH;
	bool had = j->nonempty[d];

	if (j->depth == 0)
		return;	/* unbalanced: a caller bug */
	j->depth--;
	if (had)
		indent(j);
	fputc(ch, j->f);
}

void json_obj_open(struct json *j, const char *key)
{
	open_container(j, key, '{');
}

void json_obj_close(struct json *j)
{
	close_container(j, '}');
}

void json_arr_open(struct json *j, const char *key)
{
	open_container(j, key, '[');
}

void json_arr_close(struct json *j)
{
	close_container(j, ']');
}

void json_str(struct json *j, const char *key, const char *s)
{
	member(j, key);
	json_write_string(j->f, s);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_s64(struct json *j, const char *key, int64_t v)
{
	member(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

void json_double(struct json *j, const char *key, double v)
{
	if (!isfinite(v)) {
		json_null(j, key);
		return;
	}
	member(j, key);
	/* "%.6g" never yields a leading "." or a trailing "." */
	fprintf(j->f, "%.6g", v);
}
