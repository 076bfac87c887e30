/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * incctl: the incnn control tool. Shared context and command entry points.
 *
 * Every command first parses and validates its whole command line (bad
 * input: EXIT_USAGE, before anything touches netlink), then connects
 * (incctl_connect()), talks to the kernel and prints. Commands return the
 * process exit status.
 */
#ifndef INCCTL_H
#define INCCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/incnn.h>

#include "codec_table.h"
#include <incnn/genl.h>
#include <incnn/nl_config.h>
#include "json.h"
#include "parse.h"

struct incctl {
	/* options */
	bool json;		/* -j */
	bool pretty;		/* -p */
	bool details;		/* -s */
	const char *netns;	/* -n NETNS */
	/* connection, opened by incctl_connect() */
	bool connected;
	struct genl nl;
	struct kcodec_list kcodecs;	/* kernel's codec list, for names */
};

/* ctx.c */
/*
 * Enter the network namespace, open the socket and resolve the "incnn"
 * family. Returns 0 or EXIT_FAIL after printing why (a missing family is
 * "incctl: kernel module not loaded (modprobe incnn)").
 */
int incctl_connect(struct incctl *c);
/* The same without a word: 0 if incnn answers, else EXIT_FAIL. */
int incctl_connect_quiet(struct incctl *c);
void incctl_disconnect(struct incctl *c);
/* Start an incnn request (after incctl_connect()). */
struct nlmsghdr *incctl_msg(struct incctl *c, uint8_t cmd, uint16_t flags);
/*
 * genl_talk() with error reporting: returns 0, or EXIT_FAIL after
 * printing the kernel's extack message, "permission denied", or the
 * errno text. A kernel warning (extack message with success) is printed
 * as "incctl: warning: ...".
 */
int incctl_talk(struct incctl *c, struct nlmsghdr *nlh, genl_cb_t cb,
		void *data);
/* Report a negative errno from a request; returns EXIT_FAIL. */
int incctl_fail(struct incctl *c, int err);
/*
 * kcodecs.c. Best effort: load the kernel's codec list into c->kcodecs
 * for names; failure leaves it empty (the static table is used).
 */
void incctl_load_codec_names(struct incctl *c);
/*
 * The same before a command has connected: quietly connect if incnn
 * answers (the command's own incctl_connect() reports failures).
 */
void incctl_load_codecs_quiet(struct incctl *c);
/* Name of a codec id: kernel list, static table, or NULL. */
const char *incctl_codec_name(const struct incctl *c, unsigned int id);

/* Help text (incctl.c). */
void incctl_usage(FILE *f);

/* Commands: argv[0] is the first argument after the command word. */
int cmd_show(struct incctl *c, int argc, char **argv);
int cmd_set(struct incctl *c, int argc, char **argv);
int cmd_rule(struct incctl *c, int argc, char **argv);
int cmd_stats(struct incctl *c, int argc, char **argv);
int cmd_flows(struct incctl *c, int argc, char **argv);
int cmd_codecs(struct incctl *c, int argc, char **argv);

/* config.c: INCNN_CMD_GET_CONFIG (incnn/nl_config.h), shared by
 * "show" and "rule list". */
/* Connect, fetch the configuration (rules sorted by DSCP) into a new
 * struct incnn_nl_config (free() it) and load the kernel's codec names. */
int config_load(struct incctl *c, struct incnn_nl_config **cfgp);

/* config.c: a rule as text ("dscp 10 (tos 0x28) codec ebq:2^-10") or JSON. */
void rule_print_text(const struct incctl *c, FILE *f,
		     const struct incnn_nl_rule *r);
void rule_print_json(const struct incctl *c, struct json *j,
		     const struct incnn_nl_rule *r);

/* kcodecs.c: INCNN_CMD_GET_CODECS into @kl; 0 or negative errno. */
int codecs_fetch(struct incctl *c, struct kcodec_list *kl);

#endif /* INCCTL_H */
