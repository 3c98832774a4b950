// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The exporter's pure parts: series selection and folding (prom_series.c)
 * and the exposition formats (prom.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "hist.h"
#include "prom.h"
#include "unit.h"

#define DEV_A ILOCK_KDEV(7, 0)
#define DEV_B ILOCK_KDEV(7, 1)

static void add_wait(struct snapshot *s, uint32_t dev, uint64_t ino, uint8_t class, uint8_t mode,
		     uint64_t ns, unsigned times)
{
	struct ilock_key k = { .ino = ino, .dev = dev, .class = class, .mode = mode };
	struct ilock_stats st = {};

	for (unsigned i = 0; i < times; i++) {
		st.count++;
		st.total_ns += ns;
		st.hist[ilock_hist_slot(ns)]++;
		if (ns > st.max_ns)
			st.max_ns = ns;
	}
	CHECK(snap_add_wait(s, &k, &st) == 0);
}

static void add_inode(struct snapshot *s, uint32_t dev, uint64_t ino, const char *path)
{
	struct inode_meta m = { .ino = ino, .dev = dev, .magic = ILOCK_XFS_SB_MAGIC };

	snprintf(m.path, sizeof(m.path), "%s", path);
	CHECK(snap_add_inode(s, &m) == 0);
}

static void add_edge(struct snapshot *s, uint32_t dev, uint64_t ino, const char *holder,
		     uint32_t hpid, const char *waiter, uint32_t wpid, uint64_t count, uint64_t ns)
{
	struct ilock_edge_key k = { .ino = ino, .dev = dev, .class = ILOCK_CLASS_I_RWSEM,
				    .holder_mode = ILOCK_MODE_EXCL, .waiter_mode = ILOCK_MODE_SHARED,
				    .holder_pid = hpid, .holder_tgid = hpid, .waiter_pid = wpid,
				    .waiter_tgid = wpid };
	struct ilock_edge_stats st = { .count = count, .total_ns = ns, .max_ns = ns };

	snprintf(k.holder_comm, sizeof(k.holder_comm), "%s", holder);
	snprintf(k.waiter_comm, sizeof(k.waiter_comm), "%s", waiter);
	CHECK(snap_add_edge(s, &k, &st) == 0);
}

/* One collection as the exporter does it: update against prev, then keep cur as prev. */
static int update(struct prom_series *ps, const struct snapshot *cur, struct snapshot *prev,
		  bool *have_prev)
{
	int err = prom_series_update(ps, cur, *have_prev ? prev : NULL, NULL);

	if (!err) {
		CHECK(snap_copy(prev, cur) == 0);
		*have_prev = true;
	}
	return err;
}

static char *render(const struct prom_series *ps, enum prom_format f)
{
	struct prom_meta m = { .version = "0.1.0", .kernel = "6.18.0-test", .have_bpf_stats = true,
			       .bpf_run_ns = 1500000000ULL, .bpf_run_cnt = 42 };
	struct prom_buf b;

	pbuf_init(&b);
	prom_render(&b, f, ps, &m);
	CHECK(!b.oom);
	return b.data;
}

/* The value of the first sample line starting with prefix (name + labels), or -1. */
static double sample(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, prefix, n) && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	return -1;
}

static unsigned count_lines(const char *text, const char *prefix)
{
	unsigned c = 0;
	size_t n = strlen(prefix);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, prefix, n))
			c++;
	return c;
}

static void test_canonical_numbers(void)
{
	char b[48];

	/* OpenMetrics' own examples of canonical rendering */
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 0.0), "0.0");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 0.001), "0.001");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 0.95), "0.95");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 1.0), "1.0");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 1.7), "1.7");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 10.0), "10.0");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 1e-10), "1e-10");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 1e-05), "1e-05");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 0.0001), "0.0001");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 100000.0), "100000.0");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 1e6), "1e+06");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 1e10), "1e+10");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 1.1e23), "1.1e+23");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 1.0 / 0.0), "+Inf");
	/* ours: log2 ns boundaries */
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 1024e-9), "1.024e-06");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 131072e-9), "0.000131072");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), 68719476736e-9), "68.719476736");
	CHECK_STR(prom_fmt_canonical(b, sizeof(b), -2.5), "-2.5");
}

static void test_escaping(void)
{
	struct prom_buf b;

	pbuf_init(&b);
	pbuf_label_value(&b, "a\"b\\c\nd");
	CHECK_STR(b.data, "a\\\"b\\\\c\\nd");
	pbuf_free(&b);

	/* valid UTF-8 kept; stray bytes, overlongs and surrogates replaced */
	pbuf_init(&b);
	pbuf_label_value(&b, "caf\xC3\xA9/\xFF/\xC0\xAF/\xED\xA0\x80/\xF0\x9F\x94\x92");
	CHECK_STR(b.data, "caf\xC3\xA9/\xEF\xBF\xBD/\xEF\xBF\xBD\xEF\xBF\xBD/"
			  "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD/\xF0\x9F\x94\x92");
	pbuf_free(&b);

	/* a sequence cut short by the end of the string */
	pbuf_init(&b);
	pbuf_label_value(&b, "x\xE2\x82");
	CHECK_STR(b.data, "x\xEF\xBF\xBD\xEF\xBF\xBD");
	pbuf_free(&b);

	/* a path label in the output is escaped the same way */
	{
		struct snapshot s;
		struct prom_series ps;
		char *t;

		snap_init(&s);
		add_wait(&s, DEV_A, 5, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 5000, 1);
		add_inode(&s, DEV_A, 5, "/we\"ird\\na\nme");
		prom_series_init(&ps, 4, 10);
		CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
		t = render(&ps, PROM_FMT_TEXT);
		CHECK(strstr(t, "path=\"/we\\\"ird\\\\na\\nme\"") != NULL);
		free(t);
		prom_series_free(&ps);
		snap_free(&s);
	}
}

static void test_negotiation(void)
{
	CHECK(prom_negotiate(NULL) == PROM_FMT_TEXT);
	CHECK(prom_negotiate("") == PROM_FMT_TEXT);
	CHECK(prom_negotiate("*/*") == PROM_FMT_TEXT);
	CHECK(prom_negotiate("text/plain;version=0.0.4") == PROM_FMT_TEXT);
	CHECK(prom_negotiate("application/openmetrics-text") == PROM_FMT_OPENMETRICS);
	/* what Prometheus 2.x sends */
	CHECK(prom_negotiate("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
			     "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1") ==
	      PROM_FMT_OPENMETRICS);
	CHECK(prom_negotiate("text/plain;q=0.9, application/openmetrics-text; version=1.0.0; q=0.5") ==
	      PROM_FMT_TEXT);
	CHECK(prom_negotiate("Application/OpenMetrics-Text; q=1") == PROM_FMT_OPENMETRICS);
	CHECK(prom_negotiate("application/openmetrics-text;q=0") == PROM_FMT_TEXT);
	/* only a version we do not speak */
	CHECK(prom_negotiate("application/openmetrics-text;version=2.0.0") == PROM_FMT_TEXT);
	/* junk never crashes and never picks OpenMetrics by accident */
	CHECK(prom_negotiate(",,,;;;") == PROM_FMT_TEXT);
	CHECK(prom_negotiate("application/openmetrics-text;q=abc") == PROM_FMT_TEXT);
	CHECK(prom_negotiate("application/openmetrics-textx") == PROM_FMT_TEXT);
	{
		char big[4096];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = 0;
		CHECK(prom_negotiate(big) == PROM_FMT_TEXT);
		memcpy(big + 3000, ",application/openmetrics-text", 29);
		CHECK(prom_negotiate(big) == PROM_FMT_TEXT);  /* no terminator: still junk */
		big[3029] = 0;
		CHECK(prom_negotiate(big) == PROM_FMT_OPENMETRICS);
	}
	CHECK(strstr(prom_content_type(PROM_FMT_OPENMETRICS), "application/openmetrics-text; version=1.0.0"));
	CHECK(strstr(prom_content_type(PROM_FMT_TEXT), "text/plain; version=0.0.4"));
}

/* Buckets never decrease and +Inf equals _count, for every histogram. */
static void check_cumulative(const char *text, const char *name)
{
	char bucket[128];
	size_t nb;
	double prev = -1;
	unsigned seen = 0, series = 0;

	snprintf(bucket, sizeof(bucket), "%s_bucket{", name);
	nb = strlen(bucket);
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *sp, *le;
		double v;

		if (strncmp(p, bucket, nb))
			continue;
		sp = strstr(p, "} ");
		le = strstr(p, "le=\"");
		CHECK(sp && le && le < sp);
		if (!sp || !le)
			return;
		v = strtod(sp + 2, NULL);
		if (prev >= 0)
			CHECK(v >= prev);
		prev = v;
		seen++;
		if (!strncmp(le, "le=\"+Inf\"", 9)) {
			char count[512];
			const char *labels = p + nb;
			size_t ln = (size_t)(le - labels);

			/* the series' _count line has the same labels without le */
			CHECK_EQ_U(seen, PROM_NBUCKETS);
			snprintf(count, sizeof(count), "%s_count{%.*s}", name,
				 (int)(ln && labels[ln - 1] == ',' ? ln - 1 : ln), labels);
			CHECK(sample(text, count) == v);
			prev = -1;
			seen = 0;
			series++;
		}
	}
	CHECK(series > 0);
}

static void test_histograms(void)
{
	struct snapshot s;
	struct prom_series ps;
	char *t;

	snap_init(&s);
	/* 3 waits of ~500 ns (below the first bucket), 2 of 3 ms, 1 of 100 s (past the last) */
	add_wait(&s, DEV_A, 10, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 500, 3);
	add_wait(&s, DEV_A, 10, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 3000000, 2);
	add_wait(&s, DEV_A, 10, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 100000000000ULL, 1);
	add_wait(&s, DEV_A, 11, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, 20000, 4);
	add_inode(&s, DEV_A, 10, "/a");
	prom_series_init(&ps, 20, 10);
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	t = render(&ps, PROM_FMT_TEXT);

	check_cumulative(t, "ilock_lock_wait_seconds");
	check_cumulative(t, "ilock_inode_lock_wait_seconds");
	/* the first bucket holds everything below it, +Inf everything */
	CHECK(sample(t, "ilock_lock_wait_seconds_bucket{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",le=\"1.024e-06\"}") == 3);
	CHECK(sample(t, "ilock_lock_wait_seconds_bucket{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",le=\"0.004194304\"}") == 5);
	CHECK(sample(t, "ilock_lock_wait_seconds_bucket{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",le=\"68.719476736\"}") == 5);
	CHECK(sample(t, "ilock_lock_wait_seconds_bucket{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",le=\"+Inf\"}") == 6);
	CHECK(sample(t, "ilock_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\"}") == 6);
	/* exact sum: 1500 ns + 6 ms + 100 s */
	CHECK(strstr(t, "ilock_lock_wait_seconds_sum{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\"} 100.006001500\n") != NULL);
	CHECK(sample(t, "ilock_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"exclusive\"}") == 4);
	/* no shared waits on inode 11: no such series */
	CHECK(!strstr(t, "mode=\"shared\",inode=\"7:0:11\""));
	CHECK(strstr(t, "mode=\"exclusive\",inode=\"7:0:11\",path=\"\"} ") != NULL);
	free(t);
	prom_series_free(&ps);
	snap_free(&s);
}

/* Sum of a metric's samples whose line contains every needle. */
static double sum_matching(const char *text, const char *name, const char *n1, const char *n2)
{
	double sum = 0;
	size_t n = strlen(name);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *eol = strchr(p, '\n'), *sp;
		char line[1024];
		size_t len = eol ? (size_t)(eol - p) : strlen(p);

		if (strncmp(p, name, n) || (p[n] != '{' && p[n] != ' ') || len >= sizeof(line))
			continue;
		memcpy(line, p, len);
		line[len] = 0;
		if ((n1 && !strstr(line, n1)) || (n2 && !strstr(line, n2)))
			continue;
		sp = strrchr(line, ' ');
		sum += strtod(sp + 1, NULL);
	}
	return sum;
}

static void test_fold_to_other(void)
{
	struct snapshot s, prev;
	struct prom_series ps;
	bool have_prev = false;
	char *t;

	snap_init(&s);
	snap_init(&prev);
	/* 6 inodes, waits 1..6 ms each once; K = 2 keeps the top two */
	for (uint64_t ino = 1; ino <= 6; ino++) {
		add_wait(&s, DEV_A, ino, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, ino * 1000000, 1);
		add_inode(&s, DEV_A, ino, "/f");
	}
	prom_series_init(&ps, 2, 10);
	CHECK(update(&ps, &s, &prev, &have_prev) == 0);
	CHECK_EQ_U(ps.ninodes, 2);
	CHECK_EQ_U(ps.contended_inodes, 6);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(sample(t, "ilock_inode_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",inode=\"7:0:6\",path=\"/f\"}") == 1);
	CHECK(sample(t, "ilock_inode_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",inode=\"7:0:5\",path=\"/f\"}") == 1);
	CHECK(sample(t, "ilock_inode_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",inode=\"other\",path=\"\"}") == 4);
	CHECK(strstr(t, "ilock_inode_lock_wait_seconds_sum{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",inode=\"other\",path=\"\"} 0.010000000\n") != NULL);
	CHECK(!strstr(t, "inode=\"7:0:4\""));
	/* per-inode series add up to the aggregate */
	CHECK(sum_matching(t, "ilock_inode_lock_wait_seconds_count", NULL, NULL) ==
	      sample(t, "ilock_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\"}"));
	free(t);

	/*
	 * Next interval inode 1 gets hot: admitted, counting from the previous
	 * collection; its earlier wait stays in "other", which never goes down.
	 */
	add_wait(&s, DEV_A, 1, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 50000000, 2);
	CHECK(update(&ps, &s, &prev, &have_prev) == 0);
	CHECK_EQ_U(ps.ninodes, 3);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(sample(t, "ilock_inode_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",inode=\"7:0:1\",path=\"/f\"}") == 2);
	CHECK(strstr(t, "ilock_inode_lock_wait_seconds_sum{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",inode=\"7:0:1\",path=\"/f\"} 0.100000000\n") != NULL);
	CHECK(sample(t, "ilock_inode_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",inode=\"other\",path=\"\"}") == 4);
	free(t);

	/* and from then on its own series grows; other does not move */
	add_wait(&s, DEV_A, 1, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1000000, 3);
	CHECK(update(&ps, &s, &prev, &have_prev) == 0);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(sample(t, "ilock_inode_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",inode=\"7:0:1\",path=\"/f\"}") == 5);
	CHECK(sample(t, "ilock_inode_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",inode=\"other\",path=\"\"}") == 4);
	CHECK(sum_matching(t, "ilock_inode_lock_wait_seconds_count", NULL, NULL) ==
	      sample(t, "ilock_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\"}"));
	check_cumulative(t, "ilock_inode_lock_wait_seconds");
	free(t);
	prom_series_free(&ps);
	snap_free(&s);
	snap_free(&prev);
}

/* 1,000 inodes, hot in turn: the inode label sets stay within 2K + "other". */
static void test_series_bound(void)
{
	struct snapshot s, prev;
	struct prom_series ps;
	bool have_prev = false;
	const unsigned k = 5;
	double prev_other = 0;

	snap_init(&s);
	snap_init(&prev);
	prom_series_init(&ps, k, 3);
	for (unsigned round = 0; round < 50; round++) {
		char *t;
		double other;

		for (uint64_t i = 0; i < 20; i++) {
			uint64_t ino = round * 20 + i + 1;

			add_wait(&s, round % 2 ? DEV_B : DEV_A, ino, ILOCK_CLASS_I_RWSEM,
				 (uint8_t)(i % 2), (i + 1) * 1000, 1);
			add_edge(&s, DEV_A, ino, "writer", 100 + (uint32_t)i, "reader",
				 200 + (uint32_t)round, 1, 1000);
			add_edge(&s, DEV_A, ino, "w", 1, "r", 1 + (uint32_t)round, 1, 1000);
		}
		CHECK(update(&ps, &s, &prev, &have_prev) == 0);
		CHECK(ps.ninodes <= 2 * k);
		t = render(&ps, PROM_FMT_OPENMETRICS);
		/* series: each tracked inode has one mode here; "other" one per (dev, mode) */
		CHECK(count_lines(t, "ilock_inode_lock_wait_seconds_count{") <= 2 * k + 2 * 2);
		CHECK(count_lines(t, "ilock_inode_lock_wait_seconds_bucket{") <=
		      (2 * k + 2 * 2) * PROM_NBUCKETS);
		/* "other" never goes down */
		other = sum_matching(t, "ilock_inode_lock_wait_seconds_count", "inode=\"other\"", NULL);
		CHECK(other >= prev_other);
		prev_other = other;
		/* pids never split pairs: at most 3 own series + folded */
		CHECK(count_lines(t, "ilock_serialised_waits_total{") <= 3 + 1);
		CHECK(!strstr(t, "pid=\""));
		free(t);
	}
	CHECK_EQ_U(ps.ninodes, 2 * k);
	CHECK_EQ_U(ps.contended_inodes, 1000);
	prom_series_free(&ps);
	snap_free(&s);
	snap_free(&prev);
}

#define SHARED_COUNT(inode) \
	"ilock_inode_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\"," \
	"mode=\"shared\",inode=\"" inode "\",path=\"/f\"}"
#define OTHER_COUNT \
	"ilock_inode_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\"," \
	"mode=\"shared\",inode=\"other\",path=\"\"}"
#define DEV_COUNT \
	"ilock_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\",mode=\"shared\"}"

/*
 * One collection a second (snapshot time sec), with waits on the given
 * inodes (0 ends the list); returns the rendered text.
 */
static char *idle_step(struct prom_series *ps, struct snapshot *s, struct snapshot *prev,
		       bool *have_prev, uint64_t sec, const uint64_t *inos)
{
	for (; *inos; inos++) {
		add_wait(s, DEV_A, *inos, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, *inos * 1000000, 1);
		add_inode(s, DEV_A, *inos, "/f");
	}
	s->mono_ns = sec * 1000000000ULL;
	CHECK(update(ps, s, prev, have_prev) == 0);
	return render(ps, PROM_FMT_TEXT);
}

/*
 * --series-idle: with both places taken (K = 1), a file that gets
 * hot later is named once a series idle for idle_ns gives its place up;
 * "other" never jumps, and the series left plus what the retired ones
 * counted make the device's total. 0 keeps the first two for good.
 */
/*
 * One renewal as the exporter makes it, a second after cur was read: cur's
 * tables retired into kept, a fresh read of one wait on each of inos (ns
 * each), the retired counts under it; cur becomes that read.
 */
static void renew_once(struct prom_series *ps, struct snapshot *kept, struct snapshot *cur,
		       const uint64_t *inos, const uint64_t *ns)
{
	struct snapshot fresh, eff;
	struct titles rt;

	snap_init(&fresh);
	snap_init(&eff);
	titles_init(&rt);
	CHECK(prom_series_retire(ps, kept, &rt, cur) == 0);
	for (; *inos; inos++, ns++)
		add_wait(&fresh, DEV_A, *inos, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, *ns, 1);
	fresh.mono_ns = cur->mono_ns + 1000000000ULL;
	CHECK(snap_copy(&eff, &fresh) == 0 && snap_merge_under(&eff, kept) == 0);
	CHECK(prom_series_update(ps, &eff, kept, NULL) == 0);
	CHECK(snap_copy(cur, &eff) == 0);
	titles_free(&rt);
	snap_free(&fresh);
	snap_free(&eff);
}

/* After test_idle_series' retirements, fresh tables (--renew): "other" does not jump. */
static void idle_renewal(struct prom_series *ps, struct snapshot *cur)
{
	const uint64_t third[] = { 3, 0 }, ns[] = { 3000000 };
	struct snapshot kept;
	char *t;

	snap_init(&kept);
	renew_once(ps, &kept, cur, third, ns);
	t = render(ps, PROM_FMT_TEXT);
	CHECK(sample(t, OTHER_COUNT) == 10);
	CHECK(sample(t, SHARED_COUNT("7:0:3")) == 10);
	CHECK(sample(t, SHARED_COUNT("7:0:1")) == 1);
	CHECK(sum_matching(t, "ilock_inode_lock_wait_seconds_count", NULL, NULL) + 2 ==
	      sample(t, DEV_COUNT));
	free(t);
	snap_free(&kept);
}

static void test_idle_series(void)
{
	for (int idle = 0; idle < 2; idle++) {
		const uint64_t both[] = { 1, 2, 0 }, first[] = { 1, 0 }, third[] = { 3, 0 };
		struct snapshot s, prev;
		struct prom_series ps;
		bool have_prev = false;
		double other = 0;
		char *t;

		snap_init(&s);
		snap_init(&prev);
		prom_series_init(&ps, 1, 10);
		ps.idle_ns = idle ? 10ULL * 1000000000ULL : 0;
		/* 2 (the hotter) admitted at 1 s, 1 at 2 s: each then has one wait of its own */
		free(idle_step(&ps, &s, &prev, &have_prev, 1, both));
		free(idle_step(&ps, &s, &prev, &have_prev, 2, first));
		CHECK_EQ_U(ps.ninodes, 2);
		for (uint64_t sec = 3; sec <= 20; sec++) {
			/* 2 last waited at 1 s, gone at 11 s; 1 at 2 s, gone at 12 s */
			unsigned gone = !idle ? 0 : sec >= 12 ? 2 : sec == 11 ? 1 : 0;

			t = idle_step(&ps, &s, &prev, &have_prev, sec, third);
			/* the inode series and the retired ones' counts add up to the device */
			CHECK(sum_matching(t, "ilock_inode_lock_wait_seconds_count", NULL, NULL) + gone ==
			      sample(t, DEV_COUNT));
			CHECK(sample(t, "ilock_exporter_inode_series_retired_total") == gone);
			CHECK(sample(t, SHARED_COUNT("7:0:2")) == (gone ? -1 : 1));
			CHECK(sample(t, SHARED_COUNT("7:0:1")) == (gone > 1 ? -1 : 1));
			/* 3 admitted at 12 s, in the place 2 gave up, counting from 11 s */
			CHECK(sample(t, SHARED_COUNT("7:0:3")) == (gone > 1 ? (double)sec - 11 : -1));
			/* "other": 1's wait before it was admitted, 3's until it was; it never jumps */
			CHECK(sample(t, OTHER_COUNT) == (gone > 1 ? 10 : (double)sec - 1));
			CHECK(sample(t, OTHER_COUNT) >= other);
			other = sample(t, OTHER_COUNT);
			free(t);
		}
		CHECK_EQ_U(ps.ninodes, idle ? 1 : 2);  /* 3, or 1 and 2 */
		CHECK_EQ_U(ps.inode_series_retired, idle ? 2 : 0);
		if (idle) {
			/* 1 hot again, admitted again, counting from the last collection */
			t = idle_step(&ps, &s, &prev, &have_prev, 21, first);
			CHECK(sample(t, SHARED_COUNT("7:0:1")) == 1);
			CHECK(sample(t, OTHER_COUNT) == 10);
			CHECK(sum_matching(t, "ilock_inode_lock_wait_seconds_count", NULL, NULL) + 2 ==
			      sample(t, DEV_COUNT));
			free(t);
			CHECK_EQ_U(ps.ninodes, 2);
			idle_renewal(&ps, &s);
		}
		prom_series_free(&ps);
		snap_free(&s);
		snap_free(&prev);
	}
}

/*
 * A PostgreSQL-like snapshot: the checkpointer (30) holding up two client
 * backends of one user and database (31: n waits, 32: 2) and a thread
 * without a title (33: 4).
 */
static void pg_pairs(struct snapshot *s, uint64_t n)
{
	snap_init(s);
	add_wait(s, DEV_A, 1, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1000, 1);
	add_inode(s, DEV_A, 1, "/f");
	add_edge(s, DEV_A, 1, "postgres", 30, "postgres", 31, n, n * 1000);
	add_edge(s, DEV_A, 1, "postgres", 30, "postgres", 32, 2, 2000);
	add_edge(s, DEV_A, 1, "postgres", 30, "postgres", 33, 4, 4000);
}

/* The series of fio's writers holding up its readers on DEV_A's i_rwsem. */
#define FIO_PAIR                                                                              \
	"ilock_serialised_waits_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\",holder_comm=" \
	"\"fio\",holder_role=\"fio\",holder_mode=\"exclusive\",waiter_comm=\"fio\","          \
	"waiter_role=\"fio\",waiter_mode=\"shared\"}"

static void test_pairs(void)
{
	struct snapshot s;
	struct prom_series ps;
	char *t;

	snap_init(&s);
	add_wait(&s, DEV_A, 1, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1000, 1);
	add_inode(&s, DEV_A, 1, "/f");
	/* one comm pair over two pids and two inodes: one series */
	add_edge(&s, DEV_A, 1, "fio", 10, "fio", 11, 3, 3000);
	add_edge(&s, DEV_A, 2, "fio", 12, "fio", 13, 2, 2000);
	add_edge(&s, DEV_A, 1, "pg\"w", 14, "fio", 11, 1, 500);
	/* a real pair both called "other" would clash with the folded series */
	add_edge(&s, DEV_A, 1, "other", 15, "other", 16, 7, 7000);
	prom_series_init(&ps, 2, 1);
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(sample(t, FIO_PAIR) == 5);
	/* --max-pairs 1: pg"w folds, and the "other"/"other" pair always does */
	CHECK(sample(t, "ilock_serialised_waits_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"holder_comm=\"other\",holder_role=\"other\",holder_mode=\"exclusive\",waiter_comm=\"other\",waiter_role=\"other\","
			"waiter_mode=\"shared\"}") == 8);
	CHECK(strstr(t, "ilock_serialised_wait_seconds_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"holder_comm=\"fio\",holder_role=\"fio\",holder_mode=\"exclusive\",waiter_comm=\"fio\",waiter_role=\"fio\","
			"waiter_mode=\"shared\"} 0.000005000\n") != NULL);
	CHECK_EQ_U(count_lines(t, "ilock_serialised_waits_total{"), 2);
	CHECK_EQ_U(ps.pairs_seen, 3);
	free(t);
	prom_series_free(&ps);

	/* a pair kept without its threads (a full table) adds to its commands' series */
	add_edge(&s, DEV_A, 1, "fio", ILOCK_PID_FOLDED, "fio", ILOCK_PID_FOLDED, 4, 4000);
	prom_series_init(&ps, 2, 1);
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(sample(t, FIO_PAIR) == 9);
	CHECK(strstr(t, "4294967295") == NULL);
	free(t);
	prom_series_free(&ps);
	snap_free(&s);

	/* io_uring's workers, named after the threads they serve: one series, not one each */
	snap_init(&s);
	add_wait(&s, DEV_A, 1, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1000, 1);
	add_inode(&s, DEV_A, 1, "/f");
	add_edge(&s, DEV_A, 1, "iou-wrk-11255", 20, "fio", 11, 3, 3000);
	add_edge(&s, DEV_A, 1, "iou-wrk-11374", 21, "fio", 11, 2, 2000);
	prom_series_init(&ps, 8, 1);
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(sample(t, "ilock_serialised_waits_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"holder_comm=\"iou-wrk\",holder_role=\"iou-wrk\",holder_mode=\"exclusive\",waiter_comm=\"fio\",waiter_role=\"fio\","
			"waiter_mode=\"shared\"}") == 5);
	CHECK_EQ_U(count_lines(t, "ilock_serialised_waits_total{"), 1);
	free(t);
	prom_series_free(&ps);
	snap_free(&s);

	/*
	 * Process titles: a pair by the two roles, client backends of one
	 * user and database together; the role a thread had at its first
	 * update stays, so a count never moves to another series.
	 */
	{
		struct titles ti;
		struct snapshot prev;

		titles_init(&ti);
		CHECK(!titles_put(&ti, 30, "postgres", "postgres: checkpointer"));
		CHECK(!titles_put(&ti, 31, "postgres", "postgres: bob shop [local] UPDATE"));
		CHECK(!titles_put(&ti, 32, "postgres", "postgres: bob shop [local] idle"));
		pg_pairs(&s, 3);
		prom_series_init(&ps, 8, 8);
		ps.titles = &ti;
		CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
		t = render(&ps, PROM_FMT_TEXT);
		CHECK(sample(t, "ilock_serialised_waits_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
				"holder_comm=\"postgres\",holder_role=\"postgres: checkpointer\","
				"holder_mode=\"exclusive\",waiter_comm=\"postgres\","
				"waiter_role=\"postgres: bob shop\",waiter_mode=\"shared\"}") == 5);
		CHECK(sample(t, "ilock_serialised_waits_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
				"holder_comm=\"postgres\",holder_role=\"postgres: checkpointer\","
				"holder_mode=\"exclusive\",waiter_comm=\"postgres\","
				"waiter_role=\"postgres\",waiter_mode=\"shared\"}") == 4);
		CHECK_EQ_U(count_lines(t, "ilock_serialised_waits_total{"), 2);
		CHECK_EQ_U(ps.pairs_seen, 2);
		free(t);
		/* without the table: by comm alone, one series */
		prom_series_free(&ps);
		prom_series_init(&ps, 8, 8);
		CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
		t = render(&ps, PROM_FMT_TEXT);
		CHECK(sample(t, "ilock_serialised_waits_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
				"holder_comm=\"postgres\",holder_role=\"postgres\","
				"holder_mode=\"exclusive\",waiter_comm=\"postgres\","
				"waiter_role=\"postgres\",waiter_mode=\"shared\"}") == 9);
		free(t);
		prom_series_free(&ps);
		/* a second update with more waits: the same series go on from where they were */
		prom_series_init(&ps, 8, 8);
		ps.titles = &ti;
		CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
		prev = s;
		pg_pairs(&s, 6);
		CHECK(prom_series_update(&ps, &s, &prev, NULL) == 0);
		t = render(&ps, PROM_FMT_TEXT);
		CHECK(sample(t, "ilock_serialised_waits_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
				"holder_comm=\"postgres\",holder_role=\"postgres: checkpointer\","
				"holder_mode=\"exclusive\",waiter_comm=\"postgres\","
				"waiter_role=\"postgres: bob shop\",waiter_mode=\"shared\"}") == 8);
		CHECK_EQ_U(count_lines(t, "ilock_serialised_waits_total{"), 2);
		free(t);
		prom_series_free(&ps);
		snap_free(&prev);
		titles_free(&ti);
	}
	snap_free(&s);
}

static void add_range_edge(struct snapshot *s, uint32_t dev, uint64_t ino, uint8_t class,
			   uint8_t range, uint64_t count, uint64_t ns)
{
	struct ilock_edge_key k = { .ino = ino, .dev = dev, .class = class,
				    .holder_mode = ILOCK_MODE_EXCL, .waiter_mode = ILOCK_MODE_SHARED,
				    .holder_pid = 10, .holder_tgid = 10, .waiter_pid = 11,
				    .waiter_tgid = 11, .range = range };
	struct ilock_edge_stats st = { .count = count, .total_ns = ns, .max_ns = ns };

	snprintf(k.holder_comm, sizeof(k.holder_comm), "w");
	snprintf(k.waiter_comm, sizeof(k.waiter_comm), "r");
	CHECK(snap_add_edge(s, &k, &st) == 0);
}

/* Range-lock headroom per (device, class): overlapping, disjoint, unknown. */
/* Waits in progress: the oldest one's age and the stalls, only when the iterator read them. */
static void test_waiting_now(void)
{
	struct snapshot s;
	struct prom_series ps;
	struct ilock_waiting w[2] = {};
	char *t;

	snap_init(&s);
	prom_series_init(&ps, 20, 10);
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(!strstr(t, "ilock_oldest_wait_seconds"));  /* not read: not exported as 0 */
	free(t);

	s.waiting.available = true;
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(sample(t, "ilock_oldest_wait_seconds") == 0);
	CHECK(sample(t, "ilock_stalled_waits") == 0);
	CHECK(strstr(t, "# TYPE ilock_oldest_wait_seconds gauge\n") != NULL);
	free(t);

	w[0].waiter_state = w[1].waiter_state = 0x2;
	w[0].start_ns = 1000;
	w[0].now_ns = 1000 + 2500000000ULL;
	w[1].start_ns = 1000;
	w[1].now_ns = 1000 + 5000000;
	CHECK(waiting_add_raw(&s.waiting, w, sizeof(w), 0) == 0);
	waiting_finish(&s.waiting);
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(strstr(t, "\nilock_oldest_wait_seconds 2.500000000\n") != NULL);
	CHECK(sample(t, "ilock_stalled_waits") == 1);
	free(t);
	prom_series_free(&ps);
	snap_free(&s);
}

/* Waits kept without their inode (a full locks table): in the aggregate, never a series of their own. */
static void test_folded_inodes(void)
{
	struct prom_series ps;
	struct snapshot s;
	char *t;

	snap_init(&s);
	add_wait(&s, DEV_A, 1, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1000000, 1);
	add_inode(&s, DEV_A, 1, "/f");
	/* the folded row waited most, and still has no series of its own */
	add_wait(&s, DEV_A, ILOCK_INO_FOLDED, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 9000000, 3);
	prom_series_init(&ps, 2, 10);
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	CHECK_EQ_U(ps.ninodes, 1);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(sample(t, "ilock_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\"}") == 4);
	CHECK(sample(t, "ilock_inode_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",inode=\"other\",path=\"\"}") == 3);
	CHECK(strstr(t, "18446744073709551615") == NULL && strstr(t, "others") == NULL);
	free(t);
	prom_series_free(&ps);
	snap_free(&s);
}

/* The slot tables' fill, as gauges to alert on before one is full. */
static void test_tables(void)
{
	struct snapshot s;
	struct prom_series ps;
	char *t;

	snap_init(&s);
	prom_series_init(&ps, 20, 10);
	s.tables[TABLE_LOCKS] = (struct table_use){ .used = 120, .cap = 16384 };
	s.tables[TABLE_PAIRS] = (struct table_use){ .used = 16384, .cap = 16384 };
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(sample(t, "ilock_table_entries{table=\"locks\"}") == 120);
	CHECK(sample(t, "ilock_table_entries{table=\"pairs\"}") == 16384);
	CHECK(sample(t, "ilock_table_capacity{table=\"locks\"}") == 16384);
	CHECK(sample(t, "ilock_table_capacity{table=\"pairs\"}") == 16384);
	CHECK(strstr(t, "# TYPE ilock_table_entries gauge\n") != NULL);
	CHECK(strstr(t, "# TYPE ilock_table_capacity gauge\n") != NULL);
	CHECK_EQ_U(count_lines(t, "ilock_table_entries{"), TABLE_MAX);
	/* the gauges after them have no table label left over */
	CHECK(strstr(t, "\nilock_contended_inodes 0\n") != NULL);
	free(t);
	/* the later read's, not a sum */
	s.tables[TABLE_LOCKS].used = 7;
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	t = render(&ps, PROM_FMT_OPENMETRICS);
	CHECK(sample(t, "ilock_table_entries{table=\"locks\"}") == 7);
	free(t);
	prom_series_free(&ps);
	snap_free(&s);
}

static void test_ranges(void)
{
	const char *a = "{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\",range=";
	struct snapshot s;
	struct prom_series ps;
	char buf[256];
	char *t;

	snap_init(&s);
	add_wait(&s, DEV_A, 1, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1000, 10);
	add_wait(&s, DEV_A, 2, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_EXCL, 1000, 3);
	add_wait(&s, DEV_B, 3, ILOCK_CLASS_INVALIDATE, ILOCK_MODE_EXCL, 1000, 1);
	add_wait(&s, DEV_A, 4, ILOCK_CLASS_JBD2_WAIT, ILOCK_MODE_EXCL, 1000, 1);
	add_inode(&s, DEV_A, 1, "/a");
	/* two inodes of one group add up */
	add_range_edge(&s, DEV_A, 1, ILOCK_CLASS_I_RWSEM, ILOCK_RANGE_DISJOINT, 5, 5000);
	add_range_edge(&s, DEV_A, 2, ILOCK_CLASS_I_RWSEM, ILOCK_RANGE_DISJOINT, 2, 1000);
	add_range_edge(&s, DEV_A, 1, ILOCK_CLASS_I_RWSEM, ILOCK_RANGE_OVERLAP, 2, 2000);
	/* every missing side counts as unknown */
	add_range_edge(&s, DEV_A, 1, ILOCK_CLASS_I_RWSEM, ILOCK_RANGE_NO_WAITER, 1, 100);
	add_range_edge(&s, DEV_A, 2, ILOCK_CLASS_I_RWSEM, ILOCK_RANGE_NO_HOLDER, 1, 200);
	add_range_edge(&s, DEV_A, 1, ILOCK_CLASS_I_RWSEM, ILOCK_RANGE_NO_BOTH, 1, 300);
	add_range_edge(&s, DEV_A, 4, ILOCK_CLASS_JBD2_WAIT, ILOCK_RANGE_NO_BOTH, 1, 1000);
	add_wait(&s, DEV_A, 5, ILOCK_CLASS_XFS_ILOCK, ILOCK_MODE_EXCL, 1000, 1);
	add_range_edge(&s, DEV_A, 5, ILOCK_CLASS_XFS_ILOCK, ILOCK_RANGE_DISJOINT, 1, 1000);
	CHECK(snap_ranges_from_edges(&s) == 0);  /* as the tracer's read does */
	prom_series_init(&ps, 20, 10);
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	t = render(&ps, PROM_FMT_TEXT);

	snprintf(buf, sizeof(buf), "ilock_range_waits_total%s\"disjoint\"}", a);
	CHECK(sample(t, buf) == 7);
	snprintf(buf, sizeof(buf), "ilock_range_waits_total%s\"overlapping\"}", a);
	CHECK(sample(t, buf) == 2);
	snprintf(buf, sizeof(buf), "ilock_range_waits_total%s\"unknown\"}", a);
	CHECK(sample(t, buf) == 3);
	snprintf(buf, sizeof(buf), "ilock_range_wait_seconds_total%s\"disjoint\"} 0.000006000\n", a);
	CHECK(strstr(t, buf) != NULL);
	snprintf(buf, sizeof(buf), "ilock_range_wait_seconds_total%s\"unknown\"} 0.000000600\n", a);
	CHECK(strstr(t, buf) != NULL);
	/* a group with waits and no pairs yet: all three series, at zero */
	CHECK(sample(t, "ilock_range_waits_total{fs=\"unknown\",device=\"7:1\",class=\"invalidate_lock\","
			"range=\"disjoint\"}") == 0);
	CHECK_EQ_U(count_lines(t, "ilock_range_waits_total{"), 6);
	CHECK_EQ_U(count_lines(t, "ilock_range_wait_seconds_total{"), 6);
	/* the journal waits have no byte ranges */
	CHECK(!strstr(t, "class=\"jbd2_wait\",range="));
	/* nor the ILOCK's, a lock on metadata */
	CHECK(!strstr(t, "class=\"xfs_ilock\",range="));
	CHECK(strstr(t, "class=\"xfs_ilock\"") != NULL);
	CHECK(strstr(t, "# TYPE ilock_range_wait_seconds_total counter\n") != NULL);
	free(t);
	prom_series_free(&ps);
	snap_free(&s);
}

static void add_op_edge(struct snapshot *s, uint64_t ino, uint8_t class, const char *holder,
			uint8_t hop, uint8_t hmode, uint8_t wop, uint8_t wmode, uint64_t count)
{
	struct ilock_edge_key k = { .ino = ino, .dev = DEV_A, .class = class, .holder_mode = hmode,
				    .waiter_mode = wmode, .holder_pid = 10, .waiter_pid = 11,
				    .holder_op = hop, .waiter_op = wop };
	struct ilock_edge_stats st = { .count = count, .total_ns = count * 1000, .max_ns = 1000 };

	snprintf(k.holder_comm, sizeof(k.holder_comm), "%s", holder);
	snprintf(k.waiter_comm, sizeof(k.waiter_comm), "r");
	CHECK(snap_add_edge(s, &k, &st) == 0);
}

/* Pairs by op and mode: commands, threads and inodes summed, every combination its series. */
static void test_op_pairs(void)
{
	const char *wr = "ilock_serialised_op_waits_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			 "holder_op=\"buffered-write\",holder_mode=\"exclusive\","
			 "waiter_op=\"buffered-read\",waiter_mode=\"shared\"}";
	struct snapshot s, s2;
	struct prom_series ps;
	char *t;

	snap_init(&s);
	add_wait(&s, DEV_A, 1, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1000, 10);
	add_wait(&s, DEV_A, 4, ILOCK_CLASS_JBD2_WAIT, ILOCK_MODE_EXCL, 1000, 1);
	add_inode(&s, DEV_A, 1, "/a");
	/* two writers' commands, two inodes: one series */
	add_op_edge(&s, 1, ILOCK_CLASS_I_RWSEM, "fio", ILOCK_OP_BUFFERED_WRITE, ILOCK_MODE_EXCL,
		    ILOCK_OP_BUFFERED_READ, ILOCK_MODE_SHARED, 5);
	add_op_edge(&s, 2, ILOCK_CLASS_I_RWSEM, "mysqld", ILOCK_OP_BUFFERED_WRITE, ILOCK_MODE_EXCL,
		    ILOCK_OP_BUFFERED_READ, ILOCK_MODE_SHARED, 3);
	/* another holder op, another series; so is another holder mode */
	add_op_edge(&s, 1, ILOCK_CLASS_I_RWSEM, "fio", ILOCK_OP_DIRECT_READ, ILOCK_MODE_EXCL,
		    ILOCK_OP_BUFFERED_READ, ILOCK_MODE_SHARED, 2);
	add_op_edge(&s, 1, ILOCK_CLASS_I_RWSEM, "fio", ILOCK_OP_BUFFERED_WRITE,
		    ILOCK_MODE_QUEUED_EXCL, ILOCK_OP_BUFFERED_READ, ILOCK_MODE_SHARED, 1);
	/* the journal: fsync behind the commit */
	add_op_edge(&s, 4, ILOCK_CLASS_JBD2_WAIT, "jbd2/loop0-8", ILOCK_OP_JOURNAL_COMMIT,
		    ILOCK_MODE_EXCL, ILOCK_OP_FSYNC, ILOCK_MODE_EXCL, 1);
	prom_series_init(&ps, 20, 10);
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(sample(t, wr) == 8);
	CHECK(strstr(t, "ilock_serialised_op_wait_seconds_total{fs=\"xfs\",device=\"7:0\","
			"class=\"i_rwsem\",holder_op=\"buffered-write\",holder_mode=\"exclusive\","
			"waiter_op=\"buffered-read\",waiter_mode=\"shared\"} 0.000008000\n") != NULL);
	CHECK(sample(t, "ilock_serialised_op_waits_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"holder_op=\"direct-read\",holder_mode=\"exclusive\",waiter_op=\"buffered-read\","
			"waiter_mode=\"shared\"}") == 2);
	CHECK(sample(t, "ilock_serialised_op_waits_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"holder_op=\"buffered-write\",holder_mode=\"queued-exclusive\","
			"waiter_op=\"buffered-read\",waiter_mode=\"shared\"}") == 1);
	CHECK(sample(t, "ilock_serialised_op_waits_total{fs=\"xfs\",device=\"7:0\",class=\"jbd2_wait\","
			"holder_op=\"journal-commit\",holder_mode=\"exclusive\",waiter_op=\"fsync\","
			"waiter_mode=\"exclusive\"}") == 1);
	CHECK_EQ_U(count_lines(t, "ilock_serialised_op_waits_total{"), 4);
	CHECK(strstr(t, "# TYPE ilock_serialised_op_waits_total counter\n") != NULL);
	free(t);

	/* the next read grows the counter; nothing disappears */
	snap_init(&s2);
	CHECK(snap_copy(&s2, &s) == 0);
	add_op_edge(&s2, 1, ILOCK_CLASS_I_RWSEM, "fio", ILOCK_OP_BUFFERED_WRITE, ILOCK_MODE_EXCL,
		    ILOCK_OP_BUFFERED_READ, ILOCK_MODE_SHARED, 4);
	CHECK(prom_series_update(&ps, &s2, &s, NULL) == 0);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(sample(t, wr) == 12);
	CHECK_EQ_U(count_lines(t, "ilock_serialised_op_waits_total{"), 4);
	free(t);
	prom_series_free(&ps);
	snap_free(&s);
	snap_free(&s2);
}

static void test_formats(void)
{
	struct snapshot s;
	struct prom_series ps;
	struct ilock_key hk = { .ino = 1, .dev = DEV_A, .class = ILOCK_CLASS_I_RWSEM,
				.mode = ILOCK_MODE_EXCL };
	struct ilock_stats hold = { .count = 2, .total_ns = 4000 };
	char *text, *om;
	size_t ol;

	snap_init(&s);
	add_wait(&s, DEV_A, 1, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1000, 1);
	hold.hist[ilock_hist_slot(2000)] = 2;
	CHECK(snap_add_hold(&s, &hk, &hold) == 0);
	s.counters[ILOCK_LOST_WAIT_MAP_FULL] = 3;
	prom_series_init(&ps, 2, 10);
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	text = render(&ps, PROM_FMT_TEXT);
	om = render(&ps, PROM_FMT_OPENMETRICS);

	/* OpenMetrics: ends with # EOF, counter families without _total, info type, units */
	ol = strlen(om);
	CHECK(ol > 6 && !strcmp(om + ol - 6, "# EOF\n"));
	CHECK(strstr(om, "# TYPE ilock_lost_events counter\n") != NULL);
	CHECK(strstr(om, "\nilock_lost_events_total{reason=\"wait_map_full\"} 3\n") != NULL);
	CHECK(strstr(om, "# TYPE ilock_build info\n") != NULL);
	CHECK(strstr(om, "\nilock_build_info{version=\"0.1.0\",kernel=\"6.18.0-test\","
			"wait_sampling=\"off\"} 1\n") != NULL);
	CHECK(strstr(om, "# UNIT ilock_lock_wait_seconds seconds\n") != NULL);
	CHECK(strstr(om, "# TYPE ilock_bpf_run_seconds counter\n# UNIT ilock_bpf_run_seconds seconds\n"));
	CHECK(strstr(om, "\nilock_bpf_run_seconds_total 1.500000000\n") != NULL);
	CHECK(!strstr(om, "_total counter"));
	/* text 0.0.4: no EOF, TYPE names the sample, info is a gauge, no UNIT */
	CHECK(!strstr(text, "# EOF"));
	CHECK(strstr(text, "# TYPE ilock_lost_events_total counter\n") != NULL);
	CHECK(strstr(text, "# TYPE ilock_build_info gauge\n") != NULL);
	CHECK(!strstr(text, "# UNIT"));
	/* the same samples otherwise */
	CHECK(strstr(text, "\nilock_lost_events_total{reason=\"wait_map_full\"} 3\n") != NULL);
	/* every lost reason is there, zero or not */
	CHECK_EQ_U(count_lines(om, "ilock_lost_events_total{"), ILOCK_COUNTER_MAX - ILOCK_FIRST_LOST);
	/* XFS holds: a histogram and acquisitions */
	CHECK(sample(text, "ilock_lock_acquisitions_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			   "mode=\"exclusive\"}") == 2);
	check_cumulative(text, "ilock_lock_hold_seconds");
	/* OpenMetrics does not allow a family twice (interleaving) */
	CHECK_EQ_U(count_lines(om, "# TYPE ilock_lock_wait_seconds "), 1);
	free(text);
	free(om);
	{
		/* --wait-sample: the info says the wait series are estimates */
		struct prom_meta ms = { .version = "0.1.0", .kernel = "k",
					.wait_sampling = "1/16 > 250/s/lock/cpu" };
		struct prom_buf b;

		pbuf_init(&b);
		prom_render(&b, PROM_FMT_TEXT, &ps, &ms);
		CHECK(!b.oom && strstr(b.data, "\nilock_build_info{version=\"0.1.0\",kernel=\"k\","
				       "wait_sampling=\"1/16 > 250/s/lock/cpu\"} 1\n") != NULL);
		pbuf_free(&b);
	}

	/* --top-inodes 0: no per-inode family at all */
	prom_series_free(&ps);
	prom_series_init(&ps, 0, 10);
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	text = render(&ps, PROM_FMT_TEXT);
	CHECK(!strstr(text, "ilock_inode_lock_wait_seconds_"));
	free(text);
	prom_series_free(&ps);
	snap_free(&s);
}

/* The fs label is decided once per device, so label sets never change. */
/*
 * Two files in turn in one inode number (two generations): one series,
 * summed, under the first path, not two series with one label set.
 */
static void test_generations_fold(void)
{
	struct snapshot s;
	struct prom_series ps;
	struct ilock_key k = { .ino = 9, .dev = DEV_A, .class = ILOCK_CLASS_I_RWSEM,
			       .mode = ILOCK_MODE_SHARED };
	struct ilock_stats st = { .count = 1, .total_ns = 1000, .max_ns = 1000 };
	struct inode_meta m = { .ino = 9, .dev = DEV_A, .magic = ILOCK_XFS_SB_MAGIC };
	char *t;

	st.hist[ilock_hist_slot(1000)] = 1;
	snap_init(&s);
	for (uint32_t gen = 1; gen <= 2; gen++) {
		k.gen = m.gen = gen;
		snprintf(m.path, sizeof(m.path), gen == 1 ? "/first" : "/second");
		CHECK(snap_add_wait(&s, &k, &st) == 0);
		CHECK(snap_add_inode(&s, &m) == 0);
	}
	CHECK_EQ_U(s.nlocks, 2);
	prom_series_init(&ps, 2, 10);
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	CHECK_EQ_U(ps.ninodes, 1);
	CHECK_EQ_U(ps.contended_inodes, 1);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK_EQ_U(count_lines(t, "ilock_inode_lock_wait_seconds_count{"), 1);
	CHECK(sample(t, "ilock_inode_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			"mode=\"shared\",inode=\"7:0:9\",path=\"/first\"}") == 2);
	free(t);
	prom_series_free(&ps);
	snap_free(&s);
}

static void test_sticky_labels(void)
{
	struct snapshot s;
	struct prom_series ps;
	struct mount_table mt = {};
	char *t;

	snap_init(&s);
	CHECK(mounts_parse(&mt, "36 1 7:0 / /mnt/x rw - xfs /dev/loop0 rw\n") == 0);
	add_wait(&s, DEV_A, 9, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1000, 1);
	add_inode(&s, DEV_A, 9, "/dir/file");
	prom_series_init(&ps, 2, 10);
	CHECK(prom_series_update(&ps, &s, NULL, &mt) == 0);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(strstr(t, "inode=\"7:0:9\",path=\"/mnt/x/dir/file\"") != NULL);
	free(t);
	/* unmounted later: the label keeps its first value */
	CHECK(prom_series_update(&ps, &s, NULL, NULL) == 0);
	t = render(&ps, PROM_FMT_TEXT);
	CHECK(strstr(t, "inode=\"7:0:9\",path=\"/mnt/x/dir/file\"") != NULL);
	CHECK_STR(prom_dev_fs(&ps, DEV_A), "xfs");
	free(t);
	mounts_free(&mt);
	prom_series_free(&ps);
	snap_free(&s);
}

static void test_buf(void)
{
	struct prom_buf b;

	pbuf_init(&b);
	for (int i = 0; i < 10000; i++)
		pbuf_printf(&b, "%d,", i);
	CHECK(!b.oom);
	CHECK(b.len == strlen(b.data));
	CHECK(!strncmp(b.data, "0,1,2,", 6));
	CHECK(strstr(b.data, ",9999,") != NULL);
	pbuf_free(&b);
}

/*
 * contrib/ilock-rules.yml alerts on the reasons that leave waits out of the
 * counts: its list must be counter_undercounts', no more and no fewer.
 */
static void test_rules_alert_on_undercounts(void)
{
	FILE *f = fopen("contrib/ilock-rules.yml", "r");
	char line[1024], *alt = NULL;

	CHECK(f != NULL);
	if (!f)
		return;
	while (!alt && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "ilock_lost_events_total{reason=~\"");

		if (p) {
			p += strlen("ilock_lost_events_total{reason=~\"");
			p[strcspn(p, "\"")] = 0;
			alt = strdup(p);
		}
	}
	fclose(f);
	CHECK(alt != NULL);
	if (!alt)
		return;
	for (int c = ILOCK_FIRST_LOST; c < ILOCK_COUNTER_MAX; c++) {
		char *save = NULL, *copy = strdup(alt);
		bool listed = false;

		for (char *t = strtok_r(copy, "|", &save); t; t = strtok_r(NULL, "|", &save))
			listed |= !strcmp(t, counter_name(c));
		free(copy);
		if (listed != counter_undercounts(c))
			fprintf(stderr, "rules and counter_undercounts differ on %s\n", counter_name(c));
		CHECK(listed == counter_undercounts(c));
	}
	free(alt);
}


/* The space before a sample line's value (label values may hold spaces), or NULL. */
static const char *last_space(const char *line)
{
	const char *sp = NULL;

	for (const char *c = line; *c && *c != '\n'; c++)
		if (*c == ' ')
			sp = c;
	return sp;
}

/*
 * Every sample of before that may never go down (a counter, a histogram's
 * buckets, count and sum) is in after, at least as large. The number of
 * them checked.
 */
static unsigned check_never_down(const char *before, const char *after)
{
	unsigned n = 0;

	for (const char *p = before; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *sp = last_space(p);
		char prefix[1024];

		if (*p == '#' || !sp || (size_t)(sp - p) >= sizeof(prefix))
			continue;
		memcpy(prefix, p, (size_t)(sp - p));
		prefix[sp - p] = 0;
		if (!strstr(prefix, "_total") && !strstr(prefix, "_count") &&
		    !strstr(prefix, "_bucket") && !strstr(prefix, "_sum"))
			continue;
		if (!(sample(after, prefix) >= strtod(sp + 1, NULL))) {
			fprintf(stderr, "went down or away: %s %s -> %g\n", prefix, sp + 1,
				sample(after, prefix));
			CHECK(0);
		}
		n++;
	}
	return n;
}

/* The sum of every sample of a family (name + "{"). */
static double family_sum(const char *text, const char *name)
{
	size_t n = strlen(name);
	double sum = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, name, n) && p[n] == '{' && last_space(p))
			sum += strtod(last_space(p) + 1, NULL);
	return sum;
}

static void add_op_pair(struct snapshot *s, uint64_t ino, const char *holder, uint32_t hpid,
			const char *waiter, uint32_t wpid, uint8_t hop, uint8_t wop, uint64_t count)
{
	struct ilock_edge_key k = { .ino = ino, .dev = DEV_A, .class = ILOCK_CLASS_I_RWSEM,
				    .holder_mode = ILOCK_MODE_EXCL, .waiter_mode = ILOCK_MODE_SHARED,
				    .holder_pid = hpid, .holder_tgid = hpid, .waiter_pid = wpid,
				    .waiter_tgid = wpid, .holder_op = hop, .waiter_op = wop };
	struct ilock_edge_stats st = { .count = count, .total_ns = count * 1000, .max_ns = 1000 };

	snprintf(k.holder_comm, sizeof(k.holder_comm), "%s", holder);
	snprintf(k.waiter_comm, sizeof(k.waiter_comm), "%s", waiter);
	CHECK(snap_add_edge(s, &k, &st) == 0);
}

#define IDLE_PAIR(h)                                                                       \
	"ilock_serialised_waits_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\",holder_comm=\"" \
	h "\",holder_role=\"" h "\",holder_mode=\"exclusive\",waiter_comm=\"reader\","          \
	"waiter_role=\"reader\",waiter_mode=\"shared\"}"

#define IDLE_OTHER_PAIR                                                                    \
	"ilock_serialised_waits_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\",holder_comm=" \
	"\"other\",holder_role=\"other\",holder_mode=\"exclusive\",waiter_comm=\"other\","   \
	"waiter_role=\"other\",waiter_mode=\"shared\"}"

/* --series-idle for pairs (--max-pairs 1): the same as test_idle_series' inodes. */
static void test_idle_pairs(void)
{
	struct snapshot s, prev;
	struct prom_series ps;
	bool have_prev = false;
	double other = 0;

	snap_init(&s);
	snap_init(&prev);
	prom_series_init(&ps, 1, 1);
	ps.idle_ns = 10ULL * 1000000000ULL;
	for (uint64_t sec = 1; sec <= 20; sec++) {
		/* a's pair waited at 1 s only, gone at 11 s; b's every second from 2 s */
		unsigned gone = sec >= 11;
		char *t;

		add_edge(&s, DEV_A, 1, sec == 1 ? "a" : "b", sec == 1 ? 10 : 11, "reader", 20, 1, 1000);
		add_wait(&s, DEV_A, 1, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1000, 1);
		add_inode(&s, DEV_A, 1, "/f");
		s.mono_ns = sec * 1000000000ULL;
		CHECK(update(&ps, &s, &prev, &have_prev) == 0);
		t = render(&ps, PROM_FMT_TEXT);
		CHECK(sample(t, IDLE_PAIR("a")) == (gone ? -1 : 1));
		/* b admitted at 12 s, in the place a gave up, counting from 11 s */
		CHECK(sample(t, IDLE_PAIR("b")) == (sec >= 12 ? (double)sec - 11 : -1));
		if (sec > 1) {
			CHECK(sample(t, IDLE_OTHER_PAIR) == (sec >= 12 ? 10 : (double)sec - 1));
			CHECK(sample(t, IDLE_OTHER_PAIR) >= other);
			other = sample(t, IDLE_OTHER_PAIR);
		}
		CHECK(sample(t, "ilock_exporter_pair_series_retired_total") == gone);
		/* the series left and what the retired one counted: every wait */
		CHECK(family_sum(t, "ilock_serialised_waits_total") + gone == sec);
		free(t);
	}
	CHECK_EQ_U(ps.npairs, 1);
	prom_series_free(&ps);
	snap_free(&s);
	snap_free(&prev);
}


/*
 * ilock_contended_inodes across renewals: an inode folded away at one and
 * waiting again in the fresh tables counts once, over any number of them.
 */
static void test_contended_across_renewals(void)
{
	const uint64_t first[] = { 3, 50, 10, 0 }, second[] = { 3, 0 };
	const uint64_t ns1[] = { 1000, 900000, 1000 }, ns2[] = { 1000 };
	struct prom_series ps;
	struct snapshot cur, kept;

	snap_init(&cur);
	snap_init(&kept);
	for (uint64_t ino = 1; ino <= 10; ino++)
		add_wait(&cur, DEV_A, ino, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, ino * 1000, 1);
	prom_series_init(&ps, 1, 1);
	CHECK(prom_series_update(&ps, &cur, NULL, NULL) == 0);
	CHECK_EQ_U(ps.ninodes, 1);  /* 10, the hottest */
	CHECK_EQ_U(ps.contended_inodes, 10);
	/* 1-9 folded away; 3 waits again, 50 is new (and admitted), 10 keeps its row */
	renew_once(&ps, &kept, &cur, first, ns1);
	CHECK_EQ_U(ps.retired_inodes, 9);
	CHECK_EQ_U(ps.contended_inodes, 11);
	/* again: 3 folded away a second time, and waiting a third */
	renew_once(&ps, &kept, &cur, second, ns2);
	CHECK_EQ_U(ps.retired_inodes, 9);
	CHECK_EQ_U(ps.contended_inodes, 11);
	prom_series_free(&ps);
	snap_free(&cur);
	snap_free(&kept);
}

/*
 * ilock export --renew: the old tables' counts, compacted, under the fresh
 * tables' reads. Nothing exported goes down or away, titles keep their
 * roles though their threads are gone, and what is kept stays small.
 */
static void test_retire(void)
{
	struct prom_series ps;
	struct snapshot s1, r, fresh, eff;
	struct titles ti, rt;
	char *t1, *t2;
	size_t ids = 0;

	snap_init(&s1);
	snap_init(&r);
	snap_init(&fresh);
	snap_init(&eff);
	titles_init(&ti);
	titles_init(&rt);
	CHECK(!titles_put(&ti, 30, "postgres", "postgres: checkpointer"));
	CHECK(!titles_put(&ti, 31, "postgres", "postgres: bob shop [local] UPDATE"));
	CHECK(!titles_put(&ti, 32, "postgres", "postgres: bob shop [local] idle"));
	CHECK(!titles_put(&ti, 40, "fio", ""));
	for (uint64_t ino = 1; ino <= 20; ino++) {
		char p[32];

		snprintf(p, sizeof(p), "/f%" PRIu64, ino);
		add_inode(&s1, DEV_A, ino, p);
		add_wait(&s1, DEV_A, ino, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 1000 * ino, 1 + ino % 3);
		add_wait(&s1, DEV_A, ino, ILOCK_CLASS_XFS_ILOCK, ILOCK_MODE_EXCL, 700, 1);
		/* two client backends and a thread without a title, on every file */
		add_op_pair(&s1, ino, "postgres", 30, "postgres", 31, ILOCK_OP_BUFFERED_WRITE,
			    ILOCK_OP_BUFFERED_READ, 2);
		add_op_pair(&s1, ino, "postgres", 30, "postgres", 32, ILOCK_OP_BUFFERED_WRITE,
			    ILOCK_OP_BUFFERED_READ, 1);
		add_op_pair(&s1, ino, "fio", 40, "postgres", 31, ILOCK_OP_FSYNC,
			    ILOCK_OP_BUFFERED_READ, 1);
	}
	add_wait(&s1, DEV_A, ILOCK_INO_FOLDED, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 5000, 4);
	s1.counters[ILOCK_LOST_WAIT_INODES] = 4;
	s1.tables[TABLE_LOCKS] = (struct table_use){ .used = 60, .cap = 64 };
	prom_series_init(&ps, 2, 1);
	ps.titles = &ti;
	CHECK(prom_series_update(&ps, &s1, NULL, NULL) == 0);
	t1 = render(&ps, PROM_FMT_TEXT);
	CHECK_EQ_U(ps.contended_inodes, 20);

	CHECK(prom_series_retire(&ps, &r, &rt, &s1) == 0);
	/* the tracked inodes keep rows, the rest fold into one row per class */
	CHECK_EQ_U(ps.ninodes, 2);
	CHECK_EQ_U(r.nlocks, 2 * 2 + 2);
	CHECK(snap_find_lock(&r, DEV_A, ps.inodes[0].ino, 0, ILOCK_CLASS_I_RWSEM) != NULL);
	/* 60 pairs: two, by role and op; the titled sides under ids no thread has */
	CHECK_EQ_U(r.nedges, 2);
	for (size_t i = 0; i < r.nedges; i++) {
		const struct ilock_edge_key *k = &r.edges[i].k;

		CHECK(k->ino == ILOCK_INO_FOLDED);
		if (!strcmp(k->holder_comm, "fio"))
			CHECK(k->holder_pid == ILOCK_PID_FOLDED);
		else
			CHECK(k->holder_pid >= PROM_RETIRED_ID_FIRST && k->holder_pid != ILOCK_PID_FOLDED);
		CHECK(k->waiter_pid >= PROM_RETIRED_ID_FIRST && k->waiter_pid != ILOCK_PID_FOLDED);
		ids += 1 + (strcmp(k->holder_comm, "fio") != 0);
	}
	CHECK_EQ_U(rt.n, ids);
	CHECK_EQ_U(r.counters[ILOCK_LOST_WAIT_INODES], 4);
	CHECK_EQ_U(r.tables[TABLE_LOCKS].used, 0);
	CHECK_EQ_U(ps.retired_inodes, 18);

	/* the threads' titles go with the old tables: the retired ones stay */
	titles_free(&ti);
	ti = rt;
	titles_init(&rt);
	/* the fresh tables: a new file, a tracked one again, a pair of a known role */
	CHECK(!titles_put(&ti, 30, "postgres", "postgres: checkpointer"));
	CHECK(!titles_put(&ti, 50, "postgres", "postgres: bob shop [local] SELECT"));
	add_inode(&fresh, DEV_A, 99, "/new");
	add_wait(&fresh, DEV_A, 99, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 90000, 5);
	add_wait(&fresh, DEV_A, ps.inodes[1].ino, ILOCK_CLASS_I_RWSEM, ILOCK_MODE_SHARED, 3000, 1);
	add_op_pair(&fresh, 99, "postgres", 30, "postgres", 50, ILOCK_OP_BUFFERED_WRITE,
		    ILOCK_OP_BUFFERED_READ, 3);
	add_op_pair(&fresh, 5, "fio", 41, "postgres", 31, ILOCK_OP_FSYNC, ILOCK_OP_BUFFERED_READ, 1);
	fresh.counters[ILOCK_LOST_WAIT_INODES] = 1;
	fresh.tables[TABLE_LOCKS] = (struct table_use){ .used = 3, .cap = 64 };
	/* as the exporter reads: the fresh tables' read, the retired counts under it */
	CHECK(snap_copy(&eff, &fresh) == 0 && snap_merge_under(&eff, &r) == 0);
	CHECK(prom_series_update(&ps, &eff, &r, NULL) == 0);
	t2 = render(&ps, PROM_FMT_TEXT);
	CHECK(check_never_down(t1, t2) > 100);
	CHECK(sample(t2, "ilock_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			 "mode=\"shared\"}") ==
	      sample(t1, "ilock_lock_wait_seconds_count{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			 "mode=\"shared\"}") + 6);
	CHECK(sample(t2, "ilock_lost_events_total{reason=\"wait_inodes_folded\"}") == 5);
	CHECK(sample(t2, "ilock_table_entries{table=\"locks\"}") == 3);
	/* the new file waited most: its own series counts from the renewal on */
	CHECK(strstr(t2, "path=\"/new\"") != NULL);
	/* the checkpointer's pair goes on under its role, 3 more; none counted twice */
	CHECK(family_sum(t2, "ilock_serialised_waits_total") ==
	      family_sum(t2, "ilock_serialised_op_waits_total"));
	CHECK(family_sum(t2, "ilock_serialised_waits_total") ==
	      family_sum(t1, "ilock_serialised_waits_total") + 4);
	CHECK(sample(t2, "ilock_serialised_waits_total{fs=\"xfs\",device=\"7:0\",class=\"i_rwsem\","
			 "holder_comm=\"postgres\",holder_role=\"postgres: checkpointer\","
			 "holder_mode=\"exclusive\",waiter_comm=\"postgres\","
			 "waiter_role=\"postgres: bob shop\",waiter_mode=\"shared\"}") == 60 + 3);
	/* 18 folded away, 2 tracked, 1 new */
	CHECK_EQ_U(ps.contended_inodes, 21);

	/* again, from the merged counts: still small, still the same series */
	CHECK(prom_series_retire(&ps, &r, &rt, &eff) == 0);
	CHECK(r.nlocks <= 3 * 2 + 2);
	CHECK_EQ_U(r.nedges, 3);
	titles_free(&ti);
	ti = rt;
	snap_reset(&fresh);
	CHECK(snap_copy(&eff, &r) == 0);
	CHECK(prom_series_update(&ps, &eff, &r, NULL) == 0);
	free(t1);
	t1 = render(&ps, PROM_FMT_TEXT);
	CHECK(check_never_down(t2, t1) > 100);
	free(t1);
	free(t2);
	prom_series_free(&ps);
	titles_free(&ti);
	snap_free(&s1);
	snap_free(&r);
	snap_free(&fresh);
	snap_free(&eff);
}

int main(void)
{
	test_retire();
	test_rules_alert_on_undercounts();
	test_canonical_numbers();
	test_escaping();
	test_negotiation();
	test_histograms();
	test_fold_to_other();
	test_series_bound();
	test_idle_series();
	test_idle_pairs();
	test_contended_across_renewals();
	test_pairs();
	test_ranges();
	test_waiting_now();
	test_tables();
	test_folded_inodes();
	test_op_pairs();
	test_formats();
	test_sticky_labels();
	test_generations_fold();
	test_buf();
	UNIT_DONE();
}
