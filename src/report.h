/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `ilock report`'s views of a recording window beyond those `ilock stat`
 * shares (render_text/render_json): the per-interval timeline of the top
 * locks as text sparklines, JSON `intervals`, CSV rows and the HTML page.
 * Pure: inputs in, text to a FILE * out.
 */
#ifndef ILOCK_REPORT_H
#define ILOCK_REPORT_H

#include <stdio.h>

#include "json.h"
#include "recfile.h"
#include "recview.h"
#include "render.h"

/* One top lock's wait, interval by interval across the window. */
struct report_row {
	const struct lock_row *lock;   /* in report_ctx.merged */
	uint64_t *waits[2];            /* [mode][interval - i0] */
	uint64_t *wait_ns[2];
	uint64_t *max_ns[2];
};

struct report_ctx {
	const char *file;              /* the recording's name, for titles */
	const struct recording *r;
	size_t i0, i1;                 /* the window: intervals [i0, i1) */
	const struct filters *f;
	struct snapshot *merged;       /* the window summed, sorted by wait time */
	const struct report_meta *meta;
	int top_n;
	struct ksyms *ksyms;           /* names the recorded stack frames; NULL: addresses */
	struct report_row *rows;       /* the top rows with waits, <= top_n */
	int nrows;
};

/* Fill ctx->rows from the recording (merged must be sorted). 0 or -ENOMEM. */
int report_build(struct report_ctx *c);
void report_free(struct report_ctx *c);
/* Seconds the window covers (sum of its intervals). */
double report_window_s(const struct report_ctx *c);

/* Label of an inode for people: its path, else dev:path-in-fs, else dev:ino. */
void report_label(const struct snapshot *s, const struct report_meta *m, uint32_t dev,
		  uint64_t ino, uint32_t gen, bool has_hold, char *buf, size_t len);
/* "2026-11-05 14:03:07" in local time. */
char *report_fmt_time(char *buf, size_t len, uint64_t realtime_ns);
/* ... with tenths of a second ("2026-11-25 01:23:48.8"): where a window starts and ends */
char *report_fmt_time_tenths(char *buf, size_t len, uint64_t realtime_ns);
/*
 * " (2 ending where the recorder moved to fresh tables)" for the renewals
 * among r's intervals [i0, i1), "" for none: an interval ends at each
 * renewal's handover, off the -i schedule, and this says why.
 */
char *report_renewal_note(char *buf, size_t len, const struct recording *r, size_t i0,
			  size_t i1);

/*
 * Seconds to divide interval i's wait by for a rate: its length, but never
 * less than the recording's interval. Waits are counted where they end, so
 * a short last interval (stopped 1 ms after a read) would show a 4 s wait
 * as 4000 s/s and dwarf every other column.
 */
double report_rate_secs(const struct recording *r, size_t i);

/*
 * A sparkline of n values squeezed into at most width columns (a column
 * averages its share of values): ' ' for zero, then U+2581..U+2588 scaled
 * to the largest column. UTF-8 into buf; returns the number of columns.
 */
int report_sparkline(char *buf, size_t len, const double *v, size_t n, int width);

/* The text section "WAIT TIME PER INTERVAL". */
void report_timeline_text(FILE *f, const struct report_ctx *c);
/* render_opts.json_extra hook: recording, window and intervals keys. */
void report_json_extra(struct json *j, void *ctx);
/* One CSV row per interval per lock (all locks that pass the filters). */
void report_csv(FILE *f, const struct report_ctx *c);
/*
 * The stalls of the window (format 1.3): each wait that was still in
 * progress, 100 ms or more, when an interval was read, once, at the last
 * read that saw it. A wait seen at several reads is one stall.
 */
struct report_stall {
	const struct rec_stall *s;     /* the last sighting: the longest it was seen to wait */
	size_t first_iv, last_iv;      /* the intervals whose reads saw it */
};
/* The window's stalls, longest first, filtered as the locks are. 0 or -ENOMEM. */
int report_stalls(const struct report_ctx *c, struct report_stall **out, size_t *n);
/* The text section "STALLS"; nothing when the window has none. */
void report_stalls_text(FILE *f, const struct report_ctx *c);
/* One self-contained HTML page: inline CSS and SVG, no scripts, no network. */
void report_html(FILE *f, const struct report_ctx *c);

#endif
