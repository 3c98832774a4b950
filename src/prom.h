/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Prometheus / OpenMetrics exposition of ilock's cumulative snapshot.
 *
 * Two pure steps, unit-tested without a kernel:
 *  - prom_series_update() (prom_series.c) turns one cumulative snapshot into
 *    the series to export: aggregates per (device, class, mode), the inodes
 *    that own a series (at most 2 * top_k at once; one idle for idle_ns
 *    gives its place up),
 *    everything else folded into inode="other", holder/waiter pairs by
 *    command name (never pid), capped the same way, and by op and mode.
 *  - prom_render() (prom.c) prints that state in the Prometheus text format
 *    0.0.4 or in OpenMetrics 1.0.0.
 * docs/exporter.md describes the metrics and the series bound.
 */
#ifndef ILOCK_PROM_H
#define ILOCK_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ilock.h"
#include "model.h"
#include "mounts.h"
#include "titles.h"

/*
 * Histogram buckets: the log2 slot upper bounds (hist_slot_hi) from 2^10 ns
 * (~1 us) to 2^36 ns (~69 s), then +Inf. Shorter waits count in the first
 * bucket, longer ones in +Inf; 28 buckets instead of 40 keeps each
 * histogram's series count down.
 */
#define PROM_FIRST_SLOT 9
#define PROM_LAST_SLOT 35
#define PROM_NBUCKETS (PROM_LAST_SLOT - PROM_FIRST_SLOT + 2)

#define PROM_DEFAULT_TOP_INODES 20
#define PROM_MAX_TOP_INODES 1000
/* the inodes ilock_contended_inodes remembers across renewals: 8 MiB */
#define PROM_RETIRED_IDS_MAX (1u << 20)
/* --series-idle: an hour without a wait; at most 30 days */
#define PROM_DEFAULT_SERIES_IDLE_S 3600
#define PROM_MAX_SERIES_IDLE_S 2592000
#define PROM_DEFAULT_MAX_PAIRS 100
#define PROM_MAX_PAIRS_LIMIT 10000
/* Ids of retired pairs' sides: above any thread id (pid_max <= 2^22), below ILOCK_PID_FOLDED. */
#define PROM_RETIRED_ID_FIRST 0x40000000u

enum prom_format { PROM_FMT_TEXT = 0, PROM_FMT_OPENMETRICS, PROM_FMT_MAX };

/* A growing text buffer; oom sticks once an allocation failed. */
struct prom_buf {
	char *data;
	size_t len, cap;
	bool oom;
};

void pbuf_init(struct prom_buf *b);
void pbuf_free(struct prom_buf *b);
void pbuf_puts(struct prom_buf *b, const char *s);
void pbuf_printf(struct prom_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A label value: \ " and newline escaped, invalid UTF-8 replaced by U+FFFD. */
void pbuf_label_value(struct prom_buf *b, const char *s);

/* Go's %g shortest rendering plus ".0" for integers: OpenMetrics' canonical le. */
char *prom_fmt_canonical(char *buf, size_t len, double v);
/* Which format an Accept header asks for. */
enum prom_format prom_negotiate(const char *accept);
const char *prom_content_type(enum prom_format f);

/* Aggregate of one (device, class): what the unlabelled-by-inode metrics show. */
struct prom_group {
	uint32_t dev;
	uint8_t class;
	bool has_hold;
	struct ilock_stats wait[2];   /* [ILOCK_MODE_SHARED], [ILOCK_MODE_EXCL] */
	struct ilock_stats hold[2];
	struct ilock_stats other[2];  /* inode="other": untracked + tracked baselines */
	/* the group's waits by how holder's and waiter's byte ranges met */
	struct ilock_range_stats range[ILOCK_RANGE_MAX];
};

/* An inode with its own series. */
struct prom_inode {
	uint32_t dev;
	uint64_t ino;
	char path[2 * ILOCK_PATH_MAX];             /* frozen at admission */
	bool present[ILOCK_CLASS_MAX][2];          /* had waits: a series exists */
	struct ilock_stats base[ILOCK_CLASS_MAX][2];  /* cumulative at admission */
	struct ilock_stats own[ILOCK_CLASS_MAX][2];   /* cumulative now - base */
	uint64_t last_count;                       /* own's waits at active_ns */
	uint64_t active_ns;                        /* snapshot time they last moved */
};

/*
 * What the series of inodes retired for idleness counted, per device and
 * class: inode="other" stays without it, so that it does not jump when a
 * series goes (prom_series.idle_ns).
 */
struct prom_retired {
	uint32_t dev;
	uint8_t class;
	struct ilock_stats wait[2];
};

struct prom_pair_key {
	uint32_t dev;
	uint8_t class;
	uint8_t holder_mode;
	uint8_t waiter_mode;
	uint8_t folded;               /* 1: the "other" pair of its dev/class/modes */
	char holder_comm[ILOCK_COMM_LEN];
	char waiter_comm[ILOCK_COMM_LEN];
	/*
	 * The process title's role (titles.h: "postgres: checkpointer"), or
	 * the comm above for a thread without a title; NUL-terminated.
	 */
	char holder_role[ILOCK_TITLE_MAX];
	char waiter_role[ILOCK_TITLE_MAX];
};

struct prom_pair {
	struct prom_pair_key k;
	uint64_t base_count, base_ns;  /* tracked: at admission */
	uint64_t count, ns;            /* what is exported */
	uint64_t last_count, active_ns; /* count at active_ns, when it last moved */
};

/*
 * Waits behind a holder by what each side was doing and in which mode,
 * commands left out: at most ops x modes per (device, class), so every
 * combination seen gets a series and none is folded.
 */
struct prom_op_pair {
	uint32_t dev;
	uint8_t class;
	uint8_t holder_op, holder_mode;
	uint8_t waiter_op, waiter_mode;
	uint64_t count, ns;
};

struct prom_devfs {
	uint32_t dev;
	char fs[16];                   /* sticky: decided at first sight */
};

/* Per inode wait total, sorted by (dev, ino), for the interval ranking. */
struct prom_ino_total {
	uint32_t dev;
	uint64_t ino;
	uint64_t wait_ns;
	uint64_t delta_ns;
};

struct prom_series {
	unsigned top_k;
	size_t max_inodes;             /* 2 * top_k: inode label sets at once */
	/*
	 * An inode or pair whose series have not moved for this long
	 * (snapshot time) is retired, so that a long-running exporter goes on
	 * naming the files and pairs active now; 0: series are kept for the
	 * exporter's lifetime. Its rate was 0 for that long, so no sum of
	 * rates moves when it goes.
	 */
	uint64_t idle_ns;
	size_t max_pairs;
	/*
	 * The pairs' threads' process titles (NULL: none), set by the caller,
	 * which notes every thread of a snapshot in it before the update, so
	 * that a thread keeps the role it had at its first update
	 * (titles_note_snapshot reads a title once) and no pair's counts move
	 * from one series to another.
	 */
	const struct titles *titles;

	struct prom_group *groups;     /* sorted by (dev, class) */
	size_t ngroups, cap_groups;
	struct prom_inode *inodes;     /* tracked, sorted by (dev, ino) */
	size_t ninodes;
	struct prom_retired *retired;  /* unsorted, a few: one per device and class */
	size_t nretired, cap_retired;
	uint64_t inode_series_retired; /* inodes whose series were retired, since start */
	struct prom_pair *pairs;       /* tracked, sorted by key */
	size_t npairs;
	struct prom_pair *folded;      /* "other" pairs, sorted by key */
	size_t nfolded, cap_folded;
	/* what retired pairs counted, under their "other" keys (idle_ns) */
	struct prom_pair *pairs_retired;
	size_t npairs_retired, cap_pairs_retired;
	uint64_t pair_series_retired;  /* pairs whose series were retired, since start */
	struct prom_devfs *devs;
	size_t ndevs, cap_devs;
	struct prom_op_pair *ops;      /* sorted by key */
	size_t nops, cap_ops;

	struct prom_ino_total *totals;  /* this update's, reused */
	size_t ntotals, cap_totals;
	struct prom_pair *agg, *prev_agg;  /* edges by comm/mode pair, reused */
	size_t nagg, cap_agg, nprev_agg, cap_prev_agg;
	struct snapshot fold, prev_fold;   /* this update's reads, generations folded */

	uint64_t counters[ILOCK_COUNTER_MAX];
	uint64_t in_flight;
	struct table_use tables[TABLE_MAX]; /* the slot tables' fill at the last collection */
	/* waits in progress (waiting.h), when the task iterator is there */
	bool waiting_available;
	uint64_t oldest_wait_ns;       /* 0: none in progress */
	uint64_t stalled_waits;        /* in progress for WAITING_STALL_NS or more */
	uint64_t oldest_fsync_ns;      /* the same for ext4 fsyncs (jbd2_wait) */
	uint64_t contended_inodes;     /* inodes with a wait since start */
	uint64_t retired_inodes;       /* ... of them folded away by prom_series_retire */
	/*
	 * Those folded away, by a 64-bit hash of (dev, ino), sorted: one that
	 * waits again in the fresh tables is not counted twice. At most
	 * PROM_RETIRED_IDS_MAX; past that, retired_inodes counts on without
	 * them (an inode may then count twice).
	 */
	uint64_t *gone_ids;
	size_t ngone_ids;
	uint32_t retired_ids;          /* the next id of a retired pair's titled side */
	uint64_t pairs_seen;           /* distinct comm/mode pairs since start */
	uint64_t updates;
};

int prom_series_init(struct prom_series *ps, unsigned top_k, size_t max_pairs);
void prom_series_free(struct prom_series *ps);
/*
 * Fold one cumulative snapshot (as tracer_read returns) into ps. prev is
 * the snapshot of the previous successful update (NULL for the first): the
 * interval between them ranks inodes, and a series admitted now counts from
 * prev on, since everything before prev was exported in "other" already.
 * mt may be NULL; it names paths and filesystems of newly seen inodes and
 * devices. Returns 0 or -ENOMEM (the update may then be half-applied, but
 * within its bounds; the caller keeps its previous exposition).
 */
int prom_series_update(struct prom_series *ps, const struct snapshot *cur,
		       const struct snapshot *prev, const struct mount_table *mt);
const char *prom_dev_fs(const struct prom_series *ps, uint32_t dev);
/*
 * ilock export --renew: the exporter moves to fresh in-kernel tables and
 * lays what the old ones counted, compacted, under every later read, so
 * that no series goes down. dst = cur (the old tables' last cumulative
 * read, with whatever was retired before) with what no series reads
 * apart folded, so that it stays small through any number of renewals:
 *  - the inodes with a series keep their rows; every other row folds into
 *    its device's and class's row of waits kept without their inode
 *    (ILOCK_INO_FOLDED), which inode="other" counts anyway;
 *  - pairs fold by what their series read (commands' and titles' roles,
 *    modes, ops, op flags, range) into one of them; a side whose role
 *    came from a title gets an id no thread has, with that title in rt
 *    (which the caller makes ps->titles from then on: the live threads'
 *    titles are looked up again), the others ILOCK_PID_FOLDED;
 *  - counters stay; what is a state of the old tables (their fill, waits
 *    in flight or in progress) goes.
 * Every series reads the same from dst as from cur. 0 or -ENOMEM.
 */
int prom_series_retire(struct prom_series *ps, struct snapshot *dst, struct titles *rt,
		       const struct snapshot *cur);

/* What the exporter knows about itself, rendered next to the data. */
struct prom_meta {
	const char *version;
	const char *kernel;
	const char *wait_sampling;     /* attach["wait_sampling"]: "off", or the wait figures are estimates */
	bool have_bpf_stats;
	uint64_t bpf_run_ns, bpf_run_cnt;
	uint64_t collections, collect_errors;
	uint64_t collect_ns_total;     /* reading maps + rendering, all collections */
	uint64_t last_collect_ns;
	double last_collect_unix;
	uint64_t scrapes[PROM_FMT_MAX];
	uint64_t scrape_ns_total;
	uint64_t http_errors;          /* 404/405 answers */
	double cpu_user_s, cpu_system_s;
	uint64_t rss_bytes;
	double start_unix;
	uint64_t renewals, renew_failures;  /* --renew: moves to fresh tables, and failed tries */
};

/* Append the whole exposition (b is not reset). */
void prom_render(struct prom_buf *b, enum prom_format f, const struct prom_series *ps,
		 const struct prom_meta *m);

#endif
