// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incctl rule add|del|list: DSCP -> codec rules (INCNN_CMD_ADD_RULE,
 * INCNN_CMD_DEL_RULE; the list comes from INCNN_CMD_GET_CONFIG).
 */
#include "incctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	const char *codec, *bound, *bits;
};

/* @kw's value into *@val, once */
static int once_arg(const char *what, const char *kw, int argc, char **argv,
		    int *i, const char **val)
{
	if (*val)
		return cli_error("%s: %s given twice", what, kw);
	return arg_value(argc, argv, i, val);
}

/*
 * rule add {dscp N | tos T} codec NAME[:SETTING], or the long form
 * codec NAME [bound 2^-K | bits B]; any order
 */
static int add_parse(int argc, char **argv, struct rule_add *ra)
{
	const char *what = "rule add";
	bool has_key = false;
	int rc;

	for (int i = 0; i < argc; i++) {
		const char *kw = argv[i];

		if (!strcmp(kw, "dscp") || !strcmp(kw, "tos"))
			rc = key_arg(what, argc, argv, &i, &has_key, &ra->dscp);
		else if (!strcmp(kw, "codec"))
			rc = once_arg(what, kw, argc, argv, &i, &ra->codec);
		else if (!strcmp(kw, "bound"))
			rc = once_arg(what, kw, argc, argv, &i, &ra->bound);
		else if (!strcmp(kw, "bits"))
			rc = once_arg(what, kw, argc, argv, &i, &ra->bits);
		else
			return cli_error("%s: unexpected argument \"%s\" (dscp, tos, codec, bound, bits)",
					 what, kw);
		if (rc)
			return rc;
	}
	if (!has_key)
		return cli_error("%s: dscp N or tos 0xNN is required", what);
	return 0;
}

/* The codec's setting @kw (kind @kind) given as @val, into *@param. */
static int add_setting(const struct incctl *c, const struct codec_desc *d,
		       unsigned int kind, const char *val, unsigned int *param)
{
	const char *kw = incnn_codec_param_key(kind);
	char list[128], range[48];
	size_t n;
	int err;

	if (d->param.kind != kind) {
		codec_kind_list(&c->kcodecs, kind, list, sizeof(list), &n);
		return cli_error("rule add: codec %s takes no %s (only %s %s)",
				 d->name, kw, list, n == 1 ? "does" : "do");
	}
	err = incnn_codec_param_parse(&d->param, val, param);
	if (!err)
		return 0;
	if (kind == INCNN_PARAM_BITS)
		return cli_error("invalid bits \"%s\" (expected %s)", val,
				 incnn_codec_param_range(&d->param, range,
							 sizeof(range)));
	if (err == -ERANGE)
		return cli_error("bound %s out of range (2^-%u..2^-%u)", val,
				 d->param.min, d->param.max);
	return cli_error("invalid bound \"%s\" (expected 2^-K or K, K = %u..%u)",
			 val, d->param.min, d->param.max);
}

/*
 * The setting of "codec NAME:SETTING" (the codec's own spelling): a bound
 * or bits, as the long form's keyword would give it.
 */
static int add_spec_setting(const struct incctl *c, const struct rule_add *ra,
			    const struct codec_desc *d, const char *setting,
			    unsigned int *param)
{
	if (ra->bound || ra->bits)
		return cli_error("rule add: codec %s and %s: give the setting once",
				 ra->codec, ra->bound ? "bound" : "bits");
	if (d->param.kind != INCNN_PARAM_BOUND &&
	    d->param.kind != INCNN_PARAM_BITS)
		return cli_error("rule add: codec %s takes no setting (\"%s\")",
				 d->name, ra->codec);
	return add_setting(c, d, d->param.kind, setting, param);
}

/*
 * The codec and its setting, "codec NAME[:SETTING]" or the long form
 * "codec NAME [bound 2^-K | bits B]": names, kinds and ranges from the
 * kernel's codec list when it answers, else from the built-in codecs.
 */
static int add_resolve(struct incctl *c, const struct rule_add *ra,
		       struct codec_desc *d, bool *has_param,
		       unsigned int *param)
{
	char list[128], name[KCODEC_NAME_LEN];
	const char *setting = NULL;
	bool named;
	int rc = 0;

	incctl_load_codecs_quiet(c);
	codec_name_list(&c->kcodecs, list, sizeof(list));
	if (!ra->codec)
		return cli_error("rule add: codec is required (%s)", list);
	named = !incnn_codec_spec_split(ra->codec, name, sizeof(name),
					&setting);
	if (!named || codec_by_name(&c->kcodecs, name, d))
		return cli_error("unknown codec \"%s\" (%s)",
				 named ? name : ra->codec, list);
	*has_param = setting || ra->bound || ra->bits;
	if (setting)
		return add_spec_setting(c, ra, d, setting, param);
	if (ra->bound)
		rc = add_setting(c, d, INCNN_PARAM_BOUND, ra->bound, param);
	if (!rc && ra->bits)
		rc = add_setting(c, d, INCNN_PARAM_BITS, ra->bits, param);
	return rc;
}

static int rule_add(struct incctl *c, int argc, char **argv)
{
	struct rule_add ra = { 0 };
	struct codec_desc d;
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	unsigned int param = 0;
	bool has_param = false;
	int rc;

	rc = add_parse(argc, argv, &ra);
	if (!rc)
		rc = add_resolve(c, &ra, &d, &has_param, &param);
	if (!rc)
		rc = incctl_connect(c);
	if (rc)
		return rc;
	nlh = incctl_msg(c, INCNN_CMD_ADD_RULE, NLM_F_ACK);
	nest = mnl_attr_nest_start(nlh, INCNN_A_RULE);
	mnl_attr_put_u8(nlh, INCNN_RULE_A_DSCP, ra.dscp);
	mnl_attr_put_u8(nlh, INCNN_RULE_A_CODEC, d.id);
	/* without one, the kernel applies the codec's default */
	if (has_param)
		mnl_attr_put_u8(nlh, INCNN_RULE_A_PARAM, (uint8_t)param);
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
	struct incnn_nl_config *cfg;
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
