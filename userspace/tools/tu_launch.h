/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* The launcher of local jobs: every rank a process on 127.0.0.1. */
#ifndef INCNN_TU_LAUNCH_H
#define INCNN_TU_LAUNCH_H

#include "tu_base.h"

/*
 * One rank of a local job (tu_launch_local()), in its own process:
 * rank @rank of @world, the store on 127.0.0.1:@port; @store_fd is the
 * store's listening socket for rank 0, -1 for the others. Returns the
 * rank's exit status.
 */
typedef int tu_rank_fn(void *arg, int rank, int world, int port,
		       int store_fd);

/*
 * Launch @world ranks as processes on 127.0.0.1: bind a listening socket
 * on a free port for rank 0's store, fork, run @fn in every child (the
 * ranks other than 0 with stderr on /dev/null: rank 0 reports the job's
 * error) and exit() with its result; wait for all of them. Returns the
 * first non-zero exit status in rank order (TU_EXIT_RUNTIME when a rank
 * died of a signal, which is reported), or 0.
 */
int tu_launch_local(const char *prog, int world, tu_rank_fn *fn, void *arg);

#endif /* INCNN_TU_LAUNCH_H */
