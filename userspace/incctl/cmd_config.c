// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incctl show / incctl set: the per-namespace configuration
 * (INCNN_CMD_GET_CONFIG, INCNN_CMD_SET_CONFIG).
 */
#include "incctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HAS(cfg, a)	((cfg)->have & (1U << (a)))

static void show_json(const struct incctl *c, const struct incnn_nl_config *cfg)
{
	struct json j;

	json_init(&j, stdout, c->pretty);
	json_obj_open(&j, NULL);
	if (HAS(cfg, INCNN_A_TX_ENABLED))
		json_bool(&j, "tx_enabled", cfg->tx_enabled);
	if (HAS(cfg, INCNN_A_RX_ENABLED))
		json_bool(&j, "rx_enabled", cfg->rx_enabled);
	if (HAS(cfg, INCNN_A_WIRE_DSCP)) {
		json_u64(&j, "wire_dscp", cfg->wire_dscp);
		json_u64(&j, "wire_tos", (cfg->wire_dscp << 2) & 0xff);
	}
	if (HAS(cfg, INCNN_A_FLOW_MAX))
		json_u64(&j, "flow_max", cfg->flow_max);
	if (HAS(cfg, INCNN_A_FLOW_IDLE_TIMEOUT))
		json_u64(&j, "flow_idle_timeout", cfg->idle_timeout);
	if (HAS(cfg, INCNN_A_FLOW_CLOSE_TIMEOUT))
		json_u64(&j, "flow_close_timeout", cfg->close_timeout);
	if (HAS(cfg, INCNN_A_FLOW_COUNT))
		json_u64(&j, "flow_count", cfg->flow_count);
	if (HAS(cfg, INCNN_A_SUPERFRAMES))
		json_bool(&j, "superframes", cfg->superframes);
	json_arr_open(&j, "rules");
	for (size_t i = 0; i < cfg->nrules; i++)
		rule_print_json(c, &j, &cfg->rules[i]);
	json_arr_close(&j);
	json_obj_close(&j);
	json_end(&j);
}

static const char *onoff(const struct incnn_nl_config *cfg, int attr, bool v)
{
	if (!HAS(cfg, attr))
		return "?";
	return v ? "on" : "off";
}

static void show_text(const struct incctl *c, const struct incnn_nl_config *cfg)
{
	printf("%-14s %s\n", "tx", onoff(cfg, INCNN_A_TX_ENABLED,
					 cfg->tx_enabled));
	printf("%-14s %s\n", "rx", onoff(cfg, INCNN_A_RX_ENABLED,
					 cfg->rx_enabled));
	if (HAS(cfg, INCNN_A_WIRE_DSCP))
		printf("%-14s dscp %u (tos 0x%02x)\n", "wire",
		       cfg->wire_dscp, (cfg->wire_dscp << 2) & 0xff);
	if (HAS(cfg, INCNN_A_FLOW_COUNT) && HAS(cfg, INCNN_A_FLOW_MAX))
		printf("%-14s %u of max %u\n", "flows", cfg->flow_count,
		       cfg->flow_max);
	else if (HAS(cfg, INCNN_A_FLOW_COUNT))
		printf("%-14s %u\n", "flows", cfg->flow_count);
	else if (HAS(cfg, INCNN_A_FLOW_MAX))
		printf("%-14s max %u\n", "flows", cfg->flow_max);
	if (HAS(cfg, INCNN_A_FLOW_IDLE_TIMEOUT))
		printf("%-14s %u s\n", "idle-timeout", cfg->idle_timeout);
	if (HAS(cfg, INCNN_A_FLOW_CLOSE_TIMEOUT))
		printf("%-14s %u s\n", "close-timeout", cfg->close_timeout);
	if (HAS(cfg, INCNN_A_SUPERFRAMES))
		printf("%-14s %s\n", "superframes",
		       cfg->superframes ? "on" : "off");
	if (!cfg->nrules) {
		printf("%-14s none\n", "rules");
		return;
	}
	printf("%-14s %zu\n", "rules", cfg->nrules);
	for (size_t i = 0; i < cfg->nrules; i++) {
		fputs("  ", stdout);
		rule_print_text(c, stdout, &cfg->rules[i]);
	}
}

int cmd_show(struct incctl *c, int argc, char **argv)
{
	struct incnn_nl_config *cfg;
	int rc;

	rc = arg_end("show", argc, argv, 0);
	if (!rc)
		rc = config_load(c, &cfg);
	if (rc)
		return rc;
	if (c->json)
		show_json(c, cfg);
	else
		show_text(c, cfg);
	free(cfg);
	return 0;
}

/* incctl set KEY VALUE [KEY VALUE]... */
struct set_req {
	uint32_t have;		/* bit n: INCNN_A_* n to send */
	bool tx, rx, superframes;
	uint8_t wire_dscp;
	uint32_t flow_max, idle_timeout, close_timeout;
};

static int set_once(struct set_req *s, int attr, const char *kw)
{
	if (s->have & (1U << attr))
		return cli_error("set: %s given twice", kw);
	s->have |= 1U << attr;
	return 0;
}

/* <linux/incnn.h> states these two limits only in comments */
#define IDLE_TIMEOUT_MAX	86400
#define CLOSE_TIMEOUT_MAX	3600

#define SET_KEYS \
	"tx, rx, wire-dscp, wire-tos, flow-max, idle-timeout, close-timeout, " \
	"superframes"

static int set_parse(int argc, char **argv, struct set_req *s)
{
	const char *kw, *val;
	int rc;

	if (argc == 0)
		return cli_error("set: nothing to set (%s)", SET_KEYS);
	for (int i = 0; i < argc; i++) {
		kw = argv[i];
		if (strcmp(kw, "tx") && strcmp(kw, "rx") &&
		    strcmp(kw, "wire-dscp") && strcmp(kw, "wire-tos") &&
		    strcmp(kw, "flow-max") && strcmp(kw, "idle-timeout") &&
		    strcmp(kw, "close-timeout") && strcmp(kw, "superframes"))
			return cli_error("set: unknown key \"%s\" (%s)", kw,
					 SET_KEYS);
		rc = arg_value(argc, argv, &i, &val);
		if (rc)
			return rc;
		if (!strcmp(kw, "tx")) {
			rc = set_once(s, INCNN_A_TX_ENABLED, "tx");
			if (!rc)
				rc = arg_onoff(kw, val, &s->tx);
		} else if (!strcmp(kw, "superframes")) {
			rc = set_once(s, INCNN_A_SUPERFRAMES, kw);
			if (!rc)
				rc = arg_onoff(kw, val, &s->superframes);
		} else if (!strcmp(kw, "rx")) {
			rc = set_once(s, INCNN_A_RX_ENABLED, "rx");
			if (!rc)
				rc = arg_onoff(kw, val, &s->rx);
		} else if (!strcmp(kw, "wire-dscp") ||
			   !strcmp(kw, "wire-tos")) {
			rc = set_once(s, INCNN_A_WIRE_DSCP,
				      "wire-dscp/wire-tos");
			if (!rc)
				rc = !strcmp(kw, "wire-dscp") ?
				     arg_dscp(kw, val, &s->wire_dscp) :
				     arg_tos(kw, val, &s->wire_dscp);
		} else if (!strcmp(kw, "flow-max")) {
			rc = set_once(s, INCNN_A_FLOW_MAX, kw);
			if (!rc)
				rc = arg_u32(kw, val, 1, INCNN_FLOW_MAX_LIMIT,
					     &s->flow_max);
		} else if (!strcmp(kw, "idle-timeout")) {
			rc = set_once(s, INCNN_A_FLOW_IDLE_TIMEOUT, kw);
			if (!rc)
				rc = arg_u32(kw, val, 1, IDLE_TIMEOUT_MAX,
					     &s->idle_timeout);
		} else {
			rc = set_once(s, INCNN_A_FLOW_CLOSE_TIMEOUT, kw);
			if (!rc)
				rc = arg_u32(kw, val, 1, CLOSE_TIMEOUT_MAX,
					     &s->close_timeout);
		}
		if (rc)
			return rc;
	}
	return 0;
}

int cmd_set(struct incctl *c, int argc, char **argv)
{
	struct set_req s = { 0 };
	struct nlmsghdr *nlh;
	int rc;

	rc = set_parse(argc, argv, &s);
	if (rc)
		return rc;
	rc = incctl_connect(c);
	if (rc)
		return rc;
	nlh = incctl_msg(c, INCNN_CMD_SET_CONFIG, NLM_F_ACK);
	if (s.have & (1U << INCNN_A_TX_ENABLED))
		mnl_attr_put_u8(nlh, INCNN_A_TX_ENABLED, s.tx);
	if (s.have & (1U << INCNN_A_RX_ENABLED))
		mnl_attr_put_u8(nlh, INCNN_A_RX_ENABLED, s.rx);
	if (s.have & (1U << INCNN_A_WIRE_DSCP))
		mnl_attr_put_u8(nlh, INCNN_A_WIRE_DSCP, s.wire_dscp);
	if (s.have & (1U << INCNN_A_FLOW_MAX))
		mnl_attr_put_u32(nlh, INCNN_A_FLOW_MAX, s.flow_max);
	if (s.have & (1U << INCNN_A_FLOW_IDLE_TIMEOUT))
		mnl_attr_put_u32(nlh, INCNN_A_FLOW_IDLE_TIMEOUT,
				 s.idle_timeout);
	if (s.have & (1U << INCNN_A_FLOW_CLOSE_TIMEOUT))
		mnl_attr_put_u32(nlh, INCNN_A_FLOW_CLOSE_TIMEOUT,
				 s.close_timeout);
	if (s.have & (1U << INCNN_A_SUPERFRAMES))
		mnl_attr_put_u8(nlh, INCNN_A_SUPERFRAMES, s.superframes);
	return incctl_talk(c, nlh, NULL, NULL);
}
