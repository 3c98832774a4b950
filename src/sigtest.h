/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Significance tests for `ilock diff` (method: docs/diff-method.md).
 * Pure maths on arrays of doubles; known-answer unit tests.
 */
#ifndef ILOCK_SIGTEST_H
#define ILOCK_SIGTEST_H

#include <stddef.h>

#include <stdbool.h>

struct mw_result {
	double u;      /* U of the first sample: pairs (a, b) with a > b, ties count 1/2 */
	double z;      /* signed: > 0 when the first sample tends larger */
	double p;      /* two-sided */
	bool exact;    /* p from U's exact distribution, not the normal approximation */
	size_t na, nb;
};

/* Up to this many values in all, p is exact. */
#define MW_EXACT_MAX_N 40

/*
 * Mann-Whitney U (Wilcoxon rank-sum) test, two-sided. With at most
 * MW_EXACT_MAX_N values p is exact: the share of all ways to split the
 * pooled values into the two samples whose rank sum (midranks for ties)
 * is at least as far from its mean as the one observed; without ties,
 * scipy.stats.mannwhitneyu(method="exact"). Otherwise the normal
 * approximation with the tie correction of the variance and a continuity
 * correction of 0.5, as method="asymptotic", use_continuity=True. z (the
 * direction) is always the approximation's. p = 1 when a sample is empty
 * or every value ties. 0, or -ENOMEM.
 */
int mw_test(const double *a, size_t na, const double *b, size_t nb, struct mw_result *r);

/*
 * The smallest p mw_test can give for samples of na and nb values (no
 * ties, no overlap): what a family of tests has to be measured against.
 */
double mw_min_p(size_t na, size_t nb);

/* C(na + nb, na), as a double. */
double mw_choose(size_t na, size_t nb);

/* Holm-Bonferroni adjusted p-values (adj may alias p). -ENOMEM or 0. */
int holm_adjust(const double *p, double *adj, size_t n);

/* Sorts n doubles in place, ascending (NaN-free input). */
void sort_doubles(double *v, size_t n);

/* Median of n values (the array is not changed). 0 for n == 0. */
double median_of(const double *v, size_t n);

#endif
