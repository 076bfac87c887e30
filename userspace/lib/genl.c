// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Generic netlink plumbing for incctl and the collective, in the manner of iproute2's
 * mnl_utils.c: the reply loop is written out here (instead of
 * mnl_cb_run2()) so that NLM_F_DUMP_INTR is a warning rather than an
 * abort, a failing callback still drains the rest of the reply, and the
 * extended ACK of both NLMSG_ERROR and NLMSG_DONE is read.
 */
#include <incnn/genl.h>

#include <errno.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

/* Dumps are sent in skbs of up to 32 KiB; leave room to spare. */
#define RBUF_LEN	65536

int genl_open(struct genl *g)
{
	int one = 1;
	int err;

	memset(g, 0, sizeof(*g));
	g->miss_type = -1;
	g->sbuf = calloc(1, MNL_SOCKET_BUFFER_SIZE);
	g->rbuf = malloc(RBUF_LEN);
	g->rbuf_len = RBUF_LEN;
	if (!g->sbuf || !g->rbuf) {
		err = -ENOMEM;
		goto fail;
	}
	g->sock = mnl_socket_open(NETLINK_GENERIC);
	if (!g->sock) {
		err = -errno;
		goto fail;
	}
	if (mnl_socket_bind(g->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		goto fail;
	}
	g->portid = mnl_socket_get_portid(g->sock);
	g->seq = (uint32_t)time(NULL);
	/* Both are optional: without them errors are still reported. */
	mnl_socket_setsockopt(g->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(g->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	return 0;
fail:
	genl_close(g);
	return err;
}

int genl_set_timeout(struct genl *g, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
			      .tv_usec = (ms % 1000) * 1000 };

	if (setsockopt(mnl_socket_get_fd(g->sock), SOL_SOCKET, SO_RCVTIMEO,
		       &tv, sizeof(tv)) < 0)
		return -errno;
	return 0;
}

void genl_close(struct genl *g)
{
	if (g->sock)
		mnl_socket_close(g->sock);
	free(g->sbuf);
	free(g->rbuf);
	g->sock = NULL;
	g->sbuf = NULL;
	g->rbuf = NULL;
}

struct nlmsghdr *genl_request(struct genl *g, uint16_t type, uint8_t cmd,
			      uint8_t version, uint16_t flags)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *gh;

	memset(g->sbuf, 0, MNL_SOCKET_BUFFER_SIZE);
	nlh = mnl_nlmsg_put_header(g->sbuf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++g->seq;
	gh = mnl_nlmsg_put_extra_header(nlh, sizeof(*gh));
	gh->cmd = cmd;
	gh->version = version;
	return nlh;
}

/* Keep the extack message on one printable line. */
static void copy_msg(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < len && src[i]; i++) {
		unsigned char ch = (unsigned char)src[i];

		dst[i] = (ch < 0x20 || ch == 0x7f) ? ' ' : (char)ch;
	}
	dst[i] = '\0';
	/* iproute2 style messages may end in a newline */
	while (i > 0 && dst[i - 1] == ' ')
		dst[--i] = '\0';
}

/* Read the extended ACK TLVs that start @off bytes into the payload. */
static void parse_extack(struct genl *g, const struct nlmsghdr *nlh,
			 size_t off)
{
	const struct nlattr *attr;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (MNL_ALIGN(off) > mnl_nlmsg_get_payload_len(nlh))
		return;
	mnl_attr_for_each(attr, nlh, off) {
		switch (mnl_attr_get_type(attr)) {
		case NLMSGERR_ATTR_MSG:
			if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
				copy_msg(g->msg, sizeof(g->msg),
					 mnl_attr_get_str(attr));
			break;
		case NLMSGERR_ATTR_MISS_TYPE:
			if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
				g->miss_type = (int)mnl_attr_get_u32(attr);
			break;
		default:
			break;
		}
	}
}

struct talk {
	uint16_t type;		/* nlmsg_type replies must have */
	genl_cb_t cb;
	void *data;
	int cb_err;		/* first callback error */
	int kernel_err;		/* error from NLMSG_ERROR / NLMSG_DONE */
};

/* Returns 1 while more messages are expected, 0 at the end. */
static int process(struct genl *g, const void *buf, size_t len,
		   uint32_t seq, struct talk *t)
{
	const struct nlmsghdr *nlh = buf;
	int rem = (int)len;

	for (; mnl_nlmsg_ok(nlh, rem); nlh = mnl_nlmsg_next(nlh, &rem)) {
		size_t plen = mnl_nlmsg_get_payload_len(nlh);

		/* not ours: a late reply to an earlier request */
		if (nlh->nlmsg_seq != seq ||
		    (nlh->nlmsg_pid && nlh->nlmsg_pid != g->portid))
			continue;
		if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
			g->dump_intr = true;

		if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
			size_t off = sizeof(*e);

			if (plen < sizeof(*e)) {
				t->kernel_err = -EBADMSG;
				return 0;
			}
			/* uncapped: the request is echoed before the TLVs */
			if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
				uint32_t echo = e->msg.nlmsg_len;

				off += echo >= NLMSG_HDRLEN ?
				       echo - NLMSG_HDRLEN : plen;
			}
			parse_extack(g, nlh, off);
			t->kernel_err = e->error > 0 ? -e->error : e->error;
			return 0;
		}
		if (nlh->nlmsg_type == NLMSG_DONE) {
			int err = 0;

			if (plen >= sizeof(int)) {
				memcpy(&err, mnl_nlmsg_get_payload(nlh),
				       sizeof(err));
				parse_extack(g, nlh, sizeof(int));
			}
			t->kernel_err = err > 0 ? -err : err;
			return 0;
		}
		if (nlh->nlmsg_type < NLMSG_MIN_TYPE ||
		    nlh->nlmsg_type != t->type)
			continue;	/* NOOP, OVERRUN, stray */
		if (t->cb_err || !t->cb)
			continue;
		if (plen < GENL_HDRLEN)
			t->cb_err = -EBADMSG;
		else
			t->cb_err = t->cb(nlh, t->data);
	}
	return 1;
}

int genl_talk(struct genl *g, struct nlmsghdr *nlh, genl_cb_t cb, void *data)
{
	struct talk t = { .type = nlh->nlmsg_type, .cb = cb, .data = data };
	uint32_t seq = nlh->nlmsg_seq;

	g->dump_intr = false;
	g->miss_type = -1;
	g->msg[0] = '\0';
	if (mnl_socket_sendto(g->sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(g->sock, g->rbuf, g->rbuf_len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		if (!process(g, g->rbuf, (size_t)n, seq, &t))
			break;
	}
	if (t.kernel_err)
		return t.kernel_err;
	if (t.cb_err)
		g->msg[0] = '\0';	/* a warning; the reply was bad anyway */
	return t.cb_err;
}

/* Reply of CTRL_CMD_GETFAMILY. */
struct family {
	uint16_t id;
	uint32_t version;
};

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	static const enum mnl_attr_data_type pol[CTRL_ATTR_MAX + 1] = {
		[CTRL_ATTR_FAMILY_ID] = MNL_TYPE_U16,
		[CTRL_ATTR_VERSION] = MNL_TYPE_U32,
	};
	const struct nlattr *tb[CTRL_ATTR_MAX + 1];
	struct family *f = data;
	int err;

	err = genl_parse(nlh, tb, CTRL_ATTR_MAX, pol);
	if (err)
		return err;
	if (!tb[CTRL_ATTR_FAMILY_ID])
		return -EBADMSG;
	f->id = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (tb[CTRL_ATTR_VERSION])
		f->version = mnl_attr_get_u32(tb[CTRL_ATTR_VERSION]);
	return 0;
}

int genl_resolve(struct genl *g, const char *name)
{
	struct family f = { 0 };
	struct nlmsghdr *nlh;
	int err;

	nlh = genl_request(g, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, NLM_F_ACK);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name);
	err = genl_talk(g, nlh, family_cb, &f);
	if (err)
		return err;
	if (!f.id)
		return -EBADMSG;	/* acknowledged, but no reply */
	g->family = f.id;
	g->version = f.version;
	return 0;
}

static int parse_one(const struct nlattr *attr, const struct nlattr **tb,
		     uint16_t max, const enum mnl_attr_data_type *pol)
{
	uint16_t type = mnl_attr_get_type(attr);

	if (type > max || pol[type] == MNL_TYPE_UNSPEC)
		return 0;
	if (mnl_attr_validate(attr, pol[type]) < 0)
		return -EBADMSG;
	tb[type] = attr;
	return 0;
}

/* Where an attribute loop over [.., @end) stopped: at the end, or not. */
static int loop_end(const struct nlattr *attr, const void *end)
{
	return (const char *)end - (const char *)attr >=
	       (ptrdiff_t)sizeof(struct nlattr) ? -EBADMSG : 0;
}

int genl_parse(const struct nlmsghdr *nlh, const struct nlattr **tb,
	       uint16_t max, const enum mnl_attr_data_type *pol)
{
	const struct nlattr *attr;

	memset(tb, 0, (max + 1U) * sizeof(*tb));
	mnl_attr_for_each(attr, nlh, GENL_HDRLEN) {
		if (parse_one(attr, tb, max, pol))
			return -EBADMSG;
	}
	return loop_end(attr, mnl_nlmsg_get_payload_tail(nlh));
}

int genl_nested_end(const struct nlattr *attr, const struct nlattr *nest)
{
	return loop_end(attr, (const char *)mnl_attr_get_payload(nest) +
			      mnl_attr_get_payload_len(nest));
}

int genl_parse_nested(const struct nlattr *nest, const struct nlattr **tb,
		      uint16_t max, const enum mnl_attr_data_type *pol)
{
	const struct nlattr *attr;

	memset(tb, 0, (max + 1U) * sizeof(*tb));
	mnl_attr_for_each_nested(attr, nest) {
		if (parse_one(attr, tb, max, pol))
			return -EBADMSG;
	}
	return genl_nested_end(attr, nest);
}
