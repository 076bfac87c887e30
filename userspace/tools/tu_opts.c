// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Command-line options the tools share.
 */
#include <getopt.h>
#include <string.h>

#include "tu_codec.h"
#include "tu_opts.h"
#include "tu_parse.h"

int tu_getopt_error(const char *prog, int c, char *const *argv)
{
	/* the word the user typed, or the unknown short option letter */
	if (c == ':')
		return tu_error(prog, TU_EXIT_USAGE, "option %s needs an argument",
				argv[optind - 1]);
	if (optopt && optopt < 256)
		return tu_error(prog, TU_EXIT_USAGE, "unknown option -%c",
				optopt);
	return tu_error(prog, TU_EXIT_USAGE, "unknown option %s",
			argv[optind - 1]);
}

int tu_bench_opt(const char *prog, int c, const char *arg, uint64_t max_n,
		 uint64_t *n, double *secs)
{
	uint64_t u;

	if (c == 'n') {
		if (tu_parse_u64(arg, &u) || !u || u > max_n)
			return tu_error(prog, TU_EXIT_USAGE,
					"-n %s: not a count in [1, 1G]", arg);
		*n = u;
		return 0;
	}
	if (c == 't') {
		if (tu_parse_double(arg, secs) || !(*secs > 0 && *secs <= 60))
			return tu_error(prog, TU_EXIT_USAGE,
					"-t %s: not a number in (0, 60]", arg);
		return 0;
	}
	return -1;
}

int tu_parse_algo(const char *prog, const char *s, bool *ps)
{
	if (!strcmp(s, "ring"))
		*ps = false;
	else if (!strcmp(s, "ps"))
		*ps = true;
	else
		return tu_error(prog, TU_EXIT_USAGE,
				"--algo %s: must be ring or ps", s);
	return 0;
}

int tu_parse_bound_opt(const char *prog, const char *s,
		       const struct incnn_codec *codec, unsigned int *param)
{
	if (!codec || !tu_codec_takes_bound(codec))
		return tu_error(prog, TU_EXIT_USAGE,
				"--bound needs --codec inceptionn, ebq or zebq");
	if (incnn_codec_param_parse(&codec->param, s, param))
		return tu_error(prog, TU_EXIT_USAGE,
				"--bound %s: must be 2^-K with K in %u..%u", s,
				codec->param.min, codec->param.max);
	return 0;
}

int tu_coll_opt(const char *prog, struct tu_coll_opts *co, int c,
		const char *arg, char *const *argv)
{
	long l;

	switch (c) {
	case 'n':
		if (tu_parse_long(arg, 1, TU_MAX_LOCAL, &l))
			return tu_error(prog, TU_EXIT_USAGE,
					"-n %s: must be 1..%d", arg,
					TU_MAX_LOCAL);
		co->local = (int)l;
		return 0;
	case 'a':
		return tu_parse_algo(prog, arg, &co->ps) ? TU_EXIT_USAGE : 0;
	case 'c':
		co->codec_name = arg;
		return 0;
	case TU_OPT_BOUND:
		co->bound = arg;
		return 0;
	case TU_OPT_TOS:
		if (tu_parse_long(arg, 0, 255, &l))
			return tu_error(prog, TU_EXIT_USAGE,
					"--tos %s: must be 0..255 (e.g. 0x28)",
					arg);
		co->tos = (int)l;
		return 0;
	case TU_OPT_TIMEOUT:
		if (tu_parse_long(arg, 1, 86400000, &l))
			return tu_error(prog, TU_EXIT_USAGE,
					"--timeout %s: must be 1..86400000 ms",
					arg);
		co->timeout_ms = (int)l;
		return 0;
	}
	return tu_getopt_error(prog, c, argv);
}
