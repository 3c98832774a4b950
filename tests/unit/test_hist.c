// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Histogram bucketing, percentiles, merge and delta. */
#include <stdlib.h>

#include "hist.h"
#include "util.h"
#include "unit.h"

static void test_slots(void)
{
	CHECK_EQ_U(ilock_hist_slot(0), 0);
	CHECK_EQ_U(ilock_hist_slot(1), 0);
	CHECK_EQ_U(ilock_hist_slot(2), 1);
	CHECK_EQ_U(ilock_hist_slot(3), 1);
	CHECK_EQ_U(ilock_hist_slot(4), 2);
	CHECK_EQ_U(ilock_hist_slot(1023), 9);
	CHECK_EQ_U(ilock_hist_slot(1024), 10);
	CHECK_EQ_U(ilock_hist_slot(1ULL << 39), ILOCK_HIST_SLOTS - 1);
	CHECK_EQ_U(ilock_hist_slot(~0ULL), ILOCK_HIST_SLOTS - 1);
	/* every value lands in the slot whose bounds contain it */
	for (uint64_t v = 1; v < (1ULL << 38); v = v * 3 + 1) {
		unsigned s = ilock_hist_slot(v);

		CHECK(v >= hist_slot_lo(s) && v < hist_slot_hi(s));
	}
	CHECK_EQ_U(hist_slot_lo(0), 0);
	CHECK_EQ_U(hist_slot_hi(0), 2);
	CHECK_EQ_U(hist_slot_lo(10), 1024);
	CHECK_EQ_U(hist_slot_hi(10), 2048);
	CHECK_EQ_U(hist_slot_hi(ILOCK_HIST_SLOTS - 1), UINT64_MAX);
}

static void add(struct ilock_stats *s, uint64_t v)
{
	s->count++;
	s->total_ns += v;
	s->hist[ilock_hist_slot(v)]++;
	if (v > s->max_ns)
		s->max_ns = v;
}

static void test_percentiles(void)
{
	struct ilock_stats s = {};
	uint64_t p50, p99;

	CHECK_EQ_U(stats_percentile(&s, 0.5), 0);
	/* 100 values 1000..100000 step 1000: true p50 = 50000, p99 = 99000 */
	for (int i = 1; i <= 100; i++)
		add(&s, (uint64_t)i * 1000);
	p50 = stats_percentile(&s, 0.5);
	p99 = stats_percentile(&s, 0.99);
	/* the estimate lies in the true value's slot: within a factor of 2 */
	CHECK(ilock_hist_slot(p50) == ilock_hist_slot(50000));
	CHECK(ilock_hist_slot(p99) == ilock_hist_slot(99000));
	CHECK(p99 <= s.max_ns);
	CHECK(p50 <= p99);
	/* one value: every percentile is that value's slot, clamped to max */
	struct ilock_stats one = {};

	add(&one, 5000);
	CHECK(stats_percentile(&one, 0.99) <= 5000);
	CHECK(stats_percentile(&one, 0.99) >= 4096);
	CHECK_EQ_U(stats_percentile(&one, 1.0), 5000);
	/*
	 * The open-ended last slot with no max (only a damaged recording has
	 * counts and no max): the top of the slot is past 2^64, and the cast
	 * that was undefined there saturates.
	 */
	__u64 h[ILOCK_HIST_SLOTS] = {};

	h[ILOCK_HIST_SLOTS - 1] = 3;
	CHECK_EQ_U(hist_percentile(h, 1.0, 0), UINT64_MAX);
	CHECK(hist_percentile(h, 0.01, 0) >= hist_slot_lo(ILOCK_HIST_SLOTS - 1));
}

/* Offsets exact: a whole number of a unit, else every byte. */
static void test_fmt_offset(void)
{
	char b[32];

	CHECK_STR(fmt_offset(b, sizeof(b), 0), "0 B");
	CHECK_STR(fmt_offset(b, sizeof(b), 4095), "4,095 B");
	CHECK_STR(fmt_offset(b, sizeof(b), 4096), "4 KiB");
	CHECK_STR(fmt_offset(b, sizeof(b), 16384), "16 KiB");
	CHECK_STR(fmt_offset(b, sizeof(b), 67104768), "65,532 KiB");
	CHECK_STR(fmt_offset(b, sizeof(b), 67108864), "64 MiB");
	CHECK_STR(fmt_offset(b, sizeof(b), 67108865), "67,108,865 B");
	CHECK_STR(fmt_offset(b, sizeof(b), 3ULL << 40), "3 TiB");
	CHECK_STR(fmt_offset(b, sizeof(b), 1ULL << 50), "1,024 TiB");
}

/* Shares as whole percents that add up to 100. */
static void test_shares_to_percents(void)
{
	double a[3] = { 0.594, 0.203, 0.203 }, b[3] = { 0.00003, 0.93, 0.06997 }, z[3] = { 0 };
	double c[3] = { 1.0 / 3, 1.0 / 3, 1.0 / 3 };
	int p[3];

	shares_to_percents(a, p, 3);
	CHECK(p[0] == 60 && p[1] == 20 && p[2] == 20);
	shares_to_percents(b, p, 3);
	CHECK(p[0] == 0 && p[1] == 93 && p[2] == 7);
	shares_to_percents(c, p, 3);
	CHECK(p[0] + p[1] + p[2] == 100 && p[0] >= 33 && p[1] >= 33 && p[2] >= 33);
	shares_to_percents(z, p, 3);
	CHECK(p[0] == 0 && p[1] == 0 && p[2] == 0);
}

/* Thread pools named with an id that changes from run to run are one role. */
static void test_comm_role(void)
{
	char r[ILOCK_COMM_LEN];
	const char full[ILOCK_COMM_LEN] = { 'i', 'o', 'u', '-', 'w', 'r', 'k', '-',
					    '1', '2', '3', '4', '5', '6', '7', '8' };

	comm_role(r, "iou-wrk-11255");
	CHECK_STR(r, "iou-wrk");
	comm_role(r, "iou-sqp-4242");
	CHECK_STR(r, "iou-sqp");
	comm_role(r, "kworker/u8:7");
	CHECK_STR(r, "kworker");
	comm_role(r, "kworker/1:2H");
	CHECK_STR(r, "kworker");
	/* 16 bytes and no NUL, as the kernel may hand them over */
	comm_role(r, full);
	CHECK_STR(r, "iou-wrk");
	/* names that only look alike are kept */
	comm_role(r, "iou-wrk-");
	CHECK_STR(r, "iou-wrk-");
	comm_role(r, "iou-wrk-12x");
	CHECK_STR(r, "iou-wrk-12x");
	comm_role(r, "kworker");
	CHECK_STR(r, "kworker");
	comm_role(r, "fio");
	CHECK_STR(r, "fio");
	comm_role(r, "ib_io_rd-3");
	CHECK_STR(r, "ib_io_rd-3");
	comm_role(r, "");
	CHECK_STR(r, "");
}

/* Durations and times are plain decimals: strtod would also take hex, exponents and inf. */
static void test_plain_decimals(void)
{
	double v = 0;

	CHECK_EQ_U(parse_decimal("12", &v), 2);
	CHECK(v == 12);
	CHECK_EQ_U(parse_decimal("1.5s", &v), 3);
	CHECK(v == 1.5);
	CHECK_EQ_U(parse_decimal(".5", &v), 2);
	CHECK(v == 0.5);
	CHECK_EQ_U(parse_decimal("5.", &v), 2);
	CHECK_EQ_U(parse_decimal("1e1", &v), 1);
	CHECK(v == 1);  /* the exponent is not taken */
	CHECK_EQ_U(parse_decimal(".", &v), 0);
	CHECK_EQ_U(parse_decimal("-1", &v), 0);
	CHECK_EQ_U(parse_decimal("+1", &v), 0);
	CHECK_EQ_U(parse_decimal("inf", &v), 0);
	CHECK_EQ_U(parse_decimal("", &v), 0);
	CHECK(parse_seconds("2.5", 10, &v) && v == 2.5);
	CHECK(parse_seconds("10", 10, &v) && v == 10);
	CHECK(!parse_seconds("0x10", 100, &v));
	CHECK(!parse_seconds("1e1", 100, &v));
	CHECK(!parse_seconds("11", 10, &v));
	CHECK(!parse_seconds("0", 10, &v));
	CHECK(!parse_seconds(" 1", 10, &v));
	CHECK(!parse_seconds("nan", 10, &v));
}

/* Doubles as u64: rates and means from a damaged recording can exceed 2^64. */
static void test_u64_of(void)
{
	CHECK_EQ_U(u64_of(5.9), 5);
	CHECK_EQ_U(u64_of(0.0), 0);
	CHECK_EQ_U(u64_of(-3.0), 0);
	CHECK_EQ_U(u64_of(0.0 / 0.0), 0);
	CHECK_EQ_U(u64_of(1e30), UINT64_MAX);
	CHECK_EQ_U(u64_of(18446744073709551616.0), UINT64_MAX);
	CHECK_EQ_U(u64_of(9007199254740992.0), 9007199254740992ULL);
}

/* Every wait in one slot: the exact mean decides where in the slot. */
static void test_percentiles_one_slot(void)
{
	struct ilock_stats s = {};

	/* one wait, or many of one length: that length, not a point below it */
	add(&s, 5000);
	CHECK_EQ_U(stats_percentile(&s, 0.5), 5000);
	CHECK_EQ_U(stats_percentile(&s, 0.99), 5000);
	for (int i = 0; i < 9; i++)
		add(&s, 5000);
	CHECK_EQ_U(stats_percentile(&s, 0.5), 5000);
	/* the histogram alone put it at 4548: inside the slot, under every wait */
	CHECK_EQ_U(hist_percentile(s.hist, 0.5, s.max_ns), 4548);

	/* mean above the middle: an even spread from 2 x mean - max up to max */
	s = (struct ilock_stats){};
	add(&s, 4100);
	add(&s, 8000);
	CHECK_EQ_U(stats_percentile(&s, 0.5), 6050);
	CHECK_EQ_U(stats_percentile(&s, 1.0), 8000);

	/* mean below it: an even spread from the slot's start up to 2 x mean - start */
	s = (struct ilock_stats){};
	for (int i = 0; i < 9; i++)
		add(&s, 4100);
	add(&s, 8000);                                  /* mean 4490 */
	CHECK_EQ_U(stats_percentile(&s, 0.5), 4490);    /* 4096 + 0.5 x 788 */
	CHECK_EQ_U(stats_percentile(&s, 0.99), 4876);
	CHECK_EQ_U(stats_percentile(&s, 1.0), 8000);    /* the max is exact */

	/* a count the histogram does not add up to: the slot alone, as before */
	s.count++;
	CHECK_EQ_U(stats_percentile(&s, 0.5), hist_percentile(s.hist, 0.5, s.max_ns));
	/* two slots: the slot alone, as before */
	s = (struct ilock_stats){};
	add(&s, 5000);
	add(&s, 9000);
	CHECK_EQ_U(stats_percentile(&s, 0.5), hist_percentile(s.hist, 0.5, s.max_ns));
}

static void test_merge_delta(void)
{
	struct ilock_stats a = {}, b = {}, m, d;

	add(&a, 100);
	add(&a, 5000);
	b = a;
	add(&b, 1000000);
	add(&b, 300);

	m = a;
	stats_merge(&m, &b);
	CHECK_EQ_U(m.count, 6);
	CHECK_EQ_U(m.max_ns, 1000000);
	CHECK_EQ_U(hist_total(m.hist), 6);

	CHECK(!stats_delta(&d, &b, &a));  /* max rose: a wait's length */
	CHECK_EQ_U(d.count, 2);
	CHECK_EQ_U(d.total_ns, 1000300);
	CHECK_EQ_U(d.max_ns, 1000000);  /* max rose: exact */
	CHECK_EQ_U(hist_total(d.hist), 2);

	/* max did not rise: bounded by the top slot of the delta */
	struct ilock_stats c = b;

	add(&c, 200);
	CHECK(stats_delta(&d, &c, &b));  /* a bound */
	CHECK_EQ_U(d.count, 1);
	CHECK(d.max_ns >= 200 && d.max_ns < 256);

	/* one small wait after big ones: the bound never exceeds the total */
	struct ilock_stats e = c;

	add(&e, 300);
	CHECK(stats_delta(&d, &e, &c));
	CHECK_EQ_U(d.count, 1);
	CHECK(d.max_ns <= d.total_ns);
	CHECK_EQ_U(d.max_ns, 300);

	/* nothing new: zero max, which bounds nothing */
	CHECK(!stats_delta(&d, &c, &c));
	CHECK_EQ_U(d.count, 0);
	CHECK_EQ_U(d.max_ns, 0);

	/* counters that went backwards (map re-created) saturate at 0 */
	stats_delta(&d, &a, &b);
	CHECK_EQ_U(d.count, 0);
	/* no previous read: the whole, exact */
	CHECK(!stats_delta(&d, &b, NULL));
	CHECK_EQ_U(d.max_ns, 1000000);
}

static void test_print(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct ilock_stats a = {}, b = {};

	add(&a, 1500);
	add(&a, 1600);
	add(&b, 3000000);
	hist_print_pair(f, "shared", a.hist, "exclusive", b.hist, 2);
	fclose(f);
	CHECK(strstr(buf, "1.02 us - 2.05 us") != NULL);
	CHECK(strstr(buf, "2.10 ms - 4.19 ms") != NULL);
	CHECK(strstr(buf, "|********************|") != NULL);
	free(buf);
}

int main(void)
{
	test_slots();
	test_percentiles();
	test_u64_of();
	test_plain_decimals();
	test_comm_role();
	test_fmt_offset();
	test_shares_to_percents();
	test_percentiles_one_slot();
	test_merge_delta();
	test_print();
	UNIT_DONE();
}
