/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Forced first (-include) into the userspace build of kmod/codec: what
 * codec.h and frame.h declare is part of libincnn.so's API (the build
 * uses -fvisibility=hidden), without marking the kernel's headers.
 */
#pragma GCC visibility push(default)
#include "frame.h"
#pragma GCC visibility pop
