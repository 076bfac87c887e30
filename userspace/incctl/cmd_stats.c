// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incctl stats [-s] | stats reset: datapath counters and per-codec
 * statistics (INCNN_CMD_GET_STATS, INCNN_CMD_RESET_STATS).
 */
#include "incctl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* snake_case of enum incnn_stat, as used for JSON keys and "-s" output */
static const char *const stat_names[__INCNN_STAT_MAX] = {
	[INCNN_STAT_TX_SEGS] = "tx_segs",
	[INCNN_STAT_TX_BYTES] = "tx_bytes",
	[INCNN_STAT_TX_FRAMED] = "tx_framed",
	[INCNN_STAT_TX_BYTES_ORIG] = "tx_bytes_orig",
	[INCNN_STAT_TX_BYTES_WIRE] = "tx_bytes_wire",
	[INCNN_STAT_TX_GSO_SPLIT] = "tx_gso_split",
	[INCNN_STAT_TX_RAW_UNTRACKED] = "tx_raw_untracked",
	[INCNN_STAT_TX_RAW_NO_PEER] = "tx_raw_no_peer",
	[INCNN_STAT_TX_RAW_PRE_ANCHOR] = "tx_raw_pre_anchor",
	[INCNN_STAT_TX_RAW_NOT_SMALLER] = "tx_raw_not_smaller",
	[INCNN_STAT_TX_RAW_MARK_TOGGLED] = "tx_raw_mark_toggled",
	[INCNN_STAT_TX_RAW_TABLE_FULL] = "tx_raw_table_full",
	[INCNN_STAT_TX_ERRORS] = "tx_errors",
	[INCNN_STAT_RX_FRAMES] = "rx_frames",
	[INCNN_STAT_RX_BYTES_WIRE] = "rx_bytes_wire",
	[INCNN_STAT_RX_BYTES_ORIG] = "rx_bytes_orig",
	[INCNN_STAT_RX_DROP_CSUM] = "rx_drop_csum",
	[INCNN_STAT_RX_DROP_SHORT] = "rx_drop_short",
	[INCNN_STAT_RX_DROP_VERSION] = "rx_drop_version",
	[INCNN_STAT_RX_DROP_CODEC] = "rx_drop_codec",
	[INCNN_STAT_RX_DROP_PARAM] = "rx_drop_param",
	[INCNN_STAT_RX_DROP_LENGTH] = "rx_drop_length",
	[INCNN_STAT_RX_DROP_BODY] = "rx_drop_body",
	[INCNN_STAT_RX_DROP_NOMEM] = "rx_drop_nomem",
	[INCNN_STAT_FLOWS_CREATED] = "flows_created",
	[INCNN_STAT_FLOWS_EXPIRED] = "flows_expired",
	[INCNN_STAT_TX_RAW_NO_ROOM] = "tx_raw_no_room",
	[INCNN_STAT_TX_RAW_PEER_CODEC] = "tx_raw_peer_codec",
	[INCNN_STAT_TX_XMIT_ERRORS] = "tx_xmit_errors",
	[INCNN_STAT_RX_DROP_NOT_OFFERED] = "rx_drop_not_offered",
	[INCNN_STAT_RX_OUT_OF_WINDOW] = "rx_out_of_window",
	[INCNN_STAT_FLOWS_RESET] = "flows_reset",
	[INCNN_STAT_TX_ALIGNED] = "tx_aligned",
	[INCNN_STAT_TX_CUT_RAW] = "tx_cut_raw",
	[INCNN_STAT_TX_DROP_CUT] = "tx_drop_cut",
	[INCNN_STAT_TX_RAW_SIGNED] = "tx_raw_signed",
	[INCNN_STAT_TX_WIRE_V1] = "tx_wire_v1",
	[INCNN_STAT_TX_WIRE_V2] = "tx_wire_v2",
	[INCNN_STAT_TX_SUPERFRAMES] = "tx_superframes",
	[INCNN_STAT_RX_FRAMES_V1] = "rx_frames_v1",
	[INCNN_STAT_RX_FRAMES_V2] = "rx_frames_v2",
	[INCNN_STAT_RX_V2_BYTES_ORIG] = "rx_v2_bytes_orig",
	[INCNN_STAT_RX_DROP_ALLOC] = "rx_drop_alloc",
	[INCNN_STAT_RX_DROP_V2_WINDOW] = "rx_drop_v2_window",
	[INCNN_STAT_TX_RAW_EXTHDR] = "tx_raw_exthdr",
	[INCNN_STAT_TX_DROP_EXTHDR] = "tx_drop_exthdr",
	[INCNN_STAT_RX_DROP_EXTHDR] = "rx_drop_exthdr",
};

/* Counters a newer kernel may add are kept and shown as "stat_N". */
#define STATS_MAX	128
#define CSTATS_MAX	64

/* Table III size classes: values sent as 0, 8, 16 and 32 bits. */
#define NHIST	4
static const unsigned int hist_bits[NHIST] = { 0, 8, 16, 32 };

struct cstat {
	uint32_t have;		/* bit n: INCNN_CSTAT_A_* n present */
	uint8_t codec;
	uint64_t frames, bytes_in, bytes_out;
	uint64_t hist[NHIST];
};

struct stats {
	bool have[STATS_MAX];
	uint64_t v[STATS_MAX];
	size_t ncodecs;
	struct cstat codecs[CSTATS_MAX];
};

static int stats_nest(const struct nlattr *nest, struct stats *st)
{
	const struct nlattr *attr;

	mnl_attr_for_each_nested(attr, nest) {
		uint16_t type = mnl_attr_get_type(attr);

		/*
		 * type = enum incnn_stat + 1. Only 8-byte payloads are
		 * counters: padding of nla_put_u64_64bit() is empty.
		 */
		if (type == 0 || type > STATS_MAX ||
		    mnl_attr_get_payload_len(attr) != sizeof(uint64_t))
			continue;
		st->have[type - 1] = true;
		st->v[type - 1] = mnl_attr_get_u64(attr);
	}
	return 0;
}

static int cstat_entry(const struct nlattr *nest, struct stats *st)
{
	static const enum mnl_attr_data_type pol[INCNN_CSTAT_A_MAX + 1] = {
		[INCNN_CSTAT_A_CODEC] = MNL_TYPE_U8,
		[INCNN_CSTAT_A_FRAMES] = MNL_TYPE_U64,
		[INCNN_CSTAT_A_BYTES_IN] = MNL_TYPE_U64,
		[INCNN_CSTAT_A_BYTES_OUT] = MNL_TYPE_U64,
		[INCNN_CSTAT_A_HIST_0] = MNL_TYPE_U64,
		[INCNN_CSTAT_A_HIST_8] = MNL_TYPE_U64,
		[INCNN_CSTAT_A_HIST_16] = MNL_TYPE_U64,
		[INCNN_CSTAT_A_HIST_32] = MNL_TYPE_U64,
	};
	const struct nlattr *tb[INCNN_CSTAT_A_MAX + 1];
	struct cstat *cs;

	if (genl_parse_nested(nest, tb, INCNN_CSTAT_A_MAX, pol))
		return -EBADMSG;
	if (!tb[INCNN_CSTAT_A_CODEC] || st->ncodecs >= CSTATS_MAX)
		return 0;
	cs = &st->codecs[st->ncodecs++];
	memset(cs, 0, sizeof(*cs));
	for (unsigned int i = 1; i <= INCNN_CSTAT_A_MAX; i++)
		if (tb[i])
			cs->have |= 1U << i;
	cs->codec = mnl_attr_get_u8(tb[INCNN_CSTAT_A_CODEC]);
#define GET64(a) (tb[a] ? mnl_attr_get_u64(tb[a]) : 0)
	cs->frames = GET64(INCNN_CSTAT_A_FRAMES);
	cs->bytes_in = GET64(INCNN_CSTAT_A_BYTES_IN);
	cs->bytes_out = GET64(INCNN_CSTAT_A_BYTES_OUT);
	cs->hist[0] = GET64(INCNN_CSTAT_A_HIST_0);
	cs->hist[1] = GET64(INCNN_CSTAT_A_HIST_8);
	cs->hist[2] = GET64(INCNN_CSTAT_A_HIST_16);
	cs->hist[3] = GET64(INCNN_CSTAT_A_HIST_32);
#undef GET64
	return 0;
}

static int stats_cb(const struct nlmsghdr *nlh, void *data)
{
	static const enum mnl_attr_data_type pol[INCNN_A_MAX + 1] = {
		[INCNN_A_STATS] = MNL_TYPE_NESTED,
		[INCNN_A_CODEC_STATS] = MNL_TYPE_NESTED,
	};
	const struct nlattr *tb[INCNN_A_MAX + 1];
	const struct nlattr *attr;
	struct stats *st = data;
	int err;

	if (genl_parse(nlh, tb, INCNN_A_MAX, pol))
		return -EBADMSG;
	if (tb[INCNN_A_STATS])
		stats_nest(tb[INCNN_A_STATS], st);
	if (!tb[INCNN_A_CODEC_STATS])
		return 0;
	mnl_attr_for_each_nested(attr, tb[INCNN_A_CODEC_STATS]) {
		if (mnl_attr_get_type(attr) != INCNN_A_CODEC_STAT)
			continue;
		if (mnl_attr_validate(attr, MNL_TYPE_NESTED) < 0)
			return -EBADMSG;
		err = cstat_entry(attr, st);
		if (err)
			return err;
	}
	return 0;
}

static int cmp_cstat(const void *a, const void *b)
{
	const struct cstat *x = a, *y = b;

	return (int)x->codec - (int)y->codec;
}

/* Derived numbers shown by default. */
struct summary {
	double tx_ratio;	/* tx bytes orig / wire, NAN when no frames */
	int64_t tx_saved;	/* orig - wire */
	double tx_saved_pct;	/* of orig */
	uint64_t rx_dropped;	/* every rx_drop_* */
};

static uint64_t sv(const struct stats *st, enum incnn_stat s)
{
	return st->have[s] ? st->v[s] : 0;
}

static void summarise(const struct stats *st, struct summary *sm)
{
	uint64_t orig = sv(st, INCNN_STAT_TX_BYTES_ORIG);
	uint64_t wire = sv(st, INCNN_STAT_TX_BYTES_WIRE);

	sm->tx_ratio = wire ? (double)orig / (double)wire : NAN;
	sm->tx_saved = (int64_t)(orig - wire);
	sm->tx_saved_pct = orig ? 100.0 * (double)sm->tx_saved / (double)orig
				: NAN;
	sm->rx_dropped = 0;
	for (int s = INCNN_STAT_RX_DROP_CSUM; s <= INCNN_STAT_RX_DROP_NOMEM;
	     s++)
		sm->rx_dropped += sv(st, s);
	sm->rx_dropped += sv(st, INCNN_STAT_RX_DROP_NOT_OFFERED);
	sm->rx_dropped += sv(st, INCNN_STAT_RX_DROP_ALLOC);
	sm->rx_dropped += sv(st, INCNN_STAT_RX_DROP_V2_WINDOW);
	sm->rx_dropped += sv(st, INCNN_STAT_RX_DROP_EXTHDR);
}

static uint64_t hist_total(const struct cstat *cs)
{
	uint64_t n = 0;

	for (int i = 0; i < NHIST; i++)
		n += cs->hist[i];
	return n;
}

static void stat_key(unsigned int idx, char *buf, size_t len)
{
	if (idx < __INCNN_STAT_MAX && stat_names[idx])
		snprintf(buf, len, "%s", stat_names[idx]);
	else
		snprintf(buf, len, "stat_%u", idx);
}

static void print_json(const struct incctl *c, const struct stats *st,
		       const struct summary *sm)
{
	struct json j;
	char key[32];

	json_init(&j, stdout, c->pretty);
	json_obj_open(&j, NULL);
	json_obj_open(&j, "stats");
	for (unsigned int i = 0; i < STATS_MAX; i++) {
		if (!st->have[i])
			continue;
		stat_key(i, key, sizeof(key));
		json_u64(&j, key, st->v[i]);
	}
	json_obj_close(&j);
	json_double(&j, "tx_ratio", sm->tx_ratio);
	json_s64(&j, "tx_bytes_saved", sm->tx_saved);
	json_u64(&j, "rx_dropped", sm->rx_dropped);
	json_arr_open(&j, "codec_stats");
	for (size_t i = 0; i < st->ncodecs; i++) {
		const struct cstat *cs = &st->codecs[i];
		const char *name = incctl_codec_name(c, cs->codec);
		uint64_t total = hist_total(cs);

		json_obj_open(&j, NULL);
		if (name)
			json_str(&j, "codec", name);
		json_u64(&j, "codec_id", cs->codec);
		json_u64(&j, "frames", cs->frames);
		json_u64(&j, "bytes_in", cs->bytes_in);
		json_u64(&j, "bytes_out", cs->bytes_out);
		json_double(&j, "ratio", cs->bytes_out ?
			    (double)cs->bytes_in / (double)cs->bytes_out : NAN);
		for (int h = 0; h < NHIST; h++) {
			snprintf(key, sizeof(key), "hist_%u", hist_bits[h]);
			json_u64(&j, key, cs->hist[h]);
		}
		for (int h = 0; h < NHIST; h++) {
			double pct = total ? 100.0 * (double)cs->hist[h] /
					     (double)total : NAN;

			snprintf(key, sizeof(key), "hist_%u_pct", hist_bits[h]);
			json_double(&j, key, pct);
		}
		json_obj_close(&j);
	}
	json_arr_close(&j);
	json_obj_close(&j);
	json_end(&j);
}

/* The per-codec table: frames, bytes, ratio, size classes. */
static void print_codecs(const struct incctl *c, const struct stats *st)
{
	printf("\n%-12s %10s %14s %14s %6s %7s %7s %7s %7s\n", "codec",
	       "frames", "bytes in", "bytes out", "ratio", "0 bit",
	       "8 bit", "16 bit", "32 bit");
	for (size_t i = 0; i < st->ncodecs; i++) {
		const struct cstat *cs = &st->codecs[i];
		const char *name = incctl_codec_name(c, cs->codec);
		uint64_t total = hist_total(cs);
		char id[8];

		snprintf(id, sizeof(id), "%u", cs->codec);
		printf("%-12s %10llu %14llu %14llu", name ? name : id,
		       (unsigned long long)cs->frames,
		       (unsigned long long)cs->bytes_in,
		       (unsigned long long)cs->bytes_out);
		if (cs->bytes_out)
			printf(" %6.2f", (double)cs->bytes_in /
			       (double)cs->bytes_out);
		else
			printf(" %6s", "-");
		for (int h = 0; h < NHIST; h++) {
			if (total)
				printf(" %6.2f%%", 100.0 *
				       (double)cs->hist[h] /
				       (double)total);
			else
				printf(" %7s", "-");
		}
		putchar('\n');
	}
}

/* -d: every counter by name, and the size classes as counts. */
static void print_details(const struct incctl *c, const struct stats *st)
{
	printf("\ncounters\n");
	for (unsigned int i = 0; i < STATS_MAX; i++) {
		char key[32];

		if (!st->have[i])
			continue;
		stat_key(i, key, sizeof(key));
		printf("  %-22s %llu\n", key, (unsigned long long)st->v[i]);
	}
	if (!st->ncodecs)
		return;
	printf("\n%-12s %14s %14s %14s %14s\n", "codec", "hist_0", "hist_8",
	       "hist_16", "hist_32");
	for (size_t i = 0; i < st->ncodecs; i++) {
		const struct cstat *cs = &st->codecs[i];
		const char *name = incctl_codec_name(c, cs->codec);
		char id[8];

		snprintf(id, sizeof(id), "%u", cs->codec);
		printf("%-12s %14llu %14llu %14llu %14llu\n", name ? name : id,
		       (unsigned long long)cs->hist[0],
		       (unsigned long long)cs->hist[1],
		       (unsigned long long)cs->hist[2],
		       (unsigned long long)cs->hist[3]);
	}
}

static void print_text(const struct incctl *c, const struct stats *st,
		       const struct summary *sm)
{
	printf("tx     segments %llu  framed %llu  bytes %llu\n",
	       (unsigned long long)sv(st, INCNN_STAT_TX_SEGS),
	       (unsigned long long)sv(st, INCNN_STAT_TX_FRAMED),
	       (unsigned long long)sv(st, INCNN_STAT_TX_BYTES));
	printf("       orig %llu  wire %llu  ratio ",
	       (unsigned long long)sv(st, INCNN_STAT_TX_BYTES_ORIG),
	       (unsigned long long)sv(st, INCNN_STAT_TX_BYTES_WIRE));
	if (isnan(sm->tx_ratio))
		fputs("-", stdout);
	else
		printf("%.2f", sm->tx_ratio);
	printf("  saved %lld", (long long)sm->tx_saved);
	if (!isnan(sm->tx_saved_pct))
		printf(" (%.1f%%)", sm->tx_saved_pct);
	putchar('\n');
	printf("rx     frames %llu  wire %llu  orig %llu  dropped %llu\n",
	       (unsigned long long)sv(st, INCNN_STAT_RX_FRAMES),
	       (unsigned long long)sv(st, INCNN_STAT_RX_BYTES_WIRE),
	       (unsigned long long)sv(st, INCNN_STAT_RX_BYTES_ORIG),
	       (unsigned long long)sm->rx_dropped);
	printf("flows  created %llu  expired %llu\n",
	       (unsigned long long)sv(st, INCNN_STAT_FLOWS_CREATED),
	       (unsigned long long)sv(st, INCNN_STAT_FLOWS_EXPIRED));

	if (st->ncodecs)
		print_codecs(c, st);
	if (c->details)
		print_details(c, st);
}

static int stats_reset(struct incctl *c, int argc, char **argv)
{
	struct nlmsghdr *nlh;
	int rc;

	rc = arg_end("stats reset", argc, argv, 0);
	if (rc)
		return rc;
	rc = incctl_connect(c);
	if (rc)
		return rc;
	nlh = incctl_msg(c, INCNN_CMD_RESET_STATS, NLM_F_ACK);
	return incctl_talk(c, nlh, NULL, NULL);
}

int cmd_stats(struct incctl *c, int argc, char **argv)
{
	struct summary sm;
	struct nlmsghdr *nlh;
	struct stats *st;
	int rc;

	if (argc > 0 && !strcmp(argv[0], "reset"))
		return stats_reset(c, argc - 1, argv + 1);
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-s"))
			return cli_error("stats: unexpected argument \"%s\" (-s or reset)",
					 argv[i]);
		c->details = true;
	}
	rc = incctl_connect(c);
	if (rc)
		return rc;
	st = calloc(1, sizeof(*st));
	if (!st)
		return incctl_fail(c, -ENOMEM);
	nlh = incctl_msg(c, INCNN_CMD_GET_STATS, NLM_F_ACK);
	rc = incctl_talk(c, nlh, stats_cb, st);
	if (!rc) {
		qsort(st->codecs, st->ncodecs, sizeof(st->codecs[0]),
		      cmp_cstat);
		incctl_load_codec_names(c);
		summarise(st, &sm);
		if (c->json)
			print_json(c, st, &sm);
		else
			print_text(c, st, &sm);
	}
	free(st);
	return rc;
}
