// SPDX-License-Identifier: GPL-2.0
/*
 * store_cost: what ilocktop's intake of one changed lock costs a frame,
 * away from any workload's noise: the wait slots' read through the
 * incremental store (top_store_wait), which updates the totals and makes
 * the interval's delta row (docs/PERFORMANCE.md).
 *
 *   store_cost [LOCKS] [FRAMES]
 *
 * LOCKS (default 10,000) slots each take two waits a frame, as
 * contend_many's files do in ilocktop's cost benchmark. Between frames a
 * 64 MiB buffer is written through, as a busy host's other work would
 * evict the tables. Prints the median over FRAMES (default 30; the first
 * two, which size the tables, left out) of the intake's time per lock.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ilock.h"
#include "model.h"
#include "sigtest.h"
#include "top_store.h"
#include "util.h"

#define EVICT_BYTES (64u << 20)

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	int frames = argc > 2 ? atoi(argv[2]) : 30;
	struct ilock_key *k;
	struct ilock_stats *v;
	struct snapshot delta;
	struct top_store st;
	char *evict;
	double *t;
	int err = 0;

	if (!n || frames < 3) {
		fprintf(stderr, "usage: store_cost [LOCKS >= 1] [FRAMES >= 3]\n");
		return 2;
	}
	k = calloc(n, sizeof(*k));
	v = calloc(n, sizeof(*v));
	t = calloc((size_t)frames, sizeof(*t));
	evict = malloc(EVICT_BYTES);
	if (!k || !v || !t || !evict) {
		fprintf(stderr, "store_cost: out of memory\n");
		return 1;
	}
	top_store_init(&st);
	snap_init(&delta);
	for (size_t i = 0; i < n; i++) {
		k[i].ino = 1000 + i * 7;
		k[i].dev = 7u << 20;
		k[i].gen = 1;
		k[i].class = ILOCK_CLASS_I_RWSEM;
		k[i].mode = i & 1;
	}
	for (int f = 0; f < frames && !err; f++) {
		uint64_t a;

		/* what the kernel adds in a frame: two waits in nearby slots */
		for (size_t i = 0; i < n; i++) {
			v[i].count += 2;
			v[i].total_ns += 3000 + i;
			v[i].hist[10 + (f + i) % 8]++;
			v[i].hist[12]++;
			if (v[i].max_ns < 2000 + (uint64_t)f)
				v[i].max_ns = 2000 + (uint64_t)f;
		}
		for (size_t j = 0; j < EVICT_BYTES; j += 64)
			evict[j] = (char)(j + f);
		a = now_monotonic_ns();
		snap_reset(&delta);
		top_store_scan_begin(&st);
		for (size_t i = 0; i < n && !err; i++)
			err = top_store_wait(&st, &delta, &k[i], &v[i]) < 0;
		top_store_scan_end(&st);
		t[f] = (double)(now_monotonic_ns() - a) / (double)n;
		if (!err && delta.nlocks != n)
			err = 1;
	}
	if (err) {
		fprintf(stderr, "store_cost: the store lost a lock (out of memory?)\n");
		return 1;
	}
	sort_doubles(t + 2, (size_t)frames - 2);
	printf("%zu locks: %.1f ns a changed lock, median of %d frames (%.1f-%.1f)\n", n,
	       t[2 + (frames - 2) / 2], frames - 2, t[2], t[frames - 1]);
	top_store_free(&st);
	snap_free(&delta);
	free(k);
	free(v);
	free(t);
	free(evict);
	return 0;
}
