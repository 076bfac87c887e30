// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incctl's static codec table, and lookups that prefer the kernel's list.
 */
#include "codec_table.h"

#include <stdio.h>
#include <string.h>

#include <linux/incnn.h>

static const struct codec_desc codecs[] = {
	{ INCNN_CODEC_NONE,	  "none",	PARAM_NONE },
	{ INCNN_CODEC_INCEPTIONN, "inceptionn",	PARAM_BOUND },
	{ INCNN_CODEC_EBQ,	  "ebq",	PARAM_BOUND },
	{ INCNN_CODEC_TRUNC,	  "trunc",	PARAM_BITS },
	{ INCNN_CODEC_LZ4,	  "lz4",	PARAM_NONE },
};

#define N_CODECS (sizeof(codecs) / sizeof(codecs[0]))

const struct codec_desc *codec_by_name(const char *name)
{
	/* "none" is not a codec a rule can name */
	for (size_t i = 1; i < N_CODECS; i++)
		if (!strcmp(codecs[i].name, name))
			return &codecs[i];
	return NULL;
}

const struct codec_desc *codec_by_id(unsigned int id)
{
	for (size_t i = 0; i < N_CODECS; i++)
		if (codecs[i].id == id)
			return &codecs[i];
	return NULL;
}

const char *codec_name_list(void)
{
	return "inceptionn, ebq, trunc, lz4";
}

const struct kcodec *kcodec_by_id(const struct kcodec_list *kl,
				  unsigned int id)
{
	if (!kl)
		return NULL;
	for (size_t i = 0; i < kl->n; i++)
		if (kl->c[i].id == id && kl->c[i].name[0])
			return &kl->c[i];
	return NULL;
}

const char *codec_name(const struct kcodec_list *kl, unsigned int id)
{
	const struct kcodec *kc = kcodec_by_id(kl, id);
	const struct codec_desc *d;

	if (kc)
		return kc->name;
	d = codec_by_id(id);
	return d ? d->name : NULL;
}

const char *codec_param_text(unsigned int id, unsigned int param,
			     char *buf, size_t len)
{
	const struct codec_desc *d = codec_by_id(id);
	enum codec_param_kind kind = d ? d->kind : PARAM_OTHER;

	switch (kind) {
	case PARAM_BOUND:
		snprintf(buf, len, "bound 2^-%u", param);
		break;
	case PARAM_BITS:
		snprintf(buf, len, "bits %u", param);
		break;
	case PARAM_NONE:
		if (!param) {
			snprintf(buf, len, "%s", "");
			break;
		}
		/* fall through */
	case PARAM_OTHER:
	default:
		snprintf(buf, len, "param %u", param);
		break;
	}
	return buf;
}
