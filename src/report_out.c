// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The report's per-interval views: timeline text, JSON `intervals`, CSV. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "counters.h"
#include "hist.h"
#include "ops.h"
#include "report.h"
#include "util.h"

#define TIMELINE_WIDTH 60

static size_t nwin(const struct report_ctx *c)
{
	return c->i1 > c->i0 ? c->i1 - c->i0 : 0;
}

int report_build(struct report_ctx *c)
{
	size_t n = nwin(c);
	int rows = 0;

	while (rows < c->top_n && (size_t)rows < c->merged->nlocks &&
	       row_waits(&c->merged->locks[rows]))
		rows++;
	c->rows = calloc(rows ? (size_t)rows : 1, sizeof(*c->rows));
	if (!c->rows)
		return -ENOMEM;
	c->nrows = rows;
	for (int k = 0; k < rows; k++) {
		struct report_row *row = &c->rows[k];
		uint64_t *mem = calloc(n ? 6 * n : 1, sizeof(uint64_t));

		if (!mem)
			return -ENOMEM;
		row->lock = &c->merged->locks[k];
		for (int m = 0; m < 2; m++) {
			row->waits[m] = mem + (size_t)(3 * m) * n;
			row->wait_ns[m] = mem + (size_t)(3 * m + 1) * n;
			row->max_ns[m] = mem + (size_t)(3 * m + 2) * n;
		}
	}
	for (size_t i = c->i0; i < c->i1; i++) {
		const struct rec_interval *iv = &c->r->iv[i];

		for (size_t k = iv->lock0; k < iv->lock0 + iv->nlocks; k++) {
			const struct rec_lock *l = &c->r->locks[k];
			const struct rec_inode *in = &c->r->inodes[l->inode];
			const struct lock_row *ml;
			struct report_row *row;
			size_t idx;

			if (!rec_lock_match(c->r, l, c->f))
				continue;
			ml = snap_find_lock(c->merged, in->dev, in->ino, in->gen, l->class);
			if (!ml || (idx = (size_t)(ml - c->merged->locks)) >= (size_t)rows)
				continue;
			row = &c->rows[idx];
			for (int m = 0; m < 2; m++) {
				row->waits[m][i - c->i0] += l->wait[m].count;
				row->wait_ns[m][i - c->i0] += l->wait[m].total_ns;
				if (l->wait[m].max_ns > row->max_ns[m][i - c->i0])
					row->max_ns[m][i - c->i0] = l->wait[m].max_ns;
			}
		}
	}
	return 0;
}

void report_free(struct report_ctx *c)
{
	for (int k = 0; c->rows && k < c->nrows; k++)
		free(c->rows[k].waits[0]);
	free(c->rows);
	c->rows = NULL;
	c->nrows = 0;
}

double report_window_s(const struct report_ctx *c)
{
	uint64_t ns = 0;

	for (size_t i = c->i0; i < c->i1; i++)
		ns += c->r->iv[i].dur_ns;
	return (double)ns / 1e9;
}

void report_label(const struct snapshot *s, const struct report_meta *m, uint32_t dev,
		  uint64_t ino, uint32_t gen, bool has_hold, char *buf, size_t len)
{
	struct inode_view v;

	describe_inode(s, m ? m->mounts : NULL, dev, ino, gen, has_hold, &v);
	inode_label_as(buf, len, &v, dev, ino, LABEL_SLASH | LABEL_PATH_NOTE);
}

char *report_fmt_time_tenths(char *buf, size_t len, uint64_t realtime_ns)
{
	size_t n;

	report_fmt_time(buf, len, realtime_ns);
	n = strlen(buf);
	if (realtime_ns && n > 1 && n + 3 <= len)
		snprintf(buf + n, len - n, ".%u", (unsigned)(realtime_ns / 100000000ULL % 10));
	return buf;
}

char *report_renewal_note(char *buf, size_t len, const struct recording *r, size_t i0,
			  size_t i1)
{
	size_t n = rec_renewals(r, i0, i1);

	if (n)
		snprintf(buf, len, " (%zu ending where the recorder moved to fresh tables)", n);
	else if (len)
		buf[0] = 0;
	return buf;
}

char *report_fmt_time(char *buf, size_t len, uint64_t realtime_ns)
{
	time_t t = (time_t)(realtime_ns / 1000000000ULL);
	struct tm tm;

	if (!realtime_ns || !localtime_r(&t, &tm))
		snprintf(buf, len, "?");
	else
		strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	return buf;
}

int report_sparkline(char *buf, size_t len, const double *v, size_t n, int width)
{
	int cols = n < (size_t)width ? (int)n : width;
	double col[TIMELINE_WIDTH * 4], peak = 0;
	size_t o = 0;

	if (len)
		buf[0] = 0;
	if (cols > (int)(sizeof(col) / sizeof(col[0])))
		cols = (int)(sizeof(col) / sizeof(col[0]));
	for (int k = 0; k < cols; k++) {
		size_t a = (size_t)k * n / (size_t)cols, b = (size_t)(k + 1) * n / (size_t)cols;
		double sum = 0;

		for (size_t i = a; i < b; i++)
			sum += v[i] > 0 ? v[i] : 0;
		col[k] = b > a ? sum / (double)(b - a) : 0;
		if (col[k] > peak)
			peak = col[k];
	}
	for (int k = 0; k < cols; k++) {
		int level;

		if (o + 4 > len)
			break;
		if (col[k] <= 0 || peak <= 0) {
			buf[o++] = ' ';
			continue;
		}
		/* 1..8: anything above zero shows at least the lowest bar */
		level = 1 + (int)(col[k] / peak * 7.999);
		if (level > 8)
			level = 8;
		buf[o++] = (char)0xe2;
		buf[o++] = (char)0x96;
		buf[o++] = (char)(0x80 + level);
	}
	if (o < len)
		buf[o] = 0;
	return cols;
}

double report_rate_secs(const struct recording *r, size_t i)
{
	uint64_t ns = r->iv[i].dur_ns > r->interval_ns ? r->iv[i].dur_ns : r->interval_ns;

	return ns ? (double)ns / 1e9 : 1e-9;
}

void report_timeline_text(FILE *f, const struct report_ctx *c)
{
	size_t n = nwin(c);
	double *v = calloc(n ? n : 1, sizeof(double));
	size_t per_col = n > TIMELINE_WIDTH ? (n + TIMELINE_WIDTH - 1) / TIMELINE_WIDTH : 1;

	fprintf(f, "\nWAIT TIME PER INTERVAL (wait per second; %zu interval%s, ~%zu per column; "
		   "each line scaled to its own peak)\n", n, n == 1 ? "" : "s", per_col);
	if (!v) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	if (!c->nrows)
		fprintf(f, "  (no inode lock waits)\n");
	else
		fprintf(f, "  %-40s %-9s %-*s  %10s %10s\n", "PATH", "CLASS", TIMELINE_WIDTH + 2,
			"TIMELINE", "PEAK/s", "MEAN/s");
	for (int k = 0; k < c->nrows; k++) {
		const struct report_row *row = &c->rows[k];
		const struct lock_row *l = row->lock;
		char label[2 * ILOCK_PATH_MAX + 64], path[48], spark[TIMELINE_WIDTH * 3 + 1];
		char pk[24], mean[24];
		struct inode_view iv;
		double peak = 0, total = 0, secs = 0;
		int cols;

		for (size_t i = 0; i < n; i++) {
			double w = (double)(row->wait_ns[0][i] + row->wait_ns[1][i]);

			v[i] = w / report_rate_secs(c->r, c->i0 + i);
			if (v[i] > peak)
				peak = v[i];
			total += w;
			secs += (double)c->r->iv[c->i0 + i].dur_ns / 1e9;
		}
		describe_inode(c->merged, c->meta->mounts, l->dev, l->ino, l->gen, l->has_hold,
			       &iv);
		report_label(c->merged, c->meta, l->dev, l->ino, l->gen, l->has_hold, label,
			     sizeof(label));
		cols = report_sparkline(spark, sizeof(spark), v, n, TIMELINE_WIDTH);
		fprintf(f, "  %-40s %-9s |%s|%*s  %10s %10s\n",
			fmt_path_left(path, sizeof(path), label, 40),
			class_display_name(l->class, iv.magic), spark, TIMELINE_WIDTH - cols, "",
			fmt_ns(pk, sizeof(pk), u64_of(peak)),
			fmt_ns(mean, sizeof(mean), secs > 0 ? u64_of(total / secs) : 0));
	}
	free(v);
}

static uint64_t iv_lost(const struct rec_interval *iv)
{
	uint64_t t = 0;

	for (int i = ILOCK_FIRST_LOST; i < ILOCK_COUNTER_MAX; i++)
		t += iv->counters[i];
	return t;
}

static void rec_side_json(struct json *j, const char *key, const struct recording *r,
			  uint32_t task, uint8_t mode, int op)
{
	const struct rec_task *t = &r->tasks[task];
	char c[ILOCK_COMM_LEN + 1];

	str_copy(c, sizeof(c), t->comm, ILOCK_COMM_LEN);
	json_obj_begin(j, key);
	json_u64(j, "pid", t->pid);
	json_u64(j, "tgid", t->tgid);
	json_str(j, "comm", c[0] ? c : NULL);
	json_str(j, "title", t->title);
	json_str(j, "mode", mode_name(mode));
	if (op >= 0)
		json_str(j, "op", op_name((uint8_t)op));
	json_obj_end(j);
}

static const char *stall_outcome(const struct recording *r, const struct report_stall *st,
				 const char **key);

/*
 * A stall's inode, described from the recording's own definition of it
 * (into one, reset first): the window may hold no ended wait on it, so
 * the merged snapshot may not know it.
 */
static void stall_inode(const struct report_ctx *c, const struct rec_inode *in,
			struct snapshot *one, struct inode_view *iv)
{
	snap_reset(one);
	if (in->has_meta && snap_add_inode(one, &in->meta))
		snap_reset(one);
	describe_inode(one, c->meta ? c->meta->mounts : NULL, in->dev, in->ino, in->gen, false, iv);
}

/*
 * A wait begun before the recording (ilock_waiting.before_trace): the
 * recorder writes its start as the recording's, and no holder at it. A
 * wait begun as tracing started, with no owner, reads the same, and is
 * barely later.
 */
static bool stall_before_start(const struct recording *r, const struct rec_stall *s)
{
	return !s->start_ns && s->holder_mode == ILOCK_MODE_UNKNOWN && !r->tasks[s->holder].pid;
}

/* "stalls": every stall of the window, longest first (report_stalls). */
static void stalls_json(struct json *j, const struct report_ctx *c)
{
	const struct recording *r = c->r;
	struct report_stall *v = NULL;
	struct snapshot one;
	size_t n = 0;
	char d[24];

	snap_init(&one);
	json_arr_begin(j, "stalls");
	if (report_stalls(c, &v, &n))
		n = 0;
	for (size_t i = 0; i < n; i++) {
		const struct rec_stall *s = v[i].s;
		const struct rec_inode *in = &r->inodes[s->inode];
		char st[2] = { s->owner_state, 0 };
		const char *outcome;
		struct inode_view iv;

		stall_inode(c, in, &one, &iv);
		json_obj_begin(j, NULL);
		json_double(j, "start_s", (double)s->start_ns / 1e9);
		json_u64(j, "waited_at_least_ns", s->waited_ns);
		json_bool(j, "began_before_recording", stall_before_start(r, s));
		json_u64(j, "first_interval", v[i].first_iv);
		json_u64(j, "last_interval", v[i].last_iv);
		stall_outcome(r, &v[i], &outcome);
		json_str(j, "outcome", outcome);
		json_str(j, "dev", fmt_kdev(d, sizeof(d), in->dev));
		json_u64(j, "ino", in->ino);
		json_u64(j, "gen", in->gen);
		json_str(j, "path", iv.path[0] ? iv.path : NULL);
		json_str(j, "class", class_name(s->class));
		json_str(j, "range", range_group_name(s->range));
		rec_side_json(j, "waiter", r, s->waiter, s->waiter_mode, s->waiter_op);
		if (s->class == ILOCK_CLASS_JBD2_WAIT) {
			/* no holder: its mode says whether a commit ran (rec_stall) */
			rec_side_json(j, "holder", r, s->holder, ILOCK_MODE_UNKNOWN, s->holder_op);
			if (s->holder_mode == ILOCK_MODE_UNKNOWN)
				json_null(j, "journal_commit_running");
			else
				json_bool(j, "journal_commit_running",
					  s->holder_mode == ILOCK_MODE_EXCL);
		} else {
			rec_side_json(j, "holder", r, s->holder, s->holder_mode, s->holder_op);
		}
		rec_side_json(j, "owner_at_last_read", r, s->owner, s->owner_mode, -1);
		json_str(j, "owner_state", s->owner_state ? st : NULL);
		json_obj_end(j);
	}
	json_arr_end(j);
	snap_free(&one);
	free(v);
}

void report_json_extra(struct json *j, void *ctx)
{
	const struct report_ctx *c = ctx;
	const struct recording *r = c->r;
	char ver[16], t[32], d[24];
	uint64_t from = c->i1 > c->i0 ? r->iv[c->i0].t_start_ns : 0;
	uint64_t to = c->i1 > c->i0 ? r->iv[c->i1 - 1].t_start_ns + r->iv[c->i1 - 1].dur_ns : 0;

	json_obj_begin(j, "recording");
	json_str(j, "file", c->file);
	snprintf(ver, sizeof(ver), "%u.%u", r->major, r->minor);
	json_str(j, "format_version", ver);
	json_str(j, "recorded_by", rec_meta(r, "tool_version"));
	json_str(j, "boot_id", rec_meta(r, "boot_id"));
	json_str(j, "start_time", report_fmt_time(t, sizeof(t), r->start_realtime_ns));
	json_u64(j, "start_realtime_ns", r->start_realtime_ns);
	json_double(j, "interval_s", (double)r->interval_ns / 1e9);
	json_str(j, "filters", rec_meta(r, "filters"));
	json_u64(j, "intervals", r->niv);
	json_u64(j, "table_renewals", rec_renewals(r, 0, r->niv));
	json_double(j, "recorded_s", (double)rec_end_ns(r) / 1e9);
	json_bool(j, "complete", r->has_end && r->status == REC_OK);
	json_str(j, "end_reason", r->has_end ? r->end_reason : NULL);
	if (r->status != REC_OK) {
		json_obj_begin(j, "damage");
		json_str(j, "status", rec_status_name(r->status));
		json_str(j, "message", r->msg);
		json_u64(j, "offset", r->good_bytes);
		json_u64(j, "lost_bytes", r->file_size - r->good_bytes);
		json_obj_end(j);
	} else {
		json_null(j, "damage");
	}
	json_obj_end(j);

	json_obj_begin(j, "window");
	json_double(j, "from_s", (double)from / 1e9);
	json_double(j, "to_s", (double)to / 1e9);
	json_u64(j, "first_interval", c->i0);
	json_u64(j, "intervals", nwin(c));
	json_obj_end(j);

	stalls_json(j, c);

	/* per interval, the top locks (index into "locks") that waited in it */
	json_arr_begin(j, "intervals");
	for (size_t i = c->i0; i < c->i1; i++) {
		const struct rec_interval *iv = &r->iv[i];

		json_obj_begin(j, NULL);
		json_u64(j, "index", i);
		json_double(j, "t_start_s", (double)iv->t_start_ns / 1e9);
		json_double(j, "duration_s", (double)iv->dur_ns / 1e9);
		json_u64(j, "lost", iv_lost(iv));
		json_bool(j, "tables_renewed", iv->tables_end);
		json_arr_begin(j, "locks");
		for (int k = 0; k < c->nrows; k++) {
			const struct report_row *row = &c->rows[k];

			if (!row->waits[0][i - c->i0] && !row->waits[1][i - c->i0])
				continue;
			json_obj_begin(j, NULL);
			json_u64(j, "lock", (uint64_t)k);
			json_str(j, "dev", fmt_kdev(d, sizeof(d), row->lock->dev));
			render_json_ino(j, row->lock->ino);
			json_u64(j, "gen", row->lock->gen);
			json_str(j, "class", class_name(row->lock->class));
			for (int m = 0; m < 2; m++) {
				json_obj_begin(j, m ? "exclusive" : "shared");
				json_u64(j, "waits", row->waits[m][i - c->i0]);
				json_u64(j, "wait_ns", row->wait_ns[m][i - c->i0]);
				json_u64(j, "max_ns", row->max_ns[m][i - c->i0]);
				json_obj_end(j);
			}
			json_obj_end(j);
		}
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static bool stall_match(const struct report_ctx *c, const struct rec_stall *s)
{
	const struct recording *r = c->r;
	const struct rec_inode *in = &r->inodes[s->inode];
	const struct rec_task *w = &r->tasks[s->waiter];
	struct ilock_edge_key k = { .dev = in->dev, .ino = in->ino, .class = s->class,
				    .waiter_pid = w->pid, .waiter_tgid = w->tgid };

	memcpy(k.waiter_comm, w->comm, ILOCK_COMM_LEN);
	return !c->f || filters_match_edge(c->f, &k, in->magic);
}

/* One wait: the same thread, lock and mode, begun at the same moment (recorded exactly). */
static int cmp_wait(const struct rec_stall *a, const struct rec_stall *b)
{
	if (a->waiter != b->waiter)
		return a->waiter < b->waiter ? -1 : 1;
	if (a->inode != b->inode)
		return a->inode < b->inode ? -1 : 1;
	if (a->class != b->class)
		return a->class < b->class ? -1 : 1;
	if (a->waiter_mode != b->waiter_mode)
		return a->waiter_mode < b->waiter_mode ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return 0;
}

static int by_wait_then_read(const void *pa, const void *pb)
{
	const struct report_stall *a = pa, *b = pb;
	int c = cmp_wait(a->s, b->s);

	if (c)
		return c;
	return a->first_iv < b->first_iv ? -1 : a->first_iv > b->first_iv;
}

/* Did the read of interval i see this wait still going on? */
static bool seen_at(const struct recording *r, size_t i, const struct rec_stall *st)
{
	const struct rec_interval *iv = &r->iv[i];

	for (size_t k = iv->stall0; k < iv->stall0 + iv->nstalls; k++)
		if (!cmp_wait(&r->stalls[k], st))
			return true;
	return false;
}

static int by_longest(const void *pa, const void *pb)
{
	const struct report_stall *a = pa, *b = pb;

	if (a->s->waited_ns != b->s->waited_ns)
		return a->s->waited_ns < b->s->waited_ns ? 1 : -1;
	return a->s->start_ns < b->s->start_ns ? -1 : a->s->start_ns > b->s->start_ns;
}

/* Every sighting, sorted so that those of one wait are neighbours, then merged: n log n. */
int report_stalls(const struct report_ctx *c, struct report_stall **out, size_t *n)
{
	const struct recording *r = c->r;
	struct report_stall *v = NULL;
	size_t nv = 0, total = 0, m = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = c->i0; i < c->i1; i++)
		total += r->iv[i].nstalls;
	if (!total)
		return 0;
	v = calloc(total, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = c->i0; i < c->i1; i++) {
		const struct rec_interval *iv = &r->iv[i];

		for (size_t k = iv->stall0; k < iv->stall0 + iv->nstalls; k++)
			if (stall_match(c, &r->stalls[k]))
				v[nv++] = (struct report_stall){ .s = &r->stalls[k], .first_iv = i,
								 .last_iv = i };
	}
	if (nv > 1)
		qsort(v, nv, sizeof(*v), by_wait_then_read);
	for (size_t i = 0; i < nv; i++) {
		if (m && !cmp_wait(v[m - 1].s, v[i].s)) {
			/* a later read of the same wait: older, so the one to show */
			if (v[i].s->waited_ns >= v[m - 1].s->waited_ns)
				v[m - 1].s = v[i].s;
			v[m - 1].last_iv = v[i].last_iv;
			continue;
		}
		v[m++] = v[i];
	}
	if (m > 1)
		qsort(v, m, sizeof(*v), by_longest);
	*out = v;
	*n = m;
	return 0;
}

/* How a stall's wait ended, as far as the reads tell; JSON names in *key. */
static const char *stall_outcome(const struct recording *r, const struct report_stall *st,
				 const char **key)
{
	size_t next = st->last_iv + 1;

	if (next >= r->niv) {
		*key = "recording_end";
		return "still waiting when the recording ended";
	}
	if (!r->iv[next].stalls_read) {
		*key = "unknown";
		return "the next read could not look whether it still waited";
	}
	if (seen_at(r, next, st->s)) {
		*key = "window_end";
		return "still waiting when the window ended";
	}
	*key = "ended";
	return "it ended before the next read";
}

/* A recorded task as holder or owner, named as every view names holders */
static char *fmt_rec_side(char *buf, size_t len, const struct recording *r, uint32_t task,
			  uint8_t mode)
{
	return fmt_holder_task(buf, len, r->tasks[task].comm, r->tasks[task].pid, mode);
}

/* A stall's threads that have process titles: "waiter \"postgres: ...\"; holder ..." */
static void stall_titles(FILE *f, const struct recording *r, const struct rec_stall *s)
{
	const uint32_t who[] = { s->waiter, s->holder, s->owner };
	const char *role[] = { "waiter", "holder at the start", "holder at the last read" };
	bool any = false;

	for (int i = 0; i < 3; i++) {
		const struct rec_task *t = &r->tasks[who[i]];
		bool again = false;

		for (int j = 0; j < i; j++)
			again |= who[j] == who[i];
		if (!t->pid || !t->title || again)
			continue;
		fprintf(f, "%s%s \"%s\"", any ? "; " : "      titles: ", role[i], t->title);
		any = true;
	}
	if (any)
		fputc('\n', f);
}

#define REPORT_STALLS_SHOWN 20

void report_stalls_text(FILE *f, const struct report_ctx *c)
{
	const struct recording *r = c->r;
	struct report_stall *v;
	struct snapshot one;
	size_t n;
	char lim[24];

	if (report_stalls(c, &v, &n)) {
		fprintf(f, "\nSTALLS\n  (out of memory)\n");
		return;
	}
	if (!n)
		return;
	snap_init(&one);
	fprintf(f, "\nSTALLS (waits still in progress, %s or more, when an interval was read; "
		   "longest first)\n", fmt_ns(lim, sizeof(lim), WAITING_STALL_NS));
	for (size_t i = 0; i < n && i < REPORT_STALLS_SHOWN; i++) {
		const struct rec_stall *s = v[i].s;
		const struct rec_inode *in = &r->inodes[s->inode];
		const struct rec_task *w = &r->tasks[s->waiter];
		char label[2 * ILOCK_PATH_MAX + 64], at[32], age[24], who[40];
		char h[80], o[80], wop[40], hop[40];
		struct inode_view iv;
		const char *key, *end = stall_outcome(r, &v[i], &key);

		stall_inode(c, in, &one, &iv);
		report_label(&one, c->meta, in->dev, in->ino, in->gen, false, label, sizeof(label));
		snprintf(wop, sizeof(wop), "%s%s", s->waiter_op ? ", " : "",
			 s->waiter_op ? op_name(s->waiter_op) : "");
		snprintf(hop, sizeof(hop), "%s%s", s->holder_op ? ", " : "",
			 s->holder_op ? op_name(s->holder_op) : "");
		fmt_rec_side(h, sizeof(h), r, s->holder, s->holder_mode);
		fmt_rec_side(o, sizeof(o), r, s->owner, s->owner_mode);
		if (s->class == ILOCK_CLASS_JBD2_WAIT) {
			/* an ext4 fsync in progress: the owner is the journal's thread */
			const struct rec_task *jt = &r->tasks[s->owner];

			fprintf(f, "  %s  %s was in %s of %s for at least %s\n",
				report_fmt_time_tenths(at, sizeof(at),
						       r->start_realtime_ns + s->start_ns),
				fmt_task(who, sizeof(who), w->comm, w->pid),
				s->waiter_op ? op_name(s->waiter_op) : "fsync", label,
				fmt_ns(age, sizeof(age), s->waited_ns));
			fmt_task(o, sizeof(o), jt->comm, jt->pid);
			if (s->owner_mode != ILOCK_MODE_EXCL || !jt->pid)
				fprintf(f, "      no journal commit seen");
			else if (s->holder_mode == ILOCK_MODE_EXCL)
				fprintf(f, "      a journal commit running at the last read, by %s", o);
			else if (s->holder_mode == ILOCK_MODE_SHARED)
				fprintf(f, "      no journal commit running at the last read (the fsync "
					   "writes its data back, or waits for one to start); journal %s", o);
			else
				fprintf(f, "      journal %s at the last read", o);
			if (s->owner_state)
				fprintf(f, ", state %c", s->owner_state);
			fprintf(f, "; %s\n", end);
			stall_titles(f, r, s);
			continue;
		}
		/* the last read saw it waiting that long: it ended later, if it did */
		fprintf(f, "  %s  %s waited at least %s, %s%s, for %s %s\n",
			report_fmt_time_tenths(at, sizeof(at),
					       r->start_realtime_ns + s->start_ns),
			fmt_task(who, sizeof(who), w->comm, w->pid),
			fmt_ns(age, sizeof(age), s->waited_ns), mode_name(s->waiter_mode), wop, label,
			class_display_name(s->class, iv.magic));
		if (stall_before_start(r, s))
			fprintf(f, "      began before the recording, its holder then not seen; at the "
				   "last read held by %s", o);
		else
			fprintf(f, "      held at the start by %s%s; at the last read by %s", h, hop, o);
		if (s->owner_state)
			fprintf(f, ", state %c", s->owner_state);
		if (s->range == ILOCK_RANGE_DISJOINT)
			fprintf(f, "; ranges disjoint");
		else if (s->range == ILOCK_RANGE_OVERLAP)
			fprintf(f, "; ranges overlap");
		fprintf(f, "; %s\n", end);
		stall_titles(f, r, s);
	}
	if (n > REPORT_STALLS_SHOWN)
		fprintf(f, "  ... %zu more (--json lists them all)\n", n - REPORT_STALLS_SHOWN);
	snap_free(&one);
	free(v);
}

/* RFC 4180: quote fields that need it, double the quotes inside. */
static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void report_csv(FILE *f, const struct report_ctx *c)
{
	const struct recording *r = c->r;

	fprintf(f, "interval,t_start_s,duration_s,dev,ino,path,fs,class,"
		   "shared_waits,shared_wait_ns,shared_max_ns,shared_p99_ns,"
		   "exclusive_waits,exclusive_wait_ns,exclusive_max_ns,exclusive_p99_ns,"
		   "hold_shared,hold_exclusive,hold_exclusive_p99_ns,gen\n");
	for (size_t i = c->i0; i < c->i1; i++) {
		const struct rec_interval *iv = &r->iv[i];

		for (size_t k = iv->lock0; k < iv->lock0 + iv->nlocks; k++) {
			const struct rec_lock *l = &r->locks[k];
			const struct rec_inode *in = &r->inodes[l->inode];
			char label[2 * ILOCK_PATH_MAX + 64], d[24];
			uint32_t magic = rec_lock_magic(r, l);

			if (!rec_lock_match(r, l, c->f))
				continue;
			report_label(c->merged, c->meta, in->dev, in->ino, in->gen, l->has_hold,
				     label, sizeof(label));
			/* the waits kept without their inode: no number (the label says so) */
			fprintf(f, "%zu,%.6f,%.6f,%s,", i, (double)iv->t_start_ns / 1e9,
				(double)iv->dur_ns / 1e9, fmt_kdev(d, sizeof(d), in->dev));
			if (in->ino != ILOCK_INO_FOLDED)
				fprintf(f, "%" PRIu64, in->ino);
			fputc(',', f);
			csv_field(f, label);
			fprintf(f, ",%s,%s", magic ? fs_name(magic) : "", class_name(l->class));
			for (int m = 0; m < 2; m++)
				fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64,
					(uint64_t)l->wait[m].count, (uint64_t)l->wait[m].total_ns,
					(uint64_t)l->wait[m].max_ns, stats_percentile(&l->wait[m], 0.99));
			if (l->has_hold)
				fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64,
					(uint64_t)l->hold[ILOCK_MODE_SHARED].count,
					(uint64_t)l->hold[ILOCK_MODE_EXCL].count,
					stats_percentile(&l->hold[ILOCK_MODE_EXCL], 0.99));
			else
				fprintf(f, ",,,");
			/* last: the columns before it keep their places (format 1.5) */
			fprintf(f, ",%u\n", in->gen);
		}
	}
}
