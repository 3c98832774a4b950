/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ilocktop's text: column layout for a given width, the table header and
 * rows, the status lines above the table and the detail view. Pure: the
 * same strings go to curses and to batch output, and unit tests check them
 * at several widths.
 */
#ifndef ILOCK_TOP_FORMAT_H
#define ILOCK_TOP_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ksyms.h"
#include "render.h"
#include "top_model.h"

struct titles;

enum top_col {
	COL_PATH, COL_DEVINO, COL_FS, COL_CLASS, COL_SH, COL_EX, COL_WAIT, COL_P99, COL_MAX,
	COL_DISJ, COL_HOLDER, COL_COUNT,
};

struct top_layout {
	int width;                     /* what was asked for */
	int used;                      /* what the columns take, <= width */
	int w[COL_COUNT];              /* 0: column not shown */
	bool cumulative;               /* totals instead of rates */
};

void top_layout_compute(struct top_layout *l, int width, bool cumulative);

/* Compact numbers that fit the columns: "0.50", "812", "12.3k", "1.2M". */
char *top_fmt_rate(char *buf, size_t len, double v);
char *top_fmt_count(char *buf, size_t len, uint64_t n);
/* Seconds waited per second: "0.012", "1.000", "12.50". */
char *top_fmt_sps(char *buf, size_t len, double v);
/* "16.2ms", "950ns", "3.40s". */
char *top_fmt_ns(char *buf, size_t len, uint64_t ns);
/* The range-lock headroom of a lock's waits: "97%"; "-" when no wait had both ranges. */
char *top_fmt_headroom(char *buf, size_t len, const struct top_row *r);
/*
 * "fio[4257] excl", "readers, fio[12]", "(no owner)"; "-" for NULL. role,
 * the holder's process title's role (titles_role), replaces its command
 * when not NULL: "postgres: checkpointer[4257] excl".
 */
char *top_fmt_holder(char *buf, size_t len, const struct edge_row *e, const char *role);
/*
 * top_fmt_holder() in width columns, its [tid] and mode kept: a role first
 * drops its "comm: " ("checkpointer[4257] excl"), then a long name is cut ('~').
 */
char *top_fit_holder(char *buf, size_t len, const struct edge_row *e, int width, const char *role);
/* The table's class name: XFS's own names on XFS. */
const char *top_class_name(uint8_t class, uint32_t magic);

/* Column titles; the sort column is marked with '*'. Returns the length. */
int top_format_header(char *buf, size_t len, const struct top_layout *l, enum sort_key sort);
/*
 * One row, at most l->used columns. label is the inode's name (abbreviated
 * here from the left), v gives fs and magic; ti, the process titles that
 * name the holder by role (may be NULL). Returns the length.
 */
int top_format_row(char *buf, size_t len, const struct top_layout *l, const struct top_row *r,
		   const char *label, const struct inode_view *v, const struct titles *ti);

/* Everything the lines above the table say. */
struct top_status {
	const char *host, *kernel;
	double uptime_s;               /* since ilocktop started */
	double interval_s;             /* -i */
	double window_s;               /* what the rates are over */
	const struct attach_info *attach;
	int nattach;
	double events_ps;              /* BPF program runs per second */
	double waits_ps;               /* inode lock waits recorded per second */
	double tasks_waiting;          /* on average over the window (top_view_tasks_waiting) */
	uint64_t in_flight;
	size_t tracked;                /* locks in the maps since start */
	size_t active;                 /* rows with waits in the window */
	size_t shown;                  /* after the filter */
	const uint64_t *lost;          /* cumulative counters (ILOCK_COUNTER_MAX) */
	uint64_t lost_window;          /* lost in the last interval */
	uint64_t undercount_window;    /* ... of which left waits uncounted (counter_undercounts) */
	const struct table_use *tables; /* TABLE_MAX of them; NULL: not known */
	/* --renew: fresh tables when one fills */
	double renew_s;                /* at most this often; 0: never */
	double renew_in_s;             /* until the next may start (<= 0: at the next interval) */
	unsigned renewals;             /* done so far */
	bool renewing;                 /* one is loading now */
	bool renew_failed;             /* the last try failed: renew_note says why */
	const char *renew_note;        /* the table that was full, or why the try failed */
	double since_renewal_s;        /* since the last renewal or try; < 0: none */
	bool cum_from_renewal;         /* the cumulative view counts from the last renewal only */
	bool bpf_stats;                /* bpf_ns_ps is known */
	double bpf_ns_ps;              /* BPF run time per second */
	double cpu_pct;                /* our own CPU, % of one core */
	bool cumulative, paused;
	enum sort_key sort;
	const char *filter;            /* NULL or "" : none */
	const char *traced;            /* the command line's filters as options; NULL or "none": none */
	/* the oldest wait in progress, when it calls for the alarm (WAITING_ALARM_NS); NULL: none */
	const struct ilock_waiting *stall;
	size_t stalled;                /* waits in progress that long */
	char stall_lock[160];          /* its inode and lock, as the rows name them */
};

enum top_line_kind { TOP_LINE_NORMAL, TOP_LINE_ALERT };

/* Call emit once per status line, at most width columns each. Returns the count. */
int top_format_status(const struct top_status *st, int width,
		      void (*emit)(void *ctx, enum top_line_kind kind, const char *line),
		      void *ctx);

const char *top_sort_title(enum sort_key k);
/* The help line at the bottom of the screen. */
const char *top_help_line(bool detail);
/* The help screen (? or h): its lines, each at most 80 columns. */
size_t top_help_screen(const char *const **out);
/*
 * The bottom line of the table: the keys, and at the right "row 12 of
 * 800" (sel from 0) when the rows do not all fit on the page and the
 * width leaves room. buf is returned.
 */
char *top_format_help(char *buf, size_t len, int width, long sel, long nrows, long page);

/*
 * The detail view of one lock, as text lines: wait histograms by mode, hold
 * histograms when XFS gave them, the holder -> waiter pairs of the inode,
 * and the holder and waiter kernel stacks behind its waits. win and edges
 * are the window the view shows (interval or cumulative), meta as in
 * top_view_build; stacks holds the inode's stacks since start with their
 * frames (NULL: not read), ks names the frames (NULL: addresses), ti the
 * threads' process titles (NULL: none). holds_sampled: XFS holds were
 * sampled (--hold-sample), so hold counts are estimates and max the
 * longest hold timed.
 */
void top_format_detail(FILE *f, const struct snapshot *win, const struct snapshot *edges,
		       const struct snapshot *meta, const struct snapshot *stacks,
		       struct ksyms *ks, const struct titles *ti, const struct mount_table *mt,
		       uint32_t dev, uint64_t ino, uint32_t gen, uint8_t class, double secs,
		       bool cumulative, bool holds_sampled);

#endif
