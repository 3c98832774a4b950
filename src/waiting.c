// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "waiting.h"

void waiting_free(struct waiting_set *ws)
{
	free(ws->w);
	memset(ws, 0, sizeof(*ws));
}

void waiting_reset(struct waiting_set *ws)
{
	ws->n = 0;
	ws->total = 0;
	ws->available = false;
	ws->torn_bytes = 0;
	ws->running = 0;
	ws->before_trace = 0;
	memset(ws->oldest_ns, 0, sizeof(ws->oldest_ns));
	memset(ws->stalled, 0, sizeof(ws->stalled));
}

static int grow(struct waiting_set *ws, size_t need)
{
	struct ilock_waiting *w;
	size_t cap;

	if (need <= ws->cap)
		return 0;
	cap = ws->cap ? ws->cap : 16;
	while (cap < need)
		cap *= 2;
	w = realloc(ws->w, cap * sizeof(*w));
	if (!w)
		return -ENOMEM;
	ws->w = w;
	ws->cap = cap;
	return 0;
}

int waiting_add_raw(struct waiting_set *ws, const void *buf, size_t len, uint64_t trace_start_ns)
{
	size_t nrec = len / sizeof(struct ilock_waiting);
	int err;

	ws->torn_bytes += len % sizeof(struct ilock_waiting);
	if (!nrec)
		return 0;
	if ((err = grow(ws, ws->n + nrec)))
		return err;
	for (size_t i = 0; i < nrec; i++) {
		struct ilock_waiting *w = &ws->w[ws->n];

		memcpy(w, (const char *)buf + i * sizeof(*w), sizeof(*w));
		if (w->before_trace) {
			w->start_ns = trace_start_ns;
			ws->before_trace++;
		}
		/*
		 * A waiter that runs is not waiting on the lock: it was woken
		 * and its contention_end is on the way, or (kretprobes) that
		 * end was missed and the wait would never leave the list.
		 * An fsync that runs is still in progress: writing back.
		 */
		if (w->waiter_state == 0 && !waiting_is_fsync(w)) {
			ws->running++;
			continue;
		}
		{
			int k = waiting_is_fsync(w);
			uint64_t age = waiting_age_ns(w);

			/* before any cut: 64 stuck fsyncs must not hide a lock wait */
			if (age > ws->oldest_ns[k])
				ws->oldest_ns[k] = age;
			ws->stalled[k] += age >= WAITING_STALL_NS;
		}
		ws->n++;
		ws->total++;
	}
	return 0;
}

/* Oldest first; ties by tid, so that views do not shuffle. */
static int by_age(const void *a, const void *b)
{
	const struct ilock_waiting *x = a, *y = b;
	uint64_t ax = waiting_age_ns(x), ay = waiting_age_ns(y);

	if (ax != ay)
		return ax > ay ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void waiting_finish(struct waiting_set *ws)
{
	if (ws->n > 1)
		qsort(ws->w, ws->n, sizeof(*ws->w), by_age);
	if (ws->n > WAITING_KEEP)
		ws->n = WAITING_KEEP;
}

int waiting_copy(struct waiting_set *dst, const struct waiting_set *src)
{
	int err;

	waiting_reset(dst);
	if ((err = grow(dst, src->n)))
		return err;
	if (src->n)
		memcpy(dst->w, src->w, src->n * sizeof(*src->w));
	dst->n = src->n;
	dst->total = src->total;
	dst->available = src->available;
	dst->torn_bytes = src->torn_bytes;
	dst->running = src->running;
	dst->before_trace = src->before_trace;
	dst->sees_older = src->sees_older;
	memcpy(dst->oldest_ns, src->oldest_ns, sizeof(dst->oldest_ns));
	memcpy(dst->stalled, src->stalled, sizeof(dst->stalled));
	return 0;
}

size_t waiting_over(const struct waiting_set *ws, uint64_t min_ns)
{
	size_t i = 0;

	while (i < ws->n && waiting_age_ns(&ws->w[i]) >= min_ns)
		i++;
	return i;
}

char waiting_state_char(uint32_t state)
{
	/* include/linux/sched.h: the low bits, as fs/proc/array.c shows them */
	if (state == ILOCK_STATE_UNKNOWN)
		return '?';
	if (state == 0)
		return 'R';
	if (state & 0x0002)  /* TASK_UNINTERRUPTIBLE; with TASK_NOLOAD, TASK_IDLE */
		return state & 0x0400 ? 'I' : 'D';
	if (state & 0x0001)
		return 'S';
	if (state & 0x0004)
		return 'T';
	if (state & 0x0008)
		return 't';
	return '?';
}
