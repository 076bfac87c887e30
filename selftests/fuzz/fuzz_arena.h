/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exact-size buffers for the harnesses, without malloc().
 *
 * A run of fuzz_codec used to make ten malloc()s: with ASan's allocator,
 * its stack depot and the page faults of its quarantine, a quarter of the
 * run. Here every buffer of a run has its own slot: a static arena that
 * AddressSanitizer keeps poisoned except for the one buffer it hands out.
 * The buffer starts FUZZ_SLOT_RED bytes into its slot (8-byte aligned, so
 * the granule before it is poisoned and a read before it traps) and ends
 * exactly at its last byte (ASan's shadow marks the partial last granule),
 * so a read or write one byte past it traps as it would past a malloc()ed
 * one ("use-after-poison" instead of "heap-buffer-overflow"). Handing out
 * a slot's next buffer poisons the previous one again. Every buffer is
 * filled first (0xbe like ASan's malloc fill, or zero like calloc) so that
 * no run sees what an earlier one left there.
 */
#ifndef FUZZ_ARENA_H
#define FUZZ_ARENA_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sanitizer/asan_interface.h>

#define FUZZ_SLOTS	8
#define FUZZ_SLOT_RED	64
#define FUZZ_SLOT_SIZE	(1024 * 1024)
/* the largest buffer: inputs above FUZZ_MAX_INPUT are skipped */
#define FUZZ_BUF_MAX	(FUZZ_SLOT_SIZE - FUZZ_SLOT_RED)
#define FUZZ_MAX_INPUT	(FUZZ_BUF_MAX / 3)
#define FUZZ_FILL	0xbe

static _Alignas(64) uint8_t fuzz_arena[FUZZ_SLOTS][FUZZ_SLOT_SIZE];
static size_t fuzz_live[FUZZ_SLOTS];

/* @n bytes of slot @slot, all set to @fill, the rest of the slot poisoned */
static inline uint8_t *fuzz_buf(unsigned int slot, size_t n, int fill)
{
	static int ready;
	uint8_t *p;

	if (!ready) {
		ASAN_POISON_MEMORY_REGION(fuzz_arena, sizeof(fuzz_arena));
		ready = 1;
	}
	if (slot >= FUZZ_SLOTS || n > FUZZ_BUF_MAX) {
		fprintf(stderr, "fuzz_buf: slot %u, %zu bytes: harness bug\n",
			slot, n);
		abort();
	}
	p = fuzz_arena[slot] + FUZZ_SLOT_RED;
	/* whole granules: the previous buffer's partial last one too */
	ASAN_POISON_MEMORY_REGION(p, (fuzz_live[slot] + 7) & ~(size_t)7);
	ASAN_UNPOISON_MEMORY_REGION(p, n);
	fuzz_live[slot] = n;
	memset(p, fill, n);
	return p;
}

/*
 * The harness's ASan defaults (ASAN_OPTIONS still overrides them). Only
 * libFuzzer itself calls malloc() now: its copy of every input went
 * through a 256 MiB quarantine (a fresh page, a page fault and a 0xbe
 * fill per run), and the stack of every allocation into the depot.
 */
const char *__asan_default_options(void)
{
	return "quarantine_size_mb=0:malloc_context_size=0";
}

#endif
