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
#include "titles.h"

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

/*
 * Readers held the lock and none is named: the hint was the waiter itself,
 * or the kernel had cleared it (6.17+ with hung-task blocker tracking).
 */
static inline bool readers_unnamed(uint8_t mode, const char *comm)
{
	return mode == ILOCK_MODE_READERS && !comm[0];
}

/*
 * One side of a role, its thread left out: "fio buffered-write EXCL", or
 * "fio EXCL" when ops is false; "(no owner)" for an unknown holder.
 */
char *role_side(char *buf, size_t len, const char *comm, uint8_t mode, uint8_t op, uint8_t flags,
		bool ops);

/*
 * One holder-to-waiter pair: the edges that differ only in range, or in
 * what snap_pairs was told to drop from the key.
 */
struct pair_row {
	struct ilock_edge_key k;        /* range zeroed, and every dropped field */
	/*
	 * Roles only (no PAIRS_THREADS), given titles: each side's process
	 * title as a role ("postgres: checkpointer") in place of its comm;
	 * NULL: its comm. Points into the titles table (titles_role).
	 */
	const char *holder_role, *waiter_role;
	struct ilock_edge_stats s;      /* summed; max is the largest */
	uint64_t range_waits[ILOCK_RANGE_MAX];
	uint64_t range_ns[ILOCK_RANGE_MAX];
	/* distinct holder and waiter threads behind the row (a named holder only) */
	uint32_t holders, waiters;
	/*
	 * Some of its waits were kept without their threads (ILOCK_PID_FOLDED),
	 * on that side: at least one more thread, maybe one of those counted.
	 */
	bool holders_folded, waiters_folded;
};

/* A pair_row's holders or waiters: "8", or "8+" (at least) when some were folded. */
char *fmt_thread_count(char *buf, size_t len, uint32_t n, bool folded);

/* What snap_pairs keeps apart: edges that differ only in dropped fields merge. */
enum pair_by {
	PAIRS_THREADS = 1 << 0,   /* each side's thread (pid, tgid) */
	PAIRS_OPS = 1 << 1,       /* what each side was doing (op and its flags) */
};

/*
 * Group s's edges by lock, both sides' commands and modes, and what `by`
 * asks for, by wait time, largest first. Without PAIRS_THREADS the rows
 * are roles: every thread of a command summed (holders and waiters count
 * them). *out is malloc'ed (free it); returns the count or -ENOMEM.
 */
long snap_pairs(const struct snapshot *s, struct pair_row **out, unsigned by);
/*
 * snap_pairs, and roles (no PAIRS_THREADS) by process title where ti has
 * one (titles.h): PostgreSQL's processes, all "postgres", as the
 * checkpointer, the background writer, each user and database's backends.
 */
long snap_pairs_titled(const struct snapshot *s, struct pair_row **out, unsigned by,
		       const struct titles *ti);
/* One side of a pair_row as role_side() says it, by its role when it has one. */
#define PAIR_SIDE_LEN (ILOCK_TITLE_MAX + 64)
char *pair_side(char *buf, size_t len, const struct pair_row *r, bool holder, bool ops);
/*
 * Widen *hw and *ww to r's holder and waiter sides (role_side, with ops):
 * a table of roles sizes its two columns to the widest row it shows.
 */
void pair_role_widths(const struct pair_row *r, int *hw, int *ww);
/* Share of a pair's wait time that was disjoint; -1 when it has none classified. */
double pair_headroom(const struct pair_row *p);
/* One stack behind a pair: its edges' wait time on that stack, added up. */
struct pair_stack {
	uint64_t id;
	uint64_t count, total_ns;
};

struct ksyms;

/*
 * The distinct stacks of one kind behind pair p, by wait time, largest
 * first; at most max of them (the largest max of the first 256 distinct).
 * Stacks that look the same under ks (stacks_look_same) are one.
 */
size_t pair_stacks(const struct snapshot *s, const struct pair_row *p, uint8_t kind,
		   struct ksyms *ks, struct pair_stack *out, size_t max);
/*
 * Do two stacks name the same functions, frame for frame, from the first
 * frame shown on (ksyms_first_shown)? Stack ids differ with the return
 * addresses: two call sites in one function are two ids that read alike.
 * Without ks (or a frame it cannot name), the addresses must be equal.
 */
bool stacks_look_same(struct ksyms *ks, const struct ilock_stack_frames *a,
		      const struct ilock_stack_frames *b);
/*
 * Fold the entries of v whose frames look the same into the first of them,
 * then sort them by wait time, largest first; the new count.
 */
size_t stacks_rank(const struct snapshot *s, uint8_t kind, struct ksyms *ks, struct pair_stack *v,
		   size_t n);
/* Does edge key e belong to pair key p of snap_pairs(.., true) (equal but for range)? */
bool pair_has_edge(const struct ilock_edge_key *p, const struct ilock_edge_key *e);

#endif
