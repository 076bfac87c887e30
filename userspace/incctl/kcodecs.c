// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The codec list the kernel reports (INCNN_CMD_GET_CODECS), fetched into a
 * struct kcodec_list: what `incctl codecs` prints and what every command
 * names codecs by (incctl_load_codec_names()).
 */
#include "incctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int codec_entry(const struct nlattr *nest, struct kcodec_list *kl)
{
	static const enum mnl_attr_data_type pol[INCNN_CODEC_A_MAX + 1] = {
		[INCNN_CODEC_A_ID] = MNL_TYPE_U8,
		[INCNN_CODEC_A_NAME] = MNL_TYPE_NUL_STRING,
		[INCNN_CODEC_A_LOSSY] = MNL_TYPE_U8,
		[INCNN_CODEC_A_PARAM_MIN] = MNL_TYPE_U8,
		[INCNN_CODEC_A_PARAM_MAX] = MNL_TYPE_U8,
		[INCNN_CODEC_A_PARAM_DEFAULT] = MNL_TYPE_U8,
		[INCNN_CODEC_A_PARAM_KIND] = MNL_TYPE_U8,
		[INCNN_CODEC_A_ENC_MBPS_NONE] = MNL_TYPE_U32,
		[INCNN_CODEC_A_DEC_MBPS_NONE] = MNL_TYPE_U32,
		[INCNN_CODEC_A_ENC_MBPS_AVX2] = MNL_TYPE_U32,
		[INCNN_CODEC_A_DEC_MBPS_AVX2] = MNL_TYPE_U32,
	};
	static const uint16_t mbps_attr[2][2] = {
		{ INCNN_CODEC_A_ENC_MBPS_NONE, INCNN_CODEC_A_DEC_MBPS_NONE },
		{ INCNN_CODEC_A_ENC_MBPS_AVX2, INCNN_CODEC_A_DEC_MBPS_AVX2 },
	};
	const struct nlattr *tb[INCNN_CODEC_A_MAX + 1];
	struct kcodec *kc;
	const char *name;
	size_t i;

	if (genl_parse_nested(nest, tb, INCNN_CODEC_A_MAX, pol))
		return -EBADMSG;
	if (!tb[INCNN_CODEC_A_ID])
		return 0;	/* nothing to key it on */
	if (kl->n >= KCODEC_MAX)
		return 0;
	kc = &kl->c[kl->n++];
	memset(kc, 0, sizeof(*kc));
	for (i = 1; i <= INCNN_CODEC_A_MAX; i++)
		if (tb[i])
			kc->have |= 1U << i;
	kc->id = mnl_attr_get_u8(tb[INCNN_CODEC_A_ID]);
	if (tb[INCNN_CODEC_A_NAME]) {
		/* printable, no spaces: it is used as a word on output */
		name = mnl_attr_get_str(tb[INCNN_CODEC_A_NAME]);
		for (i = 0; i + 1 < sizeof(kc->name) && name[i]; i++) {
			unsigned char ch = (unsigned char)name[i];

			kc->name[i] = (ch <= 0x20 || ch >= 0x7f) ? '?'
								: (char)ch;
		}
		kc->name[i] = '\0';
	}
	if (tb[INCNN_CODEC_A_LOSSY])
		kc->lossy = mnl_attr_get_u8(tb[INCNN_CODEC_A_LOSSY]) != 0;
	if (tb[INCNN_CODEC_A_PARAM_MIN])
		kc->param_min = mnl_attr_get_u8(tb[INCNN_CODEC_A_PARAM_MIN]);
	if (tb[INCNN_CODEC_A_PARAM_MAX])
		kc->param_max = mnl_attr_get_u8(tb[INCNN_CODEC_A_PARAM_MAX]);
	if (tb[INCNN_CODEC_A_PARAM_DEFAULT])
		kc->param_default =
			mnl_attr_get_u8(tb[INCNN_CODEC_A_PARAM_DEFAULT]);
	if (tb[INCNN_CODEC_A_PARAM_KIND])
		kc->param_kind = mnl_attr_get_u8(tb[INCNN_CODEC_A_PARAM_KIND]);
	for (i = 0; i < 4; i++)
		if (tb[mbps_attr[i / 2][i % 2]])
			kc->mbps[i / 2][i % 2] =
				mnl_attr_get_u32(tb[mbps_attr[i / 2][i % 2]]);
	return 0;
}

/* the SIMD path's name: a short printable word, or "?" */
static void simd_name(const struct nlattr *a, struct kcodec_list *kl)
{
	const char *s = mnl_attr_get_str(a);
	size_t i;

	for (i = 0; i + 1 < sizeof(kl->simd) && s[i]; i++)
		kl->simd[i] = (s[i] >= 'a' && s[i] <= 'z') ||
			      (s[i] >= '0' && s[i] <= '9') ? s[i] : '?';
	kl->simd[i] = '\0';
	if (!i)
		strcpy(kl->simd, "?");
}

static int codecs_cb(const struct nlmsghdr *nlh, void *data)
{
	static const enum mnl_attr_data_type pol[INCNN_A_MAX + 1] = {
		[INCNN_A_CODECS] = MNL_TYPE_NESTED,
		[INCNN_A_SIMD] = MNL_TYPE_NUL_STRING,
	};
	const struct nlattr *tb[INCNN_A_MAX + 1];
	const struct nlattr *attr;
	int err;

	if (genl_parse(nlh, tb, INCNN_A_MAX, pol))
		return -EBADMSG;
	if (tb[INCNN_A_SIMD])
		simd_name(tb[INCNN_A_SIMD], data);
	if (!tb[INCNN_A_CODECS])
		return 0;
	mnl_attr_for_each_nested(attr, tb[INCNN_A_CODECS]) {
		if (mnl_attr_get_type(attr) != INCNN_A_CODEC)
			continue;
		if (mnl_attr_validate(attr, MNL_TYPE_NESTED) < 0)
			return -EBADMSG;
		err = codec_entry(attr, data);
		if (err)
			return err;
	}
	return 0;
}

static int cmp_kcodec(const void *a, const void *b)
{
	const struct kcodec *x = a, *y = b;

	return (int)x->id - (int)y->id;
}

int codecs_fetch(struct incctl *c, struct kcodec_list *kl)
{
	struct nlmsghdr *nlh;
	int err;

	kl->n = 0;
	kl->simd[0] = '\0';
	nlh = incctl_msg(c, INCNN_CMD_GET_CODECS, NLM_F_ACK);
	err = genl_talk(&c->nl, nlh, codecs_cb, kl);
	if (err)
		return err;
	qsort(kl->c, kl->n, sizeof(kl->c[0]), cmp_kcodec);
	return 0;
}

void incctl_load_codec_names(struct incctl *c)
{
	if (c->kcodecs.loaded)
		return;
	if (codecs_fetch(c, &c->kcodecs))
		c->kcodecs.n = 0;
	c->kcodecs.loaded = true;
}

void incctl_load_codecs_quiet(struct incctl *c)
{
	if (c->kcodecs.loaded || incctl_connect_quiet(c))
		return;
	incctl_load_codec_names(c);
}
