// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The snapshot model: add, delta, merge, sort, top holder; mountinfo paths. */
#include <stdlib.h>

#include "hist.h"
#include "model.h"
#include "render.h"
#include "mounts.h"
#include "unit.h"

static struct ilock_stats st(uint64_t n, uint64_t each)
{
	struct ilock_stats s = {};

	s.count = n;
	s.total_ns = n * each;
	s.max_ns = n ? each : 0;
	s.hist[ilock_hist_slot(each)] = n;
	return s;
}

static struct ilock_key key(uint32_t dev, uint64_t ino, uint8_t class, uint8_t mode)
{
	struct ilock_key k = { .ino = ino, .dev = dev, .class = class, .mode = mode };

	return k;
}

static struct ilock_edge_key ekey(uint64_t ino, uint32_t hpid, uint32_t wpid)
{
	struct ilock_edge_key k = {};

	k.ino = ino;
	k.dev = ILOCK_KDEV(7, 0);
	k.holder_mode = ILOCK_MODE_EXCL;
	k.waiter_mode = ILOCK_MODE_SHARED;
	k.holder_pid = hpid;
	k.waiter_pid = wpid;
	strcpy(k.holder_comm, "fio");
	strcpy(k.waiter_comm, "fio");
	return k;
}

static void test_add_and_find(void)
{
	struct snapshot s;
	struct ilock_key k1 = key(ILOCK_KDEV(7, 0), 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED);
	struct ilock_key k2 = key(ILOCK_KDEV(7, 0), 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL);
	struct ilock_stats a = st(10, 1000), b = st(2, 5000);
	const struct lock_row *r;

	snap_init(&s);
	CHECK(snap_add_wait(&s, &k1, &a) == 0);
	CHECK(snap_add_wait(&s, &k2, &b) == 0);
	CHECK(snap_add_hold(&s, &k2, &b) == 0);
	CHECK_EQ_U(s.nlocks, 1);
	r = snap_find_lock(&s, ILOCK_KDEV(7, 0), 131, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ_U(r->wait[ILOCK_MODE_SHARED].count, 10);
		CHECK_EQ_U(r->wait[ILOCK_MODE_EXCL].count, 2);
		CHECK(r->has_hold);
		CHECK_EQ_U(row_wait_ns(r), 20000);
		CHECK_EQ_U(row_waits(r), 12);
		CHECK_EQ_U(row_max_ns(r), 5000);
	}
	CHECK(snap_find_lock(&s, ILOCK_KDEV(7, 0), 131, 0, ILOCK_CLASS_XFS_ILOCK) == NULL);
	/* bad keys are refused, not stored */
	struct ilock_key bad = key(1, 1, ILOCK_CLASS_MAX, 0);

	CHECK(snap_add_wait(&s, &bad, &a) != 0);
	snap_free(&s);
}

/* Every row found as itself through long probe chains, after growth, sort and copy. */
static bool all_found(const struct snapshot *s, uint64_t n)
{
	bool ok = true;

	for (uint64_t i = 1; i <= n; i++) {
		const struct lock_row *r = snap_find_lock(s, ILOCK_KDEV(8, 1), i, 0, ILOCK_CLASS_I_RWSEM);
		struct ilock_edge_key ek = { .dev = ILOCK_KDEV(8, 1), .ino = i, .holder_pid = 7 };
		const struct edge_row *e = snap_find_edge(s, &ek);
		const struct inode_meta *m = snap_find_inode(s, ILOCK_KDEV(8, 1), i, (uint32_t)(i % 3));

		ok &= r && r->ino == i && r->wait[ILOCK_MODE_SHARED].count == 1;
		ok &= e && e->k.ino == i;
		ok &= m && m->ino == i && m->gen == i % 3;
		/* two files had each odd number, one each even number */
		ok &= m && !!(m->flags & INODE_META_NUMBER_REUSED) == (i % 2 == 1);
	}
	/* absent keys: other numbers, generations, classes, devices */
	for (uint64_t i = n + 1; i <= n + 2000; i++)
		ok &= !snap_find_lock(s, ILOCK_KDEV(8, 1), i, 0, ILOCK_CLASS_I_RWSEM);
	for (uint64_t i = 1; i <= n; i += 5) {
		ok &= !snap_find_lock(s, ILOCK_KDEV(8, 1), i, 1, ILOCK_CLASS_I_RWSEM);
		ok &= !snap_find_lock(s, ILOCK_KDEV(8, 1), i, 0, ILOCK_CLASS_XFS_ILOCK);
		ok &= !snap_find_lock(s, ILOCK_KDEV(8, 2), i, 0, ILOCK_CLASS_I_RWSEM);
		ok &= !snap_find_inode(s, ILOCK_KDEV(8, 1), i, 7);
	}
	return ok;
}

static void test_many_rows(void)
{
	const uint64_t n = 20000;
	struct snapshot s, c;
	struct ilock_stats a = st(1, 100);
	struct ilock_edge_stats es = { .count = 1, .total_ns = 100, .max_ns = 100 };
	bool ok = true;

	snap_init(&s);
	snap_init(&c);
	for (uint64_t i = 1; i <= n; i++) {
		struct ilock_key k = key(ILOCK_KDEV(8, 1), i, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED);
		struct ilock_edge_key ek = { .dev = ILOCK_KDEV(8, 1), .ino = i, .holder_pid = 7 };
		struct inode_meta m = { .dev = ILOCK_KDEV(8, 1), .ino = i, .gen = (uint32_t)(i % 3) };

		ok &= snap_add_wait(&s, &k, &a) == 0;
		ok &= snap_add_edge(&s, &ek, &es) == 0;
		ok &= snap_add_inode(&s, &m) == 0;
		if (i % 2) {
			/* another file, since gone, had this number: gen + 3 */
			m.gen += 3;
			ok &= snap_add_inode(&s, &m) == 0;
		}
	}
	CHECK(ok);
	CHECK_EQ_U(s.nlocks, n);
	CHECK_EQ_U(s.nedges, n);
	CHECK_EQ_U(s.ninodes, n + n / 2);
	CHECK(all_found(&s, n));
	snap_sort_locks(&s, SORT_WAIT_TIME);
	snap_sort_edges(&s);
	CHECK(all_found(&s, n));
	CHECK(snap_copy(&c, &s) == 0);
	CHECK(all_found(&c, n));
	snap_free(&s);
	snap_free(&c);
}

static void test_delta_merge(void)
{
	struct snapshot prev, cur, d, m;
	struct ilock_key k = key(ILOCK_KDEV(7, 0), 5, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED);
	struct ilock_key k2 = key(ILOCK_KDEV(7, 0), 6, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL);
	struct ilock_stats a = st(10, 1000), b = st(15, 1000), c = st(3, 700);
	struct ilock_edge_key e = ekey(5, 100, 200);
	struct ilock_edge_stats es1 = { 4, 4000, 1000 }, es2 = { 9, 9000, 1000 };
	const struct lock_row *r;

	snap_init(&prev);
	snap_init(&cur);
	snap_init(&d);
	snap_init(&m);
	snap_add_wait(&prev, &k, &a);
	snap_add_edge(&prev, &e, &es1);
	prev.counters[ILOCK_EV_WAIT] = 10;
	snap_add_wait(&cur, &k, &b);
	snap_add_wait(&cur, &k2, &c);
	snap_add_edge(&cur, &e, &es2);
	cur.counters[ILOCK_EV_WAIT] = 18;

	CHECK(snap_delta(&d, &cur, &prev) == 0);
	r = snap_find_lock(&d, k.dev, 5, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r && r->wait[0].count == 5 && r->wait[0].total_ns == 5000);
	r = snap_find_lock(&d, k.dev, 6, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r && r->wait[1].count == 3);
	CHECK_EQ_U(d.nedges, 1);
	CHECK_EQ_U(d.edges[0].s.count, 5);
	CHECK_EQ_U(d.counters[ILOCK_EV_WAIT], 8);

	/* an unchanged row drops out of the delta */
	CHECK(snap_delta(&d, &cur, &cur) == 0);
	CHECK_EQ_U(d.nlocks, 0);
	CHECK_EQ_U(d.nedges, 0);

	/* merge of two deltas gives the total */
	CHECK(snap_delta(&d, &cur, &prev) == 0);
	CHECK(snap_merge(&m, &prev) == 0);
	CHECK(snap_merge(&m, &d) == 0);
	r = snap_find_lock(&m, k.dev, 5, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r && r->wait[0].count == 15);
	CHECK_EQ_U(m.edges[0].s.count, 9);
	CHECK_EQ_U(m.counters[ILOCK_EV_WAIT], 18);

	snap_free(&prev);
	snap_free(&cur);
	snap_free(&d);
	snap_free(&m);
}

static void test_sort_and_holder(void)
{
	struct snapshot s;
	struct ilock_key k;
	struct ilock_stats big = st(2, 1000000), many = st(100, 1000), none = {};
	struct ilock_edge_key e1 = ekey(2, 11, 21), e2 = ekey(2, 12, 22);
	struct ilock_edge_stats s1 = { 1, 500, 500 }, s2 = { 1, 900, 900 };
	const struct edge_row *top;

	snap_init(&s);
	k = key(1, 1, 0, ILOCK_MODE_SHARED);
	snap_add_wait(&s, &k, &many);         /* 100 waits, 100 us */
	k = key(1, 2, 0, ILOCK_MODE_EXCL);
	snap_add_wait(&s, &k, &big);          /* 2 waits, 2 ms */
	k = key(1, 3, 0, ILOCK_MODE_EXCL);
	snap_add_hold(&s, &k, &many);         /* holds only */
	snap_add_wait(&s, &k, &none);

	snap_sort_locks(&s, SORT_WAIT_TIME);
	CHECK_EQ_U(s.locks[0].ino, 2);
	CHECK_EQ_U(s.locks[1].ino, 1);
	CHECK_EQ_U(s.locks[2].ino, 3);       /* no waits: last */
	snap_sort_locks(&s, SORT_WAITS);
	CHECK_EQ_U(s.locks[0].ino, 1);
	snap_sort_locks(&s, SORT_EXCL);
	CHECK_EQ_U(s.locks[0].ino, 2);
	/* the index still works after sorting */
	CHECK(snap_find_lock(&s, 1, 3, 0, 0) == &s.locks[2]);

	e1.dev = e2.dev = 1;
	e1.class = e2.class = 0;
	snap_add_edge(&s, &e1, &s1);
	snap_add_edge(&s, &e2, &s2);
	top = snap_top_holder(&s, 1, 2, 0, 0);
	CHECK(top && top->k.holder_pid == 12);
	CHECK(snap_top_holder(&s, 1, 1, 0, 0) == NULL);
	snap_sort_edges(&s);
	CHECK_EQ_U(s.edges[0].k.holder_pid, 12);

	/* holder 11 made two waiters wait 500 + 600: more than 12's 900 */
	struct ilock_edge_key e3 = ekey(2, 11, 23);
	struct ilock_edge_stats s3 = { 1, 600, 600 };

	e3.dev = 1;
	e3.class = 0;
	snap_add_edge(&s, &e3, &s3);
	top = snap_top_holder(&s, 1, 2, 0, 0);
	CHECK(top && top->k.holder_pid == 11 && top->s.total_ns == 600);

	/* equal sums: the holder that appears first in the edges wins */
	struct snapshot t;
	struct ilock_edge_key hi = ekey(4, 90, 1), lo = ekey(4, 10, 2);
	struct ilock_edge_stats same = { 1, 700, 700 };

	snap_init(&t);
	snap_add_edge(&t, &hi, &same);
	snap_add_edge(&t, &lo, &same);
	top = snap_top_holder(&t, hi.dev, 4, 0, hi.class);
	CHECK(top && top->k.holder_pid == 90);
	/* a known holder beats "no owner", whatever the time */
	struct ilock_edge_key ownerless = ekey(4, 0, 3);
	struct ilock_edge_stats lots = { 9, 90000, 20000 };

	ownerless.holder_mode = ILOCK_MODE_UNKNOWN;
	snap_add_edge(&t, &ownerless, &lots);
	top = snap_top_holder(&t, hi.dev, 4, 0, hi.class);
	CHECK(top && top->k.holder_mode != ILOCK_MODE_UNKNOWN);
	/*
	 * Readers with no hint are all the lock's readers together: more
	 * time in sum than each writer thread (the seed workload: 11 s
	 * against 2.8 s for each of 8 fio threads, the queued writers' 22 s
	 * in all), yet no one holder. The named thread is the top holder;
	 * a reader named by the hint competes like any thread.
	 */
	struct ilock_edge_key readers = ekey(4, 0, 4), hinted = ekey(4, 55, 5);
	struct ilock_edge_stats more = { 9, 900000, 20000 };

	readers.holder_mode = hinted.holder_mode = ILOCK_MODE_READERS;
	snap_add_edge(&t, &readers, &more);
	CHECK(holder_unnamed(&readers) && !holder_unnamed(&hinted) && !holder_unnamed(&hi));
	top = snap_top_holder(&t, hi.dev, 4, 0, hi.class);
	CHECK(top && top->k.holder_pid == 90);
	snap_add_edge(&t, &hinted, &more);
	top = snap_top_holder(&t, hi.dev, 4, 0, hi.class);
	CHECK(top && top->k.holder_pid == 55 && top->k.holder_mode == ILOCK_MODE_READERS);
	snap_free(&t);
	/* with no named holder at all, the unnamed ones are still the answer */
	snap_init(&t);
	snap_add_edge(&t, &readers, &more);
	snap_add_edge(&t, &ownerless, &lots);
	top = snap_top_holder(&t, hi.dev, 4, 0, hi.class);
	CHECK(top && top->k.holder_mode == ILOCK_MODE_READERS && !top->k.holder_pid);
	snap_free(&t);
	snap_free(&s);
}

static void test_names(void)
{
	uint8_t c;
	uint32_t m;

	CHECK_STR(class_name(ILOCK_CLASS_I_RWSEM), "i_rwsem");
	CHECK_STR(class_display_name(ILOCK_CLASS_I_RWSEM, ILOCK_XFS_SB_MAGIC), "IOLOCK");
	CHECK_STR(class_display_name(ILOCK_CLASS_INVALIDATE, ILOCK_XFS_SB_MAGIC), "MMAPLOCK");
	CHECK_STR(class_display_name(ILOCK_CLASS_XFS_ILOCK, ILOCK_XFS_SB_MAGIC), "ILOCK");
	CHECK_STR(class_display_name(ILOCK_CLASS_I_RWSEM, ILOCK_EXT4_SB_MAGIC), "i_rwsem");
	CHECK(class_from_name("iolock", &c) && c == ILOCK_CLASS_I_RWSEM);
	CHECK(class_from_name("invalidate_lock", &c) && c == ILOCK_CLASS_INVALIDATE);
	CHECK(!class_from_name("mmap_lock", &c));
	CHECK(fs_magic_from_name("ext4", &m) && m == ILOCK_EXT4_SB_MAGIC);
	CHECK(!fs_magic_from_name("ntfs", &m));
	/* the names /proc/mounts gives mounts of the same magic, any case */
	CHECK(fs_magic_from_name("ext3", &m) && m == ILOCK_EXT4_SB_MAGIC);
	CHECK(fs_magic_from_name("ext2", &m) && m == ILOCK_EXT4_SB_MAGIC);
	CHECK(fs_magic_from_name("XFS", &m) && m == ILOCK_XFS_SB_MAGIC);
	CHECK(fs_magic_from_name("nfs4", &m) && m == 0x6969U);
	CHECK(fs_magic_from_name("fuse.sshfs", &m) && m == 0x65735546U);
	CHECK(fs_magic_from_name("fuseblk", &m) && m == 0x65735546U);
	CHECK(!fs_magic_from_name("fuse.", &m));
	CHECK(!fs_magic_from_name("ext", &m));
	{
		char names[128], tiny[6];

		fs_name_list(names, sizeof(names));
		CHECK(!strncmp(names, "xfs, ext4, ", 11) && strstr(names, "tmpfs") && !strstr(names, "unknown"));
		fs_name_list(tiny, sizeof(tiny));
		CHECK_STR(tiny, "xfs, ");
	}
	CHECK_STR(mode_name(ILOCK_MODE_READERS), "readers");
}

static void test_mounts(void)
{
	const char *text =
		"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		"40 22 7:0 / /mnt/x rw,relatime shared:2 - xfs /dev/loop0 rw\n"
		"41 22 7:0 /sub /srv/bind\\040dir rw - xfs /dev/loop0 rw\n"
		"42 22 7:1 /only/this /mnt/part rw - ext4 /dev/loop1 rw\n"
		"garbage line\n"
		"43 22 0:5 / /proc rw - proc proc rw";
	struct mount_table t;
	char out[256];

	CHECK(mounts_parse(&t, text) == 0);
	CHECK_EQ_U(t.n, 5);
	CHECK(mounts_find_dev(&t, ILOCK_KDEV(7, 0)) != NULL);
	CHECK_STR(mounts_find_dev(&t, ILOCK_KDEV(7, 0))->mnt, "/mnt/x");
	CHECK_STR(t.e[2].mnt, "/srv/bind dir");
	CHECK(mounts_full_path(&t, ILOCK_KDEV(7, 0), "/sub/db.dat", out, sizeof(out)));
	CHECK_STR(out, "/mnt/x/sub/db.dat");
	CHECK(mounts_full_path(&t, ILOCK_KDEV(8, 1), "/etc/passwd", out, sizeof(out)));
	CHECK_STR(out, "/etc/passwd");
	/* a bind mount of a subtree shows only files under it */
	CHECK(mounts_full_path(&t, ILOCK_KDEV(7, 1), "/only/this/f", out, sizeof(out)));
	CHECK_STR(out, "/mnt/part/f");
	CHECK(!mounts_full_path(&t, ILOCK_KDEV(7, 1), "/only/thisnot/f", out, sizeof(out)));
	CHECK(!mounts_full_path(&t, ILOCK_KDEV(9, 9), "/x", out, sizeof(out)));
	mounts_free(&t);
}

/*
 * One inode number, two files in turn (generations 3 and 4): two rows, two
 * paths, each lock's top holder from its own pairs; folded, one of each.
 */
static void test_generations(void)
{
	struct snapshot s, f;
	struct ilock_key k = { .ino = 50, .dev = ILOCK_KDEV(7, 0), .class = ILOCK_CLASS_I_RWSEM,
			       .mode = ILOCK_MODE_EXCL };
	struct ilock_edge_key ek = { .ino = 50, .dev = ILOCK_KDEV(7, 0),
				     .class = ILOCK_CLASS_I_RWSEM, .holder_mode = ILOCK_MODE_EXCL,
				     .waiter_mode = ILOCK_MODE_EXCL };
	struct inode_meta m = { .ino = 50, .dev = ILOCK_KDEV(7, 0) };
	struct ilock_stats st = { .count = 1, .total_ns = 100, .max_ns = 100 };
	struct ilock_edge_stats es = { .count = 1, .total_ns = 100, .max_ns = 100 };
	const struct edge_row *top;
	const struct lock_row *r;
	const struct inode_meta *im;

	snap_init(&s);
	snap_init(&f);
	for (uint32_t gen = 3; gen <= 4; gen++) {
		k.gen = ek.gen = m.gen = gen;
		ek.holder_pid = 100 + gen;
		snprintf(m.path, sizeof(m.path), "/file%u", gen);
		CHECK(snap_add_wait(&s, &k, &st) == 0);
		CHECK(snap_add_edge(&s, &ek, &es) == 0);
		CHECK(snap_add_inode(&s, &m) == 0);
	}
	CHECK_EQ_U(s.nlocks, 2);
	CHECK_EQ_U(s.ninodes, 2);
	CHECK(snap_find_lock(&s, k.dev, 50, 0, ILOCK_CLASS_I_RWSEM) == NULL);
	r = snap_find_lock(&s, k.dev, 50, 3, ILOCK_CLASS_I_RWSEM);
	CHECK(r && r->gen == 3 && r->wait[ILOCK_MODE_EXCL].count == 1);
	im = snap_find_inode(&s, k.dev, 50, 4);
	CHECK(im && !strcmp(im->path, "/file4"));
	CHECK(im && (im->flags & INODE_META_NUMBER_REUSED));
	{
		struct mount_table mt = {};
		struct inode_view v;

		CHECK(mounts_parse(&mt, "36 1 7:0 / /mnt/x rw - xfs /dev/loop0 rw\n") == 0);
		describe_inode(&s, &mt, k.dev, 50, 3, false, &v);
		CHECK(v.note && !strcmp(v.note, "inode number reused"));
		CHECK_STR(v.path, "/mnt/x/file3");
		m.ino = 51;
		CHECK(snap_add_inode(&s, &m) == 0);
		describe_inode(&s, &mt, k.dev, 51, m.gen, false, &v);
		CHECK(!v.note);
		mounts_free(&mt);
	}
	top = snap_top_holder(&s, k.dev, 50, 3, ILOCK_CLASS_I_RWSEM);
	CHECK(top && top->k.holder_pid == 103);
	top = snap_top_holder(&s, k.dev, 50, 4, ILOCK_CLASS_I_RWSEM);
	CHECK(top && top->k.holder_pid == 104);

	CHECK(snap_fold_gens(&f, &s) == 0);
	CHECK_EQ_U(f.nlocks, 1);
	CHECK_EQ_U(f.ninodes, 2);  /* 50 once, and 51 */
	CHECK_EQ_U(f.nedges, 2);
	r = snap_find_lock(&f, k.dev, 50, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r && r->wait[ILOCK_MODE_EXCL].count == 2);
	im = snap_find_inode(&f, k.dev, 50, 0);
	CHECK(im && !strcmp(im->path, "/file3"));
	snap_free(&s);
	snap_free(&f);
}

/*
 * An interval's max is a wait's length when it rose, else a bound, and the
 * row says which: for the mode whose max is the row's, through merges too.
 */
static void test_max_bound(void)
{
	struct snapshot prev, cur, d1, d2, m;
	struct ilock_key ks = key(ILOCK_KDEV(7, 0), 5, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED);
	struct ilock_key kx = key(ILOCK_KDEV(7, 0), 5, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL);
	struct ilock_stats s0 = st(4, 1000000), s1 = s0, x0 = st(1, 5000), x1 = st(2, 5000);
	const struct lock_row *r;

	snap_init(&prev);
	snap_init(&cur);
	snap_init(&d1);
	snap_init(&d2);
	snap_init(&m);
	/* shared: two more waits of 1 us after 1 ms ones; exclusive: one more of 5 us */
	s1.count += 2;
	s1.total_ns += 2000;
	s1.hist[ilock_hist_slot(1000)] += 2;
	snap_add_wait(&prev, &ks, &s0);
	snap_add_wait(&prev, &kx, &x0);
	snap_add_wait(&cur, &ks, &s1);
	snap_add_wait(&cur, &kx, &x1);
	CHECK(snap_delta(&d1, &cur, &prev) == 0);
	r = snap_find_lock(&d1, ks.dev, 5, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r && r->max_bound == 3);  /* neither max rose */
	/* shared: its top slot's end, 1023 ns; exclusive: the max so far, 5 us */
	CHECK(r && r->wait[0].max_ns == 1023 && r->wait[1].max_ns == 5000);
	CHECK(r && row_max_bound(r) && row_max_ns(r) == 5000);

	/* the exclusive max rises past the shared bound: the row's max is exact */
	x1.max_ns = 9000;
	x1.count++;
	x1.total_ns += 9000;
	x1.hist[ilock_hist_slot(9000)]++;
	snap_reset(&cur);
	snap_add_wait(&cur, &ks, &s1);
	snap_add_wait(&cur, &kx, &x1);
	CHECK(snap_delta(&d2, &cur, &prev) == 0);
	r = snap_find_lock(&d2, ks.dev, 5, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r && r->max_bound == 1 && row_max_ns(r) == 9000 && !row_max_bound(r));
	/* merged, the larger max decides: exact 9 us over a bound of 5 us */
	CHECK(snap_merge(&m, &d1) == 0);
	CHECK(snap_merge(&m, &d2) == 0);
	r = snap_find_lock(&m, ks.dev, 5, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r && row_max_ns(r) == 9000 && !row_max_bound(r));
	CHECK(r && (r->max_bound & 1));  /* shared stays a bound */
	/* a whole read (no previous one) is exact */
	CHECK(snap_delta(&d1, &cur, NULL) == 0);
	r = snap_find_lock(&d1, ks.dev, 5, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r && r->max_bound == 0);
	snap_free(&prev);
	snap_free(&cur);
	snap_free(&d1);
	snap_free(&d2);
	snap_free(&m);
}

/* The fullest table at or over the alarm, in parts per 10,000: 64 and 4M compare. */
static void test_tables(void)
{
	struct table_use t[TABLE_MAX] = {};
	struct snapshot a, b, d;

	CHECK(table_fullest(t, 80) == -1);  /* capacities unknown */
	t[TABLE_LOCKS] = (struct table_use){ .used = 51, .cap = 64 };     /* 79.7% */
	t[TABLE_PAIRS] = (struct table_use){ .used = 3355443, .cap = 4194304 };  /* 79.99998% */
	CHECK(table_fullest(t, 80) == -1);
	CHECK(table_fullest(t, 79) == TABLE_PAIRS);
	t[TABLE_LOCKS].used = 52;  /* 81.25% */
	CHECK(table_fullest(t, 80) == TABLE_LOCKS);
	t[TABLE_PAIRS].used = 4194304;
	CHECK(table_fullest(t, 80) == TABLE_PAIRS);
	CHECK(table_fullest(t, 0) == TABLE_PAIRS);
	CHECK_STR(table_name(TABLE_LOCKS), "locks");
	CHECK_STR(table_name(TABLE_PAIRS), "pairs");
	CHECK_STR(table_name(TABLE_MAX), "?");

	/* a state, like in_flight: a delta and a merge carry the later read's */
	snap_init(&a);
	snap_init(&b);
	snap_init(&d);
	memcpy(a.tables, t, sizeof(t));
	b.tables[TABLE_PAIRS] = (struct table_use){ .used = 7, .cap = 64 };
	CHECK(snap_delta(&d, &a, &b) == 0);
	CHECK_EQ_U(d.tables[TABLE_PAIRS].used, 4194304);
	CHECK_EQ_U(d.tables[TABLE_LOCKS].cap, 64);
	CHECK(snap_merge(&b, &a) == 0);
	CHECK_EQ_U(b.tables[TABLE_PAIRS].cap, 4194304);
	snap_reset(&b);
	CHECK_EQ_U(b.tables[TABLE_PAIRS].cap, 0);
	snap_free(&a);
	snap_free(&b);
	snap_free(&d);
}


/* The slots' bound, added up the long way: what row_wait_in_window must give. */
static uint64_t in_window_slow(const struct lock_row *r, uint64_t window_ns)
{
	uint64_t sum = row_wait_ns(r), n = 0;
	double bound = 0;

	for (int m = 0; m < 2; m++)
		for (unsigned k = 0; k < ILOCK_HIST_SLOTS; k++) {
			uint64_t hi = hist_slot_hi(k);

			n += r->wait[m].hist[k];
			bound += (double)r->wait[m].hist[k] * (double)(hi < window_ns ? hi : window_ns);
		}
	return !window_ns || n != row_waits(r) || bound >= (double)sum ? sum : (uint64_t)bound;
}

/* The retired tables' counts laid under a later read: they add up, the read's states stay. */
static void test_merge_under(void)
{
	struct snapshot cur, old;
	struct ilock_key k = key(7, 1, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED);
	struct ilock_stats a = st(3, 1000), b = st(2, 5000);

	snap_init(&cur);
	snap_init(&old);
	CHECK(snap_add_wait(&cur, &k, &a) == 0);
	CHECK(snap_add_wait(&old, &k, &b) == 0);
	k.ino = 2;
	CHECK(snap_add_wait(&old, &k, &b) == 0);
	cur.mono_ns = 200;
	old.mono_ns = 100;
	cur.in_flight = 4;
	old.in_flight = 9;
	cur.tables[TABLE_LOCKS] = (struct table_use){ .used = 3, .cap = 64 };
	old.tables[TABLE_LOCKS] = (struct table_use){ .used = 60, .cap = 64 };
	cur.counters[ILOCK_LOST_WAIT_MAP_FULL] = 1;
	old.counters[ILOCK_LOST_WAIT_MAP_FULL] = 5;
	CHECK(snap_merge_under(&cur, &old) == 0);
	CHECK_EQ_U(cur.nlocks, 2);
	CHECK_EQ_U(snap_find_lock(&cur, 7, 1, 0, ILOCK_CLASS_I_RWSEM)->wait[0].count, 5);
	CHECK_EQ_U(snap_find_lock(&cur, 7, 1, 0, ILOCK_CLASS_I_RWSEM)->wait[0].max_ns, 5000);
	CHECK_EQ_U(cur.counters[ILOCK_LOST_WAIT_MAP_FULL], 6);
	CHECK_EQ_U(cur.mono_ns, 200);
	CHECK_EQ_U(cur.in_flight, 4);
	CHECK_EQ_U(cur.tables[TABLE_LOCKS].used, 3);
	/* snap_merge, by contrast, takes the states of what it merges */
	CHECK(snap_merge(&cur, &old) == 0);
	CHECK_EQ_U(cur.in_flight, 9);
	snap_free(&cur);
	snap_free(&old);
}

static void test_wait_in_window(void)
{
	static const uint64_t each[] = { 900, 50000, 999999999, 1000000000, 1000000001, 3000000000ULL };
	static const uint64_t windows[] = { 0, 1000, 1000000, 1000000000, 2500000000ULL };

	for (size_t a = 0; a < sizeof(each) / sizeof(each[0]); a++)
		for (size_t b = 0; b < sizeof(each) / sizeof(each[0]); b++)
			for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
				struct lock_row r = {};

				r.wait[0] = st(3, each[a]);
				r.wait[1] = st(a == b ? 0 : 2, each[b]);
				CHECK_EQ_U(row_wait_in_window(&r, windows[w]),
					   in_window_slow(&r, windows[w]));
			}
	/* one wait of 3 s in a window of 1 s: the window's share, not all of it */
	{
		struct lock_row r = {};

		r.wait[1] = st(1, 3000000000ULL);
		CHECK(row_wait_in_window(&r, 1000000000) <= 1000000000);
		r.wait[0] = st(4, 1000);
		CHECK(row_wait_in_window(&r, 1000000000) <= 1000000000ULL + 4 * 1024);  /* slot ends */
		CHECK(row_wait_in_window(&r, 1000000000) >= 4000);
	}
}

int main(void)
{
	test_wait_in_window();
	test_merge_under();
	test_add_and_find();
	test_many_rows();
	test_delta_merge();
	test_sort_and_holder();
	test_names();
	test_mounts();
	test_generations();
	test_tables();
	test_max_bound();
	UNIT_DONE();
}
