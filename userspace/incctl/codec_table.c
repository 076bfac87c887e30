// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incctl's codecs: the kernel's list, completed by the built-in codec
 * library (see codec_table.h).
 */
#include "codec_table.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/incnn.h>

static bool use_kernel(const struct kcodec_list *kl)
{
	return kl && kl->loaded && kl->n;
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

static void from_builtin(const struct incnn_codec *b, struct codec_desc *d)
{
	d->id = b->id;
	snprintf(d->name, sizeof(d->name), "%s", b->name);
	d->param = b->param;
}

/* The kernel's entry; what it does not say, from the built-in codec. */
static void from_kernel(const struct kcodec *kc, struct codec_desc *d)
{
	const struct incnn_codec *b = incnn_codec_get(kc->id);

	if (b)
		from_builtin(b, d);
	else
		d->param = (struct incnn_codec_param){
			.kind = PARAM_KIND_UNKNOWN, .min = 0, .max = 255,
		};
	d->id = kc->id;
	snprintf(d->name, sizeof(d->name), "%s", kc->name);
	if (KCODEC_HAS(kc, INCNN_CODEC_A_PARAM_KIND))
		d->param.kind = kc->param_kind;
	if (KCODEC_HAS(kc, INCNN_CODEC_A_PARAM_MIN))
		d->param.min = kc->param_min;
	if (KCODEC_HAS(kc, INCNN_CODEC_A_PARAM_MAX))
		d->param.max = kc->param_max;
	if (KCODEC_HAS(kc, INCNN_CODEC_A_PARAM_DEFAULT))
		d->param.def = kc->param_default;
}

int codec_by_name(const struct kcodec_list *kl, const char *name,
		  struct codec_desc *d)
{
	const struct incnn_codec *b;

	if (use_kernel(kl)) {
		for (size_t i = 0; i < kl->n; i++)
			if (kl->c[i].id && !strcmp(kl->c[i].name, name)) {
				from_kernel(&kl->c[i], d);
				return 0;
			}
		return -ENOENT;
	}
	b = incnn_codec_find(name);
	if (!b)
		return -ENOENT;
	from_builtin(b, d);
	return 0;
}

int codec_by_id(const struct kcodec_list *kl, unsigned int id,
		struct codec_desc *d)
{
	const struct kcodec *kc = use_kernel(kl) ? kcodec_by_id(kl, id) : NULL;
	const struct incnn_codec *b = incnn_codec_get(id);

	if (kc)
		from_kernel(kc, d);
	else if (b)
		from_builtin(b, d);
	else
		return -ENOENT;
	return 0;
}

/* The codecs a rule can name, in id order, each once. */
static size_t codec_list(const struct kcodec_list *kl,
			 struct codec_desc *out, size_t max)
{
	size_t n = 0;

	if (use_kernel(kl)) {
		for (size_t i = 0; i < kl->n && n < max; i++)
			if (kl->c[i].id && kl->c[i].name[0])
				from_kernel(&kl->c[i], &out[n++]);
		return n;
	}
	for (unsigned int id = 1; id <= INCNN_CODEC_MAX && n < max; id++)
		if (incnn_codec_get(id))
			from_builtin(incnn_codec_get(id), &out[n++]);
	return n;
}

const char *codec_name_list(const struct kcodec_list *kl, char *buf,
			    size_t len)
{
	struct codec_desc all[KCODEC_MAX];
	size_t n = codec_list(kl, all, KCODEC_MAX), off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i ? ", " : "", all[i].name);
	return buf;
}

const char *codec_kind_list(const struct kcodec_list *kl, unsigned int kind,
			    char *buf, size_t len, size_t *n)
{
	struct codec_desc all[KCODEC_MAX];
	size_t total = codec_list(kl, all, KCODEC_MAX), k = 0, off = 0;

	for (size_t i = 0; i < total; i++)
		if (all[i].param.kind == kind)
			all[k++] = all[i];
	buf[0] = '\0';
	for (size_t i = 0; i < k && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					!i ? "" : i + 1 == k ? " and " : ", ",
					all[i].name);
	*n = k;
	return buf;
}

const char *codec_name(const struct kcodec_list *kl, unsigned int id)
{
	const struct kcodec *kc = kcodec_by_id(kl, id);
	const struct incnn_codec *b;

	if (kc)
		return kc->name;
	if (id == INCNN_CODEC_NONE)
		return "none";
	b = incnn_codec_get(id);
	return b ? b->name : NULL;
}

const char *codec_label(const struct kcodec_list *kl, unsigned int id,
			bool has_param, unsigned int param, char *buf,
			size_t len)
{
	static const struct incnn_codec_param unknown = {
		.kind = PARAM_KIND_UNKNOWN, .max = 255,
	};
	struct incnn_codec_param p = { .kind = INCNN_PARAM_NONE };
	const char *name = codec_name(kl, id);
	struct codec_desc d;
	char num[8];

	if (!name) {
		snprintf(num, sizeof(num), "%u", id);
		name = num;
	}
	if (!has_param) {
		snprintf(buf, len, "%s", name);
		return buf;
	}
	if (id != INCNN_CODEC_NONE)
		p = codec_by_id(kl, id, &d) ? unknown : d.param;
	return incnn_codec_param_label(name, &p, param, buf, len);
}
