/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Questions asked of a decoded recording: which intervals a time window
 * holds, their data as a model snapshot, per-interval series of one lock,
 * all through the shared filters. Pure; used by report and diff.
 */
#ifndef ILOCK_RECVIEW_H
#define ILOCK_RECVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "model.h"
#include "recfile.h"
#include "render.h"

/* The fs magic of a lock's inode (holds come from XFS only). */
uint32_t rec_lock_magic(const struct recording *r, const struct rec_lock *l);
bool rec_lock_match(const struct recording *r, const struct rec_lock *l, const struct filters *f);
bool rec_edge_match(const struct recording *r, const struct rec_edge *e, const struct filters *f);

/* The edge key as the model has it, rebuilt from the task table. */
void rec_edge_key(const struct recording *r, const struct rec_edge *e, struct ilock_edge_key *k);

/* Add interval i's data, filtered, into s (inodes it refers to included). */
int rec_add_interval(const struct recording *r, size_t i, const struct filters *f,
		     struct snapshot *s);
/* s = sum of intervals [i0, i1), filtered; s is reset first. */
int rec_merge_window(const struct recording *r, size_t i0, size_t i1, const struct filters *f,
		     struct snapshot *s);

/*
 * Intervals whose midpoint lies in [from_ns, to_ns) (ns from the start):
 * [*i0, *i1). An interval belongs to the window that holds most of it.
 */
void rec_select(const struct recording *r, uint64_t from_ns, uint64_t to_ns, size_t *i0,
		size_t *i1);
/* End of the last interval, ns from the start. */
uint64_t rec_end_ns(const struct recording *r);
/* The time the intervals cover, summed: a window's length after diff slices it. */
uint64_t rec_dur_ns(const struct recording *r);
/*
 * --from/--to (NULL: the start, the end) as report and diff take them:
 * the window's intervals [*i0, *i1). 0; -EINVAL a bad time or order, a
 * usage error; -ENODATA no interval in the window. err says which.
 */
int rec_window(const struct recording *r, const char *from_s, const char *to_s, size_t *i0,
	       size_t *i1, char *err, size_t errlen);

/*
 * A time argument: seconds from the start ("90", "1.5", "2m", "1h"),
 * a wall-clock time on the recording's day ("14:05", "14:05:30"), a
 * local date and time ("2026-11-05 14:05:30", also with a 'T'), or Unix
 * seconds ("@1793887530"). Result in ns from the start, clamped at 0.
 */
bool rec_parse_time(const struct recording *r, const char *arg, uint64_t *ns, char *err,
		    size_t errlen);

/* The report_meta (kernel, host, attach, mounts) a renderer wants. */
void rec_fill_meta(const struct recording *r, struct report_meta *m, double duration_s);

/* Indexes of the inodes with this dev and ino (usually one). */
size_t rec_find_inodes(const struct recording *r, uint32_t dev, uint64_t ino, uint32_t *ids,
		       size_t max);

#endif
