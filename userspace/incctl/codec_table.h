/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Codec names and parameter kinds: incctl's static table of the codecs
 * in <linux/incnn.h>, and the list the kernel reports (INCNN_CMD_GET_CODECS),
 * which is preferred for names when it is available.
 */
#ifndef INCCTL_CODEC_TABLE_H
#define INCCTL_CODEC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum codec_param_kind {
	PARAM_NONE,		/* no parameter (0) */
	PARAM_BOUND,		/* k of the error bound 2^-k */
	PARAM_BITS,		/* bits kept: 8, 16 or 24 */
	PARAM_OTHER,		/* unknown codec: a plain number */
};

struct codec_desc {
	uint8_t id;
	const char *name;
	enum codec_param_kind kind;
};

const struct codec_desc *codec_by_name(const char *name);
const struct codec_desc *codec_by_id(unsigned int id);
/* "inceptionn, ebq, trunc, lz4" */
const char *codec_name_list(void);

#define KCODEC_NAME_LEN	32
#define KCODEC_MAX	64

/* Which INCNN_CODEC_A_* a kernel entry had (bit = attribute type). */
struct kcodec {
	uint8_t id;
	bool lossy;
	uint8_t param_min, param_max, param_default;
	uint32_t have;
	char name[KCODEC_NAME_LEN];
};

struct kcodec_list {
	bool loaded;
	size_t n;
	struct kcodec c[KCODEC_MAX];
};

const struct kcodec *kcodec_by_id(const struct kcodec_list *kl,
				  unsigned int id);

/*
 * Name of codec @id: the kernel's name if @kl has it, else the static
 * table's, else NULL.
 */
const char *codec_name(const struct kcodec_list *kl, unsigned int id);

/*
 * Text of a rule/flow parameter as the "rule add" syntax spells it:
 * "bound 2^-10", "bits 16", "" (lz4), "param 3" (unknown codec, or a
 * parameter a codec does not take). Returns @buf.
 */
const char *codec_param_text(unsigned int id, unsigned int param,
			     char *buf, size_t len);

#endif /* INCCTL_CODEC_TABLE_H */
