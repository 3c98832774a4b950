/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ilocktop's view model: one row per (inode, lock class) with the rates of
 * a window (the last interval, or everything since start), built from
 * snapshots by pure functions; plus sorting and filtering. No I/O, no
 * curses: unit-tested without a kernel or a terminal.
 */
#ifndef ILOCK_TOP_MODEL_H
#define ILOCK_TOP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "mounts.h"
#include "render.h"

struct top_row {
	uint64_t ino;
	uint32_t dev;
	uint32_t gen;
	uint8_t class;                 /* enum ilock_class */
	bool has_hold;
	bool comm_hit;                 /* an edge of this lock names the filter comm */
	uint32_t magic;                /* s_magic, 0 when unknown */
	uint64_t waits[2];             /* in the window, [ILOCK_MODE_SHARED/EXCL] */
	uint64_t wait_ns;              /* time waited in the window, both modes */
	uint64_t p99_ns, max_ns;       /* of the window's waits */
	bool max_bound;                /* max_ns bounds the longest, no wait took it (shown <) */
	bool p99_known;                /* p99_ns is computed lazily: top_view_prepare */
	double rate[2];                /* waits per second, by mode */
	double wait_sps;               /* seconds waited per second of window */
	const struct lock_row *lock;   /* in the window snapshot */
	/* the holder that cost the most, or NULL; found by top_view_prepare */
	const struct edge_row *holder;
	bool holder_known;
	uint32_t first_edge;           /* its pairs: edges index + 1, then edge_next */
	/* the window's waits by range class, summed over the lock's pairs */
	struct ilock_range_stats range[ILOCK_RANGE_MAX];
};

/*
 * Rows passing it: path contains text, or a holder's or waiter's comm
 * does, or its process title in titles (may be NULL).
 */
struct top_filter {
	char text[128];                /* "" : no filter */
	const struct titles *titles;
};

struct top_view {
	struct top_row *rows;
	size_t nrows, cap;
	size_t total;                  /* rows with waits before filtering */
	size_t sorted;                 /* rows [0, sorted) are in order */
	double secs;                   /* window length */
	bool cumulative;
	enum sort_key sort;
	int32_t *row_of_lock;          /* scratch: window lock index -> row, -1 */
	size_t row_of_cap;
	/*
	 * The window's pairs as built: their array, which lives as long as
	 * the rows' lock pointers do (the snapshot holding it may be moved).
	 */
	const struct edge_row *edge_rows;
	uint32_t *edge_next;           /* each pair's next of its row's: index + 1 */
	size_t edge_next_cap;
	const struct edge_row **scratch; /* a row's pairs, to sum by holder */
	size_t scratch_cap;
};

/*
 * Tasks waiting for an inode lock on average over the window: the rows'
 * wait seconds per second added up (the journal's fsync waits are no lock
 * waits and left out), as `ilock stat`'s IN SHORT counts them.
 */
double top_view_tasks_waiting(const struct top_view *v);

/* Per-second rates from a count over secs; 0 for an empty window. */
double top_rate(uint64_t n, double secs);

void top_view_init(struct top_view *v);
void top_view_free(struct top_view *v);

/*
 * Build the rows of window win (a delta of two cumulative snapshots, or a
 * cumulative one) spanning secs; the holders come from edges' edges (the
 * same window; often win itself). meta is where inode paths and fs types
 * are looked up (the latest cumulative snapshot; may be win); mt may be
 * NULL. Rows without waits in the window are left out. f may be NULL.
 * The rows point into win and edges. Returns 0 or -ENOMEM.
 */
int top_view_build(struct top_view *v, const struct snapshot *win, const struct snapshot *edges,
		   const struct snapshot *meta, const struct mount_table *mt, double secs,
		   bool cumulative, const struct top_filter *f);

/*
 * Largest first by key; ties by wait time, then dev, ino, class. Only the
 * first `want` rows need be in order (0: all): the rest are selected out in
 * O(n), so a screenful of 10,000 rows costs little.
 */
void top_view_sort(struct top_view *v, enum sort_key key, size_t want);
/* Make rows [0, upto) sorted (re-sorting more if needed), their p99 and holder known. */
void top_view_prepare(struct top_view *v, size_t upto);
/* The value a row is sorted by. */
uint64_t top_sort_value(const struct top_row *r, enum sort_key key);
/* The row for a lock, or -1. */
long top_view_find(const struct top_view *v, uint32_t dev, uint64_t ino, uint32_t gen,
		   uint8_t class);

/*
 * The first deadline on the schedule start + k * interval that is after
 * now, given the last one: sleeping to absolute deadlines does not drift,
 * and a late wake-up skips the ticks it missed instead of bunching them.
 */
uint64_t top_next_deadline(uint64_t last, uint64_t interval_ns, uint64_t now);

/* The next/previous sort key, wrapping around. */
enum sort_key top_sort_next(enum sort_key k, int dir);

/*
 * What to call an inode: its full path, else "MAJ:MIN:/fs/rel (why)", else
 * "MAJ:MIN:ino (why)". v gets the rest (fs name, magic) from describe_inode.
 */
void top_inode_label(char *buf, size_t len, struct inode_view *v, const struct snapshot *meta,
		     const struct mount_table *mt, uint32_t dev, uint64_t ino, uint32_t gen,
		     bool has_hold);

/*
 * ilocktop --renew: what the tables before the fresh ones counted, for
 * the cumulative view ('c'), kept small through any number of renewals.
 * dst = src with the keep inodes that waited longest kept whole (their
 * rows, paths and pairs); every other inode's rows fold into its device's
 * and class's row of waits kept without their inode (shown as "others"),
 * and every pair loses its threads (comm[others]), which a host that
 * starts threads all the time has no end of. Totals stay whole. 0 or
 * -ENOMEM.
 */
#define TOP_RETIRE_KEEP 1000
int top_retire(struct snapshot *dst, const struct snapshot *src, size_t keep);

#endif
