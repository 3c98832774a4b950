// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <inttypes.h>
#include <string.h>

#include <stdlib.h>

#include "counters.h"
#include "hist.h"
#include "ops.h"
#include "render.h"
#include "render_ops.h"
#include "titles.h"
#include "util.h"

void describe_inode(const struct snapshot *s, const struct mount_table *mt, uint32_t dev,
		    uint64_t ino, uint32_t gen, bool has_hold, struct inode_view *v)
{
	const struct inode_meta *m = snap_find_inode(s, dev, ino, gen);
	const struct mount_entry *me = mt ? mounts_find_dev(mt, dev) : NULL;

	memset(v, 0, sizeof(*v));
	if (ino == ILOCK_INO_FOLDED)
		m = NULL;  /* many inodes' waits: no path, and "others" for a number */
	v->magic = m ? m->magic : 0;
	if (!v->magic && me)
		fs_magic_from_name(me->fstype, &v->magic);
	if (!v->magic && has_hold)
		v->magic = ILOCK_XFS_SB_MAGIC;  /* holds come from XFS tracepoints only */
	v->fs = v->magic ? fs_name(v->magic) : (me ? me->fstype : "unknown");

	if (ino == ILOCK_INO_FOLDED) {
		v->note = "locks table full: other inodes' waits";
		return;
	}
	if (!m) {
		v->note = has_hold ? "no waits: path not resolved" : "not seen by the path walker";
		return;
	}
	v->dir = m->flags & ILOCK_INODE_DIR;
	if (m->flags & ILOCK_INODE_NO_DENTRY) {
		v->note = "no dentry";
		return;
	}
	if (m->flags & ILOCK_INODE_READ_FAIL) {
		v->note = "path read failed";
		return;
	}
	snprintf(v->rel, sizeof(v->rel), "%s%s", m->flags & ILOCK_INODE_TRUNCATED ? "..." : "",
		 m->path[0] ? m->path : "/");
	if (!mt || !mounts_full_path(mt, dev, m->path[0] ? m->path : "/", v->path, sizeof(v->path))) {
		v->note = "device not mounted";
		v->path[0] = 0;
	} else if (m->flags & ILOCK_INODE_TRUNCATED) {
		v->note = "path truncated";
	}
	if (!v->note && (m->flags & INODE_META_NUMBER_REUSED))
		v->note = "inode number reused";  /* another row has the other file */
	/* looked at again since the walk (pathcheck.h) */
	if (!v->note && (m->flags & INODE_META_RENAMED))
		v->note = "renamed";
	if (!v->note && (m->flags & INODE_META_GONE))
		v->note = "moved or deleted";
	if (m->flags & ILOCK_INODE_UNLINKED)
		v->note = "deleted";
}

/* "/" after a directory's path ("/srv/spool/": its waits are over names), else "" */
const char *inode_dir_slash(const struct inode_view *v)
{
	return v->dir && v->path[0] && v->path[strlen(v->path) - 1] != '/' ? "/" : "";
}

char *fmt_ino(char *buf, size_t len, uint64_t ino)
{
	if (ino == ILOCK_INO_FOLDED)
		snprintf(buf, len, "others");
	else
		snprintf(buf, len, "%" PRIu64, ino);
	return buf;
}

char *fmt_task(char *buf, size_t len, const char *comm, uint32_t pid)
{
	char c[ILOCK_COMM_LEN + 1];

	str_copy(c, sizeof(c), comm, ILOCK_COMM_LEN);
	if (!c[0])
		snprintf(buf, len, "?");
	else if (pid == ILOCK_PID_FOLDED)  /* a pair kept without its threads */
		snprintf(buf, len, "%s[others]", c);
	else
		snprintf(buf, len, "%s[%u]", c, pid);
	return label_clean(buf);
}

char *fmt_path_left(char *buf, size_t len, const char *path, int width)
{
	size_t n = strlen(path);

	if (width < 4 || (int)n <= width) {
		snprintf(buf, len, "%s", path);
		return buf;
	}
	{
		const char *tail = path + n - (size_t)(width - 3), *slash = strchr(tail, '/');

		/* cut at a directory boundary when one is in reach */
		snprintf(buf, len, "...%s", slash ? slash : tail);
	}
	return buf;
}

/*
 * The owner field names a writer exactly; for readers it keeps only the
 * last reader as a hint; when it is empty the lock was between owners and
 * the head of the queue ("next") takes it before this waiter.
 */
char *fmt_holder_task(char *buf, size_t len, const char *comm, uint32_t pid, uint8_t mode)
{
	char t[40];

	if (mode == ILOCK_MODE_UNKNOWN)
		snprintf(buf, len, "(no owner)");
	else if (mode == ILOCK_MODE_QUEUED_EXCL || mode == ILOCK_MODE_QUEUED_SHARED)
		snprintf(buf, len, "%s next, %s", fmt_task(t, sizeof(t), comm, pid),
			 mode == ILOCK_MODE_QUEUED_EXCL ? "exclusive" : "shared");
	else if (readers_unnamed(mode, comm))
		snprintf(buf, len, "readers");
	else if (mode == ILOCK_MODE_READERS)
		snprintf(buf, len, "readers, last %s", fmt_task(t, sizeof(t), comm, pid));
	else
		snprintf(buf, len, "%s %s", fmt_task(t, sizeof(t), comm, pid), mode_name(mode));
	return buf;
}

static char *fmt_holder(char *buf, size_t len, const struct ilock_edge_key *k)
{
	return fmt_holder_task(buf, len, k->holder_comm, k->holder_pid, k->holder_mode);
}

void inode_label_as(char *buf, size_t len, const struct inode_view *v, uint32_t dev, uint64_t ino,
		    unsigned flags)
{
	const char *slash = flags & LABEL_SLASH ? inode_dir_slash(v) : "";
	const char *note = v->note ? v->note : "unknown";
	char d[24], in[24];
	int n;

	if (v->path[0])
		n = snprintf(buf, len, "%s%s", v->path, slash);
	else if (v->rel[0])
		n = snprintf(buf, len, "%s:%s", fmt_kdev(d, sizeof(d), dev), v->rel);
	else
		n = snprintf(buf, len, "%s:%s", fmt_kdev(d, sizeof(d), dev), fmt_ino(in, sizeof(in), ino));
	if (n >= 0 && (size_t)n < len &&
	    (v->path[0] ? (flags & LABEL_PATH_NOTE) && v->note : (flags & LABEL_NO_PATH_NOTE)))
		snprintf(buf + n, len - (size_t)n, " (%s)", note);
	label_clean(buf);
}

void inode_label(char *buf, size_t len, const struct inode_view *v, uint32_t dev, uint64_t ino)
{
	inode_label_as(buf, len, v, dev, ino, LABEL_ALL);
}

static int shown_rows(const struct snapshot *s, const struct render_opts *o)
{
	int n = 0;

	for (size_t i = 0; i < s->nlocks && n < o->top_n; i++, n++)
		if (!row_waits(&s->locks[i]))
			break;
	return n;
}

static void top_table(FILE *f, const struct snapshot *s, const struct report_meta *m, int rows)
{
	fprintf(f, "%-40s %-14s %-5s %-9s %9s %9s %10s %9s %9s %9s %8s  %s\n", "PATH", "DEV:INO",
		"FS", "CLASS", "SH_WAITS", "EX_WAITS", "WAIT", "P50", "P99", "MAX", "DISJOINT",
		"TOP HOLDER");
	for (int i = 0; i < rows; i++) {
		const struct lock_row *r = &s->locks[i];
		const struct edge_row *e = snap_top_holder(s, r->dev, r->ino, r->gen, r->class);
		struct ilock_stats both = r->wait[0];
		struct inode_view v;
		char label[2 * ILOCK_PATH_MAX + 64], path[48], devino[40], d[24], sh[24], ex[24], in[24];
		char tot[24], p50[24], p99[24], mx[24], mxb[32], holder[48] = "-", disj[16];

		stats_merge(&both, &r->wait[1]);
		/* an interval's (-i) max that only bounds its longest wait, as ilocktop shows it */
		snprintf(mxb, sizeof(mxb), "%s%s", row_max_bound(r) ? "<" : "",
			 fmt_ns(mx, sizeof(mx), both.max_ns));
		describe_inode(s, m->mounts, r->dev, r->ino, r->gen, r->has_hold, &v);
		inode_label(label, sizeof(label), &v, r->dev, r->ino);
		snprintf(devino, sizeof(devino), "%s:%s", fmt_kdev(d, sizeof(d), r->dev),
			 fmt_ino(in, sizeof(in), r->ino));
		if (e)
			fmt_holder(holder, sizeof(holder), &e->k);
		fprintf(f, "%-40s %-14s %-5s %-9s %9s %9s %10s %9s %9s %9s %8s  %s\n",
			fmt_path_left(path, sizeof(path), label, 40), devino, v.fs,
			class_display_name(r->class, v.magic),
			fmt_count(sh, sizeof(sh), r->wait[ILOCK_MODE_SHARED].count),
			fmt_count(ex, sizeof(ex), r->wait[ILOCK_MODE_EXCL].count),
			fmt_ns(tot, sizeof(tot), both.total_ns),
			fmt_ns(p50, sizeof(p50), stats_percentile(&both, 0.50)),
			fmt_ns(p99, sizeof(p99), stats_percentile(&both, 0.99)), mxb,
			/* range-lock headroom: the share of wait time with disjoint ranges */
			fmt_share(disj, sizeof(disj), row_headroom(r)), holder);
	}
}

bool meta_holds_sampled(const struct report_meta *m)
{
	const char *h = attach_mode_of(m->attach, m->nattach, "hold_sampling");

	return h && strcmp(h, "every hold") && strcmp(h, "off");
}

/*
 * Under hold sampling a busy inode's count is an estimate ("~") and its
 * max the longest hold timed (docs/output.md, "Hold sampling").
 */
static void hold_line(FILE *f, const char *mode, const struct ilock_stats *h, bool sampled)
{
	char n[24], p50[24], p99[24], mx[24];

	if (!h->count)
		return;
	fprintf(f, "    holds %-9s %s%s acquisitions, p50 %s, p99 %s, max%s %s\n", mode,
		sampled ? "~" : "", fmt_count(n, sizeof(n), h->count),
		fmt_ns(p50, sizeof(p50), stats_percentile(h, 0.5)),
		fmt_ns(p99, sizeof(p99), stats_percentile(h, 0.99)), sampled ? " timed" : "",
		fmt_ns(mx, sizeof(mx), h->max_ns));
}

static void histograms(FILE *f, const struct snapshot *s, const struct report_meta *m, int rows)
{
	bool sampled = meta_holds_sampled(m);

	for (int i = 0; i < rows; i++) {
		const struct lock_row *r = &s->locks[i];
		struct inode_view v;
		char label[2 * ILOCK_PATH_MAX + 64], d[24], in[24];

		describe_inode(s, m->mounts, r->dev, r->ino, r->gen, r->has_hold, &v);
		inode_label(label, sizeof(label), &v, r->dev, r->ino);
		fprintf(f, "\n  %s  [%s ino %s, %s %s]\n", label, fmt_kdev(d, sizeof(d), r->dev),
			fmt_ino(in, sizeof(in), r->ino), v.fs, class_display_name(r->class, v.magic));
		hist_print_pair(f, "shared", r->wait[ILOCK_MODE_SHARED].hist, "exclusive",
				r->wait[ILOCK_MODE_EXCL].hist, 4);
		hold_line(f, "shared", &r->hold[ILOCK_MODE_SHARED], sampled);
		hold_line(f, "exclusive", &r->hold[ILOCK_MODE_EXCL], sampled);
	}
}

/*
 * With hold times (--holds), the locks taken but never waited for: how
 * often in each mode is an answer of its own (are direct reads taking the
 * IOLOCK exclusive? shared/seeds/001), and no wait table would show them.
 */
static void held_only(FILE *f, const struct snapshot *s, const struct report_meta *m, int max)
{
	bool sampled = meta_holds_sampled(m);
	const struct lock_row **v;
	long n = snap_held_only(s, &v);

	if (!n)
		return;
	fprintf(f, "\nHELD WITHOUT WAITS (--holds: locks taken, nobody waited)\n");
	if (n < 0) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	for (long i = 0; i < n && i < max; i++) {
		const struct lock_row *r = v[i];
		struct inode_view iv;
		char label[2 * ILOCK_PATH_MAX + 64], d[24], in[24];

		describe_inode(s, m->mounts, r->dev, r->ino, r->gen, true, &iv);
		inode_label(label, sizeof(label), &iv, r->dev, r->ino);
		fprintf(f, "  %s  [%s ino %s, %s %s]\n", label, fmt_kdev(d, sizeof(d), r->dev),
			fmt_ino(in, sizeof(in), r->ino), iv.fs, class_display_name(r->class, iv.magic));
		hold_line(f, "shared", &r->hold[ILOCK_MODE_SHARED], sampled);
		hold_line(f, "exclusive", &r->hold[ILOCK_MODE_EXCL], sampled);
		if (!r->hold[ILOCK_MODE_EXCL].count)
			fprintf(f, "    holds exclusive none\n");
		else if (!r->hold[ILOCK_MODE_SHARED].count)
			fprintf(f, "    holds shared    none\n");
	}
	if (n > max)
		fprintf(f, "  ... %ld more\n", n - max);
	free(v);
}

/* The pairs by thread (snap_pairs), for the two tables by thread and the titles' legend */
struct by_thread {
	struct pair_row *pairs;   /* PAIRS_THREADS */
	struct pair_row *ops;     /* PAIRS_THREADS | PAIRS_OPS */
	long npairs, nops;        /* their counts; below 0 out of memory */
};

/* One line per holder-waiter pair: edges that differ in ops or range add up. */
static void edges(FILE *f, const struct snapshot *s, const struct report_meta *m,
		  const struct by_thread *bt, int max_rows)
{
	const struct pair_row *p = bt->pairs;
	long np = bt->npairs;
	int shown = 0;

	if (!render_have_pairs(f, np))
		return;
	for (long i = 0; i < np && shown < max_rows; i++, shown++) {
		const struct pair_row *e = &p[i];
		struct inode_view v;
		char h[64], w[40], n[24], t[24], mx[24], label[2 * ILOCK_PATH_MAX + 64], path[48];

		describe_inode(s, m->mounts, e->k.dev, e->k.ino, e->k.gen, false, &v);
		inode_label(label, sizeof(label), &v, e->k.dev, e->k.ino);
		fprintf(f, "  %-32s ->  %-22s %-9s %9s wait%-1s %9s  max %9s  %s %s\n",
			fmt_holder(h, sizeof(h), &e->k),
			fmt_task(w, sizeof(w), e->k.waiter_comm, e->k.waiter_pid),
			mode_name(e->k.waiter_mode), fmt_count(n, sizeof(n), e->s.count),
			plural(e->s.count),
			fmt_ns(t, sizeof(t), e->s.total_ns), fmt_ns(mx, sizeof(mx), e->s.max_ns),
			fmt_path_left(path, sizeof(path), label, 40),
			class_display_name(e->k.class, v.magic));
	}
	if (np > shown)
		fprintf(f, "  ... %ld more pairs (use --json for all)\n", np - shown);
}

char *table_alarm_text(char *buf, size_t len, const struct table_use *tables, int t)
{
	const struct table_use *u = &tables[t];
	uint32_t fold = u->cap - u->cap / ILOCK_EDGE_FOLD_SHARE;
	const char *without = t == TABLE_PAIRS ? "their threads" : "their inode";
	unsigned pct = (unsigned)((uint64_t)u->used * 100 / u->cap);
	char n[24], c[24], f[24];

	fmt_count(n, sizeof(n), u->used);
	fmt_count(c, sizeof(c), u->cap);
	fmt_count(f, sizeof(f), fold);
	if (u->used >= u->cap)
		snprintf(buf, len, "%s table is full (%s entries): new %s are lost (%s)", table_name(t),
			 c, table_name(t),
			 counter_name(t == TABLE_PAIRS ? ILOCK_LOST_EDGE_MAP_FULL
						       : ILOCK_LOST_WAIT_MAP_FULL));
	else if (u->used >= fold)
		snprintf(buf, len, "%s table is %u%% full (%s of %s entries): new %s are kept "
			 "without %s (%s)", table_name(t), pct, n, c, table_name(t), without,
			 counter_name(t == TABLE_PAIRS ? ILOCK_LOST_EDGE_THREADS
						       : ILOCK_LOST_WAIT_INODES));
	else
		snprintf(buf, len, "%s table is %u%% full (%s of %s entries): new %s are kept "
			 "without %s from %s on", table_name(t), pct, n, c, table_name(t), without, f);
	return buf;
}

void render_table_alarm(FILE *f, const char *indent, const struct table_use *tables)
{
	int t = table_fullest(tables, TABLE_ALARM_PCT);
	char b[256];

	if (t >= 0)
		fprintf(f, "%sthe %s; --max-inodes makes room\n", indent,
			table_alarm_text(b, sizeof(b), tables, t));
}

static void losses(FILE *f, const struct snapshot *s)
{
	bool any = false;
	char n[24];

	for (int c = ILOCK_FIRST_LOST; c < ILOCK_COUNTER_MAX; c++) {
		if (!s->counters[c])
			continue;
		fprintf(f, "  %-22s %12s  %s\n", counter_name(c), fmt_count(n, sizeof(n), s->counters[c]),
			counter_help(c));
		any = true;
	}
	if (!any)
		fprintf(f, "  none\n");
	if (s->in_flight)
		fprintf(f, "  (%s wait%s still in progress when read, not counted yet)\n",
			fmt_count(n, sizeof(n), s->in_flight), plural(s->in_flight));
	render_table_alarm(f, "  ", s->tables);
}

/* Tasks waiting on average, with as many digits as a small number needs. */
static char *fmt_tasks(char *buf, size_t len, double t)
{
	if (t > 0 && t < 0.001)
		snprintf(buf, len, "<0.001");
	else
		snprintf(buf, len, t >= 10 ? "%.0f" : t >= 0.1 ? "%.2f" : t > 0 ? "%.3f" : "0", t);
	return buf;
}

/*
 * Who made whom wait on lock r: its costliest role (roles: snap_pairs'
 * by wait time), with its share of r's wait time.
 */
static void top_role(FILE *f, const struct pair_row *p, long np, const struct lock_row *r)
{
	char h[PAIR_SIDE_LEN], w[PAIR_SIDE_LEN], th[16], tw[16];

	for (long i = 0; i < np; i++) {
		const struct pair_row *q = &p[i];

		if (q->k.dev != r->dev || q->k.ino != r->ino || q->k.gen != r->gen ||
		    q->k.class != r->class)
			continue;
		fprintf(f, "  the largest share there: %s -> %s, %.0f%% (%s -> %s threads)\n",
			pair_side(h, sizeof(h), q, true, true), pair_side(w, sizeof(w), q, false, true),
			row_wait_ns(r) ? 100.0 * (double)q->s.total_ns / (double)row_wait_ns(r) : 0,
			fmt_thread_count(th, sizeof(th), q->holders, q->holders_folded),
			fmt_thread_count(tw, sizeof(tw), q->waiters, q->waiters_folded));
		break;
	}
}

/*
 * The answer in a few lines: how many tasks the inode locks held up
 * on average, where, and whether a range lock would have helped; or that
 * they held up too few to explain a slow workload (shared/seeds/003).
 */
/*
 * Waits ilock saw but kept in no row: the totals above them are low by
 * that many, and a verdict of "too few" or "none" would be unfounded.
 */
static void waits_left_out(FILE *f, const struct snapshot *s, uint64_t left)
{
	char n[24];
	const char *sep = "";

	fprintf(f, "  and %s wait%s that ilock saw %s missing from these figures (",
		fmt_count(n, sizeof(n), left), plural(left), left == 1 ? "is" : "are");
	for (int c = ILOCK_FIRST_LOST; c < ILOCK_COUNTER_MAX; c++) {
		if (!counter_drops_waits(c) || !s->counters[c])
			continue;
		fprintf(f, "%s%s %s", sep, counter_name(c), fmt_count(n, sizeof(n), s->counters[c]));
		sep = ", ";
	}
	fprintf(f, ")%s\n", s->counters[ILOCK_LOST_WAIT_MAP_FULL] ?
		": they are low; --max-inodes makes room for more locks" : ": they are low");
}

static void in_short(FILE *f, const struct snapshot *s, const struct report_meta *m,
		     const struct pair_row *roles, long nroles)
{
	struct wait_load w;
	char a[24], b[24], c[24], d[24];
	uint64_t left = snap_lost_sum(s, counter_drops_waits);
	/* "too few" stands only on totals that miss nothing, and no stall going on */
	bool stalled = waiting_over(&s->waiting, WAITING_ALARM_NS) > 0 || m->window_stalls;
	bool few;

	snap_wait_load(s, m->duration_s, &w);
	few = w.tasks < ILOCK_FEW_WAITING && !left && !stalled &&
	      m->duration_s >= ILOCK_SHORT_TRACE_S;
	if (!w.waits && m->window_stalls)
		fprintf(f, "  no inode lock wait ended in this window, but %zu %s in progress in it, "
			   "the longest seen for %s (STALLS below)\n", m->window_stalls,
			m->window_stalls == 1 ? "was" : "were", fmt_ns(a, sizeof(a), m->window_stall_ns));
	else if (!w.waits && stalled)
		fprintf(f, "  no inode lock wait ended in this time: the stall is still going on\n");
	else if (!w.waits && left)
		fprintf(f, "  no inode lock wait could be kept\n");
	else if (!w.waits && m->filters && strcmp(m->filters, "none") &&
	    s->counters[ILOCK_EV_BEGIN_RWSEM])
		/* the filters may have left out the very waits that matter */
		fprintf(f, "  no inode lock wait matched the filters (%s): %s rw_semaphore wait%s in "
			   "all, on any lock, file or task%s\n", m->filters,
			fmt_count(a, sizeof(a), s->counters[ILOCK_EV_BEGIN_RWSEM]),
			plural(s->counters[ILOCK_EV_BEGIN_RWSEM]),
			/*
			 * a server's workers are its children: -p of the parent
			 * takes none (cli_filters_text puts -p first)
			 */
			!strncmp(m->filters, "-p ", 3) ?
			"; -p takes one process's threads, not its children (a server's "
			"worker processes: -c NAME or --cgroup)" : "");
	else if (!w.waits && m->duration_s < ILOCK_SHORT_TRACE_S)
		fprintf(f, "  no inode lock wait in %.1f s traced: too short to tell\n",
			m->duration_s);
	else if (!w.waits && s->waiting.available && !s->waiting.sees_older)
		/* a wait begun before tracing (a host already stuck) shows only when it ends */
		fprintf(f, "  no task waited for an inode lock: if this workload is slow, the cause is "
			   "not its inode locks, unless a wait began before tracing (this kernel shows "
			   "one only once it ends)\n");
	else if (!w.waits)
		fprintf(f, "  no task waited for an inode lock: if this workload is slow, the cause is "
			   "not its inode locks\n");
	else
		/*
		 * A wait longer than this window began before it: it counts the
		 * window's length at most, a bound, as it may have ended early in it.
		 */
		fprintf(f, "  %s%s tasks waited for inode locks on average (%s of waiting %s %.1f s%s, "
			   "%s wait%s%s)%s\n", w.began_before ? "up to " : "", fmt_tasks(a, sizeof(a), w.tasks),
			fmt_ns(b, sizeof(b), w.wait_ns), w.began_before ? "ended in" : "in",
			m->duration_s, w.began_before ? ", some of it before" : "",
			fmt_count(c, sizeof(c), w.waits), plural(w.waits),
			meta_wait_sampling(m) ? ", estimated from a sample" : "",
			few ? ": too few to slow a workload down; if it is slow, "
			      "look past the locks (I/O path, journal, device)" : "");
	if (left)
		waits_left_out(f, s, left);
	if (w.top && !few) {
		struct inode_view v;
		char label[2 * ILOCK_PATH_MAX + 64];
		double h = row_headroom(w.top);

		describe_inode(s, m->mounts, w.top->dev, w.top->ino, w.top->gen, w.top->has_hold,
			       &v);
		inode_label(label, sizeof(label), &v, w.top->dev, w.top->ino);
		fprintf(f, "  most on %s %s: %s tasks (%.0f%%)", label,
			class_display_name(w.top->class, v.magic), fmt_tasks(a, sizeof(a), w.top_tasks),
			100.0 * (double)row_wait_ns(w.top) / (double)w.wait_ns);
		if (h >= 0) {
			/* the rest is overlapping or unknown: a reader would quote it as overlap */
			double ns = 0, ov, unk;

			/* over the range classes, as row_headroom counts them */
			for (int g = 0; g < ILOCK_RANGE_MAX; g++)
				ns += (double)w.top->range[g].wait_ns;
			ov = ns > 0 ? (double)w.top->range[ILOCK_RANGE_OVERLAP].wait_ns / ns : 0;
			unk = ns > 0 ? (double)row_range_unknown(w.top).wait_ns / ns : 0;

			double part[3] = { h, ov, unk };
			int pct[3];

			/* whole percents that add up to 100 */
			shares_to_percents(part, pct, 3);
			fprintf(f, ", %d%% of it between disjoint byte ranges (%s; %d%% overlapping, "
				   "%d%% with a range unknown)", pct[0],
				pct[0] ? "a range lock would have let those run"
				: h > 0 ? "too little for a range lock to matter"
					: "a range lock would not have helped", pct[1], pct[2]);
		} else if (!class_has_ranges(w.top->class)) {
			fprintf(f, ", a lock on the inode's metadata, not its bytes: a range lock would "
				   "not apply");
		} else if (v.dir) {
			fprintf(f, ", a directory: its waits are over names, which a range lock on "
				   "bytes would not change");
		}
		fprintf(f, "\n");
		top_role(f, roles, nroles, w.top);
	}
	if (w.journal_waits)
		fprintf(f, "  apart from that, ext4 fsyncs waited for the journal: %s tasks on average "
			   "(%s in %s wait%s)\n", fmt_tasks(a, sizeof(a), w.journal_tasks),
			fmt_ns(b, sizeof(b), w.journal_ns), fmt_count(d, sizeof(d), w.journal_waits),
			plural(w.journal_waits));
}

static void named_pairs(struct titled *nm, const struct titles *ti, const struct pair_row *p,
			long np, int rows)
{
	for (long i = 0; i < np && i < rows; i++) {
		if (p[i].k.holder_mode != ILOCK_MODE_UNKNOWN)
			titled_add(nm, ti, p[i].k.holder_pid, p[i].k.holder_comm);
		titled_add(nm, ti, p[i].k.waiter_pid, p[i].k.waiter_comm);
	}
}

void render_titles_legend(FILE *f, const struct titles *ti, const struct titled *l,
			  const char *heading)
{
	char t[40];

	if (!l->n)
		return;
	fprintf(f, "\n%s\n", heading);
	for (size_t i = 0; i < l->n; i++)
		fprintf(f, "  %-22s %s\n", fmt_task(t, sizeof(t), l->t[i].comm, l->t[i].pid),
			titles_get(ti, l->t[i].pid, l->t[i].comm));
	if (ti->left_out)
		fprintf(f, "  (threads after the first %d were not looked up)\n", TITLES_MAX_THREADS);
}

/*
 * Which process each pid above is, for servers whose processes share one
 * comm (PostgreSQL's are all "postgres"): their titles, in the order the
 * tables name them. Nothing when no thread named has a title.
 */
static void titles_legend(FILE *f, const struct snapshot *s, const struct report_meta *m,
			  int top_rows, const struct by_thread *bt, int rows)
{
	const struct titles *ti = m->titles;
	const struct waiting_set *ws = &s->waiting;
	struct titled nm = {};

	if (!ti || !ti->n)
		return;
	/* WAITING NOW's, the TOP HOLDERs, then the rows of the two tables by thread */
	for (size_t i = 0; i < waiting_over(ws, WAITING_STALL_NS); i++) {
		titled_add(&nm, ti, ws->w[i].tid, ws->w[i].comm);
		titled_add(&nm, ti, ws->w[i].holder_pid, ws->w[i].holder_comm);
		titled_add(&nm, ti, ws->w[i].owner_pid, ws->w[i].owner_comm);
	}
	for (int i = 0; i < top_rows; i++) {
		const struct lock_row *r = &s->locks[i];
		const struct edge_row *e = snap_top_holder(s, r->dev, r->ino, r->gen, r->class);

		if (e)
			titled_add(&nm, ti, e->k.holder_pid, e->k.holder_comm);
	}
	named_pairs(&nm, ti, bt->pairs, bt->npairs, rows);
	named_pairs(&nm, ti, bt->ops, bt->nops, rows);
	render_titles_legend(f, ti, &nm, "PROCESS TITLES (of the threads named above, as ilock "
				       "first saw them)");
	titled_free(&nm);
}

void render_in_short(FILE *f, const struct snapshot *s, const struct report_meta *m)
{
	struct pair_row *roles;
	long nroles = snap_pairs_titled(s, &roles, PAIRS_OPS, m->titles);

	in_short(f, s, m, roles, nroles);
	free(roles);
}

void render_text(FILE *f, const struct snapshot *s, const struct report_meta *m,
		 const struct render_opts *o)
{
	int rows = shown_rows(s, o);
	char n1[24], n2[24];
	/* by command: IN SHORT names the top one, the table lists them */
	struct pair_row *roles;
	long nroles = snap_pairs_titled(s, &roles, PAIRS_OPS, m->titles);
	struct by_thread bt;

	if (o->title)
		fprintf(f, "%s\n", o->title);
	else
		fprintf(f, "ilock stat: %.1f s on %s (%s)\n", m->duration_s,
			m->hostname ? m->hostname : "?", m->kernel ? m->kernel : "?");
	fprintf(f, "probes:");
	for (int i = 0; i < m->nattach; i++)
		fprintf(f, " %s=%s", m->attach[i].probe, m->attach[i].mode);
	/* a wait is counted begun and ended in different reads: not a subset per interval */
	fprintf(f, "\nevents: %s rw_semaphore wait%s begun (any lock, before the filters), %s inode "
		   "lock wait%s ended\n",
		fmt_count(n2, sizeof(n2), s->counters[ILOCK_EV_BEGIN_RWSEM]),
		plural(s->counters[ILOCK_EV_BEGIN_RWSEM]),
		fmt_count(n1, sizeof(n1), s->counters[ILOCK_EV_WAIT]), plural(s->counters[ILOCK_EV_WAIT]));
	if (meta_wait_sampling(m))
		fprintf(f, "sampled: %s rw_semaphore waits left out (wait_sampling=%s); each wait "
			   "timed stands for those left out beside it, so every count, time and "
			   "histogram below is an estimate, and MAX the longest wait timed\n",
			fmt_count(n1, sizeof(n1), s->counters[ILOCK_EV_WAIT_SAMPLED_OUT]),
			meta_wait_sampling(m));

	fprintf(f, "\nIN SHORT\n");
	render_waiting_in_short(f, s, m);
	in_short(f, s, m, roles, nroles);
	render_waiting_text(f, s, m);

	fprintf(f, "\nTOP INODE LOCKS by wait time\n");
	if (!rows)
		fprintf(f, "  (no inode lock waits)\n");
	else
		top_table(f, s, m, rows);

	if (rows && !o->no_hist) {
		fprintf(f, "\nWAIT HISTOGRAMS\n");
		histograms(f, s, m, rows);
	}

	held_only(f, s, m, o->top_n);

	render_roles_text(f, s, m, roles, nroles, o->top_n * 2);
	free(roles);
	bt.npairs = snap_pairs(s, &bt.pairs, PAIRS_THREADS);
	bt.nops = snap_pairs(s, &bt.ops, PAIRS_THREADS | PAIRS_OPS);
	fprintf(f, "\nWHO SERIALISES WHOM, BY THREAD (holder -> waiter)\n");
	edges(f, s, m, &bt, o->top_n * 3);
	render_ops_text(f, s, m, o, bt.ops, bt.nops);
	titles_legend(f, s, m, rows, &bt, o->top_n * 3);
	free(bt.pairs);
	free(bt.ops);

	fprintf(f, "\nLOST EVENTS\n");
	losses(f, s);
}
