/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * log2 histograms of nanoseconds, as the BPF side fills them
 * (ilock_hist_slot() in include/ilock.h). Pure: no I/O but to a FILE *.
 */
#ifndef ILOCK_HIST_H
#define ILOCK_HIST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ilock.h"

/* Inclusive lower and exclusive upper bound of a slot, in ns. */
uint64_t hist_slot_lo(unsigned slot);
uint64_t hist_slot_hi(unsigned slot);
uint64_t hist_total(const __u64 *h);

/*
 * The q-quantile (0 < q <= 1), interpolated linearly inside its slot and
 * clamped to max_ns when max_ns is non-zero. The true quantile lies in the
 * same slot, so the estimate is within a factor of 2 of it (see
 * docs/output.md). 0 for an empty histogram.
 */
uint64_t hist_percentile(const __u64 *h, double q, uint64_t max_ns);

/* dst += src */
void stats_merge(struct ilock_stats *dst, const struct ilock_stats *src);
/*
 * out = cur - prev, for cumulative stats read twice. Counts saturate at 0.
 * The interval's max is exact when it rose; otherwise it is bounded by the
 * top non-empty slot of the difference and the previous max. Returns true
 * when out->max_ns is such a bound, not a wait's length.
 */
bool stats_delta(struct ilock_stats *out, const struct ilock_stats *cur,
		 const struct ilock_stats *prev);
uint64_t stats_percentile(const struct ilock_stats *s, double q);

/* Two histograms side by side, only the rows where either has data. */
void hist_print_pair(FILE *f, const char *title_a, const __u64 *a,
		     const char *title_b, const __u64 *b, int indent);

#endif
