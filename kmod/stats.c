// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU datapath statistics, summed on read.
 */
#include <linux/percpu.h>
#include <linux/string.h>

#include "incnn.h"

/*
 * @frames frames of @codec, restoring @in_bytes from @out_bytes, with the
 * value classes @hist (a superframe's wire packets are one frame each)
 */
void incnn_stats_codec_n(struct incnn_net *in, u8 codec, unsigned int frames,
			 u64 in_bytes, u64 out_bytes,
			 const struct incnn_hist *hist)
{
	struct incnn_pcpu_stats *st = this_cpu_ptr(in->stats);
	struct incnn_codec_stats *cs;
	int i;

	if (codec >= __INCNN_CODEC_MAX)
		return;
	cs = &st->codec[codec];
	u64_stats_update_begin(&st->syncp);
	cs->frames += frames;
	cs->bytes_in += in_bytes;
	cs->bytes_out += out_bytes;
	for (i = 0; i < 4; i++)
		cs->hist[i] += hist->n[i];
	u64_stats_update_end(&st->syncp);
}

void incnn_stats_sum(struct incnn_net *in, struct incnn_pcpu_stats *sum)
{
	int cpu, i, j;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct incnn_pcpu_stats *st = per_cpu_ptr(in->stats, cpu);
		struct incnn_pcpu_stats snap;
		unsigned int start;

		do {
			start = u64_stats_fetch_begin(&st->syncp);
			memcpy(snap.stat, st->stat, sizeof(snap.stat));
			memcpy(snap.codec, st->codec, sizeof(snap.codec));
		} while (u64_stats_fetch_retry(&st->syncp, start));

		for (i = 0; i < __INCNN_STAT_MAX; i++)
			sum->stat[i] += snap.stat[i];
		for (i = 0; i < __INCNN_CODEC_MAX; i++) {
			sum->codec[i].frames += snap.codec[i].frames;
			sum->codec[i].bytes_in += snap.codec[i].bytes_in;
			sum->codec[i].bytes_out += snap.codec[i].bytes_out;
			for (j = 0; j < 4; j++)
				sum->codec[i].hist[j] += snap.codec[i].hist[j];
		}
	}
}

void incnn_stats_reset(struct incnn_net *in)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct incnn_pcpu_stats *st = per_cpu_ptr(in->stats, cpu);

		/* racy against a concurrent update; counters are advisory */
		memset(st->stat, 0, sizeof(st->stat));
		memset(st->codec, 0, sizeof(st->codec));
	}
}
