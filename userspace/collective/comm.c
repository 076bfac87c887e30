// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The communicator's lifecycle: create (configuration from config.c,
 * rendezvous through the store client, data connections from link.c),
 * destroy; its errors are err.c's.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll.h"

const char *incnn_comm_strerror(const struct incnn_comm *c)
{
	return c ? c->errmsg : "no communicator";
}

int incnn_comm_rank(const struct incnn_comm *c)
{
	return c->rank;
}

int incnn_comm_size(const struct incnn_comm *c)
{
	return c->world;
}

void incnn_comm_codec(const struct incnn_comm *c, unsigned int *codec_id,
		      unsigned int *codec_param)
{
	if (codec_id)
		*codec_id = c->codec.id;
	if (codec_param)
		*codec_param = c->codec.param;
}

/* --- lifecycle ---------------------------------------------------------- */
static void cm_teardown(struct incnn_comm *c)
{
	int w;

	if (c->store.fd >= 0) {
		char drain[256];

		if (!c->err) {
			incnn_coll_store_send(c, COLL_MSG_BYE, NULL, 0);
		} else if (!incnn_coll_msg_append(&c->store.out, COLL_MSG_BYE, NULL, 0)) {
			incnn_coll_buf_flush(c->store.fd, &c->store.out);
		}
		/* nothing unread: close with a FIN, not a reset */
		while (recv(c->store.fd, drain, sizeof(drain), MSG_DONTWAIT) > 0)
			;
		close(c->store.fd);
		c->store.fd = -1;
	}
	if (c->err) {
		incnn_coll_reset_data(c);
	} else {
		if (c->link.ring_send_fd >= 0)
			close(c->link.ring_send_fd);
		if (c->link.ring_recv_fd >= 0)
			close(c->link.ring_recv_fd);
		if (c->link.ps_fd >= 0)
			close(c->link.ps_fd);
		if (c->link.ps_fds)
			for (w = 0; w < c->world; w++)
				if (c->link.ps_fds[w] >= 0)
					close(c->link.ps_fds[w]);
	}
	if (c->link.listen_fd >= 0)
		close(c->link.listen_fd);
	if (c->store.server)
		incnn_coll_server_stop(c->store.server, c->timeout_ms);
	incnn_coll_q_free(&c->codec.q);
	incnn_coll_thc_free(c);
	incnn_coll_gvq_free(c);
	incnn_coll_bk_free(c);
	incnn_coll_buf_free(&c->store.in);
	incnn_coll_buf_free(&c->store.out);
	incnn_coll_buf_free(&c->store.result);
	incnn_coll_buf_free(&c->store.welcome);
	free(c->link.ps_fds);
	free(c->stage);
	free(c->wfbp.stage);
	free(c);
}

void incnn_comm_destroy(struct incnn_comm *c)
{
	if (c)
		cm_teardown(c);
}

static int cm_store_listen(const struct coll_cfg *k, int *out, char *err,
			   size_t errlen)
{
	union coll_sa a = k->master;
	int one = 1, fd, e;
	char where[COLL_ADDR_STRLEN];

	fd = socket(a.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	e = bind(fd, &a.sa, coll_sa_len(&a)) ? errno : 0;
	if (e == EADDRNOTAVAIL) {
		/* MASTER_ADDR is not ours (NAT, a load balancer): any */
		coll_sa_set_host(&a, false);
		e = bind(fd, &a.sa, coll_sa_len(&a)) ? errno : 0;
	}
	if (!e && listen(fd, 4 * k->world + 16))
		e = errno;
	if (e) {
		close(fd);
		incnn_coll_msg(err, errlen, "rank 0 cannot serve the store on %s: %s",
			       incnn_coll_addr_str(&k->master, where, sizeof(where)),
			       strerror(e));
		return -e;
	}
	*out = fd;
	return 0;
}

/* A communicator with the resolved settings, no connections yet. */
static struct incnn_comm *cm_new(const struct coll_cfg *k,
				 const struct incnn_comm_config *cfg)
{
	struct incnn_comm *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->rank = k->rank;
	c->world = k->world;
	c->tos = k->tos;
	c->chunk = k->chunk_bytes / 4;
	c->timeout_ms = k->timeout_ms;
	c->init_timeout_ms = k->init_timeout_ms;
	c->sockbuf = k->sockbuf;
	c->store.fd = c->link.listen_fd = -1;
	c->link.ring_send_fd = c->link.ring_recv_fd = c->link.ps_fd = -1;
	c->fault.kind = cfg->fault;
	c->fault.after = cfg->fault_after;
	c->fault.stall_ms = cfg->fault_stall_ms;
	c->bk.scale = k->scale;
	c->bk.ef = k->error_feedback;
	return c;
}

/* Rank 0: the aggregator's link slots, and the store thread. */
static int cm_start_store(struct incnn_comm *c, const struct coll_cfg *k)
{
	int ret, r, lfd = k->store_fd;

	c->link.ps_fds = malloc(sizeof(int) * (size_t)c->world);
	if (!c->link.ps_fds) {
		if (lfd >= 0)
			close(lfd);
		return incnn_coll_fail(c, -ENOMEM, true, "out of memory");
	}
	for (r = 0; r < c->world; r++)
		c->link.ps_fds[r] = -1;
	if (lfd < 0) {
		ret = cm_store_listen(k, &lfd, c->errmsg, sizeof(c->errmsg));
		if (ret) {
			c->err = ret;
			return ret;
		}
	}
	ret = incnn_coll_server_start(&c->store.server, lfd, c->world,
				      c->init_timeout_ms);
	if (ret)
		return incnn_coll_fail(c, ret, true, "cannot start the store: %s",
				       strerror(-ret));
	return 0;
}

/*
 * Join the store: connect, listen for data connections, find our codec
 * (*@codec, *@param: as this host's module or the configuration says)
 * and say HELLO. A rank that failed still says HELLO, then ABORT, so
 * that no rank waits for it.
 */
static int cm_join(struct incnn_comm *c, const struct coll_cfg *k,
		   int64_t deadline, unsigned int *codec, unsigned int *param)
{
	struct coll_hello h = { .version = COLL_PROTO_VERSION };
	uint8_t hello[COLL_HELLO_LEN];
	union coll_sa me;
	int ret;

	ret = incnn_coll_store_connect(c, &k->master, deadline);
	if (!ret)
		ret = incnn_coll_listen_data(c, k, &me);
	if (ret)
		return ret;
	if (k->codec_mode == INCNN_COLL_CODEC_EMULATE) {
		*codec = k->codec_id;
		*param = k->codec_param;
	} else if (k->codec_mode == INCNN_COLL_CODEC_AUTO && c->tos) {
		ret = incnn_coll_rule_lookup(c->tos, codec, param, c->errmsg,
					     sizeof(c->errmsg));
	}
	h.rank = (uint32_t)c->rank;
	h.world = (uint32_t)c->world;
	h.codec = (uint8_t)*codec;
	h.param = (uint8_t)*param;
	h.addr = me;
	coll_hello_encode(&h, hello);
	if (ret) {
		c->err = ret;
		if (!incnn_coll_msg_append(&c->store.out, COLL_MSG_HELLO, hello,
					   sizeof(hello)) &&
		    !incnn_coll_msg_append(&c->store.out, COLL_MSG_ABORT,
					   c->errmsg, strlen(c->errmsg)))
			incnn_coll_buf_flush(c->store.fd, &c->store.out);
		return ret;
	}
	return incnn_coll_store_send(c, COLL_MSG_HELLO, hello, sizeof(hello));
}

/* The job's codec from the WELCOME (@codec, @param: what we reported). */
static int cm_job_codec(struct incnn_comm *c, const struct coll_cfg *k,
			const struct coll_welcome *w, unsigned int codec,
			unsigned int param)
{
	char desc[64];
	int ret;

	c->codec.id = w->codec;
	c->codec.param = w->param;
	c->codec.wire_q = k->codec_mode == INCNN_COLL_CODEC_AUTO && c->tos &&
			  codec && codec == c->codec.id &&
			  param == c->codec.param;
	ret = incnn_coll_q_init(&c->codec.q, c->codec.id, c->codec.param);
	if (ret) {
		incnn_codec_label(c->codec.id, c->codec.param, desc,
				  sizeof(desc));
		return incnn_coll_fail(c, ret, false, "cannot emulate codec %s",
				       desc);
	}
	return 0;
}

/* Link-local peers are reached over the link we reach the store by. */
static void cm_adopt_scopes(struct incnn_comm *c, union coll_sa *addrs)
{
	union coll_sa local;
	socklen_t len = sizeof(local);

	if (getsockname(c->store.fd, &local.sa, &len))
		return;
	for (int r = 0; r < c->world; r++)
		coll_sa_adopt_scope(&addrs[r], &local);
}

/*
 * After HELLO: the WELCOME (every rank joined: the job's token, codec
 * and data addresses), the data connections, READY, and the GO.
 */
static int cm_setup(struct incnn_comm *c, const struct coll_cfg *k,
		    int64_t deadline, unsigned int codec, unsigned int param)
{
	union coll_sa *addrs;
	struct coll_welcome w;
	int ret;

	/* rank 0's store gives up at the deadline and says who is missing;
	 * our own deadline is a fallback for a store that went away */
	ret = incnn_coll_store_wait(c, &c->store.got_welcome,
				    deadline + COLL_GRACE_MS,
				    "waiting for the other ranks to join the store");
	if (ret)
		return ret;
	addrs = calloc((size_t)c->world, sizeof(*addrs));
	if (!addrs)
		return incnn_coll_fail(c, -ENOMEM, false, "out of memory");
	if (coll_welcome_decode(c->store.welcome.p + c->store.welcome.off,
				c->store.welcome.len - c->store.welcome.off,
				(uint32_t)c->world, &w, addrs))
		ret = incnn_coll_fail(c, -EPROTO, false,
				      "malformed WELCOME from the store");
	if (!ret)
		cm_adopt_scopes(c, addrs);
	if (!ret)
		ret = cm_job_codec(c, k, &w, codec, param);
	if (!ret)
		ret = incnn_coll_links_setup(c, w.token, addrs, deadline);
	free(addrs);
	if (ret)
		return ret;
	close(c->link.listen_fd);
	c->link.listen_fd = -1;
	ret = incnn_coll_store_send(c, COLL_MSG_READY, NULL, 0);
	if (ret)
		return ret;
	ret = incnn_coll_store_wait(c, &c->store.got_go, deadline,
				    "waiting for the other ranks to set up their data connections");
	/*
	 * GO, then in the same read a failure of the job: another rank got
	 * GO first, called and failed. The communicator was made; the
	 * failure (kept in c->err) is the next call's.
	 */
	return c->store.got_go ? 0 : ret;
}

int incnn_comm_create(struct incnn_comm **out,
		      const struct incnn_comm_config *cfg, char *err,
		      size_t errlen)
{
	unsigned int codec = 0, param = 0;
	struct incnn_comm *c;
	struct coll_cfg k;
	int64_t deadline;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	*out = NULL;
	if (!cfg) {
		incnn_coll_msg(err, errlen, "no configuration");
		return -EINVAL;
	}
	ret = incnn_coll_config_resolve(cfg, &k, err, errlen);
	if (ret) {
		if (cfg->store_fd >= 0)
			close(cfg->store_fd);
		return ret;
	}
	c = cm_new(&k, cfg);
	if (!c) {
		if (k.store_fd >= 0)
			close(k.store_fd);
		incnn_coll_msg(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = incnn_coll_thc_init(c, &k, err, errlen);
	if (!ret)
		ret = incnn_coll_gvq_init(c, &k, err, errlen);
	if (ret) {
		if (k.store_fd >= 0)
			close(k.store_fd);
		cm_teardown(c);
		return ret;
	}
	deadline = coll_now_ms() + c->init_timeout_ms;
	ret = c->rank == 0 ? cm_start_store(c, &k) : 0;
	if (!ret)
		ret = cm_join(c, &k, deadline, &codec, &param);
	if (!ret)
		ret = cm_setup(c, &k, deadline, codec, param);
	if (!ret) {
		*out = c;
		return 0;
	}
	incnn_coll_msg(err, errlen, "rank %d: %s", c->rank, c->errmsg);
	if (!c->err)
		c->err = ret ? ret : -EIO;
	ret = c->err;
	cm_teardown(c);
	return ret;
}
