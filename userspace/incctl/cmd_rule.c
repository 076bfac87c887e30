// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incctl rule add|del|list: DSCP -> codec rules (INCNN_CMD_ADD_RULE,
 * INCNN_CMD_DEL_RULE; the list comes from INCNN_CMD_GET_CONFIG).
 */
#include "incctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void rule_print_text(const struct incctl *c, FILE *f, const struct rule *r)
{
	const char *name;
	char param[32];

	fprintf(f, "dscp %u (tos 0x%02x)", r->dscp, (r->dscp << 2) & 0xff);
	if (r->has_codec) {
		name = incctl_codec_name(c, r->codec);
		if (name)
			fprintf(f, " codec %s", name);
		else
			fprintf(f, " codec %u", r->codec);
		if (r->has_param) {
			codec_param_text(r->codec, r->param, param,
					 sizeof(param));
			if (param[0])
				fprintf(f, " %s", param);
		}
	}
	fputc('\n', f);
}

void rule_print_json(const struct incctl *c, struct json *j,
		     const struct rule *r)
{
	const char *name;

	json_obj_open(j, NULL);
	json_u64(j, "dscp", r->dscp);
	json_u64(j, "tos", (r->dscp << 2) & 0xff);
	if (r->has_codec) {
		name = incctl_codec_name(c, r->codec);
		if (name)
			json_str(j, "codec", name);
		json_u64(j, "codec_id", r->codec);
	}
	if (r->has_param)
		json_u64(j, "param", r->param);
	json_obj_close(j);
}

/* The rule's key: "dscp N" or "tos 0xNN", exactly once. */
static int key_arg(const char *what, int argc, char **argv, int *i,
		   bool *have, uint8_t *dscp)
{
	const char *kw = argv[*i], *val;
	int rc;

	if (*have)
		return cli_error("%s: dscp/tos given twice", what);
	rc = arg_value(argc, argv, i, &val);
	if (rc)
		return rc;
	*have = true;
	return !strcmp(kw, "dscp") ? arg_dscp(kw, val, dscp)
				   : arg_tos(kw, val, dscp);
}

struct rule_add {
	uint8_t dscp;
	const struct codec_desc *codec;
	bool has_bound, has_bits;
	uint8_t bound, bits;
};

/* rule add {dscp N | tos T} codec NAME [bound 2^-K | bits B], any order */
static int add_parse(int argc, char **argv, struct rule_add *ra)
{
	const char *what = "rule add", *val;
	bool has_key = false;
	int rc;

	for (int i = 0; i < argc; i++) {
		const char *kw = argv[i];

		if (!strcmp(kw, "dscp") || !strcmp(kw, "tos")) {
			rc = key_arg(what, argc, argv, &i, &has_key, &ra->dscp);
		} else if (!strcmp(kw, "codec")) {
			if (ra->codec)
				return cli_error("%s: codec given twice", what);
			rc = arg_value(argc, argv, &i, &val);
			if (rc)
				return rc;
			ra->codec = codec_by_name(val);
			if (!ra->codec)
				return cli_error("unknown codec \"%s\" (%s)",
						 val, codec_name_list());
		} else if (!strcmp(kw, "bound")) {
			if (ra->has_bound)
				return cli_error("%s: bound given twice", what);
			rc = arg_value(argc, argv, &i, &val);
			if (!rc)
				rc = arg_bound(val, &ra->bound);
			ra->has_bound = true;
		} else if (!strcmp(kw, "bits")) {
			if (ra->has_bits)
				return cli_error("%s: bits given twice", what);
			rc = arg_value(argc, argv, &i, &val);
			if (!rc)
				rc = arg_bits(val, &ra->bits);
			ra->has_bits = true;
		} else {
			return cli_error("%s: unexpected argument \"%s\" (dscp, tos, codec, bound, bits)",
					 what, kw);
		}
		if (rc)
			return rc;
	}
	if (!has_key)
		return cli_error("%s: dscp N or tos 0xNN is required", what);
	if (!ra->codec)
		return cli_error("%s: codec is required (%s)", what,
				 codec_name_list());
	if (ra->has_bound && ra->codec->kind != PARAM_BOUND)
		return cli_error("%s: codec %s takes no bound (only inceptionn and ebq do)",
				 what, ra->codec->name);
	if (ra->has_bits && ra->codec->kind != PARAM_BITS)
		return cli_error("%s: codec %s takes no bits (only trunc does)",
				 what, ra->codec->name);
	return 0;
}

static int rule_add(struct incctl *c, int argc, char **argv)
{
	struct rule_add ra = { 0 };
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	int rc;

	rc = add_parse(argc, argv, &ra);
	if (rc)
		return rc;
	rc = incctl_connect(c);
	if (rc)
		return rc;
	nlh = incctl_msg(c, INCNN_CMD_ADD_RULE, NLM_F_ACK);
	nest = mnl_attr_nest_start(nlh, INCNN_A_RULE);
	mnl_attr_put_u8(nlh, INCNN_RULE_A_DSCP, ra.dscp);
	mnl_attr_put_u8(nlh, INCNN_RULE_A_CODEC, ra.codec->id);
	/* without one, the kernel applies the codec's default */
	if (ra.has_bound)
		mnl_attr_put_u8(nlh, INCNN_RULE_A_PARAM, ra.bound);
	else if (ra.has_bits)
		mnl_attr_put_u8(nlh, INCNN_RULE_A_PARAM, ra.bits);
	mnl_attr_nest_end(nlh, nest);
	return incctl_talk(c, nlh, NULL, NULL);
}

/* rule del {dscp N | tos T} */
static int rule_del(struct incctl *c, int argc, char **argv)
{
	const char *what = "rule del";
	bool has_key = false;
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	uint8_t dscp = 0;
	int rc;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "dscp") && strcmp(argv[i], "tos"))
			return cli_error("%s: unexpected argument \"%s\" (dscp N or tos 0xNN)",
					 what, argv[i]);
		rc = key_arg(what, argc, argv, &i, &has_key, &dscp);
		if (rc)
			return rc;
	}
	if (!has_key)
		return cli_error("%s: dscp N or tos 0xNN is required", what);
	rc = incctl_connect(c);
	if (rc)
		return rc;
	nlh = incctl_msg(c, INCNN_CMD_DEL_RULE, NLM_F_ACK);
	nest = mnl_attr_nest_start(nlh, INCNN_A_RULE);
	mnl_attr_put_u8(nlh, INCNN_RULE_A_DSCP, dscp);
	mnl_attr_nest_end(nlh, nest);
	return incctl_talk(c, nlh, NULL, NULL);
}

static int rule_list(struct incctl *c, int argc, char **argv)
{
	struct config *cfg;
	struct json j;
	int rc;

	rc = arg_end("rule list", argc, argv, 0);
	if (!rc)
		rc = config_load(c, &cfg);
	if (rc)
		return rc;
	if (c->json) {
		json_init(&j, stdout, c->pretty);
		json_arr_open(&j, NULL);
		for (size_t i = 0; i < cfg->nrules; i++)
			rule_print_json(c, &j, &cfg->rules[i]);
		json_arr_close(&j);
		json_end(&j);
	} else {
		for (size_t i = 0; i < cfg->nrules; i++)
			rule_print_text(c, stdout, &cfg->rules[i]);
	}
	free(cfg);
	return 0;
}

int cmd_rule(struct incctl *c, int argc, char **argv)
{
	if (argc == 0)
		return cli_error("rule: missing subcommand (add, del, list)");
	if (!strcmp(argv[0], "add"))
		return rule_add(c, argc - 1, argv + 1);
	if (!strcmp(argv[0], "del") || !strcmp(argv[0], "delete"))
		return rule_del(c, argc - 1, argv + 1);
	if (!strcmp(argv[0], "list") || !strcmp(argv[0], "show"))
		return rule_list(c, argc - 1, argv + 1);
	return cli_error("rule: unknown subcommand \"%s\" (add, del, list)",
			 argv[0]);
}
