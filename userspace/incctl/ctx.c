// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incctl's connection to the kernel: network namespace, socket, family,
 * and how failures are reported.
 */
#include "incctl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#define NETNS_RUN_DIR	"/run/netns"

/* Like "ip -n NAME": a name under /run/netns, or a path if it has a '/'. */
static int netns_enter(const char *name, bool quiet)
{
	char path[PATH_MAX];
	int fd;

	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "%s/%s", NETNS_RUN_DIR, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (quiet)
			return EXIT_FAIL;
		fprintf(stderr, "incctl: cannot open network namespace \"%s\": %s\n",
			name, strerror(errno));
		return EXIT_FAIL;
	}
	if (setns(fd, CLONE_NEWNET) < 0) {
		if (quiet) {
			close(fd);
			return EXIT_FAIL;
		}
		fprintf(stderr, "incctl: cannot enter network namespace \"%s\": %s\n",
			name, strerror(errno));
		close(fd);
		return EXIT_FAIL;
	}
	close(fd);
	return 0;
}

/* incctl_connect(), or with @quiet nothing printed on failure */
static int ctx_connect(struct incctl *c, bool quiet)
{
	int err;

	if (c->connected)
		return 0;
	if (c->netns && netns_enter(c->netns, quiet))
		return EXIT_FAIL;
	err = genl_open(&c->nl);
	if (err) {
		if (!quiet)
			fprintf(stderr, "incctl: cannot open a generic netlink socket: %s\n",
				strerror(-err));
		return EXIT_FAIL;
	}
	c->connected = true;
	err = genl_resolve(&c->nl, INCNN_GENL_NAME);
	if (err && !quiet) {
		if (err == -ENOENT)
			fputs("incctl: kernel module not loaded (modprobe incnn)\n",
			      stderr);
		else
			incctl_fail(c, err);
	}
	if (err) {
		incctl_disconnect(c);
		return EXIT_FAIL;
	}
	return 0;
}

int incctl_connect(struct incctl *c)
{
	return ctx_connect(c, false);
}

int incctl_connect_quiet(struct incctl *c)
{
	return ctx_connect(c, true);
}

void incctl_disconnect(struct incctl *c)
{
	if (c->connected)
		genl_close(&c->nl);
	c->connected = false;
}

struct nlmsghdr *incctl_msg(struct incctl *c, uint8_t cmd, uint16_t flags)
{
	return genl_request(&c->nl, c->nl.family, cmd, INCNN_GENL_VERSION,
			    flags);
}

int incctl_fail(struct incctl *c, int err)
{
	const struct genl *g = &c->nl;

	if (err == -EPERM)
		fputs("incctl: permission denied (need CAP_NET_ADMIN)\n",
		      stderr);
	else if (g->msg[0])
		fprintf(stderr, "incctl: %s\n", g->msg);
	else if (err == -EBADMSG)
		fputs("incctl: malformed reply from the kernel\n", stderr);
	else if (g->miss_type >= 0)
		fprintf(stderr, "incctl: %s (attribute %d missing)\n",
			strerror(-err), g->miss_type);
	else
		fprintf(stderr, "incctl: %s\n", strerror(-err));
	return EXIT_FAIL;
}

int incctl_talk(struct incctl *c, struct nlmsghdr *nlh, genl_cb_t cb,
		void *data)
{
	int err = genl_talk(&c->nl, nlh, cb, data);

	if (err)
		return incctl_fail(c, err);
	if (c->nl.msg[0])
		fprintf(stderr, "incctl: warning: %s\n", c->nl.msg);
	if (c->nl.dump_intr)
		fputs("incctl: warning: the dump was interrupted by a change and may be inconsistent\n",
		      stderr);
	return 0;
}

const char *incctl_codec_name(const struct incctl *c, unsigned int id)
{
	return codec_name(&c->kcodecs, id);
}
