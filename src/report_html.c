// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `ilock report --html`: one self-contained page. Inline CSS and SVG only:
 * no scripts, no fonts, no network, so it opens anywhere and can be mailed.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "hist.h"
#include "ops.h"
#include "render_ops.h"
#include "render.h"
#include "report.h"
#include "titles.h"
#include "util.h"

#define CHART_W 900
#define CHART_H 150
#define CHART_LEFT 70
#define CHART_BOTTOM 22
#define CHART_COLS 300
#define HIST_W 430
#define HIST_H 170

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

static void task(FILE *f, const char *comm, uint32_t pid)
{
	char b[48];

	esc(f, fmt_task(b, sizeof(b), comm, pid));
}

/* As ilock stat's text names them (fmt_holder_task), so pasted tables agree. */
static void holder(FILE *f, const struct ilock_edge_key *k)
{
	char b[96];

	esc(f, fmt_holder_task(b, sizeof(b), k->holder_comm, k->holder_pid, k->holder_mode));
}

/* Under a thread's name, its process title ("postgres: checkpointer"), if it has one. */
static void title_below(FILE *f, const struct report_ctx *c, uint32_t pid, const char *comm)
{
	const char *t = titles_get(c->meta ? c->meta->titles : NULL, pid, comm);

	if (!t)
		return;
	fputs("<br><small>", f);
	esc(f, t);
	fputs("</small>", f);
}

static void head(FILE *f, const struct report_ctx *c)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>ilock report: ",
	      f);
	esc(f, c->file);
	fputs("</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:24px;color:#222;background:#fff}\n"
	      "h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:2px solid #444}\n"
	      "h3{font-size:14px;margin:18px 0 4px;font-family:monospace}\n"
	      "table{border-collapse:collapse;font-size:13px}\n"
	      "td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}\n"
	      ".l{text-align:left}th{background:#f0f0f0}\n"
	      "table.meta td{text-align:left}\n"
	      ".warn{color:#a00;font-weight:bold}\n"
	      "svg text{font-family:sans-serif;font-size:11px;fill:#333}\n"
	      ".sh{fill:#3b7dd8}.ex{fill:#d8503b}.axis{stroke:#888;stroke-width:1}\n"
	      ".swatch{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}\n"
	      ".stk{font-size:12px;margin:4px 0 8px}.stk ol{font-family:monospace;margin:2px 0}\n"
	      "</style>\n</head>\n<body>\n", f);
}

static void meta_row(FILE *f, const char *k, const char *v)
{
	fprintf(f, "<tr><th class=\"l\">%s</th><td>", k);
	esc(f, v ? v : "?");
	fputs("</td></tr>\n", f);
}

static void summary(FILE *f, const struct report_ctx *c)
{
	const struct recording *r = c->r;
	char t1[32], t2[32], buf[256], moved[96];
	uint64_t from = r->iv[c->i0].t_start_ns;
	uint64_t to = r->iv[c->i1 - 1].t_start_ns + r->iv[c->i1 - 1].dur_ns;

	fputs("<h1>ilock report</h1>\n<table class=\"meta\">\n", f);
	meta_row(f, "recording", c->file);
	meta_row(f, "host", rec_meta(r, "hostname"));
	meta_row(f, "kernel", rec_meta(r, "kernel"));
	meta_row(f, "boot id", rec_meta(r, "boot_id"));
	snprintf(buf, sizeof(buf), "%s to %s (%.1f s to %.1f s from the start)",
		 report_fmt_time(t1, sizeof(t1), r->start_realtime_ns + from),
		 report_fmt_time(t2, sizeof(t2), r->start_realtime_ns + to), (double)from / 1e9,
		 (double)to / 1e9);
	meta_row(f, "window", buf);
	snprintf(buf, sizeof(buf), "%zu of %zu, %g s each%s", c->i1 - c->i0, r->niv,
		 (double)r->interval_ns / 1e9, report_renewal_note(moved, sizeof(moved), r, c->i0, c->i1));
	meta_row(f, "intervals", buf);
	meta_row(f, "filters when recorded", rec_meta(r, "filters"));
	/* --wait-sample: say before any figure that the figures are estimates */
	if (meta_wait_sampling(c->meta)) {
		snprintf(buf, sizeof(buf), "%s: waits, times and histograms are estimates; max is "
			 "the longest wait timed", meta_wait_sampling(c->meta));
		meta_row(f, "wait sampling", buf);
	}
	if (r->status != REC_OK) {
		fputs("<tr><th class=\"l\">damage</th><td class=\"warn\">", f);
		esc(f, r->msg);
		fprintf(f, " (%" PRIu64 " bytes lost)</td></tr>\n", r->file_size - r->good_bytes);
	} else if (!r->has_end) {
		meta_row(f, "note", "no end block: the recorder was killed, ran out of space, or is still running");
	}
	fputs("</table>\n", f);
}

static void top_table(FILE *f, const struct report_ctx *c)
{
	const struct snapshot *s = c->merged;

	fputs("<h2>Top inode locks by wait time</h2>\n", f);
	if (!c->nrows) {
		fputs("<p>No inode lock waits in this window.</p>\n", f);
		return;
	}
	fputs("<table>\n<tr><th class=\"l\">path</th><th>fs</th><th>lock</th><th>shared waits</th>"
	      "<th>exclusive waits</th><th>wait time</th><th>p50</th><th>p99</th><th>max</th>"
	      "<th class=\"l\">top holder</th></tr>\n", f);
	for (int k = 0; k < c->nrows; k++) {
		const struct lock_row *l = c->rows[k].lock;
		const struct edge_row *e = snap_top_holder(s, l->dev, l->ino, l->gen, l->class);
		struct ilock_stats both = l->wait[0];
		struct inode_view v;
		char label[2 * ILOCK_PATH_MAX + 64], a[24], b[24], t[24], p50[24], p99[24], mx[24];

		stats_merge(&both, &l->wait[1]);
		describe_inode(s, c->meta->mounts, l->dev, l->ino, l->gen, l->has_hold, &v);
		report_label(s, c->meta, l->dev, l->ino, l->gen, l->has_hold, label, sizeof(label));
		fputs("<tr><td class=\"l\">", f);
		esc(f, label);
		fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
			   "<td>%s</td><td>%s</td><td class=\"l\">", v.fs,
			class_display_name(l->class, v.magic),
			fmt_count(a, sizeof(a), l->wait[ILOCK_MODE_SHARED].count),
			fmt_count(b, sizeof(b), l->wait[ILOCK_MODE_EXCL].count),
			fmt_ns(t, sizeof(t), both.total_ns),
			fmt_ns(p50, sizeof(p50), stats_percentile(&both, 0.5)),
			fmt_ns(p99, sizeof(p99), stats_percentile(&both, 0.99)),
			fmt_ns(mx, sizeof(mx), both.max_ns));
		if (e)
			holder(f, &e->k);
		else
			fputs("-", f);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* Would a range lock have helped: the top locks' waits by how the two byte ranges met. */
static void ranges_table(FILE *f, const struct report_ctx *c)
{
	const struct snapshot *s = c->merged;
	bool any = false;

	for (int k = 0; k < c->nrows; k++) {
		const struct lock_row *l = c->rows[k].lock;
		const struct ilock_range_stats *ov = &l->range[ILOCK_RANGE_OVERLAP];
		const struct ilock_range_stats *dj = &l->range[ILOCK_RANGE_DISJOINT];
		struct ilock_range_stats un = row_range_unknown(l);
		double h = row_headroom(l);
		struct inode_view v;
		char label[2 * ILOCK_PATH_MAX + 64], a[24], b[24], d[24], e[24], g[24], i[24];

		if (l->class == ILOCK_CLASS_JBD2_WAIT)
			continue;  /* a journal commit has no byte range */
		if (!any)
			fputs("<h2>Byte ranges: would a range lock have let them run together?</h2>\n"
			      "<table>\n<tr><th class=\"l\">path</th><th>lock</th><th>overlapping</th>"
			      "<th>disjoint</th><th>a range unknown</th><th>headroom</th></tr>\n", f);
		any = true;
		describe_inode(s, c->meta->mounts, l->dev, l->ino, l->gen, l->has_hold, &v);
		report_label(s, c->meta, l->dev, l->ino, l->gen, l->has_hold, label, sizeof(label));
		fputs("<tr><td class=\"l\">", f);
		esc(f, label);
		fprintf(f, "</td><td>%s</td><td>%s (%s)</td><td>%s (%s)</td><td>%s (%s)</td>",
			class_display_name(l->class, v.magic), fmt_count(a, sizeof(a), ov->waits),
			fmt_ns(b, sizeof(b), ov->wait_ns), fmt_count(d, sizeof(d), dj->waits),
			fmt_ns(e, sizeof(e), dj->wait_ns), fmt_count(g, sizeof(g), un.waits),
			fmt_ns(i, sizeof(i), un.wait_ns));
		if (h < 0)
			fputs("<td>-</td></tr>\n", f);
		else
			fprintf(f, "<td>%.0f%%</td></tr>\n", 100.0 * h);
	}
	if (any)
		fputs("</table>\n<p>Headroom: the share of the wait time with both ranges known whose "
		      "ranges were disjoint, which a perfect range lock would not have made wait "
		      "(docs/ranges.md).</p>\n", f);
}

static void lock_title(FILE *f, const struct report_ctx *c, const struct lock_row *l)
{
	char label[2 * ILOCK_PATH_MAX + 64];
	struct inode_view v;

	describe_inode(c->merged, c->meta->mounts, l->dev, l->ino, l->gen, l->has_hold, &v);
	report_label(c->merged, c->meta, l->dev, l->ino, l->gen, l->has_hold, label, sizeof(label));
	fputs("<h3>", f);
	esc(f, label);
	fprintf(f, " &mdash; %s %s</h3>\n", v.fs, class_display_name(l->class, v.magic));
}

static void legend(FILE *f)
{
	fputs("<div><span class=\"swatch sh\" style=\"background:#3b7dd8\"></span>shared"
	      "<span class=\"swatch ex\" style=\"background:#d8503b\"></span>exclusive</div>\n", f);
}

/* Stacked bars: wait per second in each column of intervals, shared under exclusive. */
static void timeline_svg(FILE *f, const struct report_ctx *c, const struct report_row *row)
{
	size_t n = c->i1 - c->i0;
	int cols = n < CHART_COLS ? (int)n : CHART_COLS;
	double sh[CHART_COLS], ex[CHART_COLS], peak = 0;
	int plot_w = CHART_W - CHART_LEFT - 10, plot_h = CHART_H - CHART_BOTTOM - 10;
	char lbl[24];

	for (int k = 0; k < cols; k++) {
		size_t a = (size_t)k * n / (size_t)cols, b = (size_t)(k + 1) * n / (size_t)cols;
		double secs = 0, s = 0, x = 0;

		for (size_t i = a; i < b; i++) {
			secs += report_rate_secs(c->r, c->i0 + i);
			s += (double)row->wait_ns[0][i];
			x += (double)row->wait_ns[1][i];
		}
		sh[k] = secs > 0 ? s / secs : 0;
		ex[k] = secs > 0 ? x / secs : 0;
		if (sh[k] + ex[k] > peak)
			peak = sh[k] + ex[k];
	}
	fprintf(f, "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		   "height=\"%d\" role=\"img\">\n", CHART_W, CHART_H);
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"10\" x2=\"%d\" y2=\"%d\"/>\n", CHART_LEFT,
		CHART_LEFT, 10 + plot_h);
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", CHART_LEFT,
		10 + plot_h, CHART_LEFT + plot_w, 10 + plot_h);
	fprintf(f, "<text x=\"%d\" y=\"16\" text-anchor=\"end\">%s/s</text>\n", CHART_LEFT - 4,
		fmt_ns(lbl, sizeof(lbl), u64_of(peak)));
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n", CHART_LEFT - 4,
		10 + plot_h);
	fprintf(f, "<text x=\"%d\" y=\"%d\">%.1f s</text>\n", CHART_LEFT, CHART_H - 4,
		(double)c->r->iv[c->i0].t_start_ns / 1e9);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.1f s</text>\n",
		CHART_LEFT + plot_w, CHART_H - 4,
		(double)(c->r->iv[c->i1 - 1].t_start_ns + c->r->iv[c->i1 - 1].dur_ns) / 1e9);
	for (int k = 0; peak > 0 && k < cols; k++) {
		double x = CHART_LEFT + (double)k * plot_w / cols, w = (double)plot_w / cols;
		double hs = sh[k] / peak * plot_h, hx = ex[k] / peak * plot_h;
		double base = 10 + plot_h;

		if (w > 2)
			w -= 1;  /* a gap between wide bars */
		if (hs > 0)
			fprintf(f, "<rect class=\"sh\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
				x, base - hs, w, hs);
		if (hx > 0)
			fprintf(f, "<rect class=\"ex\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
				x, base - hs - hx, w, hx);
	}
	fputs("</svg>\n", f);
}

#define HIST_LABEL_W 50

/* Buckets per axis label, for buckets w px wide. */
static int hist_label_stride(double w)
{
	int stride = 1;

	while (stride * w < HIST_LABEL_W)
		stride++;
	return stride;
}

/* title: what is counted, e.g. "shared waits" */
static void hist_svg(FILE *f, const char *title, const char *cls, const __u64 *h, int first,
		     int last)
{
	int plot_w = HIST_W - 50, plot_h = HIST_H - 50, nb = last - first + 1;
	int stride = hist_label_stride((double)plot_w / nb);
	uint64_t peak = 0;
	char lo[24], cnt[24];

	for (int i = first; i <= last; i++)
		if (h[i] > peak)
			peak = h[i];
	fprintf(f, "<svg class=\"hist\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		   "height=\"%d\" role=\"img\">\n", HIST_W, HIST_H);
	fprintf(f, "<text x=\"45\" y=\"12\">%s (count per log2 bucket)</text>\n", title);
	fprintf(f, "<line class=\"axis\" x1=\"45\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", 20 + plot_h,
		45 + plot_w, 20 + plot_h);
	fprintf(f, "<text x=\"41\" y=\"26\" text-anchor=\"end\">%s</text>\n",
		fmt_count(cnt, sizeof(cnt), peak));
	for (int i = first; i <= last; i++) {
		double w = (double)plot_w / nb, x = 45 + (i - first) * w;
		double bh = peak ? (double)h[i] / (double)peak * plot_h : 0;

		if (h[i]) {
			fprintf(f, "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
				   "height=\"%.2f\"><title>", cls, x + 1, 20 + plot_h - bh,
				w > 3 ? w - 2 : w, bh);
			fprintf(f, "%s: %s</title></rect>\n", fmt_ns(lo, sizeof(lo), hist_slot_lo((unsigned)i)),
				fmt_count(cnt, sizeof(cnt), h[i]));
		}
		/*
		 * A label ("16.8 ms") is about 45 px at 11 px: one every stride
		 * buckets so that none overlaps, none cut by the right edge.
		 */
		if ((i - first) % stride == 0 && x + w / 2 + HIST_LABEL_W / 2 <= HIST_W)
			fprintf(f, "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
				x + w / 2, HIST_H - 14, fmt_ns(lo, sizeof(lo), hist_slot_lo((unsigned)i)));
	}
	fputs("</svg>\n", f);
}

/*
 * The buckets two histograms share, with some empty ones around the data
 * to show where it sits. False when both are empty.
 */
static bool hist_span(const __u64 *a, const __u64 *b, int *first, int *last)
{
	*first = *last = -1;
	for (int i = 0; i < ILOCK_HIST_SLOTS; i++) {
		if (a[i] || b[i]) {
			if (*first < 0)
				*first = i;
			*last = i;
		}
	}
	if (*first < 0)
		return false;
	while (*last - *first < 7) {
		if (*first > 0)
			(*first)--;
		if (*last - *first < 7 && *last < ILOCK_HIST_SLOTS - 1)
			(*last)++;
	}
	return true;
}

/* As `ilock stat`'s "holds" lines: under sampling the count is an estimate. */
static void hold_summary(FILE *f, const char *mode, const struct ilock_stats *h, bool sampled)
{
	char n[24], p50[24], p99[24], mx[24];

	if (!h->count)
		return;
	fprintf(f, "<p class=\"holds\">held %s: %s%s acquisitions, p50 %s, p99 %s, max%s %s</p>\n",
		mode, sampled ? "~" : "", fmt_count(n, sizeof(n), h->count),
		fmt_ns(p50, sizeof(p50), stats_percentile(h, 0.5)),
		fmt_ns(p99, sizeof(p99), stats_percentile(h, 0.99)), sampled ? " timed" : "",
		fmt_ns(mx, sizeof(mx), h->max_ns));
}

/* With --holds, how long the lock was held in each mode, beside its waits. */
static void hold_histograms(FILE *f, const struct report_ctx *c, const struct lock_row *l)
{
	bool sampled = meta_holds_sampled(c->meta);
	int first, last;

	if (!hist_span(l->hold[0].hist, l->hold[1].hist, &first, &last))
		return;
	hold_summary(f, "shared", &l->hold[ILOCK_MODE_SHARED], sampled);
	hold_summary(f, "exclusive", &l->hold[ILOCK_MODE_EXCL], sampled);
	hist_svg(f, sampled ? "shared holds timed" : "shared holds", "sh",
		 l->hold[ILOCK_MODE_SHARED].hist, first, last);
	hist_svg(f, sampled ? "exclusive holds timed" : "exclusive holds", "ex",
		 l->hold[ILOCK_MODE_EXCL].hist, first, last);
}

static void histograms(FILE *f, const struct report_ctx *c)
{
	fputs("<h2>Wait histograms (shared and exclusive)</h2>\n", f);
	if (!c->nrows)
		fputs("<p>No waits.</p>\n", f);
	for (int k = 0; k < c->nrows; k++) {
		const struct lock_row *l = c->rows[k].lock;
		int first, last;

		lock_title(f, c, l);
		if (!hist_span(l->wait[0].hist, l->wait[1].hist, &first, &last))
			fputs("<p>No waits.</p>\n", f);
		else {
			hist_svg(f, "shared waits", "sh", l->wait[ILOCK_MODE_SHARED].hist, first, last);
			hist_svg(f, "exclusive waits", "ex", l->wait[ILOCK_MODE_EXCL].hist, first,
				 last);
		}
		hold_histograms(f, c, l);
	}
}

/*
 * With --holds, the locks taken that nobody waited for, by time held: how
 * often each mode was taken is an answer of its own (shared/seeds/001).
 */
static void held_only(FILE *f, const struct report_ctx *c)
{
	const struct snapshot *s = c->merged;
	bool sampled = meta_holds_sampled(c->meta);
	const struct lock_row **v;
	long n = snap_held_only(s, &v);

	if (!n)
		return;
	fputs("<h2>Held without waits</h2>\n", f);
	if (n < 0) {
		fputs("<p>Out of memory for the held locks.</p>\n", f);
		return;
	}
	fprintf(f, "<table>\n<tr><th class=\"l\">path</th><th>fs</th><th>lock</th>"
		   "<th>held shared</th><th>p99</th><th>held exclusive</th><th>p99</th>"
		   "<th>max%s</th><th>time held</th></tr>\n", sampled ? " timed" : "");
	for (long i = 0; i < n && i < c->top_n; i++) {
		const struct lock_row *l = v[i];
		const struct ilock_stats *sh = &l->hold[ILOCK_MODE_SHARED];
		const struct ilock_stats *ex = &l->hold[ILOCK_MODE_EXCL];
		char label[2 * ILOCK_PATH_MAX + 64], a[24], b[24], pa[24], pb[24], mx[24], t[24];
		struct inode_view iv;

		describe_inode(s, c->meta->mounts, l->dev, l->ino, l->gen, true, &iv);
		report_label(s, c->meta, l->dev, l->ino, l->gen, true, label, sizeof(label));
		fputs("<tr><td class=\"l\">", f);
		esc(f, label);
		fprintf(f, "</td><td>%s</td><td>%s</td><td>%s%s</td><td>%s</td><td>%s%s</td>"
			   "<td>%s</td><td>%s</td><td>%s</td></tr>\n", iv.fs,
			class_display_name(l->class, iv.magic), sampled && sh->count ? "~" : "",
			fmt_count(a, sizeof(a), sh->count),
			sh->count ? fmt_ns(pa, sizeof(pa), stats_percentile(sh, 0.99)) : "-",
			sampled && ex->count ? "~" : "", fmt_count(b, sizeof(b), ex->count),
			ex->count ? fmt_ns(pb, sizeof(pb), stats_percentile(ex, 0.99)) : "-",
			fmt_ns(mx, sizeof(mx), sh->max_ns > ex->max_ns ? sh->max_ns : ex->max_ns),
			fmt_ns(t, sizeof(t), row_hold_ns(l)));
	}
	fputs("</table>\n", f);
	if (n > c->top_n)
		fprintf(f, "<p>... %ld more.</p>\n", n - (long)c->top_n);
	free(v);
}

/* A pair's top stacks of one kind: wait time, share, waits, then the frames. */
static void pair_stacks_html(FILE *f, const struct report_ctx *c, const struct pair_row *p,
			     uint8_t kind, size_t max)
{
	const struct snapshot *s = c->merged;
	struct pair_stack top[4];
	size_t n = pair_stacks(s, p, kind, c->ksyms, top, max < 4 ? max : 4);

	for (size_t i = 0; i < n; i++) {
		const struct ilock_stack_frames *fr = snap_find_frames(s, kind, top[i].id);
		char t[24], w[24], name[128];

		fprintf(f, "<div class=\"stk\"><b>%s</b> %s", kind == ILOCK_STACK_WAITER ? "waiter" : "holder",
			fmt_ns(t, sizeof(t), top[i].total_ns));
		if (p->s.total_ns)
			fprintf(f, " (%.0f%%)", 100.0 * (double)top[i].total_ns / (double)p->s.total_ns);
		fprintf(f, ", %s wait%s", fmt_count(w, sizeof(w), top[i].count), plural(top[i].count));
		if (!fr) {
			fputs(": frames not recorded</div>\n", f);
			continue;
		}
		fputs("<ol>", f);
		for (uint32_t k = ksyms_first_shown(c->ksyms, fr); k < fr->nr && k < ILOCK_STACK_DEPTH; k++) {
			render_frame_name(name, sizeof(name), c->ksyms, fr->ip[k]);
			fputs("<li>", f);
			esc(f, name);
			fputs("</li>", f);
		}
		fputs("</ol></div>\n", f);
	}
}

static void op_cell(FILE *f, uint8_t op, uint8_t flags)
{
	char b[64];

	fputs("<td class=\"l\">", f);
	esc(f, op_label(b, sizeof(b), op, flags));
	fputs("</td>", f);
}

/* A side's command, or its process title's role when it has one (snap_pairs_titled) */
static void comm_cell(FILE *f, const char *comm, const char *role)
{
	char c[ILOCK_COMM_LEN + 1];

	str_copy(c, sizeof(c), comm, ILOCK_COMM_LEN);
	fputs("<td class=\"l\">", f);
	esc(f, role ? role : c[0] ? c : "?");
	fputs("</td>", f);
}

/* Says why a pairs table is empty (np: snap_pairs' return); true when it has rows. */
static bool have_pairs(FILE *f, long np)
{
	if (np <= 0)
		fputs(np ? "<p>Out of memory for the pairs.</p>\n" : "<p>No holder-to-waiter pairs.</p>\n", f);
	return np > 0;
}

/* A pair row's last cells, from the waits on: waits, time, max, headroom, lock. */
static void pair_cells(FILE *f, const struct report_ctx *c, const struct pair_row *e)
{
	char label[2 * ILOCK_PATH_MAX + 64], n[24], t[24], mx[24], d[16];
	struct inode_view v;

	describe_inode(c->merged, c->meta->mounts, e->k.dev, e->k.ino, e->k.gen, false, &v);
	report_label(c->merged, c->meta, e->k.dev, e->k.ino, e->k.gen, false, label, sizeof(label));
	fprintf(f, "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=\"l\">",
		fmt_count(n, sizeof(n), e->s.count), fmt_ns(t, sizeof(t), e->s.total_ns),
		fmt_ns(mx, sizeof(mx), e->s.max_ns), fmt_share(d, sizeof(d), pair_headroom(e)));
	esc(f, label);
	fprintf(f, " %s</td></tr>\n", class_display_name(e->k.class, v.magic));
}

/* The pairs by command, op and mode, every thread of a command summed. */
static void roles(FILE *f, const struct report_ctx *c)
{
	const struct snapshot *s = c->merged;
	size_t max = (size_t)c->top_n * 2, shown = 0;
	struct pair_row *p = NULL;
	long np = snap_pairs_titled(s, &p, PAIRS_OPS, c->meta ? c->meta->titles : NULL);

	fputs("<h2>Who serialises whom, by command (threads summed)</h2>\n", f);
	if (!have_pairs(f, np)) {
		free(p);
		return;
	}
	fputs("<table class=\"edges\">\n<tr><th class=\"l\">holder</th><th class=\"l\">holder op</th>"
	      "<th class=\"l\">holder mode</th><th class=\"l\">waiter</th><th class=\"l\">waiter op</th>"
	      "<th class=\"l\">waiter mode</th><th>threads</th><th>waits</th><th>wait time</th>"
	      "<th>max</th><th>disjoint</th><th class=\"l\">lock</th></tr>\n", f);
	for (; shown < (size_t)np && shown < max; shown++) {
		const struct pair_row *e = &p[shown];
		char th[16], tw[16];

		fputs("<tr>", f);
		if (e->k.holder_mode == ILOCK_MODE_UNKNOWN)
			fputs("<td class=\"l\">(no owner)</td><td class=\"l\"></td><td class=\"l\"></td>", f);
		else if (readers_unnamed(e->k.holder_mode, e->k.holder_comm))
			/* as role_side says it */
			fprintf(f, "<td class=\"l\">(readers)</td><td class=\"l\"></td>"
				"<td class=\"l\">%s</td>", mode_name(ILOCK_MODE_READERS));
		else {
			comm_cell(f, e->k.holder_comm, e->holder_role);
			op_cell(f, e->k.holder_op, e->k.holder_op_flags);
			fprintf(f, "<td class=\"l\">%s</td>", mode_name(e->k.holder_mode));
		}
		comm_cell(f, e->k.waiter_comm, e->waiter_role);
		op_cell(f, e->k.waiter_op, e->k.waiter_op_flags);
		fprintf(f, "<td class=\"l\">%s</td><td>%s &rarr; %s</td>", mode_name(e->k.waiter_mode),
			fmt_thread_count(th, sizeof(th), e->holders, e->holders_folded),
			fmt_thread_count(tw, sizeof(tw), e->waiters, e->waiters_folded));
		pair_cells(f, c, e);
	}
	fputs("</table>\n", f);
	if ((size_t)np > shown)
		fprintf(f, "<p>%zu more (see --json).</p>\n", (size_t)np - shown);
	free(p);
}

/*
 * Holder -> waiter pairs with what each side was doing, how much of the
 * wait a range lock would have saved, and (folded away) the kernel stacks
 * behind the top pairs, as `report` prints them in text.
 */
static void edges(FILE *f, const struct report_ctx *c)
{
	const struct snapshot *s = c->merged;
	size_t max = (size_t)c->top_n * 3, with_stacks = c->top_n / 2 ? (size_t)c->top_n / 2 : 1;
	struct pair_row *p = NULL;
	long np = snap_pairs(s, &p, PAIRS_THREADS | PAIRS_OPS);
	size_t shown = 0;

	fputs("<h2>Who serialises whom, by thread (holder &rarr; waiter)</h2>\n", f);
	if (!have_pairs(f, np)) {
		free(p);
		return;
	}
	fputs("<table class=\"edges\">\n<tr><th class=\"l\">holder</th><th class=\"l\">holder op</th>"
	      "<th class=\"l\">waiter</th><th class=\"l\">waiter op</th>"
	      "<th class=\"l\">waiter mode</th><th>waits</th><th>wait time</th><th>max</th>"
	      "<th>disjoint</th><th class=\"l\">lock</th></tr>\n", f);
	for (; shown < (size_t)np && shown < max; shown++) {
		const struct pair_row *e = &p[shown];

		fputs("<tr><td class=\"l\">", f);
		holder(f, &e->k);
		if (e->k.holder_mode != ILOCK_MODE_UNKNOWN)
			title_below(f, c, e->k.holder_pid, e->k.holder_comm);
		fputs("</td>", f);
		op_cell(f, e->k.holder_op, e->k.holder_op_flags);
		fputs("<td class=\"l\">", f);
		task(f, e->k.waiter_comm, e->k.waiter_pid);
		title_below(f, c, e->k.waiter_pid, e->k.waiter_comm);
		fputs("</td>", f);
		op_cell(f, e->k.waiter_op, e->k.waiter_op_flags);
		fprintf(f, "<td class=\"l\">%s</td>", mode_name(e->k.waiter_mode));
		pair_cells(f, c, e);
		if (shown < with_stacks && s->nstacks) {
			fputs("<tr><td colspan=\"10\" class=\"l\"><details><summary>kernel stacks</summary>\n",
			      f);
			pair_stacks_html(f, c, e, ILOCK_STACK_WAITER, 3);
			pair_stacks_html(f, c, e, ILOCK_STACK_HOLDER, 2);
			fputs("</details></td></tr>\n", f);
		}
	}
	fputs("</table>\n", f);
	if ((size_t)np > shown)
		fprintf(f, "<p>%zu more pairs (see --json).</p>\n", (size_t)np - shown);
	free(p);
}

static void losses(FILE *f, const struct snapshot *s)
{
	bool any = false;
	char n[24];

	fputs("<h2>Lost events</h2>\n<table>\n", f);
	for (int c = ILOCK_FIRST_LOST; c < ILOCK_COUNTER_MAX; c++) {
		if (!s->counters[c])
			continue;
		fprintf(f, "<tr><td class=\"l\">%s</td><td>%s</td><td class=\"l\">%s</td></tr>\n",
			counter_name(c), fmt_count(n, sizeof(n), s->counters[c]), counter_help(c));
		any = true;
	}
	if (!any)
		fputs("<tr><td class=\"l\">none</td></tr>\n", f);
	fputs("</table>\n", f);
}

/* The answer in a few lines, as the text report gives it first. */
static void in_short(FILE *f, const struct report_ctx *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return;
	render_in_short(m, c->merged, c->meta);
	if (fclose(m)) {
		free(text);
		return;
	}
	fputs("<h2>In short</h2>\n<pre>", f);
	esc(f, text);
	fputs("</pre>\n", f);
	free(text);
}

/* The waits seen still in progress (report_stalls_text), when there are any. */
static void stalls(FILE *f, const struct report_ctx *c)
{
	char *text = NULL, *body;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return;
	report_stalls_text(m, c);
	if (fclose(m)) {
		free(text);
		return;
	}
	/* the text's heading line becomes the h2 */
	body = text ? strchr(text + (text[0] == '\n'), '\n') : NULL;
	if (body) {
		fputs("<h2>Stalls: waits still in progress, 100 ms or more, when an interval was read"
		      "</h2>\n<pre>", f);
		esc(f, body + 1);
		fputs("</pre>\n", f);
	}
	free(text);
}

void report_html(FILE *f, const struct report_ctx *c)
{
	head(f, c);
	summary(f, c);
	in_short(f, c);
	stalls(f, c);
	top_table(f, c);
	fputs("<h2>Wait time per interval</h2>\n", f);
	legend(f);
	if (!c->nrows)
		fputs("<p>No waits.</p>\n", f);
	for (int k = 0; k < c->nrows; k++) {
		lock_title(f, c, c->rows[k].lock);
		timeline_svg(f, c, &c->rows[k]);
	}
	histograms(f, c);
	held_only(f, c);
	ranges_table(f, c);
	roles(f, c);
	edges(f, c);
	losses(f, c->merged);
	fprintf(f, "<p style=\"color:#888;font-size:11px\">ilock %s</p>\n</body>\n</html>\n",
		ILOCK_VERSION_STR);
}
