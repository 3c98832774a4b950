// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Print the exporter's series in the Prometheus text format 0.0.4 or in
 * OpenMetrics 1.0.0. The two differ only in metadata: OpenMetrics names a
 * counter family without its _total suffix, has an info type and UNIT
 * lines, and ends with "# EOF". Samples are the same in both.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "counters.h"
#include "hist.h"
#include "ops.h"
#include "prom.h"
#include "util.h"

void pbuf_init(struct prom_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void pbuf_free(struct prom_buf *b)
{
	free(b->data);
	pbuf_init(b);
}

static bool pbuf_reserve(struct prom_buf *b, size_t extra)
{
	size_t ncap;
	char *p;

	if (b->oom)
		return false;
	if (b->len + extra + 1 <= b->cap)
		return true;
	ncap = b->cap ? b->cap : 4096;
	while (ncap < b->len + extra + 1)
		ncap *= 2;
	p = realloc(b->data, ncap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->data = p;
	b->cap = ncap;
	return true;
}

static void pbuf_putn(struct prom_buf *b, const char *s, size_t n)
{
	if (!pbuf_reserve(b, n))
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = 0;
}

void pbuf_puts(struct prom_buf *b, const char *s)
{
	pbuf_putn(b, s, strlen(s));
}

void pbuf_printf(struct prom_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->data ? b->data + b->len : NULL, b->data ? b->cap - b->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if (b->data && b->len + (size_t)n < b->cap) {
		b->len += (size_t)n;
		return;
	}
	if (!pbuf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s, or 0 when it is not one. */
static size_t utf8_seq(const unsigned char *s)
{
	uint32_t cp;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xE0) == 0xC0) {
		n = 2;
		cp = s[0] & 0x1F;
	} else if ((s[0] & 0xF0) == 0xE0) {
		n = 3;
		cp = s[0] & 0x0F;
	} else if ((s[0] & 0xF8) == 0xF0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;  /* also stops at the NUL */
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	/* overlong forms, surrogates and beyond U+10FFFF are not UTF-8 */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return 0;
	return n;
}

void pbuf_label_value(struct prom_buf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		size_t n = utf8_seq(s);

		if (!n) {
			/* file names and comms are bytes; label values must be UTF-8 */
			pbuf_puts(b, "\xEF\xBF\xBD");
			s++;
			continue;
		}
		if (*s == '\\')
			pbuf_puts(b, "\\\\");
		else if (*s == '"')
			pbuf_puts(b, "\\\"");
		else if (*s == '\n')
			pbuf_puts(b, "\\n");
		else
			pbuf_putn(b, (const char *)s, n);
		s += n;
	}
}

char *prom_fmt_canonical(char *buf, size_t len, double v)
{
	char digits[40], tmp[48];
	int prec, exp, nd;
	char *e;

	if (isinf(v)) {
		snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
		return buf;
	}
	if (isnan(v)) {
		snprintf(buf, len, "NaN");
		return buf;
	}
	if (v == 0) {
		snprintf(buf, len, signbit(v) ? "-0.0" : "0.0");
		return buf;
	}
	/* the fewest significant digits that read back as v (Go's shortest) */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	/* tmp is [-]d[.ddd]e[+-]xx: split into digits and exponent */
	e = strchr(tmp, 'e');
	exp = atoi(e + 1);
	nd = 0;
	for (char *p = tmp; p < e; p++)
		if (*p >= '0' && *p <= '9')
			digits[nd++] = *p;
	digits[nd] = 0;
	{
		char out[64];
		size_t o = 0;

		if (v < 0)
			out[o++] = '-';
		if (exp < -4 || exp >= 6) {
			/* d[.ddd]e±XX: Go's %e has at least two exponent digits */
			out[o++] = digits[0];
			if (nd > 1) {
				out[o++] = '.';
				for (int i = 1; i < nd; i++)
					out[o++] = digits[i];
			}
			o += (size_t)snprintf(out + o, sizeof(out) - o, "e%c%02d", exp < 0 ? '-' : '+',
					      exp < 0 ? -exp : exp);
		} else if (exp < 0) {
			/* 0.000ddd */
			out[o++] = '0';
			out[o++] = '.';
			for (int i = 0; i < -exp - 1; i++)
				out[o++] = '0';
			for (int i = 0; i < nd; i++)
				out[o++] = digits[i];
		} else {
			/* ddd[.ddd], with ".0" when it is an integer */
			for (int i = 0; i <= exp; i++)
				out[o++] = i < nd ? digits[i] : '0';
			out[o++] = '.';
			if (nd > exp + 1)
				for (int i = exp + 1; i < nd; i++)
					out[o++] = digits[i];
			else
				out[o++] = '0';
		}
		out[o] = 0;
		snprintf(buf, len, "%s", out);
	}
	return buf;
}

/*
 * OpenMetrics when the client takes it at least as gladly as the text
 * format (Prometheus asks for OpenMetrics first), else text 0.0.4.
 */
enum prom_format prom_negotiate(const char *accept)
{
	double om_q = 0, text_q = 0;
	const char *p = accept;

	if (!accept)
		return PROM_FMT_TEXT;
	while (*p) {
		const char *end = strchr(p, ','), *semi;
		char range[256], *tok, *save = NULL;
		size_t n = end ? (size_t)(end - p) : strlen(p);
		double q = 1.0;
		bool om, text, version_ok = true;

		if (n >= sizeof(range))
			n = sizeof(range) - 1;
		memcpy(range, p, n);
		range[n] = 0;
		p = end ? end + 1 : p + strlen(p);

		semi = strchr(range, ';');
		tok = strtok_r(range, ";", &save);
		if (!tok)
			continue;
		while (*tok == ' ' || *tok == '\t')
			tok++;
		for (char *t = tok + strlen(tok); t > tok && (t[-1] == ' ' || t[-1] == '\t'); t--)
			t[-1] = 0;
		om = !strcasecmp(tok, "application/openmetrics-text");
		text = !strcasecmp(tok, "text/plain") || !strcasecmp(tok, "text/*") ||
		       !strcmp(tok, "*/*");
		if (semi) {
			char *param;

			while ((param = strtok_r(NULL, ";", &save))) {
				while (*param == ' ' || *param == '\t')
					param++;
				if (!strncasecmp(param, "q=", 2))
					q = strtod(param + 2, NULL);
				else if (om && !strncasecmp(param, "version=", 8))
					version_ok = !strncmp(param + 8, "1.0.0", 5);
			}
		}
		if (!(q > 0))
			continue;
		if (om && version_ok && q > om_q)
			om_q = q;
		if (text && q > text_q)
			text_q = q;
	}
	return om_q > 0 && om_q >= text_q ? PROM_FMT_OPENMETRICS : PROM_FMT_TEXT;
}

const char *prom_content_type(enum prom_format f)
{
	return f == PROM_FMT_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
					 : "text/plain; version=0.0.4; charset=utf-8";
}

/* ---- rendering ---- */

enum family_type { FAM_COUNTER, FAM_GAUGE, FAM_HISTOGRAM, FAM_INFO };

struct renderer {
	struct prom_buf *b;
	enum prom_format f;
	char le[PROM_NBUCKETS][32];
	struct prom_buf lbl;  /* the current series' labels, escaped */
};

/* HELP text: both formats escape \\ and newline; OpenMetrics also ". */
static void help_text(struct renderer *r, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			pbuf_puts(r->b, "\\\\");
		else if (*s == '\n')
			pbuf_puts(r->b, "\\n");
		else if (*s == '"' && r->f == PROM_FMT_OPENMETRICS)
			pbuf_puts(r->b, "\\\"");
		else
			pbuf_putn(r->b, s, 1);
	}
	pbuf_puts(r->b, "\n");
}

/*
 * Metadata for a family. name is the family name: for counters without
 * _total, for info without _info. unit, when given, is its name's suffix.
 */
static void family(struct renderer *r, const char *name, enum family_type t, const char *unit,
		   const char *help)
{
	static const char *const types[] = { "counter", "gauge", "histogram", "info" };

	if (r->f == PROM_FMT_OPENMETRICS) {
		pbuf_printf(r->b, "# TYPE %s %s\n", name, types[t]);
		if (unit)
			pbuf_printf(r->b, "# UNIT %s %s\n", name, unit);
		pbuf_printf(r->b, "# HELP %s ", name);
		help_text(r, help);
		return;
	}
	/* 0.0.4 names the family as its samples are named; no info type */
	{
		const char *suffix = t == FAM_COUNTER ? "_total" : t == FAM_INFO ? "_info" : "";

		pbuf_printf(r->b, "# HELP %s%s ", name, suffix);
		help_text(r, help);
		pbuf_printf(r->b, "# TYPE %s%s %s\n", name, suffix, t == FAM_INFO ? "gauge" : types[t]);
	}
}

static void lbl_reset(struct renderer *r)
{
	r->lbl.len = 0;
	if (r->lbl.data)
		r->lbl.data[0] = 0;
}

static void lbl_add(struct renderer *r, const char *name, const char *value)
{
	pbuf_printf(&r->lbl, "%s%s=\"", r->lbl.len ? "," : "", name);
	pbuf_label_value(&r->lbl, value);
	pbuf_puts(&r->lbl, "\"");
}

static const char *lbl(const struct renderer *r)
{
	return r->lbl.data ? r->lbl.data : "";
}

/* Exact seconds from nanoseconds: no float rounding in sums. */
static void put_seconds(struct prom_buf *b, uint64_t ns)
{
	pbuf_printf(b, "%" PRIu64 ".%09" PRIu64, ns / UINT64_C(1000000000), ns % UINT64_C(1000000000));
}

/* "name{labels} " or "name " */
static void sample_start(struct renderer *r, const char *name)
{
	if (r->lbl.len)
		pbuf_printf(r->b, "%s{%s} ", name, lbl(r));
	else
		pbuf_printf(r->b, "%s ", name);
}

static void sample_u64(struct renderer *r, const char *name, uint64_t v)
{
	sample_start(r, name);
	pbuf_printf(r->b, "%" PRIu64 "\n", v);
}

/* A gauge without labels: its family lines and its one sample. */
static void gauge(struct renderer *r, const char *name, uint64_t v, const char *help)
{
	family(r, name, FAM_GAUGE, NULL, help);
	sample_u64(r, name, v);
}

static void sample_seconds(struct renderer *r, const char *name, uint64_t ns)
{
	sample_start(r, name);
	put_seconds(r->b, ns);
	pbuf_puts(r->b, "\n");
}

/* Floats always with a point or exponent, so they never read as integers. */
static void sample_double(struct renderer *r, const char *name, double v)
{
	char num[40];

	sample_start(r, name);
	snprintf(num, sizeof(num), "%.17g", v);
	if (!strpbrk(num, ".eEni"))
		strcat(num, ".0");
	pbuf_printf(r->b, "%s\n", num);
}

/*
 * One histogram's samples. _count is the sum of the slots rather than the
 * stats' count: the BPF side bumps them separately, and a read can fall
 * between the two; the buckets must add up to _count.
 */
static void histogram(struct renderer *r, const char *name, const struct ilock_stats *st)
{
	const char *sep = r->lbl.len ? "," : "";
	char sub[128];
	uint64_t cum = 0;
	unsigned i = 0;

	for (; i < PROM_FIRST_SLOT; i++)
		cum += st->hist[i];
	for (; i <= PROM_LAST_SLOT; i++) {
		cum += st->hist[i];
		pbuf_printf(r->b, "%s_bucket{%s%sle=\"%s\"} %" PRIu64 "\n", name, lbl(r), sep,
			    r->le[i - PROM_FIRST_SLOT], cum);
	}
	for (; i < ILOCK_HIST_SLOTS; i++)
		cum += st->hist[i];
	pbuf_printf(r->b, "%s_bucket{%s%sle=\"+Inf\"} %" PRIu64 "\n", name, lbl(r), sep, cum);
	snprintf(sub, sizeof(sub), "%s_count", name);
	sample_u64(r, sub, cum);
	snprintf(sub, sizeof(sub), "%s_sum", name);
	sample_seconds(r, sub, st->total_ns);
}

static void lock_labels(struct renderer *r, const struct prom_series *ps, uint32_t dev,
			uint8_t class, const char *mode)
{
	char kdev[24];

	lbl_reset(r);
	lbl_add(r, "fs", prom_dev_fs(ps, dev));
	lbl_add(r, "device", fmt_kdev(kdev, sizeof(kdev), dev));
	lbl_add(r, "class", class_name(class));
	if (mode)
		lbl_add(r, "mode", mode);
}

static void render_waits(struct renderer *r, const struct prom_series *ps)
{
	family(r, "ilock_lock_wait_seconds", FAM_HISTOGRAM, "seconds",
	       "Time tasks waited for an inode lock, per filesystem, device, lock class and mode "
	       "(class jbd2_wait: ext4 fsyncs waiting for the journal).");
	for (size_t i = 0; i < ps->ngroups; i++) {
		const struct prom_group *g = &ps->groups[i];

		for (int m = 0; m < 2; m++) {
			if (!g->wait[m].count)
				continue;
			lock_labels(r, ps, g->dev, g->class, mode_name((uint8_t)m));
			histogram(r, "ilock_lock_wait_seconds", &g->wait[m]);
		}
	}
}

/*
 * Tracked inodes and, per (device, class, mode), inode="other". Sorted by
 * device, then class, mode, inode, with "other" last of each.
 */
static void render_inode_waits(struct renderer *r, const struct prom_series *ps)
{
	const char *name = "ilock_inode_lock_wait_seconds";

	if (!ps->top_k)
		return;
	family(r, name, FAM_HISTOGRAM, "seconds",
	       "ilock_lock_wait_seconds of the inodes that had the most wait time (see docs/exporter.md); "
	       "the rest is in the inode label other.");
	for (size_t gi = 0; gi < ps->ngroups; gi++) {
		const struct prom_group *g = &ps->groups[gi];

		for (int m = 0; m < 2; m++) {
			char id[48];

			for (size_t i = 0; i < ps->ninodes; i++) {
				const struct prom_inode *ni = &ps->inodes[i];

				if (ni->dev != g->dev || !ni->present[g->class][m])
					continue;
				lock_labels(r, ps, g->dev, g->class, mode_name((uint8_t)m));
				/* dev:ino with dev as MAJ:MIN, as in the device label */
				snprintf(id, sizeof(id), "%u:%u:%" PRIu64, ILOCK_KDEV_MAJOR(ni->dev),
					 ILOCK_KDEV_MINOR(ni->dev), ni->ino);
				lbl_add(r, "inode", id);
				lbl_add(r, "path", ni->path);
				histogram(r, name, &ni->own[g->class][m]);
			}
			if (!g->other[m].count && !hist_total(g->other[m].hist))
				continue;
			lock_labels(r, ps, g->dev, g->class, mode_name((uint8_t)m));
			lbl_add(r, "inode", "other");
			lbl_add(r, "path", "");
			histogram(r, name, &g->other[m]);
		}
	}
}

static void render_holds(struct renderer *r, const struct prom_series *ps)
{
	family(r, "ilock_lock_hold_seconds", FAM_HISTOGRAM, "seconds",
	       "Time an inode lock was held, acquire to release (XFS only: from its xfs_ilock tracepoints).");
	for (size_t i = 0; i < ps->ngroups; i++) {
		const struct prom_group *g = &ps->groups[i];

		for (int m = 0; m < 2; m++) {
			if (!g->has_hold || !g->hold[m].count)
				continue;
			lock_labels(r, ps, g->dev, g->class, mode_name((uint8_t)m));
			histogram(r, "ilock_lock_hold_seconds", &g->hold[m]);
		}
	}
	family(r, "ilock_lock_acquisitions", FAM_COUNTER, NULL,
	       "Inode lock acquisitions released so far, contended or not (XFS only). "
	       "Contended ones are ilock_lock_wait_seconds_count.");
	for (size_t i = 0; i < ps->ngroups; i++) {
		const struct prom_group *g = &ps->groups[i];

		for (int m = 0; m < 2; m++) {
			if (!g->has_hold || !g->hold[m].count)
				continue;
			lock_labels(r, ps, g->dev, g->class, mode_name((uint8_t)m));
			sample_u64(r, "ilock_lock_acquisitions_total", hist_total(g->hold[m].hist));
		}
	}
}

static void pair_labels(struct renderer *r, const struct prom_series *ps,
			const struct prom_pair_key *k)
{
	lock_labels(r, ps, k->dev, k->class, NULL);
	lbl_add(r, "holder_comm", k->holder_comm);
	lbl_add(r, "holder_role", k->holder_role);
	lbl_add(r, "holder_mode", mode_name(k->holder_mode));
	lbl_add(r, "waiter_comm", k->waiter_comm);
	lbl_add(r, "waiter_role", k->waiter_role);
	lbl_add(r, "waiter_mode", mode_name(k->waiter_mode));
}

/*
 * One of a pair of counter families, BASE_waits and BASE_wait_seconds:
 * declares the one asked for and gives its sample name (in buf).
 */
static const char *wait_family(struct renderer *r, bool seconds, const char *base,
			       const char *help_waits, const char *help_seconds, char *buf,
			       size_t len)
{
	snprintf(buf, len, "%s_%s", base, seconds ? "wait_seconds" : "waits");
	family(r, buf, FAM_COUNTER, seconds ? "seconds" : NULL, seconds ? help_seconds : help_waits);
	strncat(buf, "_total", len - strlen(buf) - 1);
	return buf;
}

/* A sample of a wait_family: the waits, or their time. */
static void sample_wait(struct renderer *r, const char *name, bool seconds, uint64_t waits,
			uint64_t ns)
{
	if (seconds)
		sample_seconds(r, name, ns);
	else
		sample_u64(r, name, waits);
}

static void render_pairs(struct renderer *r, const struct prom_series *ps, bool seconds)
{
	char buf[64];
	const char *name = wait_family(r, seconds, "ilock_serialised",
		"Waits behind a holder, by command name, process title role and lock mode (never pid).",
		"Time waiters spent behind holders, by command name, process title role and lock mode (never pid).",
		buf, sizeof(buf));

	for (int folded = 0; folded < 2; folded++) {
		const struct prom_pair *arr = folded ? ps->folded : ps->pairs;
		size_t n = folded ? ps->nfolded : ps->npairs;

		for (size_t i = 0; i < n; i++) {
			pair_labels(r, ps, &arr[i].k);
			sample_wait(r, name, seconds, arr[i].count, arr[i].ns);
		}
	}
}

/* The pairs by what each side was doing: buffered-write exclusive -> buffered-read shared. */
static void render_op_pairs(struct renderer *r, const struct prom_series *ps, bool seconds)
{
	char buf[64];
	const char *name = wait_family(r, seconds, "ilock_serialised_op",
		"Waits behind a holder, by what each side was doing (op) and lock mode.",
		"Time waiters spent behind holders, by what each was doing (op) and lock mode.",
		buf, sizeof(buf));

	for (size_t i = 0; i < ps->nops; i++) {
		const struct prom_op_pair *o = &ps->ops[i];

		lock_labels(r, ps, o->dev, o->class, NULL);
		lbl_add(r, "holder_op", op_name(o->holder_op));
		lbl_add(r, "holder_mode", mode_name(o->holder_mode));
		lbl_add(r, "waiter_op", op_name(o->waiter_op));
		lbl_add(r, "waiter_mode", mode_name(o->waiter_mode));
		sample_wait(r, name, seconds, o->count, o->ns);
	}
}

/*
 * Range-lock headroom: a group's waits by how the holder's and the waiter's
 * byte ranges met, the three groups of the text report. All three series
 * of a group are always there, so that a ratio of rates never lacks a term;
 * the journal-commit waits have no ranges and no series.
 */
static void render_ranges(struct renderer *r, const struct prom_series *ps, bool seconds)
{
	char buf[64];
	const char *name = wait_family(r, seconds, "ilock_range",
		"Waits behind a holder, by whether their byte ranges overlapped.",
		"Time waited behind a holder, by whether their byte ranges overlapped "
		"(disjoint: a range lock would not have blocked).", buf, sizeof(buf));

	for (size_t i = 0; i < ps->ngroups; i++) {
		const struct prom_group *g = &ps->groups[i];
		const struct ilock_range_stats v[3] = {
			g->range[ILOCK_RANGE_OVERLAP], g->range[ILOCK_RANGE_DISJOINT],
			range_unknown(g->range),
		};
		static const uint8_t label[3] = { ILOCK_RANGE_OVERLAP, ILOCK_RANGE_DISJOINT,
						  ILOCK_RANGE_NO_BOTH };

		if (!class_has_ranges(g->class) || !(g->wait[0].count || g->wait[1].count))
			continue;
		for (int j = 0; j < 3; j++) {
			lock_labels(r, ps, g->dev, g->class, NULL);
			lbl_add(r, "range", range_group_name(label[j]));
			sample_wait(r, name, seconds, v[j].waits, v[j].wait_ns);
		}
	}
}

/* One gauge per slot table (label table): its entries in use, or its capacity. */
static void table_gauge(struct renderer *r, const char *name, const struct prom_series *ps,
			bool cap, const char *help)
{
	family(r, name, FAM_GAUGE, NULL, help);
	for (int t = 0; t < TABLE_MAX; t++) {
		lbl_reset(r);
		lbl_add(r, "table", table_name(t));
		sample_u64(r, name, cap ? ps->tables[t].cap : ps->tables[t].used);
	}
}

static void render_counters(struct renderer *r, const struct prom_series *ps)
{
	family(r, "ilock_lost_events", FAM_COUNTER, NULL,
	       "Events ilock could not record in full, by reason (docs/exporter.md).");
	for (int c = ILOCK_FIRST_LOST; c < ILOCK_COUNTER_MAX; c++) {
		lbl_reset(r);
		lbl_add(r, "reason", counter_name(c));
		sample_u64(r, "ilock_lost_events_total", ps->counters[c]);
	}
	family(r, "ilock_events", FAM_COUNTER, NULL, "Tracepoint events seen by ilock's BPF programs.");
	for (int c = 0; c < ILOCK_FIRST_LOST; c++) {
		lbl_reset(r);
		lbl_add(r, "event", counter_name(c));
		sample_u64(r, "ilock_events_total", ps->counters[c]);
	}
	lbl_reset(r);
	gauge(r, "ilock_waits_in_flight", ps->in_flight,
	      "Inode lock waits begun and not yet ended at the last collection.");
	if (ps->waiting_available) {
		/* a stall shows while it lasts, not only in the histograms once it ends */
		family(r, "ilock_oldest_wait_seconds", FAM_GAUGE, "seconds",
		       "Age of the oldest inode lock wait still in progress at the last collection "
		       "(0: none).");
		sample_seconds(r, "ilock_oldest_wait_seconds", ps->oldest_wait_ns);
		gauge(r, "ilock_stalled_waits", ps->stalled_waits,
		      "Inode lock waits in progress for 100 ms or more at the last collection.");
		family(r, "ilock_oldest_fsync_seconds", FAM_GAUGE, "seconds",
		       "Age of the oldest ext4 fsync still in progress at the last collection, as "
		       "the jbd2_wait probes see them (0: none).");
		sample_seconds(r, "ilock_oldest_fsync_seconds", ps->oldest_fsync_ns);
	}
	/* to alert before a table fills: a full one loses new keys (ilock_lost_events_total) */
	table_gauge(r, "ilock_table_entries", ps, false,
		    "Entries in use in ilock's in-kernel tables at the last collection "
		    "(locks: inode, lock and mode; pairs: holder and waiter threads).");
	table_gauge(r, "ilock_table_capacity", ps, true,
		    "Entries ilock's in-kernel tables hold (--max-inodes); a full table loses new "
		    "entries (ilock_lost_events_total), past 7/8 new pairs lose their threads.");
	lbl_reset(r);
	gauge(r, "ilock_contended_inodes", ps->contended_inodes,
	      "Inodes with at least one lock wait since the exporter started, each once across "
	      "renewals of the tables (for the first million folded away at a renewal).");
	gauge(r, "ilock_exporter_inode_series", ps->ninodes,
	      "Inodes with their own ilock_inode_lock_wait_seconds series (never more than the limit).");
	gauge(r, "ilock_exporter_inode_series_limit", ps->max_inodes,
	      "Most inodes with their own series at once: twice --top-inodes.");
	family(r, "ilock_exporter_inode_series_retired", FAM_COUNTER, NULL,
	       "Inodes whose own series were dropped after --series-idle seconds without a wait, "
	       "to make room for the files hot now; what they counted is in no inode series.");
	sample_u64(r, "ilock_exporter_inode_series_retired_total", ps->inode_series_retired);
	gauge(r, "ilock_holder_waiter_pairs", ps->pairs_seen,
	      "Distinct holder/waiter command, role and mode pairs since the exporter started.");
	gauge(r, "ilock_exporter_pair_series", ps->npairs,
	      "Holder/waiter pairs with their own ilock_serialised_* series.");
	gauge(r, "ilock_exporter_pair_series_limit", ps->max_pairs,
	      "Most holder/waiter pairs with their own series at once (--max-pairs).");
	family(r, "ilock_exporter_pair_series_retired", FAM_COUNTER, NULL,
	       "Holder/waiter pairs whose own series were dropped after --series-idle seconds "
	       "without a wait; what they counted is in no pair series.");
	sample_u64(r, "ilock_exporter_pair_series_retired_total", ps->pair_series_retired);
}

static void render_self(struct renderer *r, const struct prom_meta *m)
{
	static const char *const fmt_names[PROM_FMT_MAX] = { "text", "openmetrics" };

	lbl_reset(r);
	if (m->have_bpf_stats) {
		family(r, "ilock_bpf_run_seconds", FAM_COUNTER, "seconds",
		       "CPU time spent in ilock's BPF programs (kernel BPF run-time stats).");
		sample_seconds(r, "ilock_bpf_run_seconds_total", m->bpf_run_ns);
		family(r, "ilock_bpf_runs", FAM_COUNTER, NULL, "Runs of ilock's BPF programs.");
		sample_u64(r, "ilock_bpf_runs_total", m->bpf_run_cnt);
	}
	family(r, "ilock_exporter_collections", FAM_COUNTER, NULL,
	       "Reads of the BPF maps into a new exposition.");
	sample_u64(r, "ilock_exporter_collections_total", m->collections);
	family(r, "ilock_exporter_collect_errors", FAM_COUNTER, NULL,
	       "Collections that failed; the previous exposition was kept.");
	sample_u64(r, "ilock_exporter_collect_errors_total", m->collect_errors);
	family(r, "ilock_table_renewals", FAM_COUNTER, NULL,
	       "Moves to fresh in-kernel tables when one was 80% full (--renew); what the old "
	       "ones counted stays in every series.");
	sample_u64(r, "ilock_table_renewals_total", m->renewals);
	family(r, "ilock_table_renewal_failures", FAM_COUNTER, NULL,
	       "Tries to load fresh tables that failed; the old ones traced on.");
	sample_u64(r, "ilock_table_renewal_failures_total", m->renew_failures);
	family(r, "ilock_exporter_collect_seconds", FAM_COUNTER, "seconds",
	       "Time spent reading the BPF maps and rendering, all collections.");
	sample_seconds(r, "ilock_exporter_collect_seconds_total", m->collect_ns_total);
	family(r, "ilock_exporter_last_collect_duration_seconds", FAM_GAUGE, "seconds",
	       "How long the previous collection took.");
	sample_seconds(r, "ilock_exporter_last_collect_duration_seconds", m->last_collect_ns);
	family(r, "ilock_exporter_last_collect_timestamp_seconds", FAM_GAUGE, "seconds",
	       "When this exposition was collected (Unix time).");
	pbuf_printf(r->b, "ilock_exporter_last_collect_timestamp_seconds %.3f\n", m->last_collect_unix);
	family(r, "ilock_exporter_scrapes", FAM_COUNTER, NULL,
	       "Scrapes answered before this exposition was collected, by format.");
	for (int f = 0; f < PROM_FMT_MAX; f++) {
		lbl_reset(r);
		lbl_add(r, "format", fmt_names[f]);
		sample_u64(r, "ilock_exporter_scrapes_total", m->scrapes[f]);
	}
	lbl_reset(r);
	family(r, "ilock_exporter_scrape_seconds", FAM_COUNTER, "seconds",
	       "Time from request to last byte sent, all scrapes counted in ilock_exporter_scrapes_total.");
	sample_seconds(r, "ilock_exporter_scrape_seconds_total", m->scrape_ns_total);
	family(r, "ilock_exporter_http_errors", FAM_COUNTER, NULL,
	       "Requests answered 404 or 405.");
	sample_u64(r, "ilock_exporter_http_errors_total", m->http_errors);
	family(r, "process_cpu_seconds", FAM_COUNTER, "seconds",
	       "User and system CPU time of the exporter process.");
	sample_double(r, "process_cpu_seconds_total", m->cpu_user_s + m->cpu_system_s);
	family(r, "process_resident_memory_bytes", FAM_GAUGE, "bytes", "Resident memory size.");
	sample_u64(r, "process_resident_memory_bytes", m->rss_bytes);
	family(r, "process_start_time_seconds", FAM_GAUGE, "seconds",
	       "Start time of the process (Unix time).");
	pbuf_printf(r->b, "process_start_time_seconds %.3f\n", m->start_unix);
}

void prom_render(struct prom_buf *b, enum prom_format f, const struct prom_series *ps,
		 const struct prom_meta *m)
{
	struct renderer r = { .b = b, .f = f };

	pbuf_init(&r.lbl);
	for (unsigned i = PROM_FIRST_SLOT; i <= PROM_LAST_SLOT; i++)
		prom_fmt_canonical(r.le[i - PROM_FIRST_SLOT], sizeof(r.le[0]),
				   (double)hist_slot_hi(i) / 1e9);

	family(&r, "ilock_build", FAM_INFO, NULL,
	       "ilock's version, the kernel it runs on, and its wait sampling.");
	lbl_add(&r, "version", m->version ? m->version : "");
	lbl_add(&r, "kernel", m->kernel ? m->kernel : "");
	/* not "off": every wait series is an estimate (--wait-sample) */
	lbl_add(&r, "wait_sampling", m->wait_sampling ? m->wait_sampling : "off");
	pbuf_printf(b, "ilock_build_info{%s} 1\n", lbl(&r));

	render_waits(&r, ps);
	render_inode_waits(&r, ps);
	render_holds(&r, ps);
	render_pairs(&r, ps, false);
	render_pairs(&r, ps, true);
	render_op_pairs(&r, ps, false);
	render_op_pairs(&r, ps, true);
	render_ranges(&r, ps, false);
	render_ranges(&r, ps, true);
	render_counters(&r, ps);
	render_self(&r, m);
	if (f == PROM_FMT_OPENMETRICS)
		pbuf_puts(b, "# EOF\n");
	if (r.lbl.oom)
		b->oom = true;
	pbuf_free(&r.lbl);
}
