/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the tools built on the collective library (incnn-allreduce,
 * incnn-train) share about it. Header-only: the other tools link
 * the toolutil helpers (tu_*.c) too, and need not pull the library in.
 */
#ifndef INCNN_COMMUTIL_H
#define INCNN_COMMUTIL_H

#include <string.h>

#include "codec.h"
#include <incnn/collective.h>

/*
 * incnn_comm_config_init() and the options the tools share: the data
 * sockets' ToS, the no-progress timeout and --codec: @codec_name NULL or
 * "auto": the module's rule for the ToS; "none" or a lossless codec: no
 * emulation; else emulate @codec with @param.
 */
static inline void tu_comm_config(struct incnn_comm_config *cfg, int tos,
				  int timeout_ms, const char *codec_name,
				  const struct incnn_codec *codec,
				  unsigned int param)
{
	incnn_comm_config_init(cfg);
	cfg->tos = tos;
	cfg->timeout_ms = timeout_ms;
	if (!codec_name || !strcmp(codec_name, "auto")) {
		cfg->codec_mode = INCNN_COLL_CODEC_AUTO;
	} else if (!strcmp(codec_name, "none") || !codec->lossy) {
		cfg->codec_mode = INCNN_COLL_CODEC_NONE;
	} else {
		cfg->codec_mode = INCNN_COLL_CODEC_EMULATE;
		cfg->codec_id = codec->id;
		cfg->codec_param = param;
	}
}

/*
 * Rank @rank of @world of a local job: tu_launch_local()'s callback
 * arguments into @cfg (after tu_comm_config()).
 */
static inline void tu_comm_local(struct incnn_comm_config *cfg, int rank,
				 int world, int port, int store_fd)
{
	cfg->master_addr = "127.0.0.1";
	cfg->master_port = port;
	cfg->rank = rank;
	cfg->world_size = world;
	cfg->store_fd = store_fd;
}

#endif /* INCNN_COMMUTIL_H */
