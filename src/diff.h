/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `ilock diff`: compare two recordings per lock class and mode and per
 * inode, with a significance verdict from the per-interval samples
 * (docs/diff-method.md). Pure: recordings in, results and text/JSON out.
 */
#ifndef ILOCK_DIFF_H
#define ILOCK_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "recfile.h"
#include "titles.h"

enum diff_metric {
	DM_WAITS_PER_S = 0,   /* waits per second */
	DM_WAIT_PER_S,        /* wait time per second (ns/s) */
	DM_P50,               /* wait p50 (ns) */
	DM_P99,
	DM_MAX,
	DM_HOLD_P99,          /* exclusive hold p99 (ns), XFS only */
	DM_COUNT,
};

/*
 * What a subject compares: waits in one mode, exclusive holds, the waits
 * whose holder and waiter worked on disjoint, or overlapping, byte ranges
 * (what a range lock would remove, and keep), or the waits of one role:
 * a holder command, op and mode making a waiter command, op and mode wait,
 * every thread summed, since thread ids do not carry over between runs.
 */
enum diff_kind { DK_SHARED = 0, DK_EXCL = 1, DK_HOLD = 2, DK_DISJOINT = 3, DK_OVERLAP = 4,
		 DK_ROLE = 5 };

enum diff_verdict {
	DV_UNTESTED = 0,  /* too few samples: see why */
	DV_SAME,          /* not significant */
	DV_HIGHER,        /* significant, after > before */
	DV_LOWER,
};

enum diff_match {
	DMATCH_CLASS = 0,     /* a class-level subject, no inode */
	DMATCH_PATH,          /* same full path */
	DMATCH_DEVINO,        /* same dev:ino, a path missing */
	DMATCH_FSPATH,        /* same path inside the filesystem, unique on both sides */
	DMATCH_BEFORE_ONLY,
	DMATCH_AFTER_ONLY,
};

struct diff_cmp {
	bool present;             /* the metric applies to this subject */
	double before, after;     /* whole recording: rates per second, times in ns */
	bool has_before, has_after;
	size_t na, nb;            /* per-interval samples */
	double change;            /* (after - before) / before; INFINITY when before is 0 */
	bool tested;
	double p, p_adj;          /* Mann-Whitney two-sided, Holm-adjusted */
	/*
	 * Tested, but on so few samples that even two that do not overlap
	 * could not have been significant after the adjustment: no verdict.
	 */
	bool out_of_reach;
	/*
	 * Not significant although p_adj < alpha: the change is under the
	 * floor (min_change or min_change_latency, in floor), or the
	 * whole-run values moved the other way from the intervals'.
	 */
	enum { DWN_NONE = 0, DWN_FLOOR, DWN_DIRECTION } why_not;
	double floor;
	enum diff_verdict verdict;
	const char *why;          /* why untested */
	bool uncaptured;          /* a side's probes could not see it (e.g. --holds=off) */
};

/*
 * Process titles' roles ("postgres: checkpointer", titles.h) met in either
 * recording, each once: a role key names one by its index + 1 in
 * holder_pid / waiter_pid (0: by comm), so that both recordings' keys agree.
 */
struct diff_names {
	char (*name)[ILOCK_TITLE_MAX];
	size_t n, cap;
	struct idmap ids;         /* name (zero-padded) -> index */
};

struct diff_subject {
	bool is_inode;
	/*
	 * DK_ROLE: class, both sides' comm, mode and op, and in holder_pid /
	 * waiter_pid a process title's role (diff_names); every other field zero
	 */
	struct ilock_edge_key role;
	/* DK_ROLE: distinct threads [before, after][holders, waiters]; 0 when absent */
	uint32_t threads[2][2];
	uint8_t class;
	uint8_t kind;             /* enum diff_kind */
	uint32_t magic;           /* fs of the inode (either side), 0 if unknown */
	uint32_t magic_b;         /* the after side's, when it has one (0: as magic) */
	enum diff_match match;
	char label[2 * ILOCK_PATH_MAX + 64];
	char ident_a[48], ident_b[48];  /* "dev:ino" on each side, "" if absent */
	struct diff_cmp m[DM_COUNT];
};

struct diff_opts {
	double alpha;             /* significance level after adjustment (0.01) */
	/*
	 * Smallest relative change called significant: rates (waits/s, wait
	 * time/s) 0.10; latencies (p50, p99, max, hold p99) 0.20, as they come
	 * from log2 histograms and move with scheduling delay run to run.
	 */
	double min_change;
	double min_change_latency;
	size_t min_samples;       /* intervals per side needed to test (5) */
	int top_n;                /* inode subjects shown */
	const struct filters *f;
	const char *window;       /* "--from 5 --to 20", as given, or NULL: whole recordings */
};

/* A probe recorded with different attach modes: what each side could see differs. */
struct diff_probe_change {
	char probe[32];
	/* "tp_btf", "off", "tp_btf (syscalls)", ...; "-" when not recorded */
	char before[24], after[24];
};

#define DIFF_MAX_PROBE_CHANGES 16

struct diff_result {
	struct diff_subject *s;
	size_t n, cap;
	struct diff_probe_change probes[DIFF_MAX_PROBE_CHANGES];
	size_t nprobes;
	/*
	 * Recorded with different filters (the recordings' "filters" meta,
	 * as `ilock record` prints them; "" for none): each saw other waits,
	 * so a change may be the filter's, not the kernel's.
	 */
	bool filters_differ;
	char filters_before[160], filters_after[160];
	size_t ntests, nsig, nlower, nhigher;
	/*
	 * No test could have been significant: even two samples that do not
	 * overlap give a p (mw_min_p) that the adjustment over ntests lifts to
	 * alpha or above. Then about this many intervals per side are needed.
	 */
	bool unreachable;
	size_t intervals_needed;
	size_t nout_of_reach;     /* tests out of reach (diff_cmp), when others were not */
	bool roles_without_ops;   /* a side had --ops off: roles by command and mode only */
	/*
	 * The recordings' intervals differ in length (by over 10%): a longer
	 * interval holds more waits, so its p99 and max sit higher whatever
	 * the kernel did. Those metrics are then not tested (why: this).
	 */
	bool unlike_intervals;
	char unlike_why[64];
	struct diff_opts o;
	double secs_a, secs_b;
	size_t niv_a, niv_b;
	struct diff_names names;  /* the roles' process titles */
};

void diff_opts_default(struct diff_opts *o);
int diff_compute(const struct recording *a, const struct recording *b, const struct diff_opts *o,
		 struct diff_result *d);
void diff_free(struct diff_result *d);

const char *diff_metric_name(enum diff_metric m);
const char *diff_kind_name(enum diff_kind k);
const char *diff_verdict_name(enum diff_verdict v);
const char *diff_match_name(enum diff_match m);
/* "fio buffered-write EXCL -> fio buffered-read SHARED" (ops false: "fio EXCL -> fio SHARED") */
/* A title role of a role key's side (holder_pid or waiter_pid), or NULL: by comm. */
const char *diff_role_name(const struct diff_names *nm, uint32_t id);
void diff_role_label(char *buf, size_t len, const struct ilock_edge_key *k, bool ops,
		     const struct diff_names *nm);
/* "i_rwsem shared wait: 812 ms/s -> 95 ms/s (-88%, significant, p<0.001)" */
void diff_summary_line(char *buf, size_t len, const struct diff_subject *s, enum diff_metric m);

void diff_render_text(FILE *f, const struct diff_result *d, const char *name_a, const char *name_b,
		      const struct recording *a, const struct recording *b);
void diff_render_json(FILE *f, const struct diff_result *d, const char *name_a, const char *name_b,
		      const struct recording *a, const struct recording *b);

#endif
