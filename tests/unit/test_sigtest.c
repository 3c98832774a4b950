// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Mann-Whitney U and Holm against known answers. The p-values were
 * computed with scipy 1.10.1:
 *   scipy.stats.mannwhitneyu(a, b, alternative="two-sided",
 *                            method="asymptotic", use_continuity=True)
 */
#include <math.h>
#include <stdint.h>

#include "sigtest.h"
#include "unit.h"

#define CHECK_NEAR(a, b, tol) CHECK(fabs((a) - (b)) <= (tol))

static void known(const double *a, size_t na, const double *b, size_t nb, double u, double p)
{
	struct mw_result r;

	CHECK(!mw_test(a, na, b, nb, &r));
	CHECK_NEAR(r.u, u, 1e-9);
	CHECK_NEAR(r.p, p, 1e-9);
	if (fabs(r.p - p) > 1e-9)
		fprintf(stderr, "  got U=%g p=%.12g, want U=%g p=%.12g\n", r.u, r.p, u, p);
}

static void test_known_answers(void)
{
	/* R's wilcox.test example (Hollander & Wolfe): W = 35 */
	static const double x[] = { 0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46 };
	static const double y[] = { 1.15, 0.88, 0.90, 0.74, 1.21 };
	static const double lo[] = { 1, 2, 3, 4, 5 }, hi[] = { 6, 7, 8, 9, 10 };
	static const double t1[] = { 1, 2, 2, 3, 3, 3, 4 }, t2[] = { 3, 4, 4, 5, 5, 6 };
	static const double z1[] = { 0, 0, 0, 0, 0, 0 }, z2[] = { 0, 0, 0, 0, 0, 1 };
	static const double same[] = { 5, 5, 5 };
	static const double s1[] = { 19, 22, 16, 29, 24 }, s2[] = { 20, 11, 17, 12 };
	static const double g1[] = { 97.4, 105.1, 97.7, 96.8, 90.7, 97.9, 111.1, 104.2, 110.4, 102.5,
				     103.9, 101.9, 83.3, 108.6, 105.1, 105.0, 83.1, 82.6, 91.1, 95.3 };
	static const double g2[] = { 83.1, 79.5, 85.2, 73.6, 83.1, 83.9, 73.4, 97.2, 85.6, 92.0,
				     73.8, 72.6, 76.6, 78.9, 86.3, 82.5, 75.5, 70.4, 74.8, 92.2 };

	known(x, 10, y, 5, 35.0, 0.244623605127);
	known(lo, 5, hi, 5, 0.0, 0.0121857803553);
	known(t1, 7, t2, 6, 3.5, 0.0129998543644);
	known(z1, 6, z2, 6, 15.0, 0.404656761927);
	known(same, 3, same, 3, 4.5, 1.0);
	known(s1, 5, s2, 4, 17.0, 0.111346886533);
	known(g1, 20, g2, 20, 368.0, 5.84408876938e-06);
}

static void test_direction_and_edges(void)
{
	static const double lo[] = { 1, 2, 3, 4, 5 }, hi[] = { 6, 7, 8, 9, 10 };
	struct mw_result r;

	CHECK(!mw_test(hi, 5, lo, 5, &r));
	CHECK(r.z > 0);   /* the first sample is larger */
	CHECK_NEAR(r.u, 25.0, 1e-9);
	CHECK(!mw_test(lo, 5, hi, 5, &r));
	CHECK(r.z < 0);
	CHECK(!mw_test(lo, 0, hi, 5, &r));
	CHECK(r.p == 1.0 && r.z == 0);
}

/* One wild interval cannot make two samples of one condition differ. */
static void test_one_outlier(void)
{
	double a[30], b[30];
	struct mw_result r;
	uint64_t s = 12345;

	for (int i = 0; i < 30; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		a[i] = 100 + (double)(s >> 40) / (double)(1 << 24) * 20;
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		b[i] = 100 + (double)(s >> 40) / (double)(1 << 24) * 20;
	}
	CHECK(!mw_test(a, 30, b, 30, &r));
	CHECK(r.p > 0.05);
	b[7] = 1e12;  /* one interval a million times larger */
	CHECK(!mw_test(a, 30, b, 30, &r));
	CHECK(r.p > 0.05);
	/* and a real shift survives one interval pulling the other way */
	for (int i = 0; i < 30; i++)
		b[i] = a[i] * 0.5;
	b[3] = 1e12;
	CHECK(!mw_test(a, 30, b, 30, &r));
	CHECK(r.p < 0.001);
}

static void test_holm(void)
{
	double p[] = { 0.01, 0.04, 0.03, 0.005 }, adj[4];
	double one[] = { 0.2 }, adj1[1];

	/* sorted 0.005*4, 0.01*3, 0.03*2, 0.04*1 -> 0.02, 0.03, 0.06, max(0.04, 0.06) */
	CHECK(!holm_adjust(p, adj, 4));
	CHECK_NEAR(adj[0], 0.03, 1e-12);
	CHECK_NEAR(adj[1], 0.06, 1e-12);
	CHECK_NEAR(adj[2], 0.06, 1e-12);
	CHECK_NEAR(adj[3], 0.02, 1e-12);
	CHECK(!holm_adjust(one, adj1, 1));
	CHECK_NEAR(adj1[0], 0.2, 1e-12);
	p[0] = 0.9;
	p[1] = 0.8;
	CHECK(!holm_adjust(p, p, 4));  /* in place, capped at 1 */
	CHECK_NEAR(p[0], 1.0, 1e-12);
	CHECK(!holm_adjust(p, adj, 0));
}

static void test_median(void)
{
	double v[] = { 5, 1, 3 }, w[] = { 4, 1, 3, 2 };

	CHECK_NEAR(median_of(v, 3), 3, 0);
	CHECK_NEAR(median_of(w, 4), 2.5, 0);
	CHECK_NEAR(v[0], 5, 0);  /* not sorted in place */
	CHECK_NEAR(median_of(v, 0), 0, 0);
}

int main(void)
{
	test_known_answers();
	test_direction_and_edges();
	test_one_outlier();
	test_holm();
	test_median();
	UNIT_DONE();
}
