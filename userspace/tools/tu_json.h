/* SPDX-License-Identifier: GPL-2.0 OR MIT */
#ifndef INCNN_TU_JSON_H
#define INCNN_TU_JSON_H

#include <stdio.h>

/* Write @s as a JSON string literal, with quotes. */
void tu_json_str(FILE *f, const char *s);

/* Write @v as a JSON number, or null when it is not finite. */
void tu_json_num(FILE *f, double v);

#endif /* INCNN_TU_JSON_H */
