/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The codec library compiles unchanged into the kernel module and into
 * userspace. This header maps the few kernel types and helpers it uses.
 */
#ifndef _INCNN_CODEC_COMPAT_H
#define _INCNN_CODEC_COMPAT_H

#ifdef __KERNEL__

#include <linux/kernel.h>	/* snprintf */
#include <linux/types.h>
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/bitops.h>
#include <linux/lz4.h>
#include <asm/unaligned.h>

#define INCNN_LZ4_SCRATCH	LZ4_MEM_COMPRESS

static inline int incnn_lz4_compress(void *scratch, const u8 *in, int len,
				     u8 *out, int cap)
{
	return LZ4_compress_default((const char *)in, (char *)out, len, cap,
				    scratch);
}

static inline int incnn_lz4_decompress(const u8 *in, int len, u8 *out,
				       int cap)
{
	return LZ4_decompress_safe((const char *)in, (char *)out, len, cap);
}

static inline int incnn_lz4_bound(int len)
{
	return LZ4_COMPRESSBOUND(len);
}

#else /* userspace */

#include <assert.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/types.h>
#include <sys/cdefs.h>	/* glibc's __always_inline */

/* the same types as <stdint.h>'s uint8_t .. uint64_t */
typedef __UINT8_TYPE__ u8;
typedef __UINT16_TYPE__ u16;
typedef __UINT32_TYPE__ u32;
typedef __UINT64_TYPE__ u64;
typedef __INT32_TYPE__ s32;

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "userspace build of the codec library assumes a little-endian host"
#endif

#ifndef __always_unused
#define __always_unused	__attribute_maybe_unused__	/* <sys/cdefs.h> */
#endif
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#ifndef fallthrough
#define fallthrough	__attribute__((__fallthrough__))
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

static inline u16 get_unaligned_le16(const void *p)
{
	u16 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline u32 get_unaligned_le32(const void *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline u16 get_unaligned_be16(const void *p)
{
	return __builtin_bswap16(get_unaligned_le16(p));
}

static inline void put_unaligned_le16(u16 v, void *p)
{
	memcpy(p, &v, sizeof(v));
}

static inline void put_unaligned_le32(u32 v, void *p)
{
	memcpy(p, &v, sizeof(v));
}

static inline void put_unaligned_be16(u16 v, void *p)
{
	put_unaligned_le16(__builtin_bswap16(v), p);
}

/* the kernel's generic software popcount (no popcnt in baseline x86-64) */
static inline unsigned int hweight32(unsigned int w)
{
	w -= (w >> 1) & 0x55555555;
	w = (w & 0x33333333) + ((w >> 2) & 0x33333333);
	w = (w + (w >> 4)) & 0x0f0f0f0f;
	return (w * 0x01010101) >> 24;
}

static inline unsigned int hweight8(unsigned int w)
{
	return hweight32(w & 0xff);
}

static inline int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

/* liblz4 behind the kernel's interface: userspace/lib/lz4_glue.c */
#define INCNN_LZ4_SCRATCH	16416	/* >= LZ4_sizeofState() */
int incnn_lz4_compress(void *scratch, const u8 *in, int len, u8 *out,
		       int cap);
int incnn_lz4_decompress(const u8 *in, int len, u8 *out, int cap);
int incnn_lz4_bound(int len);

#endif /* __KERNEL__ */

#endif /* _INCNN_CODEC_COMPAT_H */
