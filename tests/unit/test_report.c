// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The report's own views: sparklines, timeline, JSON intervals, CSV, HTML. */
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"
#include "recsynth.h"
#include "report.h"
#include "unit.h"

#define DEV_X ILOCK_KDEV(7, 1)
#define MOUNTINFO "36 35 7:1 / /mnt/x rw - xfs /dev/loop1 rw\n"

static void test_sparkline(void)
{
	double v[120];
	char buf[512];
	int cols;

	for (int i = 0; i < 8; i++)
		v[i] = i;
	cols = report_sparkline(buf, sizeof(buf), v, 8, 60);
	CHECK_EQ_U(cols, 8);
	/* zero is a blank, the peak the full block, everything else in between */
	CHECK_STR(buf, " \xe2\x96\x82\xe2\x96\x83\xe2\x96\x84\xe2\x96\x85\xe2\x96\x86\xe2\x96\x87\xe2\x96\x88");
	v[0] = v[1] = 0;
	cols = report_sparkline(buf, sizeof(buf), v, 2, 60);
	CHECK_EQ_U(cols, 2);
	CHECK_STR(buf, "  ");
	/* a tiny non-zero value still shows */
	v[0] = 1;
	v[1] = 1e9;
	report_sparkline(buf, sizeof(buf), v, 2, 60);
	CHECK_STR(buf, "\xe2\x96\x81\xe2\x96\x88");
	/* 120 values in 60 columns: pairs averaged */
	for (int i = 0; i < 120; i++)
		v[i] = i < 60 ? 0 : 5;
	cols = report_sparkline(buf, sizeof(buf), v, 120, 60);
	CHECK_EQ_U(cols, 60);
	CHECK(buf[0] == ' ' && buf[29] == ' ' && (unsigned char)buf[30] == 0xe2);
	/* a short buffer is never overrun */
	report_sparkline(buf, 7, v + 60, 10, 60);
	CHECK(strlen(buf) <= 6);
	CHECK_EQ_U(report_sparkline(buf, sizeof(buf), v, 0, 60), 0);
}

struct fixture {
	struct synth s;
	struct recording r;
	struct snapshot merged;
	struct report_meta meta;
	struct report_ctx c;
};

/* Decode fx->s, written and ended, and build the report over all of it. */
static void fixture_open(struct fixture *fx, double secs)
{
	CHECK(fx->s.ok);
	rec_init(&fx->r);
	CHECK_EQ_U(rec_decode(&fx->r, fx->s.file.p, fx->s.file.len), REC_OK);
	snap_init(&fx->merged);
	fx->c.file = "t.ilrec";
	fx->c.r = &fx->r;
	fx->c.i0 = 0;
	fx->c.i1 = fx->r.niv;
	fx->c.merged = &fx->merged;
	fx->c.meta = &fx->meta;
	fx->c.top_n = 10;
	CHECK(!rec_merge_window(&fx->r, fx->c.i0, fx->c.i1, NULL, &fx->merged));
	snap_sort_locks(&fx->merged, SORT_WAIT_TIME);
	snap_sort_edges(&fx->merged);
	rec_fill_meta(&fx->r, &fx->meta, secs);
	CHECK(!report_build(&fx->c));
}

/* Five intervals: shared waits in 1 and 3, exclusive in 3, on a nasty path. */
static void setup(struct fixture *fx)
{
	struct snapshot d;
	struct ilock_edge_key ek = { .ino = 131, .dev = DEV_X, .class = ILOCK_CLASS_I_RWSEM,
				     .holder_mode = ILOCK_MODE_EXCL, .waiter_mode = ILOCK_MODE_SHARED,
				     .holder_pid = 10, .waiter_pid = 11,
				     .holder_op = ILOCK_OP_BUFFERED_WRITE,
				     .waiter_op = ILOCK_OP_BUFFERED_READ, .range = ILOCK_RANGE_DISJOINT };
	struct ilock_edge_stats es = { 2, 400000000, 300000000 };

	memset(fx, 0, sizeof(*fx));
	memcpy(ek.holder_comm, "<writer>", 8);
	memcpy(ek.waiter_comm, "reader", 6);
	synth_begin(&fx->s, 1000000000ULL, MOUNTINFO);
	snap_init(&d);
	for (int i = 0; i < 5; i++) {
		snap_reset(&d);
		if (!i)
			synth_inode(&d, DEV_X, 131, ILOCK_XFS_SB_MAGIC, "/a,b/<b>&\"q\"");
		if (i == 1 || i == 3) {
			synth_wait(&d, DEV_X, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 2, 200000000);
			snap_add_edge(&d, &ek, &es);
		}
		if (i == 3)
			synth_wait(&d, DEV_X, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, 1, 5000000);
		synth_interval(&fx->s, &d);
	}
	synth_end(&fx->s);
	snap_free(&d);
	fixture_open(fx, 5.0);
}

static void teardown(struct fixture *fx)
{
	report_free(&fx->c);
	snap_free(&fx->merged);
	rec_free(&fx->r);
	synth_free(&fx->s);
}

static char *capture(void (*fn)(FILE *, const struct report_ctx *), const struct report_ctx *c)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	fn(f, c);
	fclose(f);
	return out;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_rows_and_timeline(void)
{
	struct fixture fx;
	char *out;

	setup(&fx);
	CHECK_EQ_U(fx.c.nrows, 1);
	CHECK_EQ_U(fx.c.rows[0].waits[ILOCK_MODE_SHARED][1], 2);
	CHECK_EQ_U(fx.c.rows[0].waits[ILOCK_MODE_SHARED][2], 0);
	CHECK_EQ_U(fx.c.rows[0].wait_ns[ILOCK_MODE_EXCL][3], 5000000);
	CHECK_EQ_U(fx.c.rows[0].max_ns[ILOCK_MODE_SHARED][3], 200000000);
	out = capture(report_timeline_text, &fx.c);
	CHECK(strstr(out, "WAIT TIME PER INTERVAL") != NULL);
	/* intervals 0, 2, 4 blank; 3 the peak */
	CHECK(strstr(out, "| \xe2\x96\x88 \xe2\x96\x88 |") != NULL);
	free(out);
	/* a window of the quiet intervals alone */
	report_free(&fx.c);
	fx.c.i0 = 4;
	fx.c.i1 = 5;
	CHECK(!rec_merge_window(&fx.r, 4, 5, NULL, &fx.merged));
	snap_sort_locks(&fx.merged, SORT_WAIT_TIME);
	CHECK(!report_build(&fx.c));
	CHECK_EQ_U(fx.c.nrows, 0);
	out = capture(report_timeline_text, &fx.c);
	CHECK(strstr(out, "(no inode lock waits)") != NULL);
	free(out);
	teardown(&fx);
}

/* A 1 ms last interval, where a long wait ended, is rated over a whole interval. */
static void test_timeline_short_last_interval(void)
{
	struct fixture fx;
	struct snapshot d;
	char *out, *row;

	memset(&fx, 0, sizeof(fx));
	synth_begin(&fx.s, 1000000000ULL, MOUNTINFO);
	snap_init(&d);
	for (int i = 0; i < 3; i++) {
		snap_reset(&d);
		if (!i)
			synth_inode(&d, DEV_X, 131, ILOCK_XFS_SB_MAGIC, "/db");
		/* 0.5 s of waits in each full interval, a 2 s wait in the last */
		synth_wait(&d, DEV_X, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1,
			   i < 2 ? 500000000 : 2000000000);
		synth_interval_dur(&fx.s, &d, i < 2 ? 1000000000ULL : 1000000ULL);
	}
	synth_end(&fx.s);
	snap_free(&d);
	fixture_open(&fx, 5.0);
	CHECK(report_rate_secs(&fx.r, 2) == 1.0);
	CHECK(report_rate_secs(&fx.r, 0) == 1.0);
	out = capture(report_timeline_text, &fx.c);
	row = strstr(out, "/db");
	CHECK(row != NULL);
	/* peak 2 s/s (not 2000 s/s); mean 3 s over 2.001 s */
	CHECK(row && strstr(row, " 2.00 s ") != NULL);
	CHECK(row && strstr(row, " 1.50 s") != NULL);
	/* columns 1 and 2 at a quarter of the peak, not blank */
	CHECK(row && strstr(row, "|\xe2\x96\x82\xe2\x96\x82\xe2\x96\x88|") != NULL);
	free(out);
	teardown(&fx);
}

static void test_json_intervals(void)
{
	struct fixture fx;
	struct render_opts ro = { .top_n = 10, .json_extra = report_json_extra };
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	setup(&fx);
	ro.json_extra_ctx = &fx.c;
	f = open_memstream(&out, &len);
	render_json(f, &fx.merged, &fx.meta, &ro);
	fclose(f);
	CHECK(strstr(out, "\"intervals\"") != NULL);
	CHECK(strstr(out, "\"recording\"") != NULL);
	CHECK(strstr(out, "\"window\"") != NULL);
	CHECK(strstr(out, "\"locks\"") != NULL);  /* stat's schema is all there */
	CHECK_EQ_U(count(out, "\"t_start_s\""), 5);
	CHECK_EQ_U(count(out, "\"lock\""), 2);  /* intervals 1 and 3 */
	CHECK(strstr(out, "\"boot_id\"") != NULL);
	/* the document ends once, after the extra keys */
	CHECK(out[strlen(out) - 1] == '}' || out[strlen(out) - 2] == '}');
	free(out);
	teardown(&fx);
}

static void test_csv(void)
{
	struct fixture fx;
	char *out;

	setup(&fx);
	out = capture(report_csv, &fx.c);
	CHECK(!strncmp(out, "interval,t_start_s,duration_s,dev,ino,path,fs,class,", 52));
	CHECK_EQ_U(count(out, "\n"), 3);  /* header and intervals 1 and 3 */
	/* the generation last, so the columns before it keep their places */
	CHECK(strstr(out, ",hold_exclusive_p99_ns,gen\n") != NULL);
	CHECK_EQ_U(count(out, ",0\n"), 2);
	/* a path with a comma and quotes is one quoted field */
	CHECK(strstr(out, ",\"/mnt/x/a,b/<b>&\"\"q\"\"\",xfs,i_rwsem,2,400000000,") != NULL);
	free(out);
	teardown(&fx);
}

/* A waiter stack behind the pair, with a frame name that needs escaping. */
static void add_stack(struct fixture *fx, struct ksyms *ks)
{
	struct ilock_stack_key sk = { .stack = 42, .kind = ILOCK_STACK_WAITER };
	struct ilock_stack_stats st = { 4, 800000000 };
	struct ilock_stack_frames fr = { .nr = 3, .ip = { 0x1000, 0x2000, 0x3000 } };

	sk.edge = fx->merged.edges[0].k;
	CHECK(!snap_add_stack(&fx->merged, &sk, &st));
	CHECK(!snap_add_frames(&fx->merged, ILOCK_STACK_WAITER, 42, &fr));
	memset(ks, 0, sizeof(*ks));
	CHECK(!ksyms_add(ks, 0x1000, "rwsem_down_read_slowpath"));
	CHECK(!ksyms_add(ks, 0x2000, "xfs_ilock"));
	CHECK(!ksyms_add(ks, 0x3000, "<evil>&"));
	fx->c.ksyms = ks;
}

/* A wide histogram's bucket labels neither overlap nor run past the chart. */
static void test_html_hist_labels(void)
{
	struct fixture fx;
	char *out;
	const char *p;
	int svgs = 0;

	setup(&fx);
	/* waits from 256 ns to 16.8 ms: 17 buckets */
	fx.merged.locks[0].wait[0].hist[8] = 5;
	fx.merged.locks[0].wait[0].hist[24] = 5;
	out = capture(report_html, &fx.c);
	for (p = out; (p = strstr(p, "<svg class=\"hist\"")); svgs++) {
		const char *end = strstr(p, "</svg>");
		double prev = -1000, x;
		int labels = 0, n;

		CHECK(end != NULL);
		if (!end)
			break;
		for (const char *t = p; (t = strstr(t, "<text x=\"")) && t < end; t++) {
			n = 0;
			if (sscanf(t, "<text x=\"%lf\" y=\"156\"%n", &x, &n) != 1 || !n)
				continue;
			CHECK(x - prev >= 50);  /* HIST_LABEL_W: "16.8 ms" is about 45 px */
			CHECK(x + 25 <= 430);  /* HIST_W */
			prev = x;
			labels++;
		}
		CHECK(labels >= 4);
		p = end;
	}
	CHECK_EQ_U(svgs, 2);
	free(out);
	teardown(&fx);
}

static void test_html(void)
{
	struct fixture fx;
	struct ksyms ks;
	char *out;

	setup(&fx);
	add_stack(&fx, &ks);
	out = capture(report_html, &fx.c);
	CHECK(!strncmp(out, "<!DOCTYPE html>", 15));
	CHECK(strstr(out, "</html>\n") != NULL);
	/* charts: one timeline, a shared and an exclusive histogram */
	CHECK_EQ_U(count(out, "<svg class=\"timeline\""), 1);
	CHECK_EQ_U(count(out, "<svg class=\"hist\""), 2);
	CHECK(count(out, "<rect class=\"sh\"") >= 3);
	CHECK(count(out, "<rect class=\"ex\"") >= 2);
	CHECK(strstr(out, "Who serialises whom") != NULL);
	CHECK(strstr(out, "&lt;writer&gt;[10] exclusive") != NULL);
	/* the answer first, as the text gives it: tasks waiting, where, and the headroom */
	CHECK(strstr(out, "<h2>In short</h2>\n<pre>  0.16 tasks waited for inode locks on average") !=
	      NULL);
	CHECK(strstr(out, "most on /mnt/x/a,b/&lt;b&gt;&amp;&quot;q&quot;") != NULL);
	CHECK(strstr(out, "of it between disjoint byte ranges") != NULL);
	CHECK(strstr(out, "<h2>In short</h2>") < strstr(out, "<h2>Top inode locks"));
	/* by command: the writer's name escaped, without its thread id */
	CHECK(strstr(out, "<h2>Who serialises whom, by command") != NULL);
	CHECK(strstr(out, "<tr><td class=\"l\">&lt;writer&gt;</td><td class=\"l\">buffered-write</td>"
			  "<td class=\"l\">exclusive</td>") != NULL);
	CHECK(strstr(out, "<td>1 &rarr; 1</td>") != NULL);
	/* one pair: what each side did, its range-lock headroom, its stack */
	CHECK(strstr(out, "<td class=\"l\">buffered-write</td>") != NULL);
	CHECK(strstr(out, "<td class=\"l\">buffered-read</td>") != NULL);
	CHECK(strstr(out, "<td>100%</td>") != NULL);
	CHECK_EQ_U(count(out, "<summary>kernel stacks</summary>"), 1);
	CHECK(strstr(out, "<b>waiter</b> 800 ms (100%), 4 waits<ol><li>rwsem_down_read_slowpath</li>"
			  "<li>xfs_ilock</li><li>&lt;evil&gt;&amp;</li></ol>") != NULL);
	/* the byte ranges of the top lock, with its headroom */
	CHECK(strstr(out, "<h2>Byte ranges: would a range lock have let them run together?</h2>") !=
	      NULL);
	{
		const char *r = strstr(out, "<h2>Byte ranges");

		CHECK(r && strstr(r, "<tr><td class=\"l\">/mnt/x/a,b/&lt;b&gt;&amp;&quot;q&quot;</td>"
				     "<td>IOLOCK</td><td>0 (0 ns)</td><td>4 (800 ms)</td>"
				     "<td>0 (0 ns)</td><td>100%</td></tr>\n") != NULL);
	}
	/* self-contained: no scripts, no fetches */
	CHECK(!strstr(out, "<script"));
	CHECK(!strstr(out, "<link"));
	CHECK(!strstr(out, "src="));
	CHECK(!strstr(out, "url("));
	CHECK(!strstr(out, "@import"));
	CHECK_EQ_U(count(out, "http"), count(out, "xmlns=\"http://www.w3.org/2000/svg\""));
	/* the path is escaped everywhere */
	CHECK(!strstr(out, "<b>&"));
	CHECK(strstr(out, "/mnt/x/a,b/&lt;b&gt;&amp;&quot;q&quot;") != NULL);
	free(out);
	ksyms_free(&ks);
	teardown(&fx);
}

/* Readers whose owner hint named the waiter itself: "(readers)" in the page, as in the text. */
static void test_html_unnamed_readers(void)
{
	struct fixture fx;
	struct snapshot d;
	struct ilock_edge_key ek = { .ino = 131, .dev = DEV_X, .class = ILOCK_CLASS_I_RWSEM,
				     .holder_mode = ILOCK_MODE_READERS, .waiter_mode = ILOCK_MODE_EXCL,
				     .waiter_pid = 11 };
	struct ilock_edge_stats es = { 2, 400000000, 300000000 };
	char *out;

	memset(&fx, 0, sizeof(fx));
	memcpy(ek.waiter_comm, "writer", 6);
	synth_begin(&fx.s, 1000000000ULL, MOUNTINFO);
	snap_init(&d);
	synth_inode(&d, DEV_X, 131, ILOCK_XFS_SB_MAGIC, "/f");
	synth_wait(&d, DEV_X, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, 2, 400000000);
	snap_add_edge(&d, &ek, &es);
	synth_interval(&fx.s, &d);
	synth_end(&fx.s);
	snap_free(&d);
	fixture_open(&fx, 1.0);
	out = capture(report_html, &fx.c);
	CHECK(strstr(out, "<tr><td class=\"l\">(readers)</td><td class=\"l\"></td>"
			  "<td class=\"l\">readers</td><td class=\"l\">writer</td>") != NULL);
	CHECK(!strstr(out, "<td class=\"l\">?</td>"));
	free(out);
	teardown(&fx);
}

/* With --holds: hold histograms beside the waits, and the locks held that nobody waited for. */
static void test_html_holds(void)
{
	struct fixture fx;
	struct snapshot d;
	char *out;
	const char *h;

	memset(&fx, 0, sizeof(fx));
	synth_begin(&fx.s, 1000000000ULL, MOUNTINFO);
	snap_init(&d);
	synth_inode(&d, DEV_X, 131, ILOCK_XFS_SB_MAGIC, "/db");
	synth_inode(&d, DEV_X, 132, ILOCK_XFS_SB_MAGIC, "/idle");
	synth_wait(&d, DEV_X, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 2, 1000000);
	synth_hold(&d, DEV_X, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, 10, 100000);
	synth_hold(&d, DEV_X, 131, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 5, 20000);
	synth_hold(&d, DEV_X, 132, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, 3, 50000);
	synth_interval(&fx.s, &d);
	synth_end(&fx.s);
	snap_free(&d);
	fixture_open(&fx, 1.0);
	CHECK_EQ_U(fx.c.nrows, 1);

	out = capture(report_html, &fx.c);
	/* the waited-for lock: two wait histograms, two hold histograms */
	CHECK_EQ_U(count(out, "<svg class=\"hist\""), 4);
	CHECK(strstr(out, ">exclusive holds (count per log2 bucket)<") != NULL);
	CHECK(strstr(out, "held exclusive: 10 acquisitions, p50 ") != NULL);
	CHECK(strstr(out, "held shared: 5 acquisitions") != NULL);
	/* the lock nobody waited for, in its own table */
	h = strstr(out, "<h2>Held without waits</h2>");
	CHECK(h != NULL);
	CHECK(h && strstr(h, "<tr><td class=\"l\">/mnt/x/idle</td><td>xfs</td><td>IOLOCK</td>"
			     "<td>0</td><td>-</td><td>3</td>") != NULL);
	{
		const char *end = h ? strstr(h, "</table>") : NULL, *db = h ? strstr(h, "/mnt/x/db<") : NULL;

		CHECK(end && (!db || db > end));
	}
	free(out);

	/* sampled holds: counts are estimates, the histograms what was timed */
	fx.meta.attach[fx.meta.nattach].probe = "hold_sampling";
	fx.meta.attach[fx.meta.nattach].mode = "1 in 8";
	fx.meta.nattach++;
	out = capture(report_html, &fx.c);
	CHECK(strstr(out, "held exclusive: ~10 acquisitions") != NULL);
	CHECK(strstr(out, ">exclusive holds timed (count per log2 bucket)<") != NULL);
	CHECK(strstr(out, "<td>~3</td>") != NULL);
	free(out);

	teardown(&fx);
}

int main(void)
{
	test_sparkline();
	test_rows_and_timeline();
	test_timeline_short_last_interval();
	test_html_holds();
	test_html_unnamed_readers();
	test_json_intervals();
	test_csv();
	test_html();
	test_html_hist_labels();
	UNIT_DONE();
}
