/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ilocktop's incremental state. tracer_read() rebuilds a whole snapshot on
 * every read and snap_delta() then walks all of it: with 10,000 tracked
 * inodes that alone costs more than ilocktop's 1% CPU budget. The store
 * instead keeps the cumulative snapshot and takes the maps' entries one by
 * one as they are read: an entry whose count has not moved costs one hash
 * probe; one that moved gets its delta (stats_delta, as snap_delta does)
 * written into the interval's snapshot. So both views are ordinary
 * snapshots: `cum` since start, and a delta holding only what changed.
 * Pure: no I/O, unit-tested.
 */
#ifndef ILOCK_TOP_STORE_H
#define ILOCK_TOP_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "model.h"

struct store_edge {
	struct ilock_edge_key k;
	struct ilock_edge_stats s;     /* as last read */
};

/*
 * A map entry at one position of the previous scan. A hash map's batch
 * order is its bucket order, which only a new key disturbs: comparing each
 * entry with the one read at the same position last time is a sequential
 * walk, so unchanged entries never touch the big rows or the hash indexes.
 */
struct scan_pos {
	union {
		struct ilock_key wait;
		struct ilock_edge_key edge;
	} k;
	uint64_t count, total_ns, max_ns;
	uint32_t row;   /* its row in cum (waits) or edges[] (edges), + 1; 0 unknown */
};

struct top_store {
	struct snapshot cum;           /* waits, inodes, counters since start */
	struct scan_pos *wpos, *epos;  /* the last scan of the wait / edge map */
	size_t nwpos, nepos, cap_wpos, cap_epos;
	size_t wi, ei;                 /* positions in the scan under way */
	struct snapshot cum_edges;     /* edges since start, built when asked for */
	bool edges_stale;              /* cum_edges lags behind edges[] */
	struct store_edge *edges;      /* edge values as last read, to diff against */
	size_t nedges, cap_edges;
	uint32_t *edge_idx;            /* open addressing, slot = position + 1 */
	size_t edge_idx_cap;
};

void top_store_init(struct top_store *st);
void top_store_free(struct top_store *st);

/* A new scan of the maps begins (top_store_wait/_edge count positions). */
void top_store_scan_begin(struct top_store *st);
/* It ended: the entries seen are the ones to compare with next time. */
void top_store_scan_end(struct top_store *st);

/*
 * One wait (or hold) map entry as read now. Updates cum; when it differs
 * from the last read, adds the difference to delta. Returns 1 when it
 * changed, 0 when not, -ENOMEM or -EINVAL.
 */
int top_store_wait(struct top_store *st, struct snapshot *delta, const struct ilock_key *k,
		   const struct ilock_stats *cur);
int top_store_hold(struct top_store *st, struct snapshot *delta, const struct ilock_key *k,
		   const struct ilock_stats *cur);
/* The same for one holder -> waiter edge. */
int top_store_edge(struct top_store *st, struct snapshot *delta, const struct ilock_edge_key *k,
		   const struct ilock_edge_stats *cur);
/*
 * The edges since start as a snapshot (only the cumulative view needs them,
 * so they are assembled on demand). NULL when out of memory.
 */
const struct snapshot *top_store_edges(struct top_store *st);
/*
 * The counters as read now: delta->counters = cur - last, cum's = cur.
 * Returns whether any moved (if none did, no map can have changed since the
 * read before the last one).
 */
bool top_store_counters(struct top_store *st, struct snapshot *delta, const uint64_t *cur);

/*
 * The detail view's kernel stacks across renewals (--renew). A fresh
 * tracer's stack ids mean nothing to the old one's, and the view sums a
 * lock's stacks over its pairs, so what is kept is per kind, lock and
 * frames: rows whose edge key holds only dev, ino, gen and class, under
 * ids of our own, one per distinct frames.
 */
struct kept_stacks {
	struct snapshot s;             /* the rows, and their frames under our ids */
	struct idmap ids;              /* (kind, frames) -> our id */
	uint32_t n;
};

/* Ids of kept frames put beside a tracer's (kept_stacks_put): above any map id. */
#define KEPT_STACK_ID_BASE (1ULL << 40)

void kept_stacks_init(struct kept_stacks *k);
void kept_stacks_free(struct kept_stacks *k);
/*
 * Keep old's stacks (a tracer's last, all locks, with frames) besides those
 * kept before, for the locks keep has a row of (the cumulative view's
 * retired locks: the ones kept whole); the rest are dropped. Unchanged on
 * failure (-ENOMEM).
 */
int kept_stacks_add(struct kept_stacks *k, const struct snapshot *old, const struct snapshot *keep);
/*
 * Add one inode's kept stacks to cur (sampler_read_stacks' output): a kept
 * stack whose frames cur has too counts under cur's id, so that one stack
 * stays one row; another comes with its frames, under KEPT_STACK_ID_BASE + id.
 */
int kept_stacks_put(const struct kept_stacks *k, struct snapshot *cur, uint32_t dev, uint64_t ino,
		    uint32_t gen);

/* out = cur - prev for an edge read twice; counts saturate at 0. */
void top_edge_delta(struct ilock_edge_stats *out, const struct ilock_edge_stats *cur,
		    const struct ilock_edge_stats *prev);

#endif
