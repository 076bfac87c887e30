// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The communicator's configuration: each setting from struct
 * incnn_comm_config when set there, else from the environment, else its
 * default, then range-checked (one table for the plain numbers).
 */
#include <arpa/inet.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "coll.h"

static const char *cm_env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* A whole-string integer in [min, max] (decimal, or 0x hex). */
static int cm_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || end == s || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * The optional numeric settings: struct incnn_comm_config field (set when
 * >= @set_min), environment variable, valid range (for both), default.
 */
struct cm_num {
	const char *env;
	const char *what;	/* in messages */
	const char *range;	/* "0..255" */
	size_t cfg_off;		/* in struct incnn_comm_config */
	bool cfg_size_t;	/* that field is a size_t, else an int */
	size_t k_off;		/* in struct coll_cfg (same type) */
	long set_min, min, max, def;
};

#define CM_NUM(e, w, r, field, sz, lo_set, lo, hi, d)			\
	{ .env = e, .what = w, .range = r,				\
	  .cfg_off = offsetof(struct incnn_comm_config, field),		\
	  .cfg_size_t = sz, .k_off = offsetof(struct coll_cfg, field),	\
	  .set_min = lo_set, .min = lo, .max = hi, .def = d }

static const struct cm_num cm_nums[] = {
	CM_NUM("INCNN_TOS", "tos", "0..255", tos, false, 0, 0, 255,
	       INCNN_COLL_DEFAULT_TOS),
	CM_NUM("INCNN_CHUNK", "chunk size", "4..2^30 bytes", chunk_bytes,
	       true, 1, 4, 1L << 30, INCNN_COLL_DEFAULT_CHUNK),
	CM_NUM("INCNN_TIMEOUT_MS", "timeout", "1..86400000 ms", timeout_ms,
	       false, 1, 1, 86400000, INCNN_COLL_DEFAULT_TIMEOUT_MS),
	CM_NUM("INCNN_INIT_TIMEOUT_MS", "init timeout", "1..86400000 ms",
	       init_timeout_ms, false, 1, 1, 86400000,
	       INCNN_COLL_DEFAULT_INIT_TIMEOUT_MS),
	CM_NUM("INCNN_THC_BITS", "THC bits", "1..8", thc_bits, false, 1, 1,
	       8, 4),
	CM_NUM("INCNN_THC_GRAN", "THC granularity", "1..255", thc_gran,
	       false, 1, 1, 255, 30),
	CM_NUM("INCNN_GVQ_D", "GradiVeQ slice size d", "2..1024", gvq_d,
	       false, 1, 2, 1024, 256),
	CM_NUM("INCNN_GVQ_K", "GradiVeQ compressed size k", "1..1023", gvq_k,
	       false, 1, 1, 1023, 32),
	CM_NUM("INCNN_GVQ_WARMUP", "GradiVeQ warm-up", "0..2147483647",
	       gvq_warmup, false, 0, 0, 0x7fffffffL, 1000),
	CM_NUM("INCNN_GVQ_TS", "GradiVeQ T_s", "2..4096", gvq_ts, false, 1, 2,
	       4096, 100),
	CM_NUM("INCNN_GVQ_TC", "GradiVeQ T_c", "1..2147483647", gvq_tc, false,
	       1, 1, 0x7fffffffL, 400),
	CM_NUM("INCNN_GVQ_FC", "GradiVeQ fully-connected layers", "0..1",
	       gvq_fc, false, 0, 0, 1, 0),
	CM_NUM("INCNN_SOCKBUF", "socket buffer", "0..2^30 bytes", sockbuf,
	       false, 0, 0, 1L << 30, INCNN_COLL_DEFAULT_SOCKBUF),
};

static int cm_resolve_num(const struct cm_num *n,
			  const struct incnn_comm_config *cfg,
			  struct coll_cfg *k, char *err, size_t errlen)
{
	const char *c = (const char *)cfg + n->cfg_off;
	char *out = (char *)k + n->k_off;
	long v;

	v = n->cfg_size_t ? (long)*(const size_t *)c : *(const int *)c;
	if (v < n->set_min) {
		if (!cm_env(n->env)) {
			v = n->def;
		} else if (cm_parse_long(cm_env(n->env), n->min, n->max,
					 &v)) {
			incnn_coll_msg(err, errlen, "%s=%s: want %s", n->env,
				       cm_env(n->env), n->range);
			return -EINVAL;
		}
	}
	if (v < n->min || v > n->max) {
		incnn_coll_msg(err, errlen, "%s %ld is out of range %s", n->what, v,
			       n->range);
		return -EINVAL;
	}
	if (n->cfg_size_t)
		*(size_t *)out = (size_t)v;
	else
		*(int *)out = (int)v;
	return 0;
}

/* A required count: from @set (>= 0) or @env; 0 or -EINVAL. */
static int cm_required(int set, const char *env, long *v, char *err,
		       size_t errlen)
{
	if (set >= 0) {
		*v = set;
		return 0;
	}
	if (!cm_parse_long(cm_env(env), 0, LONG_MAX, v))
		return 0;
	incnn_coll_msg(err, errlen, "%s is %s", env,
		       cm_env(env) ? "not a number" : "not set");
	return -EINVAL;
}

static int cm_resolve_ranks(const struct incnn_comm_config *cfg,
			    struct coll_cfg *k, char *err, size_t errlen)
{
	long v;

	if (cm_required(cfg->world_size, "WORLD_SIZE", &v, err, errlen))
		return -EINVAL;
	if (v < 1 || v > INCNN_COLL_MAX_WORLD) {
		incnn_coll_msg(err, errlen, "world size %ld is out of range 1..%d", v,
			       INCNN_COLL_MAX_WORLD);
		return -EINVAL;
	}
	k->world = (int)v;
	if (cm_required(cfg->rank, "RANK", &v, err, errlen))
		return -EINVAL;
	if (v >= k->world) {
		incnn_coll_msg(err, errlen, "rank %ld is out of range for world size %d",
			       v, k->world);
		return -EINVAL;
	}
	k->rank = (int)v;
	if (k->store_fd >= 0 && k->rank != 0) {
		incnn_coll_msg(err, errlen, "store_fd is for rank 0 only");
		return -EINVAL;
	}
	return 0;
}

/* The store's address from a launcher's listening socket. */
static int cm_master_from_fd(struct coll_cfg *k, char *err, size_t errlen)
{
	socklen_t len = sizeof(k->master);

	if (getsockname(k->store_fd, &k->master.sa, &len) ||
	    (k->master.sa.sa_family != AF_INET &&
	     k->master.sa.sa_family != AF_INET6)) {
		incnn_coll_msg(err, errlen, "store_fd is not an IPv4 or IPv6 socket");
		return -EINVAL;
	}
	if (coll_sa_is_any(&k->master))
		coll_sa_set_host(&k->master, true);
	return 0;
}

static int cm_resolve_master(const struct incnn_comm_config *cfg,
			     struct coll_cfg *k, char *err, size_t errlen)
{
	const char *addr = cfg->master_addr ? cfg->master_addr :
			   cm_env("MASTER_ADDR");
	char msg[COLL_MSG_LEN - 16];
	long v;
	int ret;

	if (k->store_fd >= 0 && !addr && cfg->master_port < 0)
		return cm_master_from_fd(k, err, errlen);
	if (cfg->master_port >= 0) {
		v = cfg->master_port;
	} else if (cm_parse_long(cm_env("MASTER_PORT"), 0, 65535, &v)) {
		incnn_coll_msg(err, errlen, "MASTER_PORT is %s",
			       cm_env("MASTER_PORT") ? "not a port number" : "not set");
		return -EINVAL;
	}
	if (v < 1 || v > 65535) {
		incnn_coll_msg(err, errlen, "master port %ld is out of range 1..65535", v);
		return -EINVAL;
	}
	if (!addr) {
		incnn_coll_msg(err, errlen, "MASTER_ADDR is not set");
		return -EINVAL;
	}
	ret = coll_sa_parse(addr, (uint16_t)v, &k->master, msg, sizeof(msg));
	if (ret)
		incnn_coll_msg(err, errlen, "MASTER_ADDR: %s", msg);
	return ret;
}

/* "auto", "none", "NAME" or "NAME:SETTING" (incnn_codec_spec_parse()) */
static int cm_parse_codec(const char *s, struct coll_cfg *k, char *err,
			  size_t errlen)
{
	const struct incnn_codec *codec;
	unsigned int id, param;
	char name[32], range[32];

	if (!strcmp(s, "auto")) {
		k->codec_mode = INCNN_COLL_CODEC_AUTO;
		return 0;
	}
	if (!strcmp(s, "none")) {
		k->codec_mode = INCNN_COLL_CODEC_NONE;
		return 0;
	}
	if (!incnn_codec_spec_parse(s, &id, &param)) {
		k->codec_mode = INCNN_COLL_CODEC_EMULATE;
		k->codec_id = id;
		k->codec_param = param;
		return 0;
	}
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(s, ":"), s);
	codec = incnn_codec_find(name);
	if (!codec) {
		incnn_coll_msg(err, errlen,
			       "INCNN_CODEC=%s: want auto, none or NAME[:SETTING] (e.g. ebq:2^-10, trunc:16)",
			       s);
		return -EINVAL;
	}
	incnn_coll_msg(err, errlen, "INCNN_CODEC=%s: %s takes %s %s", s,
		       codec->name,
		       incnn_codec_param_key(codec->param.kind) ?: "parameter",
		       incnn_codec_param_range(&codec->param, range,
					       sizeof(range)));
	return -EINVAL;
}

static int cm_resolve_codec(const struct incnn_comm_config *cfg,
			    struct coll_cfg *k, char *err, size_t errlen)
{
	const struct incnn_codec *c;
	int ret;

	k->codec_mode = cfg->codec_mode;
	k->codec_id = cfg->codec_id;
	k->codec_param = cfg->codec_param;
	if (cfg->codec_mode == INCNN_COLL_CODEC_AUTO && cm_env("INCNN_CODEC")) {
		ret = cm_parse_codec(cm_env("INCNN_CODEC"), k, err, errlen);
		if (ret)
			return ret;
	}
	c = incnn_codec_get(k->codec_id);
	if (k->codec_mode == INCNN_COLL_CODEC_EMULATE && c && !c->lossy &&
	    !incnn_codec_check_param(c, (u8)k->codec_param))
		k->codec_mode = INCNN_COLL_CODEC_NONE;	/* lz4: values exact */
	if (k->codec_mode == INCNN_COLL_CODEC_EMULATE &&
	    incnn_coll_codec_check(k->codec_id, k->codec_param)) {
		incnn_coll_codec_why(k->codec_id, k->codec_param, err, errlen);
		return -EINVAL;
	}
	if (k->codec_mode > INCNN_COLL_CODEC_EMULATE) {
		incnn_coll_msg(err, errlen, "unknown codec mode %d", (int)k->codec_mode);
		return -EINVAL;
	}
	return 0;
}

/* GradiVeQ's loss threshold: (0, 1] or +inf (off), default 0.01 */
static int cm_resolve_gvq_eps(const struct incnn_comm_config *cfg,
			      struct coll_cfg *k, char *err, size_t errlen)
{
	const char *s = cm_env("INCNN_GVQ_EPS");
	char *end;
	double v = cfg->gvq_eps;

	if (v == 0 && s && !strcmp(s, "off")) {
		v = INFINITY;
	} else if (v == 0 && s) {
		errno = 0;
		v = strtod(s, &end);
		if (errno || *end || end == s || !(v > 0 && v <= 1)) {
			incnn_coll_msg(err, errlen, "INCNN_GVQ_EPS=%s: want a number in (0, 1] or off",
				       s);
			return -EINVAL;
		}
	}
	if (v == 0)
		v = 0.01;
	if (!(v > 0 && v <= 1) && !(isinf(v) && v > 0)) {
		incnn_coll_msg(err, errlen, "GradiVeQ loss threshold %g is out of range (0, 1] (or +inf: off)",
			       v);
		return -EINVAL;
	}
	k->gvq_eps = v;
	return 0;
}

/* An on/off setting: the field (-1 unset), else @env's word, else @def */
static int cm_resolve_switch(int v, const char *env, const char *on,
			     const char *off, int def, const char *what,
			     int *out, char *err, size_t errlen)
{
	const char *s = cm_env(env);

	if (v < 0 && s) {
		if (!strcmp(s, on) || !strcmp(s, "1"))
			v = 1;
		else if (!strcmp(s, off) || !strcmp(s, "0"))
			v = 0;
		else {
			incnn_coll_msg(err, errlen, "%s=%s: want %s or %s", env, s, on,
				       off);
			return -EINVAL;
		}
	}
	if (v < 0)
		v = def;
	if (v > 1) {
		incnn_coll_msg(err, errlen, "%s %d is out of range 0..1", what, v);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int cm_resolve_bucket(const struct incnn_comm_config *cfg,
			     struct coll_cfg *k, char *err, size_t errlen)
{
	int ret = cm_resolve_switch(cfg->scale, "INCNN_SCALE", "auto", "off",
				    INCNN_COLL_DEFAULT_SCALE, "scale",
				    &k->scale, err, errlen);

	return ret ? ret : cm_resolve_switch(cfg->error_feedback,
					     "INCNN_ERROR_FEEDBACK", "on",
					     "off", INCNN_COLL_DEFAULT_EF,
					     "error_feedback",
					     &k->error_feedback, err, errlen);
}

/* "none", "thc", "gradiveq"; THC/GradiVeQ force ToS 0 (unmarked) */
static int cm_resolve_method(const struct incnn_comm_config *cfg,
			     struct coll_cfg *k, char *err, size_t errlen)
{
	static const char *const names[] = { "", "none", "thc", "gradiveq" };
	const char *s = cm_env("INCNN_METHOD");
	unsigned int m = cfg->method;

	if (m == INCNN_COLL_METHOD_UNSET && s) {
		for (m = INCNN_COLL_METHOD_NONE;
		     m <= INCNN_COLL_METHOD_GRADIVEQ; m++)
			if (!strcmp(s, names[m]))
				break;
		if (m > INCNN_COLL_METHOD_GRADIVEQ) {
			incnn_coll_msg(err, errlen,
				       "INCNN_METHOD=%s: want none, thc or gradiveq", s);
			return -EINVAL;
		}
	}
	if (m == INCNN_COLL_METHOD_UNSET)
		m = INCNN_COLL_METHOD_NONE;
	if (m > INCNN_COLL_METHOD_GRADIVEQ) {
		incnn_coll_msg(err, errlen, "unknown method %u", m);
		return -EINVAL;
	}
	/*
	 * GradiVeQ: an emulated codec quantises its uncompressed calls only
	 * (gvq_comm.c); its sockets are unmarked, so no module rule.
	 */
	if (m == INCNN_COLL_METHOD_GRADIVEQ &&
	    k->codec_mode != INCNN_COLL_CODEC_EMULATE)
		k->codec_mode = INCNN_COLL_CODEC_NONE;
	k->method = (enum incnn_coll_method)m;
	if (m != INCNN_COLL_METHOD_NONE)
		k->tos = 0;	/* not fp32 streams: never marked */
	return 0;
}

int incnn_coll_config_resolve(const struct incnn_comm_config *cfg,
			      struct coll_cfg *k, char *err, size_t errlen)
{
	const char *s;
	int ret;

	memset(k, 0, sizeof(*k));
	k->store_fd = cfg->store_fd;
	ret = cm_resolve_ranks(cfg, k, err, errlen);
	if (!ret)
		ret = cm_resolve_master(cfg, k, err, errlen);
	if (ret)
		return ret;
	k->have_master = true;

	s = cfg->data_addr ? cfg->data_addr : cm_env("INCNN_DATA_ADDR");
	if (s) {
		char msg[COLL_MSG_LEN - 24];

		if (coll_sa_parse(s, 0, &k->data, msg, sizeof(msg))) {
			incnn_coll_msg(err, errlen, "data address: %s", msg);
			return -EINVAL;
		}
		k->have_data = true;
	}
	for (size_t i = 0; i < sizeof(cm_nums) / sizeof(cm_nums[0]); i++) {
		ret = cm_resolve_num(&cm_nums[i], cfg, k, err, errlen);
		if (ret)
			return ret;
	}
	ret = cm_resolve_codec(cfg, k, err, errlen);
	if (!ret)
		ret = cm_resolve_gvq_eps(cfg, k, err, errlen);
	if (!ret)
		ret = cm_resolve_bucket(cfg, k, err, errlen);
	return ret ? ret : cm_resolve_method(cfg, k, err, errlen);
}

void incnn_comm_config_init(struct incnn_comm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->master_port = -1;
	cfg->rank = -1;
	cfg->world_size = -1;
	cfg->store_fd = -1;
	cfg->tos = -1;
	cfg->sockbuf = -1;
	cfg->gvq_warmup = -1;
	cfg->gvq_fc = -1;
	cfg->scale = -1;
	cfg->error_feedback = -1;
	cfg->codec_mode = INCNN_COLL_CODEC_AUTO;
}
