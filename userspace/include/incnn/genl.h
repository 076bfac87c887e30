/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Generic netlink plumbing (libmnl) for incctl and the collective: one
 * socket, family resolution, request/reply/dump exchanges with
 * extended-ACK error messages, and strict attribute parsing. Nothing here
 * knows about incnn itself (that is incnn/nl_config.h).
 */
#ifndef _INCNN_GENL_H
#define _INCNN_GENL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#define GENL_MSG_LEN	256

struct genl {
	struct mnl_socket *sock;
	uint32_t portid;
	uint32_t seq;
	uint16_t family;	/* family id from genl_resolve() */
	uint32_t version;	/* family version the kernel reported */
	char *sbuf;		/* request being built */
	char *rbuf;		/* replies */
	size_t rbuf_len;
	/* Results of the last genl_talk(). */
	bool dump_intr;		/* a reply carried NLM_F_DUMP_INTR */
	int miss_type;		/* NLMSGERR_ATTR_MISS_TYPE, or -1 */
	char msg[GENL_MSG_LEN];	/* NLMSGERR_ATTR_MSG, or "" */
};

/*
 * Reply callback: called once per data message of the reply (never for
 * NLMSG_ERROR/NLMSG_DONE). Returns 0 or a negative errno; after an error,
 * the rest of the reply is drained without further calls.
 */
typedef int (*genl_cb_t)(const struct nlmsghdr *nlh, void *data);

/* Open and bind a NETLINK_GENERIC socket, ask for extended ACKs. -errno. */
int genl_open(struct genl *g);
/* Give up waiting for a reply after @ms (genl_talk() returns -EAGAIN). */
int genl_set_timeout(struct genl *g, int ms);
void genl_close(struct genl *g);

/*
 * Look up a family by name (CTRL_CMD_GETFAMILY) and remember its id in
 * g->family. -ENOENT when the kernel has no such family.
 */
int genl_resolve(struct genl *g, const char *name);

/*
 * Start a request in the send buffer: netlink header of type @type with
 * NLM_F_REQUEST | @flags and a fresh sequence number, then the genl
 * header. Attributes are appended with mnl_attr_put*() (the buffer holds
 * MNL_SOCKET_BUFFER_SIZE bytes; requests are small).
 */
struct nlmsghdr *genl_request(struct genl *g, uint16_t type, uint8_t cmd,
			      uint8_t version, uint16_t flags);

/*
 * Send @nlh and receive until its ACK, error or NLMSG_DONE. Non-dump
 * requests should carry NLM_F_ACK so that the end of the reply is known.
 * Returns 0, the kernel's negative errno (g->msg then holds its extack
 * message, if any) or the first error of @cb. @cb may be NULL.
 */
int genl_talk(struct genl *g, struct nlmsghdr *nlh, genl_cb_t cb, void *data);

/*
 * Strict attribute parsing. @pol[type] is the libmnl data type expected
 * for each attribute type up to @max; MNL_TYPE_UNSPEC means "not used"
 * (the attribute is skipped, as are types above @max, so a newer kernel's
 * additions are ignored). A known attribute with the wrong size or shape
 * makes the parse fail with -EBADMSG, as do bytes left over that do not
 * form an attribute. tb[] receives the last occurrence of each type,
 * NULL if absent.
 */
int genl_parse(const struct nlmsghdr *nlh, const struct nlattr **tb,
	       uint16_t max, const enum mnl_attr_data_type *pol);
int genl_parse_nested(const struct nlattr *nest, const struct nlattr **tb,
		      uint16_t max, const enum mnl_attr_data_type *pol);
/*
 * After mnl_attr_for_each_nested(@attr, @nest): -EBADMSG when the loop
 * stopped before the end of @nest (a malformed attribute), else 0.
 */
int genl_nested_end(const struct nlattr *attr, const struct nlattr *nest);

#endif /* _INCNN_GENL_H */
