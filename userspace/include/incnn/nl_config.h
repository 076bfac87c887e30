/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The one parser of the module's INCNN_CMD_GET_CONFIG reply
 * (userspace/lib/nl_config.c), used by incctl (show, rule list) and by
 * the collective (which codec the wire applies to its ToS).
 */
#ifndef _INCNN_NL_CONFIG_H
#define _INCNN_NL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/incnn.h>

#include "genl.h"

struct incnn_nl_rule {
	uint8_t dscp;
	uint8_t codec;
	uint8_t param;
	bool has_codec, has_param;
};

struct incnn_nl_config {
	uint32_t have;		/* bit n: INCNN_A_* n was present */
	bool tx_enabled, rx_enabled;
	uint8_t wire_dscp;
	uint32_t flow_max, idle_timeout, close_timeout, flow_count;
	bool superframes;	/* frame version 2 offered and sent */
	size_t nrules;
	/* sorted by DSCP; at most one per DSCP */
	struct incnn_nl_rule rules[INCNN_MAX_RULES];
};

/*
 * genl_talk() callback: one GET_CONFIG reply message into the struct
 * incnn_nl_config @data (which starts zeroed). Unknown attributes are
 * skipped, malformed ones make it -EBADMSG; a rule without its DSCP is
 * ignored.
 */
int incnn_nl_config_cb(const struct nlmsghdr *nlh, void *data);

/*
 * Ask the module (family g->family) for its configuration: 0, the
 * kernel's -errno (g->msg: its extack message) or -EBADMSG.
 */
int incnn_nl_config_get(struct genl *g, struct incnn_nl_config *cfg);

/* The rule for @dscp, or NULL. */
const struct incnn_nl_rule *incnn_nl_config_rule(
	const struct incnn_nl_config *cfg, unsigned int dscp);

#endif /* _INCNN_NL_CONFIG_H */
