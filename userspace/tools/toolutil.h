/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Small helpers shared by the incnn command-line tools, one file per
 * concern; this header includes them all, so a tool includes only it:
 *
 *	tu_base.h	exit statuses, tu_error(), ARRAY_SIZE, __printf
 *	tu_parse.h	strict parsing of numbers and error bounds
 *	tu_io.h		whole-buffer reads and writes
 *	tu_crc32.h	CRC-32
 *	tu_json.h	JSON output
 *	tu_time.h	monotonic and CPU clocks
 *	tu_codec.h	codec names and labels, encoder scratch
 *	tu_opts.h	shared command-line options
 *	tu_launch.h	the local job launcher
 *	tu_bytes.h	little-endian loads and stores, fp32 bits
 */
#ifndef INCNN_TOOLUTIL_H
#define INCNN_TOOLUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "tu_base.h"
#include "tu_bytes.h"
#include "tu_codec.h"
#include "tu_crc32.h"
#include "tu_io.h"
#include "tu_json.h"
#include "tu_launch.h"
#include "tu_opts.h"
#include "tu_parse.h"
#include "tu_time.h"

#endif /* INCNN_TOOLUTIL_H */
