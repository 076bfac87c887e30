/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Command-line options the tools share: getopt's usage errors, the
 * benchmark tools' -n/-t and the collective tools' options.
 */
#ifndef INCNN_TU_OPTS_H
#define INCNN_TU_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "tu_base.h"

struct incnn_codec;

/*
 * The usage error for getopt_long()'s ':' (missing argument) or '?'
 * (unknown option) result @c; @argv is the vector getopt worked on.
 */
int tu_getopt_error(const char *prog, int c, char *const *argv);

/*
 * The benchmark tools' (incnn-thc, incnn-gvq) -n FLOATS (1..@max_n) and
 * -t SECONDS ((0, 60]) for getopt's @c: 0 when taken, the usage error's
 * exit status (printed), or -1 when @c is neither.
 */
int tu_bench_opt(const char *prog, int c, const char *arg, uint64_t max_n,
		 uint64_t *n, double *secs);

/*
 * The collective tools' shared options. --algo @s: "ring" (*@ps = false)
 * or "ps" (true). --bound @s for the --codec given (@codec, NULL: none or
 * auto): *@param = K. 0, or the usage error (printed) to exit with.
 */
int tu_parse_algo(const char *prog, const char *s, bool *ps);
int tu_parse_bound_opt(const char *prog, const char *s,
		       const struct incnn_codec *codec, unsigned int *param);

/*
 * The options of the tools on the collective library (incnn-allreduce,
 * incnn-train): -n/--ranks, -a/--algo, -c/--codec, --bound, --tos and
 * --timeout. TU_COLL_LONG_OPTS goes in a tool's long option table (with
 * "n:a:c:" in its short ones); the tool's own long-only options start at
 * TU_OPT_FREE.
 */
#define TU_MAX_LOCAL	64

enum {
	TU_OPT_BOUND = 256,
	TU_OPT_TOS,
	TU_OPT_TIMEOUT,
	TU_OPT_FREE,
};

#define TU_COLL_LONG_OPTS \
	{ "ranks", required_argument, NULL, 'n' }, \
	{ "algo", required_argument, NULL, 'a' }, \
	{ "codec", required_argument, NULL, 'c' }, \
	{ "bound", required_argument, NULL, TU_OPT_BOUND }, \
	{ "tos", required_argument, NULL, TU_OPT_TOS }, \
	{ "timeout", required_argument, NULL, TU_OPT_TIMEOUT }

struct tu_coll_opts {
	int local;			/* -n: ranks to launch, 0: env */
	bool ps;			/* --algo ps */
	const char *codec_name;		/* --codec; NULL: auto */
	const char *bound;		/* --bound: tu_parse_bound_opt() */
	int tos;
	int timeout_ms;
};

/*
 * getopt_long()'s result @c with @arg, for the options the tool does not
 * handle itself: 0 when it is one of these (taken into @co), else the
 * usage error's exit status (printed; tu_getopt_error() with @argv when
 * it is none of them).
 */
int tu_coll_opt(const char *prog, struct tu_coll_opts *co, int c,
		const char *arg, char *const *argv);

#endif /* INCNN_TU_OPTS_H */
