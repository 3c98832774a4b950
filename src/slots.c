// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "slots.h"

int slots_scan(const struct slot_region *r, uint32_t used, slot_fn fn, void *ctx)
{
	uint32_t n = used < r->max ? used : r->max;

	if (!r->base)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		const char *slot = (const char *)r->base + (size_t)i * r->stride;
		const void *stats = slot + r->key_size;
		int err;

		/*
		 * Acquire: the key was written before the slot was indexed,
		 * hence before any count; seeing a count means seeing the key.
		 */
		if (!__atomic_load_n((const uint64_t *)stats, __ATOMIC_ACQUIRE))
			continue;  /* not counted into yet, or lost an insert race */
		err = fn(ctx, slot, stats);
		if (err < 0)
			return err;
	}
	return 0;
}
