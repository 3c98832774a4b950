/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ilocktop's parts and the state they share: the sampler (reads the maps
 * every interval, keeps two cumulative snapshots and their delta, measures
 * its own cost), the curses screen, and the command that runs them.
 * The maths and the text live in the pure top_model.c / top_format.c.
 */
#ifndef ILOCK_TOP_APP_H
#define ILOCK_TOP_APP_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "ksyms.h"
#include "model.h"
#include "mounts.h"
#include "pathcheck.h"
#include "titles.h"
#include "top_format.h"
#include "top_model.h"
#include "top_store.h"
#include "tracer.h"

struct lock_id {
	bool set;
	uint32_t dev;
	uint64_t ino;
	uint32_t gen;
	uint8_t class;
};

struct top_sampler {
	struct tracer *t;
	struct top_store store;        /* store.cum: everything since start */
	struct snapshot delta;         /* what changed in the last interval */
	double window_s;               /* length of the last interval */
	uint64_t samples;
	bool moved_before;             /* waits were recorded before the previous read */
	struct lock_id hold_id;        /* the lock whose hold times we read */
	/* per-CPU counter values, reused */
	uint64_t *percpu;
	int ncpus;
	/* costs, cumulative at the last sample, and per second over the interval */
	bool bpf_stats;
	uint64_t bpf_ns, bpf_cnt, cpu_ns;
	double bpf_ns_ps, events_ps, waits_ps, cpu_pct;
	uint64_t lost_window, undercount_window;
	uint64_t fail_after;           /* tests: fail reads after this many */
	/* the inode whose stacks a scan collects, and where */
	uint32_t stk_dev;
	uint64_t stk_ino;
	uint32_t stk_gen;
	bool stk_all;                  /* every inode's (a renewal keeps them) */
	struct snapshot *stk_out;
};

int sampler_init(struct top_sampler *s, struct tracer *t);
/* One read of the maps into the store and delta. Returns 0 or -errno. */
int sampler_sample(struct top_sampler *s);
/*
 * Add an earlier read's delta (another tracer's, up to where this one's
 * window starts) to the last interval's, and its rates with it.
 */
int sampler_prepend(struct top_sampler *s, const struct snapshot *earlier);
/* The cumulative snapshot: waits and edges since start, inodes looked up so far. */
const struct snapshot *sampler_latest(const struct top_sampler *s);
/* Look an inode's path up in the BPF map once; false if it is not there (yet). */
bool sampler_ensure_inode(struct top_sampler *s, uint32_t dev, uint64_t ino, uint32_t gen);
/*
 * The kernel stacks recorded behind one inode's waits since start (holder
 * and waiter), with their frames, into out. A full scan of the stack map:
 * only while the detail view is open.
 */
int sampler_read_stacks(struct top_sampler *s, uint32_t dev, uint64_t ino, uint32_t gen,
			struct snapshot *out);
/* The same for every inode: the tracer's last, before a renewal stops it. */
int sampler_read_all_stacks(struct top_sampler *s, struct snapshot *out);
/* From now on also read this lock's hold times (the detail view's). */
void sampler_follow_holds(struct top_sampler *s, uint32_t dev, uint64_t ino, uint32_t gen,
			  uint8_t class);
void sampler_free(struct top_sampler *s);

struct top_app {
	struct ilock_opts o;
	bool batch;                    /* plain tables, not a screen */
	struct tracer t;
	struct top_sampler smp;
	struct mount_table mt;
	int mount_fd;                  /* /proc/self/mountinfo, polled for changes */
	struct top_view view;
	struct top_filter filter;
	enum sort_key sort;
	bool cumulative, paused;
	char host[256];
	char traced[512];              /* the command line's filters (cli_filters_text) */
	/* screen state */
	long sel, top;                 /* selected row, first row shown */
	struct lock_id sel_id;         /* the selection follows its lock across re-sorts */
	bool detail;
	struct lock_id detail_id;
	long detail_top;
	struct snapshot stacks;        /* the detail inode's stacks, since start */
	struct kept_stacks kept_stacks; /* ... those of the tracers before (--renew) */
	bool stacks_read;              /* stacks holds the current detail inode's */
	bool stacks_ok;                /* ... and reading them worked */
	struct ksyms ksyms;            /* for the stacks' frames; loaded when first needed */
	struct titles titles;          /* process titles of the threads of each sample's new pairs */
	struct path_fixes fixes;       /* the paths of the rows shown, looked at again */
	bool ksyms_tried, have_ksyms;
	bool help;                     /* the help screen is shown */
	int help_top;                  /* its first line shown (it scrolls on a small screen) */
	bool prompting;
	char prompt[sizeof(((struct top_filter *)0)->text)];
	bool quit;
	const char *fail;              /* why the screen stopped, for after endwin */
	char failbuf[160];
	/* --renew: fresh tables when one fills (top_app_maybe_renew) */
	uint64_t start_mono_ns;        /* ilocktop's own start, for the uptime */
	struct top_sampler old_smp;    /* the last tracer's, which the view shows until rebuilt */
	bool have_old_smp;
	bool old_pending;              /* its last read joins the next interval's */
	unsigned renewals;
	uint64_t renewed_mono_ns;      /* the last renewal, or its failed try */
	uint64_t renew_not_before;     /* no renewal, nor a retry, before this */
	bool renew_failed;
	bool renewing;                 /* a fresh tracer is loading (the screen says so) */
	char renew_note[256];          /* the table that was full, or why it failed */
	uint64_t lost_carry[ILOCK_COUNTER_MAX]; /* the counters of the tracers before */
	/*
	 * The cumulative view ('c') since start: what the tracers before
	 * counted (top_retire) under the current one's, merged at each
	 * rebuild into cum_view, which the view's rows then point into.
	 */
	struct snapshot retired, cum_view;
	bool have_retired;
	uint64_t counters[ILOCK_COUNTER_MAX];   /* carry + the tracer's now: "since start" */
};

/* The window shown: the last interval, or since start (cumulative). */
int top_app_window(struct top_app *a, const struct snapshot **win, const struct snapshot **edges,
		   double *secs);
/* Rebuild the view from the sampler's data for the current mode and filter. */
int top_app_rebuild(struct top_app *a);
/* Re-sort after a key changed the order, keeping the selection. */
void top_app_resort(struct top_app *a);
void top_app_status(const struct top_app *a, struct top_status *st);
/* Before showing rows [from, to): in order, p99 computed, paths looked up. */
void top_app_prepare_rows(struct top_app *a, size_t from, size_t to);
/*
 * After a sample: when a table is TABLE_ALARM_PCT full and --renew allows
 * it, start a fresh tracer, then stop the old one. Returns 0, or -ENOMEM
 * (fatal); a tracer that fails to start leaves the old one running.
 */
int top_app_maybe_renew(struct top_app *a);
/* Reload the mount table when /proc/self/mountinfo says it changed. */
void top_app_check_mounts(struct top_app *a);

/* The curses screen. */
int ui_open(void);
/* Leave curses; safe to call more than once and from atexit. */
void ui_close(void);
bool ui_active(void);
void ui_draw(struct top_app *a);
void ui_resize(void);
/* Read and act on every pending key. */
void ui_keys(struct top_app *a);
/* Async-signal-safe terminal reset for the forced exit on a second signal. */
void ui_emergency_restore(void);

#endif
