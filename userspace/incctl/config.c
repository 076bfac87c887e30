// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The namespace's configuration as the kernel reports it
 * (INCNN_CMD_GET_CONFIG) and its rules printed, for `incctl show` and
 * `incctl rule list`.
 */
#include "incctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int config_fetch(struct incctl *c, struct incnn_nl_config *cfg)
{
	struct nlmsghdr *nlh;

	memset(cfg, 0, sizeof(*cfg));
	nlh = incctl_msg(c, INCNN_CMD_GET_CONFIG, NLM_F_ACK);
	return incctl_talk(c, nlh, incnn_nl_config_cb, cfg);
}

int config_load(struct incctl *c, struct incnn_nl_config **cfgp)
{
	struct incnn_nl_config *cfg;
	int rc;

	rc = incctl_connect(c);
	if (rc)
		return rc;
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return incctl_fail(c, -ENOMEM);
	rc = config_fetch(c, cfg);
	if (rc) {
		free(cfg);
		return rc;
	}
	incctl_load_codec_names(c);
	*cfgp = cfg;
	return 0;
}

void rule_print_text(const struct incctl *c, FILE *f,
		     const struct incnn_nl_rule *r)
{
	char label[64];

	fprintf(f, "dscp %u (tos 0x%02x)", r->dscp, (r->dscp << 2) & 0xff);
	if (r->has_codec)
		fprintf(f, " codec %s",
			codec_label(&c->kcodecs, r->codec, r->has_param,
				    r->param, label, sizeof(label)));
	fputc('\n', f);
}

void rule_print_json(const struct incctl *c, struct json *j,
		     const struct incnn_nl_rule *r)
{
	const char *name;
	char label[64];

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
	if (r->has_codec)
		json_str(j, "label",
			 codec_label(&c->kcodecs, r->codec, r->has_param,
				     r->param, label, sizeof(label)));
	json_obj_close(j);
}
