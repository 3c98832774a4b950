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
 * The exact permutation p, ties or not: under the null hypothesis every
 * choice of which na of the n pooled values are the first sample's is
 * equally likely. The first sample's rank sum, doubled (midranks are
 * halves), is built up tie group by tie group: from a group of t values
 * with doubled midrank r2, c go to the first sample in C(t, c) ways and
 * add c * r2. p is the share of choices whose sum lies at least as far
 * from its mean as the one observed. groups holds (t, r2) pairs; -1: no
 * memory.
 */
static double mw_exact_p(size_t na, size_t n, const size_t *groups, size_t ngroups,
			 long obs2)
{
	long mean2 = (long)(na * (n + 1)), dev = labs(obs2 - mean2);
	size_t w = 2 * n * na + 1;  /* doubled sums 0 .. 2 n na */
	double *f = calloc((na + 1) * w, sizeof(*f)), *g = calloc((na + 1) * w, sizeof(*g));
	double hits = 0, *t;

	if (!f || !g) {
		free(f);
		free(g);
		return -1;
	}
	f[0] = 1;
	for (size_t q = 0; q < ngroups; q++) {
		size_t tg = groups[2 * q], r2 = groups[2 * q + 1];

		memset(g, 0, (na + 1) * w * sizeof(*g));
		for (size_t k = 0; k <= na; k++)
			for (size_t sm = 0; sm < w; sm++) {
				double ways = 1;

				if (!f[k * w + sm])
					continue;
				for (size_t c = 0; c <= tg && k + c <= na && sm + c * r2 < w; c++) {
					g[(k + c) * w + sm + c * r2] += f[k * w + sm] * ways;
					ways = ways * (double)(tg - c) / (double)(c + 1);  /* C(t, c + 1) */
				}
			}
		t = f;
		f = g;
		g = t;
	}
	for (size_t sm = 0; sm < w; sm++)
		if (labs((long)sm - mean2) >= dev)
			hits += f[na * w + sm];
	free(f);
	free(g);
	return hits / mw_choose(na, n - na);
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
	size_t n = na + nb, i = 0, ngroups = 0, *groups;
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
	/* (size, doubled midrank) of each tie group, for the exact p */
	groups = n <= MW_EXACT_MAX_N ? malloc(2 * n * sizeof(*groups)) : NULL;
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
		if (groups) {
			groups[2 * ngroups] = j - i;
			groups[2 * ngroups + 1] = i + 1 + j;
			ngroups++;
		}
		i = j;
	}
	free(o);
	r->u = r1 - (double)na * ((double)na + 1.0) / 2.0;
	mu = (double)na * (double)nb / 2.0;
	var = (double)na * (double)nb / 12.0 *
	      (((double)n + 1.0) - ties / ((double)n * ((double)n - 1.0)));
	if (!(var > 0)) {
		free(groups);
		return 0;  /* every value tied: no evidence either way */
	}
	d = fabs(r->u - mu) - 0.5;
	if (d < 0)
		d = 0;
	r->z = (r->u >= mu ? d : -d) / sqrt(var);
	r->p = erfc(fabs(r->z) / sqrt(2.0));
	if (n <= MW_EXACT_MAX_N) {
		double p = groups ? mw_exact_p(na, n, groups, ngroups, lround(2.0 * r1)) : -1;

		free(groups);
		if (p < 0)
			return -ENOMEM;
		r->p = p;
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

void sort_doubles(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
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
	sort_doubles(c, n);
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2.0;
	free(c);
	return m;
}
