/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The codecs as incctl knows them: the kernel's list (INCNN_CMD_GET_CODECS:
 * names, parameter kinds and ranges), completed by the codec library built
 * into incctl (kmod/codec) for what an older kernel does not report, or
 * when there is no kernel to ask.
 */
#ifndef INCCTL_CODEC_TABLE_H
#define INCCTL_CODEC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <incnn/codec_param.h>

/* the parameter kind of a codec neither the kernel nor incctl describes */
#define PARAM_KIND_UNKNOWN	255

#define KCODEC_NAME_LEN	32
#define KCODEC_MAX	64

/* Which INCNN_CODEC_A_* a kernel entry had (bit = attribute type). */
struct kcodec {
	uint8_t id;
	bool lossy;
	uint8_t param_min, param_max, param_default, param_kind;
	uint32_t have;
	char name[KCODEC_NAME_LEN];
	/* the self-benchmark, MB/s: [0] scalar, [1] AVX2; [.][0] enc, dec */
	uint32_t mbps[2][2];
};

struct kcodec_list {
	bool loaded;
	size_t n;
	char simd[16];		/* INCNN_A_SIMD, "" if the kernel has none */
	struct kcodec c[KCODEC_MAX];
};

#define KCODEC_HAS(kc, a)	((kc)->have & (1U << (a)))

/* A codec, its name and its parameter. */
struct codec_desc {
	uint8_t id;
	char name[KCODEC_NAME_LEN];
	struct incnn_codec_param param;
};

const struct kcodec *kcodec_by_id(const struct kcodec_list *kl,
				  unsigned int id);

/*
 * Look a codec up by name (never "none") or id in the kernel's list when
 * there is one (@kl loaded and not empty), else in the built-in codecs.
 * 0, or -ENOENT.
 */
int codec_by_name(const struct kcodec_list *kl, const char *name,
		  struct codec_desc *d);
int codec_by_id(const struct kcodec_list *kl, unsigned int id,
		struct codec_desc *d);

/* "inceptionn, ebq, trunc, lz4": the codecs a rule can name. */
const char *codec_name_list(const struct kcodec_list *kl, char *buf,
			    size_t len);

/*
 * "inceptionn and ebq": the codecs whose parameter is of @kind; *@n is
 * how many.
 */
const char *codec_kind_list(const struct kcodec_list *kl, unsigned int kind,
			    char *buf, size_t len, size_t *n);

/* Name of codec @id ("none" for 0), or NULL. */
const char *codec_name(const struct kcodec_list *kl, unsigned int id);

/*
 * Codec @id with its parameter as every tool prints it
 * (incnn_codec_param_label(), with the kernel's name and kind where it
 * reports them): "ebq:2^-10", "trunc:16", "lz4", "none"; "zfuture param 3"
 * for a kind incctl does not know or a parameter the codec does not take;
 * "9 param 3" for a codec neither the kernel nor incctl names. Without
 * @has_param (a rule that leaves it to the kernel), the name alone.
 * Returns @buf.
 */
const char *codec_label(const struct kcodec_list *kl, unsigned int id,
			bool has_param, unsigned int param, char *buf,
			size_t len);

#endif /* INCCTL_CODEC_TABLE_H */
