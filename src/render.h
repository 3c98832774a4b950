/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Renderers: a snapshot (cumulative or one interval) to text or JSON.
 * Pure functions of their inputs, written to any FILE *; golden-tested.
 */
#ifndef ILOCK_RENDER_H
#define ILOCK_RENDER_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "mounts.h"

#define RENDER_MAX_ATTACH 16

struct json;
struct ksyms;
struct titles;

struct attach_info {
	const char *probe;   /* "contention_begin" */
	const char *mode;    /* "tp_btf", "raw_tp", "off" */
};

/* The mode of probe in a[0..n), or NULL when it is not there. */
static inline const char *attach_mode_of(const struct attach_info *a, int n, const char *probe)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(a[i].probe, probe))
			return a[i].mode;
	return NULL;
}

/* The wait sampling ("1/16 > 250/s/lock/cpu"), NULL when every wait was timed. */
static inline const char *attach_wait_sampling(const struct attach_info *a, int n)
{
	const char *m = attach_mode_of(a, n, "wait_sampling");

	return m && strcmp(m, "off") ? m : NULL;
}

struct report_meta {
	const char *kernel;
	const char *hostname;
	double duration_s;
	struct attach_info attach[RENDER_MAX_ATTACH];
	int nattach;
	const struct mount_table *mounts;  /* may be NULL */
	const char *filters;               /* as options ("-p 12"); NULL or "none": none */
	/*
	 * report: waits seen in progress in the window (its STALLS), which
	 * the rows hold only once they end; the longest seen so far. Live
	 * views have them in the snapshot's waiting instead.
	 */
	size_t window_stalls;
	uint64_t window_stall_ns;
	/* process titles of the threads named ("postgres: checkpointer"); may be NULL */
	const struct titles *titles;
};

struct render_opts {
	int top_n;           /* rows in the top table and histograms */
	bool no_hist;        /* skip the per-inode histograms */
	const char *title;   /* first line; NULL for the default */
	/* render_json calls this before closing the document, to add keys */
	void (*json_extra)(struct json *j, void *ctx);
	void *json_extra_ctx;
	struct ksyms *ksyms; /* names stack frames; NULL: addresses */
	/* stat -i: which interval this is (1, 2, ...; 0: the whole run) and its span */
	int interval_no;
	double interval_from_s, interval_to_s;
};

/* What to print for an inode: its path or why there is none, and its fs. */
struct inode_view {
	char path[2 * ILOCK_PATH_MAX];  /* full path; "" when unknown */
	char rel[ILOCK_PATH_MAX];       /* path from the fs root; "" when unknown */
	const char *note;               /* why path is empty, or "deleted"; NULL */
	const char *fs;
	uint32_t magic;
	bool dir;                       /* a directory: its label ends in '/' */
};

/* gen: the inode's i_generation, as in its rows' keys */
void describe_inode(const struct snapshot *s, const struct mount_table *mt, uint32_t dev,
		    uint64_t ino, uint32_t gen, bool has_hold, struct inode_view *v);
const char *inode_dir_slash(const struct inode_view *v);
/*
 * An inode for people: its path, else dev:path-in-fs, else dev:ino. The
 * views differ only in what they add (LABEL_*): a directory's slash, and
 * the note after a path or in place of one. C0 controls become '?'.
 */
enum {
	LABEL_SLASH = 1,         /* "/srv/spool/": a directory's waits are over names */
	LABEL_PATH_NOTE = 2,     /* "/a/b (deleted)" */
	LABEL_NO_PATH_NOTE = 4,  /* "7:0:/b (device not mounted)", "7:0:131 (no dentry)" */
	LABEL_ALL = LABEL_SLASH | LABEL_PATH_NOTE | LABEL_NO_PATH_NOTE,
};
void inode_label_as(char *buf, size_t len, const struct inode_view *v, uint32_t dev, uint64_t ino,
		    unsigned flags);
/* inode_label_as() with everything: the stat and ilocktop views */
void inode_label(char *buf, size_t len, const struct inode_view *v, uint32_t dev, uint64_t ino);
struct titled;
/* "PROCESS TITLES ...": each thread of l by name and pid, and its title; nothing when none */
void render_titles_legend(FILE *f, const struct titles *ti, const struct titled *l,
			  const char *heading);
/* "fio[4257]" */
char *fmt_task(char *buf, size_t len, const char *comm, uint32_t pid);
/* "131", or "others" for the waits kept without their inode (ILOCK_INO_FOLDED) */
char *fmt_ino(char *buf, size_t len, uint64_t ino);
/* "ino": N, or null for ILOCK_INO_FOLDED */
void render_json_ino(struct json *j, uint64_t ino);
/*
 * A holder as every view names it: "fio[4257] exclusive", "fio[12] next,
 * exclusive" (queued), "readers, last fio[7]" ("readers" when the hint
 * named the waiter itself), "(no owner)". The owner field names a writer
 * exactly; for readers it keeps only the last one as a hint.
 */
char *fmt_holder_task(char *buf, size_t len, const char *comm, uint32_t pid, uint8_t mode);
/* Abbreviate from the left to at most width columns: ".../b/c". */
char *fmt_path_left(char *buf, size_t len, const char *path, int width);

/* Expects s sorted (snap_sort_locks, snap_sort_edges). */
/* Were XFS holds sampled (attach "hold_sampling" neither "every hold" nor "off")? */
bool meta_holds_sampled(const struct report_meta *m);
/* The wait sampling of a report, as attach_wait_sampling. */
static inline const char *meta_wait_sampling(const struct report_meta *m)
{
	return attach_wait_sampling(m->attach, m->nattach);
}
void render_text(FILE *f, const struct snapshot *s, const struct report_meta *m,
		 const struct render_opts *o);
/*
 * One line when a slot table is TABLE_ALARM_PCT full or more (the fullest),
 * nothing otherwise; ends with a newline.
 */
void render_table_alarm(FILE *f, const char *indent, const struct table_use *tables);
/* "pairs table is 82% full (...): what happens to new entries", for table t (cap known). */
char *table_alarm_text(char *buf, size_t len, const struct table_use *tables, int t);
/* render_text's IN SHORT lines alone, without their heading (for the HTML report). */
void render_in_short(FILE *f, const struct snapshot *s, const struct report_meta *m);
void render_json(FILE *f, const struct snapshot *s, const struct report_meta *m,
		 const struct render_opts *o);

/*
 * Waits in progress (render_waiting.c): the IN SHORT line and the WAITING
 * NOW section for those of at least WAITING_STALL_NS (nothing when none),
 * and the "waiting_now" JSON object with every one kept.
 */
void render_waiting_in_short(FILE *f, const struct snapshot *s, const struct report_meta *m);
void render_waiting_text(FILE *f, const struct snapshot *s, const struct report_meta *m);
void render_waiting_json(struct json *j, const struct snapshot *s, const struct report_meta *m);
/*
 * An fsync in progress (waiting_is_fsync): the journal commit it waits on
 * and its thread, or why none runs. One line, no newline.
 */
char *fmt_fsync_journal(char *buf, size_t len, const struct ilock_waiting *w);
/* The stalls on one lock, 100 ms or more (ilocktop's detail view); nothing when none. */
void render_waiting_lock(FILE *f, const struct waiting_set *ws, uint32_t dev, uint64_t ino,
			 uint32_t gen, uint8_t class);

#endif
