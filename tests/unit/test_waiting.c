// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Waits in progress: reading the iterator's records, oldest first, the
 * stall threshold, and their text and JSON.
 */
#include <stdlib.h>

#include "render.h"
#include "titles.h"
#include "util.h"
#include "waiting.h"
#include "unit.h"

static struct ilock_waiting rec(uint32_t tid, const char *comm, uint64_t age_ns)
{
	struct ilock_waiting w = {};

	w.start_ns = 1000000000000ULL;
	w.now_ns = w.start_ns + age_ns;
	w.lock = 0xffff888012345678ULL;
	w.key.dev = ILOCK_KDEV(7, 0);
	w.key.ino = 131;
	w.key.class = ILOCK_CLASS_I_RWSEM;
	w.key.mode = ILOCK_MODE_SHARED;
	w.tid = w.tgid = tid;
	w.weight = 1;
	w.owner_state = ILOCK_STATE_UNKNOWN;
	w.waiter_state = 0x2;  /* asleep on the lock */
	w.holder_mode = w.owner_mode = ILOCK_MODE_UNKNOWN;
	memcpy(w.comm, comm, strlen(comm) < sizeof(w.comm) ? strlen(comm) : sizeof(w.comm));
	return w;
}

static void test_parse_and_order(void)
{
	struct waiting_set ws = {};
	struct ilock_waiting r[3] = { rec(10, "a", 5000), rec(11, "b", 3000000000ULL),
				      rec(12, "c", 200000000) };
	char raw[sizeof(r) + 7];

	memcpy(raw, r, sizeof(r));
	CHECK(waiting_add_raw(&ws, raw, sizeof(r) + 7, 0) == 0);
	CHECK_EQ_U(ws.n, 3);
	CHECK_EQ_U(ws.total, 3);
	CHECK_EQ_U(ws.torn_bytes, 7);  /* a partial record is counted, not read */
	waiting_finish(&ws);
	CHECK_EQ_U(ws.w[0].tid, 11);
	CHECK_EQ_U(ws.w[1].tid, 12);
	CHECK_EQ_U(ws.w[2].tid, 10);
	CHECK_EQ_U(waiting_over(&ws, WAITING_STALL_NS), 2);
	CHECK_EQ_U(waiting_over(&ws, 4000000000ULL), 0);
	CHECK_EQ_U(waiting_over(&ws, 0), 3);

	/* a waiter that runs was woken (or its end missed): not listed, counted */
	{
		struct ilock_waiting woken = rec(13, "d", 900000000);

		woken.waiter_state = 0;
		CHECK(waiting_add_raw(&ws, &woken, sizeof(woken), 0) == 0);
		CHECK_EQ_U(ws.n, 3);
		CHECK_EQ_U(ws.total, 3);
		CHECK_EQ_U(ws.running, 1);
	}
	/* a clock that went backwards is age 0, not 584 years */
	ws.w[2].now_ns = ws.w[2].start_ns - 1;
	CHECK_EQ_U(waiting_age_ns(&ws.w[2]), 0);
	waiting_free(&ws);
}

static void test_keep_the_oldest(void)
{
	struct waiting_set ws = {};

	for (uint32_t i = 0; i < WAITING_KEEP + 40; i++) {
		struct ilock_waiting w = rec(100 + i, "t", (uint64_t)i * 1000);

		CHECK(waiting_add_raw(&ws, &w, sizeof(w), 0) == 0);
	}
	waiting_finish(&ws);
	CHECK_EQ_U(ws.n, WAITING_KEEP);
	CHECK_EQ_U(ws.total, WAITING_KEEP + 40);
	CHECK_EQ_U(ws.w[0].tid, 100 + WAITING_KEEP + 39);  /* the oldest */
	CHECK_EQ_U(ws.w[WAITING_KEEP - 1].tid, 100 + 40);
	waiting_free(&ws);
}

static void test_state_chars(void)
{
	CHECK(waiting_state_char(0) == 'R');
	CHECK(waiting_state_char(0x1) == 'S');
	CHECK(waiting_state_char(0x2) == 'D');
	CHECK(waiting_state_char(0x102) == 'D');  /* TASK_KILLABLE */
	CHECK(waiting_state_char(0x402) == 'I');  /* TASK_IDLE */
	CHECK(waiting_state_char(0x4) == 'T');
	CHECK(waiting_state_char(ILOCK_STATE_UNKNOWN) == '?');
}

/* A snapshot carries the latest read through delta and copy. */
static void test_snapshot_carries_it(void)
{
	struct snapshot a, b, d;
	struct ilock_waiting w = rec(7, "x", 2000000000ULL);

	snap_init(&a);
	snap_init(&b);
	snap_init(&d);
	CHECK(waiting_add_raw(&b.waiting, &w, sizeof(w), 0) == 0);
	b.waiting.available = true;
	waiting_finish(&b.waiting);
	CHECK(snap_delta(&d, &b, &a) == 0);
	CHECK_EQ_U(d.waiting.n, 1);
	CHECK(d.waiting.available);
	CHECK(snap_copy(&a, &d) == 0);
	CHECK_EQ_U(a.waiting.n, 1);
	CHECK_EQ_U(a.waiting.w[0].tid, 7);
	snap_reset(&a);
	CHECK_EQ_U(a.waiting.n, 0);
	CHECK(!a.waiting.available);
	snap_free(&a);
	snap_free(&b);
	snap_free(&d);
}

/* process titles the renders below are given; NULL: none */
static const struct titles *test_titles;

static char *text_of(const struct snapshot *s, bool json)
{
	struct mount_table mt = {};
	struct report_meta m = { .duration_s = 1.0, .kernel = "k", .hostname = "h",
				 .titles = test_titles };
	struct render_opts o = { .top_n = 10 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	mounts_parse(&mt, "40 22 7:0 / /mnt/x rw - xfs /dev/loop0 rw\n");
	m.mounts = &mt;
	if (json)
		render_json(f, s, &m, &o);
	else
		render_text(f, s, &m, &o);
	fclose(f);
	mounts_free(&mt);
	return buf;
}

static void test_render(void)
{
	struct snapshot s;
	struct inode_meta im = { .ino = 131, .dev = ILOCK_KDEV(7, 0), .magic = ILOCK_XFS_SB_MAGIC };
	struct ilock_waiting stalled = rec(4242, "postgres", 12400000000ULL);
	struct ilock_waiting behind = rec(4243, "pg2", 300000000);
	struct ilock_waiting young = rec(4244, "pg3", 50000);
	char *t;

	snap_init(&s);
	strcpy(im.path, "/db/t1");
	snap_add_inode(&s, &im);
	/* held by a writer asleep in D state, the same one as at the start */
	stalled.holder_mode = stalled.owner_mode = ILOCK_MODE_EXCL;
	stalled.holder_pid = stalled.owner_pid = 4100;
	memcpy(stalled.holder_comm, "fio", 4);
	memcpy(stalled.owner_comm, "fio", 4);
	stalled.owner_state = 0x2;
	stalled.wop = (struct ilock_op_info){ .op = ILOCK_OP_BUFFERED_READ, .flags = ILOCK_OPF_RANGE,
					     .start = 8192, .end = 8192 + 4096 };
	stalled.hop = (struct ilock_op_info){ .op = ILOCK_OP_BUFFERED_WRITE, .flags = ILOCK_OPF_RANGE,
					     .start = 0, .end = 4096 };
	/* handed over since: another writer holds it now */
	behind.key.mode = ILOCK_MODE_EXCL;
	behind.holder_mode = ILOCK_MODE_EXCL;
	behind.holder_pid = 4100;
	memcpy(behind.holder_comm, "fio", 4);
	behind.owner_mode = ILOCK_MODE_EXCL;
	behind.owner_pid = 4101;
	memcpy(behind.owner_comm, "vacuum", 7);
	behind.owner_state = 0;

	/* none long enough: no section, no IN SHORT line, but JSON has it */
	CHECK(waiting_add_raw(&s.waiting, &young, sizeof(young), 0) == 0);
	s.waiting.available = true;
	waiting_finish(&s.waiting);
	t = text_of(&s, false);
	CHECK(!strstr(t, "WAITING NOW"));
	CHECK(!strstr(t, "STALLED"));
	free(t);
	t = text_of(&s, true);
	CHECK(strstr(t, "\"waiting_now\":{\"available\":true,\"in_progress\":1,") != NULL);
	CHECK(strstr(t, "\"waited_ns\":50000,") != NULL);
	free(t);

	/* 300 ms: listed, but no alarm in IN SHORT (that takes a second) */
	CHECK(waiting_add_raw(&s.waiting, &behind, sizeof(behind), 0) == 0);
	waiting_finish(&s.waiting);
	t = text_of(&s, false);
	CHECK(strstr(t, "WAITING NOW (in progress for 100 ms or more") != NULL);
	CHECK(strstr(t, "pg2[4243] exclusive on /mnt/x/db/t1 IOLOCK") != NULL);
	CHECK(!strstr(t, "STALLED"));
	free(t);
	CHECK(waiting_add_raw(&s.waiting, &stalled, sizeof(stalled), 0) == 0);
	waiting_finish(&s.waiting);
	t = text_of(&s, false);
	if (getenv("SHOW")) fputs(t, stderr);
	CHECK(strstr(t, "WAITING NOW (in progress for 100 ms or more, oldest first; 3 in progress "
			"in all)") != NULL);
	CHECK(strstr(t, "  STALLED: postgres[4242] has waited 12.4 s so far, shared, for "
			"/mnt/x/db/t1 IOLOCK, held at the start by fio[4100] exclusive; held now "
			"by the same thread, state D") != NULL);
	CHECK(strstr(t, "\n  12.4 s    postgres[4242] shared, buffered-read 4 KiB at 8 KiB on "
			"/mnt/x/db/t1 IOLOCK\n            held at the start by fio[4100] exclusive, "
			"buffered-write 4 KiB at 0 B; now by the same thread, state D; ranges disjoint: a "
			"range lock would not block it\n") != NULL);
	CHECK(strstr(t, "\n  300 ms    pg2[4243] exclusive on /mnt/x/db/t1 IOLOCK\n            held at "
			"the start by fio[4100] exclusive; now by vacuum[4101] exclusive, state R\n") != NULL);
	/* no range on one side: nothing said about ranges */
	CHECK(strstr(t, "now by vacuum[4101] exclusive, state R\n") != NULL);
	/* a stall going on is not "too few to slow a workload down" */
	CHECK(strstr(t, "the stall is still going on") != NULL);
	CHECK(!strstr(t, "no task waited"));
	CHECK(!strstr(t, "pg3[4244]"));  /* under the threshold */
	/* the section comes before the tables, the stall first in IN SHORT */
	CHECK(strstr(t, "WAITING NOW") < strstr(t, "TOP INODE LOCKS"));
	CHECK(strstr(t, "IN SHORT\n  STALLED") != NULL);
	free(t);
	/* ilocktop's detail view of one lock: its stalls, not its short waits */
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		render_waiting_lock(f, &s.waiting, ILOCK_KDEV(7, 0), 131, 0, ILOCK_CLASS_I_RWSEM);
		render_waiting_lock(f, &s.waiting, ILOCK_KDEV(7, 0), 132, 0, ILOCK_CLASS_I_RWSEM);
		fclose(f);
		CHECK(strstr(buf, "\nWAITING NOW on this lock (in progress for 100 ms or more when "
				  "last read, oldest first)\n  12.4 s    postgres[4242] shared, buffered-read 4 KiB at "
				  "8 KiB\n            held at the start by fio[4100] exclusive") != NULL);
		CHECK(strstr(buf, "  300 ms    pg2[4243] exclusive\n") != NULL);
		CHECK(!strstr(buf, "pg3[4244]"));
		/* once: the other inode has none */
		CHECK(strstr(buf, "WAITING NOW") == strstr(buf, "\nWAITING NOW") + 1 &&
		      !strstr(strstr(buf, "WAITING NOW") + 1, "WAITING NOW"));
		free(buf);
	}
	t = text_of(&s, true);
	CHECK(strstr(t, "\"owner_now\":{\"pid\":4100,\"tgid\":0,\"comm\":\"fio\",\"title\":null,"
			"\"mode\":\"exclusive\"},\"owner_state\":\"D\"") != NULL);
	CHECK(strstr(t, "\"weight\":1,\"range\":\"disjoint\",") != NULL);
	CHECK(strstr(t, "\"waiter\":{\"pid\":4242,\"tgid\":4242,\"comm\":\"postgres\",\"title\":null,"
			"\"mode\":\"shared\",\"op\":\"buffered-read\",\"op_flags\":[],\"offset\":8192,"
			"\"end\":12288}") != NULL);
	free(t);
	/* a stalled thread's process title: in JSON, and in the text's legend */
	{
		struct titles ti;

		titles_init(&ti);
		CHECK(!titles_put(&ti, 4242, "postgres", "postgres: alice shop [local] SELECT"));
		CHECK(!titles_put(&ti, 4100, "fio", ""));
		test_titles = &ti;
		t = text_of(&s, true);
		CHECK(strstr(t, "\"waiter\":{\"pid\":4242,\"tgid\":4242,\"comm\":\"postgres\","
				"\"title\":\"postgres: alice shop [local] SELECT\",") != NULL);
		CHECK(strstr(t, "\"owner_now\":{\"pid\":4100,\"tgid\":0,\"comm\":\"fio\",\"title\":null,") != NULL);
		free(t);
		t = text_of(&s, false);
		CHECK(strstr(t, "\nPROCESS TITLES (of the threads named above, as ilock first saw them)\n"
				"  postgres[4242]         postgres: alice shop [local] SELECT\n\n") != NULL);
		free(t);
		test_titles = NULL;
		titles_free(&ti);
	}
	snap_free(&s);
}

/* An ext4 fsync in progress, as bpf/waiting.bpf.c's fsync_now() writes it. */
static struct ilock_waiting fsync_rec(uint32_t tid, uint64_t age_ns)
{
	struct ilock_waiting w = rec(tid, "mysqld", age_ns);

	w.lock = 0;
	w.key.class = ILOCK_CLASS_JBD2_WAIT;
	w.key.mode = ILOCK_MODE_EXCL;
	w.key.ino = 12;
	w.wop.op = ILOCK_OP_FSYNC;
	w.hop.op = ILOCK_OP_JOURNAL_COMMIT;
	w.need_tid = 77;
	return w;
}

static void test_fsync(void)
{
	struct snapshot s;
	struct inode_meta im = { .ino = 12, .dev = ILOCK_KDEV(7, 0), .magic = ILOCK_EXT4_SB_MAGIC };
	struct ilock_waiting committing = fsync_rec(500, 12400000000ULL);
	struct ilock_waiting writing = fsync_rec(501, 2000000000ULL);
	struct ilock_waiting nojournal = fsync_rec(502, 200000000);
	struct ilock_waiting lockwait = rec(600, "pg", 1500000000ULL);
	uint64_t counters[ILOCK_COUNTER_MAX] = { 0 };
	char buf[256], *t;

	snap_init(&s);
	strcpy(im.path, "/ib_logfile0");
	snap_add_inode(&s, &im);
	/* the commit of transaction 76 runs, its thread in D; it began 12 s ago */
	committing.owner_mode = writing.owner_mode = ILOCK_MODE_EXCL;
	committing.owner_pid = writing.owner_pid = 321;
	memcpy(committing.owner_comm, "jbd2/loop0-8", 12);
	memcpy(writing.owner_comm, "jbd2/loop0-8", 12);
	committing.owner_state = 0x2;
	writing.owner_state = 0x1;
	committing.commit_start_ns = committing.start_ns + 100000000;
	committing.commit_tid = 76;
	/* an fsync writing its data back runs: it stays in the list */
	writing.waiter_state = 0;
	CHECK_STR(fmt_fsync_journal(buf, sizeof(buf), &committing),
		  "journal commit of transaction 76 running for 12.3 s, by jbd2/loop0-8[321], "
		  "state D");
	CHECK_STR(fmt_fsync_journal(buf, sizeof(buf), &writing),
		  "no commit of transaction 77 running: it writes its data back, or waits for the "
		  "commit to start (journal jbd2/loop0-8[321], state S)");
	CHECK(strstr(fmt_fsync_journal(buf, sizeof(buf), &nojournal), "no journal commit seen") ==
	      buf);

	CHECK(waiting_add_raw(&s.waiting, &nojournal, sizeof(nojournal), 0) == 0);
	CHECK(waiting_add_raw(&s.waiting, &writing, sizeof(writing), 0) == 0);
	CHECK(waiting_add_raw(&s.waiting, &lockwait, sizeof(lockwait), 0) == 0);
	CHECK(waiting_add_raw(&s.waiting, &committing, sizeof(committing), 0) == 0);
	s.waiting.available = true;
	waiting_finish(&s.waiting);
	CHECK_EQ_U(s.waiting.n, 4);
	CHECK_EQ_U(s.waiting.running, 0);
	/* the kinds apart, for the exporter's two gauges */
	CHECK_EQ_U(s.waiting.oldest_ns[1], 12400000000ULL);
	CHECK_EQ_U(s.waiting.oldest_ns[0], 1500000000ULL);
	CHECK_EQ_U(s.waiting.stalled[1], 3);
	CHECK_EQ_U(s.waiting.stalled[0], 1);
	{
		/* 70 stuck fsyncs, older than a lock wait: the cut keeps 64, the gauges all */
		struct waiting_set ws = {};
		struct ilock_waiting lw = rec(900, "pg", 2000000000ULL), cp;

		for (uint32_t i = 0; i < 70; i++) {
			struct ilock_waiting f = fsync_rec(1000 + i, 5000000000ULL + i);

			CHECK(waiting_add_raw(&ws, &f, sizeof(f), 0) == 0);
		}
		CHECK(waiting_add_raw(&ws, &lw, sizeof(lw), 0) == 0);
		waiting_finish(&ws);
		CHECK_EQ_U(ws.n, WAITING_KEEP);
		CHECK_EQ_U(ws.total, 71);
		CHECK_EQ_U(ws.oldest_ns[0], 2000000000ULL);
		CHECK_EQ_U(ws.stalled[0], 1);
		CHECK_EQ_U(ws.stalled[1], 70);
		memcpy(&cp, &ws.w[0], sizeof(cp));
		CHECK(waiting_is_fsync(&cp));
		{
			struct waiting_set c2 = {};

			CHECK(waiting_copy(&c2, &ws) == 0);
			CHECK_EQ_U(c2.oldest_ns[0], 2000000000ULL);
			CHECK_EQ_U(c2.stalled[1], 70);
			waiting_reset(&c2);
			CHECK_EQ_U(c2.oldest_ns[0], 0);
			CHECK_EQ_U(c2.stalled[1], 0);
			waiting_free(&c2);
		}
		waiting_free(&ws);
	}

	t = text_of(&s, false);
	if (getenv("SHOW")) fputs(t, stderr);
	CHECK(strstr(t, "IN SHORT\n  STALLED: mysqld[500] has been in fsync of /mnt/x/ib_logfile0 "
			"for 12.4 s so far; journal commit of transaction 76 running for 12.3 s, by "
			"jbd2/loop0-8[321], state D (WAITING NOW below)\n") != NULL);
	CHECK(strstr(t, "\n  12.4 s    mysqld[500] fsync of /mnt/x/ib_logfile0\n            journal "
			"commit of transaction 76 running") != NULL);
	CHECK(strstr(t, "\n  2.00 s    mysqld[501] fsync of /mnt/x/ib_logfile0\n            no "
			"commit of transaction 77 running") != NULL);
	CHECK(strstr(t, "\n  1.50 s    pg[600] shared on 7:0:131 (not seen by the path walker) IOLOCK\n") != NULL);
	free(t);
	t = text_of(&s, true);
	CHECK(strstr(t, "{\"kind\":\"fsync\",\"waited_ns\":12400000000,") != NULL);
	CHECK(strstr(t, "\"class\":\"jbd2_wait\"") != NULL);
	CHECK(strstr(t, "\"journal\":{\"need_tid\":77,\"commit_tid\":76,"
			"\"commit_running_ns\":12300000000}") != NULL);
	CHECK(strstr(t, "\"journal\":{\"need_tid\":77,\"commit_tid\":null,"
			"\"commit_running_ns\":null}") != NULL);
	CHECK(strstr(t, "{\"kind\":\"lock_wait\",\"waited_ns\":1500000000,") != NULL);
	free(t);

	/* the walk is needed while an fsync is open, whatever the lock waits */
	counters[ILOCK_EV_FSYNC_BEGUN] = 5;
	counters[ILOCK_EV_FSYNC_ENDED] = 4;
	CHECK_EQ_U(waiting_fsyncs_open(counters), 1);
	counters[ILOCK_EV_FSYNC_ENDED] = 6;
	CHECK_EQ_U(waiting_fsyncs_open(counters), 0);
	snap_free(&s);
}

/*
 * A wait begun before tracing (task_struct.blocker): its start is when
 * tracing began, its age a lower bound (">"), no holder at its start;
 * and a kernel that cannot show one hedges "no task waited".
 */
static void test_before_trace(void)
{
	struct snapshot s;
	struct inode_meta im = { .ino = 131, .dev = ILOCK_KDEV(7, 0), .magic = ILOCK_XFS_SB_MAGIC };
	struct ilock_waiting old = rec(4300, "mysqld", 0);
	uint64_t trace_start = 1000000000000ULL - 2500000000ULL;
	char *t;

	snap_init(&s);
	strcpy(im.path, "/db/t1");
	snap_add_inode(&s, &im);
	old.start_ns = 0;
	old.now_ns = 1000000000000ULL;
	old.before_trace = 1;
	old.key.mode = ILOCK_MODE_EXCL;
	old.owner_mode = ILOCK_MODE_EXCL;
	old.owner_pid = 4100;
	memcpy(old.owner_comm, "fio", 4);
	old.owner_state = 0x2;
	CHECK(waiting_add_raw(&s.waiting, &old, sizeof(old), trace_start) == 0);
	s.waiting.available = s.waiting.sees_older = true;
	waiting_finish(&s.waiting);
	CHECK_EQ_U(s.waiting.before_trace, 1);
	CHECK_EQ_U(s.waiting.w[0].start_ns, trace_start);
	CHECK_EQ_U(waiting_age_ns(&s.waiting.w[0]), 2500000000ULL);
	CHECK_EQ_U(s.waiting.stalled[0], 1);
	t = text_of(&s, false);
	if (getenv("SHOW")) fputs(t, stderr);
	CHECK(strstr(t, "IN SHORT\n  STALLED: mysqld[4300] has waited more than 2.50 s, since before "
			"tracing began, exclusive, for /mnt/x/db/t1 IOLOCK; held now by fio[4100] "
			"exclusive, state D (WAITING NOW below)\n") != NULL);
	CHECK(strstr(t, "\n  >2.50 s   mysqld[4300] exclusive on /mnt/x/db/t1 IOLOCK\n            began "
			"before tracing, its holder then not seen; now held by fio[4100] exclusive, "
			"state D\n") != NULL);
	CHECK(!strstr(t, "held at the start"));
	free(t);
	t = text_of(&s, true);
	CHECK(strstr(t, "\"waited_ns\":2500000000,\"began_before_tracing\":true,") != NULL);
	free(t);
	waiting_free(&s.waiting);

	/* nothing at all: a kernel that shows such waits says so flatly, another hedges */
	for (int sees = 0; sees < 2; sees++) {
		s.waiting.available = true;
		s.waiting.sees_older = sees;
		t = text_of(&s, false);
		CHECK(strstr(t, "no task waited for an inode lock: if this workload is slow, the cause "
				"is not its inode locks") != NULL);
		CHECK((strstr(t, "unless a wait began before tracing (this kernel shows one only once "
				 "it ends)") == NULL) == (sees == 1));
		free(t);
	}
	snap_free(&s);
}

int main(void)
{
	test_parse_and_order();
	test_keep_the_oldest();
	test_state_chars();
	test_snapshot_carries_it();
	test_render();
	test_fsync();
	test_before_trace();
	UNIT_DONE();
}
