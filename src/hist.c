// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdbool.h>
#include <string.h>

#include "hist.h"
#include "util.h"

uint64_t hist_slot_lo(unsigned slot)
{
	return slot == 0 ? 0 : 1ULL << slot;
}

uint64_t hist_slot_hi(unsigned slot)
{
	if (slot >= ILOCK_HIST_SLOTS - 1)
		return UINT64_MAX;
	return slot == 0 ? 2 : 1ULL << (slot + 1);
}

uint64_t hist_total(const __u64 *h)
{
	uint64_t t = 0;

	for (unsigned i = 0; i < ILOCK_HIST_SLOTS; i++)
		t += h[i];
	return t;
}

/*
 * The q-quantile, interpolated inside the slot holding it; `only`, when
 * given, is the range a histogram with a single slot is spread over
 * instead of that slot's bounds (one_slot_range()).
 */
static uint64_t quantile(const __u64 *h, double q, uint64_t max_ns, const double *only)
{
	uint64_t total = hist_total(h), cum = 0;
	double rank;

	if (!total)
		return 0;
	if (q > 1.0)
		q = 1.0;
	rank = q * (double)total;
	if (rank < 1.0)
		rank = 1.0;
	for (unsigned i = 0; i < ILOCK_HIST_SLOTS; i++) {
		double lo, hi, frac, v;

		if (!h[i])
			continue;
		if ((double)(cum + h[i]) < rank) {
			cum += h[i];
			continue;
		}
		lo = only ? only[0] : (double)hist_slot_lo(i);
		hi = only ? only[1] : (double)hist_slot_hi(i);
		/* the open-ended last slot, or one holding the max, ends at max */
		if (max_ns && (double)max_ns < hi)
			hi = (double)max_ns;
		if (hi < lo)
			hi = lo;
		frac = (rank - (double)cum) / (double)h[i];
		v = lo + frac * (hi - lo);
		if (max_ns && v > (double)max_ns)
			v = (double)max_ns;
		return u64_of(v);
	}
	return max_ns;
}

uint64_t hist_percentile(const __u64 *h, double q, uint64_t max_ns)
{
	return quantile(h, q, max_ns, NULL);
}

/*
 * With every wait in one slot the exact mean says more than the slot: the
 * spread assumed is even over the widest range inside the slot (and under
 * the max) whose mean is the mean. One wait, or many of one length, then
 * report that length, not a point inside the slot below all of them.
 */
static bool one_slot_range(const struct ilock_stats *s, double range[2])
{
	double lo, hi, m;
	int only = -1;

	for (unsigned i = 0; i < ILOCK_HIST_SLOTS; i++) {
		if (!s->hist[i])
			continue;
		if (only >= 0)
			return false;
		only = (int)i;
	}
	if (only < 0 || s->hist[only] != s->count)
		return false;
	lo = (double)hist_slot_lo((unsigned)only);
	hi = (double)hist_slot_hi((unsigned)only);
	if (s->max_ns && (double)s->max_ns < hi)
		hi = (double)s->max_ns;
	m = (double)s->total_ns / (double)s->count;
	if (m < lo || m > hi)
		return false;  /* counts from different reads: trust the slot alone */
	if (2 * m - lo <= hi) {
		range[0] = lo;
		range[1] = 2 * m - lo;
	} else {
		range[0] = 2 * m - hi;
		range[1] = hi;
	}
	return true;
}

uint64_t stats_percentile(const struct ilock_stats *s, double q)
{
	double range[2];

	/* the top is the exact max, which the slot path returns */
	if (!(q >= 1.0 && s->max_ns) && one_slot_range(s, range))
		return quantile(s->hist, q, s->max_ns, range);
	return hist_percentile(s->hist, q, s->max_ns);
}

void stats_merge(struct ilock_stats *dst, const struct ilock_stats *src)
{
	dst->count += src->count;
	dst->total_ns += src->total_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	for (unsigned i = 0; i < ILOCK_HIST_SLOTS; i++)
		dst->hist[i] += src->hist[i];
}

static uint64_t sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

bool stats_delta(struct ilock_stats *out, const struct ilock_stats *cur,
		 const struct ilock_stats *prev)
{
	int top = -1;

	if (!prev) {
		*out = *cur;
		return false;
	}
	out->count = sat_sub(cur->count, prev->count);
	out->total_ns = sat_sub(cur->total_ns, prev->total_ns);
	for (unsigned i = 0; i < ILOCK_HIST_SLOTS; i++) {
		out->hist[i] = sat_sub(cur->hist[i], prev->hist[i]);
		if (out->hist[i])
			top = (int)i;
	}
	if (!out->count) {
		out->max_ns = 0;
	} else if (cur->max_ns > prev->max_ns) {
		out->max_ns = cur->max_ns;
	} else {
		uint64_t bound = top < 0 ? 0 : hist_slot_hi((unsigned)top) - 1;

		if (bound > prev->max_ns)
			bound = prev->max_ns;
		/* no single wait of the interval can exceed the interval's total */
		out->max_ns = bound < out->total_ns ? bound : out->total_ns;
		return true;
	}
	return false;
}

static void print_bar(FILE *f, uint64_t n, uint64_t peak, int width)
{
	int stars = peak ? (int)((n * (uint64_t)width + peak - 1) / peak) : 0;

	fputc('|', f);
	for (int i = 0; i < width; i++)
		fputc(i < stars ? '*' : ' ', f);
	fputc('|', f);
}

static void range_label(char *buf, size_t len, unsigned slot)
{
	char lo[24], hi[24];

	if (slot >= ILOCK_HIST_SLOTS - 1) {
		snprintf(buf, len, ">= %s", fmt_ns(lo, sizeof(lo), hist_slot_lo(slot)));
		return;
	}
	snprintf(buf, len, "%s - %s", fmt_ns(lo, sizeof(lo), hist_slot_lo(slot)),
		 fmt_ns(hi, sizeof(hi), hist_slot_hi(slot)));
}

void hist_print_pair(FILE *f, const char *title_a, const __u64 *a,
		     const char *title_b, const __u64 *b, int indent)
{
	int first = -1, last = -1;
	uint64_t peak_a = 0, peak_b = 0;
	const int width = 20;

	for (unsigned i = 0; i < ILOCK_HIST_SLOTS; i++) {
		if (a[i] || b[i]) {
			if (first < 0)
				first = (int)i;
			last = (int)i;
		}
		if (a[i] > peak_a)
			peak_a = a[i];
		if (b[i] > peak_b)
			peak_b = b[i];
	}
	if (first < 0) {
		fprintf(f, "%*s(no waits)\n", indent, "");
		return;
	}
	fprintf(f, "%*s%-21s  %-30s  %s\n", indent, "", "wait", title_a, title_b);
	for (int i = first; i <= last; i++) {
		char label[48], na[24], nb[24];

		range_label(label, sizeof(label), (unsigned)i);
		fprintf(f, "%*s%-21s  %7s ", indent, "", label, fmt_count(na, sizeof(na), a[i]));
		print_bar(f, a[i], peak_a, width);
		fprintf(f, "  %7s ", fmt_count(nb, sizeof(nb), b[i]));
		print_bar(f, b[i], peak_b, width);
		fputc('\n', f);
	}
}
