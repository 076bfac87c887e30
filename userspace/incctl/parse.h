/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Command-line argument parsing helpers. The arg_*() functions print a
 * one-line "incctl: ..." error on stderr and return EXIT_USAGE when the
 * argument is bad, 0 when it is good.
 */
#ifndef INCCTL_PARSE_H
#define INCCTL_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#define EXIT_FAIL	1	/* the kernel or the system said no */
#define EXIT_USAGE	2	/* bad command line */

/*
 * Print "incctl: <message>" as exactly one line on stderr (control
 * characters from user input are shown as '?') and return EXIT_USAGE.
 */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Parse an unsigned integer: decimal, or hexadecimal with a 0x prefix
 * when @hex is set (never octal). The whole string must be consumed, no
 * sign or space. Returns 0, -EINVAL (syntax) or -ERANGE (above @max).
 */
int parse_uint(const char *s, bool hex, uint64_t max, uint64_t *out);

/* The value after keyword argv[*i]: advances *i. */
int arg_value(int argc, char **argv, int *i, const char **val);

/* DSCP, decimal 0..63 ("dscp 10"). */
int arg_dscp(const char *kw, const char *s, uint8_t *dscp);
/* ToS byte 0..255, hex or decimal, ECN bits zero ("tos 0x28"); the DSCP. */
int arg_tos(const char *kw, const char *s, uint8_t *dscp);
/* "on" or "off". */
int arg_onoff(const char *kw, const char *s, bool *on);
/* Decimal integer in min..max. */
int arg_u32(const char *kw, const char *s, uint32_t min, uint32_t max,
	    uint32_t *out);
/* Error when arguments are left over after @what. */
int arg_end(const char *what, int argc, char **argv, int i);

#endif /* INCCTL_PARSE_H */
