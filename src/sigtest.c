// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sigtest.h"

struct obs {
	double v;
	int group;
};

static int cmp_obs(const void *pa, const void *pb)
{
	const struct obs *a = pa, *b = pb;

	return a->v < b->v ? -1 : a->v > b->v;
}

double mw_choose(size_t na, size_t nb)
{
	double c = 1;

	for (size_t i = 1; i <= na; i++)
		c = c * (double)(nb + i) / (double)i;
	return c;
}

/*
 * P(U <= k) with no ties, from the count of arrangements of na and nb
 * values by U: f(i, j, u) = f(i - 1, j, u - j) + f(i, j - 1, u), the
 * largest value being one of the first sample (above all j of the second)
 * or of the second. Rows of j over u <= k, rolled over i. -1: no memory.
 */
static double mw_exact_cdf(size_t na, size_t nb, size_t k)
{
	size_t w = k + 1;
	double *prev = calloc((nb + 1) * w, sizeof(*prev));
	double *cur = calloc((nb + 1) * w, sizeof(*cur));
	double sum = 0, *t;

	if (!prev || !cur) {
		free(prev);
		free(cur);
		return -1;
	}
	for (size_t j = 0; j <= nb; j++)
		prev[j * w] = 1;  /* no value of the first sample: U = 0, one way */
	for (size_t i = 1; i <= na; i++) {
		memset(cur, 0, (nb + 1) * w * sizeof(*cur));
		cur[0] = 1;
		for (size_t j = 1; j <= nb; j++)
			for (size_t u = 0; u <= k; u++)
				cur[j * w + u] = (u >= j ? prev[j * w + u - j] : 0) + cur[(j - 1) * w + u];
		t = prev;
		prev = cur;
		cur = t;
	}
	for (size_t u = 0; u <= k; u++)
		sum += prev[nb * w + u];
	free(prev);
	free(cur);
	return sum / mw_choose(na, nb);
}

double mw_min_p(size_t na, size_t nb)
{
	double sd, z;

	if (!na || !nb)
		return 1.0;
	if (na + nb <= MW_EXACT_MAX_N)
		return fmin(1.0, 2.0 / mw_choose(na, nb));
	/* the normal approximation at U = 0, no ties */
	sd = sqrt((double)na * (double)nb / 12.0 * ((double)(na + nb) + 1.0));
	z = ((double)na * (double)nb / 2.0 - 0.5) / sd;
	return erfc(z / sqrt(2.0));
}

int mw_test(const double *a, size_t na, const double *b, size_t nb, struct mw_result *r)
{
	size_t n = na + nb, i = 0;
	double r1 = 0, ties = 0, mu, var, d;
	struct obs *o;

	memset(r, 0, sizeof(*r));
	r->na = na;
	r->nb = nb;
	r->p = 1.0;
	if (!na || !nb)
		return 0;
	o = malloc(n * sizeof(*o));
	if (!o)
		return -ENOMEM;
	for (size_t k = 0; k < na; k++)
		o[k] = (struct obs){ a[k], 0 };
	for (size_t k = 0; k < nb; k++)
		o[na + k] = (struct obs){ b[k], 1 };
	qsort(o, n, sizeof(*o), cmp_obs);
	/* ranks 1..n; a run of t equal values shares the mean of its ranks */
	while (i < n) {
		size_t j = i + 1;
		double rank, t;

		while (j < n && o[j].v == o[i].v)
			j++;
		t = (double)(j - i);
		rank = ((double)(i + 1) + (double)j) / 2.0;
		for (size_t k = i; k < j; k++)
			if (o[k].group == 0)
				r1 += rank;
		ties += t * t * t - t;
		i = j;
	}
	free(o);
	r->u = r1 - (double)na * ((double)na + 1.0) / 2.0;
	mu = (double)na * (double)nb / 2.0;
	var = (double)na * (double)nb / 12.0 *
	      (((double)n + 1.0) - ties / ((double)n * ((double)n - 1.0)));
	if (!(var > 0))
		return 0;  /* every value tied: no evidence either way */
	d = fabs(r->u - mu) - 0.5;
	if (d < 0)
		d = 0;
	r->z = (r->u >= mu ? d : -d) / sqrt(var);
	r->p = erfc(fabs(r->z) / sqrt(2.0));
	if (!ties && n <= MW_EXACT_MAX_N) {
		/* U is a whole number without ties; the distribution is symmetric */
		double lo = fmin(r->u, (double)na * (double)nb - r->u);
		double cdf = mw_exact_cdf(na, nb, (size_t)(lo + 0.5));

		if (cdf < 0)
			return -ENOMEM;
		r->p = 2.0 * cdf;
		r->exact = true;
	}
	if (r->p > 1.0)
		r->p = 1.0;
	return 0;
}

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *pa, const void *pb)
{
	const struct pidx *a = pa, *b = pb;

	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

int holm_adjust(const double *p, double *adj, size_t n)
{
	struct pidx *s;
	double run = 0;

	if (!n)
		return 0;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		s[i] = (struct pidx){ p[i], i };
	qsort(s, n, sizeof(*s), cmp_pidx);
	/* the k-th smallest is multiplied by (n - k); adjusted values never decrease */
	for (size_t k = 0; k < n; k++) {
		double v = s[k].p * (double)(n - k);

		if (v > 1.0)
			v = 1.0;
		if (v > run)
			run = v;
		adj[s[k].i] = run;
	}
	free(s);
	return 0;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

double median_of(const double *v, size_t n)
{
	double *c, m;

	if (!n)
		return 0;
	c = malloc(n * sizeof(*c));
	if (!c)
		return NAN;
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2.0;
	free(c);
	return m;
}
