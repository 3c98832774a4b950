// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "hist.h"
#include "ops.h"
#include "render_ops.h"
#include "titles.h"
#include "top_format.h"
#include "util.h"

static const struct col_def {
	const char *rate_title, *cum_title;
	int min, pref;
	bool right;
} cols[COL_COUNT] = {
	[COL_PATH] = { "PATH", "PATH", 14, 40, false },
	[COL_DEVINO] = { "DEV:INO", "DEV:INO", 16, 16, false },
	[COL_FS] = { "FS", "FS", 5, 5, false },
	[COL_CLASS] = { "CLASS", "CLASS", 9, 9, false },  /* "jbd2_wait" */
	[COL_SH] = { "SH/s", "SHARED", 7, 7, true },
	[COL_EX] = { "EX/s", "EXCL", 7, 7, true },
	[COL_WAIT] = { "WAIT s/s", "WAITED", 9, 9, true },
	[COL_P99] = { "P99", "P99", 7, 7, true },
	[COL_MAX] = { "MAX", "MAX", 7, 7, true },
	[COL_DISJ] = { "DISJ", "DISJ", 5, 5, true },
	[COL_HOLDER] = { "TOP HOLDER", "TOP HOLDER", 12, 26, false },
};

/*
 * What goes first when the terminal is narrow: numbers before identity.
 * CLASS stays longest after PATH and WAIT: without it a file's IOLOCK
 * and ILOCK rows would read the same.
 */
static const enum top_col drop_order[] = {
	COL_DEVINO, COL_FS, COL_DISJ, COL_MAX, COL_P99, COL_HOLDER, COL_EX, COL_SH, COL_CLASS,
};

static int layout_total(const struct top_layout *l)
{
	int t = 0, n = 0;

	for (int c = 0; c < COL_COUNT; c++) {
		if (!l->w[c])
			continue;
		t += l->w[c];
		n++;
	}
	return t + (n > 1 ? n - 1 : 0);  /* one space between columns */
}

/* Widths the path and the holder get before the rest goes to the path. */
#define PATH_COMFORT 30
#define HOLDER_COMFORT 22  /* "readers, mysqld[44100]", "fio[23844] next excl" */

/* Widen column c towards want, from extra; what is left. */
static int layout_grow(struct top_layout *l, enum top_col c, int want, int extra)
{
	int add = want - l->w[c];

	if (!l->w[c] || add <= 0)
		return extra;
	add = add < extra ? add : extra;
	l->w[c] += add;
	return extra - add;
}

/*
 * Share out what the minimum widths leave: the holder up to a name, a
 * thread id and a mode ("fio[23844] next excl"), the path to its comfort,
 * the holder to its full width, then the rest to the path.
 */
static void layout_share(struct top_layout *l, int extra)
{
	extra = layout_grow(l, COL_HOLDER, HOLDER_COMFORT, extra);
	extra = layout_grow(l, COL_PATH, PATH_COMFORT, extra);
	extra = layout_grow(l, COL_HOLDER, cols[COL_HOLDER].pref, extra);
	l->w[COL_PATH] += extra;
}

void top_layout_compute(struct top_layout *l, int width, bool cumulative)
{
	int extra;

	memset(l, 0, sizeof(*l));
	l->width = width;
	l->cumulative = cumulative;
	for (int c = 0; c < COL_COUNT; c++)
		l->w[c] = cols[c].min;
	for (size_t i = 0; i < ARRAY_SIZE(drop_order) && layout_total(l) > width; i++)
		l->w[drop_order[i]] = 0;
	/*
	 * Where the path and the holder would be cut, DEV:INO and FS go
	 * first: the path says most of what they say, and a holder cut
	 * before its thread id names nobody. Then P99, where the holder would
	 * still be cut (80 columns): MAX stays to say how bad.
	 */
	for (int i = 0; i < 3 && l->w[COL_HOLDER]; i++) {
		static const enum top_col give_way[] = { COL_DEVINO, COL_FS, COL_P99 };
		int spare = width - layout_total(l);

		if (spare >= PATH_COMFORT - cols[COL_PATH].min + HOLDER_COMFORT - cols[COL_HOLDER].min ||
		    (give_way[i] == COL_P99 && spare >= HOLDER_COMFORT - cols[COL_HOLDER].min))
			break;
		l->w[give_way[i]] = 0;
	}
	extra = width - layout_total(l);
	if (extra < 0) {
		/* only PATH and WAIT left and still too wide: shrink the path */
		l->w[COL_PATH] += extra;
		if (l->w[COL_PATH] < 1)
			l->w[COL_PATH] = 1;
		extra = 0;
	}
	layout_share(l, extra);
	l->used = layout_total(l);
	if (l->used > width)
		l->used = width;
}

char *top_fmt_rate(char *buf, size_t len, double v)
{
	if (v <= 0)
		snprintf(buf, len, "0");
	else if (v < 0.1)
		snprintf(buf, len, "%.2f", v);
	else if (v < 10)
		snprintf(buf, len, "%.1f", v);
	else if (v < 9999.5)
		snprintf(buf, len, "%.0f", v);
	else if (v < 99950)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else if (v < 999500)
		snprintf(buf, len, "%.0fk", v / 1e3);
	else if (v < 99950000)
		snprintf(buf, len, "%.1fM", v / 1e6);
	else
		snprintf(buf, len, "%.0fM", v / 1e6);
	return buf;
}

char *top_fmt_count(char *buf, size_t len, uint64_t n)
{
	if (n < 100000)
		snprintf(buf, len, "%" PRIu64, n);
	else
		top_fmt_rate(buf, len, (double)n);
	return buf;
}

char *top_fmt_sps(char *buf, size_t len, double v)
{
	if (v <= 0)
		snprintf(buf, len, "0");
	else if (v < 0.0005)
		snprintf(buf, len, "<0.001");  /* not "0.000": some waiting did happen */
	else if (v < 9.9995)
		snprintf(buf, len, "%.3f", v);
	else if (v < 99.995)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.1f", v);
	return buf;
}

char *top_fmt_ns(char *buf, size_t len, uint64_t ns)
{
	char t[32], *o = t;

	fmt_ns(t, sizeof(t), ns);
	/* "16.2 ms" -> "16.2ms": the unit still reads, the column stays narrow */
	for (const char *p = t; *p; p++)
		if (*p != ' ')
			*o++ = *p;
	*o = 0;
	snprintf(buf, len, "%s", t);
	return buf;
}

char *top_fmt_headroom(char *buf, size_t len, const struct top_row *r)
{
	return fmt_share(buf, len, range_headroom(r->range));
}

/* The holder's name: its process title's role when it has one ("postgres: checkpointer"), else comm[tid]. */
static char *holder_task(char *buf, size_t len, const struct edge_row *e, const char *role)
{
	if (!role || !role[0])
		return fmt_task(buf, len, e->k.holder_comm, e->k.holder_pid);
	snprintf(buf, len, "%s[%u]", role, e->k.holder_pid);
	return label_clean(buf);
}

char *top_fmt_holder(char *buf, size_t len, const struct edge_row *e, const char *role)
{
	char t[ILOCK_TITLE_MAX + 16];

	if (!e)
		snprintf(buf, len, "-");
	else if (e->k.holder_mode == ILOCK_MODE_UNKNOWN)
		snprintf(buf, len, "(no owner)");  /* as ilock stat says it */
	else if (readers_unnamed(e->k.holder_mode, e->k.holder_comm))
		snprintf(buf, len, "readers");
	else if (e->k.holder_mode == ILOCK_MODE_READERS)
		snprintf(buf, len, "readers, %s", holder_task(t, sizeof(t), e, role));
	else
		snprintf(buf, len, "%s %s", holder_task(t, sizeof(t), e, role),
			 e->k.holder_mode == ILOCK_MODE_EXCL	      ? "excl"
			 : e->k.holder_mode == ILOCK_MODE_QUEUED_EXCL   ? "next excl"
			 : e->k.holder_mode == ILOCK_MODE_QUEUED_SHARED ? "next shared"
									: "shared");
	return buf;
}

/*
 * What a role keeps when the column is narrow: the part after "comm: ",
 * which says which of the server's processes it is ("checkpointer",
 * "bob shop"); the command is the same for all of them.
 */
static const char *role_short(const char *role, const char *comm)
{
	char c[ILOCK_COMM_LEN + 1];
	size_t n;

	str_copy(c, sizeof(c), comm, ILOCK_COMM_LEN);
	n = strlen(c);
	if (n && !strncmp(role, c, n)) {
		const char *p = strstr(role + n, ": ");

		if (p && p[2])
			return p + 2;
	}
	return role;
}

char *top_fit_holder(char *buf, size_t len, const struct edge_row *e, int width, const char *role)
{
	char c[ILOCK_TITLE_MAX + 1], full[ILOCK_TITLE_MAX + 48];
	int keep, pre, clen, post;

	top_fmt_holder(full, sizeof(full), e, role);
	snprintf(buf, len, "%s", full);
	if (!e || (int)strlen(full) <= width)
		return buf;
	if (role && role[0]) {
		/* a titled holder first loses the command its title starts with */
		role = role_short(role, e->k.holder_comm);
		top_fmt_holder(full, sizeof(full), e, role);
		snprintf(buf, len, "%s", full);
		if ((int)strlen(full) <= width)
			return buf;
		snprintf(c, sizeof(c), "%s", role);
	} else {
		str_copy(c, sizeof(c), e->k.holder_comm, ILOCK_COMM_LEN);
	}
	label_clean(c);  /* as holder_task() prints it */
	/* where top_fmt_holder() put the name: after "readers, ", else first */
	pre = e->k.holder_mode == ILOCK_MODE_READERS ? (int)strlen("readers, ") : 0;
	clen = (int)strlen(c);
	if (!clen || (int)strlen(full) < pre + clen || strncmp(full + pre, c, (size_t)clen))
		return buf;  /* no name in it: "(no owner)", "readers" */
	/* the name gives way, marked '~': its thread id and mode are the answer */
	post = (int)strlen(full + pre + clen);
	keep = width - pre - post - 1;
	/* not inside a UTF-8 character */
	while (keep > 0 && ((unsigned char)c[keep] & 0xc0) == 0x80)
		keep--;
	if (keep >= 2)
		snprintf(buf, len, "%.*s%.*s~%s", pre, full, keep, c, full + pre + clen);
	return buf;
}

const char *top_class_name(uint8_t class, uint32_t magic)
{
	if (magic != ILOCK_XFS_SB_MAGIC && class == ILOCK_CLASS_INVALIDATE)
		return "inv_lock";  /* "invalidate_lock" does not fit the column */
	return class_display_name(class, magic);
}

/* Append text in a cell of width w; left-aligned text is cut on the right. */
static void put_cell(char *buf, size_t len, size_t *pos, const char *text, int w, bool right,
		     bool last)
{
	int n = (int)strlen(text), pad;

	if (*pos + (size_t)w + 2 > len)
		return;
	if (*pos)
		buf[(*pos)++] = ' ';
	if (n > w)
		n = w;
	pad = w - n;
	if (right) {
		memset(buf + *pos, ' ', (size_t)pad);
		*pos += (size_t)pad;
	}
	memcpy(buf + *pos, text, (size_t)n);
	*pos += (size_t)n;
	if (!right && !last) {
		memset(buf + *pos, ' ', (size_t)pad);
		*pos += (size_t)pad;
	}
	buf[*pos] = 0;
}

static int last_col(const struct top_layout *l)
{
	int last = -1;

	for (int c = 0; c < COL_COUNT; c++)
		if (l->w[c])
			last = c;
	return last;
}

static bool is_sort_col(enum top_col c, enum sort_key k)
{
	switch (k) {
	case SORT_WAIT_TIME: return c == COL_WAIT;
	case SORT_WAITS: return c == COL_SH || c == COL_EX;
	case SORT_MAX: return c == COL_MAX;
	case SORT_P99: return c == COL_P99;
	case SORT_SHARED: return c == COL_SH;
	case SORT_EXCL: return c == COL_EX;
	default: return false;
	}
}

int top_format_header(char *buf, size_t len, const struct top_layout *l, enum sort_key sort)
{
	int last = last_col(l);
	size_t pos = 0;

	if (!len)
		return 0;
	buf[0] = 0;
	for (int c = 0; c < COL_COUNT; c++) {
		char t[32];

		if (!l->w[c])
			continue;
		snprintf(t, sizeof(t), "%s%s", l->cumulative ? cols[c].cum_title : cols[c].rate_title,
			 is_sort_col(c, sort) ? "*" : "");
		put_cell(buf, len, &pos, t, l->w[c], cols[c].right, c == last);
	}
	return (int)pos;
}

/* Keep the end of s: "...b/c" within w columns. */
static void tail_fit(char *out, size_t len, const char *s, int w)
{
	size_t n = strlen(s);

	if (w <= 0)
		out[0] = 0;
	else if ((int)n <= w)
		snprintf(out, len, "%s", s);
	else if (w <= 3)
		snprintf(out, len, "%s", s + n - (size_t)w);
	else
		fmt_path_left(out, len, s, w);
}

int top_format_row(char *buf, size_t len, const struct top_layout *l, const struct top_row *r,
		   const char *label, const struct inode_view *v, const struct titles *ti)
{
	int last = last_col(l);
	size_t pos = 0;

	if (!len)
		return 0;
	buf[0] = 0;
	for (int c = 0; c < COL_COUNT; c++) {
		char t[2 * ILOCK_PATH_MAX + 64], d[24];

		if (!l->w[c])
			continue;
		switch (c) {
		case COL_PATH:
			tail_fit(t, sizeof(t), label, l->w[c]);
			break;
		case COL_DEVINO: {
			char di[48];

			snprintf(di, sizeof(di), "%s:%s", fmt_kdev(d, sizeof(d), r->dev),
				 fmt_ino(t, sizeof(t), r->ino));
			tail_fit(t, sizeof(t), di, l->w[c]);
			break;
		}
		case COL_FS:
			snprintf(t, sizeof(t), "%s", v && v->fs ? v->fs : "?");
			break;
		case COL_CLASS:
			snprintf(t, sizeof(t), "%s", top_class_name(r->class, v && v->magic ? v->magic : r->magic));
			break;
		case COL_SH:
		case COL_EX: {
			int m = c == COL_SH ? ILOCK_MODE_SHARED : ILOCK_MODE_EXCL;

			if (l->cumulative)
				top_fmt_count(t, sizeof(t), r->waits[m]);
			else
				top_fmt_rate(t, sizeof(t), r->rate[m]);
			break;
		}
		case COL_WAIT:
			if (l->cumulative)
				top_fmt_ns(t, sizeof(t), r->wait_ns);
			else
				top_fmt_sps(t, sizeof(t), r->wait_sps);
			break;
		case COL_P99:
			top_fmt_ns(t, sizeof(t), r->p99_ns);
			break;
		case COL_MAX:
			/* "<" : no wait of the window took that long, none took longer */
			top_fmt_ns(d, sizeof(d), r->max_ns);
			snprintf(t, sizeof(t), "%s%s", r->max_bound && !l->cumulative ? "<" : "", d);
			break;
		case COL_DISJ:
			top_fmt_headroom(t, sizeof(t), r);
			break;
		case COL_HOLDER:
			top_fit_holder(t, sizeof(t), r->holder, l->w[c],
				       r->holder && ti ? titles_role(ti, r->holder->k.holder_pid,
								    r->holder->k.holder_comm)
						       : NULL);
			break;
		}
		put_cell(buf, len, &pos, t, l->w[c], cols[c].right, c == last);
	}
	return (int)pos;
}

static const char *const sort_titles[SORT_KEY_MAX] = {
	[SORT_WAIT_TIME] = "wait time", [SORT_WAITS] = "waits", [SORT_MAX] = "max wait",
	[SORT_P99] = "p99 wait", [SORT_SHARED] = "shared waits", [SORT_EXCL] = "exclusive waits",
};

const char *top_sort_title(enum sort_key k)
{
	return k < SORT_KEY_MAX ? sort_titles[k] : "?";
}

const char *top_help_line(bool detail)
{
	if (detail)
		return "Esc/Enter back  arrows/PgUp/PgDn/End scroll  c cumulative  p pause  ? help  q quit";
	return "q quit  ? help  s/S sort  c cumulative  f filter  p pause  Enter detail  "
	       "arrows/PgUp/PgDn move";
}

/* Short enough for 80 columns; docs/ilocktop.md says the rest. */
static const char *const help_lines[] = {
	"ilocktop: keys and columns  (arrows scroll; any other key: back; q: quit)",
	"",
	"  q             quit",
	"  s / S         next / previous sort: wait time, waits, max, p99, shared, excl",
	"  c             rates over the last interval <-> totals since start",
	"  f or /        filter by part of a path or a command name (Esc in the table",
	"                clears it)",
	"  p             pause: no map reads; p again resumes",
	"  Enter, Right  the selected lock in detail: histograms, holders and waiters,",
	"                what each was doing, byte ranges, kernel stacks",
	"  w             during a STALLED line: the stalled lock in detail",
	"  Esc, Left     back from the detail view",
	"  Up/Down k/j, PgUp/PgDn space, Home/End g/G: move, or scroll the detail view",
	"  ? or h        this help",
	"",
	"  SH/s EX/s     shared and exclusive waits per second (after c: SHARED, EXCL,",
	"                the counts)",
	"  WAIT s/s      seconds waited per second, every waiter summed: 1.0 is one",
	"                thread blocked the whole time (after c: WAITED, the total)",
	"  P99 MAX       from log2 histograms: the p99 within a factor of 2; <4.19ms:",
	"                the window's longest wait is known only to be at most that",
	"  DISJ          share of the wait time between disjoint byte ranges: what a",
	"                range lock would have let through (a lower bound)",
	"  TOP HOLDER    the holder that cost the waiters most: comm[tid] excl; readers,",
	"                comm[tid] (the last reader); next excl: first in the queue;",
	"                a process with a title by its role (postgres: checkpointer)",
	"  STALLED line  a wait (or an ext4 fsync) in progress for a second or more",
	"  LOST EVENTS   counts lost while it shows; --max-inodes if maps are full",
};

size_t top_help_screen(const char *const **out)
{
	*out = help_lines;
	return sizeof(help_lines) / sizeof(help_lines[0]);
}

char *top_format_help(char *buf, size_t len, int width, long sel, long nrows, long page)
{
	const char *keys = top_help_line(false);
	char pos[48];
	int n, k = (int)strlen(keys);

	n = nrows > page ? snprintf(pos, sizeof(pos), "row %ld of %ld", sel + 1, nrows) : 0;
	/* the position at the right, over the end of the keys if need be (80 columns) */
	if (n && width >= n + 20 && width < (int)len) {
		int room = width - n - 2;

		snprintf(buf, len, "%-*.*s  %s", room, room < k ? room : k, keys, pos);
	} else {
		snprintf(buf, len, "%s", keys);
	}
	return buf;
}

static void fmt_duration(char *buf, size_t len, double s)
{
	unsigned long t = s > 0 ? (unsigned long)(s + 0.5) : 0;

	if (s < 60)
		snprintf(buf, len, "%.1f s", s);
	else if (t < 3600)
		snprintf(buf, len, "%lum%02lus", t / 60, t % 60);
	else
		snprintf(buf, len, "%luh%02lum", t / 3600, t / 60 % 60);
}

/* A line builder that never overflows and cuts at width columns. */
struct line {
	char buf[1024];
	size_t n;
	int width;
};

static void __attribute__((format(printf, 2, 3))) addf(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (l->n >= sizeof(l->buf) - 1)
		return;
	va_start(ap, fmt);
	r = vsnprintf(l->buf + l->n, sizeof(l->buf) - l->n, fmt, ap);
	va_end(ap);
	if (r > 0)
		l->n += (size_t)r < sizeof(l->buf) - l->n ? (size_t)r : sizeof(l->buf) - l->n - 1;
}

static void flush(struct line *l, enum top_line_kind kind,
		  void (*emit)(void *, enum top_line_kind, const char *), void *ctx, int *count)
{
	if (l->width > 0 && l->n > (size_t)l->width)
		l->n = (size_t)l->width;
	l->buf[l->n] = 0;
	emit(ctx, kind, l->buf);
	l->n = 0;
	l->buf[0] = 0;
	(*count)++;
}

int top_format_status(const struct top_status *st, int width,
		      void (*emit)(void *ctx, enum top_line_kind kind, const char *line),
		      void *ctx)
{
	struct line l = { .width = width };
	char a[32], b[32], c[32];
	uint64_t lost = 0;
	int count = 0, t;

	fmt_duration(a, sizeof(a), st->uptime_s);
	/* "1", "0.5", "0.25", "3600": as given, without float noise */
	snprintf(b, sizeof(b), "%.3f", st->interval_s);
	for (char *e = b + strlen(b) - 1; e > b && (*e == '0' || *e == '.'); e--) {
		bool dot = *e == '.';

		*e = 0;
		if (dot)
			break;
	}
	addf(&l, "ilocktop  host %s  kernel %s  up %s  every %s s%s", st->host ? st->host : "?",
	     st->kernel ? st->kernel : "?", a, b, st->paused ? "  [PAUSED]" : "");
	flush(&l, TOP_LINE_NORMAL, emit, ctx, &count);

	/*
	 * The probes attached, grouped by how; those off only counted (ilock
	 * probe and -v name them); then the samplers, which are settings.
	 */
	{
		const char *prev = NULL, *ws = NULL, *hs = NULL;
		int off = 0, shown = 0;

		addf(&l, "probes:");
		for (int i = 0; i < st->nattach; i++) {
			const struct attach_info *a = &st->attach[i];

			if (!strcmp(a->probe, "wait_sampling")) {
				ws = a->mode;
				continue;
			}
			if (!strcmp(a->probe, "hold_sampling")) {
				hs = a->mode;
				continue;
			}
			if (!strcmp(a->mode, "off")) {
				off++;
				continue;
			}
			if (prev && strcmp(prev, a->mode))
				addf(&l, " (%s);", prev);
			addf(&l, "%s%s", prev && !strcmp(prev, a->mode) ? "," : " ", a->probe);
			prev = a->mode;
			shown++;
		}
		if (prev)
			addf(&l, " (%s)", prev);
		if (!shown)
			addf(&l, " none");
		if (off)
			addf(&l, "; %d off", off);
		/* hold sampling matters only while XFS holds are timed */
		if (hs && strcmp(attach_mode_of(st->attach, st->nattach, "xfs_ilock") ?: "off", "off") &&
		    strcmp(hs, "every hold"))
			addf(&l, "  sampling: holds %s", hs);
		else
			hs = NULL;
		if (ws && strcmp(ws, "off"))
			addf(&l, "%s waits %s", hs ? "," : "  sampling:", ws);
		flush(&l, TOP_LINE_NORMAL, emit, ctx, &count);
	}

	/*
	 * --wait-sample: the rate is of the waits timed, the tasks waiting
	 * estimated; those are summed over the rows shown: under a filter, say so.
	 */
	/* the rates are the last interval's; after c, the tasks waiting are the whole run's */
	addf(&l, "events %s/s  inode lock waits %s/s%s (%.2f tasks waiting%s%s)  in flight %" PRIu64
		 "  locks: %s tracked, ", top_fmt_rate(a, sizeof(a), st->events_ps),
	     top_fmt_rate(b, sizeof(b), st->waits_ps), attach_wait_sampling(st->attach, st->nattach) ? " timed" : "",
	     st->tasks_waiting, st->filter && st->filter[0] ? " in the rows matched" : "",
	     !st->cumulative ? "" : st->cum_from_renewal ? ", on average since the tables were renewed"
					 : ", on average since start", st->in_flight,
	     fmt_count(c, sizeof(c), st->tracked));
	addf(&l, "%s with waits", fmt_count(a, sizeof(a), st->active));
	if (st->filter && st->filter[0])
		addf(&l, ", %s match", fmt_count(b, sizeof(b), st->shown));
	flush(&l, TOP_LINE_NORMAL, emit, ctx, &count);

	/* a wait that has not ended is in no row yet: the alarm names it */
	if (st->stall) {
		const struct ilock_waiting *w = st->stall;
		char t[40], h[80];

		char head[96], tail[200], lock[2 * ILOCK_PATH_MAX + 32];
		/* batch output (width 0) has no edge: all of it */
		int room, room_w = width > 0 ? width : INT_MAX / 2;

		/* fmt_task takes a comm of 16 bytes without its NUL */
		snprintf(head, sizeof(head), "STALLED %s%s: %s %s", w->before_trace ? ">" : "",
			 top_fmt_ns(a, sizeof(a), waiting_age_ns(w)),
			 fmt_task(t, sizeof(t), w->comm, w->tid),
			 waiting_is_fsync(w) ? (w->wop.op == ILOCK_OP_FDATASYNC ? "fdatasync" : "fsync")
			 : w->key.mode == ILOCK_MODE_EXCL ? "excl" : "shared");
		if (waiting_is_fsync(w)) {
			/* an fsync: the journal commit it waits on, if one runs */
			if (w->owner_mode != ILOCK_MODE_EXCL)
				snprintf(h, sizeof(h), "no journal commit seen");
			else if (waiting_commit_ns(w))
				snprintf(h, sizeof(h), "commit running %s by %s (%c)",
					 top_fmt_ns(b, sizeof(b), waiting_commit_ns(w)),
					 fmt_task(t, sizeof(t), w->owner_comm, w->owner_pid),
					 waiting_state_char(w->owner_state));
			else
				snprintf(h, sizeof(h), "no commit running");
			snprintf(tail, sizeof(tail), ", %s", h);
		} else {
			if (w->owner_mode == ILOCK_MODE_EXCL)
				snprintf(h, sizeof(h), "%s excl (%c)",
					 fmt_task(t, sizeof(t), w->owner_comm, w->owner_pid),
					 waiting_state_char(w->owner_state));
			else
				snprintf(h, sizeof(h), "%s", w->owner_mode == ILOCK_MODE_READERS ?
							     "readers" : "(no owner)");
			snprintf(tail, sizeof(tail), ", held now by %s", h);
		}
		/*
		 * On a narrow screen the key hint goes first, then the count of
		 * other stalls, and the path gives way from the left: who holds
		 * the lock stays on screen.
		 */
		{
			char more[64] = "", key[] = "  (w: its lock)";
			int fixed = (int)strlen(head) + (int)strlen(tail) + 16;

			if (st->stalled > 1)
				snprintf(more, sizeof(more), "; %zu waits over %s", st->stalled,
					 top_fmt_ns(b, sizeof(b), WAITING_ALARM_NS));
			if (fixed + (int)strlen(more) + (int)strlen(key) <= room_w)
				snprintf(tail + strlen(tail), sizeof(tail) - strlen(tail), "%s%s", more,
					 key);
			else if (fixed + (int)strlen(more) <= room_w)
				snprintf(tail + strlen(tail), sizeof(tail) - strlen(tail), "%s", more);
		}
		/* " on PATH": from the left, down to 12 columns, else left out (w shows it) */
		room = room_w - (int)strlen(head) - (int)strlen(tail) - 4;
		lock[0] = 0;
		if (room >= 12)
			fmt_path_left(lock, sizeof(lock), st->stall_lock, room);
		addf(&l, "%s%s%s%s", head, lock[0] ? " on " : "", lock, tail);
		flush(&l, TOP_LINE_ALERT, emit, ctx, &count);
	}

	if (st->bpf_stats)
		addf(&l, "cost: BPF %s/s (%.2f%% of a CPU)", fmt_ns(a, sizeof(a), (uint64_t)st->bpf_ns_ps),
		     st->bpf_ns_ps / 1e7);
	else
		addf(&l, "cost: BPF run time unknown (bpf_stats unavailable)");
	addf(&l, "  ilocktop %.2f%% of a CPU", st->cpu_pct);
	flush(&l, TOP_LINE_NORMAL, emit, ctx, &count);

	for (int i = ILOCK_FIRST_LOST; st->lost && i < ILOCK_COUNTER_MAX; i++)
		lost += st->lost[i];
	if (lost) {
		bool first = true;

		/* capitals with the alarm colour: the waits that began before tracing are no alarm */
		/* the breakdown is since start, as the first figure: say so before it */
		addf(&l, "%s: %s in the last interval; since start %s:",
		     st->undercount_window ? "LOST EVENTS" : "lost events",
		     fmt_count(b, sizeof(b), st->lost_window), fmt_count(a, sizeof(a), lost));
		for (int i = ILOCK_FIRST_LOST; i < ILOCK_COUNTER_MAX; i++) {
			if (!st->lost[i])
				continue;
			addf(&l, "%s %s %s", first ? "" : ",", counter_name(i),
			     fmt_count(a, sizeof(a), st->lost[i]));
			first = false;
		}
		/*
		 * Alarm only while counts are being lost: not for the waits that
		 * began before tracing, nor for a stack or path missed, nor for
		 * the rest of the session once they stop.
		 */
		flush(&l, st->undercount_window ? TOP_LINE_ALERT : TOP_LINE_NORMAL, emit, ctx, &count);
	} else {
		addf(&l, "lost events: none");
		flush(&l, TOP_LINE_NORMAL, emit, ctx, &count);
	}
	/* before a table fills, while there is time to restart with more room */
	if (st->renewing) {
		addf(&l, "loading fresh tables: the old ones trace on meanwhile");
		flush(&l, TOP_LINE_NORMAL, emit, ctx, &count);
	} else if (st->tables && (t = table_fullest(st->tables, TABLE_ALARM_PCT)) >= 0) {
		char msg[256];

		addf(&l, "%s", table_alarm_text(msg, sizeof(msg), st->tables, t));
		if (st->renew_s <= 0)
			addf(&l, "; restart with a larger --max-inodes");
		else if (st->renew_in_s > 0) {
			fmt_duration(a, sizeof(a), st->renew_in_s);
			addf(&l, "; fresh tables in %s (--renew)", a);
		} else
			addf(&l, "; fresh tables now");
		flush(&l, TOP_LINE_ALERT, emit, ctx, &count);
	}
	/* a renewal, for a minute; a failed one until the next try works */
	if (st->renew_failed && st->renew_note) {
		fmt_duration(a, sizeof(a), st->renew_in_s > 0 ? st->renew_in_s : 0);
		addf(&l, "cannot start fresh tables (%s); the old ones trace on, next try in %s",
		     st->renew_note, a);
		flush(&l, TOP_LINE_ALERT, emit, ctx, &count);
	} else if (st->renewals && st->since_renewal_s >= 0 && st->since_renewal_s < 60) {
		fmt_duration(a, sizeof(a), st->since_renewal_s);
		addf(&l, "fresh tables %s ago (%u so far), when %s", a, st->renewals,
		     st->renew_note ? st->renew_note : "a table was full");
		flush(&l, TOP_LINE_NORMAL, emit, ctx, &count);
	}

	addf(&l, "sort: %s   ", top_sort_title(st->sort));
	if (st->cumulative)
		addf(&l, "showing: totals since %s (%.1f s)",
		     st->cum_from_renewal ? "the tables were renewed" : "start", st->window_s);
	else
		addf(&l, "showing: rates over the last %.2f s", st->window_s);
	if (st->filter && st->filter[0])
		addf(&l, "   filter: \"%s\"", st->filter);
	/* what was never traced: no key brings it back, so it is always said */
	if (st->traced && st->traced[0] && strcmp(st->traced, "none"))
		addf(&l, "   traced: %s", st->traced);
	flush(&l, TOP_LINE_NORMAL, emit, ctx, &count);
	return count;
}

static int cmp_edge_ptr(const void *pa, const void *pb)
{
	const struct edge_row *a = *(const struct edge_row *const *)pa;
	const struct edge_row *b = *(const struct edge_row *const *)pb;

	if (a->s.total_ns != b->s.total_ns)
		return a->s.total_ns < b->s.total_ns ? 1 : -1;
	if (a->s.count != b->s.count)
		return a->s.count < b->s.count ? 1 : -1;
	return memcmp(&a->k, &b->k, sizeof(a->k));
}

/* Under hold sampling the count is an estimate ("~") and max the longest hold timed, as stat says. */
static void hold_summary(FILE *f, const char *mode, const struct ilock_stats *h, bool sampled)
{
	char n[24], p50[24], p99[24], mx[24];

	if (!h->count)
		return;
	fprintf(f, "  held %-9s %s%s times, p50 %s, p99 %s, max%s %s\n", mode, sampled ? "~" : "",
		fmt_count(n, sizeof(n), h->count), fmt_ns(p50, sizeof(p50), stats_percentile(h, 0.5)),
		fmt_ns(p99, sizeof(p99), stats_percentile(h, 0.99)), sampled ? " timed" : "",
		fmt_ns(mx, sizeof(mx), h->max_ns));
}

/* hist_print_pair titles its range column "wait": these ranges are holds */
static void hold_hist(FILE *f, const struct lock_row *r)
{
	char *text = NULL, *p, *nl;
	size_t size = 0;
	FILE *m = open_memstream(&text, &size);

	if (!m)
		return;
	hist_print_pair(m, "shared", r->hold[ILOCK_MODE_SHARED].hist, "exclusive",
			r->hold[ILOCK_MODE_EXCL].hist, 2);
	fclose(m);
	p = text ? strstr(text, "wait ") : NULL;
	nl = text ? strchr(text, '\n') : NULL;
	if (p && nl && p < nl)
		memcpy(p, "held", 4);
	if (text)
		fputs(text, f);
	free(text);
}

/*
 * A pair's longest wait in the window, as shown beside its lock's: a
 * pair's waits are some of the lock's, so the lock's longest (exact, or the
 * histogram's bound) caps it; the pair alone, without a histogram, is only
 * bounded by its longest since start and its wait time, which can be the
 * larger. "<" when the value shown is a bound (locks: the lock rows of the
 * window, whose max_bound says which; NULL in the cumulative view: exact).
 */
static const char *pair_max(char *buf, size_t len, const struct snapshot *locks, uint32_t dev,
			    uint64_t ino, uint32_t gen, uint8_t class, uint64_t max_ns)
{
	const struct lock_row *l = locks ? snap_find_lock(locks, dev, ino, gen, class) : NULL;
	uint64_t cap = l ? row_max_ns(l) : UINT64_MAX;
	bool bound = l && (max_ns > cap || (max_ns == cap && row_max_bound(l)));
	char t[24];

	fmt_ns(t, sizeof(t), max_ns < cap ? max_ns : cap);
	snprintf(buf, len, "%s%s", bound ? "<" : "", t);
	return buf;
}

static void detail_edges(FILE *f, const struct snapshot *win, const struct snapshot *locks,
			 const struct titles *ti, uint32_t dev, uint64_t ino, uint32_t gen,
			 uint32_t magic)
{
	const struct edge_row **list = NULL;
	struct titled named = {};
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < win->nedges; i++) {
		const struct edge_row *e = &win->edges[i];

		if (e->k.dev != dev || e->k.ino != ino || e->k.gen != gen)
			continue;
		if (n == cap) {
			const struct edge_row **p = realloc(list, (cap ? cap * 2 : 16) * sizeof(*p));

			if (!p)
				break;
			list = p;
			cap = cap ? cap * 2 : 16;
		}
		list[n++] = e;
	}
	if (!n) {
		fprintf(f, "  (none in this window)\n");
		free(list);
		return;
	}
	qsort(list, n, sizeof(*list), cmp_edge_ptr);
	fprintf(f, "  %-30s    %-22s %-9s %-8s %9s %9s %9s  %-11s %s\n", "HOLDER", "WAITER", "MODE",
		"LOCK", "WAITS", "WAITED", "MAX", "RANGES", "OPS (holder -> waiter)");
	for (size_t i = 0; i < n && i < 100; i++) {
		const struct edge_row *e = list[i];
		char h[64], w[40], c[24], t[24], mx[24], ho[64], wo[64];

		fprintf(f, "  %-30s -> %-22s %-9s %-8s %9s %9s %9s  %-11s %s -> %s\n",
			top_fmt_holder(h, sizeof(h), e, NULL),
			fmt_task(w, sizeof(w), e->k.waiter_comm, e->k.waiter_pid),
			mode_name(e->k.waiter_mode), top_class_name(e->k.class, magic),
			fmt_count(c, sizeof(c), e->s.count), fmt_ns(t, sizeof(t), e->s.total_ns),
			pair_max(mx, sizeof(mx), locks, dev, ino, gen, e->k.class, e->s.max_ns),
			range_group_name(e->k.range),
			op_label(ho, sizeof(ho), e->k.holder_op, e->k.holder_op_flags),
			op_label(wo, sizeof(wo), e->k.waiter_op, e->k.waiter_op_flags));
		if (e->k.holder_mode != ILOCK_MODE_UNKNOWN)
			titled_add(&named, ti, e->k.holder_pid, e->k.holder_comm);
		titled_add(&named, ti, e->k.waiter_pid, e->k.waiter_comm);
	}
	if (n > 100)
		fprintf(f, "  ... %zu more pairs\n", n - 100);
	render_titles_legend(f, ti, &named, "PROCESS TITLES of these threads");
	titled_free(&named);
	free(list);
}

/*
 * The inode's pairs by command (or process title, ti), op and mode, every
 * thread summed (snap_pairs_titled).
 */
static void detail_roles(FILE *f, const struct snapshot *win, const struct snapshot *locks,
			 const struct titles *ti, uint32_t dev, uint64_t ino, uint32_t gen,
			 uint32_t magic)
{
	struct pair_row *p;
	long np = snap_pairs_titled(win, &p, PAIRS_OPS, ti);
	int shown = 0, hw = 34, ww = 34;

	if (np < 0) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	/* both sides as wide as the widest shown: a long command and op keep the columns */
	for (long i = 0, n = 0; i < np && n < 20; i++) {
		if (p[i].k.dev != dev || p[i].k.ino != ino || p[i].k.gen != gen)
			continue;
		n++;
		pair_role_widths(&p[i], &hw, &ww);
	}
	for (long i = 0; i < np && shown < 20; i++) {
		const struct pair_row *r = &p[i];
		char h[PAIR_SIDE_LEN], w[PAIR_SIDE_LEN], c[24], t[24], mx[24];
		char thr[40], th[16], tw[16], d[16];

		if (r->k.dev != dev || r->k.ino != ino || r->k.gen != gen)
			continue;
		if (!shown++)
			fprintf(f, "  %-*s    %-*s %-8s %9s %9s %9s %9s  %s\n", hw, "HOLDER", ww,
				"WAITER", "LOCK", "THREADS", "WAITS", "WAITED", "MAX", "DISJOINT");
		snprintf(thr, sizeof(thr), "%s->%s",
			 fmt_thread_count(th, sizeof(th), r->holders, r->holders_folded),
			 fmt_thread_count(tw, sizeof(tw), r->waiters, r->waiters_folded));
		fprintf(f, "  %-*s -> %-*s %-8s %9s %9s %9s %9s  %s\n", hw,
			pair_side(h, sizeof(h), r, true, true), ww, pair_side(w, sizeof(w), r, false, true),
			top_class_name(r->k.class, magic), thr, fmt_count(c, sizeof(c), r->s.count),
			fmt_ns(t, sizeof(t), r->s.total_ns),
			pair_max(mx, sizeof(mx), locks, dev, ino, gen, r->k.class, r->s.max_ns),
			fmt_share(d, sizeof(d), pair_headroom(r)));
	}
	if (!shown)
		fprintf(f, "  (none in this window)\n");
	free(p);
}

/*
 * How this lock's waits in the window met their holders' byte ranges, from
 * its edges (docs/ranges.md): would a range lock have let them through?
 */
static void detail_ranges(FILE *f, const struct snapshot *win, uint32_t dev, uint64_t ino,
			  uint32_t gen, uint8_t class)
{
	struct lock_row lr = { 0 };
	struct ilock_range_stats unk;
	char c[24], t[24], nw[24], nh[24], nb[24];
	uint64_t names = 0;  /* waits with a namespace op on a side */
	double headroom;

	/* a commit has no byte range: snap_ranges_from_edges leaves these out too */
	if (class == ILOCK_CLASS_JBD2_WAIT) {
		fprintf(f, "  (journal waits: a commit has no byte range, a range lock would not apply)\n");
		return;
	}
	if (!class_has_ranges(class)) {
		fprintf(f, "  (the ILOCK guards the inode's metadata as a whole: a range lock on the "
			   "file's bytes would not apply)\n");
		return;
	}
	/* the lock's range sums, from its pairs, as snap_ranges_from_edges makes them */
	for (size_t i = 0; i < win->nedges; i++) {
		const struct edge_row *e = &win->edges[i];

		if (e->k.dev != dev || e->k.ino != ino || e->k.gen != gen || e->k.class != class ||
		    e->k.range >= ILOCK_RANGE_MAX)
			continue;
		if (!edge_add_ranges(e, lr.range))
			names += e->s.count;
	}
	if (!row_range_waits(&lr)) {
		fprintf(f, names ? "  (waits over names in a directory: no byte ranges, a range lock "
				   "would not apply)\n"
				 : "  (no waits in this window)\n");
		return;
	}
	for (int r = ILOCK_RANGE_OVERLAP; r <= ILOCK_RANGE_DISJOINT; r++)
		fprintf(f, "  %-12s %9s waits %9s\n", range_group_name((uint8_t)r),
			fmt_count(c, sizeof(c), lr.range[r].waits),
			fmt_ns(t, sizeof(t), lr.range[r].wait_ns));
	unk = row_range_unknown(&lr);
	fprintf(f, "  %-12s %9s waits %9s   missing: waiter's %s, holder's %s, both %s\n", "unknown",
		fmt_count(c, sizeof(c), unk.waits), fmt_ns(t, sizeof(t), unk.wait_ns),
		fmt_count(nw, sizeof(nw), lr.range[ILOCK_RANGE_NO_WAITER].waits),
		fmt_count(nh, sizeof(nh), lr.range[ILOCK_RANGE_NO_HOLDER].waits),
		fmt_count(nb, sizeof(nb), lr.range[ILOCK_RANGE_NO_BOTH].waits));
	headroom = row_headroom(&lr);
	if (headroom >= 0)
		fprintf(f, "  range-lock headroom: %.1f%% of the wait time was disjoint\n",
			100.0 * headroom);
	else
		fprintf(f, "  range-lock headroom: - (no wait had both ranges)\n");
}

/* The stacks of one kind behind this lock's waits, summed over its pairs. */
static void detail_stacks(FILE *f, const struct snapshot *st, struct ksyms *ks, uint32_t dev,
			  uint64_t ino, uint32_t gen, uint8_t class, uint8_t kind, size_t max)
{
	struct pair_stack *sum = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; st && i < st->nstacks; i++) {
		const struct stack_row *r = &st->stacks[i];
		size_t j;

		if (r->k.kind != kind || r->k.edge.dev != dev || r->k.edge.ino != ino ||
		    r->k.edge.gen != gen || r->k.edge.class != class)
			continue;
		for (j = 0; j < n && sum[j].id != r->k.stack; j++)
			;
		if (j == n) {
			if (n == cap) {
				struct pair_stack *p = realloc(sum, (cap ? cap * 2 : 16) * sizeof(*p));

				if (!p)
					break;
				sum = p;
				cap = cap ? cap * 2 : 16;
			}
			sum[n++] = (struct pair_stack){ .id = r->k.stack };
		}
		sum[j].total_ns += r->s.total_ns;
		sum[j].count += r->s.count;
	}
	if (!st)
		fprintf(f, "  (not read)\n");
	else if (!n)
		fprintf(f, "  (none recorded for this lock)\n");
	else  /* two call sites in one function read alike: one line, as a reader sees it */
		n = stacks_rank(st, kind, ks, sum, n);
	for (size_t i = 0; i < n && i < max; i++) {
		const struct ilock_stack_frames *fr = snap_find_frames(st, kind, sum[i].id);
		char t[24], c[24];

		fprintf(f, "  %9s %7s waits  ", fmt_ns(t, sizeof(t), sum[i].total_ns),
			fmt_count(c, sizeof(c), sum[i].count));
		if (fr)
			render_stack_line(f, fr, ks, 150);
		else
			fprintf(f, "(frames gone)\n");
	}
	if (n > max)
		fprintf(f, "  ... %zu more\n", n - max);
	free(sum);
}

void top_format_detail(FILE *f, const struct snapshot *win, const struct snapshot *edges,
		       const struct snapshot *meta, const struct snapshot *stacks,
		       struct ksyms *ks, const struct titles *ti, const struct mount_table *mt,
		       uint32_t dev, uint64_t ino, uint32_t gen, uint8_t class, double secs,
		       bool cumulative, bool holds_sampled)
{
	const struct lock_row *r = snap_find_lock(win, dev, ino, gen, class);
	const struct lock_row *any = r ? r : snap_find_lock(meta, dev, ino, gen, class);
	char label[2 * ILOCK_PATH_MAX + 64], d[24], a[24], b[24], c[24], e[24], g[24], in[24];
	struct inode_view v;
	struct ilock_stats both = {};

	top_inode_label(label, sizeof(label), &v, meta, mt, dev, ino, gen, any && any->has_hold);
	fprintf(f, "%s\n", label);
	fprintf(f, "  dev %s  ino %s  fs %s  lock %s (%s)   ", fmt_kdev(d, sizeof(d), dev),
		fmt_ino(in, sizeof(in), ino), v.fs, class_display_name(class, v.magic), class_name(class));
	if (cumulative)
		fprintf(f, "window: since start, %.1f s\n", secs);
	else
		fprintf(f, "window: the last %.2f s\n", secs);
	if (!r || !row_waits(r)) {
		fprintf(f, "\n  (no waits on this lock in this window)\n");
	} else {
		both = r->wait[ILOCK_MODE_SHARED];
		stats_merge(&both, &r->wait[ILOCK_MODE_EXCL]);
		fprintf(f, "  waits: shared %s (%s/s), exclusive %s (%s/s); waited %s (%s s/s)\n",
			fmt_count(a, sizeof(a), r->wait[ILOCK_MODE_SHARED].count),
			top_fmt_rate(b, sizeof(b), top_rate(r->wait[ILOCK_MODE_SHARED].count, secs)),
			fmt_count(c, sizeof(c), r->wait[ILOCK_MODE_EXCL].count),
			top_fmt_rate(e, sizeof(e), top_rate(r->wait[ILOCK_MODE_EXCL].count, secs)),
			fmt_ns(g, sizeof(g), both.total_ns),
			top_fmt_sps(d, sizeof(d), secs > 0 ? (double)both.total_ns / 1e9 / secs : 0));
		/* "<": the window's longest wait is known only to be under that (P99, MAX) */
		fprintf(f, "  p50 %s  p99 %s  max %s%s\n",
			fmt_ns(a, sizeof(a), stats_percentile(&both, 0.5)),
			fmt_ns(b, sizeof(b), stats_percentile(&both, 0.99)),
			!cumulative && row_max_bound(r) ? "<" : "", fmt_ns(c, sizeof(c), both.max_ns));
	}

	fprintf(f, "\nWAIT HISTOGRAM (time each waiter was blocked)\n");
	if (r)
		hist_print_pair(f, "shared", r->wait[ILOCK_MODE_SHARED].hist, "exclusive",
				r->wait[ILOCK_MODE_EXCL].hist, 2);
	else
		fprintf(f, "  (no waits)\n");

	fprintf(f, "\nHOLD HISTOGRAM (how long the lock was held)\n");
	if (r && r->has_hold && (r->hold[0].count || r->hold[1].count)) {
		hold_summary(f, "shared", &r->hold[ILOCK_MODE_SHARED], holds_sampled);
		hold_summary(f, "exclusive", &r->hold[ILOCK_MODE_EXCL], holds_sampled);
		hold_hist(f, r);
	} else if (v.magic == ILOCK_XFS_SB_MAGIC) {
		fprintf(f, "  (no holds recorded in this window; none are with --holds=off)\n");
	} else {
		fprintf(f, "  (not available: only XFS reports lock holds)\n");
	}

	fprintf(f, "\nBY COMMAND on this inode (holder -> waiter, the threads of a command summed)\n");
	detail_roles(f, edges, cumulative ? NULL : win, ti, dev, ino, gen, v.magic);
	/*
	 * A wait not yet ended is in no histogram or pair: after the roles,
	 * so that a hot lock's stalls do not push those off the first page.
	 */
	render_waiting_lock(f, &meta->waiting, dev, ino, gen, class);
	fprintf(f, "\nHOLDER -> WAITER on this inode, by thread\n");
	detail_edges(f, edges, cumulative ? NULL : win, ti, dev, ino, gen, v.magic);

	fprintf(f, "\nRANGES of this lock's waits (would a range lock have helped?)\n");
	detail_ranges(f, edges, dev, ino, gen, class);

	/* sampled stacks are sparse per interval: these are since start */
	fprintf(f, "\nHOLDER STACKS since start (wait time caused while the holder was there)\n");
	detail_stacks(f, stacks, ks, dev, ino, gen, class, ILOCK_STACK_HOLDER, 5);
	fprintf(f, "\nWAITER STACKS since start\n");
	detail_stacks(f, stacks, ks, dev, ino, gen, class, ILOCK_STACK_WAITER, 3);
}
