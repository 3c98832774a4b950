// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ilocktop's pure parts: the incremental store (deltas and rates from two
 * reads, checked against snap_delta), the view model (rates, holders,
 * filters, sorting, partial sorting), and the text (layout and rows at
 * several widths, path abbreviation, status lines, the detail view).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "counters.h"
#include "hist.h"
#include "titles.h"
#include "top_format.h"
#include "top_model.h"
#include "top_store.h"
#include "unit.h"
#include "util.h"

#define XFS ILOCK_XFS_SB_MAGIC
#define EXT4 ILOCK_EXT4_SB_MAGIC
#define MS 1000000ULL

static const uint32_t DEV = ILOCK_KDEV(7, 3);

static void add(struct ilock_stats *s, uint64_t v)
{
	s->count++;
	s->total_ns += v;
	s->hist[ilock_hist_slot(v)]++;
	if (v > s->max_ns)
		s->max_ns = v;
}

static struct ilock_key key(uint64_t ino, uint8_t class, uint8_t mode)
{
	struct ilock_key k = { .ino = ino, .dev = DEV, .class = class, .mode = mode };

	return k;
}

static struct ilock_edge_key ekey(uint64_t ino, uint32_t holder, const char *hcomm,
				  uint32_t waiter, const char *wcomm, uint8_t hmode)
{
	struct ilock_edge_key k;

	memset(&k, 0, sizeof(k));
	k.ino = ino;
	k.dev = DEV;
	k.class = ILOCK_CLASS_I_RWSEM;
	k.holder_mode = hmode;
	k.waiter_mode = ILOCK_MODE_SHARED;
	k.holder_pid = k.holder_tgid = holder;
	k.waiter_pid = k.waiter_tgid = waiter;
	/* comm fields need no NUL when full, as the kernel's */
	memcpy(k.holder_comm, hcomm, strnlen(hcomm, sizeof(k.holder_comm)));
	memcpy(k.waiter_comm, wcomm, strnlen(wcomm, sizeof(k.waiter_comm)));
	return k;
}

static void add_inode(struct snapshot *s, uint64_t ino, uint32_t magic, const char *path)
{
	struct inode_meta m = { .ino = ino, .dev = DEV, .magic = magic };

	snprintf(m.path, sizeof(m.path), "%s", path);
	snap_add_inode(s, &m);
}

/* ------------------------------------------------------------- store */

/* One map scan holding one entry. */
static int read_wait(struct top_store *st, struct snapshot *delta, const struct ilock_key *k,
		     const struct ilock_stats *v)
{
	int r;

	top_store_scan_begin(st);
	r = top_store_wait(st, delta, k, v);
	top_store_scan_end(st);
	return r;
}

static int read_edge(struct top_store *st, struct snapshot *delta,
		     const struct ilock_edge_key *k, const struct ilock_edge_stats *v)
{
	int r;

	top_store_scan_begin(st);
	r = top_store_edge(st, delta, k, v);
	top_store_scan_end(st);
	return r;
}

static void test_store_deltas(void)
{
	struct top_store st;
	struct snapshot delta;
	struct ilock_key k = key(100, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED);
	struct ilock_stats a = {}, b;
	const struct lock_row *r;

	top_store_init(&st);
	snap_init(&delta);

	/* first read: everything is new */
	add(&a, 2 * MS);
	add(&a, 8 * MS);
	CHECK_EQ_U(read_wait(&st, &delta, &k, &a), 1);
	r = snap_find_lock(&delta, DEV, 100, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r != NULL);
	CHECK_EQ_U(r->wait[ILOCK_MODE_SHARED].count, 2);
	CHECK_EQ_U(r->wait[ILOCK_MODE_SHARED].total_ns, 10 * MS);
	CHECK_EQ_U(r->wait[ILOCK_MODE_SHARED].max_ns, 8 * MS);
	CHECK_EQ_U(st.cum.nlocks, 1);

	/* same values again: nothing changed, nothing in the delta */
	snap_reset(&delta);
	CHECK_EQ_U(read_wait(&st, &delta, &k, &a), 0);
	CHECK_EQ_U(delta.nlocks, 0);

	/* one more short wait: the delta is exactly it, max clamped to it */
	b = a;
	add(&b, 1 * MS);
	snap_reset(&delta);
	CHECK_EQ_U(read_wait(&st, &delta, &k, &b), 1);
	r = snap_find_lock(&delta, DEV, 100, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r != NULL);
	CHECK_EQ_U(r->wait[ILOCK_MODE_SHARED].count, 1);
	CHECK_EQ_U(r->wait[ILOCK_MODE_SHARED].total_ns, 1 * MS);
	CHECK_EQ_U(r->wait[ILOCK_MODE_SHARED].hist[ilock_hist_slot(MS)], 1);
	CHECK_EQ_U(r->wait[ILOCK_MODE_SHARED].max_ns, 1 * MS);
	CHECK_EQ_U(r->wait[ILOCK_MODE_EXCL].count, 0);
	CHECK(r->max_bound == 1 << ILOCK_MODE_SHARED && row_max_bound(r));  /* shown "<1.00ms" */
	/* cum holds the latest read */
	r = snap_find_lock(&st.cum, DEV, 100, 0, ILOCK_CLASS_I_RWSEM);
	CHECK_EQ_U(r->wait[ILOCK_MODE_SHARED].count, 3);

	/* a longer one: the max rose, so it is exact */
	a = b;
	add(&a, 50 * MS);
	snap_reset(&delta);
	read_wait(&st, &delta, &k, &a);
	r = snap_find_lock(&delta, DEV, 100, 0, ILOCK_CLASS_I_RWSEM);
	CHECK_EQ_U(r->wait[ILOCK_MODE_SHARED].max_ns, 50 * MS);
	CHECK(r->max_bound == 0);

	/* holds land in hold[], and mark the row */
	snap_reset(&delta);
	k.mode = ILOCK_MODE_EXCL;
	CHECK_EQ_U(top_store_hold(&st, &delta, &k, &a), 1);
	r = snap_find_lock(&delta, DEV, 100, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r && r->has_hold);
	CHECK_EQ_U(r->hold[ILOCK_MODE_EXCL].count, 4);
	CHECK_EQ_U(r->wait[ILOCK_MODE_SHARED].count, 0);

	/* bad keys are refused */
	k.mode = ILOCK_MODE_READERS;
	CHECK(read_wait(&st, &delta, &k, &a) < 0);

	top_store_free(&st);
	snap_free(&delta);
}

/* The store's deltas must be those of snap_delta on the same two reads. */
static void test_store_matches_snap_delta(void)
{
	struct snapshot prev, cur, ref, delta;
	struct top_store st;
	unsigned seed = 7;

	snap_init(&prev);
	snap_init(&cur);
	snap_init(&ref);
	snap_init(&delta);
	top_store_init(&st);
	for (int round = 0; round < 6; round++) {
		snap_reset(&cur);
		snap_reset(&delta);
		top_store_scan_begin(&st);
		for (uint64_t ino = 1; ino <= 50; ino++) {
			for (uint8_t m = 0; m < 2; m++) {
				struct ilock_key k = key(ino, (uint8_t)(ino % 3), m);
				const struct lock_row *p = snap_find_lock(&prev, DEV, ino, 0, k.class);
				struct ilock_stats s = p ? p->wait[m] : (struct ilock_stats){};

				/* some entries move, some do not */
				for (int n = rand_r(&seed) % 3; n > 0; n--)
					add(&s, (uint64_t)(rand_r(&seed) % 100000) + 1);
				if (!s.count)
					continue;
				snap_add_wait(&cur, &k, &s);
				CHECK(top_store_wait(&st, &delta, &k, &s) >= 0);
			}
		}
		top_store_scan_end(&st);
		snap_delta(&ref, &cur, round ? &prev : NULL);
		CHECK_EQ_U(delta.nlocks, ref.nlocks);
		for (size_t i = 0; i < ref.nlocks; i++) {
			const struct lock_row *a = &ref.locks[i];
			const struct lock_row *b = snap_find_lock(&delta, a->dev, a->ino, a->gen, a->class);

			CHECK(b != NULL);
			if (!b)
				continue;
			for (int m = 0; m < 2; m++) {
				CHECK_EQ_U(b->wait[m].count, a->wait[m].count);
				CHECK_EQ_U(b->wait[m].total_ns, a->wait[m].total_ns);
				CHECK(!memcmp(b->wait[m].hist, a->wait[m].hist, sizeof(a->wait[m].hist)));
				/* the store only tightens the bound: never above, never below the truth */
				CHECK(b->wait[m].max_ns <= a->wait[m].max_ns);
				CHECK(b->wait[m].max_ns <= b->wait[m].total_ns);
			}
		}
		snap_copy(&prev, &cur);
	}
	snap_free(&prev);
	snap_free(&cur);
	snap_free(&ref);
	snap_free(&delta);
	top_store_free(&st);
}

/* Map order changes (a new key in a bucket) must not lose or invent deltas. */
static void test_store_scan_order(void)
{
	struct top_store st;
	struct snapshot delta;
	struct ilock_key k[4];
	struct ilock_stats v[4] = {};
	const struct lock_row *r;
	int order1[] = { 0, 1, 2 }, order2[] = { 3, 0, 2, 1 };

	top_store_init(&st);
	snap_init(&delta);
	for (int i = 0; i < 4; i++) {
		k[i] = key(10 + (uint64_t)i, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED);
		add(&v[i], (uint64_t)(i + 1) * MS);
	}
	top_store_scan_begin(&st);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_U(top_store_wait(&st, &delta, &k[order1[i]], &v[order1[i]]), 1);
	top_store_scan_end(&st);
	/* the same scan again: all skipped at their positions */
	snap_reset(&delta);
	top_store_scan_begin(&st);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_U(top_store_wait(&st, &delta, &k[order1[i]], &v[order1[i]]), 0);
	top_store_scan_end(&st);
	CHECK_EQ_U(delta.nlocks, 0);
	/* a new key first, the rest shuffled, one of them moved */
	add(&v[2], 7 * MS);
	snap_reset(&delta);
	top_store_scan_begin(&st);
	for (int i = 0; i < 4; i++)
		top_store_wait(&st, &delta, &k[order2[i]], &v[order2[i]]);
	top_store_scan_end(&st);
	CHECK_EQ_U(delta.nlocks, 2);
	r = snap_find_lock(&delta, DEV, 13, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r && r->wait[0].count == 1 && r->wait[0].total_ns == 4 * MS);
	r = snap_find_lock(&delta, DEV, 12, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r && r->wait[0].count == 1 && r->wait[0].total_ns == 7 * MS);
	CHECK(snap_find_lock(&delta, DEV, 10, 0, ILOCK_CLASS_I_RWSEM) == NULL);
	/* and in that new order, an unchanged scan is all shortcuts again */
	snap_reset(&delta);
	top_store_scan_begin(&st);
	for (int i = 0; i < 4; i++)
		CHECK_EQ_U(top_store_wait(&st, &delta, &k[order2[i]], &v[order2[i]]), 0);
	top_store_scan_end(&st);
	CHECK_EQ_U(st.nwpos, 4);
	CHECK_EQ_U(st.cum.nlocks, 4);
	/* same order, one moved: its row is the one remembered at that position */
	add(&v[1], 5 * MS);
	snap_reset(&delta);
	top_store_scan_begin(&st);
	for (int i = 0; i < 4; i++)
		CHECK_EQ_U(top_store_wait(&st, &delta, &k[order2[i]], &v[order2[i]]), order2[i] == 1);
	top_store_scan_end(&st);
	r = snap_find_lock(&delta, DEV, 11, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(delta.nlocks == 1 && r && r->wait[0].count == 1 && r->wait[0].total_ns == 5 * MS);
	r = snap_find_lock(&st.cum, DEV, 11, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r && r->wait[0].count == 2 && r->wait[0].total_ns == 7 * MS);
	r = snap_find_lock(&st.cum, DEV, 12, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r && r->wait[0].count == 2 && r->wait[0].total_ns == 10 * MS);
	top_store_free(&st);
	snap_free(&delta);
}

static void test_store_edges_and_counters(void)
{
	struct top_store st;
	struct snapshot delta;
	struct ilock_edge_key k = ekey(100, 10, "fio", 11, "reader", ILOCK_MODE_EXCL);
	struct ilock_edge_stats e = { .count = 3, .total_ns = 30 * MS, .max_ns = 20 * MS };
	struct ilock_edge_stats out, p, c;
	const struct snapshot *cum;
	uint64_t counters[ILOCK_COUNTER_MAX] = {};

	top_store_init(&st);
	snap_init(&delta);
	CHECK_EQ_U(read_edge(&st, &delta, &k, &e), 1);
	CHECK_EQ_U(delta.nedges, 1);
	CHECK_EQ_U(delta.edges[0].s.count, 3);
	snap_reset(&delta);
	CHECK_EQ_U(read_edge(&st, &delta, &k, &e), 0);
	CHECK_EQ_U(delta.nedges, 0);
	e.count = 5;
	e.total_ns = 32 * MS;
	CHECK_EQ_U(read_edge(&st, &delta, &k, &e), 1);
	CHECK_EQ_U(delta.edges[0].s.count, 2);
	CHECK_EQ_U(delta.edges[0].s.total_ns, 2 * MS);
	CHECK_EQ_U(delta.edges[0].s.max_ns, 2 * MS);  /* did not rise: bounded by the total */
	cum = top_store_edges(&st);
	CHECK(cum && cum->nedges == 1);
	CHECK_EQ_U(cum->edges[0].s.count, 5);
	CHECK_EQ_U(cum->edges[0].s.max_ns, 20 * MS);

	/* many edges: the index grows and still finds every one */
	top_store_scan_begin(&st);
	for (uint32_t i = 0; i < 3000; i++) {
		struct ilock_edge_key k2 = ekey(1000 + i, i, "w", i + 1, "r", ILOCK_MODE_EXCL);
		struct ilock_edge_stats one = { 1, 1000, 1000 };

		top_store_edge(&st, &delta, &k2, &one);
	}
	top_store_scan_end(&st);
	/* read back in the reverse order: no position shortcut, the index answers */
	snap_reset(&delta);
	top_store_scan_begin(&st);
	for (uint32_t i = 3000; i-- > 0;) {
		struct ilock_edge_key k2 = ekey(1000 + i, i, "w", i + 1, "r", ILOCK_MODE_EXCL);
		struct ilock_edge_stats one = { 1, 1000, 1000 };

		CHECK(top_store_edge(&st, &delta, &k2, &one) == 0);
	}
	top_store_scan_end(&st);
	CHECK_EQ_U(delta.nedges, 0);
	CHECK_EQ_U(st.nedges, 3001);

	p = (struct ilock_edge_stats){ 10, 100, 50 };
	c = (struct ilock_edge_stats){ 12, 400, 250 };
	top_edge_delta(&out, &c, &p);
	CHECK_EQ_U(out.count, 2);
	CHECK_EQ_U(out.total_ns, 300);
	CHECK_EQ_U(out.max_ns, 250);
	c = (struct ilock_edge_stats){ 10, 100, 50 };
	top_edge_delta(&out, &c, &p);
	CHECK_EQ_U(out.count, 0);
	CHECK_EQ_U(out.max_ns, 0);

	counters[ILOCK_EV_WAIT] = 10;
	CHECK(top_store_counters(&st, &delta, counters));
	CHECK_EQ_U(delta.counters[ILOCK_EV_WAIT], 10);
	CHECK(!top_store_counters(&st, &delta, counters));
	CHECK_EQ_U(delta.counters[ILOCK_EV_WAIT], 0);
	counters[ILOCK_EV_WAIT] = 25;
	counters[ILOCK_LOST_WAIT_MAP_FULL] = 2;
	CHECK(top_store_counters(&st, &delta, counters));
	CHECK_EQ_U(delta.counters[ILOCK_EV_WAIT], 15);
	CHECK_EQ_U(snap_lost_sum(&delta, NULL), 2);
	CHECK_EQ_U(snap_lost_sum(&delta, counter_undercounts), 2);
	CHECK_EQ_U(st.cum.counters[ILOCK_EV_WAIT], 25);
	/* waits begun before tracing, a stack, a path: lost, but no count is low */
	counters[ILOCK_LOST_END_NO_BEGIN] = 6;
	counters[ILOCK_LOST_HOLDER_STACK] = 3;
	counters[ILOCK_LOST_PATH] = 1;
	counters[ILOCK_LOST_BEGIN_NO_END] = 4;
	CHECK(top_store_counters(&st, &delta, counters));
	CHECK_EQ_U(snap_lost_sum(&delta, NULL), 14);
	CHECK_EQ_U(snap_lost_sum(&delta, counter_undercounts), 4);

	top_store_free(&st);
	snap_free(&delta);
}

/* --------------------------------------------------------- view model */

/* Two XFS inodes and one ext4 one, with waits, holders and paths. */
static void fixture(struct snapshot *s)
{
	struct ilock_key k;
	struct ilock_stats st = {};
	struct ilock_edge_key ek;
	struct ilock_edge_stats es;

	snap_init(s);
	/* ino 100: 3 shared waits, 300 ms in all; the busiest */
	for (int i = 0; i < 3; i++)
		add(&st, 100 * MS);
	k = key(100, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED);
	snap_add_wait(s, &k, &st);
	/* ino 200: 10 exclusive waits of 1 ms: most waits, little time */
	memset(&st, 0, sizeof(st));
	for (int i = 0; i < 10; i++)
		add(&st, 1 * MS);
	k = key(200, ILOCK_CLASS_XFS_ILOCK, ILOCK_MODE_EXCL);
	snap_add_wait(s, &k, &st);
	/* ino 300 on ext4: one long shared and one exclusive wait */
	memset(&st, 0, sizeof(st));
	add(&st, 150 * MS);
	k = key(300, ILOCK_CLASS_INVALIDATE, ILOCK_MODE_SHARED);
	snap_add_wait(s, &k, &st);
	k.mode = ILOCK_MODE_EXCL;
	snap_add_wait(s, &k, &st);
	/* ino 400: holds only, no waits: not a row */
	k = key(400, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL);
	snap_add_hold(s, &k, &st);

	add_inode(s, 100, XFS, "/db/table.ibd");
	add_inode(s, 200, XFS, "/db/log");
	add_inode(s, 300, EXT4, "/var/spool/q");

	/* ino 100: fio held it (250 ms of waits), cp a little (50 ms) */
	ek = ekey(100, 4257, "fio", 900, "reader", ILOCK_MODE_EXCL);
	ek.holder_op = ILOCK_OP_BUFFERED_WRITE;
	ek.waiter_op = ILOCK_OP_BUFFERED_READ;
	ek.range = ILOCK_RANGE_DISJOINT;
	es = (struct ilock_edge_stats){ 2, 250 * MS, 200 * MS };
	snap_add_edge(s, &ek, &es);
	ek = ekey(100, 77, "cp", 901, "reader", ILOCK_MODE_EXCL);
	es = (struct ilock_edge_stats){ 1, 50 * MS, 50 * MS };
	snap_add_edge(s, &ek, &es);
	/* ino 200: nobody owned it (queued behind others) */
	ek = ekey(200, 0, "", 902, "postgres", ILOCK_MODE_UNKNOWN);
	ek.class = ILOCK_CLASS_XFS_ILOCK;
	es = (struct ilock_edge_stats){ 10, 10 * MS, 1 * MS };
	snap_add_edge(s, &ek, &es);
}

static const struct top_row *row_of(const struct top_view *v, uint64_t ino)
{
	for (size_t i = 0; i < v->nrows; i++)
		if (v->rows[i].ino == ino)
			return &v->rows[i];
	return NULL;
}

/* The TOP HOLDER ilocktop shows for ino in s (an edge of s), NULL when none or no row. */
static const struct edge_row *shown_holder(const struct snapshot *s, uint64_t ino)
{
	const struct edge_row *h = NULL;
	const struct top_row *r;
	struct top_view v;

	top_view_init(&v);
	CHECK_EQ_U(top_view_build(&v, s, s, s, NULL, 2.0, false, NULL), 0);
	top_view_prepare(&v, v.nrows);
	r = row_of(&v, ino);
	h = r ? r->holder : NULL;
	top_view_free(&v);
	return h;
}

static void test_view_rates(void)
{
	struct snapshot s;
	struct top_view v;
	const struct top_row *r;

	fixture(&s);
	top_view_init(&v);
	CHECK_EQ_U(top_view_build(&v, &s, &s, &s, NULL, 2.0, false, NULL), 0);
	CHECK_EQ_U(v.nrows, 3);  /* the hold-only lock is not a row */
	CHECK_EQ_U(v.total, 3);
	r = row_of(&v, 100);
	CHECK(r != NULL);
	/* 3 waits in 2 s; 300 ms waited in 2 s = 0.15 s/s */
	CHECK(r->rate[ILOCK_MODE_SHARED] > 1.49 && r->rate[ILOCK_MODE_SHARED] < 1.51);
	CHECK(r->rate[ILOCK_MODE_EXCL] == 0.0);
	CHECK(r->wait_sps > 0.1499 && r->wait_sps < 0.1501);
	CHECK_EQ_U(r->wait_ns, 300 * MS);
	CHECK_EQ_U(r->max_ns, 100 * MS);
	CHECK_EQ_U(r->magic, XFS);
	/* the holder that cost the most: found for the rows about to be shown */
	CHECK(!r->holder_known);
	top_view_prepare(&v, v.nrows);
	r = row_of(&v, 100);
	CHECK(r->holder_known && r->holder && r->holder->k.holder_pid == 4257);
	{
		/* threads folded together waited longer than fio: fio still names the holder */
		struct ilock_edge_key fk = ekey(100, ILOCK_PID_FOLDED, "fio", ILOCK_PID_FOLDED,
						"reader", ILOCK_MODE_EXCL);
		struct ilock_edge_stats fs = { 9, 900 * MS, 200 * MS };
		const struct edge_row *h;
		struct snapshot s2;

		fixture(&s2);
		snap_add_edge(&s2, &fk, &fs);
		h = shown_holder(&s2, 100);
		CHECK(h && h->k.holder_pid == 4257);
		snap_free(&s2);
	}
	{
		/*
		 * A holder's pairs summed, as ilock stat's TOP HOLDER sums them:
		 * cp made three readers wait 120 ms each, more than fio's 250 ms
		 * in all, though each of cp's pairs is smaller than fio's.
		 */
		const struct edge_row *h;
		struct snapshot s2;

		fixture(&s2);
		for (uint32_t w = 910; w < 913; w++) {
			struct ilock_edge_key ck = ekey(100, 78, "cp", w, "reader", ILOCK_MODE_EXCL);
			struct ilock_edge_stats cs = { 1, 120 * MS, 120 * MS };

			snap_add_edge(&s2, &ck, &cs);
		}
		h = shown_holder(&s2, 100);
		CHECK(h && h->k.holder_pid == 78);
		CHECK(h && h == snap_top_holder(&s2, DEV, 100, 0, ILOCK_CLASS_I_RWSEM));
		snap_free(&s2);
	}
	r = row_of(&v, 300);
	CHECK(r && r->wait_sps > 0.1499 && r->wait_sps < 0.1501);
	CHECK(r && r->rate[0] == 0.5 && r->rate[1] == 0.5);
	CHECK(r && r->holder == NULL);
	/* the rows' wait seconds per second, added: tasks waiting on average */
	{
		double sum = 0;

		for (size_t i = 0; i < v.nrows; i++)
			sum += v.rows[i].wait_sps;
		CHECK(sum > 0.3 && fabs(top_view_tasks_waiting(&v) - sum) < 1e-9);
		v.rows[0].class = ILOCK_CLASS_JBD2_WAIT;  /* the journal is no lock wait */
		CHECK(fabs(top_view_tasks_waiting(&v) - (sum - v.rows[0].wait_sps)) < 1e-9);
		v.rows[0].class = v.rows[0].lock->class;
	}
	/* 1.0 s/s means one thread blocked the whole time */
	CHECK(top_rate(5, 0) == 0.0);
	CHECK(top_rate(5, 2.5) == 2.0);
	top_view_free(&v);
	snap_free(&s);
}

static void test_view_filter(void)
{
	struct snapshot s;
	struct top_view v;
	struct top_filter f = {};
	struct mount_table mt;

	fixture(&s);
	mounts_parse(&mt, "36 25 7:3 / /srv rw - xfs /dev/loop3 rw\n");
	top_view_init(&v);
	/* a path part (the full path, through the mount) */
	snprintf(f.text, sizeof(f.text), "/srv/db/");
	top_view_build(&v, &s, &s, &s, &mt, 1.0, false, &f);
	CHECK_EQ_U(v.nrows, 3 - 1 + 0);  /* /srv/db/table.ibd and /srv/db/log */
	CHECK(row_of(&v, 100) && row_of(&v, 200) && !row_of(&v, 300));
	CHECK_EQ_U(v.total, 3);
	/* a waiter's comm */
	snprintf(f.text, sizeof(f.text), "postgres");
	top_view_build(&v, &s, &s, &s, &mt, 1.0, false, &f);
	CHECK_EQ_U(v.nrows, 1);
	CHECK(row_of(&v, 200) != NULL);
	/* a holder's comm */
	snprintf(f.text, sizeof(f.text), "fio");
	top_view_build(&v, &s, &s, &s, &mt, 1.0, false, &f);
	CHECK_EQ_U(v.nrows, 1);
	CHECK(row_of(&v, 100) != NULL);
	/* nothing */
	snprintf(f.text, sizeof(f.text), "no-such-thing");
	top_view_build(&v, &s, &s, &s, &mt, 1.0, false, &f);
	CHECK_EQ_U(v.nrows, 0);
	/* a process title, of a waiter and of a holder; a title read for another comm is not it */
	{
		struct titles ti;

		titles_init(&ti);
		CHECK(!titles_put(&ti, 902, "postgres", "postgres: bob shop [local] UPDATE"));
		CHECK(!titles_put(&ti, 4257, "fio", "fio: checkpointer"));
		CHECK(!titles_put(&ti, 77, "other", "other: bob shop"));
		f.titles = &ti;
		snprintf(f.text, sizeof(f.text), "bob shop");
		top_view_build(&v, &s, &s, &s, &mt, 1.0, false, &f);
		CHECK_EQ_U(v.nrows, 1);
		CHECK(row_of(&v, 200) != NULL);
		snprintf(f.text, sizeof(f.text), "checkpointer");
		top_view_build(&v, &s, &s, &s, &mt, 1.0, false, &f);
		CHECK_EQ_U(v.nrows, 1);
		CHECK(row_of(&v, 100) != NULL);
		/* ino 200's holder is nobody: its waiter's title only */
		f.titles = NULL;
		top_view_build(&v, &s, &s, &s, &mt, 1.0, false, &f);
		CHECK_EQ_U(v.nrows, 0);
		titles_free(&ti);
	}
	top_view_free(&v);
	mounts_free(&mt);
	snap_free(&s);
}

static void test_view_sort(void)
{
	struct snapshot s;
	struct top_view v;

	fixture(&s);
	top_view_init(&v);
	top_view_build(&v, &s, &s, &s, NULL, 1.0, false, NULL);
	top_view_sort(&v, SORT_WAIT_TIME, 0);
	/* 300 ms (100), 300 ms (300: ties by dev, ino), 10 ms (200) */
	CHECK_EQ_U(v.rows[0].ino, 100);
	CHECK_EQ_U(v.rows[1].ino, 300);
	CHECK_EQ_U(v.rows[2].ino, 200);
	top_view_sort(&v, SORT_WAITS, 0);
	CHECK_EQ_U(v.rows[0].ino, 200);
	top_view_sort(&v, SORT_EXCL, 0);
	CHECK_EQ_U(v.rows[0].ino, 200);
	CHECK_EQ_U(v.rows[1].ino, 300);
	top_view_sort(&v, SORT_SHARED, 0);
	CHECK_EQ_U(v.rows[0].ino, 100);
	top_view_sort(&v, SORT_MAX, 0);
	CHECK_EQ_U(v.rows[0].ino, 300);
	top_view_sort(&v, SORT_P99, 0);
	CHECK_EQ_U(v.rows[0].ino, 300);
	CHECK(v.rows[0].p99_known && v.rows[0].p99_ns <= 150 * MS && v.rows[0].p99_ns >= 128 * MS);
	CHECK_EQ_U(v.sorted, 3);
	CHECK_EQ_U(top_view_find(&v, DEV, 200, 0, ILOCK_CLASS_XFS_ILOCK), 2);
	CHECK(top_view_find(&v, DEV, 200, 0, ILOCK_CLASS_I_RWSEM) < 0);

	CHECK_EQ_U(top_sort_next(SORT_WAIT_TIME, 1), SORT_WAITS);
	CHECK_EQ_U(top_sort_next(SORT_WAIT_TIME, -1), SORT_EXCL);
	CHECK_EQ_U(top_sort_next(SORT_EXCL, 1), SORT_WAIT_TIME);
	top_view_free(&v);
	snap_free(&s);
}

static int cmp_ref(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->wait_ns != y->wait_ns)
		return x->wait_ns < y->wait_ns ? 1 : -1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Partial sorting gives the same first rows as a full sort. */
static void test_partial_sort(void)
{
	struct snapshot s;
	struct top_view v;
	struct top_row *ref;
	unsigned seed = 3;
	const size_t n = 5000;

	snap_init(&s);
	for (uint64_t ino = 1; ino <= n; ino++) {
		struct ilock_key k = key(ino, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED);
		struct ilock_stats st = {};

		/* plenty of equal totals, so the ties are exercised too */
		add(&st, (uint64_t)(rand_r(&seed) % 200) * 1000 + 1000);
		snap_add_wait(&s, &k, &st);
	}
	top_view_init(&v);
	top_view_build(&v, &s, &s, &s, NULL, 1.0, false, NULL);
	ref = malloc(n * sizeof(*ref));
	memcpy(ref, v.rows, n * sizeof(*ref));
	qsort(ref, n, sizeof(*ref), cmp_ref);
	for (size_t want = 1; want < n; want = want * 3 + 1) {
		bool same = true;

		top_view_build(&v, &s, &s, &s, NULL, 1.0, false, NULL);
		top_view_sort(&v, SORT_WAIT_TIME, want);
		CHECK(v.sorted >= want);
		for (size_t i = 0; i < want; i++)
			same &= v.rows[i].ino == ref[i].ino;
		CHECK(same);
		/* asking for more later extends the sorted part */
		top_view_prepare(&v, want + 100 < n ? want + 100 : n);
		same = true;
		for (size_t i = 0; i < want + 100 && i < n; i++)
			same &= v.rows[i].ino == ref[i].ino;
		CHECK(same);
	}
	free(ref);
	top_view_free(&v);
	snap_free(&s);
}

/* ------------------------------------------------------------- format */

static void test_deadlines(void)
{
	const uint64_t S = 1000000000ULL;

	/* on time or a little late: the next slot of the schedule */
	CHECK_EQ_U(top_next_deadline(10 * S, S, 10 * S), 11 * S);
	CHECK_EQ_U(top_next_deadline(10 * S, S, 10 * S + 300000000ULL), 11 * S);
	/* the work took 2.5 intervals: skip to the schedule, do not bunch up */
	CHECK_EQ_U(top_next_deadline(10 * S, S, 12 * S + 500000000ULL), 13 * S);
	/* woken early (a key, a signal): the deadline stands */
	CHECK_EQ_U(top_next_deadline(10 * S, S, 9 * S), 10 * S);
	/* drift-free over many ticks whatever each one's lateness */
	{
		uint64_t t = 0;

		for (int i = 0; i < 1000; i++)
			t = top_next_deadline(t, S / 4, t + (uint64_t)(i % 7) * 1000000ULL);
		CHECK_EQ_U(t, 1000 * (S / 4));
	}
	/* a stop of a day: one jump */
	CHECK_EQ_U(top_next_deadline(S, S, 86400 * S), 86401 * S);
}

static void test_numbers(void)
{
	char b[32];

	CHECK_STR(top_fmt_rate(b, sizeof(b), 0), "0");
	CHECK_STR(top_fmt_rate(b, sizeof(b), 0.05), "0.05");
	CHECK_STR(top_fmt_rate(b, sizeof(b), 1.5), "1.5");
	CHECK_STR(top_fmt_rate(b, sizeof(b), 812), "812");
	CHECK_STR(top_fmt_rate(b, sizeof(b), 12345), "12.3k");
	CHECK_STR(top_fmt_rate(b, sizeof(b), 345678), "346k");
	CHECK_STR(top_fmt_rate(b, sizeof(b), 2500000), "2.5M");
	CHECK_STR(top_fmt_count(b, sizeof(b), 99999), "99999");
	CHECK_STR(top_fmt_count(b, sizeof(b), 123456), "123k");
	CHECK_STR(top_fmt_sps(b, sizeof(b), 0), "0");
	CHECK_STR(top_fmt_sps(b, sizeof(b), 1.0), "1.000");
	CHECK_STR(top_fmt_sps(b, sizeof(b), 0.0123), "0.012");
	CHECK_STR(top_fmt_sps(b, sizeof(b), 0.00004), "<0.001");
	CHECK_STR(top_fmt_sps(b, sizeof(b), 0.0005), "0.001");
	CHECK_STR(top_fmt_sps(b, sizeof(b), 12.5), "12.50");
	CHECK_STR(top_fmt_sps(b, sizeof(b), 150), "150.0");
	CHECK_STR(top_fmt_ns(b, sizeof(b), 16200000), "16.2ms");
	CHECK_STR(top_fmt_ns(b, sizeof(b), 950), "950ns");
	CHECK_STR(top_fmt_ns(b, sizeof(b), 3400000000ULL), "3.40s");
	CHECK_STR(top_class_name(ILOCK_CLASS_I_RWSEM, XFS), "IOLOCK");
	CHECK_STR(top_class_name(ILOCK_CLASS_INVALIDATE, XFS), "MMAPLOCK");
	CHECK_STR(top_class_name(ILOCK_CLASS_XFS_ILOCK, XFS), "ILOCK");
	CHECK_STR(top_class_name(ILOCK_CLASS_I_RWSEM, EXT4), "i_rwsem");
	CHECK_STR(top_class_name(ILOCK_CLASS_INVALIDATE, EXT4), "inv_lock");
}

static void test_layout(void)
{
	static const int widths[] = { 40, 60, 80, 100, 120, 160, 200, 300 };
	struct top_layout l;

	for (size_t i = 0; i < ARRAY_SIZE(widths); i++) {
		top_layout_compute(&l, widths[i], false);
		CHECK(l.used <= widths[i]);
		/* the identity and the key number are always there */
		CHECK(l.w[COL_PATH] > 0 && l.w[COL_WAIT] > 0);
	}
	top_layout_compute(&l, 80, false);
	CHECK_EQ_U(l.used, 80);
	CHECK(l.w[COL_DEVINO] == 0 && l.w[COL_FS] == 0);   /* dropped first */
	/* then P99 (MAX stays): the holder keeps its thread id and mode, "fio[23844] next excl" */
	CHECK(l.w[COL_P99] == 0 && l.w[COL_MAX] > 0);
	CHECK(l.w[COL_HOLDER] >= 20 && l.w[COL_PATH] >= 14);
	/* at 120, DEV:INO gives way so that neither the path nor the holder is cut short */
	top_layout_compute(&l, 120, false);
	CHECK_EQ_U(l.used, 120);
	CHECK(l.w[COL_DEVINO] == 0 && l.w[COL_FS] > 0);
	CHECK(l.w[COL_PATH] >= 30 && l.w[COL_HOLDER] >= 22);
	CHECK(l.w[COL_P99] > 0 && l.w[COL_MAX] > 0 && l.w[COL_DISJ] > 0);
	top_layout_compute(&l, 160, false);
	CHECK(l.w[COL_DEVINO] > 0 && l.w[COL_FS] > 0 && l.w[COL_HOLDER] == 26);
	top_layout_compute(&l, 200, false);
	CHECK_EQ_U(l.used, 200);
	CHECK(l.w[COL_PATH] >= 80);  /* the path gets the room */
	top_layout_compute(&l, 60, false);
	CHECK(l.w[COL_MAX] == 0);    /* numbers go after identity */
	/* narrower still: the lock's class outlasts the rates, or IOLOCK and ILOCK rows look alike */
	top_layout_compute(&l, 40, false);
	CHECK(l.w[COL_PATH] > 0 && l.w[COL_CLASS] > 0 && l.w[COL_WAIT] > 0);
	CHECK(l.w[COL_SH] == 0 && l.w[COL_EX] == 0 && l.used <= 40);
}

static void test_rows_at_widths(void)
{
	static const int widths[] = { 80, 120, 200 };
	struct snapshot s;
	struct top_view v;
	struct mount_table mt;
	char line[2048], label[600], hdr[2048];
	struct inode_view iv;

	fixture(&s);
	mounts_parse(&mt, "36 25 7:3 / /srv/very/long/mount/point/for/databases rw - xfs /dev/loop3 rw\n");
	top_view_init(&v);
	top_view_build(&v, &s, &s, &s, &mt, 1.0, false, NULL);
	top_view_sort(&v, SORT_WAIT_TIME, 0);
	top_view_prepare(&v, v.nrows);
	for (size_t i = 0; i < ARRAY_SIZE(widths); i++) {
		struct top_layout l;
		int n;

		top_layout_compute(&l, widths[i], false);
		n = top_format_header(hdr, sizeof(hdr), &l, SORT_WAIT_TIME);
		CHECK(n <= widths[i] && (int)strlen(hdr) == n);
		CHECK(strstr(hdr, "WAIT s/s*") != NULL);
		CHECK(strstr(hdr, "PATH") == hdr);
		top_inode_label(label, sizeof(label), &iv, &s, &mt, v.rows[0].dev, v.rows[0].ino, v.rows[0].gen,
				v.rows[0].has_hold);
		CHECK_STR(label, "/srv/very/long/mount/point/for/databases/db/table.ibd");
		n = top_format_row(line, sizeof(line), &l, &v.rows[0], label, &iv, NULL);
		CHECK(n <= widths[i] && (int)strlen(line) == n);
		CHECK(strstr(line, "IOLOCK") != NULL);
		CHECK(strstr(line, "0.300") != NULL);  /* 300 ms in 1 s */
		CHECK(strstr(line, "3.0") != NULL);    /* shared waits/s */
		/* narrow: the path is cut from the left, its end kept */
		if (l.w[COL_PATH] < (int)strlen(label))
			CHECK(strstr(line, "...") == line && strstr(line, "table.ibd") != NULL);
		else
			CHECK(strstr(line, label) == line);
		/* the holder shows when its column does */
		if (l.w[COL_HOLDER] >= 14)
			CHECK(strstr(line, "fio[4257] excl") != NULL);
		if (l.w[COL_DEVINO])
			CHECK(strstr(line, "7:3:100") != NULL);
		if (l.w[COL_FS])
			CHECK(strstr(line, " xfs ") != NULL);
	}
	/* at 200 columns nothing is cut */
	{
		struct top_layout l;
		struct top_row bound = v.rows[0];

		top_layout_compute(&l, 200, false);
		top_format_row(line, sizeof(line), &l, &v.rows[0], label, &iv, NULL);
		CHECK(strstr(line, label) == line);
		CHECK(strstr(line, " 100ms ") != NULL);
		/* a window's max that only bounds its longest wait reads "<" */
		bound.max_bound = true;
		top_format_row(line, sizeof(line), &l, &bound, label, &iv, NULL);
		CHECK(strstr(line, " <100ms ") != NULL);
	}
	/* the ext4 row: no XFS names, and the queued holder */
	{
		struct top_layout l;
		const struct top_row *r = row_of(&v, 300);

		top_layout_compute(&l, 160, false);
		top_inode_label(label, sizeof(label), &iv, &s, &mt, r->dev, r->ino, r->gen, r->has_hold);
		CHECK_STR(label, "/srv/very/long/mount/point/for/databases/var/spool/q");
		top_format_row(line, sizeof(line), &l, r, label, &iv, NULL);
		CHECK(strstr(line, "inv_lock") != NULL);
		CHECK(strstr(line, "ext4") != NULL);
		r = row_of(&v, 200);
		top_format_row(line, sizeof(line), &l, r, "/x", &iv, NULL);
		CHECK(strstr(line, "(no owner)") != NULL);
	}
	/* cumulative: totals and their titles */
	{
		struct top_layout l;

		top_view_build(&v, &s, &s, &s, &mt, 10.0, true, NULL);
		top_view_sort(&v, SORT_WAITS, 0);
		top_layout_compute(&l, 120, true);
		top_format_header(hdr, sizeof(hdr), &l, SORT_WAITS);
		CHECK(strstr(hdr, "SHARED*") != NULL && strstr(hdr, "EXCL*") != NULL);
		CHECK(strstr(hdr, "WAITED") != NULL && !strstr(hdr, "s/s"));
		top_format_row(line, sizeof(line), &l, &v.rows[0], "/db/log", &iv, NULL);
		CHECK(strstr(line, " 10 ") != NULL);    /* 10 exclusive waits, not 1.0/s */
		CHECK(strstr(line, "10.0ms") != NULL);  /* waited in all */
	}
	top_view_free(&v);
	mounts_free(&mt);
	snap_free(&s);
}

/* DISJ: the share of a lock's wait time between disjoint byte ranges. */
static void test_headroom_column(void)
{
	struct snapshot s;
	struct top_view v;
	struct top_layout l;
	char line[2048], hdr[2048];

	fixture(&s);  /* its lock rows carry no range sums: the view adds up the pairs' */
	/*
	 * ino 200 is an ILOCK: a pair whose two syscalls' byte ranges were
	 * disjoint says nothing of a lock on the inode's metadata, so its DISJ
	 * stays "-", as in ilock stat (1 ms behind fio against 10 behind no
	 * owner: a thread that can be named is the top holder, as in stat)
	 */
	{
		struct ilock_edge_key ek = ekey(200, 4257, "fio", 903, "reader", ILOCK_MODE_EXCL);
		struct ilock_edge_stats es = { 1, 1 * MS, 1 * MS };

		ek.class = ILOCK_CLASS_XFS_ILOCK;
		ek.holder_op = ILOCK_OP_BUFFERED_WRITE;
		ek.waiter_op = ILOCK_OP_BUFFERED_READ;
		ek.range = ILOCK_RANGE_DISJOINT;
		snap_add_edge(&s, &ek, &es);
	}
	top_view_init(&v);
	top_view_build(&v, &s, &s, &s, NULL, 1.0, false, NULL);
	top_view_sort(&v, SORT_WAIT_TIME, 0);
	top_view_prepare(&v, v.nrows);
	top_layout_compute(&l, 160, false);
	CHECK(l.w[COL_DISJ] > 0);
	top_format_header(hdr, sizeof(hdr), &l, SORT_WAIT_TIME);
	CHECK(strstr(hdr, "  MAX  DISJ TOP HOLDER") != NULL);
	/* ino 100: 250 ms behind fio on disjoint bytes, 50 ms behind cp, ranges unknown */
	top_format_row(line, sizeof(line), &l, row_of(&v, 100), "/db/table.ibd", NULL, NULL);
	CHECK(strstr(line, "   83% fio[4257] excl") != NULL);
	/* ino 200: no wait had both ranges */
	top_format_row(line, sizeof(line), &l, row_of(&v, 200), "/db/log", NULL, NULL);
	CHECK(strstr(line, "     - fio[4257] excl") != NULL);
	/* at 80 columns it goes, after the device and the filesystem */
	top_layout_compute(&l, 80, false);
	CHECK(l.w[COL_DISJ] == 0 && l.w[COL_MAX] > 0);
	top_view_free(&v);
	snap_free(&s);
}

static void test_path_abbrev(void)
{
	struct top_layout l;
	struct top_row r = { .ino = 5, .dev = DEV, .class = ILOCK_CLASS_I_RWSEM, .magic = XFS };
	char line[512];
	const char *path = "/a/very/long/path/that/does/not/fit/anywhere/file.dat";

	top_layout_compute(&l, 80, false);
	top_format_row(line, sizeof(line), &l, &r, path, NULL, NULL);
	/* "..." then an end of the path, within the column */
	{
		char cell[256];
		size_t n;

		snprintf(cell, sizeof(cell), "%.*s", l.w[COL_PATH], line);
		n = strcspn(cell, " ");
		cell[n] = 0;
		CHECK(!strncmp(cell, "...", 3));
		CHECK(n > 3 && n <= (size_t)l.w[COL_PATH]);
		CHECK(!strcmp(cell + 3, path + strlen(path) - (n - 3)));
		CHECK(strstr(cell, "file.dat") != NULL);
		CHECK(line[l.w[COL_PATH]] == ' ');
	}
	/* short paths are padded, never cut */
	top_format_row(line, sizeof(line), &l, &r, "/f", NULL, NULL);
	CHECK(!strncmp(line, "/f ", 3));
	/* a tiny terminal still gets a valid, bounded line */
	top_layout_compute(&l, 12, false);
	CHECK(top_format_row(line, sizeof(line), &l, &r, path, NULL, NULL) <= 12);
}

struct lines {
	char text[16][1100];
	enum top_line_kind kind[16];
	int n;
};

static void collect(void *ctx, enum top_line_kind kind, const char *line)
{
	struct lines *l = ctx;

	if (l->n < 16) {
		snprintf(l->text[l->n], sizeof(l->text[0]), "%s", line);
		l->kind[l->n++] = kind;
	}
}

/* A holder too long for TOP HOLDER loses letters of its command, not its thread id or mode. */
static void test_fit_holder(void)
{
	struct edge_row e = {};
	char buf[96];

	memcpy(e.k.holder_comm, "contend_many", 12);
	e.k.holder_pid = 10807;
	e.k.holder_mode = ILOCK_MODE_EXCL;
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 30, NULL), "contend_many[10807] excl");
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 21, NULL), "contend_~[10807] excl");
	e.k.holder_mode = ILOCK_MODE_QUEUED_EXCL;
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 22, NULL), "cont~[10807] next excl");
	e.k.holder_mode = ILOCK_MODE_READERS;
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 22, NULL), "readers, conte~[10807]");
	/* a command named like the word before it: its own letters give way */
	memset(e.k.holder_comm, 0, sizeof(e.k.holder_comm));
	memcpy(e.k.holder_comm, "read", 4);
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 19, NULL), "readers, re~[10807]");
	memcpy(e.k.holder_comm, "contend_many", 12);
	/* too narrow even for that: as it was, the cell cuts it */
	e.k.holder_mode = ILOCK_MODE_EXCL;
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 12, NULL), "contend_many[10807] excl");
	CHECK_STR(top_fit_holder(buf, sizeof(buf), NULL, 5, NULL), "-");
}

/*
 * A holder with a process title is named by its role; in a narrow column
 * the role drops the command it starts with, then is cut like a command.
 */
static void test_fit_holder_role(void)
{
	struct edge_row e = {};
	char buf[160];

	memcpy(e.k.holder_comm, "postgres", 8);
	e.k.holder_pid = 4257;
	e.k.holder_mode = ILOCK_MODE_EXCL;
	CHECK_STR(top_fmt_holder(buf, sizeof(buf), &e, "postgres: checkpointer"),
		  "postgres: checkpointer[4257] excl");
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 40, "postgres: checkpointer"),
		  "postgres: checkpointer[4257] excl");
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 30, "postgres: checkpointer"),
		  "checkpointer[4257] excl");
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 20, "postgres: checkpointer"),
		  "checkpoi~[4257] excl");
	/* "" and NULL: the command */
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 30, ""), "postgres[4257] excl");
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 30, NULL), "postgres[4257] excl");
	/* a role that does not start with the command keeps all of it until cut */
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 22, "other: x y"), "other: x y[4257] excl");
	/* readers, named by the last one's role */
	e.k.holder_mode = ILOCK_MODE_READERS;
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 26, "postgres: bob shop"),
		  "readers, bob shop[4257]");
	/* a cut never splits a UTF-8 character: "caf\xc3\xa9 ..." cut before the e-acute */
	e.k.holder_mode = ILOCK_MODE_EXCL;
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 15, "postgres: caf\xc3\xa9 db"),
		  "caf~[4257] excl");
	/* the unnamed: no role to put anywhere */
	e.k.holder_mode = ILOCK_MODE_UNKNOWN;
	CHECK_STR(top_fit_holder(buf, sizeof(buf), &e, 30, "postgres: checkpointer"), "(no owner)");
}

static void test_status(void)
{
	struct attach_info att[] = {
		{ "contention_begin", "tp_btf" }, { "contention_end", "tp_btf" },
		{ "xfs_ilock", "raw_tp" },
	};
	uint64_t counters[ILOCK_COUNTER_MAX] = {};
	struct top_status st = {
		.host = "db1", .kernel = "6.18.0", .uptime_s = 75, .interval_s = 1, .window_s = 1,
		.attach = att, .nattach = 3, .events_ps = 12345, .waits_ps = 812, .tasks_waiting = 3.126,
		.tracked = 10000,
		.active = 42, .lost = counters, .bpf_stats = true, .bpf_ns_ps = 2.5e6,
		.cpu_pct = 0.42, .sort = SORT_WAIT_TIME,
	};
	struct lines l = {};
	bool loud = false;

	CHECK_EQ_U(top_format_status(&st, 200, collect, &l), 6);
	CHECK(strstr(l.text[0], "db1") && strstr(l.text[0], "6.18.0") && strstr(l.text[0], "1m15s"));
	CHECK(strstr(l.text[0], "every 1 s") != NULL);
	CHECK(strstr(l.text[1], "contention_begin,contention_end (tp_btf); xfs_ilock (raw_tp)") != NULL);
	{
		/* probes off are counted, settings kept apart: hold sampling only with holds */
		struct attach_info many[] = {
			{ "contention_begin", "tp_btf" }, { "contention_end", "tp_btf" },
			{ "xfs_ilock", "off" }, { "rwsem_holds", "off" },
			{ "hold_sampling", "1/64 > 250/s/inode/cpu" }, { "wait_sampling", "off" },
			{ "ops", "tp_btf (syscalls)" }, { "jbd2_wait", "tp_btf" },
		};
		struct top_status s3 = st;
		struct lines l3 = {};

		s3.attach = many;
		s3.nattach = 8;
		top_format_status(&s3, 200, collect, &l3);
		CHECK_STR(l3.text[1], "probes: contention_begin,contention_end (tp_btf); ops "
				      "(tp_btf (syscalls)); jbd2_wait (tp_btf); 2 off");
		many[2].mode = "tp_btf";
		many[5].mode = "1/16 > 250/s/lock/cpu";
		l3.n = 0;
		top_format_status(&s3, 200, collect, &l3);
		CHECK_STR(l3.text[1], "probes: contention_begin,contention_end,xfs_ilock (tp_btf); ops "
				      "(tp_btf (syscalls)); jbd2_wait (tp_btf); 1 off  sampling: holds "
				      "1/64 > 250/s/inode/cpu, waits 1/16 > 250/s/lock/cpu");
	}
	CHECK(strstr(l.text[2], "12.3k/s") && strstr(l.text[2], "10,000 tracked"));
	CHECK(strstr(l.text[2], "inode lock waits 812/s (3.13 tasks waiting)") != NULL);
	{
		/* after c: the tasks waiting are the whole run's, the rate still the interval's */
		struct top_status sc = st;
		struct lines lc = {};

		sc.cumulative = true;
		top_format_status(&sc, 200, collect, &lc);
		CHECK(strstr(lc.text[2], "inode lock waits 812/s (3.13 tasks waiting, on average since "
					 "start)") != NULL);
	}
	CHECK(strstr(l.text[3], "2.50 ms/s") && strstr(l.text[3], "0.42%"));
	{
		/* --wait-sample: the rate is of the waits timed, and says so */
		struct attach_info sampled[] = {
			{ "contention_begin", "tp_btf" }, { "wait_sampling", "1/16 > 250/s/lock/cpu" },
		};
		struct top_status s2 = st;
		struct lines l2 = {};

		s2.attach = sampled;
		s2.nattach = 2;
		top_format_status(&s2, 200, collect, &l2);
		CHECK(strstr(l2.text[1], "probes: contention_begin (tp_btf)  sampling: waits 1/16 > "
					 "250/s/lock/cpu") != NULL);
		CHECK(strstr(l2.text[2], "inode lock waits 812/s timed (3.13 tasks waiting)") != NULL);
		sampled[1].mode = "off";
		l2.n = 0;
		top_format_status(&s2, 200, collect, &l2);
		CHECK(strstr(l2.text[2], "inode lock waits 812/s (3.13") != NULL);
	}
	{
		/* a stall at 80 columns: the path gives way from the left, the holder stays */
		struct ilock_waiting w = { .tid = 4242, .key.mode = ILOCK_MODE_SHARED,
					   .owner_mode = ILOCK_MODE_EXCL, .owner_pid = 4100,
					   .owner_state = 0x2, .before_trace = 1,
					   .start_ns = 1000000000ULL, .now_ns = 22000000000ULL };
		struct top_status s3 = st;
		struct lines l3 = {};
		int found = 0;

		memcpy(w.comm, "postgres", 8);
		memcpy(w.owner_comm, "fio", 3);
		s3.stall = &w;
		s3.stalled = 3;
		snprintf(s3.stall_lock, sizeof(s3.stall_lock), "%s",
			 "/srv/postgresql/data/base/16384/2619_fsm_of_a_long_name IOLOCK");
		top_format_status(&s3, 80, collect, &l3);
		for (int i = 0; i < l3.n; i++) {
			if (strncmp(l3.text[i], "STALLED ", 8))
				continue;
			found++;
			CHECK(l3.kind[i] == TOP_LINE_ALERT);
			CHECK(strlen(l3.text[i]) <= 80);
			if (getenv("SHOW")) fprintf(stderr, "[%s]\n", l3.text[i]);
			CHECK(!strncmp(l3.text[i], "STALLED >21.0s: postgres[4242] shared", 37));
			CHECK(strstr(l3.text[i], ", held now by fio[4100] excl (D)") != NULL);
		}
		CHECK_EQ_U(found, 1);
		/* at 100 the path, from the left */
		l3.n = 0;
		top_format_status(&s3, 100, collect, &l3);
		for (int i = 0; i < l3.n; i++)
			if (!strncmp(l3.text[i], "STALLED ", 8)) {
				CHECK(strlen(l3.text[i]) <= 100);
				CHECK(strstr(l3.text[i], "shared on ...") != NULL);
				CHECK(strstr(l3.text[i], "_name IOLOCK, held now by fio[4100] excl (D)"));
			}
		/* wide enough: all of it */
		l3.n = 0;
		top_format_status(&s3, 200, collect, &l3);
		for (int i = 0; i < l3.n; i++)
			if (!strncmp(l3.text[i], "STALLED ", 8))
				CHECK(strstr(l3.text[i], "shared on /srv/postgresql/data/base/16384/2619_fsm"
							 "_of_a_long_name IOLOCK, held now by fio[4100] "
							 "excl (D); 3 waits over 1.00s  (w: its lock)") != NULL);
		/* batch output (width 0, no edge): all of it too, not the least */
		l3.n = 0;
		found = 0;
		top_format_status(&s3, 0, collect, &l3);
		for (int i = 0; i < l3.n; i++)
			if (!strncmp(l3.text[i], "STALLED ", 8))
				found += strstr(l3.text[i], "shared on /srv/postgresql/data/base/16384/2619_fsm"
							    "_of_a_long_name IOLOCK, held now by fio[4100] "
							    "excl (D); 3 waits over 1.00s  (w: its lock)") != NULL;
		CHECK_EQ_U(found, 1);
	}
	CHECK(strstr(l.text[4], "lost events: none") && l.kind[4] == TOP_LINE_NORMAL);
	CHECK(strstr(l.text[5], "sort: wait time") && strstr(l.text[5], "rates over the last"));
	{
		/* a table 80% full gets a line of its own, in the alarm colour, before the sort */
		struct table_use tu[TABLE_MAX] = {
			[TABLE_LOCKS] = { .used = 12000, .cap = 16384 },
			[TABLE_PAIRS] = { .used = 13107, .cap = 16384 },
		};
		struct top_status s4 = st;
		struct lines l4 = {};

		s4.tables = tu;
		CHECK_EQ_U(top_format_status(&s4, 200, collect, &l4), 6);  /* 79.99%: not yet */
		tu[TABLE_PAIRS].used = 13108;
		l4.n = 0;
		CHECK_EQ_U(top_format_status(&s4, 200, collect, &l4), 7);
		CHECK_STR(l4.text[5], "pairs table is 80% full (13,108 of 16,384 entries): new pairs are "
				      "kept without their threads from 14,336 on; restart with a larger "
				      "--max-inodes");
		CHECK(l4.kind[5] == TOP_LINE_ALERT);
		CHECK(strstr(l4.text[6], "sort: ") == l4.text[6]);
		/* the fuller of two, and a full one says what to do */
		tu[TABLE_LOCKS].used = 16384;
		l4.n = 0;
		top_format_status(&s4, 200, collect, &l4);
		CHECK_STR(l4.text[5], "locks table is full (16,384 entries): new locks are lost "
				      "(wait_map_full); restart with a larger --max-inodes");
		/* no capacity known: nothing */
		memset(tu, 0, sizeof(tu));
		tu[TABLE_PAIRS].used = 5;
		l4.n = 0;
		CHECK_EQ_U(top_format_status(&s4, 200, collect, &l4), 6);
	}

	{
		/* --renew: the alarm says when fresh tables come, then that they came */
		struct table_use tu[TABLE_MAX] = {
			[TABLE_LOCKS] = { .used = 10, .cap = 64 },
			[TABLE_PAIRS] = { .used = 52, .cap = 64 },
		};
		struct top_status s5 = st;
		struct lines l5 = {};

		s5.tables = tu;
		s5.renew_s = 600;
		s5.renew_in_s = 125;
		s5.since_renewal_s = -1;
		CHECK_EQ_U(top_format_status(&s5, 200, collect, &l5), 7);
		CHECK_STR(l5.text[5], "pairs table is 81% full (52 of 64 entries): new pairs are kept "
				      "without their threads from 56 on; fresh tables in 2m05s (--renew)");
		CHECK(l5.kind[5] == TOP_LINE_ALERT);
		s5.renew_in_s = -0.5;
		l5.n = 0;
		top_format_status(&s5, 200, collect, &l5);
		CHECK(strstr(l5.text[5], "; fresh tables now") != NULL);
		/* while the fresh tracer loads, that is all the line says */
		s5.renewing = true;
		l5.n = 0;
		CHECK_EQ_U(top_format_status(&s5, 200, collect, &l5), 7);
		CHECK_STR(l5.text[5], "loading fresh tables: the old ones trace on meanwhile");
		CHECK(l5.kind[5] == TOP_LINE_NORMAL);
		/* done: the fresh tables are empty, and for a minute a line says why they came */
		s5.renewing = false;
		tu[TABLE_PAIRS].used = 3;
		s5.renewals = 2;
		s5.since_renewal_s = 12;
		s5.renew_in_s = 588;
		s5.renew_note = "the pairs table is 81% full";
		l5.n = 0;
		CHECK_EQ_U(top_format_status(&s5, 200, collect, &l5), 7);
		CHECK_STR(l5.text[5], "fresh tables 12.0 s ago (2 so far), when the pairs table is 81% full");
		CHECK(l5.kind[5] == TOP_LINE_NORMAL);
		s5.since_renewal_s = 61;
		l5.n = 0;
		CHECK_EQ_U(top_format_status(&s5, 200, collect, &l5), 6);
		/* the cumulative view goes on since start, the old tables' totals kept */
		s5.cumulative = true;
		l5.n = 0;
		top_format_status(&s5, 200, collect, &l5);
		CHECK(strstr(l5.text[5], "showing: totals since start") != NULL);
		CHECK(strstr(l5.text[2], "on average since start") != NULL);
		/* ... unless they could not be kept (out of memory): then it says so */
		s5.cum_from_renewal = true;
		l5.n = 0;
		top_format_status(&s5, 200, collect, &l5);
		CHECK(strstr(l5.text[5], "showing: totals since the tables were renewed") != NULL);
		CHECK(strstr(l5.text[2], "on average since the tables were renewed") != NULL);
		s5.cum_from_renewal = false;
		s5.cumulative = false;
		/* a failed try: in the alarm colour, with the reason, until one works */
		s5.renew_failed = true;
		s5.renew_note = "cannot load the BPF programs: Cannot allocate memory";
		s5.since_renewal_s = 5;
		l5.n = 0;
		CHECK_EQ_U(top_format_status(&s5, 200, collect, &l5), 7);
		CHECK_STR(l5.text[5], "cannot start fresh tables (cannot load the BPF programs: Cannot "
				      "allocate memory); the old ones trace on, next try in 9m48s");
		CHECK(l5.kind[5] == TOP_LINE_ALERT);
	}

	{
		struct lines l2 = {};
		double iv[] = { 0.5, 0.25, 3600, 10 };
		const char *want[] = { "every 0.5 s", "every 0.25 s", "every 3600 s", "every 10 s" };

		for (int i = 0; i < 4; i++) {
			st.interval_s = iv[i];
			l2.n = 0;
			top_format_status(&st, 200, collect, &l2);
			CHECK(strstr(l2.text[0], want[i]) != NULL);
		}
		st.interval_s = 1;
	}
	counters[ILOCK_LOST_WAIT_MAP_FULL] = 1234;
	counters[ILOCK_LOST_PATH] = 1;
	st.lost_window = 7;
	st.undercount_window = 7;
	st.paused = true;
	st.cumulative = true;
	st.filter = "fio";
	memset(&l, 0, sizeof(l));
	top_format_status(&st, 200, collect, &l);
	for (int i = 0; i < l.n; i++) {
		if (l.kind[i] != TOP_LINE_ALERT)
			continue;
		loud = true;
		CHECK(strstr(l.text[i], "LOST EVENTS: 7 in the last interval; since start 1,235:"));
		CHECK(strstr(l.text[i], "wait_map_full 1,234") != NULL);
	}
	CHECK(loud);
	{
		/* past losses, or only a stack, a path or a wait begun before tracing: said, not alarmed */
		struct lines l2 = {};
		bool listed = false;

		st.undercount_window = 0;
		st.lost_window = 3;
		top_format_status(&st, 200, collect, &l2);
		for (int i = 0; i < l2.n; i++) {
			CHECK(l2.kind[i] != TOP_LINE_ALERT);
			/* and not in capitals, which read as an alarm on their own */
			if (strstr(l2.text[i], "lost events: 3 in the last interval; since start 1,235:") &&
			    strstr(l2.text[i], "wait_map_full 1,234"))
				listed = true;
		}
		CHECK(listed);
		st.undercount_window = 7;
		st.lost_window = 7;
	}
	CHECK(strstr(l.text[0], "[PAUSED]") != NULL);
	CHECK(strstr(l.text[5], "totals since start") && strstr(l.text[5], "filter: \"fio\""));
	CHECK(!strstr(l.text[5], "traced:"));
	{
		struct lines l3 = {};

		st.traced = "none";
		top_format_status(&st, 200, collect, &l3);
		CHECK(!strstr(l3.text[5], "traced:"));
		memset(&l3, 0, sizeof(l3));
		st.traced = "-p 42 --cgroup /sys/fs/cgroup/db.slice";
		top_format_status(&st, 200, collect, &l3);
		CHECK(strstr(l3.text[5], "   traced: -p 42 --cgroup /sys/fs/cgroup/db.slice") != NULL);
	}
	CHECK(strstr(l.text[2], "(3.13 tasks waiting in the rows matched, on average since start)") !=
	      NULL);
	/* every line fits the width asked for */
	memset(&l, 0, sizeof(l));
	top_format_status(&st, 50, collect, &l);
	for (int i = 0; i < l.n; i++)
		CHECK(strlen(l.text[i]) <= 50);
}

/* The detail view of (ino, class) over 1 s, without stacks; the caller frees it. */
static char *plain_detail(const struct snapshot *s, uint64_t ino, uint8_t class)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	CHECK(f != NULL);
	if (!f)
		return strdup("");
	top_format_detail(f, s, s, s, NULL, NULL, NULL, NULL, DEV, ino, 0, class, 1.0, false, false);
	fclose(f);
	return text;
}

/* n exclusive waits of total_ns in all on (ino, class), behind the pair ek, ranges unknown. */
static void add_pair(struct snapshot *s, uint64_t ino, uint8_t class, struct ilock_edge_key ek,
		     uint64_t n, uint64_t total_ns)
{
	struct ilock_key k = key(ino, class, ILOCK_MODE_EXCL);
	struct ilock_edge_stats es = { n, total_ns, 20 * MS };
	struct ilock_stats st = {};

	add(&st, total_ns);
	snap_add_wait(s, &k, &st);
	ek.class = class;
	ek.range = ILOCK_RANGE_NO_BOTH;
	snap_add_edge(s, &ek, &es);
}

static void test_detail(void)
{
	struct snapshot s;
	struct ilock_key k = key(100, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL);
	struct ilock_stats h = {};
	char *text = NULL;
	size_t size = 0;
	FILE *f;

	fixture(&s);
	add(&h, 40 * MS);
	snap_add_hold(&s, &k, &h);
	f = open_memstream(&text, &size);
	top_format_detail(f, &s, &s, &s, NULL, NULL, NULL, NULL, DEV, 100, 0, ILOCK_CLASS_I_RWSEM,
			  2.0, false, false);
	fclose(f);
	CHECK(strstr(text, "ino 100") && strstr(text, "lock IOLOCK (i_rwsem)"));
	CHECK(!strstr(text, "PROCESS TITLES"));
	CHECK(strstr(text, "shared 3 (1.5/s)") != NULL);
	CHECK(strstr(text, "WAIT HISTOGRAM") != NULL);
	CHECK(strstr(text, "67.1 ms - 134 ms") != NULL);  /* the slot of the 100 ms waits */
	CHECK(strstr(text, "HOLD HISTOGRAM") && strstr(text, "held exclusive 1 times"));
	CHECK(strstr(text, "max 40") != NULL && !strstr(text, "max timed"));
	CHECK(strstr(text, "  held  ") != NULL);  /* the range column says what it ranges */
	CHECK(strstr(text, "fio[4257] excl") && strstr(text, "-> reader[900]"));
	CHECK(strstr(text, "cp[77] excl") != NULL);
	/* the costlier holder first */
	CHECK(strstr(text, "fio[4257]") < strstr(text, "cp[77]"));
	/* each pair's ops and range class; the lock's range sums and headroom */
	CHECK(strstr(text, "disjoint    buffered-write -> buffered-read") != NULL);
	CHECK(strstr(text, "unknown     unknown -> unknown") != NULL);
	CHECK(strstr(text, "  disjoint             2 waits    250 ms\n") != NULL);
	CHECK(strstr(text, "  unknown              1 waits   50.0 ms   missing: waiter's 0, "
			   "holder's 0, both 1\n") != NULL);
	CHECK(strstr(text, "range-lock headroom: 83.3% of the wait time was disjoint") != NULL);
	/* by command first, the threads of a command summed */
	CHECK(strstr(text, "BY COMMAND on this inode") < strstr(text, "HOLDER -> WAITER on this inode"));
	/*
	 * The pair's max (200 ms, only a bound in a window) over its lock's
	 * longest wait (100 ms): capped by it, and marked a bound.
	 */
	CHECK(strstr(text, "  fio buffered-write EXCL            -> reader buffered-read SHARED        "
			  "IOLOCK        1->1         2    250 ms   <100 ms  100%\n") != NULL);
	CHECK(strstr(text, "fio[4257] excl") && strstr(text, "-> reader[900]"));
	CHECK(strstr(text, "      2    250 ms   <100 ms  disjoint") != NULL);
	CHECK(strstr(text, "      1   50.0 ms   50.0 ms  unknown") != NULL);
	CHECK(strstr(text, "  cp unknown EXCL                    -> reader unknown SHARED") != NULL);
	CHECK(strstr(text, "  max 100 ms\n") != NULL);
	/* sampled holds: the count an estimate, the max the longest timed, as stat says */
	free(text);
	text = NULL;
	f = open_memstream(&text, &size);
	top_format_detail(f, &s, &s, &s, NULL, NULL, NULL, NULL, DEV, 100, 0, ILOCK_CLASS_I_RWSEM,
			  2.0, false, true);
	fclose(f);
	CHECK(strstr(text, "held exclusive ~1 times") && strstr(text, "max timed 40"));
	free(text);

	/*
	 * A window's max that only bounds its longest wait: "<" in the
	 * header and on the pairs it caps; since start (cumulative) the same
	 * figures are exact and the pairs' own.
	 */
	snap_lock(&s, DEV, 100, 0, ILOCK_CLASS_I_RWSEM)->max_bound = 1u << ILOCK_MODE_SHARED;
	for (int cum = 0; cum < 2; cum++) {
		text = NULL;
		f = open_memstream(&text, &size);
		top_format_detail(f, &s, &s, &s, NULL, NULL, NULL, NULL, DEV, 100, 0,
				  ILOCK_CLASS_I_RWSEM, 2.0, cum, false);
		fclose(f);
		CHECK(strstr(text, cum ? "  max 100 ms\n" : "  max <100 ms\n") != NULL);
		CHECK(strstr(text, cum ? "      2    250 ms    200 ms  disjoint"
				       : "      2    250 ms   <100 ms  disjoint") != NULL);
		CHECK(strstr(text, "      1   50.0 ms   50.0 ms  unknown") != NULL);
		free(text);
	}
	snap_lock(&s, DEV, 100, 0, ILOCK_CLASS_I_RWSEM)->max_bound = 0;

	/* threads with process titles: under the pairs, in the order named */
	{
		struct titles ti;
		const char *leg;

		titles_init(&ti);
		CHECK(!titles_put(&ti, 900, "reader", "reader: alice shop [local] SELECT"));
		CHECK(!titles_put(&ti, 4257, "fio", "fio: checkpointer"));
		CHECK(!titles_put(&ti, 77, "cp", ""));
		f = open_memstream(&text, &size);
		top_format_detail(f, &s, &s, &s, NULL, NULL, &ti, NULL, DEV, 100, 0,
				  ILOCK_CLASS_I_RWSEM, 2.0, false, false);
		fclose(f);
		leg = strstr(text, "\nPROCESS TITLES of these threads\n");
		CHECK(leg && leg > strstr(text, "HOLDER -> WAITER on this inode") &&
		      leg < strstr(text, "RANGES of this lock"));
		CHECK(leg && strstr(leg, "of these threads\n  fio[4257]              fio: checkpointer\n"
					 "  reader[900]            reader: alice shop [local] SELECT\n\n"));
		free(text);
		titles_free(&ti);
	}

	/* a side wider than 34 columns: the arrows of all rows stay in one column */
	{
		struct ilock_edge_key ek = ekey(100, 4259, "postgres-writer", 902, "reader",
						ILOCK_MODE_QUEUED_EXCL);
		struct ilock_edge_stats es = { 1, 1 * MS, 1 * MS };
		const char *sec;

		ek.holder_op = ILOCK_OP_BUFFERED_WRITE;
		ek.holder_op_flags = ILOCK_OPF_EXTENDING;
		ek.waiter_op = ILOCK_OP_SYNC_FILE_RANGE;
		snap_add_edge(&s, &ek, &es);
		text = NULL;
		f = open_memstream(&text, &size);
		top_format_detail(f, &s, &s, &s, NULL, NULL, NULL, NULL, DEV, 100, 0, ILOCK_CLASS_I_RWSEM,
				  2.0, false, false);
		fclose(f);
		sec = strstr(text, "BY COMMAND on this inode");
		CHECK(sec && strstr(sec, "postgres-writer buffered-write(extending) NEXT-EXCL -> "
				       "reader sync-file-range SHARED"));
		CHECK(sec && arrows_column(strchr(sec, '\n') + 1, " -> ") > 34);
		free(text);
	}

	text = NULL;
	f = open_memstream(&text, &size);
	top_format_detail(f, &s, &s, &s, NULL, NULL, NULL, NULL, DEV, 300, 0, ILOCK_CLASS_INVALIDATE,
			  1.0, true, false);
	fclose(f);
	CHECK(strstr(text, "only XFS reports lock holds") != NULL);
	CHECK(strstr(text, "since start") != NULL);
	CHECK(strstr(text, "(none in this window)") != NULL);
	CHECK(strstr(text, "RANGES of this lock's waits") && strstr(text, "(no waits in this window)"));
	free(text);

	/* stacks: holder ones by the wait time they caused, named from kallsyms */
	{
		static const char kallsyms[] =
			"ffffffff81000000 T rwsem_down_write_slowpath\n"
			"ffffffff81001000 T xfs_ilock\n"
			"ffffffff81002000 T xfs_file_buffered_write\n"
			"ffffffff81003000 T filemap_read\n";
		struct ksyms ks = {};
		struct snapshot st;
		struct ilock_stack_key sk;
		struct ilock_stack_stats ss;
		struct ilock_stack_frames fr = { .nr = 3, .ip = { 0xffffffff81002010ULL,
								  0xffffffff81001020ULL,
								  0xffffffff81000030ULL } };
		FILE *kf = fmemopen((void *)kallsyms, sizeof(kallsyms) - 1, "r");

		CHECK_EQ_U(ksyms_parse(&ks, kf), 0);
		fclose(kf);
		snap_init(&st);
		memset(&sk, 0, sizeof(sk));
		sk.edge = ekey(100, 4257, "fio", 900, "reader", ILOCK_MODE_EXCL);
		sk.kind = ILOCK_STACK_HOLDER;
		sk.stack = 0xabc;
		ss = (struct ilock_stack_stats){ 2, 250 * MS };
		snap_add_stack(&st, &sk, &ss);
		snap_add_frames(&st, ILOCK_STACK_HOLDER, 0xabc, &fr);
		/* the same stack behind another pair adds up */
		sk.edge = ekey(100, 4258, "fio", 901, "reader", ILOCK_MODE_EXCL);
		ss = (struct ilock_stack_stats){ 1, 50 * MS };
		snap_add_stack(&st, &sk, &ss);
		/* a cheaper one, frames gone */
		sk.stack = 0xdef;
		ss = (struct ilock_stack_stats){ 1, 10 * MS };
		snap_add_stack(&st, &sk, &ss);
		/* another inode's: not shown */
		sk.edge.ino = 555;
		sk.stack = 0x999;
		ss = (struct ilock_stack_stats){ 9, 900 * MS };
		snap_add_stack(&st, &sk, &ss);
		/* a waiter stack */
		sk.edge.ino = 100;
		sk.kind = ILOCK_STACK_WAITER;
		sk.stack = 7;
		fr.ip[0] = 0xffffffff81003050ULL;
		fr.nr = 1;
		snap_add_stack(&st, &sk, &ss);
		snap_add_frames(&st, ILOCK_STACK_WAITER, 7, &fr);

		text = NULL;
		f = open_memstream(&text, &size);
		top_format_detail(f, &s, &s, &s, &st, &ks, NULL, NULL, DEV, 100, 0, ILOCK_CLASS_I_RWSEM, 1.0,
				  false, false);
		fclose(f);
		CHECK(strstr(text, "HOLDER STACKS") != NULL);
		CHECK(strstr(text, "300 ms       3 waits  "
				   "xfs_file_buffered_write < xfs_ilock < rwsem_down_write_slowpath") != NULL);
		CHECK(strstr(text, "10.0 ms       1 waits  (frames gone)") != NULL);
		CHECK(strstr(text, "300 ms") < strstr(text, "10.0 ms"));
		CHECK(strstr(text, "900 ms       9 waits  filemap_read") != NULL);  /* the waiter */
		CHECK(strstr(text, "WAITER STACKS") < strstr(text, "filemap_read"));
		free(text);
		/* not read at all */
		text = NULL;
		f = open_memstream(&text, &size);
		top_format_detail(f, &s, &s, &s, NULL, NULL, NULL, NULL, DEV, 100, 0, ILOCK_CLASS_I_RWSEM, 1.0,
				  false, false);
		fclose(f);
		CHECK(strstr(text, "HOLDER STACKS since start (wait time caused while the holder was there)\n  (not read)") != NULL);
		free(text);
		snap_free(&st);
		ksyms_free(&ks);
	}

	/* an fsync's journal wait: its edges carry no byte range to compare */
	add_pair(&s, 300, ILOCK_CLASS_JBD2_WAIT,
		 ekey(300, 55, "jbd2/loop0-8", 903, "pg", ILOCK_MODE_EXCL), 4, 40 * MS);
	text = plain_detail(&s, 300, ILOCK_CLASS_JBD2_WAIT);
	CHECK(strstr(text, "jbd2/loop0-8") != NULL);
	CHECK(strstr(text, "(journal waits: a commit has no byte range") != NULL);
	CHECK(strstr(text, "missing: waiter's") == NULL);
	free(text);

	/* a directory's lock: creates behind unlinks, waits over names */
	{
		struct ilock_edge_key ek = ekey(400, 60, "pg", 61, "pg", ILOCK_MODE_EXCL);

		ek.holder_op = ILOCK_OP_UNLINK;
		ek.waiter_op = ILOCK_OP_CREATE;
		add_pair(&s, 400, ILOCK_CLASS_I_RWSEM, ek, 6, 60 * MS);
		text = plain_detail(&s, 400, ILOCK_CLASS_I_RWSEM);
		CHECK(strstr(text, "(waits over names in a directory: no byte ranges") != NULL);
		CHECK(strstr(text, "missing: waiter's") == NULL);
		free(text);
	}

	/* a lock with no waits in the window */
	text = plain_detail(&s, 999, ILOCK_CLASS_I_RWSEM);
	CHECK(strstr(text, "no waits on this lock in this window") != NULL);
	free(text);
	snap_free(&s);
}

/* With more rows than the page, the bottom line says where the selection is. */
static void test_help_position(void)
{
	char buf[512];
	const char *keys = top_help_line(false);

	/* all on the page: the keys alone */
	CHECK_STR(top_format_help(buf, sizeof(buf), 120, 0, 10, 40), keys);
	/* 800 rows: the position at the right edge */
	top_format_help(buf, sizeof(buf), 120, 11, 800, 40);
	CHECK_EQ_U(strlen(buf), 120);
	CHECK(!strncmp(buf, keys, strlen(keys)));
	CHECK(strstr(buf, "  row 12 of 800") && !strcmp(buf + 120 - strlen("row 12 of 800"),
							   "row 12 of 800"));
	/* at 80 columns the position stays, over the end of the keys */
	top_format_help(buf, sizeof(buf), 80, 11, 800, 40);
	CHECK_EQ_U(strlen(buf), 80);
	CHECK(!strncmp(buf, keys, 60) && !strcmp(buf + 80 - 15, "  row 12 of 800"));
	/* too narrow for both: the keys */
	CHECK_STR(top_format_help(buf, sizeof(buf), 30, 11, 800, 40), keys);
}

/*
 * The help screen fits 80 columns and explains every column whose title
 * does not say it all, and every key the bottom lines name.
 */
static void test_help_screen(void)
{
	static const char *const keys[] = { "q ", "s / S", "c ", "f or /", "p ", "Enter", "w ",
					    "Esc", "PgUp/PgDn", "? or h" };
	const char *const *lines;
	size_t n = top_help_screen(&lines);
	struct top_layout l;
	char head[512], all[8192] = "", *tok, *save;

	CHECK(n > 10);
	for (size_t i = 0; i < n; i++) {
		CHECK(strlen(lines[i]) <= 80);
		strncat(all, lines[i], sizeof(all) - strlen(all) - 2);
		strcat(all, "\n");
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		CHECK(strstr(all, keys[i]) != NULL);
	CHECK(strstr(top_help_line(false), "? help") && strstr(top_help_line(true), "? help"));
	/* every title of the widest table, rates and totals, but the self-evident ones */
	for (int cum = 0; cum < 2; cum++) {
		top_layout_compute(&l, 250, cum);
		top_format_header(head, sizeof(head), &l, SORT_KEY_MAX);
		for (tok = strtok_r(head, " *", &save); tok; tok = strtok_r(NULL, " *", &save)) {
			if (!strcmp(tok, "PATH") || !strcmp(tok, "DEV:INO") || !strcmp(tok, "FS") ||
			    !strcmp(tok, "CLASS") || !strcmp(tok, "s/s") || !strcmp(tok, "HOLDER"))
				continue;
			if (!strstr(all, tok))
				fprintf(stderr, "help screen: column %s not explained\n", tok);
			CHECK(strstr(all, tok) != NULL);
		}
	}
}

/* TOP HOLDER names each mode as ilock stat does, in fewer words. */
static void test_holder_names(void)
{
	static const struct { uint8_t mode; const char *want; } cases[] = {
		{ ILOCK_MODE_EXCL, "fio[42] excl" },
		{ ILOCK_MODE_SHARED, "fio[42] shared" },
		{ ILOCK_MODE_READERS, "readers, fio[42]" },
		{ ILOCK_MODE_QUEUED_EXCL, "fio[42] next excl" },
		{ ILOCK_MODE_QUEUED_SHARED, "fio[42] next shared" },
		{ ILOCK_MODE_UNKNOWN, "(no owner)" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct edge_row e = { .k = ekey(1, 42, "fio", 43, "fio", cases[i].mode) };

		CHECK_STR(top_fmt_holder(buf, sizeof(buf), &e, NULL), cases[i].want);
	}
	CHECK_STR(top_fmt_holder(buf, sizeof(buf), NULL, NULL), "-");
	{
		/* readers whose hint was the waiter itself: none named */
		struct edge_row e = { .k = ekey(1, 0, "", 43, "fio", ILOCK_MODE_READERS) };

		CHECK_STR(top_fmt_holder(buf, sizeof(buf), &e, NULL), "readers");
	}
}


/*
 * --renew: the cumulative view keeps the old tables' totals, the inodes
 * that waited longest whole, the rest as "others", pairs without threads;
 * small through any number of renewals.
 */
static void test_retire(void)
{
	struct snapshot src, kept, again;
	uint64_t sum[2] = {}, got[2] = {}, pairs = 0, got_pairs = 0;

	snap_init(&src);
	snap_init(&kept);
	snap_init(&again);
	for (uint64_t ino = 1; ino <= 50; ino++) {
		char p[32];

		snprintf(p, sizeof(p), "/f%02" PRIu64, ino);
		add_inode(&src, ino, XFS, p);
		/* inode 50 waited longest, then 49, ... */
		add_pair(&src, ino, ILOCK_CLASS_I_RWSEM, ekey(ino, 100 + ino, "fio", 200 + ino, "fio",
							     ILOCK_MODE_EXCL), 2, ino * MS);
		add_pair(&src, ino, ILOCK_CLASS_XFS_ILOCK, ekey(ino, 300 + ino, "kworker/0:1",
							       200 + ino, "fio", ILOCK_MODE_EXCL),
			 1, MS);
	}
	for (size_t i = 0; i < src.nlocks; i++)
		sum[src.locks[i].class == ILOCK_CLASS_XFS_ILOCK] += row_wait_ns(&src.locks[i]);
	for (size_t i = 0; i < src.nedges; i++)
		pairs += src.edges[i].s.count;
	CHECK(top_retire(&kept, &src, 3) == 0);
	/* three inodes whole (two classes each), the rest one row per class */
	CHECK_EQ_U(kept.nlocks, 3 * 2 + 2);
	for (uint64_t ino = 48; ino <= 50; ino++)
		CHECK(snap_find_lock(&kept, DEV, ino, 0, ILOCK_CLASS_I_RWSEM) != NULL &&
		      snap_find_inode(&kept, DEV, ino, 0) != NULL);
	CHECK(snap_find_lock(&kept, DEV, 47, 0, ILOCK_CLASS_I_RWSEM) == NULL);
	CHECK(snap_find_inode(&kept, DEV, 47, 0) == NULL);
	CHECK_EQ_U(kept.ninodes, 3);
	CHECK_EQ_U(snap_find_lock(&kept, DEV, ILOCK_INO_FOLDED, 0, ILOCK_CLASS_I_RWSEM)->wait[1].count,
		   47);
	for (size_t i = 0; i < kept.nlocks; i++)
		got[kept.locks[i].class == ILOCK_CLASS_XFS_ILOCK] += row_wait_ns(&kept.locks[i]);
	CHECK_EQ_U(got[0], sum[0]);
	CHECK_EQ_U(got[1], sum[1]);
	/* pairs: by command, without threads; the kept inodes' apart, the rest together */
	for (size_t i = 0; i < kept.nedges; i++) {
		got_pairs += kept.edges[i].s.count;
		CHECK(kept.edges[i].k.holder_pid == ILOCK_PID_FOLDED &&
		      kept.edges[i].k.waiter_pid == ILOCK_PID_FOLDED);
	}
	CHECK_EQ_U(got_pairs, pairs);
	CHECK_EQ_U(kept.nedges, 3 * 2 + 2);
	/* the kept inode's detail still names its holder's command */
	CHECK(snap_top_holder(&kept, DEV, 50, 0, ILOCK_CLASS_I_RWSEM) != NULL);

	/* the next renewal: the same files again, and new ones; still as small */
	CHECK(snap_merge(&kept, &src) == 0);
	CHECK(top_retire(&again, &kept, 3) == 0);
	CHECK_EQ_U(again.nlocks, 3 * 2 + 2);
	CHECK_EQ_U(again.nedges, 3 * 2 + 2);
	got[0] = got[1] = 0;
	for (size_t i = 0; i < again.nlocks; i++)
		got[again.locks[i].class == ILOCK_CLASS_XFS_ILOCK] += row_wait_ns(&again.locks[i]);
	CHECK_EQ_U(got[0], 2 * sum[0]);
	CHECK_EQ_U(got[1], 2 * sum[1]);
	snap_free(&src);
	snap_free(&kept);
	snap_free(&again);
}

static void stack_at(struct snapshot *s, uint64_t ino, uint32_t holder, uint32_t waiter,
		     uint8_t kind, uint64_t id, uint64_t count, uint64_t first_ip)
{
	struct ilock_stack_key k;
	struct ilock_stack_stats st = { .count = count, .total_ns = count * MS };
	struct ilock_stack_frames f = { .nr = 3 };

	memset(&k, 0, sizeof(k));
	k.edge = ekey(ino, holder, "w", waiter, "r", ILOCK_MODE_EXCL);
	k.kind = kind;
	k.stack = id;
	CHECK(snap_add_stack(s, &k, &st) == 0);
	for (int i = 0; i < 3; i++)
		f.ip[i] = first_ip + (uint64_t)i;
	CHECK(snap_add_frames(s, kind, id, &f) == 0);
}

/* The count of one lock's stacks of a kind under one id, summed as the detail view does. */
static uint64_t stack_count(const struct snapshot *s, uint64_t ino, uint8_t kind, uint64_t id)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->nstacks; i++)
		if (s->stacks[i].k.edge.ino == ino && s->stacks[i].k.kind == kind &&
		    s->stacks[i].k.stack == id)
			n += s->stacks[i].s.count;
	return n;
}

/*
 * ilocktop's detail view across renewals: the old tracer's stacks of the
 * locks kept whole are kept by frames, and put beside the fresh tracer's,
 * one stack one id whichever tracer counted it.
 */
static void test_kept_stacks(void)
{
	struct snapshot old, keep, cur;
	struct kept_stacks k;
	struct ilock_stats w = {};
	const struct ilock_stack_frames *fr;

	snap_init(&old);
	snap_init(&keep);
	snap_init(&cur);
	kept_stacks_init(&k);
	add(&w, MS);
	CHECK(snap_add_wait(&keep, &(struct ilock_key){ .ino = 5, .dev = DEV,
			    .class = ILOCK_CLASS_I_RWSEM, .mode = ILOCK_MODE_SHARED }, &w) == 0);
	/* lock 5: one waiter stack (id 3) over two pairs, a holder stack; lock 6 folded away */
	stack_at(&old, 5, 10, 11, ILOCK_STACK_WAITER, 3, 2, 0x1000);
	stack_at(&old, 5, 10, 12, ILOCK_STACK_WAITER, 3, 3, 0x1000);
	stack_at(&old, 5, 10, 11, ILOCK_STACK_HOLDER, 77, 4, 0x2000);
	stack_at(&old, 6, 10, 11, ILOCK_STACK_WAITER, 9, 7, 0x3000);
	CHECK(kept_stacks_add(&k, &old, &keep) == 0);
	CHECK_EQ_U(k.n, 2);
	CHECK_EQ_U(k.s.nstacks, 2);

	/* the fresh tracer saw the same waiter stack under another id */
	stack_at(&cur, 5, 20, 21, ILOCK_STACK_WAITER, 11, 1, 0x1000);
	CHECK(kept_stacks_put(&k, &cur, DEV, 5, 0) == 0);
	CHECK_EQ_U(stack_count(&cur, 5, ILOCK_STACK_WAITER, 11), 6);
	CHECK_EQ_U(stack_count(&cur, 5, ILOCK_STACK_HOLDER, KEPT_STACK_ID_BASE + 1), 4);
	fr = snap_find_frames(&cur, ILOCK_STACK_HOLDER, KEPT_STACK_ID_BASE + 1);
	CHECK(fr && fr->nr == 3 && fr->ip[0] == 0x2000);
	CHECK_EQ_U(stack_count(&cur, 6, ILOCK_STACK_WAITER, 9), 0);
	/* another inode's view gets none of them */
	snap_reset(&cur);
	CHECK(kept_stacks_put(&k, &cur, DEV, 6, 0) == 0);
	CHECK_EQ_U(cur.nstacks, 0);

	/* a second renewal: the same holder stack again under a new id adds up */
	snap_reset(&old);
	stack_at(&old, 5, 30, 31, ILOCK_STACK_HOLDER, 99, 6, 0x2000);
	CHECK(kept_stacks_add(&k, &old, &keep) == 0);
	CHECK_EQ_U(k.n, 2);
	snap_reset(&cur);
	CHECK(kept_stacks_put(&k, &cur, DEV, 5, 0) == 0);
	CHECK_EQ_U(cur.nstacks, 2);
	CHECK_EQ_U(stack_count(&cur, 5, ILOCK_STACK_HOLDER, KEPT_STACK_ID_BASE + 1) +
			   stack_count(&cur, 5, ILOCK_STACK_HOLDER, KEPT_STACK_ID_BASE + 0),
		   10);
	/* a third, where lock 5 is no longer kept whole: its stacks go */
	snap_reset(&keep);
	snap_reset(&old);
	CHECK(kept_stacks_add(&k, &old, &keep) == 0);
	CHECK_EQ_U(k.s.nstacks, 0);
	CHECK_EQ_U(k.n, 0);
	kept_stacks_free(&k);
	snap_free(&old);
	snap_free(&keep);
	snap_free(&cur);
}

int main(void)
{
	test_retire();
	test_kept_stacks();
	test_holder_names();
	test_help_position();
	test_help_screen();
	test_store_deltas();
	test_store_matches_snap_delta();
	test_store_scan_order();
	test_store_edges_and_counters();
	test_view_rates();
	test_view_filter();
	test_view_sort();
	test_partial_sort();
	test_deadlines();
	test_numbers();
	test_layout();
	test_rows_at_widths();
	test_headroom_column();
	test_path_abbrev();
	test_fit_holder();
	test_fit_holder_role();
	test_status();
	test_detail();
	UNIT_DONE();
}
