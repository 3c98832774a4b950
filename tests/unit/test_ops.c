// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Operations and byte ranges (the rules of docs/ranges.md, shared with the
 * BPF side through include/ilock.h), pairs and headroom, the snapshot's
 * ranges, stacks and direct writes through delta and merge, the kallsyms
 * symboliser, and the renderers of all that against golden files.
 */
#include <stdlib.h>

#include "cli.h"
#include "ksyms.h"
#include "ops.h"
#include "probe.h"
#include "render.h"
#include "render_ops.h"
#include "titles.h"
#include "unit.h"
#include "golden.h"

#define EOFR ILOCK_RANGE_EOF

static struct ilock_op_info op_at(uint8_t op, uint8_t flags, uint64_t pos, uint64_t len,
				  uint64_t isize)
{
	struct ilock_op_info o = { .op = op, .flags = flags };

	ilock_op_set_range(&o, pos, len, isize);
	return o;
}

static void test_range_rules(void)
{
	struct ilock_op_info o;

	o = op_at(ILOCK_OP_BUFFERED_READ, 0, 8192, 4096, 1 << 20);
	CHECK(o.start == 8192 && o.end == 12288 && (o.flags & ILOCK_OPF_RANGE));
	/* a write inside EOF is its bytes */
	o = op_at(ILOCK_OP_BUFFERED_WRITE, 0, 0, 4096, 1 << 20);
	CHECK(o.start == 0 && o.end == 4096 && !(o.flags & ILOCK_OPF_EXTENDING));
	/* past EOF: from the old EOF (or pos, if lower) onwards */
	o = op_at(ILOCK_OP_DIRECT_WRITE, 0, 1 << 20, 4096, 65536);
	CHECK(o.start == 65536 && o.end == EOFR && (o.flags & ILOCK_OPF_EXTENDING));
	o = op_at(ILOCK_OP_BUFFERED_WRITE, 0, 60000, 10000, 65536);
	CHECK(o.start == 60000 && o.end == EOFR);
	o = op_at(ILOCK_OP_BUFFERED_WRITE, ILOCK_OPF_APPEND, 0, 10, 65536);
	CHECK(o.start == 65536 && o.end == EOFR && (o.flags & ILOCK_OPF_EXTENDING));
	/* truncate: from the lower of the new size (pos) and the old onwards */
	o = op_at(ILOCK_OP_TRUNCATE, 0, 12345, 0, 1 << 20);
	CHECK(o.start == 12345 && o.end == EOFR);
	o = op_at(ILOCK_OP_TRUNCATE, 0, 16 << 20, 0, 8 << 20);  /* growing */
	CHECK(o.start == 8 << 20 && o.end == EOFR);
	o = op_at(ILOCK_OP_TRUNCATE, 0, 12345, 0, EOFR);  /* old size unknown: all */
	CHECK(o.start == 0 && o.end == EOFR);
	/* setattr and fsync are whole-file */
	o = op_at(ILOCK_OP_SETATTR, 0, 0, 0, EOFR);
	CHECK(o.start == 0 && o.end == EOFR);
	o = op_at(ILOCK_OP_FSYNC, 0, 0, 0, EOFR);
	CHECK(o.start == 0 && o.end == EOFR);
	/* fallocate: its range, or onwards when it grows the file */
	o = op_at(ILOCK_OP_FALLOCATE, 0, 0, 4096, 1 << 20);
	CHECK(o.start == 0 && o.end == 4096);
	o = op_at(ILOCK_OP_FALLOCATE, 0, 1 << 20, 4096, 1 << 20);
	CHECK(o.start == 1 << 20 && o.end == EOFR && (o.flags & ILOCK_OPF_EXTENDING));
	o = op_at(ILOCK_OP_FALLOCATE, 0, 1 << 20, 4096, EOFR);  /* keep-size: no size given */
	CHECK(o.start == 1 << 20 && o.end == (1 << 20) + 4096);
	o = op_at(ILOCK_OP_PUNCH_HOLE, 0, 4096, 4096, 8192);
	CHECK(o.start == 4096 && o.end == 8192);
	o = op_at(ILOCK_OP_SHIFT_RANGE, 0, 4096, 4096, 1 << 20);
	CHECK(o.start == 4096 && o.end == EOFR);
	o = op_at(ILOCK_OP_FDATASYNC, 0, 0, 0, 1 << 20);
	CHECK(o.start == 0 && o.end == EOFR);
	/* sync_file_range: its range, to EOF when nbytes is 0 */
	o = op_at(ILOCK_OP_SYNC_FILE_RANGE, 0, 4096, 0, 1 << 20);
	CHECK(o.start == 4096 && o.end == EOFR && (o.flags & ILOCK_OPF_RANGE));
	o = op_at(ILOCK_OP_SYNC_FILE_RANGE, 0, 4096, 8192, 1 << 20);
	CHECK(o.start == 4096 && o.end == 12288);
	CHECK_STR(op_name(ILOCK_OP_SYNC_FILE_RANGE), "sync-file-range");
	CHECK(!ilock_op_is_namespace(ILOCK_OP_SYNC_FILE_RANGE));
	/* overflow clamps rather than wraps */
	o = op_at(ILOCK_OP_DIRECT_READ, 0, EOFR - 10, 100, EOFR);
	CHECK(o.start == EOFR - 10 && o.end == EOFR);
	/* no range at all */
	o = op_at(ILOCK_OP_OTHER, 0, 0, 4096, 1 << 20);
	CHECK(!(o.flags & ILOCK_OPF_RANGE));
	o = op_at(ILOCK_OP_JOURNAL_COMMIT, 0, 0, 0, 0);
	CHECK(!(o.flags & ILOCK_OPF_RANGE));
	o = op_at(ILOCK_OP_UNKNOWN, 0, 0, 0, 0);
	CHECK(!(o.flags & ILOCK_OPF_RANGE));
}

static void test_range_class(void)
{
	struct ilock_op_info w = op_at(ILOCK_OP_BUFFERED_READ, 0, 8 << 20, 1 << 20, 16 << 20);
	struct ilock_op_info h = op_at(ILOCK_OP_BUFFERED_WRITE, 0, 0, 1 << 20, 16 << 20);
	struct ilock_op_info none = { 0 };
	struct ilock_op_info t = op_at(ILOCK_OP_TRUNCATE, 0, 0, 0, 16 << 20);
	struct ilock_op_info p, x;

	CHECK_EQ_U(ilock_range_class(&h, &w), ILOCK_RANGE_DISJOINT);
	CHECK_EQ_U(ilock_range_class(&w, &h), ILOCK_RANGE_DISJOINT);
	CHECK_EQ_U(ilock_range_class(&t, &w), ILOCK_RANGE_OVERLAP);
	/* a truncate to 8M (from 16M) and a reader below it: disjoint, above it: overlap */
	t = op_at(ILOCK_OP_TRUNCATE, 0, 8 << 20, 0, 16 << 20);
	x = op_at(ILOCK_OP_BUFFERED_READ, 0, 0, 4 << 20, 16 << 20);
	CHECK_EQ_U(ilock_range_class(&t, &x), ILOCK_RANGE_DISJOINT);
	CHECK_EQ_U(ilock_range_class(&t, &w), ILOCK_RANGE_OVERLAP);
	/* a writer below it, either side, overlaps: the truncate's writeback may cover it */
	p = op_at(ILOCK_OP_BUFFERED_WRITE, 0, 0, 4096, 16 << 20);
	CHECK_EQ_U(ilock_range_class(&t, &p), ILOCK_RANGE_OVERLAP);
	CHECK_EQ_U(ilock_range_class(&p, &t), ILOCK_RANGE_OVERLAP);
	CHECK_EQ_U(ilock_range_class(&x, &t), ILOCK_RANGE_DISJOINT);
	/* a reader behind readers waits for something else: its ranges say nothing */
	CHECK_EQ_U(ilock_pair_range(&x, &x, ILOCK_MODE_READERS, ILOCK_MODE_SHARED),
		   ILOCK_RANGE_NO_HOLDER);
	CHECK_EQ_U(ilock_pair_range(&x, &x, ILOCK_MODE_QUEUED_SHARED, ILOCK_MODE_SHARED),
		   ILOCK_RANGE_NO_HOLDER);
	CHECK_EQ_U(ilock_pair_range(&x, &x, ILOCK_MODE_EXCL, ILOCK_MODE_SHARED), ILOCK_RANGE_OVERLAP);
	CHECK_EQ_U(ilock_pair_range(&x, &x, ILOCK_MODE_READERS, ILOCK_MODE_EXCL), ILOCK_RANGE_OVERLAP);
	CHECK_EQ_U(ilock_pair_range(&x, &x, ILOCK_MODE_QUEUED_EXCL, ILOCK_MODE_SHARED),
		   ILOCK_RANGE_OVERLAP);
	w = op_at(ILOCK_OP_BUFFERED_READ, 0, 4096, 4096, 16 << 20);
	CHECK_EQ_U(ilock_range_class(&h, &w), ILOCK_RANGE_OVERLAP);
	/* touching ends do not overlap: [0, 1M) and [1M, 2M) */
	w = op_at(ILOCK_OP_BUFFERED_READ, 0, 1 << 20, 1 << 20, 16 << 20);
	CHECK_EQ_U(ilock_range_class(&h, &w), ILOCK_RANGE_DISJOINT);
	/* a missing side is named */
	CHECK_EQ_U(ilock_range_class(&none, &w), ILOCK_RANGE_NO_HOLDER);
	CHECK_EQ_U(ilock_range_class(&h, &none), ILOCK_RANGE_NO_WAITER);
	CHECK_EQ_U(ilock_range_class(&none, &none), ILOCK_RANGE_NO_BOTH);
	/* a partial range proves overlap but never disjointness */
	p = op_at(ILOCK_OP_BUFFERED_WRITE, ILOCK_OPF_PARTIAL, 4096, 4096, 16 << 20);
	x = op_at(ILOCK_OP_BUFFERED_READ, 0, 6000, 100, 16 << 20);
	CHECK_EQ_U(ilock_range_class(&p, &x), ILOCK_RANGE_OVERLAP);
	x = op_at(ILOCK_OP_BUFFERED_READ, 0, 8 << 20, 100, 16 << 20);
	CHECK_EQ_U(ilock_range_class(&p, &x), ILOCK_RANGE_NO_HOLDER);
	CHECK_EQ_U(ilock_range_class(&x, &p), ILOCK_RANGE_NO_WAITER);
	/* zero is "both unknown": keys built without ranges say so */
	CHECK_EQ_U(ILOCK_RANGE_NO_BOTH, 0);
}

static void test_names(void)
{
	char b[96];
	uint8_t op;

	CHECK_STR(op_name(ILOCK_OP_BUFFERED_READ), "buffered-read");
	CHECK_STR(op_name(ILOCK_OP_MAX), "?");
	for (uint8_t i = 0; i < ILOCK_OP_MAX; i++)
		CHECK(op_from_name(op_name(i), &op) && op == i);
	CHECK(!op_from_name("nope", &op));
	CHECK_STR(op_label(b, sizeof(b), ILOCK_OP_DIRECT_WRITE, ILOCK_OPF_UNALIGNED),
		  "direct-write(unaligned)");
	CHECK_STR(op_label(b, sizeof(b), ILOCK_OP_DIRECT_WRITE,
			   ILOCK_OPF_UNALIGNED | ILOCK_OPF_EXTENDING | ILOCK_OPF_EXCL_LOCK),
		  "direct-write(unaligned,extending,exclusive)");
	CHECK_STR(op_label(b, sizeof(b), ILOCK_OP_BUFFERED_WRITE,
			   ILOCK_OPF_APPEND | ILOCK_OPF_EXTENDING), "buffered-write(append)");
	CHECK_STR(op_label(b, sizeof(b), ILOCK_OP_TRUNCATE, 0), "truncate");
	CHECK_STR(op_label(b, 8, ILOCK_OP_DIRECT_WRITE, ILOCK_OPF_UNALIGNED), "direct-");
	CHECK_STR(range_name(ILOCK_RANGE_NO_HOLDER), "holder");
	CHECK_STR(range_group_name(ILOCK_RANGE_NO_WAITER), "unknown");
	CHECK_STR(mode_short(ILOCK_MODE_EXCL), "EXCL");
	CHECK_STR(role_side(b, sizeof(b), "fio", ILOCK_MODE_EXCL, ILOCK_OP_BUFFERED_WRITE,
			    ILOCK_OPF_APPEND, true), "fio buffered-write(append) EXCL");
	CHECK_STR(role_side(b, sizeof(b), "fio", ILOCK_MODE_READERS, ILOCK_OP_BUFFERED_READ, 0, false),
		  "fio READERS");
	/* a 16-byte comm has no NUL of its own */
	CHECK_STR(role_side(b, sizeof(b), "0123456789abcdefXX", ILOCK_MODE_SHARED, 0, 0, false),
		  "0123456789abcdef SHARED");
	CHECK_STR(role_side(b, sizeof(b), "", ILOCK_MODE_SHARED, 0, 0, false), "? SHARED");
	CHECK_STR(role_side(b, sizeof(b), "fio", ILOCK_MODE_UNKNOWN, 0, 0, true), "(no owner)");
	CHECK_STR(role_side(b, sizeof(b), "", ILOCK_MODE_READERS, 0, 0, true), "(readers)");
}

/* ---- a snapshot with ops, ranges, stacks and direct writes ---- */

#define DEV ILOCK_KDEV(7, 0)

static struct ilock_edge_key edge(uint32_t hpid, uint8_t hop, uint8_t hflags, uint32_t wpid,
				  uint8_t wop, uint8_t range)
{
	struct ilock_edge_key k = { .ino = 131, .dev = DEV, .class = ILOCK_CLASS_I_RWSEM,
				    .holder_mode = ILOCK_MODE_EXCL, .waiter_mode = ILOCK_MODE_SHARED,
				    .holder_pid = hpid, .holder_tgid = hpid, .waiter_pid = wpid,
				    .waiter_tgid = 4250, .holder_op = hop, .waiter_op = wop,
				    .holder_op_flags = hflags, .range = range };

	memcpy(k.holder_comm, "fio", 4);
	memcpy(k.waiter_comm, "fio", 4);
	return k;
}

static void add_edge(struct snapshot *s, struct ilock_edge_key k, uint64_t n, uint64_t ns)
{
	struct ilock_edge_stats st = { n, ns, ns / n };

	CHECK(snap_add_edge(s, &k, &st) == 0);
}

/* render_ops_text() with the pairs render_text gives it */
static void ops_text(FILE *f, const struct snapshot *s, const struct report_meta *m,
		     const struct render_opts *o)
{
	struct pair_row *p;
	long np = snap_pairs(s, &p, PAIRS_THREADS | PAIRS_OPS);

	render_ops_text(f, s, m, o, p, np);
	free(p);
}

/* stat's text or JSON of s, malloc'ed */
static char *rendered(const struct snapshot *s, const struct report_meta *m,
		      const struct render_opts *o, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (json)
		render_json(f, s, m, o);
	else
		render_text(f, s, m, o);
	fclose(f);
	return buf;
}

/* PostgreSQL's processes, all "postgres", apart by their titles' roles. */
static void test_title_roles(void)
{
	/* holder -> waiter: the checkpointer twice, the background writer, one untitled */
	static const uint32_t holder[] = { 10, 10, 11, 12 }, waiter[] = { 20, 21, 22, 23 };
	static const uint64_t waits[] = { 10, 5, 3, 2 };
	struct report_meta m = { .duration_s = 1.0 };
	struct render_opts o = { .top_n = 10 };
	struct titles ti;
	struct pair_row *p;
	struct snapshot s;
	char *buf;
	long n;

	titles_init(&ti);
	CHECK(!titles_put(&ti, 10, "postgres", "postgres: checkpointer"));
	CHECK(!titles_put(&ti, 11, "postgres", "postgres: background writer"));
	CHECK(!titles_put(&ti, 20, "postgres", "postgres: bob shop [local] UPDATE"));
	CHECK(!titles_put(&ti, 21, "postgres", "postgres: bob shop 10.1.2.3(51234) idle"));
	CHECK(!titles_put(&ti, 22, "postgres", "postgres: bob shop [local] idle in transaction"));
	/* 12 and 23 have none: they stay "postgres" */
	snap_init(&s);
	for (size_t i = 0; i < sizeof(holder) / sizeof(holder[0]); i++) {
		struct ilock_edge_key k = edge(holder[i], ILOCK_OP_BUFFERED_WRITE, 0, waiter[i],
					       ILOCK_OP_BUFFERED_READ, ILOCK_RANGE_DISJOINT);

		memcpy(k.holder_comm, "postgres", 9);
		memcpy(k.waiter_comm, "postgres", 9);
		add_edge(&s, k, waits[i], waits[i] * 10000000);
	}

	/* by comm alone, one role of 3 holders and 4 waiters */
	n = snap_pairs(&s, &p, PAIRS_OPS);
	CHECK_EQ_U(n, 1);
	CHECK(n == 1 && p[0].holders == 3 && p[0].waiters == 4 && !p[0].holder_role);
	free(p);
	/* by title: the checkpointer's two backends are one row, of one user and database */
	n = snap_pairs_titled(&s, &p, PAIRS_OPS, &ti);
	CHECK_EQ_U(n, 3);
	if (n == 3) {
		CHECK_STR(p[0].holder_role, "postgres: checkpointer");
		CHECK_STR(p[0].waiter_role, "postgres: bob shop");
		CHECK(p[0].holders == 1 && p[0].waiters == 2 && p[0].s.count == 15);
		CHECK_STR(p[1].holder_role, "postgres: background writer");
		CHECK(!p[2].holder_role && !p[2].waiter_role && p[2].s.count == 2);
	}
	/* by thread nothing changes: threads have pids, and titles in their own key */
	free(p);
	n = snap_pairs_titled(&s, &p, PAIRS_THREADS | PAIRS_OPS, &ti);
	CHECK(n == 4 && !p[0].holder_role && !p[0].waiter_role);
	free(p);

	/* the table by command, IN SHORT and JSON name them so */
	m.titles = &ti;
	snap_lock(&s, DEV, 131, 0, ILOCK_CLASS_I_RWSEM)->wait[ILOCK_MODE_SHARED] =
		(struct ilock_stats){ .count = 20, .total_ns = 200000000, .max_ns = 10000000 };
	buf = rendered(&s, &m, &o, false);
	CHECK(strstr(buf, "  the largest share there: postgres: checkpointer buffered-write EXCL -> "
			  "postgres: bob shop buffered-read SHARED, 75% (1 -> 2 threads)\n") != NULL);
	CHECK(strstr(buf, "\n  postgres: checkpointer buffered-write EXCL      ->  postgres: bob "
			  "shop buffered-read SHARED        15 waits") != NULL);
	CHECK(strstr(buf, "\n  postgres buffered-write EXCL                    ->  postgres "
			  "buffered-read SHARED                   2 waits") != NULL);
	free(buf);
	buf = rendered(&s, &m, &o, true);
	CHECK(strstr(buf, "\"holder\":{\"comm\":\"postgres\",\"role\":\"postgres: checkpointer\","
			  "\"mode\":\"exclusive\"") != NULL);
	CHECK(strstr(buf, "\"holder\":{\"pid\":10,\"tgid\":10,\"comm\":\"postgres\",\"title\":"
			  "\"postgres: checkpointer\",") != NULL);
	free(buf);
	snap_free(&s);
	titles_free(&ti);
}

/* n waits of ns in all to the range class `range` of 131's i_rwsem row */
static void add_range(struct snapshot *s, uint8_t range, uint64_t n, uint64_t ns)
{
	struct lock_row *r = snap_lock(s, DEV, 131, 0, ILOCK_CLASS_I_RWSEM);

	CHECK(r != NULL);
	if (r) {
		r->range[range].waits += n;
		r->range[range].wait_ns += ns;
	}
}

static void add_stack(struct snapshot *s, struct ilock_edge_key e, uint8_t kind, uint64_t id,
		      uint64_t n, uint64_t ns)
{
	struct ilock_stack_key k = { .edge = e, .stack = id, .kind = kind };
	struct ilock_stack_stats st = { n, ns };

	CHECK(snap_add_stack(s, &k, &st) == 0);
}

static void add_frames(struct snapshot *s, uint8_t kind, uint64_t id, const uint64_t *ips,
		       uint32_t n)
{
	struct ilock_stack_frames f = { .nr = n };

	memcpy(f.ip, ips, n * sizeof(*ips));
	CHECK(snap_add_frames(s, kind, id, &f) == 0);
}

/* Fake kernel text: 0x1000 steps, one function each, plus tracing frames. */
static const char kallsyms[] =
	"0000000000000000 T zero_is_skipped\n"
	"ffffffff81001000 T bpf_prog_1234_contention_begin_btf\n"
	"ffffffff81002000 t bpf_trace_run2\n"
	"ffffffff81003000 T rwsem_down_read_slowpath\n"
	"ffffffff81004000 T down_read\n"
	"ffffffff81005000 T xfs_ilock\n"
	"ffffffff81006000 T xfs_file_buffered_read\n"
	"ffffffff81007000 T vfs_read\n"
	"ffffffff81008000 T entry_SYSCALL_64_after_hwframe\n"
	"ffffffff81009000 T handle_userfault\n"
	"ffffffff8100a000 T iomap_file_buffered_write\n"
	"ffffffff8100b000 D not_text\n"
	"ffffffffc0001000 t xfs_mod_func\t[xfs]\n"
	"garbage line\n";

static const uint64_t waiter_ips[] = { 0xffffffff81001010, 0xffffffff81002020, 0xffffffff81003030,
				       0xffffffff81004040, 0xffffffff81005050, 0xffffffff81006060,
				       0xffffffff81007070, 0xffffffff81008080 };
static const uint64_t holder_ips[] = { 0xffffffff81009090, 0xffffffff8100a0a0,
				       0xffffffff81007070, 0xffffffff81008080 };

static void build(struct snapshot *s)
{
	struct ilock_key wk = { .ino = 131, .dev = DEV, .class = ILOCK_CLASS_I_RWSEM,
				.mode = ILOCK_MODE_SHARED };
	struct ilock_stats ws = { .count = 130, .total_ns = 900000000, .max_ns = 20000000 };
	struct inode_meta m = { .ino = 131, .dev = DEV, .magic = ILOCK_XFS_SB_MAGIC };
	struct ilock_edge_key a = edge(4257, ILOCK_OP_BUFFERED_WRITE, 0, 4254,
				       ILOCK_OP_BUFFERED_READ, ILOCK_RANGE_DISJOINT);
	struct ilock_edge_key b = a;
	struct ilock_edge_key c = edge(4258, ILOCK_OP_OTHER, 0, 4255, ILOCK_OP_BUFFERED_READ,
				       ILOCK_RANGE_NO_HOLDER);
	struct ilock_dio_key d1 = { .ino = 131, .dev = DEV, .flags = ILOCK_OPF_EXCL_LOCK |
								     ILOCK_OPF_UNALIGNED };
	struct ilock_dio_key d2 = { .ino = 131, .dev = DEV, .flags = 0 };

	snap_init(s);
	strcpy(m.path, "/db.dat");
	snap_add_inode(s, &m);
	ws.hist[ilock_hist_slot(7000000)] = 130;
	snap_add_wait(s, &wk, &ws);
	b.range = ILOCK_RANGE_OVERLAP;
	add_edge(s, a, 97, 788000000);
	add_edge(s, b, 3, 24000000);
	add_edge(s, c, 30, 88000000);
	add_range(s, ILOCK_RANGE_DISJOINT, 97, 788000000);
	add_range(s, ILOCK_RANGE_OVERLAP, 3, 24000000);
	add_range(s, ILOCK_RANGE_NO_HOLDER, 30, 88000000);
	add_stack(s, a, ILOCK_STACK_WAITER, 7, 97, 788000000);
	add_stack(s, b, ILOCK_STACK_WAITER, 7, 3, 24000000);
	add_stack(s, c, ILOCK_STACK_WAITER, 7, 30, 88000000);
	add_stack(s, a, ILOCK_STACK_HOLDER, 0xabcdef, 2, 500000000);
	add_frames(s, ILOCK_STACK_WAITER, 7, waiter_ips, 8);
	add_frames(s, ILOCK_STACK_HOLDER, 0xabcdef, holder_ips, 4);
	CHECK(snap_add_dio(s, &d1, 300) == 0);
	CHECK(snap_add_dio(s, &d2, 12000) == 0);
	snap_sort_locks(s, SORT_WAIT_TIME);
	snap_sort_edges(s);
	snap_sort_stacks(s);
}

static void test_pairs(void)
{
	struct snapshot s;
	struct pair_row *p;
	long n;

	build(&s);
	n = snap_pairs(&s, &p, PAIRS_THREADS | PAIRS_OPS);
	CHECK_EQ_U(n, 2);
	/* the two range classes of one pair add up, largest pair first */
	CHECK_EQ_U(p[0].s.count, 100);
	CHECK_EQ_U(p[0].s.total_ns, 812000000);
	CHECK_EQ_U(p[0].range_waits[ILOCK_RANGE_DISJOINT], 97);
	CHECK_EQ_U(p[0].range_waits[ILOCK_RANGE_OVERLAP], 3);
	CHECK_EQ_U(p[0].k.range, 0);
	CHECK((int)(pair_headroom(&p[0]) * 1000) == 970);
	CHECK(pair_headroom(&p[1]) < 0);  /* only unknown ranges: nothing to say */
	CHECK(pair_has_edge(&p[0].k, &s.stacks[0].k.edge));
	{
		struct pair_stack top[4];
		size_t k = pair_stacks(&s, &p[0], ILOCK_STACK_WAITER, NULL, top, 4);

		/* one stack behind both range classes of the pair: added up */
		CHECK_EQ_U(k, 1);
		CHECK(top[0].id == 7 && top[0].count == 100 && top[0].total_ns == 812000000);
		CHECK_EQ_U(pair_stacks(&s, &p[0], ILOCK_STACK_HOLDER, NULL, top, 4), 1);
		CHECK_EQ_U(pair_stacks(&s, &p[1], ILOCK_STACK_HOLDER, NULL, top, 4), 0);
		CHECK_EQ_U(pair_stacks(&s, &p[0], ILOCK_STACK_WAITER, NULL, top, 0), 0);
	}
	{
		/*
		 * Another id whose frames differ only in return addresses within
		 * the same functions: one stack by name, two by address.
		 */
		struct ilock_edge_key a = s.stacks[0].k.edge;
		uint64_t other[8];
		struct pair_stack top[4];
		struct ksyms ks = {};

		for (int i = 0; i < 8; i++) {
			other[i] = waiter_ips[i] + 4;
			CHECK(!ksyms_add(&ks, waiter_ips[i] & ~0xfffULL, i == 3 ? "xfs_ilock" : "fn"));
		}
		add_stack(&s, a, ILOCK_STACK_WAITER, 8, 5, 1000000000);
		add_frames(&s, ILOCK_STACK_WAITER, 8, other, 8);
		CHECK_EQ_U(pair_stacks(&s, &p[0], ILOCK_STACK_WAITER, NULL, top, 4), 2);
		CHECK_EQ_U(pair_stacks(&s, &p[0], ILOCK_STACK_WAITER, &ks, top, 4), 1);
		/* summed, under the id of the first found */
		CHECK(top[0].count == 105 && top[0].total_ns == 1812000000);
		/* one frame in another function: two again */
		other[5] = 0xffffffff8100a0a0;
		add_frames(&s, ILOCK_STACK_WAITER, 8, other, 8);
		CHECK(!ksyms_add(&ks, 0xffffffff8100a000, "other_fn"));
		CHECK_EQ_U(pair_stacks(&s, &p[0], ILOCK_STACK_WAITER, &ks, top, 4), 2);
		/* a frame shorter: two */
		other[5] = waiter_ips[5] + 4;
		add_frames(&s, ILOCK_STACK_WAITER, 8, other, 7);
		CHECK_EQ_U(pair_stacks(&s, &p[0], ILOCK_STACK_WAITER, &ks, top, 4), 2);
		ksyms_free(&ks);
	}
	free(p);
	/* without ops, pairs of the same tasks merge whatever they did */
	n = snap_pairs(&s, &p, PAIRS_THREADS);
	CHECK_EQ_U(n, 2);
	CHECK_EQ_U(p[0].k.holder_op, 0);
	free(p);
	snap_free(&s);

	snap_init(&s);
	CHECK_EQ_U(snap_pairs(&s, &p, PAIRS_THREADS | PAIRS_OPS), 0);
	CHECK(p == NULL);
	snap_free(&s);
}

/*
 * Roles: pairs by command, op and mode. The threads of a command merge,
 * and are counted on each side; ops, modes, commands and inodes stay apart.
 */
static void test_roles(void)
{
	struct ilock_edge_key w1 = edge(100, ILOCK_OP_BUFFERED_WRITE, 0, 200, ILOCK_OP_BUFFERED_READ,
					ILOCK_RANGE_DISJOINT);
	struct ilock_edge_key w2 = edge(101, ILOCK_OP_BUFFERED_WRITE, 0, 201, ILOCK_OP_BUFFERED_READ,
					ILOCK_RANGE_OVERLAP);
	struct ilock_edge_key w3 = edge(101, ILOCK_OP_BUFFERED_WRITE, 0, 200, ILOCK_OP_BUFFERED_READ,
					ILOCK_RANGE_DISJOINT);
	struct ilock_edge_key w4 = edge(102, ILOCK_OP_BUFFERED_WRITE, 0, 202, ILOCK_OP_BUFFERED_READ,
					ILOCK_RANGE_DISJOINT);
	struct ilock_edge_key nobody = edge(0, 0, 0, 203, ILOCK_OP_BUFFERED_READ, ILOCK_RANGE_NO_HOLDER);
	struct ilock_edge_key xw = edge(100, ILOCK_OP_BUFFERED_WRITE, 0, 204, ILOCK_OP_BUFFERED_WRITE,
					ILOCK_RANGE_DISJOINT);
	struct ilock_edge_key other = w1, mysql = w1;
	struct pair_row *p;
	struct snapshot s;
	long n;

	nobody.holder_mode = ILOCK_MODE_UNKNOWN;
	nobody.holder_comm[0] = 0;
	xw.waiter_mode = ILOCK_MODE_EXCL;
	other.ino = 132;
	memcpy(mysql.waiter_comm, "mysqld", 7);
	w4.holder_op_flags = ILOCK_OPF_APPEND;
	snap_init(&s);
	add_edge(&s, w1, 10, 100000000);
	add_edge(&s, w2, 2, 30000000);
	add_edge(&s, w3, 5, 40000000);
	add_edge(&s, w4, 1, 1000000);
	add_edge(&s, nobody, 4, 2000000);
	add_edge(&s, nobody, 1, 1000000);   /* added to the same key */
	add_edge(&s, xw, 3, 9000000);
	add_edge(&s, other, 7, 7000000);
	add_edge(&s, mysql, 6, 6000000);
	n = snap_pairs(&s, &p, PAIRS_OPS);
	CHECK_EQ_U(n, 6);
	/* writers -> readers on 131: w1, w2, w3 as one role of 2 holders and 2 waiters */
	CHECK_EQ_U(p[0].s.count, 17);
	CHECK_EQ_U(p[0].s.total_ns, 170000000);
	CHECK_EQ_U(p[0].s.max_ns, 15000000);
	CHECK_EQ_U(p[0].holders, 2);
	CHECK_EQ_U(p[0].waiters, 2);
	CHECK_EQ_U(p[0].k.holder_pid + p[0].k.waiter_pid + p[0].k.holder_tgid + p[0].k.waiter_tgid, 0);
	CHECK_EQ_U(p[0].k.holder_op, ILOCK_OP_BUFFERED_WRITE);
	CHECK_EQ_U(p[0].range_waits[ILOCK_RANGE_DISJOINT], 15);
	CHECK_EQ_U(p[0].range_waits[ILOCK_RANGE_OVERLAP], 2);
	CHECK((int)(pair_headroom(&p[0]) * 100) == 82);
	/* the rest by wait time: other inode, other waiter command, another waiter mode */
	CHECK_EQ_U(p[1].s.count, 3);
	CHECK_EQ_U(p[1].k.waiter_mode, ILOCK_MODE_EXCL);
	CHECK_EQ_U(p[2].k.ino, 132);
	CHECK_STR(p[3].k.waiter_comm, "mysqld");
	/* an unknown holder is no thread */
	CHECK_EQ_U(p[4].k.holder_mode, ILOCK_MODE_UNKNOWN);
	CHECK_EQ_U(p[4].s.count, 5);
	CHECK_EQ_U(p[4].holders, 0);
	CHECK_EQ_U(p[4].waiters, 1);
	/* an appending write is another op label, so another role */
	CHECK_EQ_U(p[5].k.holder_op_flags, ILOCK_OPF_APPEND);
	CHECK_EQ_U(p[5].holders, 1);
	free(p);

	/* by thread, each pair is its own row of one thread a side */
	n = snap_pairs(&s, &p, PAIRS_THREADS | PAIRS_OPS);
	CHECK_EQ_U(n, 8);
	for (long i = 0; i < n; i++)
		CHECK(p[i].waiters == 1 && p[i].holders == (p[i].k.holder_pid != 0));
	free(p);
	/* by command without ops: the appending writer joins the writers */
	n = snap_pairs(&s, &p, 0);
	CHECK_EQ_U(n, 5);
	CHECK_EQ_U(p[0].s.count, 18);
	CHECK_EQ_U(p[0].holders, 3);
	CHECK_EQ_U(p[0].waiters, 3);
	free(p);

	/* the text section and the JSON array, top rows only in text */
	{
		struct report_meta m = { .duration_s = 1.0 };
		struct render_opts o = { .top_n = 10 };
		char *buf = NULL;
		size_t len = 0;
		long nroles = snap_pairs(&s, &p, PAIRS_OPS);
		FILE *f = open_memstream(&buf, &len);

		render_roles_text(f, &s, &m, p, nroles, 2);
		fclose(f);
		check_golden("roles.txt", buf);
		CHECK(strstr(buf, "fio buffered-write EXCL              ->  fio buffered-read SHARED"
				  "                    17 waits    170 ms  max   15.0 ms    2 -> 2   threads"
				  "  (disjoint 82%)") != NULL);
		CHECK(strstr(buf, "... 4 more (use --json for all)") != NULL);
		free(buf);

		f = open_memstream(&buf, &len);
		render_roles_text(f, &s, &m, p, nroles, 10);
		fclose(f);
		CHECK(strstr(buf, "(no owner)                           ->  fio buffered-read SHARED") != NULL);
		CHECK(strstr(buf, "fio buffered-write(append) EXCL") != NULL);
		CHECK(strstr(buf, "more (use") == NULL);
		free(buf);
		free(p);

		/*
		 * A side wider than 36 columns (a long command, an extending
		 * write, a queued writer): every row's arrow stays in one column.
		 */
		{
			struct ilock_edge_key wide = w1;

			memcpy(wide.holder_comm, "postgres-writer", 16);
			wide.holder_mode = ILOCK_MODE_QUEUED_EXCL;
			wide.holder_op_flags = ILOCK_OPF_EXTENDING;
			add_edge(&s, wide, 1, 500000);
			nroles = snap_pairs(&s, &p, PAIRS_OPS);
			f = open_memstream(&buf, &len);
			render_roles_text(f, &s, &m, p, nroles, 10);
			fclose(f);
			CHECK(strstr(buf, "postgres-writer buffered-write(extending) NEXT-EXCL ->  fio "
					  "buffered-read SHARED") != NULL);
			CHECK(arrows_column(strstr(buf, "WHO SERIALISES"), " ->  ") > 36);
			free(buf);
			free(p);
		}

		f = open_memstream(&buf, &len);
		render_json(f, &s, &m, &o);
		fclose(f);
		CHECK(strstr(buf, "\"roles\":[{\"dev\":\"7:0\",\"ino\":131,\"gen\":0,\"class\":\"i_rwsem\","
				  "\"holder\":{\"comm\":\"fio\",\"role\":null,\"mode\":\"exclusive\","
				  "\"op\":\"buffered-write\",\"op_flags\":[]},\"waiter\":{\"comm\":\"fio\","
				  "\"role\":null,\"mode\":\"shared\",\"op\":\"buffered-read\",\"op_flags\":[]},"
				  "\"holder_threads\":2,\"waiter_threads\":2,\"threads_folded\":false,"
				  "\"waits\":17,") != NULL);
		free(buf);
	}
	snap_free(&s);
}

/*
 * io_uring's workers are named after the thread they serve ("iou-wrk-<tid>"):
 * by command they are one role, or every run (and every submitter) would
 * be a new one; by thread they keep their names.
 */
static void test_pool_roles(void)
{
	struct ilock_edge_key a = edge(300, ILOCK_OP_BUFFERED_WRITE, 0, 200, ILOCK_OP_BUFFERED_READ,
				       ILOCK_RANGE_DISJOINT);
	struct ilock_edge_key b = edge(301, ILOCK_OP_BUFFERED_WRITE, 0, 201, ILOCK_OP_BUFFERED_READ,
				       ILOCK_RANGE_DISJOINT);
	struct pair_row *p;
	struct snapshot s;
	long n;

	memcpy(a.holder_comm, "iou-wrk-11255", 14);
	memcpy(b.holder_comm, "iou-wrk-11374", 14);
	snap_init(&s);
	add_edge(&s, a, 3, 3000000);
	add_edge(&s, b, 2, 2000000);
	n = snap_pairs(&s, &p, PAIRS_OPS);
	CHECK_EQ_U(n, 1);
	if (n == 1) {
		CHECK_STR(p[0].k.holder_comm, "iou-wrk");
		CHECK_EQ_U(p[0].s.count, 5);
		CHECK_EQ_U(p[0].holders, 2);
	}
	free(p);
	n = snap_pairs(&s, &p, PAIRS_THREADS | PAIRS_OPS);
	CHECK_EQ_U(n, 2);
	if (n == 2)
		CHECK(!strcmp(p[0].k.holder_comm, "iou-wrk-11255") &&
		      !strcmp(p[1].k.holder_comm, "iou-wrk-11374"));
	free(p);
	snap_free(&s);

	/* readers none named (the kernel cleared the hint): "(readers)", as by command */
	{
		struct ilock_edge_key r = edge(0, 0, 0, 200, ILOCK_OP_BUFFERED_WRITE,
					       ILOCK_RANGE_NO_HOLDER);
		struct report_meta m = { .duration_s = 1.0 };
		struct render_opts o = { .top_n = 10 };
		char *buf = NULL;
		size_t len = 0;
		FILE *f;

		r.holder_mode = ILOCK_MODE_READERS;
		r.waiter_mode = ILOCK_MODE_EXCL;
		r.holder_comm[0] = 0;
		snap_init(&s);
		add_edge(&s, r, 4, 4000000);
		f = open_memstream(&buf, &len);
		ops_text(f, &s, &m, &o);
		fclose(f);
		CHECK(strstr(buf, "\n  (readers)                                  ->  fio[200] "
				  "buffered-write EXCL") != NULL);
		CHECK(strstr(buf, "? unknown READERS") == NULL);
		free(buf);
		snap_free(&s);
	}
}

static void test_model(void)
{
	struct snapshot a, b, d, m;
	const struct lock_row *r;
	const struct ilock_stack_frames *f;

	build(&a);
	build(&b);
	/* b is a later read: more of everything */
	add_range(&b, ILOCK_RANGE_DISJOINT, 3, 12000000);
	add_stack(&b, b.stacks[0].k.edge, ILOCK_STACK_WAITER, 7, 3, 12000000);
	snap_add_dio(&b, &b.dios[0].k, 5);
	snap_init(&d);
	CHECK(snap_delta(&d, &b, &a) == 0);
	r = snap_find_lock(&d, DEV, 131, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ_U(r->range[ILOCK_RANGE_DISJOINT].waits, 3);
		CHECK_EQ_U(r->range[ILOCK_RANGE_DISJOINT].wait_ns, 12000000);
		CHECK_EQ_U(r->range[ILOCK_RANGE_OVERLAP].waits, 0);
		CHECK_EQ_U(row_range_waits(r), 3);
		CHECK(row_headroom(r) == 1.0);
	}
	CHECK_EQ_U(d.nstacks, 1);
	CHECK_EQ_U(d.stacks[0].s.count, 3);
	CHECK_EQ_U(d.ndios, 1);
	CHECK_EQ_U(d.dios[0].count, 5);
	/* frames come along with every delta */
	CHECK_EQ_U(d.nframes, 2);
	f = snap_find_frames(&d, ILOCK_STACK_HOLDER, 0xabcdef);
	CHECK(f && f->nr == 4 && f->ip[0] == holder_ips[0]);
	CHECK(snap_find_frames(&d, ILOCK_STACK_WAITER, 0xabcdef) == NULL);
	/* merge adds up; copy is a deep copy */
	snap_init(&m);
	CHECK(snap_copy(&m, &a) == 0);
	CHECK(snap_merge(&m, &d) == 0);
	r = snap_find_lock(&m, DEV, 131, 0, ILOCK_CLASS_I_RWSEM);
	CHECK(r && r->range[ILOCK_RANGE_DISJOINT].waits == 100);
	CHECK_EQ_U(m.nstacks, a.nstacks);
	CHECK_EQ_U(m.ndios, 2);
	{
		/* the range classes of the edges, added to their lock rows */
		struct snapshot e;
		struct ilock_edge_key j = edge(1, ILOCK_OP_FSYNC, 0, 2, ILOCK_OP_FSYNC, 0);

		snap_init(&e);
		add_edge(&e, edge(1, 0, 0, 2, 0, ILOCK_RANGE_DISJOINT), 4, 40);
		add_edge(&e, edge(3, 0, 0, 2, 0, ILOCK_RANGE_DISJOINT), 1, 10);
		add_edge(&e, edge(1, 0, 0, 2, 0, ILOCK_RANGE_NO_WAITER), 2, 20);
		j.class = ILOCK_CLASS_JBD2_WAIT;
		add_edge(&e, j, 5, 50);
		/* disjoint bytes behind the XFS ILOCK, which guards none of them */
		j = edge(1, 0, 0, 2, 0, ILOCK_RANGE_DISJOINT);
		j.class = ILOCK_CLASS_XFS_ILOCK;
		add_edge(&e, j, 6, 60);
		CHECK(snap_ranges_from_edges(&e) == 0);
		r = snap_find_lock(&e, DEV, 131, 0, ILOCK_CLASS_I_RWSEM);
		CHECK(r && r->range[ILOCK_RANGE_DISJOINT].waits == 5 &&
		      r->range[ILOCK_RANGE_DISJOINT].wait_ns == 50 &&
		      r->range[ILOCK_RANGE_NO_WAITER].waits == 2 && row_range_waits(r) == 7);
		/* the journal has no byte ranges: no row for it */
		CHECK(snap_find_lock(&e, DEV, 131, 0, ILOCK_CLASS_JBD2_WAIT) == NULL);
		CHECK(snap_find_lock(&e, DEV, 131, 0, ILOCK_CLASS_XFS_ILOCK) == NULL);
		/* nor any headroom on its pairs, the i_rwsem's still */
		for (size_t i = 0; i < e.nedges; i++) {
			struct pair_row p = { .k = e.edges[i].k };

			p.range_waits[e.edges[i].k.range] = e.edges[i].s.count;
			p.range_ns[e.edges[i].k.range] = e.edges[i].s.total_ns;
			if (e.edges[i].k.range == ILOCK_RANGE_DISJOINT)
				CHECK(p.k.class == ILOCK_CLASS_I_RWSEM ? pair_headroom(&p) == 1.0
								       : pair_headroom(&p) < 0);
		}
		CHECK(class_has_ranges(ILOCK_CLASS_I_RWSEM) && class_has_ranges(ILOCK_CLASS_INVALIDATE));
		snap_free(&e);
		/* a bad class or range class is refused, not stored */
		snap_init(&e);
		j = edge(1, 0, 0, 2, 0, ILOCK_RANGE_MAX);
		add_edge(&e, j, 7, 70);
		j = edge(1, 0, 0, 2, 0, ILOCK_RANGE_DISJOINT);
		j.class = ILOCK_CLASS_MAX;
		add_edge(&e, j, 8, 80);
		CHECK(snap_ranges_from_edges(&e) == 0);
		CHECK_EQ_U(e.nlocks, 0);
		snap_free(&e);
	}
	/* reset empties the tables, and they fill again */
	snap_reset(&m);
	CHECK(m.nstacks == 0 && m.nframes == 0 && m.ndios == 0);
	CHECK(snap_find_frames(&m, ILOCK_STACK_HOLDER, 0xabcdef) == NULL);
	CHECK(snap_merge(&m, &a) == 0 && m.nframes == 2);
	/* many stacks: the index grows */
	for (uint64_t i = 0; i < 5000; i++)
		add_stack(&m, m.stacks[0].k.edge, ILOCK_STACK_WAITER, 1000 + i, 1, i);
	CHECK_EQ_U(m.nstacks, a.nstacks + 5000);
	snap_sort_stacks(&m);
	CHECK(m.stacks[0].s.total_ns >= m.stacks[1].s.total_ns);
	add_stack(&m, m.stacks[0].k.edge, m.stacks[0].k.kind, m.stacks[0].k.stack, 1, 1);
	CHECK_EQ_U(m.nstacks, a.nstacks + 5000);  /* found again after the sort */
	snap_free(&a);
	snap_free(&b);
	snap_free(&d);
	snap_free(&m);
}

/* The waiter stack a pair's slot keeps (struct ilock_edge_wstack) becomes a stack row. */
static void test_edge_wstack(void)
{
	struct ilock_edge_slot slot;
	struct snapshot s;
	struct ilock_edge_key e = edge(4257, ILOCK_OP_BUFFERED_WRITE, 0, 4254,
				       ILOCK_OP_BUFFERED_READ, ILOCK_RANGE_DISJOINT);

	snap_init(&s);
	memset(&slot, 0, sizeof(slot));
	slot.k = e;
	slot.s.count = 5;
	/* nothing counted yet, or claimed with no count: no row */
	CHECK(snap_add_edge_wstack(&s, &slot.k, &slot.s) == 0);
	slot.w.stack1 = 8;
	CHECK(snap_add_edge_wstack(&s, &slot.k, &slot.s) == 0);
	CHECK_EQ_U(s.nstacks, 0);
	/* a count without a stack is never written; still no row */
	slot.w.stack1 = 0;
	slot.w.count = 3;
	CHECK(snap_add_edge_wstack(&s, &slot.k, &slot.s) == 0);
	CHECK_EQ_U(s.nstacks, 0);
	/* stack map id 7, stored as 8; id 0 is a real id, stored as 1 */
	slot.w.stack1 = 8;
	slot.w.total_ns = 3000;
	CHECK(snap_add_edge_wstack(&s, &slot.k, &slot.s) == 0);
	CHECK_EQ_U(s.nstacks, 1);
	CHECK(memcmp(&s.stacks[0].k.edge, &e, sizeof(e)) == 0);
	CHECK_EQ_U(s.stacks[0].k.stack, 7);
	CHECK_EQ_U(s.stacks[0].k.kind, ILOCK_STACK_WAITER);
	CHECK_EQ_U(s.stacks[0].s.count, 3);
	CHECK_EQ_U(s.stacks[0].s.total_ns, 3000);
	/* a stack_waits row with the same key adds up with it */
	add_stack(&s, e, ILOCK_STACK_WAITER, 7, 2, 500);
	CHECK_EQ_U(s.nstacks, 1);
	CHECK_EQ_U(s.stacks[0].s.count, 5);
	slot.w.stack1 = 1;
	CHECK(snap_add_edge_wstack(&s, &slot.k, &slot.s) == 0);
	CHECK_EQ_U(s.nstacks, 2);
	CHECK_EQ_U(s.stacks[1].k.stack, 0);
	snap_free(&s);
}

static void test_ksyms(void)
{
	struct ksyms k = { 0 };
	FILE *f = fmemopen((void *)kallsyms, sizeof(kallsyms) - 1, "r");
	uint64_t off = 0;

	CHECK(ksyms_parse(&k, f) == 0);
	fclose(f);
	CHECK_EQ_U(k.n, 11);  /* text only, zero address and data left out */
	CHECK_STR(ksyms_find(&k, 0xffffffff81003000, &off), "rwsem_down_read_slowpath");
	CHECK_EQ_U(off, 0);
	CHECK_STR(ksyms_find(&k, 0xffffffff81004fff, &off), "down_read");
	CHECK_EQ_U(off, 0xfff);
	CHECK_STR(ksyms_find(&k, 0xffffffffc0001234, NULL), "xfs_mod_func");
	CHECK(ksyms_find(&k, 0xffffffff80000000, NULL) == NULL);  /* below the first */
	CHECK(ksyms_find(&k, 0xffffffffc0001000 + (2 << 20), NULL) == NULL);  /* too far */
	CHECK(ksyms_is_tracing("bpf_prog_1234_x") && ksyms_is_tracing("__traceiter_x"));
	CHECK(!ksyms_is_tracing("rwsem_down_read_slowpath"));
	ksyms_free(&k);
	CHECK(k.n == 0 && !ksyms_find(&k, 1, NULL));
	CHECK(ksyms_load(&k, "/nonexistent/kallsyms") < 0);
}

static void test_golden(void)
{
	struct snapshot s;
	struct report_meta m = { .kernel = "6.18.44", .hostname = "db1", .duration_s = 10.0 };
	struct mount_table mt;
	struct ksyms k = { 0 };
	struct render_opts o = { .top_n = 10, .ksyms = &k };
	FILE *f = fmemopen((void *)kallsyms, sizeof(kallsyms) - 1, "r");
	char *buf = NULL;
	size_t len = 0;

	CHECK(ksyms_parse(&k, f) == 0);
	fclose(f);
	mounts_parse(&mt, "40 22 7:0 / /mnt/x rw - xfs /dev/loop0 rw\n");
	m.mounts = &mt;
	build(&s);

	f = open_memstream(&buf, &len);
	ops_text(f, &s, &m, &o);
	fclose(f);
	check_golden("ops.txt", buf);
	CHECK(strstr(buf, "fio[4257] buffered-write EXCL") != NULL);
	CHECK(strstr(buf, "(disjoint 97%)") != NULL);
	CHECK(strstr(buf, "(ranges unknown: holder)") != NULL);
	CHECK(strstr(buf, "rwsem_down_read_slowpath < down_read < xfs_ilock") != NULL);
	CHECK(strstr(buf, "bpf_") == NULL);  /* tracing frames are not the kernel's path */
	CHECK(strstr(buf, "shared 12,000  exclusive 300 (unaligned 300") != NULL);
	free(buf);

	f = open_memstream(&buf, &len);
	CHECK(render_folded(f, &s, &k) == 0);
	fclose(f);
	check_golden("folded.txt", buf);
	/* one line: the same stack behind three edges adds up */
	CHECK_STR(buf, "IOLOCK;shared;entry_SYSCALL_64_after_hwframe;vfs_read;xfs_file_buffered_read;"
		       "xfs_ilock;down_read;rwsem_down_read_slowpath 900000000\n");
	free(buf);

	f = open_memstream(&buf, &len);
	render_json(f, &s, &m, &o);
	fclose(f);
	check_golden("ops.json", buf);
	CHECK(strstr(buf, "\"holder\":{\"pid\":4257,\"tgid\":4257,\"comm\":\"fio\",\"title\":null,"
			  "\"mode\":\"exclusive\",\"op\":\"buffered-write\",\"op_flags\":[]}") != NULL);
	CHECK(strstr(buf, "\"ranges\":{\"overlapping\":{\"waits\":3,\"wait_ns\":24000000},"
			  "\"disjoint\":{\"waits\":97,\"wait_ns\":788000000}") != NULL);
	CHECK(strstr(buf, "\"headroom\":0.97") != NULL);
	CHECK(strstr(buf, "\"frames\":[\"rwsem_down_read_slowpath\"") != NULL);
	CHECK(strstr(buf, "\"direct_writes\":[") != NULL);
	free(buf);

	/* without symbols, frames are addresses */
	o.ksyms = NULL;
	f = open_memstream(&buf, &len);
	ops_text(f, &s, &m, &o);
	fclose(f);
	CHECK(strstr(buf, "0xffffffff81003030") != NULL);
	free(buf);

	ksyms_free(&k);
	mounts_free(&mt);
	snap_free(&s);
}

static int parse(enum cli_cmd cmd, struct ilock_opts *o, char *err, int argc, char **argv)
{
	return cli_parse(cmd, argc, argv, o, err, 256);
}

static void test_cli(void)
{
	struct ilock_opts o;
	char err[256];
	char *a1[] = { "stat", "--ops", "all", "--no-stacks", NULL };
	char *a2[] = { "stat", "--ops=off", NULL };
	char *a3[] = { "stat", "--folded", "-d", "1", NULL };
	char *a4[] = { "stat", "--ops", "bogus", NULL };
	char *a5[] = { "stat", "--folded", "--json", NULL };
	char *a6[] = { "stat", "--folded", "--ops", "off", NULL };
	char *a7[] = { "top", "--folded", NULL };
	char *a8[] = { "stat", "--class", "jbd2_wait", NULL };
	char *h1[] = { "stat", "--holds=off", NULL };
	char *h2[] = { "top", "--holds", "all", NULL };
	char *h3[] = { "stat", "--holds=xfs", NULL };
	char *h4[] = { "stat", "--holds=none", NULL };
	char *s1[] = { "top", "--ops", "syscalls", NULL };
	char *s2[] = { "record", "--ops", "io", NULL };

	CHECK(parse(CLI_STAT, &o, err, 4, a1) == 0);
	CHECK(o.ops_mode == ILOCK_OPS_ALL && o.no_stacks && !o.folded);
	CHECK(parse(CLI_STAT, &o, err, 2, a2) == 0 && o.ops_mode == ILOCK_OPS_OFF);
	CHECK(parse(CLI_STAT, &o, err, 4, a3) == 0 && o.folded && o.ops_mode == ILOCK_OPS_SYSCALLS &&
	      o.holds == ILOCK_HOLDS_OFF);
	CHECK(parse(CLI_STAT, &o, err, 3, a4) < 0 &&
	      strstr(err, "--ops bogus: one of syscalls, io, all, off"));
	CHECK(parse(CLI_TOP, &o, err, 3, s1) == 0 && o.ops_mode == ILOCK_OPS_SYSCALLS &&
	      cli_stacks_on(&o));
	CHECK(parse(CLI_STAT, &o, err, 3, s2) == 0 && o.ops_mode == ILOCK_OPS_IO);
	CHECK(parse(CLI_STAT, &o, err, 3, a5) < 0 && strstr(err, "--json"));
	CHECK(parse(CLI_STAT, &o, err, 4, a6) < 0 && strstr(err, "--ops off"));
	CHECK(parse(CLI_TOP, &o, err, 2, a7) < 0 && strstr(err, "--folded"));
	CHECK(parse(CLI_STAT, &o, err, 3, a8) == 0 &&
	      o.f.class_mask == 1U << ILOCK_CLASS_JBD2_WAIT);
	CHECK(parse(CLI_STAT, &o, err, 2, h1) == 0 && o.holds == ILOCK_HOLDS_OFF);
	CHECK(parse(CLI_TOP, &o, err, 3, h2) == 0 && o.holds == ILOCK_HOLDS_ALL);
	CHECK(parse(CLI_STAT, &o, err, 2, h3) == 0 && o.holds == ILOCK_HOLDS_XFS);
	CHECK(parse(CLI_STAT, &o, err, 2, h4) < 0 && strstr(err, "--holds none: off, xfs or all"));
	CHECK_STR(class_name(ILOCK_CLASS_JBD2_WAIT), "jbd2_wait");
	CHECK_STR(class_display_name(ILOCK_CLASS_JBD2_WAIT, ILOCK_XFS_SB_MAGIC), "jbd2_wait");
}

/* --hold-sample and --hold-exact-rate, and the name recordings and diff carry. */
static void test_cli_hold_sampling(void)
{
	struct ilock_opts o;
	uint32_t one_in, rate;
	char err[256], name[32];
	char *d[] = { "stat", NULL };
	char *e1[] = { "stat", "--holds=xfs", "--hold-sample=1", NULL };
	char *e2[] = { "top", "--hold-sample", "256", "--hold-exact-rate", "0", "--holds=all", NULL };
	char *n1[] = { "stat", "--hold-sample=4", NULL };
	char *n2[] = { "stat", "--hold-exact-rate=9", "--holds=off", NULL };
	char *b1[] = { "stat", "--hold-sample=48", NULL };
	char *b2[] = { "stat", "--hold-sample=0", NULL };
	char *b3[] = { "stat", "--hold-sample=2048", NULL };
	char *b4[] = { "stat", "--hold-exact-rate=-5", NULL };
	char *b5[] = { "stat", "--hold-exact-rate", "lots", NULL };

	CHECK(parse(CLI_STAT, &o, err, 1, d) == 0);
	cli_hold_sampling(&o, &one_in, &rate);
	CHECK(one_in == CLI_HOLD_SAMPLE_DEFAULT && rate == CLI_HOLD_EXACT_RATE_DEFAULT);
	cli_hold_sampling_name(&o, name, sizeof(name));
	CHECK_STR(name, "1/64 > 250/s/inode/cpu");
	CHECK(parse(CLI_STAT, &o, err, 3, e1) == 0);
	cli_hold_sampling_name(&o, name, sizeof(name));
	CHECK_STR(name, "every hold");
	CHECK(parse(CLI_TOP, &o, err, 6, e2) == 0);
	cli_hold_sampling(&o, &one_in, &rate);
	CHECK(one_in == 256 && rate == 0 && o.hold_exact_rate_set);
	cli_hold_sampling_name(&o, name, sizeof(name));
	CHECK_STR(name, "1/256 > 0/s/inode/cpu");
	CHECK(parse(CLI_STAT, &o, err, 2, b1) < 0 &&
	      strstr(err, "--hold-sample 48: a power of 2 from 1 to 1024"));
	CHECK(parse(CLI_STAT, &o, err, 2, b2) < 0 && strstr(err, "--hold-sample 0"));
	CHECK(parse(CLI_STAT, &o, err, 2, b3) < 0 && strstr(err, "--hold-sample 2048"));
	CHECK(parse(CLI_STAT, &o, err, 2, b4) < 0 && strstr(err, "--hold-exact-rate -5"));
	CHECK(parse(CLI_STAT, &o, err, 3, b5) < 0 && strstr(err, "--hold-exact-rate lots"));
	/* with holds off they would do nothing: refused */
	CHECK(parse(CLI_STAT, &o, err, 2, n1) < 0 &&
	      strstr(err, "--hold-sample needs --holds=xfs or --holds=all"));
	CHECK(parse(CLI_STAT, &o, err, 3, n2) < 0 &&
	      strstr(err, "--hold-exact-rate needs --holds=xfs or --holds=all"));
}

/* --wait-sample and --wait-exact-rate: off unless asked for, and the name reports carry. */
static void test_cli_wait_sampling(void)
{
	struct ilock_opts o;
	uint32_t one_in, rate;
	char err[256], name[32];
	char *d[] = { "stat", NULL };
	char *e1[] = { "stat", "--wait-sample=16", NULL };
	char *e2[] = { "top", "--wait-sample", "1024", "--wait-exact-rate", "0", NULL };
	char *b1[] = { "stat", "--wait-sample=12", NULL };
	char *b2[] = { "stat", "--wait-sample=0", NULL };
	char *b3[] = { "stat", "--wait-exact-rate", "1000001", NULL };
	char *n1[] = { "stat", "--wait-exact-rate", "100", NULL };
	char *n2[] = { "top", "--wait-sample=1", "--wait-exact-rate=100", NULL };

	CHECK(parse(CLI_STAT, &o, err, 1, d) == 0);
	cli_wait_sampling(&o, &one_in, &rate);
	CHECK(one_in == 1 && rate == CLI_WAIT_EXACT_RATE_DEFAULT);
	cli_wait_sampling_name(&o, name, sizeof(name));
	CHECK_STR(name, "off");
	CHECK(parse(CLI_STAT, &o, err, 2, e1) == 0);
	cli_wait_sampling_name(&o, name, sizeof(name));
	CHECK_STR(name, "1/16 > 250/s/lock/cpu");
	CHECK(parse(CLI_TOP, &o, err, 5, e2) == 0);
	cli_wait_sampling(&o, &one_in, &rate);
	CHECK(one_in == 1024 && rate == 0 && o.wait_exact_rate_set);
	cli_wait_sampling_name(&o, name, sizeof(name));
	CHECK_STR(name, "1/1024 > 0/s/lock/cpu");
	CHECK(parse(CLI_STAT, &o, err, 2, b1) < 0 &&
	      strstr(err, "--wait-sample 12: a power of 2 from 1 to 1024"));
	CHECK(parse(CLI_STAT, &o, err, 2, b2) < 0 && strstr(err, "--wait-sample 0"));
	CHECK(parse(CLI_STAT, &o, err, 3, b3) < 0 && strstr(err, "--wait-exact-rate 1000001"));
	/* without sampling every wait is timed: a rate would do nothing */
	CHECK(parse(CLI_STAT, &o, err, 3, n1) < 0 &&
	      strstr(err, "--wait-exact-rate needs --wait-sample N"));
	CHECK(parse(CLI_TOP, &o, err, 3, n2) < 0 &&
	      strstr(err, "--wait-exact-rate needs --wait-sample N"));
}

/* The --max-inodes help states what each inode entry reserves: keep it true. */
static void test_max_inodes_help(void)
{
	char want[64];

	snprintf(want, sizeof(want), "reserve %zu bytes each",
		 sizeof(struct ilock_wait_slot) + sizeof(struct ilock_edge_slot));
	CHECK(strstr(CLI_MAX_INODES_HELP, want) != NULL);
}

/*
 * Waits on a directory name the namespace ops on each side, and say a
 * range lock has nothing to compare there; so do the ILOCK's.
 */
static void test_namespace_pairs(void)
{
	struct snapshot s;
	struct report_meta m = { .kernel = "6.18.44", .hostname = "db1", .duration_s = 10.0 };
	struct render_opts o = { .top_n = 10 };
	struct ilock_edge_key dir = edge(10, ILOCK_OP_UNLINK, 0, 11, ILOCK_OP_CREATE, 0);
	struct ilock_edge_key il = edge(10, ILOCK_OP_BUFFERED_WRITE, 0, 12, ILOCK_OP_BUFFERED_READ,
					 ILOCK_RANGE_DISJOINT);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	snap_init(&s);
	dir.waiter_mode = ILOCK_MODE_EXCL;
	add_edge(&s, dir, 40, 4000000);
	il.ino = 132;
	il.class = ILOCK_CLASS_XFS_ILOCK;
	add_edge(&s, il, 20, 2000000);
	CHECK(snap_ranges_from_edges(&s) == 0);
	f = open_memstream(&buf, &len);
	ops_text(f, &s, &m, &o);
	fclose(f);
	CHECK(strstr(buf, "fio[10] unlink EXCL") != NULL && strstr(buf, "fio[11] create EXCL") != NULL);
	/* neither has a row of byte ranges */
	CHECK(strstr(buf, "headroom") == NULL);
	CHECK(strstr(buf, "(names, not bytes)") != NULL);
	CHECK(strstr(buf, "(metadata: no ranges)") != NULL);
	CHECK(strstr(buf, "(disjoint") == NULL);
	CHECK(ilock_op_is_namespace(ILOCK_OP_CREATE) && ilock_op_is_namespace(ILOCK_OP_READDIR));
	CHECK(!ilock_op_is_namespace(ILOCK_OP_OTHER) && !ilock_op_is_namespace(ILOCK_OP_MAX));
	CHECK(!ilock_op_is_write(ILOCK_OP_LOOKUP) && ilock_op_is_write(ILOCK_OP_UNLINK));
	free(buf);
	snap_free(&s);
}

/*
 * Pairs kept without their threads (a full pairs table): by command they
 * add to the threads' own pairs and say there were more threads; by thread
 * they read comm[others], with no pid in JSON and no title looked up.
 */
static void test_folded_pairs(void)
{
	static const uint32_t holder[] = { 10, 11, ILOCK_PID_FOLDED, 0 };
	static const uint32_t waiter[] = { 20, 21, ILOCK_PID_FOLDED, ILOCK_PID_FOLDED };
	struct report_meta m = { .duration_s = 1.0 };
	struct render_opts o = { .top_n = 10 };
	struct titles ti;
	struct pair_row *p;
	struct snapshot s;
	char *buf, b[64];
	long n;

	titles_init(&ti);
	snap_init(&s);
	for (size_t i = 0; i < sizeof(holder) / sizeof(holder[0]); i++) {
		struct ilock_edge_key k = edge(holder[i], ILOCK_OP_BUFFERED_WRITE, 0, waiter[i],
					       ILOCK_OP_BUFFERED_READ, ILOCK_RANGE_DISJOINT);

		k.holder_tgid = holder[i];
		k.waiter_tgid = waiter[i];
		if (!holder[i]) {  /* no holder named: stays unnamed when folded */
			k.holder_mode = ILOCK_MODE_UNKNOWN;
			memset(k.holder_comm, 0, sizeof(k.holder_comm));
		}
		/* the folded threads together waited most */
		add_edge(&s, k, i == 2 ? 50 : 10, i == 2 ? 500000000 : 100000000);
	}
	/* yet the lock's top holder is a thread that can be named */
	{
		const struct edge_row *top = snap_top_holder(&s, DEV, 131, 0, ILOCK_CLASS_I_RWSEM);

		CHECK(top && (top->k.holder_pid == 10 || top->k.holder_pid == 11));
	}
	n = snap_pairs(&s, &p, PAIRS_OPS);
	CHECK_EQ_U(n, 2);
	if (n == 2) {
		/* the named holders' row: 2 holders and 2 waiters known, more behind the fold */
		const struct pair_row *r = p[0].k.holder_mode == ILOCK_MODE_EXCL ? &p[0] : &p[1];

		const struct pair_row *u = r == &p[0] ? &p[1] : &p[0];

		CHECK(r->holders == 2 && r->waiters == 2 && r->s.count == 70);
		CHECK(r->holders_folded && r->waiters_folded);
		CHECK_STR(fmt_thread_count(b, sizeof(b), r->holders, r->holders_folded), "2+");
		CHECK_STR(fmt_thread_count(b, sizeof(b), 3, false), "3");
		/* no owner: no holder thread, folded or not; its folded waiters are 1 or more */
		CHECK(u->holders == 0 && !u->holders_folded && u->waiters == 0 && u->waiters_folded);
		CHECK_STR(fmt_thread_count(b, sizeof(b), u->waiters, u->waiters_folded), "1+");
	}
	free(p);
	n = snap_pairs(&s, &p, PAIRS_THREADS | PAIRS_OPS);
	CHECK_EQ_U(n, 4);
	free(p);
	CHECK_STR(fmt_task(b, sizeof(b), "fio", ILOCK_PID_FOLDED), "fio[others]");
	CHECK_STR(fmt_task(b, sizeof(b), "fio", 4257), "fio[4257]");
	/* no /proc lookup for a thread that is not one */
	titles_note(&ti, ILOCK_PID_FOLDED, ILOCK_PID_FOLDED, "fio");
	CHECK_EQ_U(ti.n, 0);

	m.titles = &ti;
	snap_lock(&s, DEV, 131, 0, ILOCK_CLASS_I_RWSEM)->wait[ILOCK_MODE_SHARED] =
		(struct ilock_stats){ .count = 40, .total_ns = 400000000, .max_ns = 10000000 };
	buf = rendered(&s, &m, &o, false);
	CHECK(strstr(buf, "2+ -> 2+  threads") != NULL);
	CHECK(strstr(buf, "fio[others] exclusive") != NULL);
	CHECK(strstr(buf, "4294967295") == NULL);
	free(buf);
	buf = rendered(&s, &m, &o, true);
	CHECK(strstr(buf, "\"holder\":{\"pid\":null,\"tgid\":null,\"comm\":\"fio\"") != NULL);
	CHECK(strstr(buf, "\"waiter\":{\"pid\":null,\"tgid\":null,\"comm\":\"fio\"") != NULL);
	CHECK(strstr(buf, "\"holder_threads\":2,\"waiter_threads\":2,\"threads_folded\":true") != NULL);
	CHECK(strstr(buf, "4294967295") == NULL);
	free(buf);
	snap_free(&s);
	titles_free(&ti);
}

int main(void)
{
	test_cli();
	test_max_inodes_help();
	test_cli_hold_sampling();
	test_cli_wait_sampling();
	test_range_rules();
	test_range_class();
	test_names();
	test_pairs();
	test_roles();
	test_pool_roles();
	test_title_roles();
	test_folded_pairs();
	test_model();
	test_edge_wstack();
	test_ksyms();
	test_golden();
	test_namespace_pairs();
	UNIT_DONE();
}
