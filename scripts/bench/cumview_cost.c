// SPDX-License-Identifier: GPL-2.0
/*
 * cumview_cost: what ilocktop's cumulative view costs a rebuild after a
 * renewal of its tables (--renew), when it is the retired tables' totals
 * (top_retire, TOP_RETIRE_KEEP inodes whole) under the current ones.
 *
 *   cumview_cost [INODES] [ROUNDS]
 *
 * Builds a current cumulative snapshot of INODES locks (default 10,000),
 * each with a path and a pair, retires one like it, then times, in turns
 * within each round, the two ways of putting the view together: row by
 * row (the retired part copied, the current rows and pairs merged in) and
 * as ilocktop does (the current rows and pairs copied whole, the retired
 * part merged in). Prints the medians over ROUNDS (default 15) of 20
 * rebuilds each, and top_retire's time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "sigtest.h"
#include "top_model.h"
#include "util.h"

static double now_s(void)
{
	return (double)now_monotonic_ns() / 1e9;
}

int main(int argc, char **argv)
{
	long inodes = argc > 1 ? atol(argv[1]) : 10000, rounds = argc > 2 ? atol(argv[2]) : 15;
	struct snapshot cum, edges, all, retired, view;
	double t0, by_row[64], whole[64], retire_ms;

	if (inodes < 1 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: cumview_cost [INODES] [ROUNDS<=64]\n");
		return 2;
	}
	snap_init(&cum);
	snap_init(&edges);
	snap_init(&all);
	snap_init(&retired);
	snap_init(&view);
	for (long i = 1; i <= inodes; i++) {
		struct ilock_key k = { .ino = (uint64_t)i, .dev = 7 };
		struct ilock_stats st = { .count = 3, .total_ns = 1000 * (uint64_t)i };
		struct inode_meta m = { .ino = (uint64_t)i, .dev = 7 };
		struct ilock_edge_key ek = { .ino = (uint64_t)i, .dev = 7,
					     .holder_pid = 100 + (uint32_t)(i % 50),
					     .waiter_pid = 200 + (uint32_t)(i % 70) };
		struct ilock_edge_stats es = { 3, 1000 * (uint64_t)i, 1000 };

		snprintf(m.path, sizeof(m.path), "db/base/16384/%ld", 100000 + i);
		strcpy(ek.holder_comm, "postgres");
		strcpy(ek.waiter_comm, "postgres");
		if (snap_add_wait(&cum, &k, &st) || snap_add_inode(&cum, &m) ||
		    snap_add_edge(&edges, &ek, &es))
			return 1;
	}
	if (snap_merge(&all, &cum) || snap_merge(&all, &edges))
		return 1;
	t0 = now_s();
	if (top_retire(&retired, &all, TOP_RETIRE_KEEP))
		return 1;
	retire_ms = (now_s() - t0) * 1e3;
	for (long r = 0; r < rounds; r++) {
		t0 = now_s();
		for (int i = 0; i < 20; i++)
			if (snap_copy(&view, &retired) || snap_merge(&view, &edges) ||
			    snap_merge(&view, &cum))
				return 1;
		by_row[r] = (now_s() - t0) / 20 * 1e3;
		t0 = now_s();
		for (int i = 0; i < 20; i++)
			if (snap_copy(&view, &cum) || snap_copy_edges(&view, &edges) ||
			    snap_merge_under(&view, &retired))
				return 1;
		whole[r] = (now_s() - t0) / 20 * 1e3;
	}
	printf("%ld inodes, retired %zu locks %zu pairs; top_retire %.2f ms\n", inodes,
	       retired.nlocks, retired.nedges, retire_ms);
	printf("rebuild, median of %ld rounds: row by row %.2f ms, copied whole %.2f ms (%.2fx)\n",
	       rounds, median_of(by_row, (size_t)rounds), median_of(whole, (size_t)rounds),
	       median_of(whole, (size_t)rounds) / median_of(by_row, (size_t)rounds));
	snap_free(&cum);
	snap_free(&edges);
	snap_free(&all);
	snap_free(&retired);
	snap_free(&view);
	return 0;
}
