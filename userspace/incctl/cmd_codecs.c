// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incctl codecs: the codec list the kernel reports (INCNN_CMD_GET_CODECS).
 */
#include "incctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HAS(kc, a)	KCODEC_HAS(kc, a)

/* The parameter kind of a kernel entry (completed by the built-in codec). */
static unsigned int entry_kind(const struct kcodec_list *kl,
			       const struct kcodec *kc)
{
	struct codec_desc d;

	return codec_by_id(kl, kc->id, &d) ? PARAM_KIND_UNKNOWN : d.param.kind;
}

/* Parameter range, e.g. "bound 2^-1..2^-30", "bits 8,16,24", "-". */
static void range_text(unsigned int kind, const struct kcodec *kc, char *buf,
		       size_t len)
{
	unsigned int lo = kc->param_min, hi = kc->param_max;

	if (!HAS(kc, INCNN_CODEC_A_PARAM_MIN) ||
	    !HAS(kc, INCNN_CODEC_A_PARAM_MAX)) {
		snprintf(buf, len, "-");
		return;
	}
	switch (kind) {
	case INCNN_PARAM_BOUND:
		snprintf(buf, len, "bound 2^-%u..2^-%u", lo, hi);
		break;
	case INCNN_PARAM_BITS: {
		size_t off = 0;

		off += (size_t)snprintf(buf, len, "bits ");
		for (unsigned int b = (lo + 7) / 8 * 8; b <= hi && off < len;
		     b += 8)
			off += (size_t)snprintf(buf + off, len - off, "%s%u",
						off > 5 ? "," : "", b);
		break;
	}
	case INCNN_PARAM_NONE:
		if (lo == 0 && hi == 0) {
			snprintf(buf, len, "-");
			break;
		}
		/* fall through */
	default:
		snprintf(buf, len, "param %u..%u", lo, hi);
		break;
	}
}

static void default_text(unsigned int kind, const struct kcodec *kc,
			 char *buf, size_t len)
{
	unsigned int v = kc->param_default;

	if (!HAS(kc, INCNN_CODEC_A_PARAM_DEFAULT) ||
	    (kind == INCNN_PARAM_NONE && v == 0))
		snprintf(buf, len, "-");
	else if (kind == INCNN_PARAM_BOUND)
		snprintf(buf, len, "2^-%u", v);
	else
		snprintf(buf, len, "%u", v);
}

static bool has_bench(const struct kcodec *kc)
{
	return kc->mbps[0][0] || kc->mbps[0][1] || kc->mbps[1][0] ||
	       kc->mbps[1][1];
}

/*
 * "simd": the path this codec runs (the kernel's, where the codec has
 * one, i.e. was benchmarked with it), "mbps": the self-benchmark.
 */
static void json_bench(struct json *j, const struct kcodec_list *kl,
		       const struct kcodec *kc)
{
	static const char *const path[2] = { "none", "avx2" };

	if (kl->simd[0])
		json_str(j, "simd", kc->mbps[1][0] ? kl->simd : "none");
	if (!has_bench(kc))
		return;
	json_obj_open(j, "mbps");
	for (unsigned int p = 0; p < 2; p++) {
		if (!kc->mbps[p][0] && !kc->mbps[p][1])
			continue;
		json_obj_open(j, path[p]);
		json_u64(j, "enc", kc->mbps[p][0]);
		json_u64(j, "dec", kc->mbps[p][1]);
		json_obj_close(j);
	}
	json_obj_close(j);
}

/* the kernel's SIMD path and the figures behind it, after the table */
static void print_bench(const struct kcodec_list *kl)
{
	if (!kl->simd[0])
		return;
	printf("simd: %s (load-time self-test at 1448 B, MB/s enc/dec)\n",
	       kl->simd);
	for (size_t i = 0; i < kl->n; i++) {
		const struct kcodec *kc = &kl->c[i];

		if (!has_bench(kc))
			continue;
		printf("  %-12s avx2 %u/%u  none %u/%u\n",
		       kc->name[0] ? kc->name : "?", kc->mbps[1][0],
		       kc->mbps[1][1], kc->mbps[0][0], kc->mbps[0][1]);
	}
}

static void print_json(const struct incctl *c, const struct kcodec_list *kl)
{
	struct json j;

	json_init(&j, stdout, c->pretty);
	json_arr_open(&j, NULL);
	for (size_t i = 0; i < kl->n; i++) {
		const struct kcodec *kc = &kl->c[i];

		json_obj_open(&j, NULL);
		json_u64(&j, "id", kc->id);
		if (HAS(kc, INCNN_CODEC_A_NAME))
			json_str(&j, "name", kc->name);
		if (HAS(kc, INCNN_CODEC_A_LOSSY))
			json_bool(&j, "lossy", kc->lossy);
		if (HAS(kc, INCNN_CODEC_A_PARAM_MIN))
			json_u64(&j, "param_min", kc->param_min);
		if (HAS(kc, INCNN_CODEC_A_PARAM_MAX))
			json_u64(&j, "param_max", kc->param_max);
		if (HAS(kc, INCNN_CODEC_A_PARAM_DEFAULT))
			json_u64(&j, "param_default", kc->param_default);
		if (HAS(kc, INCNN_CODEC_A_PARAM_KIND)) {
			const char *k = incnn_codec_param_key(kc->param_kind);

			json_str(&j, "param_kind", k ? k :
				 kc->param_kind == INCNN_PARAM_NONE ? "none" :
				 "unknown");
		}
		json_bench(&j, kl, kc);
		json_obj_close(&j);
	}
	json_arr_close(&j);
	json_end(&j);
}

static void print_text(const struct kcodec_list *kl)
{
	printf("%-3s %-12s %-6s %-20s %s\n", "id", "name", "lossy", "param",
	       "default");
	for (size_t i = 0; i < kl->n; i++) {
		const struct kcodec *kc = &kl->c[i];
		unsigned int kind = entry_kind(kl, kc);
		char range[48], def[16];

		range_text(kind, kc, range, sizeof(range));
		default_text(kind, kc, def, sizeof(def));
		printf("%-3u %-12s %-6s %-20s %s\n", kc->id,
		       kc->name[0] ? kc->name : "?",
		       !HAS(kc, INCNN_CODEC_A_LOSSY) ? "?" :
		       kc->lossy ? "yes" : "no", range, def);
	}
	print_bench(kl);
}

int cmd_codecs(struct incctl *c, int argc, char **argv)
{
	int rc;

	rc = arg_end("codecs", argc, argv, 0);
	if (rc)
		return rc;
	rc = incctl_connect(c);
	if (rc)
		return rc;
	c->kcodecs.n = 0;
	rc = codecs_fetch(c, &c->kcodecs);
	if (rc)
		return incctl_fail(c, rc);
	c->kcodecs.loaded = true;
	if (c->json)
		print_json(c, &c->kcodecs);
	else
		print_text(&c->kcodecs);
	return 0;
}
