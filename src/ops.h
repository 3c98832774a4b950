/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Names of operations, their flags and range classes, and the grouping of
 * edges that differ only in range class into one holder-to-waiter pair
 * (docs/ranges.md). Pure; unit-tested.
 */
#ifndef ILOCK_OPS_H
#define ILOCK_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* "buffered-read", "direct-write", ...; "?" when out of range. */
const char *op_name(uint8_t op);
bool op_from_name(const char *name, uint8_t *op);
/* "direct-write(unaligned,extending)": the op with its key flags. */
char *op_label(char *buf, size_t len, uint8_t op, uint8_t flags);
/* "unaligned", "extending", "exclusive", "append": one per set bit, NULL after the last. */
const char *op_flag_name(unsigned bit);
/* "overlapping", "disjoint", "unknown" (every missing side is unknown) */
const char *range_group_name(uint8_t range);
/* "overlapping", "disjoint", "waiter", "holder", "both": which side was missing */
const char *range_name(uint8_t range);
/* "EXCL", "SHARED", ... as the serialisation table writes modes */
const char *mode_short(uint8_t mode);

/* One holder-to-waiter pair with ops: the edges that differ only in range. */
struct pair_row {
	struct ilock_edge_key k;        /* range zeroed */
	struct ilock_edge_stats s;      /* summed; max is the largest */
	uint64_t range_waits[ILOCK_RANGE_MAX];
	uint64_t range_ns[ILOCK_RANGE_MAX];
};

/*
 * Group s's edges into pairs, by wait time, largest first. with_ops false
 * also merges pairs that differ in ops (the ops fields are then zero).
 * *out is malloc'ed (free it); returns the count or -ENOMEM.
 */
long snap_pairs(const struct snapshot *s, struct pair_row **out, bool with_ops);
/* Share of a pair's wait time that was disjoint; -1 when it has none classified. */
double pair_headroom(const struct pair_row *p);
/* One stack behind a pair: its edges' wait time on that stack, added up. */
struct pair_stack {
	uint64_t id;
	uint64_t count, total_ns;
};

/*
 * The distinct stacks of one kind behind pair p, by wait time, largest
 * first; at most max of them (the largest max of the first 256 distinct).
 */
size_t pair_stacks(const struct snapshot *s, const struct pair_row *p, uint8_t kind,
		   struct pair_stack *out, size_t max);
/* Does edge key e belong to pair key p of snap_pairs(.., true) (equal but for range)? */
bool pair_has_edge(const struct ilock_edge_key *p, const struct ilock_edge_key *e);

#endif
