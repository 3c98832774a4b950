// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Mann-Whitney U and Holm against known answers. Over MW_EXACT_MAX_N
 * values the p-values were computed with scipy 1.10.1:
 *   scipy.stats.mannwhitneyu(a, b, alternative="two-sided",
 *                            method="asymptotic", use_continuity=True)
 * Up to it they are exact, computed apart from ilock by enumerating every
 * split of the pooled values, or (20 and 20 values) from the Gaussian
 * binomial coefficient's polynomial and, with ties, a dictionary over tie
 * groups; R's wilcox.test gives the Hollander & Wolfe example's 0.2544.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

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

	static const double e1[] = { 32.383, 15.085, 65.093, 7.244, 53.588, 36.569, 5.8,
				     50.744, 3.75, 43.365, 6.986, 9.071, 42.452, 82.685,
				     12.38, 22.324, 62.743, 94.771, 57.71, 39.668 };
	static const double e2[] = { 107.626, 14.658, 95.847, 38.961, 24.426, 21.779, 40.848,
				     91.613, 28.073, 68.16, 73.891, 47.24, 64.774, 16.279,
				     15.96, 30.596, 78.04, 52.759, 41.415, 68.556 };
	static const double ten_lo[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	static const double ten_hi[] = { 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
	struct mw_result r;

	/* no ties: exact */
	known(x, 10, y, 5, 35.0, 0.254412254412);
	known(lo, 5, hi, 5, 0.0, 0.00793650793651);
	known(s1, 5, s2, 4, 17.0, 0.111111111111);
	known(e1, 20, e2, 20, 142.0, 0.120699705756);
	known(ten_lo, 10, ten_hi, 10, 0.0, 2.0 / 184756.0);
	known(ten_hi, 10, ten_lo, 10, 100.0, 2.0 / 184756.0);
	CHECK(!mw_test(e1, 20, e2, 20, &r) && r.exact);
	/* ties: exact over every split of the pooled values, midranks for ties */
	known(t1, 7, t2, 6, 3.5, 0.00990675990676);
	known(z1, 6, z2, 6, 15.0, 1.0);
	known(same, 3, same, 3, 4.5, 1.0);
	known(g1, 20, g2, 20, 368.0, 6.09939189037e-07);
	CHECK(!mw_test(g1, 20, g2, 20, &r) && r.exact);
	{
		/* a lock's waits gone after: 8 tied zeros, as exact as no ties (2 / C(16, 8)) */
		static const double hi8[] = { 3.1, 3.3, 2.9, 3.0, 3.2, 3.4, 3.05, 3.15 };
		static const double zero8[8] = { 0 };

		known(hi8, 8, zero8, 8, 64.0, 2.0 / 12870.0);
		known(zero8, 8, hi8, 8, 0.0, 2.0 / 12870.0);
	}
	{
		/* 41 values: the approximation, its formula computed apart in Python */
		double g41[21];

		memcpy(g41, g1, sizeof(g1));
		g41[20] = 99.0;
		known(g41, 21, g2, 20, 388.0, 3.64663606256e-06);
		CHECK(!mw_test(g41, 21, g2, 20, &r) && !r.exact);
	}
	{
		double b41[21];

		for (int i = 0; i < 20; i++)
			b41[i] = e2[i];
		b41[20] = 1000;
		CHECK(!mw_test(e1, 20, b41, 21, &r) && !r.exact && r.p > 0 && r.p < 1);
	}
}

/* The least p a family of tests must beat: the exact floor, then the approximation's. */
static void test_min_p(void)
{
	static const double lo[] = { 1, 2, 3, 4, 5, 6, 7, 8 }, hi[] = { 9, 10, 11, 12, 13, 14, 15, 16 };
	struct mw_result r;

	CHECK_NEAR(mw_min_p(5, 5), 2.0 / 252.0, 1e-15);
	CHECK_NEAR(mw_min_p(10, 10), 2.0 / 184756.0, 1e-15);
	CHECK_NEAR(mw_choose(10, 10), 184756.0, 1e-6);
	CHECK(mw_min_p(0, 5) == 1.0);
	CHECK(mw_min_p(1, 1) == 1.0);
	/* over the exact range: the approximation at U = 0, still tiny */
	CHECK(mw_min_p(30, 30) > 0 && mw_min_p(30, 30) < 1e-9);
	/* and it is what a test of fully separated samples gives */
	CHECK(!mw_test(lo, 8, hi, 8, &r));
	CHECK_NEAR(r.p, mw_min_p(8, 8), 1e-15);
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
	test_min_p();
	test_direction_and_edges();
	test_one_outlier();
	test_holm();
	test_median();
	UNIT_DONE();
}
