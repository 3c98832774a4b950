/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The aggregation model: what one read of the BPF maps (or one interval of
 * a recording) holds, and the pure operations on it: delta, merge, sort,
 * top holder. No I/O, no libbpf; unit-tested without a kernel.
 */
#ifndef ILOCK_MODEL_H
#define ILOCK_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ilock.h"
#include "waiting.h"

/* One lock of one inode: waits and (XFS) holds, by mode. */
struct lock_row {
	uint64_t ino;
	uint32_t dev;
	uint32_t gen;                  /* i_generation: a reused inode number is another file */
	uint8_t class;                 /* enum ilock_class */
	bool has_hold;
	struct ilock_stats wait[2];    /* [ILOCK_MODE_SHARED], [ILOCK_MODE_EXCL] */
	struct ilock_stats hold[2];
	/* bit m: wait[m].max_ns of an interval only bounds its longest wait (stats_delta) */
	uint8_t max_bound;
	/* the same waits by how waiter's and holder's byte ranges met */
	struct ilock_range_stats range[ILOCK_RANGE_MAX];
};

struct edge_row {
	struct ilock_edge_key k;
	struct ilock_edge_stats s;
};

/* Wait time per edge and kernel stack. */
struct stack_row {
	struct ilock_stack_key k;
	struct ilock_stack_stats s;
};

/* The frames behind a stack id: kind says which map the id is from. */
struct frames_row {
	uint8_t kind;                  /* enum ilock_stack_kind */
	uint64_t id;
	struct ilock_stack_frames f;
};

/* Direct writes on one inode by how they took i_rwsem and why. */
struct dio_row {
	struct ilock_dio_key k;
	uint64_t count;
};

/*
 * Set by snap_add_inode, never by BPF: another file (generation) with this
 * dev:ino is in the snapshot too. Not written to recordings.
 */
#define INODE_META_NUMBER_REUSED 0x8000
/*
 * Set by userspace when it looked at the path again (pathcheck.h), and
 * written to recordings: the path is the file's name now, in the directory
 * the walker found it in (renamed since); or the file is no longer there
 * nor in that directory (moved or deleted since), its path the walker's.
 */
#define INODE_META_RENAMED 0x4000
#define INODE_META_GONE 0x2000

/* What we know of an inode beyond its number. */
struct inode_meta {
	uint64_t ino;
	uint32_t dev;
	uint32_t gen;
	uint32_t magic;                /* s_magic, 0 when unknown */
	uint16_t flags;                /* enum ilock_inode_flags */
	char path[ILOCK_PATH_MAX];     /* relative to the fs root; "" if none */
};

/*
 * The BPF side's fixed-size tables that new keys claim entries of. A full
 * one loses what would have needed a new entry (counted as lost), so its
 * fill is shown before that happens: pairs carry thread ids, and a host
 * that starts threads all the time claims new ones as fast.
 */
enum table_id {
	TABLE_LOCKS = 0,               /* wait rows: (inode, class, mode) */
	TABLE_PAIRS,                   /* holder -> waiter pairs */
	TABLE_MAX,
};

struct table_use {
	uint32_t used;                 /* entries claimed; never above cap */
	uint32_t cap;                  /* 0: not known (a recording) */
};

/* Alarm at this fill: new keys are lost once a table is full. */
#define TABLE_ALARM_PCT 80

const char *table_name(int t);
/* The fullest table at or over pct percent full, or -1 if none. */
int table_fullest(const struct table_use *t, unsigned pct);
/*
 * --renew (ilocktop, the exporter): the table to move to fresh ones for,
 * the fullest at TABLE_ALARM_PCT or over, when renewals are on (renew_s
 * > 0) and allowed by now (not_before); else -1.
 */
int table_renew_due(const struct table_use *t, double renew_s, uint64_t now,
		    uint64_t not_before);

struct snapshot {
	uint64_t mono_ns;              /* CLOCK_MONOTONIC when read */
	struct lock_row *locks;
	size_t nlocks, cap_locks;
	struct edge_row *edges;
	size_t nedges, cap_edges;
	struct inode_meta *inodes;
	size_t ninodes, cap_inodes;
	uint64_t counters[ILOCK_COUNTER_MAX];
	uint64_t in_flight;            /* waits begun, not yet ended */
	struct table_use tables[TABLE_MAX]; /* a state, as read, like in_flight */
	struct waiting_set waiting;    /* ... the oldest of them, as read (the latest read's) */
	/* open-addressing indexes into the arrays; rebuilt as they grow */
	uint32_t *lock_idx, *edge_idx, *inode_idx;
	size_t lock_idx_cap, edge_idx_cap, inode_idx_cap;
	/* stacks and direct writes, each with its index */
	struct stack_row *stacks;
	size_t nstacks, cap_stacks;
	struct frames_row *frames;
	size_t nframes, cap_frames;
	struct dio_row *dios;
	size_t ndios, cap_dios;
	uint32_t *stack_idx, *frames_idx, *dio_idx;
	size_t stack_idx_cap, frames_idx_cap, dio_idx_cap;
};

enum sort_key {
	SORT_WAIT_TIME = 0,   /* total wait time, both modes */
	SORT_WAITS,           /* number of waits */
	SORT_MAX,             /* longest wait */
	SORT_P99,
	SORT_SHARED,          /* shared waits */
	SORT_EXCL,            /* exclusive waits */
	SORT_KEY_MAX,
};

void snap_init(struct snapshot *s);
void snap_free(struct snapshot *s);
/* Empty it, keeping allocations for the next read. */
void snap_reset(struct snapshot *s);

/* Find or create. NULL only when out of memory. */
struct lock_row *snap_lock(struct snapshot *s, uint32_t dev, uint64_t ino, uint32_t gen,
			   uint8_t class);
const struct lock_row *snap_find_lock(const struct snapshot *s, uint32_t dev, uint64_t ino,
				      uint32_t gen, uint8_t class);
int snap_add_wait(struct snapshot *s, const struct ilock_key *k, const struct ilock_stats *st);
int snap_add_hold(struct snapshot *s, const struct ilock_key *k, const struct ilock_stats *st);
/* The edge row with key k, or NULL. */
const struct edge_row *snap_find_edge(const struct snapshot *s, const struct ilock_edge_key *k);
int snap_add_edge(struct snapshot *s, const struct ilock_edge_key *k,
		  const struct ilock_edge_stats *st);
int snap_add_inode(struct snapshot *s, const struct inode_meta *m);
/* snap_add_inode() of an entry of the BPF inode map. */
int snap_add_inode_info(struct snapshot *s, const struct ilock_inode_key *k,
			const struct ilock_inode_info *info);
const struct inode_meta *snap_find_inode(const struct snapshot *s, uint32_t dev, uint64_t ino,
					 uint32_t gen);

/* out = cur - prev (prev may be NULL: out = cur). out is reset first. */
int snap_delta(struct snapshot *out, const struct snapshot *cur, const struct snapshot *prev);
/* dst += src for one lock's row: waits, holds, range classes (keys untouched). */
void row_merge(struct lock_row *dst, const struct lock_row *src);
/* dst += src: sums, maxima, union of inodes. */
int snap_merge(struct snapshot *dst, const struct snapshot *src);
/*
 * The same, earlier's counts laid under dst's (--renew: the retired
 * tables' under the current ones'): dst's states (read time, tables, waits
 * in flight and in progress) stay.
 */
int snap_merge_under(struct snapshot *dst, const struct snapshot *earlier);
/*
 * dst = src with every generation 0: the files that had one inode number in
 * turn summed in one row, under the first path seen. Lock rows, pairs and
 * inodes only (no stacks or direct writes). The exporter's series follow
 * inode numbers, so that a label set never splits in two.
 */
int snap_fold_gens(struct snapshot *dst, const struct snapshot *src);
/* Deep copy. */
int snap_copy(struct snapshot *dst, const struct snapshot *src);
/* dst's pairs = src's, the rest of dst as it was. */
int snap_copy_edges(struct snapshot *dst, const struct snapshot *src);

uint64_t row_wait_ns(const struct lock_row *r);
/*
 * Of a row's wait time, what can have passed inside a window of window_ns
 * (0: no window, all of it): a wait is booked whole in the window where
 * it ends, so one longer than the window began before it, and counts
 * the window's length at most.
 */
uint64_t row_wait_in_window(const struct lock_row *r, uint64_t window_ns);
uint64_t row_waits(const struct lock_row *r);
uint64_t row_max_ns(const struct lock_row *r);
/* row_max_ns() of an interval is a bound, not a wait's length (lock_row.max_bound) */
bool row_max_bound(const struct lock_row *r);
/* Time held in both modes (--holds). */
uint64_t row_hold_ns(const struct lock_row *r);
/*
 * The locks held that nobody waited for, most time held first (ties by
 * inode): *out is malloc'd, NULL when there are none. Their number, or
 * -ENOMEM.
 */
long snap_held_only(const struct snapshot *s, const struct lock_row ***out);
uint64_t row_p99_ns(const struct lock_row *r);
/* Rows with no waits sort last whatever the key; ties by dev, ino, gen, class. */
void snap_sort_locks(struct snapshot *s, enum sort_key key);
/* Edges by wait time, largest first. */
void snap_sort_edges(struct snapshot *s);
/*
 * No one thread to name as the holder: no owner, readers with no hint of
 * one (many threads, none known), or threads folded together
 * (ILOCK_PID_FOLDED). Never a lock's top holder while a named one exists.
 */
bool holder_unnamed(const struct ilock_edge_key *k);
/* Of one lock's n edges (reordered), the top holder's largest, or NULL. */
const struct edge_row *top_holder_of(const struct edge_row **edges, size_t n);
/* The edge of the holder that cost this lock's waiters the most time, or NULL. */
const struct edge_row *snap_top_holder(const struct snapshot *s, uint32_t dev, uint64_t ino,
				       uint32_t gen, uint8_t class);
/* The loss counters for which `which` holds (NULL: all of them), summed. */
uint64_t snap_lost_sum(const struct snapshot *s, bool (*which)(int c));

/* Operations, ranges and stacks. */
int snap_add_stack(struct snapshot *s, const struct ilock_stack_key *k,
		   const struct ilock_stack_stats *st);
/*
 * The waiter stack kept in a pair's slot (struct ilock_edge_wstack), as a
 * stack row of that pair. stats points at the slot's stats, as a slot scan
 * hands them over; nothing is added while the slot has counted no stack.
 */
int snap_add_edge_wstack(struct snapshot *s, const struct ilock_edge_key *k, const void *stats);
int snap_add_frames(struct snapshot *s, uint8_t kind, uint64_t id,
		    const struct ilock_stack_frames *f);
const struct ilock_stack_frames *snap_find_frames(const struct snapshot *s, uint8_t kind,
						  uint64_t id);
int snap_add_dio(struct snapshot *s, const struct ilock_dio_key *k, uint64_t count);
/*
 * Add the range classes of s's edges to its lock rows (the BPF side keeps
 * them on the edges only); jbd2_wait edges have none. Call once per read.
 */
int snap_ranges_from_edges(struct snapshot *s);
/* Stacks by wait time, largest first. */
void snap_sort_stacks(struct snapshot *s);
/* Waits of a lock that had a range class, and the disjoint share of their time (-1: none). */
uint64_t row_range_waits(const struct lock_row *r);
struct ilock_range_stats row_range_unknown(const struct lock_row *r);
struct ilock_range_stats range_unknown(const struct ilock_range_stats range[ILOCK_RANGE_MAX]);
/* dst += src, range class by range class (as snap_merge does for lock rows). */
void ranges_merge(struct ilock_range_stats dst[ILOCK_RANGE_MAX],
		  const struct ilock_range_stats src[ILOCK_RANGE_MAX]);
double row_headroom(const struct lock_row *r);
/*
 * Would a range lock apply to this lock class? Only to the locks that
 * guard a file's data by byte offset: i_rwsem (the XFS IOLOCK) and
 * invalidate_lock (MMAPLOCK). The XFS ILOCK guards the inode's metadata
 * (extent map, size) as a whole, whatever bytes its holder and waiter
 * worked on; a journal commit has no range. Those get no range classes,
 * no headroom, and no range series or diff subjects.
 */
static inline bool class_has_ranges(uint8_t class)
{
	return class == ILOCK_CLASS_I_RWSEM || class == ILOCK_CLASS_INVALIDATE;
}
/* ... and this pair: not when a side worked on names in a directory. */
static inline bool edge_has_ranges(const struct ilock_edge_key *k)
{
	return class_has_ranges(k->class) && !ilock_op_is_namespace(k->holder_op) &&
	       !ilock_op_is_namespace(k->waiter_op);
}
/*
 * range[its range class] += the pair's waits, when it has one (the only
 * way a lock's range sums are made, from its pairs). false: it has none.
 */
bool edge_add_ranges(const struct edge_row *e, struct ilock_range_stats range[ILOCK_RANGE_MAX]);
/* The same over a lock's (or a pair's) waits by range class. */
double range_headroom(const struct ilock_range_stats range[ILOCK_RANGE_MAX]);

/*
 * How much a window's waits held tasks up. Wait time over the window is
 * the number of tasks waiting on average: a workload that is slow while
 * that stays small is slow for another reason than its inode locks.
 * ext4 fsyncs waiting for the journal are no lock wait, and kept apart.
 */
#define ILOCK_FEW_WAITING 0.05     /* tasks waiting on average: "too few to matter" */
/* Under this much traced time (a Ctrl-C just after start) no verdict either way. */
#define ILOCK_SHORT_TRACE_S 1.0
struct wait_load {
	uint64_t waits, wait_ns;          /* inode-lock waits, as booked when they ended */
	/* waiting inside the window over its length (row_wait_in_window) */
	double tasks;
	bool began_before;                /* some wait was longer than the window */
	uint64_t journal_waits, journal_ns;
	double journal_tasks;
	const struct lock_row *top;       /* the lock waited on longest; NULL: none */
	double top_tasks;
};
void snap_wait_load(const struct snapshot *s, double secs, struct wait_load *out);

const char *class_name(uint8_t class);
/* XFS's own names (IOLOCK, MMAPLOCK, ILOCK) when on XFS. */
const char *class_display_name(uint8_t class, uint32_t magic);
const char *mode_name(uint8_t mode);
bool class_from_name(const char *name, uint8_t *class);
const char *fs_name(uint32_t magic);
bool fs_magic_from_name(const char *name, uint32_t *magic);
void fs_name_list(char *buf, size_t len);
const char *sort_key_name(enum sort_key k);

#endif
