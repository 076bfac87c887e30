/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A tiny streaming JSON writer. All state lives in struct json, which the
 * caller owns and passes around.
 *
 * Every value function takes a @key: the member name inside an object,
 * NULL inside an array or for the top-level value. json_end() finishes
 * the document with a newline.
 */
#ifndef INCCTL_JSON_H
#define INCCTL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH	16

struct json {
	FILE *f;
	bool pretty;		/* newlines and two-space indentation */
	unsigned int depth;	/* open containers */
	bool nonempty[JSON_MAX_DEPTH + 1]; /* container at depth has members */
};

void json_init(struct json *j, FILE *f, bool pretty);
void json_end(struct json *j);

void json_obj_open(struct json *j, const char *key);
void json_obj_close(struct json *j);
void json_arr_open(struct json *j, const char *key);
void json_arr_close(struct json *j);

void json_str(struct json *j, const char *key, const char *s);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_s64(struct json *j, const char *key, int64_t v);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);
/* Non-finite values are written as null (JSON has no NaN/Infinity). */
void json_double(struct json *j, const char *key, double v);

/* Write @s as a JSON string literal (quotes included). */
void json_write_string(FILE *f, const char *s);

#endif /* INCCTL_JSON_H */
