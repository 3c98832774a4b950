/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reading the wait and pair slots (struct ilock_wait_slot, ilock_edge_slot)
 * straight from their memory-mapped arrays. Pure: the unit tests run it
 * over plain memory.
 */
#ifndef ILOCK_SLOTS_H
#define ILOCK_SLOTS_H

#include <stddef.h>
#include <stdint.h>

struct slot_region {
	const void *base;   /* slot 0; NULL: not mapped */
	size_t stride;      /* bytes per slot */
	size_t key_size;    /* the stats follow the key, count first */
	uint32_t max;       /* slots in the array */
};

/* Called with the key and stats of a slot in use; negative stops the scan. */
typedef int (*slot_fn)(void *ctx, const void *key, const void *stats);

/*
 * Call fn for every slot below used (the BPF side's claim counter, which
 * can run past max by the claims that found the array full) whose count is
 * non-zero, in slot order. Returns the first negative fn return, else 0.
 * The stats are live memory that the BPF programs keep adding to: every
 * field only grows, so a read mixes older and newer values, never wrong
 * ones, and the next read catches up.
 */
int slots_scan(const struct slot_region *r, uint32_t used, slot_fn fn, void *ctx);

#endif
