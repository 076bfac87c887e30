// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incctl: configure incnn, the in-network gradient compression module,
 * over its generic netlink family. Option parsing and command dispatch;
 * see incctl.8 for the user documentation.
 *
 * Exit status: 0 success, 1 the kernel or the system refused (including
 * "module not loaded"), 2 bad command line.
 */
#include "incctl.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>

void incctl_usage(FILE *f)
{
	fputs(
"Usage: incctl [-j [-p]] [-n NETNS] COMMAND\n"
"\n"
"Options:\n"
"  -j, --json          JSON output\n"
"  -p, --pretty        indent the JSON output\n"
"  -n, --netns NETNS   run in the named network namespace (/run/netns/NETNS)\n"
"  -s, --stats         with stats: every raw counter\n"
"  -h, --help          this text\n"
"\n"
"Commands:\n"
"  show                               configuration, flow count and rules\n"
"  set KEY VALUE [KEY VALUE]...       change the configuration; keys:\n"
"      tx on|off  rx on|off  wire-dscp 0..63  wire-tos 0xNN\n"
"      flow-max 1..1048576  idle-timeout 1..86400  close-timeout 1..3600\n"
"  rule add {dscp N | tos 0xNN} codec NAME[:SETTING]\n"
"      inceptionn, ebq or zebq:2^-K (or :K, K = 1..30), e.g. ebq:2^-10;\n"
"      trunc:B (B = 8, 16 or 24 bits kept); lz4 (no setting)\n"
"      long form: codec NAME [bound 2^-K | bits B]\n"
"  rule del {dscp N | tos 0xNN}\n"
"  rule list\n"
"  stats [-s]                         counters, ratio, per-codec histogram\n"
"  stats reset\n"
"  flows                              the tracked flows\n"
"  codecs                             the codecs the kernel offers\n"
"  help\n"
"\n"
"dscp takes a DSCP (decimal, 0..63); tos a ToS byte whose ECN bits are\n"
"zero: \"tos 0x28\" and \"dscp 10\" are the same marking.\n", f);
}

static int cmd_help(struct incctl *c, int argc, char **argv)
{
	(void)c;
	(void)argc;
	(void)argv;
	incctl_usage(stdout);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(struct incctl *c, int argc, char **argv);
} commands[] = {
	{ "show",   cmd_show },
	{ "set",    cmd_set },
	{ "rule",   cmd_rule },
	{ "stats",  cmd_stats },
	{ "flows",  cmd_flows },
	{ "codecs", cmd_codecs },
	{ "help",   cmd_help },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json",   no_argument,       NULL, 'j' },
		{ "pretty", no_argument,       NULL, 'p' },
		{ "netns",  required_argument, NULL, 'n' },
		{ "stats",  no_argument,       NULL, 's' },
		{ "help",   no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct incctl c;
	const char *cmd;
	int opt, rc = -1;

	memset(&c, 0, sizeof(c));
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:jpn:sh", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			c.json = true;
			break;
		case 'p':
			c.pretty = true;
			break;
		case 'n':
			if (!optarg[0] || !strcmp(optarg, ".") ||
			    !strcmp(optarg, ".."))
				return cli_error("invalid network namespace name \"%s\"",
						 optarg);
			c.netns = optarg;
			break;
		case 's':
			c.details = true;
			break;
		case 'h':
			incctl_usage(stdout);
			return 0;
		case ':':
			return cli_error("option \"%s\" needs a value",
					 argv[optind - 1]);
		default:
			if (optopt && strncmp(argv[optind - 1], "--", 2))
				return cli_error("unknown option \"-%c\" (try \"incctl help\")",
						 optopt);
			return cli_error("unknown option \"%s\" (try \"incctl help\")",
					 argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_error("no command given (try \"incctl help\")");
	cmd = argv[optind];
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(cmd, commands[i].name)) {
			rc = commands[i].fn(&c, argc - optind - 1,
					    argv + optind + 1);
			break;
		}
	}
	if (rc < 0)
		return cli_error("unknown command \"%s\" (try \"incctl help\")",
				 cmd);
	incctl_disconnect(&c);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "incctl: cannot write the output: %s\n",
			strerror(errno));
		return rc ? rc : EXIT_FAIL;
	}
	return rc;
}
