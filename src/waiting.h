/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Waits in progress (the task iterator's records, bpf/waiting.bpf.c): a
 * stall shows while it lasts. The set and its pure operations; no libbpf.
 */
#ifndef ILOCK_WAITING_H
#define ILOCK_WAITING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ilock.h"

/* The oldest waits kept per read; the rest are counted in total. */
#define WAITING_KEEP 64
/* In progress this long, a wait is a stall: text views list it. */
#define WAITING_STALL_NS 100000000ULL
/*
 * ... and this long, an alarm: IN SHORT opens with it, ilocktop turns a
 * line red. A busy lock's waits reach 100 ms now and then; a second,
 * seldom.
 */
#define WAITING_ALARM_NS 1000000000ULL

struct waiting_set {
	struct ilock_waiting *w;   /* oldest first after waiting_finish() */
	size_t n, cap;
	uint64_t total;            /* in progress in all when read */
	bool available;            /* read at all (the iterator attached) */
	uint64_t torn_bytes;       /* a read that was not whole records */
	uint64_t running;          /* left out: the waiter runs (woken, or its end was missed) */
	/*
	 * By kind, [0] inode lock waits, [1] fsyncs, over all found, not only
	 * the kept: the oldest's age, and how many are WAITING_STALL_NS old.
	 */
	uint64_t oldest_ns[2];
	uint64_t stalled[2];
	uint64_t before_trace;     /* found begun before tracing (ilock_waiting.before_trace) */
	bool sees_older;           /* the kernel shows such waits (task_struct.blocker) */
};

void waiting_free(struct waiting_set *ws);
void waiting_reset(struct waiting_set *ws);
/*
 * Add the whole records in buf[0..len); a partial tail is counted in
 * torn_bytes. A wait begun before tracing gets trace_start_ns (the
 * tracer's CLOCK_MONOTONIC start) as its start: its age a lower bound.
 */
int waiting_add_raw(struct waiting_set *ws, const void *buf, size_t len, uint64_t trace_start_ns);
/* Oldest first, keep WAITING_KEEP; total stays the number found. */
void waiting_finish(struct waiting_set *ws);
/* dst = src (deep). */
int waiting_copy(struct waiting_set *dst, const struct waiting_set *src);

/* An ext4 fsync in progress (--class jbd2_wait), not an inode lock wait. */
static inline bool waiting_is_fsync(const struct ilock_waiting *w)
{
	return w->key.class == ILOCK_CLASS_JBD2_WAIT;
}

/* ext4 fsyncs in progress, from the counters: begun - ended. */
static inline uint64_t waiting_fsyncs_open(const uint64_t *counters)
{
	return counters[ILOCK_EV_FSYNC_BEGUN] > counters[ILOCK_EV_FSYNC_ENDED] ?
	       counters[ILOCK_EV_FSYNC_BEGUN] - counters[ILOCK_EV_FSYNC_ENDED] : 0;
}

/* How long it has waited when read. */
static inline uint64_t waiting_age_ns(const struct ilock_waiting *w)
{
	return w->now_ns > w->start_ns ? w->now_ns - w->start_ns : 0;
}
/* Kept waits at least min_ns old (the set is oldest first). */
size_t waiting_over(const struct waiting_set *ws, uint64_t min_ns);
/* How long the commit an fsync waits on has been running when read; 0: none runs. */
static inline uint64_t waiting_commit_ns(const struct ilock_waiting *w)
{
	return w->commit_start_ns && w->now_ns > w->commit_start_ns ?
	       w->now_ns - w->commit_start_ns : 0;
}
/* ps's letter for a task state: one of WAITING_STATE_LETTERS, '?' unknown. */
#define WAITING_STATE_LETTERS "RSDITt?"
char waiting_state_char(uint32_t state);
/*
 * The owner's state letter when it says something: a writer's, read. A
 * reader-owned lock names only a hint of the last reader. 0 otherwise.
 */
static inline char waiting_owner_state(const struct ilock_waiting *w)
{
	return w->owner_mode == ILOCK_MODE_EXCL && w->owner_state != ILOCK_STATE_UNKNOWN ?
	       waiting_state_char(w->owner_state) : 0;
}

#endif
