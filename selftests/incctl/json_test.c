// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit test of incctl's JSON writer (json.c): escaping, invalid UTF-8,
 * separators, pretty printing, empty containers, non-finite numbers.
 * Prints "ok N - ..." lines and a "# Totals: ..." line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static int n, fails;

static void check(const char *desc, const char *got, const char *want)
{
	n++;
	if (!strcmp(got, want)) {
		printf("ok %d - %s\n", n, desc);
		return;
	}
	fails++;
	printf("not ok %d - %s\n#   got:  %s\n#   want: %s\n", n, desc, got, want);
}

/* Run @fn on a writer over a memory stream; return the text. */
static char *render(void (*fn)(struct json *j), bool pretty)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json j;

	if (!f)
		abort();
	json_init(&j, f, pretty);
	fn(&j);
	fclose(f);
	return buf;
}

static void strings(struct json *j)
{
	json_arr_open(j, NULL);
	json_str(j, NULL, "a\"b\\c/d");
	json_str(j, NULL, "\n\r\t\b\f\x01\x1f");
	json_str(j, NULL, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	json_str(j, NULL, "bad\xff\xc3(\xe0\x80\x80\xed\xa0\x80x");
	json_str(j, NULL, "");
	json_arr_close(j);
}

static void numbers(struct json *j)
{
	json_obj_open(j, NULL);
	json_u64(j, "max", UINT64_MAX);
	json_s64(j, "neg", -5);
	json_double(j, "r", 3.5);
	json_double(j, "nan", NAN);
	json_double(j, "inf", INFINITY);
	json_bool(j, "t", true);
	json_bool(j, "f", false);
	json_null(j, "z");
	json_obj_close(j);
	json_end(j);
}

static void nested(struct json *j)
{
	json_obj_open(j, NULL);
	json_arr_open(j, "empty");
	json_arr_close(j);
	json_obj_open(j, "o");
	json_obj_close(j);
	json_arr_open(j, "a");
	json_u64(j, NULL, 1);
	json_obj_open(j, NULL);
	json_str(j, "k\"ey", "v");
	json_obj_close(j);
	json_arr_close(j);
	json_obj_close(j);
	json_end(j);
}

int main(void)
{
	char *s;

	printf("TAP version 13\n");
	s = render(strings, false);
	check("escapes", s,
	      "[\"a\\\"b\\\\c/d\",\"\\n\\r\\t\\b\\f\\u0001\\u001f\","
	      "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\","
	      "\"bad\\ufffd\\ufffd(\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffdx\",\"\"]");
	free(s);
	s = render(numbers, false);
	check("numbers, booleans, null; NaN/Inf as null", s,
	      "{\"max\":18446744073709551615,\"neg\":-5,\"r\":3.5,\"nan\":null,"
	      "\"inf\":null,\"t\":true,\"f\":false,\"z\":null}\n");
	free(s);
	s = render(nested, false);
	check("nesting, empty containers", s,
	      "{\"empty\":[],\"o\":{},\"a\":[1,{\"k\\\"ey\":\"v\"}]}\n");
	free(s);
	s = render(nested, true);
	check("pretty", s,
	      "{\n  \"empty\": [],\n  \"o\": {},\n  \"a\": [\n    1,\n    {\n"
	      "      \"k\\\"ey\": \"v\"\n    }\n  ]\n}\n");
	free(s);
	printf("1..%d\n# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       n, n - fails, fails);
	return fails ? 1 : 0;
}
