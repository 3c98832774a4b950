/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Significance tests for `ilock diff` (method: docs/diff-method.md).
 * Pure maths on arrays of doubles; known-answer unit tests.
 */
#ifndef ILOCK_SIGTEST_H
#define ILOCK_SIGTEST_H

#include <stddef.h>

struct mw_result {
	double u;      /* U of the first sample: pairs (a, b) with a > b, ties count 1/2 */
	double z;      /* signed: > 0 when the first sample tends larger */
	double p;      /* two-sided */
	size_t na, nb;
};

/*
 * Mann-Whitney U (Wilcoxon rank-sum) test, normal approximation with the
 * tie correction of the variance and a continuity correction of 0.5; the
 * same numbers as scipy.stats.mannwhitneyu(method="asymptotic",
 * use_continuity=True). p = 1 when a sample is empty or every value ties.
 * 0, or -ENOMEM.
 */
int mw_test(const double *a, size_t na, const double *b, size_t nb, struct mw_result *r);

/* Holm-Bonferroni adjusted p-values (adj may alias p). -ENOMEM or 0. */
int holm_adjust(const double *p, double *adj, size_t n);

/* Median of n values (the array is not changed). 0 for n == 0. */
double median_of(const double *v, size_t n);

#endif
