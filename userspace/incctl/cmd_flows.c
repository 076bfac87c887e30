// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incctl flows: the flow table, one line (or JSON object) per flow
 * (INCNN_CMD_GET_FLOWS dump).
 */
#include "incctl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <string.h>

static const struct {
	uint32_t bit;
	const char *text;	/* text output */
	const char *json;	/* JSON output */
} flow_flags[] = {
	{ INCNN_FLOW_F_PEER_RX,	 "peer-rx",  "peer_rx" },
	{ INCNN_FLOW_F_ANCHORED, "anchored", "anchored" },
	{ INCNN_FLOW_F_TOGGLED,	 "toggled",  "toggled" },
	{ INCNN_FLOW_F_CLOSING,	 "closing",  "closing" },
};

#define N_FLAGS (sizeof(flow_flags) / sizeof(flow_flags[0]))

struct flow {
	const struct nlattr *tb[INCNN_FLOW_A_MAX + 1];
};

struct flows_ctx {
	struct incctl *c;
	struct json j;
	unsigned long count;
};

static void port_text(const struct nlattr *a, char *buf, size_t len)
{
	if (a)
		snprintf(buf, len, "%u", ntohs(mnl_attr_get_u16(a)));
	else
		snprintf(buf, len, "?");
}

/* an IPv6 flow has INCNN_FLOW_A_SADDR6 and _DADDR6 instead */
static bool flow_v6(const struct flow *fl)
{
	return fl->tb[INCNN_FLOW_A_SADDR6] || fl->tb[INCNN_FLOW_A_DADDR6];
}

/* the local (@peer: peer) address, "?" if the kernel sent none */
static const char *addr_text(const struct flow *fl, bool peer, char *buf,
			     size_t len)
{
	const struct nlattr *a;
	struct in_addr in;

	if (flow_v6(fl)) {
		a = fl->tb[peer ? INCNN_FLOW_A_DADDR6 : INCNN_FLOW_A_SADDR6];
		if (!a || mnl_attr_get_payload_len(a) != 16 ||
		    !inet_ntop(AF_INET6, mnl_attr_get_payload(a), buf,
			       (socklen_t)len))
			return "?";
		return buf;
	}
	a = fl->tb[peer ? INCNN_FLOW_A_DADDR : INCNN_FLOW_A_SADDR];
	if (!a)
		return "?";
	in.s_addr = mnl_attr_get_u32(a);	/* __be32 as sent */
	if (!inet_ntop(AF_INET, &in, buf, (socklen_t)len))
		return "?";
	return buf;
}

/* address and port as a URL writes them: 10.0.0.1:5001, [fd00::1]:5001 */
static void endpoint_print(const struct flow *fl, bool peer)
{
	const struct nlattr *p = fl->tb[peer ? INCNN_FLOW_A_DPORT :
					 INCNN_FLOW_A_SPORT];
	char a[INET6_ADDRSTRLEN], port[8];

	port_text(p, port, sizeof(port));
	if (flow_v6(fl))
		printf("[%s]:%s", addr_text(fl, peer, a, sizeof(a)), port);
	else
		printf("%s:%s", addr_text(fl, peer, a, sizeof(a)), port);
}


static double flow_ratio(const struct flow *fl)
{
	const struct nlattr *o = fl->tb[INCNN_FLOW_A_BYTES_ORIG];
	const struct nlattr *w = fl->tb[INCNN_FLOW_A_BYTES_WIRE];

	if (!o || !w || !mnl_attr_get_u64(w))
		return NAN;
	return (double)mnl_attr_get_u64(o) / (double)mnl_attr_get_u64(w);
}

/* the flow's codec and parameter, "ebq:2^-10" (it has INCNN_FLOW_A_CODEC) */
static const char *flow_label(const struct incctl *c, const struct flow *fl,
			      char *buf, size_t len)
{
	const struct nlattr *p = fl->tb[INCNN_FLOW_A_PARAM];

	return codec_label(&c->kcodecs,
			   mnl_attr_get_u8(fl->tb[INCNN_FLOW_A_CODEC]),
			   p != NULL, p ? mnl_attr_get_u8(p) : 0, buf, len);
}

static void flow_text(const struct incctl *c, const struct flow *fl)
{
	const struct nlattr *const *tb = fl->tb;
	char label[64];
	double ratio = flow_ratio(fl);

	endpoint_print(fl, false);
	fputs(" -> ", stdout);
	endpoint_print(fl, true);
	if (tb[INCNN_FLOW_A_DSCP])
		printf(" dscp %u", mnl_attr_get_u8(tb[INCNN_FLOW_A_DSCP]));
	if (tb[INCNN_FLOW_A_CODEC])
		printf(" codec %s", flow_label(c, fl, label, sizeof(label)));
	if (tb[INCNN_FLOW_A_FLAGS]) {
		uint32_t flags = mnl_attr_get_u32(tb[INCNN_FLOW_A_FLAGS]);
		const char *sep = "";

		fputs(" flags ", stdout);
		if (!flags)
			fputs("-", stdout);
		for (size_t i = 0; i < N_FLAGS; i++) {
			if (!(flags & flow_flags[i].bit))
				continue;
			printf("%s%s", sep, flow_flags[i].text);
			flags &= ~flow_flags[i].bit;
			sep = ",";
		}
		if (flags)
			printf("%s0x%x", sep, flags);
	}
	if (tb[INCNN_FLOW_A_ANCHOR]) {
		bool anchored = tb[INCNN_FLOW_A_FLAGS] &&
			(mnl_attr_get_u32(tb[INCNN_FLOW_A_FLAGS]) &
			 INCNN_FLOW_F_ANCHORED);

		if (anchored || !tb[INCNN_FLOW_A_FLAGS])
			printf(" anchor %u",
			       mnl_attr_get_u32(tb[INCNN_FLOW_A_ANCHOR]));
		else
			fputs(" anchor -", stdout);
	}
	if (tb[INCNN_FLOW_A_BYTES_ORIG])
		printf(" orig %llu", (unsigned long long)
		       mnl_attr_get_u64(tb[INCNN_FLOW_A_BYTES_ORIG]));
	if (tb[INCNN_FLOW_A_BYTES_WIRE])
		printf(" wire %llu", (unsigned long long)
		       mnl_attr_get_u64(tb[INCNN_FLOW_A_BYTES_WIRE]));
	if (isnan(ratio))
		fputs(" ratio -", stdout);
	else
		printf(" ratio %.2f", ratio);
	if (tb[INCNN_FLOW_A_IDLE_MS]) {
		uint32_t ms = mnl_attr_get_u32(tb[INCNN_FLOW_A_IDLE_MS]);

		printf(" idle %u.%03us", ms / 1000, ms % 1000);
	}
	putchar('\n');
}

static void flow_json(const struct incctl *c, struct json *j,
		      const struct flow *fl)
{
	const struct nlattr *const *tb = fl->tb;
	char buf[INET6_ADDRSTRLEN], label[64];
	bool v6 = flow_v6(fl);

	json_obj_open(j, NULL);
	json_u64(j, "family", v6 ? 6 : 4);
	if (tb[v6 ? INCNN_FLOW_A_SADDR6 : INCNN_FLOW_A_SADDR])
		json_str(j, "saddr", addr_text(fl, false, buf, sizeof(buf)));
	if (tb[INCNN_FLOW_A_SPORT])
		json_u64(j, "sport",
			 ntohs(mnl_attr_get_u16(tb[INCNN_FLOW_A_SPORT])));
	if (tb[v6 ? INCNN_FLOW_A_DADDR6 : INCNN_FLOW_A_DADDR])
		json_str(j, "daddr", addr_text(fl, true, buf, sizeof(buf)));
	if (tb[INCNN_FLOW_A_DPORT])
		json_u64(j, "dport",
			 ntohs(mnl_attr_get_u16(tb[INCNN_FLOW_A_DPORT])));
	if (tb[INCNN_FLOW_A_DSCP])
		json_u64(j, "dscp", mnl_attr_get_u8(tb[INCNN_FLOW_A_DSCP]));
	if (tb[INCNN_FLOW_A_CODEC]) {
		unsigned int id = mnl_attr_get_u8(tb[INCNN_FLOW_A_CODEC]);
		const char *name = incctl_codec_name(c, id);

		if (name)
			json_str(j, "codec", name);
		json_u64(j, "codec_id", id);
	}
	if (tb[INCNN_FLOW_A_PARAM])
		json_u64(j, "param", mnl_attr_get_u8(tb[INCNN_FLOW_A_PARAM]));
	if (tb[INCNN_FLOW_A_CODEC])
		json_str(j, "label", flow_label(c, fl, label, sizeof(label)));
	if (tb[INCNN_FLOW_A_FLAGS]) {
		uint32_t flags = mnl_attr_get_u32(tb[INCNN_FLOW_A_FLAGS]);
		char other[16];

		json_arr_open(j, "flags");
		for (size_t i = 0; i < N_FLAGS; i++) {
			if (!(flags & flow_flags[i].bit))
				continue;
			json_str(j, NULL, flow_flags[i].json);
			flags &= ~flow_flags[i].bit;
		}
		if (flags) {
			snprintf(other, sizeof(other), "0x%x", flags);
			json_str(j, NULL, other);
		}
		json_arr_close(j);
	}
	if (tb[INCNN_FLOW_A_ANCHOR])
		json_u64(j, "anchor",
			 mnl_attr_get_u32(tb[INCNN_FLOW_A_ANCHOR]));
	if (tb[INCNN_FLOW_A_BYTES_ORIG])
		json_u64(j, "bytes_orig",
			 mnl_attr_get_u64(tb[INCNN_FLOW_A_BYTES_ORIG]));
	if (tb[INCNN_FLOW_A_BYTES_WIRE])
		json_u64(j, "bytes_wire",
			 mnl_attr_get_u64(tb[INCNN_FLOW_A_BYTES_WIRE]));
	json_double(j, "ratio", flow_ratio(fl));
	if (tb[INCNN_FLOW_A_IDLE_MS])
		json_u64(j, "idle_ms",
			 mnl_attr_get_u32(tb[INCNN_FLOW_A_IDLE_MS]));
	json_obj_close(j);
}

static int flows_cb(const struct nlmsghdr *nlh, void *data)
{
	static const enum mnl_attr_data_type top[INCNN_A_MAX + 1] = {
		[INCNN_A_FLOW] = MNL_TYPE_NESTED,
	};
	static const enum mnl_attr_data_type pol[INCNN_FLOW_A_MAX + 1] = {
		[INCNN_FLOW_A_SADDR] = MNL_TYPE_U32,
		[INCNN_FLOW_A_DADDR] = MNL_TYPE_U32,
		[INCNN_FLOW_A_SPORT] = MNL_TYPE_U16,
		[INCNN_FLOW_A_DPORT] = MNL_TYPE_U16,
		[INCNN_FLOW_A_FLAGS] = MNL_TYPE_U32,
		[INCNN_FLOW_A_ANCHOR] = MNL_TYPE_U32,
		[INCNN_FLOW_A_DSCP] = MNL_TYPE_U8,
		[INCNN_FLOW_A_CODEC] = MNL_TYPE_U8,
		[INCNN_FLOW_A_PARAM] = MNL_TYPE_U8,
		[INCNN_FLOW_A_BYTES_ORIG] = MNL_TYPE_U64,
		[INCNN_FLOW_A_BYTES_WIRE] = MNL_TYPE_U64,
		[INCNN_FLOW_A_IDLE_MS] = MNL_TYPE_U32,
		[INCNN_FLOW_A_FAMILY] = MNL_TYPE_U8,
		[INCNN_FLOW_A_SADDR6] = MNL_TYPE_BINARY,
		[INCNN_FLOW_A_DADDR6] = MNL_TYPE_BINARY,
	};
	struct flows_ctx *fc = data;
	const struct nlattr *attr;
	struct flow fl;

	/* validate the top level, then take every INCNN_A_FLOW in order */
	{
		const struct nlattr *tb[INCNN_A_MAX + 1];

		if (genl_parse(nlh, tb, INCNN_A_MAX, top))
			return -EBADMSG;
	}
	mnl_attr_for_each(attr, nlh, GENL_HDRLEN) {
		if (mnl_attr_get_type(attr) != INCNN_A_FLOW)
			continue;
		if (genl_parse_nested(attr, fl.tb, INCNN_FLOW_A_MAX, pol))
			return -EBADMSG;
		if (fc->c->json)
			flow_json(fc->c, &fc->j, &fl);
		else
			flow_text(fc->c, &fl);
		fc->count++;
	}
	return 0;
}

int cmd_flows(struct incctl *c, int argc, char **argv)
{
	struct flows_ctx fc = { .c = c };
	struct nlmsghdr *nlh;
	int rc;

	rc = arg_end("flows", argc, argv, 0);
	if (rc)
		return rc;
	rc = incctl_connect(c);
	if (rc)
		return rc;
	incctl_load_codec_names(c);
	if (c->json) {
		json_init(&fc.j, stdout, c->pretty);
		json_arr_open(&fc.j, NULL);
	}
	nlh = incctl_msg(c, INCNN_CMD_GET_FLOWS, NLM_F_DUMP);
	rc = incctl_talk(c, nlh, flows_cb, &fc);
	/* the document stays valid JSON even when the dump failed */
	if (c->json) {
		json_arr_close(&fc.j);
		json_end(&fc.j);
	}
	return rc;
}
