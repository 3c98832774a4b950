// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Renderers against golden files, JSON escaping, formatting helpers and
 * CLI parsing errors. UPDATE_GOLDEN=1 rewrites the golden files.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

#include "cli.h"
#include "hist.h"
#include "json.h"
#include "render.h"
#include "report.h"
#include "util.h"
#include "unit.h"
#include "golden.h"

static void add_wait(struct snapshot *s, uint64_t ino, uint8_t class, uint8_t mode,
		     const uint64_t *vals, int n, bool hold)
{
	struct ilock_key k = { .ino = ino, .dev = ILOCK_KDEV(7, 0), .class = class, .mode = mode };
	struct ilock_stats st = {};

	for (int i = 0; i < n; i++) {
		st.count++;
		st.total_ns += vals[i];
		st.hist[ilock_hist_slot(vals[i])]++;
		if (vals[i] > st.max_ns)
			st.max_ns = vals[i];
	}
	if (hold)
		snap_add_hold(s, &k, &st);
	else
		snap_add_wait(s, &k, &st);
}

/* n waits of ns in all to the range class `range` of ino's i_rwsem row */
static void add_range(struct snapshot *s, uint64_t ino, uint8_t range, uint64_t n, uint64_t ns)
{
	struct lock_row *r = snap_lock(s, ILOCK_KDEV(7, 0), ino, 0, ILOCK_CLASS_I_RWSEM);

	CHECK(r != NULL);
	if (r) {
		r->range[range].waits += n;
		r->range[range].wait_ns += ns;
	}
}

static void build(struct snapshot *s)
{
	static const uint64_t sh[] = { 300000, 420000, 800000, 1200000, 16200000 };
	static const uint64_t ex[] = { 500000, 2100000 };
	static const uint64_t hd[] = { 4000, 6000, 900000 };
	struct ilock_edge_key e = {};
	struct ilock_edge_stats es = { 2113, 812000000, 16200000 };
	struct inode_meta m = { .ino = 131, .dev = ILOCK_KDEV(7, 0), .magic = ILOCK_XFS_SB_MAGIC };
	struct inode_meta gone = { .ino = 99, .dev = ILOCK_KDEV(7, 0), .magic = ILOCK_XFS_SB_MAGIC,
				   .flags = ILOCK_INODE_UNLINKED };

	snap_init(s);
	strcpy(m.path, "/db/data \"1\".ibd");
	strcpy(gone.path, "/tmp.x");
	snap_add_inode(s, &m);
	snap_add_inode(s, &gone);
	add_wait(s, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, sh, 5, false);
	add_wait(s, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, ex, 2, false);
	add_wait(s, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, hd, 3, true);
	add_wait(s, 99, ILOCK_CLASS_XFS_ILOCK, ILOCK_MODE_SHARED, ex, 1, false);
	add_wait(s, 7777, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, sh, 1, false);
	e.ino = 131;
	e.dev = ILOCK_KDEV(7, 0);
	e.holder_mode = ILOCK_MODE_EXCL;
	e.waiter_mode = ILOCK_MODE_SHARED;
	e.holder_pid = e.holder_tgid = 4257;
	e.waiter_pid = 4254;
	e.waiter_tgid = 4250;
	memcpy(e.holder_comm, "fio", 4);
	memcpy(e.waiter_comm, "mysqld-with-a-l", 15);  /* 15 chars, no NUL needed */
	snap_add_edge(s, &e, &es);
	e.holder_mode = ILOCK_MODE_UNKNOWN;
	e.holder_pid = e.holder_tgid = 0;
	memset(e.holder_comm, 0, sizeof(e.holder_comm));
	es = (struct ilock_edge_stats){ 3, 3000000, 2000000 };
	snap_add_edge(s, &e, &es);
	s->counters[ILOCK_EV_WAIT] = 8;
	s->counters[ILOCK_EV_BEGIN_RWSEM] = 9;
	s->counters[ILOCK_LOST_END_NO_BEGIN] = 2;
	s->in_flight = 1;
	snap_sort_locks(s, SORT_WAIT_TIME);
	snap_sort_edges(s);
}

static void meta(struct report_meta *m, struct mount_table *mt)
{
	memset(m, 0, sizeof(*m));
	m->kernel = "6.18.44";
	m->hostname = "db1";
	m->duration_s = 10.0;
	m->attach[0] = (struct attach_info){ "contention_begin", "tp_btf" };
	m->attach[1] = (struct attach_info){ "xfs_ilock", "off" };
	m->nattach = 2;
	mounts_parse(mt, "40 22 7:0 / /mnt/x rw - xfs /dev/loop0 rw\n");
	m->mounts = mt;
}

static char *render(void (*fn)(FILE *, const struct snapshot *, const struct report_meta *,
			      const struct render_opts *),
		    const struct snapshot *s, const struct report_meta *m)
{
	struct render_opts o = { .top_n = 10 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, s, m, &o);
	fclose(f);
	return buf;
}

/* A table 80% full or more: a line under LOST EVENTS, and the fill in JSON. */
static void check_tables_full(struct snapshot *s, const struct report_meta *m)
{
	char *text, *json;

	s->tables[TABLE_LOCKS] = (struct table_use){ .used = 3, .cap = 64 };
	s->tables[TABLE_PAIRS] = (struct table_use){ .used = 51, .cap = 64 };  /* 79.7% */
	text = render(render_text, s, m);
	json = render(render_json, s, m);
	CHECK(!strstr(text, "table is"));
	CHECK(strstr(json, "\"tables\":{\"locks\":{\"entries\":3,\"capacity\":64},"
			   "\"pairs\":{\"entries\":51,\"capacity\":64}}") != NULL);
	free(text);
	free(json);
	s->tables[TABLE_PAIRS].used = 52;
	text = render(render_text, s, m);
	CHECK(strstr(text, "\n  the pairs table is 81% full (52 of 64 entries): new pairs are kept "
			   "without their threads from 56 on; --max-inodes makes room\n") != NULL);
	free(text);
	/* the last eighth is for pairs folded by command */
	s->tables[TABLE_PAIRS].used = 60;
	text = render(render_text, s, m);
	CHECK(strstr(text, "\n  the pairs table is 93% full (60 of 64 entries): new pairs are kept "
			   "without their threads (edge_threads_folded); --max-inodes makes room\n"));
	free(text);
	s->tables[TABLE_PAIRS].used = 64;
	text = render(render_text, s, m);
	CHECK(strstr(text, "\n  the pairs table is full (64 entries): new pairs are lost "
			   "(edge_map_full); --max-inodes makes room\n"));
	free(text);
	s->tables[TABLE_PAIRS].used = 52;
	s->tables[TABLE_LOCKS].used = 64;
	text = render(render_text, s, m);
	CHECK(strstr(text, "\n  the locks table is full (64 entries): new locks are lost "
			   "(wait_map_full); --max-inodes makes room\n") != NULL);
	CHECK(!strstr(text, "pairs table"));  /* the fullest only */
	free(text);
	memset(s->tables, 0, sizeof(s->tables));
}

static void test_golden(void)
{
	struct snapshot s;
	struct report_meta m;
	struct mount_table mt;
	char *text, *json;

	build(&s);
	meta(&m, &mt);
	text = render(render_text, &s, &m);
	json = render(render_json, &s, &m);
	check_golden("stat.txt", text);
	check_golden("stat.json", json);
	/* required keys of the stable schema */
	static const char *const keys[] = {
		"\"version\":1", "\"duration_s\":", "\"kernel\":", "\"attach\":{", "\"lost\":{",
		"\"locks\":[", "\"dev\":\"7:0\"", "\"ino\":131", "\"path\":\"/mnt/x/db/data \\\"1\\\".ibd\"",
		"\"fs\":\"xfs\"", "\"class\":\"i_rwsem\"", "\"shared\":{\"waits\":5", "\"wait_ns\":",
		"\"max_ns\":", "\"p50_ns\":", "\"p99_ns\":", "\"hist\":[[", "\"exclusive\":{",
		"\"acquisitions\":{\"shared\":0,\"exclusive\":3}", "\"hold\":{", "\"acquisitions\":null",
		"\"edges\":[", "\"holder\":{\"pid\":4257", "\"waiter\":{\"pid\":4254", "\"mode\":\"shared\"",
		"\"comm\":\"mysqld-with-a-l\"", "\"waits\":2113", "\"path\":null",
	};
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		if (!strstr(json, keys[i]))
			fprintf(stderr, "missing %s\n", keys[i]);
		CHECK(strstr(json, keys[i]) != NULL);
	}
	CHECK(strstr(text, "/mnt/x/db/data \"1\".ibd") != NULL);
	CHECK(strstr(text, "fio[4257] exclusive") != NULL);
	CHECK(strstr(text, "(deleted)") != NULL);
	CHECK(strstr(text, "end_without_begin") != NULL);
	CHECK(strstr(text, "holds exclusive 3 acquisitions") != NULL);
	free(text);
	free(json);

	/* sampled holds read as estimates, their max as the longest timed */
	CHECK(!meta_holds_sampled(&m));
	m.attach[m.nattach++] = (struct attach_info){ "hold_sampling", "1/64 > 250/s/inode/cpu" };
	CHECK(meta_holds_sampled(&m));
	text = render(render_text, &s, &m);
	CHECK(strstr(text, "holds exclusive ~3 acquisitions") != NULL);
	CHECK(strstr(text, "max timed 900 us") != NULL);
	free(text);
	m.attach[m.nattach - 1].mode = "every hold";
	CHECK(!meta_holds_sampled(&m));
	text = render(render_text, &s, &m);
	CHECK(strstr(text, "holds exclusive 3 acquisitions") && !strstr(text, "max timed"));
	free(text);
	/* an interval's max that only bounds its longest wait (-i) reads "<" */
	s.locks[0].max_bound = 1 << ILOCK_MODE_SHARED;
	text = render(render_text, &s, &m);
	CHECK(strstr(text, " <16.2 ms ") != NULL);
	free(text);
	s.locks[0].max_bound = 1 << ILOCK_MODE_EXCL;  /* the exclusive max is the smaller */
	text = render(render_text, &s, &m);
	CHECK(strstr(text, " 16.2 ms ") != NULL && !strstr(text, "<16.2"));
	free(text);
	s.locks[0].max_bound = 0;
	check_tables_full(&s, &m);
	{
		/* a full locks table: other inodes' waits under the device, named so */
		struct ilock_key fk = { .ino = ILOCK_INO_FOLDED, .dev = s.locks[0].dev,
					.class = ILOCK_CLASS_I_RWSEM, .mode = ILOCK_MODE_EXCL };
		struct ilock_stats fs = { .count = 2, .total_ns = 3000000, .max_ns = 2000000 };
		struct inode_view v;
		char label[128];

		fs.hist[ilock_hist_slot(1000000)] = 1;
		fs.hist[ilock_hist_slot(2000000)] = 1;
		CHECK(snap_add_wait(&s, &fk, &fs) == 0);
		describe_inode(&s, m.mounts, fk.dev, ILOCK_INO_FOLDED, 0, false, &v);
		inode_label(label, sizeof(label), &v, fk.dev, ILOCK_INO_FOLDED);
		CHECK_STR(label, "7:0:others (locks table full: other inodes' waits)");
		text = render(render_text, &s, &m);
		CHECK(strstr(text, "\n  7:0:others (locks table full: other inodes' waits)  [7:0 ino "
				   "others, xfs IOLOCK]\n") != NULL);
		CHECK(strstr(text, "18446744073709551615") == NULL);
		free(text);
		json = render(render_json, &s, &m);
		CHECK(strstr(json, "{\"dev\":\"7:0\",\"ino\":null,\"gen\":0,\"path\":null,") != NULL);
		CHECK(strstr(json, "18446744073709551615") == NULL);
		free(json);
	}
	mounts_free(&mt);
	snap_free(&s);
}

static void test_empty(void)
{
	struct snapshot s;
	struct report_meta m;
	struct mount_table mt;
	char *text;

	snap_init(&s);
	meta(&m, &mt);
	text = render(render_text, &s, &m);
	CHECK(strstr(text, "(no inode lock waits)") != NULL);
	CHECK(strstr(text, "LOST EVENTS\n  none") != NULL);
	free(text);
	mounts_free(&mt);
	snap_free(&s);
}

/*
 * IN SHORT: wait time over the window is tasks waiting on average; too few
 * is said to be too few; the journal is kept apart; the top lock is named.
 */
static void test_in_short(void)
{
	static const uint64_t long_waits[] = { 4000000000ULL, 3000000000ULL, 1000000000ULL };
	static const uint64_t short_waits[] = { 200000000ULL };
	static const uint64_t tiny[] = { 1000000, 2000000 };
	struct snapshot s;
	struct report_meta m;
	struct mount_table mt;
	struct wait_load w;
	char *text, *json;

	meta(&m, &mt);
	snap_init(&s);
	text = render(render_text, &s, &m);
	CHECK(strstr(text, "IN SHORT\n  no task waited for an inode lock") != NULL);
	free(text);
	/* a Ctrl-C just after start: no verdict either way */
	m.duration_s = 0.3;
	text = render(render_text, &s, &m);
	CHECK(strstr(text, "IN SHORT\n  no inode lock wait in 0.3 s traced: too short to tell\n") !=
	      NULL);
	CHECK(!strstr(text, "the cause is not its inode locks"));
	free(text);
	json = render(render_json, &s, &m);
	CHECK(strstr(json, "\"few_waiting\":false") != NULL);
	free(json);
	m.duration_s = 10.0;
	/* under filters, no wait is no verdict on the workload: the filters say why */
	{
		static const struct {
			const char *filters;
			uint64_t rwsem;
			const char *says;
		} cases[] = {
			{ "-p 999999", 25362, "no inode lock wait matched the filters (-p 999999): "
					      "25,362 rw_semaphore waits in all, on any lock, file or task; "
					      "-p takes one process's threads, not its children (a server's "
					      "worker processes: -c NAME or --cgroup)\n" },
			{ "-D 7:2", 25362, "no inode lock wait matched the filters (-D 7:2): "
					   "25,362 rw_semaphore waits in all, on any lock, file or task\n" },
			/* no rw_semaphore wait at all: nothing the filters could have hidden */
			{ "-p 999999", 0, "no task waited for an inode lock" },
			{ "none", 25362, "no task waited for an inode lock" },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			m.filters = cases[i].filters;
			s.counters[ILOCK_EV_BEGIN_RWSEM] = cases[i].rwsem;
			text = render(render_text, &s, &m);
			CHECK(strstr(text, cases[i].says) != NULL);
			/* a verdict on the workload only where no filter could have hidden a wait */
			CHECK(!!(cases[i].rwsem && strcmp(cases[i].filters, "none")) ==
			      !strstr(text, "not its inode locks"));
			free(text);
		}
		m.filters = NULL;
		s.counters[ILOCK_EV_BEGIN_RWSEM] = 0;
	}

	/* 8 s of waiting on one lock, 0.2 s on another, in 10 s: 0.82 tasks */
	add_wait(&s, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, long_waits, 3, false);
	add_wait(&s, 99, ILOCK_CLASS_XFS_ILOCK, ILOCK_MODE_EXCL, short_waits, 1, false);
	/* and 2 s of fsync waiting for the journal: apart */
	add_wait(&s, 12, ILOCK_CLASS_JBD2_WAIT, ILOCK_MODE_EXCL, long_waits + 2, 1, false);
	add_range(&s, 131, ILOCK_RANGE_DISJOINT, 3, 6000000000ULL);
	/* writers held the readers up for 6 of the lock's 8 s; a reader held a writer up 1 s */
	for (int i = 0; i < 3; i++) {
		struct ilock_edge_key ek = { .ino = 131, .dev = ILOCK_KDEV(7, 0),
					     .class = ILOCK_CLASS_I_RWSEM, .holder_mode = ILOCK_MODE_EXCL,
					     .waiter_mode = ILOCK_MODE_SHARED, .holder_pid = 10 + (i > 0),
					     .waiter_pid = 20 + i, .holder_op = ILOCK_OP_BUFFERED_WRITE,
					     .waiter_op = ILOCK_OP_BUFFERED_READ };
		struct ilock_edge_stats es = { 1, 2000000000ULL, 2000000000ULL };

		memcpy(ek.holder_comm, "mysqld", 7);
		memcpy(ek.waiter_comm, "mysqld", 7);
		if (i == 2) {
			ek.holder_mode = ILOCK_MODE_READERS;
			ek.waiter_mode = ILOCK_MODE_EXCL;
			ek.holder_op = ILOCK_OP_BUFFERED_READ;
			ek.waiter_op = ILOCK_OP_BUFFERED_WRITE;
			es.total_ns = es.max_ns = 1000000000ULL;
		}
		CHECK(snap_add_edge(&s, &ek, &es) == 0);
	}
	snap_wait_load(&s, m.duration_s, &w);
	CHECK_EQ_U(w.waits, 4);
	CHECK_EQ_U(w.wait_ns, 8200000000ULL);
	CHECK(fabs(w.tasks - 0.82) < 1e-9 && fabs(w.journal_tasks - 0.1) < 1e-9);
	CHECK(w.top && w.top->ino == 131 && fabs(w.top_tasks - 0.8) < 1e-9);
	CHECK_EQ_U(w.journal_waits, 1);
	text = render(render_text, &s, &m);
	CHECK(strstr(text, "\nIN SHORT\n  0.82 tasks waited for inode locks on average (8.20 s of "
			  "waiting in 10.0 s, 4 waits)\n  most on 7:0:131 (not seen by the path walker) "
			  "IOLOCK: 0.80 tasks (98%), 100% of it between disjoint byte ranges") != NULL);
	CHECK(strstr(text, "(a range lock would have let those run; 0% overlapping, 0% with a range "
			  "unknown)\n  the largest share there: mysqld "
			  "buffered-write EXCL -> mysqld buffered-read SHARED, 50% (2 -> 2 threads)\n") != NULL);
	CHECK(strstr(text, "  apart from that, ext4 fsyncs waited for the journal: 0.10 tasks on "
			  "average (1.00 s in 1 wait)\n") != NULL);
	CHECK(!strstr(text, "too few"));
	free(text);
	json = render(render_json, &s, &m);
	CHECK(strstr(json, "\"summary\":{\"waits\":4,\"wait_ns\":8200000000,\"tasks_waiting\":0.82,"
			  "\"waits_left_out\":0,\"few_waiting\":false,\"estimated\":false,\"top\":{\"dev\":\"7:0\",\"ino\":131,"
			  "\"gen\":0,\"class\":\"i_rwsem\",\"tasks_waiting\":0.8},\"journal_waits\":1") != NULL);
	free(json);
	text = render(render_text, &s, &m);
	CHECK(!strstr(text, "sampled:") && !strstr(text, "estimated"));
	free(text);

	/* --wait-sample: the same figures, said to be estimates, and what was left out */
	{
		struct report_meta ms = m;

		ms.attach[ms.nattach].probe = "wait_sampling";
		ms.attach[ms.nattach++].mode = "1/16 > 250/s/lock/cpu";
		s.counters[ILOCK_EV_WAIT_SAMPLED_OUT] = 1234;
		text = render(render_text, &s, &ms);
		CHECK(strstr(text, "\nsampled: 1,234 rw_semaphore waits left out (wait_sampling=1/16 > "
				  "250/s/lock/cpu); each wait timed stands for those left out beside it, "
				  "so every count, time and histogram below is an estimate, and MAX the "
				  "longest wait timed\n") != NULL);
		CHECK(strstr(text, "(8.20 s of waiting in 10.0 s, 4 waits, estimated from a sample)\n")
		      != NULL);
		free(text);
		json = render(render_json, &s, &ms);
		CHECK(strstr(json, "\"few_waiting\":false,\"estimated\":true,") != NULL);
		free(json);
		/* "off" is every wait timed */
		ms.attach[ms.nattach - 1].mode = "off";
		CHECK(!meta_wait_sampling(&ms));
		CHECK(meta_wait_sampling(&m) == NULL);
	}
	snap_free(&s);

	/* 3 ms of waiting in 10 s: too few to blame */
	snap_init(&s);
	add_wait(&s, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, tiny, 2, false);
	text = render(render_text, &s, &m);
	CHECK(strstr(text, "  <0.001 tasks waited") != NULL);
	CHECK(strstr(text, "(3.00 ms of waiting in 10.0 s, 2 waits): too few to slow a workload "
			  "down; if it is slow, look past the locks") != NULL);
	CHECK(!strstr(text, "most on "));
	free(text);
	json = render(render_json, &s, &m);
	CHECK(strstr(json, "\"few_waiting\":true") != NULL);
	free(json);

	/* the same, with waits a full map kept out: "too few" no longer stands */
	s.counters[ILOCK_LOST_WAIT_MAP_FULL] = 25704;
	s.counters[ILOCK_LOST_BEGIN_NO_END] = 3;
	s.counters[ILOCK_LOST_PATH] = 9;  /* a detail lost, not a wait */
	text = render(render_text, &s, &m);
	CHECK(strstr(text, "(3.00 ms of waiting in 10.0 s, 2 waits)\n  and 25,707 waits that ilock "
			   "saw are missing from these figures (wait_map_full 25,704, "
			   "begin_without_end 3): they are low; --max-inodes makes room for more "
			   "locks\n") != NULL);
	CHECK(!strstr(text, "too few"));
	free(text);
	json = render(render_json, &s, &m);
	CHECK(strstr(json, "\"waits_left_out\":25707,\"few_waiting\":false") != NULL);
	free(json);
	snap_free(&s);

	/*
	 * An interval of 1 s in which one wait of 4.63 s ended, and one of
	 * 2 ms: booked whole where they end, but one task cannot wait more
	 * than the window, so about one task waited, not 4.6.
	 */
	{
		static const uint64_t long_one[] = { 4630000000ULL }, short_one[] = { 2000000 };
		struct report_meta iv = { .duration_s = 1.0 };
		struct wait_load wl;

		snap_init(&s);
		add_wait(&s, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, long_one, 1, false);
		add_wait(&s, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, short_one, 1, false);
		snap_wait_load(&s, iv.duration_s, &wl);
		CHECK(wl.began_before && wl.tasks > 1.0 && wl.tasks < 1.01);
		CHECK(fabs(wl.top_tasks - wl.tasks) < 1e-9);
		CHECK_EQ_U(wl.wait_ns, 4632000000ULL);
		text = render(render_text, &s, &iv);
		CHECK(strstr(text, "\nIN SHORT\n  up to 1.00 tasks waited for inode locks on average (4.63 s of "
				  "waiting ended in 1.0 s, some of it before, 2 waits)\n") != NULL);
		free(text);
		/* over the whole 10 s no wait is longer than the window: as before */
		snap_wait_load(&s, 10.0, &wl);
		CHECK(!wl.began_before && fabs(wl.tasks - 0.4632) < 1e-9);
		/* one wait: "1 wait" */
		snap_free(&s);
		snap_init(&s);
		add_wait(&s, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, short_one, 1, false);
		text = render(render_text, &s, &iv);
		CHECK(strstr(text, "(2.00 ms of waiting in 1.0 s, 1 wait)") != NULL);
		free(text);
		snap_free(&s);

		/*
		 * A report's window that a stall ran through, no wait ending in
		 * it, under a filter: the stall, not the filter, is the answer.
		 */
		snap_init(&s);
		s.counters[ILOCK_EV_BEGIN_RWSEM] = 48973;
		iv.filters = "-D 7:2";
		iv.duration_s = 3.0;
		iv.window_stalls = 1;
		iv.window_stall_ns = 2550000000ULL;
		text = render(render_text, &s, &iv);
		CHECK(strstr(text, "\nIN SHORT\n  no inode lock wait ended in this window, but 1 was in "
				  "progress in it, the longest seen for 2.55 s (STALLS below)\n") != NULL);
		CHECK(!strstr(text, "matched the filters"));
		free(text);
		iv.window_stalls = 0;
		text = render(render_text, &s, &iv);
		CHECK(strstr(text, "no inode lock wait matched the filters (-D 7:2)") != NULL);
		free(text);
		snap_free(&s);
	}

	/* every wait kept out: not "no task waited" */
	snap_init(&s);
	s.counters[ILOCK_LOST_PENDING_FULL] = 5;
	text = render(render_text, &s, &m);
	CHECK(strstr(text, "IN SHORT\n  no inode lock wait could be kept\n  and 5 waits that "
			   "ilock saw are missing from these figures (pending_map_full 5): they are "
			   "low\n") != NULL);
	CHECK(!strstr(text, "no task waited"));
	free(text);
	snap_free(&s);
	mounts_free(&mt);
}

static void test_format(void)
{
	char b[64];

	CHECK_STR(fmt_ns(b, sizeof(b), 950), "950 ns");
	CHECK_STR(fmt_ns(b, sizeof(b), 16200000), "16.2 ms");
	CHECK_STR(fmt_ns(b, sizeof(b), 812000000), "812 ms");
	CHECK_STR(fmt_ns(b, sizeof(b), 3400000000ULL), "3.40 s");
	CHECK_STR(fmt_count(b, sizeof(b), 2113), "2,113");
	CHECK_STR(fmt_count(b, sizeof(b), 1234567), "1,234,567");
	CHECK_STR(fmt_count(b, sizeof(b), 12), "12");
	CHECK_STR(fmt_share(b, sizeof(b), 0.974), "97%");
	CHECK_STR(fmt_share(b, sizeof(b), 0), "0%");
	CHECK_STR(fmt_share(b, sizeof(b), -1), "-");
	CHECK_STR(fmt_path_left(b, sizeof(b), "/very/long/path/to/file", 12), ".../to/file");
	CHECK_STR(fmt_path_left(b, sizeof(b), "/short", 12), "/short");
	CHECK_STR(fmt_task(b, sizeof(b), "fio", 42), "fio[42]");
	CHECK_STR(fmt_kdev(b, sizeof(b), ILOCK_KDEV(259, 3)), "259:3");
	/* names that would drive a terminal: every control shown as '?' */
	CHECK_STR(fmt_task(b, sizeof(b), "h\x1b[2J\x07x\n", 42), "h?[2J?x?[42]");
	char lines[] = "a\tb\nc\rd\x1b\x7f\x01" "e\xc3\xa9";

	display_clean(lines, sizeof(lines) - 1, true);
	CHECK_STR(lines, "a\tb\nc?d???e\xc3\xa9");  /* newline, tab and UTF-8 kept */
	CHECK_STR(label_clean(lines), "a?b?c?d???e\xc3\xa9");

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_write_string(f, "a\"b\\c\n\x01");
	fclose(f);
	CHECK_STR(buf, "\"a\\\"b\\\\c\\n\\u0001\"");
	free(buf);
}

static int parse(enum cli_cmd cmd, struct ilock_opts *o, char *err, int argc, ...)
{
	char *argv[16];
	va_list ap;

	va_start(ap, argc);
	for (int i = 0; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	argv[argc] = NULL;
	return cli_parse(cmd, argc, argv, o, err, 256);
}

static void test_cli(void)
{
	struct ilock_opts o;
	char err[256];

	CHECK(parse(CLI_STAT, &o, err, 5, "stat", "-d", "10", "-p", "42") == 0);
	CHECK(o.duration_s == 10.0 && o.f.tgid == 42);
	CHECK(parse(CLI_STAT, &o, err, 6, "stat", "-D", "7:3", "--ino", "131", "-j") == 0);
	CHECK(o.f.kdev == ILOCK_KDEV(7, 3) && o.f.ino == 131 && o.json);
	CHECK(parse(CLI_STAT, &o, err, 5, "stat", "--class", "IOLOCK", "--class", "xfs_ilock") == 0);
	CHECK_EQ_U(o.f.class_mask, (1U << ILOCK_CLASS_I_RWSEM) | (1U << ILOCK_CLASS_XFS_ILOCK));
	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "--fs", "ext4") == 0);
	CHECK_EQ_U(o.f.fs_magic, ILOCK_EXT4_SB_MAGIC);
	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "-c", "mysqld") == 0 && o.f.comm_on);
	CHECK(parse(CLI_STAT, &o, err, 2, "stat", "--help") == 1);

	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "-d", "abc") == -1);
	CHECK(strstr(err, "'abc'") != NULL);
	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "-d", "-5") == -1);
	/* the hint offers 0, until stopped: taken as no -d */
	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "-d", "0") == 0 && o.duration_s == 0.0);
	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "-d", "0.0") == 0 && o.duration_s == 0.0);
	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "-d", "0x") == -1);
	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "-d", "") == -1);
	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "-p", "0") == -1);
	CHECK(parse(CLI_STAT, &o, err, 2, "stat", "-x") == -1);
	CHECK_STR(err, "unknown option -x");
	CHECK(parse(CLI_STAT, &o, err, 2, "stat", "--bogus") == -1);
	CHECK(strstr(err, "--bogus") != NULL);
	CHECK(parse(CLI_STAT, &o, err, 2, "stat", "-d") == -1);
	CHECK(strstr(err, "needs a value") != NULL);
	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "--fs", "ntfs") == -1);
	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "--class", "mmap_lock") == -1);
	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "-c", "a-name-longer-than-15") == -1);
	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "-D", "/no/such/path") == -1);
	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "-D", "4096:1") == -1);
	CHECK(parse(CLI_STAT, &o, err, 2, "stat", "extra") == -1);
	CHECK(strstr(err, "extra") != NULL);
	/* -o is for ilocktop only */
	CHECK(parse(CLI_STAT, &o, err, 3, "stat", "-o", "max") == -1);
	CHECK(parse(CLI_TOP, &o, err, 3, "top", "-o", "max") == 0 && o.sort == SORT_MAX);
	CHECK(parse(CLI_TOP, &o, err, 3, "top", "-o", "nope") == -1);
	CHECK(parse(CLI_TOP, &o, err, 4, "top", "-b", "-n", "3") == 0 && o.batch && o.iterations == 3);
}

/*
 * Locks taken but never waited for, with --holds: listed apart, with how
 * often each mode was taken (no exclusive IOLOCK on a read path: seed 001).
 */
static void test_held_only(void)
{
	static const uint64_t waits[] = { 4000000 };
	static const uint64_t holds[] = { 20000, 30000, 40000 };
	struct snapshot s;
	struct report_meta m;
	struct mount_table mt;
	char *text;

	meta(&m, &mt);
	m.attach[1].mode = "tp_btf";
	m.attach[2] = (struct attach_info){ "hold_sampling", "every hold" };
	m.nattach = 3;
	snap_init(&s);
	add_wait(&s, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, waits, 1, false);
	text = render(render_text, &s, &m);
	CHECK(strstr(text, "HELD WITHOUT WAITS") == NULL);
	free(text);
	add_wait(&s, 140, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, holds, 3, true);
	snap_sort_locks(&s, SORT_WAIT_TIME);
	text = render(render_text, &s, &m);
	CHECK(strstr(text, "\nHELD WITHOUT WAITS (--holds: locks taken, nobody waited)\n"
			   "  7:0:140 (no waits: path not resolved)  [7:0 ino 140, xfs IOLOCK]\n"
			   "    holds shared    3 acquisitions, p50 ") != NULL);
	CHECK(strstr(text, "    holds exclusive none\n") != NULL);
	/* the lock with waits is not listed again */
	CHECK(strstr(text, "ino 131, xfs IOLOCK]\n    holds") == NULL);
	free(text);
	snap_free(&s);
	mounts_free(&mt);
}

/*
 * IN SHORT's headroom names what the rest is: overlapping or unknown. A
 * reader quoted "86% disjoint" as "14% overlapped" where none did.
 */
static void test_headroom_rest(void)
{
	static const uint64_t waits[] = { 1000000000ULL, 1000000000ULL };
	struct report_meta m = { .duration_s = 1.0 };
	struct snapshot s;
	char *text;

	for (int all_overlap = 0; all_overlap < 2; all_overlap++) {
		snap_init(&s);
		add_wait(&s, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, waits, 2, false);
		add_range(&s, 131, all_overlap ? ILOCK_RANGE_OVERLAP : ILOCK_RANGE_DISJOINT, 1,
			  1720000000ULL);
		add_range(&s, 131, all_overlap ? ILOCK_RANGE_OVERLAP : ILOCK_RANGE_NO_HOLDER, 1,
			  280000000ULL);
		text = render(render_text, &s, &m);
		CHECK(strstr(text, all_overlap
			? ", 0% of it between disjoint byte ranges (a range lock would not have "
			  "helped; 100% overlapping, 0% with a range unknown)\n"
			: ", 86% of it between disjoint byte ranges (a range lock would have let "
			  "those run; 0% overlapping, 14% with a range unknown)\n") != NULL);
		free(text);
		snap_free(&s);
	}
	/* a sliver disjoint: not "0% ... would have let those run"; and shares that add to 100 */
	snap_init(&s);
	add_wait(&s, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, waits, 2, false);
	add_range(&s, 131, ILOCK_RANGE_DISJOINT, 1, 107000ULL);
	add_range(&s, 131, ILOCK_RANGE_OVERLAP, 1, 1860000000ULL);
	add_range(&s, 131, ILOCK_RANGE_NO_HOLDER, 1, 139893000ULL);
	text = render(render_text, &s, &m);
	CHECK(strstr(text, ", 0% of it between disjoint byte ranges (too little for a range lock to "
			  "matter; 93% overlapping, 7% with a range unknown)\n") != NULL);
	free(text);
	snap_free(&s);
}

/* A reader-owned lock whose hint was the waiter itself: "readers", no name. */
static void test_unnamed_readers(void)
{
	struct snapshot s;
	struct report_meta m = { .duration_s = 1.0 };
	struct ilock_edge_key ek = { .ino = 131, .dev = ILOCK_KDEV(7, 0), .class = ILOCK_CLASS_I_RWSEM,
				     .holder_mode = ILOCK_MODE_READERS,
				     .waiter_mode = ILOCK_MODE_SHARED, .waiter_pid = 20 };
	struct ilock_edge_stats es = { 1, 1000, 1000 };
	char *text;

	snap_init(&s);
	memcpy(ek.waiter_comm, "rw", 3);
	CHECK(snap_add_edge(&s, &ek, &es) == 0);
	text = render(render_text, &s, &m);
	CHECK(strstr(text, "\n  readers                          ->  rw[20]") != NULL);
	CHECK(!strstr(text, "last ?"));
	CHECK(strstr(text, "(readers)") != NULL);  /* by command */
	free(text);
	snap_free(&s);
}

/* A directory: its label ends in '/', and IN SHORT says its waits are over names. */
static void test_directory(void)
{
	static const uint64_t waits[] = { 1000000000ULL, 1000000000ULL };
	struct inode_meta d = { .ino = 128, .dev = ILOCK_KDEV(7, 0), .magic = ILOCK_XFS_SB_MAGIC,
				.flags = ILOCK_INODE_DIR };
	struct report_meta m;
	struct mount_table mt;
	struct snapshot s;
	char *text, *json;

	meta(&m, &mt);
	for (int dir = 0; dir < 2; dir++) {
		snap_init(&s);
		d.flags = dir ? ILOCK_INODE_DIR : 0;
		strcpy(d.path, "/spool");
		snap_add_inode(&s, &d);
		add_wait(&s, 128, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, waits, 2, false);
		{
			/* a pair on it, for the tables by thread and operation */
			struct ilock_edge_key ek = { .ino = 128, .dev = ILOCK_KDEV(7, 0),
						     .class = ILOCK_CLASS_I_RWSEM,
						     .holder_mode = ILOCK_MODE_EXCL, .holder_pid = 10,
						     .waiter_mode = ILOCK_MODE_EXCL, .waiter_pid = 20,
						     .holder_op = ILOCK_OP_CREATE,
						     .waiter_op = ILOCK_OP_UNLINK };
			struct ilock_edge_stats es = { 2, 2000000000ULL, 1000000000ULL };

			memcpy(ek.holder_comm, "mk", 3);
			memcpy(ek.waiter_comm, "rm", 3);
			CHECK(snap_add_edge(&s, &ek, &es) == 0);
		}
		text = render(render_text, &s, &m);
		json = render(render_json, &s, &m);
		{
			/* every table names it alike: a directory with its slash, everywhere */
			const char *p = text;
			int with = 0, without = 0;

			while ((p = strstr(p, "/mnt/x/spool"))) {
				p += strlen("/mnt/x/spool");
				if (*p == '/')
					with++;
				else
					without++;
			}
			CHECK(dir ? with >= 3 && !without : !with && without >= 3);
		}
		CHECK(!strstr(text, "most on /mnt/x/spool/ IOLOCK") == !dir);
		CHECK(!strstr(text, "\n/mnt/x/spool/ ") == !dir);  /* the top table's row */
		CHECK(!strstr(text, "(100%), a directory: its waits are over names") == !dir);
		CHECK(strstr(json, dir ? "\"directory\":true" : "\"directory\":false") != NULL);
		{
			char label[2 * ILOCK_PATH_MAX + 64];

			/* the report's tables and HTML label it the same way */
			report_label(&s, &m, ILOCK_KDEV(7, 0), 128, 0, false, label, sizeof(label));
			CHECK_STR(label, dir ? "/mnt/x/spool/" : "/mnt/x/spool");
		}
		free(text);
		free(json);
		snap_free(&s);
	}
	/* the XFS ILOCK most waited on: no range figures, and why */
	snap_init(&s);
	add_wait(&s, 129, ILOCK_CLASS_XFS_ILOCK, ILOCK_MODE_EXCL, waits, 2, false);
	text = render(render_text, &s, &m);
	CHECK(strstr(text, "(100%), a lock on the inode's metadata, not its bytes: a range lock "
			   "would not apply\n") != NULL);
	CHECK(!strstr(text, "between disjoint byte ranges"));
	free(text);
	snap_free(&s);
	mounts_free(&mt);
}

/* One label builder for every view: what each LABEL_* flag adds, in each of the three forms. */
static void test_inode_label_as(void)
{
	static const struct {
		const char *path, *rel, *note;
		bool dir;
		unsigned flags;
		const char *want;
	} t[] = {
		{ "/mnt/x/spool", "/spool", NULL, true, LABEL_ALL, "/mnt/x/spool/" },
		{ "/mnt/x/spool", "/spool", NULL, true, LABEL_PATH_NOTE, "/mnt/x/spool" },
		{ "/mnt/x/a", "/a", "deleted", false, LABEL_ALL, "/mnt/x/a (deleted)" },
		{ "/mnt/x/a", "/a", "deleted", false, LABEL_SLASH | LABEL_NO_PATH_NOTE, "/mnt/x/a" },
		{ "", "/a", "device not mounted", false, LABEL_ALL, "7:0:/a (device not mounted)" },
		{ "", "/a", "device not mounted", false, LABEL_SLASH | LABEL_PATH_NOTE, "7:0:/a" },
		{ "", "", "no dentry", false, LABEL_ALL, "7:0:131 (no dentry)" },
		{ "", "", NULL, false, LABEL_NO_PATH_NOTE, "7:0:131 (unknown)" },
		{ "", "", "no dentry", false, 0, "7:0:131" },
		{ "/mnt/x/e\033]0;t\a", "", NULL, false, LABEL_ALL, "/mnt/x/e?]0;t?" },
	};
	struct inode_view v;
	char label[64], small[8];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&v, 0, sizeof(v));
		snprintf(v.path, sizeof(v.path), "%s", t[i].path);
		snprintf(v.rel, sizeof(v.rel), "%s", t[i].rel);
		v.note = t[i].note;
		v.dir = t[i].dir;
		inode_label_as(label, sizeof(label), &v, ILOCK_KDEV(7, 0), 131, t[i].flags);
		CHECK_STR(label, t[i].want);
	}
	/* a label cut short by the buffer gets no note glued onto the cut */
	memset(&v, 0, sizeof(v));
	snprintf(v.path, sizeof(v.path), "/mnt/x/long-name");
	v.note = "deleted";
	inode_label_as(small, sizeof(small), &v, ILOCK_KDEV(7, 0), 131, LABEL_ALL);
	CHECK_STR(small, "/mnt/x/");
}

int main(void)
{
	test_golden();
	test_empty();
	test_in_short();
	test_held_only();
	test_unnamed_readers();
	test_headroom_rest();
	test_directory();
	test_inode_label_as();
	test_format();
	test_cli();
	UNIT_DONE();
}
