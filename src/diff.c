// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Two recordings compared: per class and mode, then per inode. Each
 * interval is one sample; see docs/diff-method.md for why and how.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diff.h"
#include "hist.h"
#include "json.h"
#include "ops.h"
#include "recview.h"
#include "report.h"
#include "sigtest.h"
#include "util.h"

static const char *const metric_names[DM_COUNT] = {
	[DM_WAITS_PER_S] = "waits_per_s", [DM_WAIT_PER_S] = "wait_ns_per_s",
	[DM_P50] = "p50_ns", [DM_P99] = "p99_ns", [DM_MAX] = "max_ns",
	[DM_HOLD_P99] = "exclusive_hold_p99_ns",
};

static const char *const metric_labels[DM_COUNT] = {
	[DM_WAITS_PER_S] = "waits/s", [DM_WAIT_PER_S] = "wait time/s",
	[DM_P50] = "p50 wait", [DM_P99] = "p99 wait", [DM_MAX] = "max wait",
	[DM_HOLD_P99] = "exclusive hold p99",
};

const char *diff_metric_name(enum diff_metric m)
{
	return m < DM_COUNT ? metric_names[m] : "?";
}

const char *diff_kind_name(enum diff_kind k)
{
	switch (k) {
	case DK_SHARED: return "shared";
	case DK_EXCL: return "exclusive";
	case DK_HOLD: return "hold";
	case DK_DISJOINT: return "disjoint";
	case DK_OVERLAP: return "overlapping";
	default: return "role";
	}
}

static bool is_range_kind(uint8_t kind)
{
	return kind == DK_DISJOINT || kind == DK_OVERLAP;
}

/* Kinds counted from the holder-to-waiter pairs: waits and times, no histogram. */
static bool is_pair_kind(uint8_t kind)
{
	return is_range_kind(kind) || kind == DK_ROLE;
}

/*
 * The role of pair e: its class, and each side's command (tname: a task's
 * process title's role, diff_names, 0: none), mode and (when both
 * recordings have them) op; threads, inode and range left out.
 */
static void role_key(const struct recording *r, const struct rec_edge *e, bool ops,
		     const uint32_t *tname, struct ilock_edge_key *k)
{
	memset(k, 0, sizeof(*k));
	k->class = e->class;
	k->holder_mode = e->holder_mode;
	k->waiter_mode = e->waiter_mode;
	comm_role(k->holder_comm, r->tasks[e->holder].comm);
	comm_role(k->waiter_comm, r->tasks[e->waiter].comm);
	k->holder_pid = tname[e->holder];
	k->waiter_pid = tname[e->waiter];
	if (ops) {
		k->holder_op = e->holder_op;
		k->holder_op_flags = e->holder_op_flags;
		k->waiter_op = e->waiter_op;
		k->waiter_op_flags = e->waiter_op_flags;
	}
}

/* The range class a range kind counts. */
static uint8_t kind_range(uint8_t kind)
{
	return kind == DK_DISJOINT ? ILOCK_RANGE_DISJOINT : ILOCK_RANGE_OVERLAP;
}

/* Does pair e count in a range kind's subject of this class? */
static bool edge_selected(const struct recording *r, const struct rec_edge *e,
			  const struct diff_opts *o, uint8_t class, uint8_t kind)
{
	return e->class == class && e->range == kind_range(kind) && rec_edge_match(r, e, o->f);
}

/* "i_rwsem shared", "i_rwsem holds", "i_rwsem disjoint ranges" */
static const char *kind_heading(uint8_t kind, char *buf, size_t len)
{
	if (kind == DK_HOLD)
		return "holds";
	snprintf(buf, len, "%s%s", diff_kind_name(kind), is_range_kind(kind) ? " ranges" : "");
	return buf;
}

const char *diff_verdict_name(enum diff_verdict v)
{
	switch (v) {
	case DV_SAME: return "not significant";
	case DV_HIGHER: return "higher";
	case DV_LOWER: return "lower";
	default: return "untested";
	}
}

const char *diff_match_name(enum diff_match m)
{
	switch (m) {
	case DMATCH_PATH: return "path";
	case DMATCH_DEVINO: return "dev:ino";
	case DMATCH_FSPATH: return "path in fs";
	case DMATCH_BEFORE_ONLY: return "before only";
	case DMATCH_AFTER_ONLY: return "after only";
	default: return "class";
	}
}

void diff_opts_default(struct diff_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->alpha = 0.01;
	o->min_change = 0.10;
	o->min_change_latency = 0.20;
	o->min_samples = 5;
	o->top_n = 10;
}

/* ------------------------------------------------------------ samples */

/* A recording seen through one selector: whole totals and one sample per interval. */
struct agg {
	double *v[DM_COUNT];
	size_t n[DM_COUNT];
	struct ilock_stats total;
	double secs;
};

struct sel {
	uint8_t class, kind;
	const int32_t *ent_of;   /* inode id -> entity; NULL for any inode */
	int32_t ent;             /* -1 with ent_of NULL */
	/* DK_ROLE: the role's pairs, ascending (role_set), and where its interval starts */
	const uint32_t *pairs;
	size_t npairs;
	size_t *cursor;
};

static void agg_free(struct agg *g)
{
	for (int m = 0; m < DM_COUNT; m++)
		free(g->v[m]);
	memset(g, 0, sizeof(*g));
}

/* One interval's waits (or exclusive holds) that selector s takes. */
static void interval_stats(const struct recording *r, const struct rec_interval *iv,
			   const struct diff_opts *o, const struct sel *s, struct ilock_stats *st)
{
	if (s->kind == DK_ROLE) {
		/* the role's own pairs: intervals come in order, so a cursor walks them once */
		for (; *s->cursor < s->npairs && s->pairs[*s->cursor] < iv->edge0 + iv->nedges;
		     ++*s->cursor) {
			const struct rec_edge *e = &r->edges[s->pairs[*s->cursor]];

			st->count += e->s.count;
			st->total_ns += e->s.total_ns;
		}
		return;
	}
	if (is_pair_kind(s->kind)) {
		/* from the pairs: counts and times, no histogram */
		for (size_t k = iv->edge0; k < iv->edge0 + iv->nedges; k++) {
			const struct rec_edge *e = &r->edges[k];

			if (!edge_selected(r, e, o, s->class, s->kind) ||
			    (s->ent_of && s->ent_of[e->inode] != s->ent))
				continue;
			st->count += e->s.count;
			st->total_ns += e->s.total_ns;
		}
		return;
	}
	for (size_t k = iv->lock0; k < iv->lock0 + iv->nlocks; k++) {
		const struct rec_lock *l = &r->locks[k];

		if (l->class != s->class || !rec_lock_match(r, l, o->f))
			continue;
		if (s->ent_of && s->ent_of[l->inode] != s->ent)
			continue;
		stats_merge(st, s->kind == DK_HOLD ? &l->hold[ILOCK_MODE_EXCL] : &l->wait[s->kind]);
	}
}

/*
 * One interval's latency, from its own histogram only. Its max_ns is
 * exact only where it rose past every earlier wait; elsewhere it is the
 * run's maximum so far, capped by the slot (stats_delta), and capping the
 * percentiles with it let one slow wait early in a recording lift every
 * later sample: a "significant" p99 and max change from 1 wait in 300.
 * Here the top slot ends at its own edge, or at the interval's total wait
 * time (no wait is longer); the max is that end.
 */
static double own_percentile(const struct ilock_stats *st, double q)
{
	return (double)hist_percentile(st->hist, q, st->total_ns);
}

static int collect(const struct recording *r, const struct diff_opts *o, const struct sel *s,
		   struct agg *g)
{
	/* a cut-off last interval is too short to be a fair sample */
	double min_s = (double)r->interval_ns / 2e9;

	memset(g, 0, sizeof(*g));
	for (int m = 0; m < DM_COUNT; m++) {
		g->v[m] = malloc((r->niv ? r->niv : 1) * sizeof(double));
		if (!g->v[m])
			return -ENOMEM;
	}
	for (size_t i = 0; i < r->niv; i++) {
		const struct rec_interval *iv = &r->iv[i];
		double secs = (double)iv->dur_ns / 1e9;
		struct ilock_stats st = {};

		interval_stats(r, iv, o, s, &st);
		stats_merge(&g->total, &st);
		g->secs += secs;
		if (secs <= 0 || secs < min_s)
			continue;
		if (s->kind == DK_HOLD) {
			if (st.count)
				g->v[DM_HOLD_P99][g->n[DM_HOLD_P99]++] = own_percentile(&st, 0.99);
			continue;
		}
		g->v[DM_WAITS_PER_S][g->n[DM_WAITS_PER_S]++] = (double)st.count / secs;
		g->v[DM_WAIT_PER_S][g->n[DM_WAIT_PER_S]++] = (double)st.total_ns / secs;
		/* pairs keep no histogram: their kinds compare rates only */
		if (!st.count || is_pair_kind(s->kind))
			continue;
		g->v[DM_P50][g->n[DM_P50]++] = own_percentile(&st, 0.50);
		g->v[DM_P99][g->n[DM_P99]++] = own_percentile(&st, 0.99);
		g->v[DM_MAX][g->n[DM_MAX]++] = own_percentile(&st, 1.0);
	}
	return 0;
}

static double whole(const struct agg *g, enum diff_metric m)
{
	switch (m) {
	case DM_WAITS_PER_S: return g->secs > 0 ? (double)g->total.count / g->secs : 0;
	case DM_WAIT_PER_S: return g->secs > 0 ? (double)g->total.total_ns / g->secs : 0;
	case DM_P50: return (double)stats_percentile(&g->total, 0.50);
	case DM_P99:
	case DM_HOLD_P99: return (double)stats_percentile(&g->total, 0.99);
	case DM_MAX: return (double)g->total.max_ns;
	default: return 0;
	}
}

static int compare(const struct agg *a, const struct agg *b, enum diff_metric m,
		   const struct diff_opts *o, struct diff_cmp *c)
{
	bool rate = m == DM_WAITS_PER_S || m == DM_WAIT_PER_S;
	struct mw_result mw;
	int err;

	memset(c, 0, sizeof(*c));
	c->present = true;
	c->p = c->p_adj = 1.0;
	c->before = whole(a, m);
	c->after = whole(b, m);
	c->has_before = rate || a->total.count;
	c->has_after = rate || b->total.count;
	c->na = a->n[m];
	c->nb = b->n[m];
	c->change = c->before > 0 ? (c->after - c->before) / c->before
				  : c->after > 0 ? INFINITY : 0;
	if (!c->has_before || !c->has_after) {
		c->why = !c->has_before ? "none before" : "none after";
		return 0;
	}
	if (c->na < o->min_samples || c->nb < o->min_samples) {
		c->why = rate ? "too few intervals" : "too few intervals with waits";
		return 0;
	}
	if ((err = mw_test(b->v[m], c->nb, a->v[m], c->na, &mw)))
		return err;
	c->tested = true;
	c->p = mw.p;
	/* the direction: where after's samples rank against before's */
	c->verdict = mw.z > 0 ? DV_HIGHER : mw.z < 0 ? DV_LOWER : DV_SAME;
	return 0;
}

/* The least intervals a side that let n tests beat the adjustment. */
static size_t needed_for(const struct diff_result *d, size_t ntests)
{
	for (size_t n = d->o.min_samples; n < 10000; n++)
		if (mw_min_p(n, n) * (double)ntests < d->o.alpha)
			return n;
	return 0;
}

/*
 * Could any test of this family have been significant? Holm multiplies
 * the smallest p by the number of tests, and with few intervals even two
 * samples that do not overlap have a p floor (2 / C(na + nb, na) below
 * MW_EXACT_MAX_N values): 5 against 5 cannot beat 0.01 over two tests.
 */
static void reachability(struct diff_result *d)
{
	double best = 1.0;
	size_t short_of = 0;

	d->unreachable = false;
	d->intervals_needed = 0;
	d->nout_of_reach = 0;
	if (!d->ntests) {
		/*
		 * No test at all: the comparisons that lacked only intervals
		 * would all be tested with enough, and their number sets how
		 * many the adjustment needs (5 a side is never enough for 56).
		 */
		for (size_t i = 0; i < d->n; i++)
			for (int m = 0; m < DM_COUNT; m++) {
				const struct diff_cmp *c = &d->s[i].m[m];

				short_of += c->present && c->has_before && c->has_after;
			}
		d->intervals_needed = short_of ? needed_for(d, short_of) : 0;
		if (d->intervals_needed < d->o.min_samples)
			d->intervals_needed = d->o.min_samples;
		return;
	}
	for (size_t i = 0; i < d->n; i++)
		for (int m = 0; m < DM_COUNT; m++) {
			struct diff_cmp *c = &d->s[i].m[m];
			double floor;

			if (!c->tested)
				continue;
			floor = mw_min_p(c->na, c->nb);
			best = fmin(best, floor);
			/* p50 and max have a sample only where there were waits */
			c->out_of_reach = floor * (double)d->ntests >= d->o.alpha;
			d->nout_of_reach += c->out_of_reach;
		}
	if (best * (double)d->ntests < d->o.alpha)
		return;
	d->nout_of_reach = 0;  /* all of them: the verdict says so as a whole */
	d->unreachable = true;
	d->intervals_needed = needed_for(d, d->ntests);
}

/* ------------------------------------------------------------ entities */

/* One inode of one recording (its ids merged), and whom it matched. */
struct entity {
	uint32_t dev;
	uint64_t ino;
	uint32_t magic;
	bool has_rel, has_path;
	char rel[ILOCK_PATH_MAX];
	char path[2 * ILOCK_PATH_MAX];
	int32_t other;            /* entity on the other side, or -1 */
	enum diff_match match;
};

struct side {
	const struct recording *r;
	struct entity *e;
	size_t n;
	int32_t *ent_of;          /* per inode id */
};

static const struct recording *g_sort_rec;  /* qsort has no context */

/* "" when the recording has no path for it */
static const char *rec_inode_rel(const struct rec_inode *in)
{
	return in->has_meta ? in->meta.path : "";
}

static int cmp_inode_ids(const void *pa, const void *pb)
{
	const struct rec_inode *a = &g_sort_rec->inodes[*(const uint32_t *)pa];
	const struct rec_inode *b = &g_sort_rec->inodes[*(const uint32_t *)pb];

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return strcmp(rec_inode_rel(a), rec_inode_rel(b));
}

static void side_free(struct side *s)
{
	free(s->e);
	free(s->ent_of);
	memset(s, 0, sizeof(*s));
}

static int side_build(struct side *s, const struct recording *r)
{
	uint32_t *ids;

	memset(s, 0, sizeof(*s));
	s->r = r;
	s->e = calloc(r->ninodes ? r->ninodes : 1, sizeof(*s->e));
	s->ent_of = calloc(r->ninodes ? r->ninodes : 1, sizeof(*s->ent_of));
	ids = malloc((r->ninodes ? r->ninodes : 1) * sizeof(*ids));
	if (!s->e || !s->ent_of || !ids) {
		free(ids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->ninodes; i++)
		ids[i] = (uint32_t)i;
	g_sort_rec = r;
	qsort(ids, r->ninodes, sizeof(*ids), cmp_inode_ids);
	for (size_t k = 0; k < r->ninodes; k++) {
		const struct rec_inode *in = &r->inodes[ids[k]];
		struct entity *e;

		/*
		 * One entity per dev:ino and path: the files that had one inode
		 * number in turn (generations) under one name are one file to
		 * compare, as a benchmark that lays its file out again means;
		 * under two names they are two.
		 */
		if (!s->n || s->e[s->n - 1].dev != in->dev || s->e[s->n - 1].ino != in->ino ||
		    strcmp(rec_inode_rel(&r->inodes[ids[k - 1]]), rec_inode_rel(in))) {
			e = &s->e[s->n++];
			e->dev = in->dev;
			e->ino = in->ino;
			e->other = -1;
		}
		e = &s->e[s->n - 1];
		s->ent_of[ids[k]] = (int32_t)(s->n - 1);
		if (!e->magic)
			e->magic = in->magic;
		if (!e->has_rel && in->has_meta &&
		    !(in->meta.flags & (ILOCK_INODE_NO_DENTRY | ILOCK_INODE_READ_FAIL))) {
			snprintf(e->rel, sizeof(e->rel), "%s", in->meta.path[0] ? in->meta.path : "/");
			e->has_rel = true;
			e->has_path = mounts_full_path(&r->mounts, in->dev, e->rel, e->path,
						       sizeof(e->path));
		}
	}
	free(ids);
	return 0;
}

static void link_pair(struct side *a, size_t i, struct side *b, size_t j, enum diff_match m)
{
	a->e[i].other = (int32_t)j;
	b->e[j].other = (int32_t)i;
	a->e[i].match = b->e[j].match = m;
}

/* Unique within its side: for matching by path inside the filesystem. */
static bool rel_unique(const struct side *s, size_t i)
{
	for (size_t k = 0; k < s->n; k++)
		if (k != i && s->e[k].has_rel && !strcmp(s->e[k].rel, s->e[i].rel))
			return false;
	return true;
}

/* Quadratic, but over inodes that waited: hundreds, not millions. */
static void match_entities(struct side *a, struct side *b)
{
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < b->n && a->e[i].has_path; j++)
			if (b->e[j].other < 0 && b->e[j].has_path && !strcmp(a->e[i].path, b->e[j].path)) {
				link_pair(a, i, b, j, DMATCH_PATH);
				break;
			}
	/* dev:ino only stands in when a path is missing */
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < b->n && a->e[i].other < 0; j++)
			if (b->e[j].other < 0 && (!a->e[i].has_path || !b->e[j].has_path) &&
			    a->e[i].dev == b->e[j].dev && a->e[i].ino == b->e[j].ino)
				link_pair(a, i, b, j, DMATCH_DEVINO);
	/* the same file on another mount (before on XFS, after on ext4) */
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < b->n && a->e[i].other < 0 && a->e[i].has_rel; j++)
			if (b->e[j].other < 0 && b->e[j].has_rel && !strcmp(a->e[i].rel, b->e[j].rel) &&
			    rel_unique(a, i) && rel_unique(b, j))
				link_pair(a, i, b, j, DMATCH_FSPATH);
	for (size_t i = 0; i < a->n; i++)
		if (a->e[i].other < 0)
			a->e[i].match = DMATCH_BEFORE_ONLY;
	for (size_t j = 0; j < b->n; j++)
		if (b->e[j].other < 0)
			b->e[j].match = DMATCH_AFTER_ONLY;
}

/* Wait ns per second and hold count, per entity and class. */
struct ent_load {
	double wait_rate[ILOCK_CLASS_MAX];
	uint64_t waits[ILOCK_CLASS_MAX][2];
	uint64_t holds[ILOCK_CLASS_MAX];
	uint64_t ranges[ILOCK_CLASS_MAX][2];  /* waits between disjoint, overlapping ranges */
};

static struct ent_load *side_load(const struct side *s, const struct diff_opts *o)
{
	struct ent_load *ld = calloc(s->n ? s->n : 1, sizeof(*ld));
	const struct recording *r = s->r;
	double secs = (double)rec_dur_ns(r) / 1e9;

	if (!ld)
		return NULL;
	for (size_t k = 0; k < r->nlocks; k++) {
		const struct rec_lock *l = &r->locks[k];
		struct ent_load *e = &ld[s->ent_of[l->inode]];

		if (!rec_lock_match(r, l, o->f))
			continue;
		e->wait_rate[l->class] += (double)(l->wait[0].total_ns + l->wait[1].total_ns) /
					  (secs > 0 ? secs : 1);
		e->waits[l->class][0] += l->wait[0].count;
		e->waits[l->class][1] += l->wait[1].count;
		e->holds[l->class] += l->hold[ILOCK_MODE_EXCL].count;
	}
	for (size_t k = 0; k < r->nedges; k++) {
		const struct rec_edge *ed = &r->edges[k];

		if (ed->class >= ILOCK_CLASS_MAX || !rec_edge_match(r, ed, o->f))
			continue;
		if (ed->range == ILOCK_RANGE_DISJOINT || ed->range == ILOCK_RANGE_OVERLAP)
			ld[s->ent_of[ed->inode]].ranges[ed->class][ed->range == ILOCK_RANGE_OVERLAP] +=
				ed->s.count;
	}
	return ld;
}

/* ------------------------------------------------------------ subjects */

static struct diff_subject *new_subject(struct diff_result *d)
{
	if (!grow_array((void **)&d->s, &d->cap, d->n, sizeof(*d->s)))
		return NULL;
	memset(&d->s[d->n], 0, sizeof(d->s[0]));
	return &d->s[d->n++];
}

static int fill_subject(struct diff_subject *s, const struct recording *a, const struct sel *sa,
			const struct recording *b, const struct sel *sb, const struct diff_opts *o)
{
	struct agg ga, gb;
	int err;

	if ((err = collect(a, o, sa, &ga)) || (err = collect(b, o, sb, &gb)))
		goto out;
	for (int m = 0; m < DM_COUNT; m++) {
		if ((s->kind == DK_HOLD) != (m == DM_HOLD_P99))
			continue;
		if (is_pair_kind(s->kind) && m != DM_WAITS_PER_S && m != DM_WAIT_PER_S)
			continue;
		if ((err = compare(&ga, &gb, m, o, &s->m[m])))
			goto out;
	}
out:
	agg_free(&ga);
	agg_free(&gb);
	return err;
}

static bool class_has(const struct recording *r, const struct diff_opts *o, uint8_t class,
		      uint8_t kind)
{
	if (is_range_kind(kind)) {
		if (!class_has_ranges(class))
			return false;
		for (size_t k = 0; k < r->nedges; k++)
			if (r->edges[k].s.count && edge_selected(r, &r->edges[k], o, class, kind))
				return true;
		return false;
	}
	for (size_t k = 0; k < r->nlocks; k++) {
		const struct rec_lock *l = &r->locks[k];

		if (l->class != class || !rec_lock_match(r, l, o->f))
			continue;
		if (kind == DK_HOLD ? l->hold[ILOCK_MODE_EXCL].count != 0 : l->wait[kind].count != 0)
			return true;
	}
	return false;
}

struct pair_rank {
	int32_t ea, eb;
	uint8_t class;
	double score;
};

static int cmp_rank(const void *pa, const void *pb)
{
	const struct pair_rank *a = pa, *b = pb;

	return a->score > b->score ? -1 : a->score < b->score;
}

/*
 * The lock's name on both sides: one path matched across filesystems (an
 * XFS recording against an ext4 one) is "IOLOCK | i_rwsem".
 */
static const char *subject_class_name(const struct diff_subject *s, char *buf, size_t len)
{
	const char *a = class_display_name(s->class, s->magic);
	const char *b = s->magic_b ? class_display_name(s->class, s->magic_b) : a;

	if (!strcmp(a, b))
		return a;
	snprintf(buf, len, "%s | %s", a, b);
	return buf;
}

static void subject_label(struct diff_subject *s, const struct entity *ea, const struct entity *eb)
{
	const struct entity *e = ea ? ea : eb;
	char d[24], in[24];

	if (ea)
		snprintf(s->ident_a, sizeof(s->ident_a), "%s:%s",
			 fmt_kdev(d, sizeof(d), ea->dev), fmt_ino(in, sizeof(in), ea->ino));
	if (eb)
		snprintf(s->ident_b, sizeof(s->ident_b), "%s:%s",
			 fmt_kdev(d, sizeof(d), eb->dev), fmt_ino(in, sizeof(in), eb->ino));
	s->magic = ea && ea->magic ? ea->magic : eb ? eb->magic : 0;
	s->magic_b = ea && eb ? eb->magic : 0;
	if (ea && eb && ea->has_path && eb->has_path && strcmp(ea->path, eb->path))
		snprintf(s->label, sizeof(s->label), "%s | %s", ea->path, eb->path);
	else if (e->has_path)
		snprintf(s->label, sizeof(s->label), "%s", e->path);
	else if (ea && eb && eb->has_path)
		snprintf(s->label, sizeof(s->label), "%s", eb->path);
	else if (e->has_rel)
		snprintf(s->label, sizeof(s->label), "%s:%s", fmt_kdev(d, sizeof(d), e->dev), e->rel);
	else
		snprintf(s->label, sizeof(s->label), "%s", ea ? s->ident_a : s->ident_b);
	label_clean(s->label);
}

static int inode_subjects(struct diff_result *d, struct side *sa, struct side *sb)
{
	const struct diff_opts *o = &d->o;
	struct ent_load *la = side_load(sa, o), *lb = side_load(sb, o);
	struct pair_rank *pr = calloc((sa->n + sb->n + 1) * ILOCK_CLASS_MAX, sizeof(*pr));
	size_t npr = 0;
	int err = 0;

	if (!la || !lb || !pr) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < sa->n; i++)
		for (uint8_t c = 0; c < ILOCK_CLASS_MAX; c++) {
			int32_t j = sa->e[i].other;
			struct ent_load *b = j >= 0 ? &lb[j] : NULL;
			uint64_t any = la[i].waits[c][0] + la[i].waits[c][1] + la[i].holds[c] +
				       (b ? b->waits[c][0] + b->waits[c][1] + b->holds[c] : 0);

			if (any)
				pr[npr++] = (struct pair_rank){ (int32_t)i, j, c,
					la[i].wait_rate[c] + (b ? b->wait_rate[c] : 0) };
		}
	for (size_t j = 0; j < sb->n; j++)
		for (uint8_t c = 0; c < ILOCK_CLASS_MAX; c++)
			if (sb->e[j].other < 0 &&
			    lb[j].waits[c][0] + lb[j].waits[c][1] + lb[j].holds[c])
				pr[npr++] = (struct pair_rank){ -1, (int32_t)j, c, lb[j].wait_rate[c] };
	qsort(pr, npr, sizeof(*pr), cmp_rank);
	for (size_t k = 0; k < npr && k < (size_t)o->top_n; k++) {
		const struct pair_rank *p = &pr[k];
		const struct entity *ea = p->ea >= 0 ? &sa->e[p->ea] : NULL;
		const struct entity *eb = p->eb >= 0 ? &sb->e[p->eb] : NULL;

		for (uint8_t kind = DK_SHARED; kind <= DK_OVERLAP; kind++) {
			/* an unmatched side selects nothing: entity -2 never occurs */
			struct sel selA = { .class = p->class, .kind = kind, .ent_of = sa->ent_of,
					   .ent = p->ea >= 0 ? p->ea : -2 };
			struct sel selB = { .class = p->class, .kind = kind, .ent_of = sb->ent_of,
					   .ent = p->eb >= 0 ? p->eb : -2 };
			uint64_t na = 0, nb = 0;
			struct diff_subject *s;

			if (is_range_kind(kind) && !class_has_ranges(p->class))
				continue;
			if (kind == DK_HOLD) {
				na = ea ? la[p->ea].holds[p->class] : 0;
				nb = eb ? lb[p->eb].holds[p->class] : 0;
			} else if (is_range_kind(kind)) {
				na = ea ? la[p->ea].ranges[p->class][kind == DK_OVERLAP] : 0;
				nb = eb ? lb[p->eb].ranges[p->class][kind == DK_OVERLAP] : 0;
			} else {
				na = ea ? la[p->ea].waits[p->class][kind] : 0;
				nb = eb ? lb[p->eb].waits[p->class][kind] : 0;
			}
			if (!na && !nb)
				continue;
			s = new_subject(d);
			if (!s) {
				err = -ENOMEM;
				goto out;
			}
			s->is_inode = true;
			s->class = p->class;
			s->kind = kind;
			s->match = ea ? ea->match : eb->match;
			subject_label(s, ea, eb);
			if ((err = fill_subject(s, sa->r, &selA, sb->r, &selB, o)))
				goto out;
		}
	}
out:
	free(la);
	free(lb);
	free(pr);
	return err;
}

const char *diff_role_name(const struct diff_names *nm, uint32_t id)
{
	return nm && id && id <= nm->n ? nm->name[id - 1] : NULL;
}

/* A task's process title's role, its id + 1 in nm (added if new); 0: none or no memory */
static uint32_t name_id(struct diff_names *nm, const char *title)
{
	char key[ILOCK_TITLE_MAX] = "";
	uint32_t id;

	if (!title)
		return 0;
	title_role(title, key, sizeof(key));
	if (!nm->ids.ksz)
		idmap_init(&nm->ids, sizeof(key));
	if (idmap_get(&nm->ids, key, &id))
		return id + 1;
	if (!grow_array((void **)&nm->name, &nm->cap, nm->n, sizeof(*nm->name)) ||
	    idmap_put(&nm->ids, key, (uint32_t)nm->n))
		return 0;
	memcpy(nm->name[nm->n], key, sizeof(key));
	return (uint32_t)++nm->n;
}

void diff_role_label(char *buf, size_t len, const struct ilock_edge_key *k, bool ops,
		     const struct diff_names *nm)
{
	char h[PAIR_SIDE_LEN], w[PAIR_SIDE_LEN];
	const char *hn = diff_role_name(nm, k->holder_pid), *wn = diff_role_name(nm, k->waiter_pid);
	struct pair_row r = { .k = *k, .holder_role = hn, .waiter_role = wn };

	pair_side(h, sizeof(h), &r, true, ops);
	pair_side(w, sizeof(w), &r, false, ops);
	snprintf(buf, len, "%s -> %s", h, w);
}

/*
 * One recording's roles: the distinct role keys, their waits over the
 * whole recording, and their pairs. A role's identity is its commands,
 * modes and ops, so each task's command becomes a small id first and a
 * pair's role is found by two words instead of a 72-byte key: an hour of
 * pairs (half a million) is read in one pass.
 */
struct role_set {
	struct ilock_edge_key *key;
	struct ilock_edge_stats *sum;
	size_t n;
	uint32_t *pairs;                 /* pair indexes, role by role, ascending within one */
	size_t *first;                   /* role i's: pairs[first[i] .. first[i + 1]) */
	/* the table from compact keys to roles, while building */
	uint64_t (*slot)[2];
	int32_t *slot_role;
	size_t nslots;
	uint32_t *tname;                 /* per task, its title's role (diff_names), 0: none */
};

static void role_set_free(struct role_set *rs)
{
	free(rs->key);
	free(rs->sum);
	free(rs->pairs);
	free(rs->first);
	free(rs->slot);
	free(rs->slot_role);
	free(rs->tname);
	memset(rs, 0, sizeof(*rs));
}

static const struct recording *g_comm_rec;  /* qsort has no context */
static const uint32_t *g_comm_tname;

static int cmp_task_comm(const void *pa, const void *pb)
{
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	char a[ILOCK_COMM_LEN], b[ILOCK_COMM_LEN];
	int c;

	comm_role(a, g_comm_rec->tasks[ia].comm);
	comm_role(b, g_comm_rec->tasks[ib].comm);
	c = strcmp(a, b);
	if (c)
		return c;
	return g_comm_tname[ia] < g_comm_tname[ib] ? -1 : g_comm_tname[ia] > g_comm_tname[ib];
}

/*
 * Per task, an id shared by the tasks of one command, a pool's threads
 * one command (comm_role), those of one process title's role one (tname).
 * malloc'ed; NULL: out of memory.
 */
static uint32_t *comm_ids(const struct recording *r, const uint32_t *tname)
{
	uint32_t *order = malloc((r->ntasks + 1) * sizeof(*order));
	uint32_t *id = malloc((r->ntasks + 1) * sizeof(*id));
	uint32_t next = 0;

	if (!order || !id) {
		free(order);
		free(id);
		return NULL;
	}
	for (size_t i = 0; i < r->ntasks; i++)
		order[i] = (uint32_t)i;
	g_comm_rec = r;
	g_comm_tname = tname;
	qsort(order, r->ntasks, sizeof(*order), cmp_task_comm);
	for (size_t i = 0; i < r->ntasks; i++) {
		if (i && cmp_task_comm(&order[i - 1], &order[i]))
			next++;
		id[order[i]] = next;
	}
	free(order);
	return id;
}

static size_t role_hash(const uint64_t ck[2], size_t nslots)
{
	return (size_t)(((ck[0] * 0x9E3779B97F4A7C15ULL) ^ ck[1]) * 0x9E3779B97F4A7C15ULL >> 20) &
	       (nslots - 1);
}

/* Twice the slots (256 at first), and room for as many roles as keep them half empty. */
static int role_table_grow(struct role_set *rs)
{
	size_t nn = rs->nslots ? rs->nslots * 2 : 256, h;
	uint64_t (*slot)[2] = malloc(nn * sizeof(*slot));
	int32_t *role = malloc(nn * sizeof(*role));
	struct ilock_edge_key *key;
	struct ilock_edge_stats *sum;

	if (!slot || !role) {
		free(slot);
		free(role);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nn; i++)
		role[i] = -1;
	for (size_t i = 0; i < rs->nslots; i++) {
		if (rs->slot_role[i] < 0)
			continue;
		for (h = role_hash(rs->slot[i], nn); role[h] >= 0; h = (h + 1) & (nn - 1))
			;
		memcpy(slot[h], rs->slot[i], sizeof(slot[h]));
		role[h] = rs->slot_role[i];
	}
	free(rs->slot);
	free(rs->slot_role);
	rs->slot = slot;
	rs->slot_role = role;
	rs->nslots = nn;
	key = realloc(rs->key, nn / 2 * sizeof(*key));
	if (key)
		rs->key = key;
	sum = realloc(rs->sum, nn / 2 * sizeof(*sum));
	if (sum)
		rs->sum = sum;
	return key && sum ? 0 : -ENOMEM;
}

/* The role of compact key ck, added with e's full key when new; -ENOMEM, else its index. */
static int64_t role_find_add(struct role_set *rs, const uint64_t ck[2], const struct recording *r,
			     const struct rec_edge *e, bool ops)
{
	size_t h;
	int err;

	if ((rs->n + 1) * 2 > rs->nslots && (err = role_table_grow(rs)))
		return err;
	for (h = role_hash(ck, rs->nslots); rs->slot_role[h] >= 0; h = (h + 1) & (rs->nslots - 1))
		if (rs->slot[h][0] == ck[0] && rs->slot[h][1] == ck[1])
			return rs->slot_role[h];
	memcpy(rs->slot[h], ck, sizeof(rs->slot[h]));
	rs->slot_role[h] = (int32_t)rs->n;
	role_key(r, e, ops, rs->tname, &rs->key[rs->n]);
	memset(&rs->sum[rs->n], 0, sizeof(rs->sum[0]));
	return (int64_t)rs->n++;
}

/*
 * The roles of r's pairs that the filters keep (ops: keyed by ops too),
 * a titled process's by its title's role (added to nm).
 */
static int role_load(const struct recording *r, const struct diff_opts *o, bool ops,
		     struct diff_names *nm, struct role_set *rs)
{
	uint32_t *cid = NULL;
	int32_t *of = malloc((r->nedges + 1) * sizeof(*of));
	int err = -ENOMEM;

	memset(rs, 0, sizeof(*rs));
	rs->tname = malloc((r->ntasks + 1) * sizeof(*rs->tname));
	if (!rs->tname || !of)
		goto out;
	for (size_t i = 0; i < r->ntasks; i++)
		rs->tname[i] = name_id(nm, r->tasks[i].title);
	if (!(cid = comm_ids(r, rs->tname)))
		goto out;
	for (size_t k = 0; k < r->nedges; k++) {
		const struct rec_edge *e = &r->edges[k];
		uint64_t ck[2];
		int64_t id;

		of[k] = -1;
		if (e->class >= ILOCK_CLASS_MAX || !e->s.count || !rec_edge_match(r, e, o->f))
			continue;
		/* what role_key keeps, in two words */
		ck[0] = (uint64_t)cid[e->holder] << 32 | cid[e->waiter];
		ck[1] = (uint64_t)e->class | (uint64_t)e->holder_mode << 8 |
			(uint64_t)e->waiter_mode << 16;
		if (ops)
			ck[1] |= (uint64_t)e->holder_op << 24 | (uint64_t)e->holder_op_flags << 32 |
				 (uint64_t)e->waiter_op << 40 | (uint64_t)e->waiter_op_flags << 48;
		if ((id = role_find_add(rs, ck, r, e, ops)) < 0)
			goto out;
		of[k] = (int32_t)id;
		rs->sum[id].count += e->s.count;
		rs->sum[id].total_ns += e->s.total_ns;
		if (e->s.max_ns > rs->sum[id].max_ns)
			rs->sum[id].max_ns = e->s.max_ns;
	}
	/* each role's pairs together, in pair order (a counting sort) */
	rs->first = calloc(rs->n + 2, sizeof(*rs->first));
	rs->pairs = malloc((r->nedges + 1) * sizeof(*rs->pairs));
	if (!rs->first || !rs->pairs)
		goto out;
	for (size_t k = 0; k < r->nedges; k++)
		if (of[k] >= 0)
			rs->first[of[k] + 2]++;
	for (size_t i = 2; i < rs->n + 2; i++)
		rs->first[i] += rs->first[i - 1];
	/* first[i + 1] is role i's fill position; it ends at role i + 1's start */
	for (size_t k = 0; k < r->nedges; k++)
		if (of[k] >= 0)
			rs->pairs[rs->first[of[k] + 1]++] = (uint32_t)k;
	err = 0;
out:
	free(cid);
	free(of);
	return err;
}

static const struct role_set *g_role_set;  /* qsort and bsearch have no context */

static int cmp_role_idx(const void *pa, const void *pb)
{
	return memcmp(&g_role_set->key[*(const uint32_t *)pa], &g_role_set->key[*(const uint32_t *)pb],
		      sizeof(struct ilock_edge_key));
}

/* bsearch's: a key against the role an index names */
static int cmp_key_role_idx(const void *key, const void *pb)
{
	return memcmp(key, &g_role_set->key[*(const uint32_t *)pb], sizeof(struct ilock_edge_key));
}

struct role_rank {
	double score;             /* wait time per second, both recordings added */
	int32_t ia, ib;           /* its index on each side, -1 where absent */
};

static int cmp_role_rank(const void *pa, const void *pb)
{
	const struct role_rank *a = pa, *b = pb;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return a->ia != b->ia ? (a->ia < b->ia ? -1 : 1) : (a->ib < b->ib ? -1 : a->ib > b->ib);
}

static int cmp_u32(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return a < b ? -1 : a > b;
}

/*
 * How many threads held and waited in a role's pairs: a role sums its
 * command's threads, and "4 writers -> 8 readers" says how wide it was.
 * An unknown holder (pid 0) is no thread.
 */
static int role_threads(const struct recording *r, const uint32_t *pairs, size_t n,
			uint32_t out[2])
{
	uint32_t *pid = malloc((n + 1) * sizeof(*pid));

	out[0] = out[1] = 0;
	if (!pid)
		return -ENOMEM;
	for (int side = 0; side < 2; side++) {
		size_t m = 0;

		for (size_t i = 0; i < n; i++) {
			const struct rec_edge *e = &r->edges[pairs[i]];
			uint32_t t = side ? e->waiter : e->holder;

			if (t < r->ntasks && r->tasks[t].pid && r->tasks[t].pid != ILOCK_PID_FOLDED)
				pid[m++] = r->tasks[t].pid;
		}
		qsort(pid, m, sizeof(*pid), cmp_u32);
		for (size_t i = 0; i < m; i++)
			out[side] += !i || pid[i] != pid[i - 1];
	}
	free(pid);
	return 0;
}

/* One role subject: its key from either side, each side's pairs. */
static int role_subject(struct diff_result *d, const struct recording *a, const struct role_set *ra,
			const struct recording *b, const struct role_set *rb,
			const struct role_rank *rk, bool ops)
{
	struct diff_subject *s = new_subject(d);
	size_t ca = 0, cb = 0;
	struct sel sa = { .kind = DK_ROLE, .ent = -1, .cursor = &ca };
	struct sel sb = { .kind = DK_ROLE, .ent = -1, .cursor = &cb };

	if (!s)
		return -ENOMEM;
	if (rk->ia >= 0) {
		sa.pairs = ra->pairs + ra->first[rk->ia];
		sa.npairs = ra->first[rk->ia + 1] - ra->first[rk->ia];
	}
	if (rk->ib >= 0) {
		sb.pairs = rb->pairs + rb->first[rk->ib];
		sb.npairs = rb->first[rk->ib + 1] - rb->first[rk->ib];
	}
	s->role = rk->ia >= 0 ? ra->key[rk->ia] : rb->key[rk->ib];
	s->class = sa.class = sb.class = s->role.class;
	s->kind = DK_ROLE;
	s->match = DMATCH_CLASS;
	diff_role_label(s->label, sizeof(s->label), &s->role, ops, &d->names);
	if (role_threads(a, sa.pairs, sa.npairs, s->threads[0]) ||
	    role_threads(b, sb.pairs, sb.npairs, s->threads[1]))
		return -ENOMEM;
	return fill_subject(s, a, &sa, b, &sb, &d->o);
}

/*
 * The top roles by wait time, compared as class subjects are. Roles are
 * matched by their key alone: a command keeps its name from run to run,
 * its threads' ids do not.
 */
static int role_subjects(struct diff_result *d, const struct recording *a,
			 const struct recording *b)
{
	const struct diff_opts *o = &d->o;
	double secs_a = (double)rec_dur_ns(a) / 1e9, secs_b = (double)rec_dur_ns(b) / 1e9;
	bool ops = !d->roles_without_ops;
	struct role_set ra, rb;
	struct role_rank *rk = NULL;
	uint32_t *by_key = NULL;
	bool *matched = NULL;
	size_t n = 0;
	int err;

	memset(&ra, 0, sizeof(ra));
	memset(&rb, 0, sizeof(rb));
	if ((err = role_load(a, o, ops, &d->names, &ra)) ||
	    (err = role_load(b, o, ops, &d->names, &rb)))
		goto out;
	err = -ENOMEM;
	rk = calloc(ra.n + rb.n + 1, sizeof(*rk));
	by_key = malloc((rb.n + 1) * sizeof(*by_key));
	matched = calloc(rb.n + 1, sizeof(*matched));
	if (!rk || !by_key || !matched)
		goto out;
	/* b's roles by key, to find a's among them */
	for (size_t i = 0; i < rb.n; i++)
		by_key[i] = (uint32_t)i;
	g_role_set = &rb;
	qsort(by_key, rb.n, sizeof(*by_key), cmp_role_idx);
	for (size_t i = 0; i < ra.n; i++) {
		const uint32_t *hit;
		int32_t j = -1;

		hit = rb.n ? bsearch(&ra.key[i], by_key, rb.n, sizeof(*by_key), cmp_key_role_idx)
			   : NULL;
		if (hit) {
			j = (int32_t)*hit;
			matched[j] = true;
		}
		rk[n].ia = (int32_t)i;
		rk[n].ib = j;
		rk[n++].score = (double)ra.sum[i].total_ns / (secs_a > 0 ? secs_a : 1) +
				(j >= 0 ? (double)rb.sum[j].total_ns / (secs_b > 0 ? secs_b : 1) : 0);
	}
	for (size_t j = 0; j < rb.n; j++)
		if (!matched[j])
			rk[n++] = (struct role_rank){ (double)rb.sum[j].total_ns / (secs_b > 0 ? secs_b : 1),
						      -1, (int32_t)j };
	qsort(rk, n, sizeof(*rk), cmp_role_rank);
	err = 0;
	for (size_t i = 0; i < n && i < (size_t)o->top_n && !err; i++)
		err = role_subject(d, a, &ra, b, &rb, &rk[i], ops);
out:
	free(rk);
	free(by_key);
	free(matched);
	role_set_free(&ra);
	role_set_free(&rb);
	return err;
}

static void add_probe_change(struct diff_result *d, const char *probe, const char *before,
			     const char *after)
{
	struct diff_probe_change *pc;

	if (d->nprobes >= DIFF_MAX_PROBE_CHANGES)
		return;
	pc = &d->probes[d->nprobes++];
	snprintf(pc->probe, sizeof(pc->probe), "%s", probe);
	snprintf(pc->before, sizeof(pc->before), "%s", before ? before : "-");
	snprintf(pc->after, sizeof(pc->after), "%s", after ? after : "-");
}

static bool has_attach_meta(const struct recording *r)
{
	for (size_t i = 0; i < r->nmeta; i++)
		if (!strncmp(r->meta[i].key, "attach.", 7))
			return true;
	return false;
}

/*
 * A probe one recording names and the other does not, where the other
 * names some: the build that wrote it had no such probe or mode, so it
 * ran as "off" does (a recording from before --wait-sample timed every
 * wait). That is no change, and listing it would flag every recording
 * older than the newest probe. Without any attach meta nothing is known.
 */
static bool same_probe_mode(const struct recording *other, const char *mine, const char *theirs)
{
	if (!theirs)
		return has_attach_meta(other) && !strcmp(mine, "off");
	return !strcmp(mine, theirs);
}

/* The probes ("attach.*" meta) whose mode differs between the recordings. */
static void probe_changes(struct diff_result *d, const struct recording *a,
			  const struct recording *b)
{
	for (size_t i = 0; i < a->nmeta; i++) {
		const char *k = a->meta[i].key, *vb;

		if (strncmp(k, "attach.", 7))
			continue;
		vb = rec_meta(b, k);
		if (!same_probe_mode(b, a->meta[i].val, vb))
			add_probe_change(d, k + 7, a->meta[i].val, vb);
	}
	for (size_t i = 0; i < b->nmeta; i++) {
		const char *k = b->meta[i].key;

		if (!strncmp(k, "attach.", 7) && !rec_meta(a, k) &&
		    !same_probe_mode(a, b->meta[i].val, NULL))
			add_probe_change(d, k + 7, NULL, b->meta[i].val);
	}
}

/* The filters each recording was made with, when both say (recordings since 1.0 do). */
static void filter_changes(struct diff_result *d, const struct recording *a,
			   const struct recording *b)
{
	const char *fa = rec_meta(a, "filters"), *fb = rec_meta(b, "filters");

	if (!fa || !fb || !strcmp(fa, fb))
		return;
	d->filters_differ = true;
	snprintf(d->filters_before, sizeof(d->filters_before), "%s", fa);
	snprintf(d->filters_after, sizeof(d->filters_after), "%s", fb);
}

/*
 * Could the recording see hold times? Not with every hold program off
 * (--holds=off, or no XFS); recordings that predate the attach meta are
 * given the benefit of the doubt.
 */
static bool holds_captured(const struct recording *r)
{
	const char *x = rec_meta(r, "attach.xfs_ilock"), *w = rec_meta(r, "attach.rwsem_holds");

	if (!x && !w)
		return true;
	return (x && strcmp(x, "off")) || (w && strcmp(w, "off"));
}

/* Could it see byte ranges? Not with --ops off; older recordings: as for holds. */
static bool ranges_captured(const struct recording *r)
{
	const char *v = rec_meta(r, "attach.ops");

	return !v || strcmp(v, "off");
}

/*
 * Every comparison of the subjects `picks` takes is untested, "not captured"
 * on the side (before, unless before saw them) that could not see them: its
 * zero is not a measurement, so they are not "new" or "gone" either.
 */
static void mark_subjects_uncaptured(struct diff_result *d, bool before, bool after,
				     bool (*picks)(const struct diff_subject *),
				     const char *why_before, const char *why_after)
{
	if (before && after)
		return;
	for (size_t i = 0; i < d->n; i++) {
		if (!picks(&d->s[i]))
			continue;
		for (int m = 0; m < DM_COUNT; m++) {
			struct diff_cmp *c = &d->s[i].m[m];

			if (!c->present)
				continue;
			c->tested = false;
			c->uncaptured = true;
			c->verdict = DV_UNTESTED;
			c->why = !before ? why_before : why_after;
		}
	}
}

/* A side without ops saw every wait's range as unknown. */
static bool is_range_subject(const struct diff_subject *s)
{
	return is_range_kind(s->kind);
}

/*
 * Could it see ext4 fsyncs waiting for the journal? Not with the jbd2_wait
 * probes off (an XFS-only -D, a --class without jbd2_wait); a recording
 * with attach meta but none for jbd2_wait predates them: off, as
 * same_probe_mode() has it; with no attach meta at all, as for holds.
 */
static bool journal_captured(const struct recording *r)
{
	const char *v = rec_meta(r, "attach.jbd2_wait");

	return v ? strcmp(v, "off") != 0 : !has_attach_meta(r);
}

/* A side without the jbd2_wait probes saw no journal wait: its class, inodes and roles. */
static bool is_journal_subject(const struct diff_subject *s)
{
	return s->class == ILOCK_CLASS_JBD2_WAIT;
}

/* A hold missing on a side that could not see holds is not "new" or "gone". */
static void mark_uncaptured(struct diff_result *d, const struct recording *a,
			    const struct recording *b)
{
	bool ha = holds_captured(a), hb = holds_captured(b);

	mark_subjects_uncaptured(d, ranges_captured(a), ranges_captured(b), is_range_subject,
				 "not captured before (--ops off)", "not captured after (--ops off)");
	mark_subjects_uncaptured(d, journal_captured(a), journal_captured(b), is_journal_subject,
				 "not captured before (jbd2_wait off)",
				 "not captured after (jbd2_wait off)");
	if (ha && hb)
		return;
	for (size_t i = 0; i < d->n; i++) {
		struct diff_cmp *c = &d->s[i].m[DM_HOLD_P99];

		if (!c->present || c->tested)
			continue;
		if ((!c->has_before && !ha) || (!c->has_after && !hb)) {
			c->uncaptured = true;
			c->why = !c->has_before && !ha ? "not captured before (holds off)"
						      : "not captured after (holds off)";
		}
	}
}

/*
 * The tail of one interval's waits grows with the interval: p99 and max
 * of 5-second intervals against 1-second ones would read as a change.
 * The rates and p50 are per second or central, and stay tested.
 */
static void mark_unlike_intervals(struct diff_result *d, const struct recording *a,
				  const struct recording *b)
{
	static const int tail[] = { DM_P99, DM_MAX, DM_HOLD_P99 };
	double ia = (double)a->interval_ns, ib = (double)b->interval_ns;

	if (!ia || !ib || (ia <= ib * 1.1 && ib <= ia * 1.1))
		return;
	d->unlike_intervals = true;
	snprintf(d->unlike_why, sizeof(d->unlike_why), "intervals differ (%g s -> %g s)", ia / 1e9,
		 ib / 1e9);
	for (size_t i = 0; i < d->n; i++)
		for (size_t k = 0; k < sizeof(tail) / sizeof(tail[0]); k++) {
			struct diff_cmp *c = &d->s[i].m[tail[k]];

			if (!c->present || !c->tested)
				continue;
			c->tested = false;
			c->verdict = DV_UNTESTED;
			c->why = d->unlike_why;
		}
}

int diff_compute(const struct recording *a, const struct recording *b, const struct diff_opts *o,
		 struct diff_result *d)
{
	struct side sa = {}, sb = {};
	double *p = NULL, *adj = NULL;
	size_t nt = 0;
	int err;

	memset(d, 0, sizeof(*d));
	d->o = *o;
	d->secs_a = (double)rec_dur_ns(a) / 1e9;
	d->secs_b = (double)rec_dur_ns(b) / 1e9;
	d->niv_a = a->niv;
	d->niv_b = b->niv;

	for (uint8_t c = 0; c < ILOCK_CLASS_MAX; c++)
		for (uint8_t kind = DK_SHARED; kind <= DK_OVERLAP; kind++) {
			struct sel sel = { .class = c, .kind = kind, .ent = -1 };
			struct diff_subject *s;

			if (!class_has(a, o, c, kind) && !class_has(b, o, c, kind))
				continue;
			s = new_subject(d);
			if (!s)
				return -ENOMEM;
			s->class = c;
			s->kind = kind;
			s->match = DMATCH_CLASS;
			snprintf(s->label, sizeof(s->label), "%s", class_name(c));
			if ((err = fill_subject(s, a, &sel, b, &sel, o)))
				return err;
		}
	if ((err = side_build(&sa, a)) || (err = side_build(&sb, b)))
		goto out;
	match_entities(&sa, &sb);
	if ((err = inode_subjects(d, &sa, &sb)))
		goto out;
	/* a side without ops saw every op as unknown: roles then by command and mode only */
	d->roles_without_ops = !ranges_captured(a) || !ranges_captured(b);
	if ((err = role_subjects(d, a, b)))
		goto out;
	probe_changes(d, a, b);
	filter_changes(d, a, b);
	mark_uncaptured(d, a, b);
	mark_unlike_intervals(d, a, b);

	/* one family: every test in this diff, Holm-adjusted together */
	p = malloc((d->n * DM_COUNT + 1) * sizeof(*p));
	adj = malloc((d->n * DM_COUNT + 1) * sizeof(*adj));
	if (!p || !adj) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < d->n; i++)
		for (int m = 0; m < DM_COUNT; m++)
			if (d->s[i].m[m].tested)
				p[nt++] = d->s[i].m[m].p;
	if ((err = holm_adjust(p, adj, nt)))
		goto out;
	d->ntests = nt;
	reachability(d);
	nt = 0;
	for (size_t i = 0; i < d->n; i++)
		for (int m = 0; m < DM_COUNT; m++) {
			struct diff_cmp *c = &d->s[i].m[m];
			bool big, agree;

			if (!c->tested)
				continue;
			c->p_adj = adj[nt++];
			c->floor = m == DM_WAITS_PER_S || m == DM_WAIT_PER_S ? o->min_change
									    : o->min_change_latency;
			big = fabs(c->change) >= c->floor;
			/* a total pulled the other way by a few intervals is no verdict */
			agree = (c->verdict == DV_HIGHER && c->after > c->before) ||
				(c->verdict == DV_LOWER && c->after < c->before);
			if (c->p_adj < o->alpha && big && agree) {
				/* Holm lifts a larger p by less than ntests: it was in reach */
				if (c->out_of_reach) {
					c->out_of_reach = false;
					d->nout_of_reach--;
				}
				d->nsig++;
				if (c->verdict == DV_HIGHER)
					d->nhigher++;
				else
					d->nlower++;
			} else {
				if (c->p_adj < o->alpha)
					c->why_not = !agree ? DWN_DIRECTION : DWN_FLOOR;
				c->verdict = DV_SAME;
			}
		}
out:
	free(p);
	free(adj);
	side_free(&sa);
	side_free(&sb);
	return err;
}

void diff_free(struct diff_result *d)
{
	free(d->s);
	free(d->names.name);
	idmap_free(&d->names.ids);
	memset(d, 0, sizeof(*d));
}

/* ------------------------------------------------------------ output */

static char *fmt_val(char *buf, size_t len, enum diff_metric m, double v, bool has)
{
	if (!has) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (m == DM_WAITS_PER_S) {
		snprintf(buf, len, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
		return buf;
	}
	fmt_ns(buf, len, (uint64_t)llround(v));
	if (m == DM_WAIT_PER_S)
		strncat(buf, "/s", len - strlen(buf) - 1);
	return buf;
}

static char *fmt_change(char *buf, size_t len, const struct diff_cmp *c)
{
	if (c->uncaptured)
		snprintf(buf, len, "n/a");
	else if (!c->has_before || !c->has_after)
		snprintf(buf, len, "%s", !c->has_before && !c->has_after ? "-"
					 : !c->has_before ? "new" : "gone");
	else if (isinf(c->change))
		snprintf(buf, len, "new");
	else
		snprintf(buf, len, "%+.0f%%", c->change * 100);
	return buf;
}

/*
 * Three decimals, but never rounded across alpha's edge: an adjusted p of
 * 0.00995 (significant) printed as 0.010 reads as a miss.
 */
static char *fmt_p(char *buf, size_t len, double p)
{
	if (p < 0.001)
		snprintf(buf, len, "p<0.001");
	else if (p < 0.0105 && p >= 0.0095)
		snprintf(buf, len, "p=%.5f", p);
	else
		snprintf(buf, len, "p=%.3f", p);
	return buf;
}

static void verdict_text(char *buf, size_t len, const struct diff_cmp *c)
{
	char p[24];

	if (!c->tested)
		snprintf(buf, len, "untested: %s", c->why ? c->why : "?");
	else if (c->out_of_reach)
		snprintf(buf, len, "cannot tell: too few samples, %s", fmt_p(p, sizeof(p), c->p_adj));
	else if (c->verdict == DV_SAME && c->why_not == DWN_FLOOR)
		snprintf(buf, len, "not significant: %+.0f%% is under the %.0f%% floor, %s",
			 100 * c->change, 100 * c->floor, fmt_p(p, sizeof(p), c->p_adj));
	else if (c->verdict == DV_SAME && c->why_not == DWN_DIRECTION)
		snprintf(buf, len, "not significant: the whole runs moved the other way, %s",
			 fmt_p(p, sizeof(p), c->p_adj));
	else if (c->verdict == DV_SAME)
		snprintf(buf, len, "not significant, %s", fmt_p(p, sizeof(p), c->p_adj));
	else
		snprintf(buf, len, "%s, significant, %s", diff_verdict_name(c->verdict),
			 fmt_p(p, sizeof(p), c->p_adj));
}

void diff_summary_line(char *buf, size_t len, const struct diff_subject *s, enum diff_metric m)
{
	const struct diff_cmp *c = &s->m[m];
	char va[32], vb[32], ch[24], p[24], name[2 * ILOCK_PATH_MAX + 96], kh[32], cn[48];
	const char *what = m == DM_HOLD_P99 ? "exclusive hold p99"
			   : m == DM_WAIT_PER_S ? "wait" : metric_labels[m];
	/* a hold's metric says "hold" itself */
	const char *kind = s->kind == DK_HOLD ? "" : kind_heading(s->kind, kh, sizeof(kh));

	if (s->is_inode)
		snprintf(name, sizeof(name), "%s %s %s", s->label,
			 subject_class_name(s, cn, sizeof(cn)), kind);
	else if (s->kind == DK_ROLE)
		snprintf(name, sizeof(name), "%s %s", class_name(s->class), s->label);
	else
		snprintf(name, sizeof(name), "%s %s", s->label, kind);
	/* "i_rwsem  exclusive hold p99" -> one space */
	for (char *q; (q = strstr(name, "  "));)
		memmove(q, q + 1, strlen(q));
	if (name[0] && name[strlen(name) - 1] == ' ')
		name[strlen(name) - 1] = 0;
	fmt_val(va, sizeof(va), m, c->before, c->has_before);
	fmt_val(vb, sizeof(vb), m, c->after, c->has_after);
	fmt_change(ch, sizeof(ch), c);
	if (!c->tested)
		snprintf(buf, len, "%s %s: %s -> %s (%s, untested: %s)", name, what, va, vb, ch,
			 c->why ? c->why : "?");
	else
		snprintf(buf, len, "%s %s: %s -> %s (%s, %s, %s)", name, what, va, vb, ch,
			 c->verdict == DV_SAME ? "not significant" : "significant",
			 fmt_p(p, sizeof(p), c->p_adj));
}

/* " matching the filters (FILTERS)" when some are given, else "" */
static const char *filtered(const struct diff_result *d, char *buf, size_t len)
{
	char t[200];

	buf[0] = 0;
	if (d->o.f) {
		cli_filters_text(d->o.f, t, sizeof(t));
		if (strcmp(t, "none"))
			snprintf(buf, len, " matching the filters (%s)", t);
	}
	return buf;
}

static void side_line(FILE *f, const char *tag, const char *name, const struct recording *r)
{
	char t[32];
	const char *host = rec_meta(r, "hostname"), *k = rec_meta(r, "kernel");

	fprintf(f, "%s %s: %zu interval%s of %g s (%.1f s) from %s on %s (%s)%s\n", tag, name, r->niv,
		plural(r->niv), (double)r->interval_ns / 1e9, (double)rec_dur_ns(r) / 1e9,
		report_fmt_time(t, sizeof(t), r->start_realtime_ns), host ? host : "?", k ? k : "?",
		r->status != REC_OK ? " [damaged: read up to the damage]" : "");
}

static void subject_table(FILE *f, const struct diff_subject *s)
{
	for (int m = 0; m < DM_COUNT; m++) {
		const struct diff_cmp *c = &s->m[m];
		char va[32], vb[32], ch[24], v[64];

		if (!c->present)
			continue;
		verdict_text(v, sizeof(v), c);
		fprintf(f, "    %-20s %12s %12s %8s   %3zu/%-3zu  %s\n", metric_labels[m],
			fmt_val(va, sizeof(va), m, c->before, c->has_before),
			fmt_val(vb, sizeof(vb), m, c->after, c->has_after),
			fmt_change(ch, sizeof(ch), c), c->na, c->nb, v);
	}
}

/* "2 -> 8 before", or "none before" where the role is absent */
static const char *role_threads_text(char *buf, size_t len, const char *side, const uint32_t t[2])
{
	if (!t[0] && !t[1])
		snprintf(buf, len, "none %s", side);
	else
		snprintf(buf, len, "%u -> %u %s", t[0], t[1], side);
	return buf;
}

/* SUMMARY leaves out inode and role changes under this share of its largest class wait. */
#define SUMMARY_FLOOR 0.01

void diff_render_text(FILE *f, const struct diff_result *d, const char *name_a, const char *name_b,
		      const struct recording *a, const struct recording *b)
{
	char line[2 * ILOCK_PATH_MAX + 256], kh[32], cn[48], ta[48], tb[48], fl[256], tests[48];
	bool any_class = false, any_inode = false, any_role = false;
	size_t nsum = 0, small = 0;
	double scale = 0;  /* the largest class wait a second, either side */

	fprintf(f, "ilock diff\n");
	side_line(f, "before", name_a, a);
	side_line(f, "after ", name_b, b);
	if (d->ntests)
		snprintf(tests, sizeof(tests), "Holm-adjusted over %zu test%s", d->ntests,
			 d->ntests == 1 ? "" : "s");
	else
		snprintf(tests, sizeof(tests), "no test here (verdict below)");
	fprintf(f, "method: Mann-Whitney U over per-interval values, %s; "
		   "significant when p < %g and the change is at least %.0f%% (rates) or %.0f%% "
		   "(latencies) (docs/diff-method.md)\n", tests, d->o.alpha, d->o.min_change * 100,
		d->o.min_change_latency * 100);
	if (d->o.window)
		fprintf(f, "window: %s, in each recording (seconds from its own start, a clock "
			   "time the same moment in both; the intervals whose middle is in it)\n",
			d->o.window);
	if (d->nprobes) {
		fprintf(f, "note: captured differently:");
		for (size_t i = 0; i < d->nprobes; i++)
			fprintf(f, "%s %s %s -> %s", i ? "," : "", d->probes[i].probe,
				d->probes[i].before, d->probes[i].after);
		fprintf(f, "; what those probes give does not compare\n");
	}
	if (d->filters_differ)
		fprintf(f, "note: recorded with different filters: %s -> %s; each saw other "
			   "waits, so a change may be the filters' (record both alike)\n",
			d->filters_before[0] ? d->filters_before : "none",
			d->filters_after[0] ? d->filters_after : "none");
	if (d->unlike_intervals)
		fprintf(f, "note: %s: a longer interval holds more waits, so its p99 and max sit "
			   "higher; those are not tested (record both with the same -i)\n",
			d->unlike_why);

	fprintf(f, "\nBY LOCK CLASS AND MODE%*s %12s %12s %8s   %-7s  %s\n", 1, "", "BEFORE", "AFTER",
		"CHANGE", "SAMPLES", "VERDICT");
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_subject *s = &d->s[i];

		if (s->is_inode || s->kind == DK_ROLE)
			continue;
		any_class = true;
		fprintf(f, "  %s %s\n", s->label, kind_heading(s->kind, kh, sizeof(kh)));
		subject_table(f, s);
	}
	if (!any_class)
		fprintf(f, "  (no inode lock waits in either recording%s)\n",
			filtered(d, fl, sizeof(fl)));

	fprintf(f, "\nBY INODE (matched by path, else dev:ino; top %d by wait time)\n", d->o.top_n);
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_subject *s = &d->s[i];

		if (!s->is_inode)
			continue;
		any_inode = true;
		fprintf(f, "  %s  %s %s  [%s", s->label, subject_class_name(s, cn, sizeof(cn)),
			kind_heading(s->kind, kh, sizeof(kh)), diff_match_name(s->match));
		if (s->ident_a[0] && s->ident_b[0] && strcmp(s->ident_a, s->ident_b))
			fprintf(f, "; %s -> %s", s->ident_a, s->ident_b);
		else
			fprintf(f, "; %s", s->ident_a[0] ? s->ident_a : s->ident_b);
		fprintf(f, "]\n");
		subject_table(f, s);
	}
	if (!any_inode)
		fprintf(f, "  (none)\n");

	fprintf(f, "\nBY COMMAND (holder -> waiter, the threads of a command summed; top %d by wait "
		   "time)\n", d->o.top_n);
	if (d->roles_without_ops)
		fprintf(f, "  (ops not compared: a recording was made with --ops off)\n");
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_subject *s = &d->s[i];

		if (s->kind != DK_ROLE)
			continue;
		any_role = true;
		fprintf(f, "  %s  %s  (threads %s, %s)\n", class_name(s->class), s->label,
			role_threads_text(ta, sizeof(ta), "before", s->threads[0]),
			role_threads_text(tb, sizeof(tb), "after", s->threads[1]));
		subject_table(f, s);
	}
	if (!any_role)
		fprintf(f, "  (no holder-to-waiter pairs in either recording)\n");

	fprintf(f, "\nSUMMARY\n");
	/* the headline: wait time per class and mode, then holds that changed */
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_subject *s = &d->s[i];

		if (s->is_inode || s->kind == DK_ROLE)
			continue;
		if (s->kind != DK_HOLD && !is_range_kind(s->kind)) {
			const struct diff_cmp *w = &s->m[DM_WAIT_PER_S];

			scale = fmax(scale, fmax(w->before, w->after));
		}
		if (s->kind != DK_HOLD) {
			diff_summary_line(line, sizeof(line), s, DM_WAIT_PER_S);
			fprintf(f, "  %s\n", line);
			nsum++;
		} else if (s->m[DM_HOLD_P99].verdict == DV_HIGHER || s->m[DM_HOLD_P99].verdict == DV_LOWER) {
			diff_summary_line(line, sizeof(line), s, DM_HOLD_P99);
			fprintf(f, "  %s\n", line);
			nsum++;
		}
	}
	/* where and who: the inodes, then the roles, whose wait time changed significantly */
	for (int roles = 0; roles < 2; roles++)
		for (size_t i = 0, shown = 0; i < d->n && shown < 5; i++) {
			const struct diff_subject *s = &d->s[i];
			const struct diff_cmp *w = &s->m[DM_WAIT_PER_S];

			if ((roles ? s->kind != DK_ROLE : !s->is_inode) || s->kind == DK_HOLD ||
			    (w->verdict != DV_HIGHER && w->verdict != DV_LOWER))
				continue;
			/*
			 * Beside the headline's seconds a second, a change of under
			 * 1% of its largest wait is detail (a role new at 34 us/s is
			 * significant, and nothing): it stays in its table above.
			 */
			if (fabs(w->after - w->before) < SUMMARY_FLOOR * scale) {
				small++;
				continue;
			}
			diff_summary_line(line, sizeof(line), s, DM_WAIT_PER_S);
			fprintf(f, "  %s\n", line);
			shown++;
		}
	if (small)
		fprintf(f, "  (and %zu significant change%s of inodes or roles under 1%% of the largest "
			   "wait above: in their tables)\n", small, small == 1 ? "" : "s");
	if (!nsum)
		fprintf(f, "  (no inode lock waits or holds in either recording%s)\n",
			filtered(d, fl, sizeof(fl)));
	if (d->nsig)
		fprintf(f, "verdict: significant change in %zu of %zu comparisons (%zu lower, %zu higher)\n",
			d->nsig, d->ntests, d->nlower, d->nhigher);
	else if (!d->n)
		fprintf(f, "verdict: cannot tell: nothing to compare (no inode lock wait or hold in "
			   "either recording%s)\n", filtered(d, fl, sizeof(fl)));
	else if (!d->ntests)
		fprintf(f, "verdict: cannot tell: too few intervals to test (need about %zu per "
			   "recording: record longer, or with a shorter -i)\n", d->intervals_needed);
	else if (d->unreachable)
		fprintf(f, "verdict: cannot tell: with %zu and %zu intervals no change could be "
			   "significant over %zu tests (need about %zu per recording: record longer, "
			   "or with a shorter -i)\n",
			d->niv_a, d->niv_b, d->ntests, d->intervals_needed);
	else if (d->nout_of_reach)
		fprintf(f, "verdict: no significant change (%zu comparisons; %zu more had too few "
			   "samples to tell: record longer, or with a shorter -i)\n",
			d->ntests - d->nout_of_reach, d->nout_of_reach);
	else
		fprintf(f, "verdict: no significant change (%zu comparisons)\n", d->ntests);
}

static void json_side(struct json *j, const char *key, const char *name, const struct recording *r)
{
	char t[32];

	json_obj_begin(j, key);
	json_str(j, "file", name);
	json_u64(j, "intervals", r->niv);
	json_double(j, "interval_s", (double)r->interval_ns / 1e9);
	json_double(j, "duration_s", (double)rec_dur_ns(r) / 1e9);
	json_str(j, "start_time", report_fmt_time(t, sizeof(t), r->start_realtime_ns));
	json_str(j, "hostname", rec_meta(r, "hostname"));
	json_str(j, "kernel", rec_meta(r, "kernel"));
	json_bool(j, "complete", r->status == REC_OK && r->has_end);
	json_obj_end(j);
}

static void json_double_or_null(struct json *j, const char *key, double v, bool has)
{
	if (!has || !isfinite(v))
		json_null(j, key);
	else
		json_double(j, key, v);
}

/*
 * A side of a role; op null when the roles were compared without ops;
 * role: its process title's (diff_names), NULL: by comm.
 */
static void role_side_json(struct json *j, const char *key, const char *comm, const char *role,
			   uint8_t mode, uint8_t op, uint8_t flags, bool ops)
{
	char c[ILOCK_COMM_LEN + 1];

	str_copy(c, sizeof(c), comm, ILOCK_COMM_LEN);
	json_obj_begin(j, key);
	json_str(j, "comm", c);
	json_str(j, "role", role);
	json_str(j, "mode", mode_name(mode));
	json_str(j, "op", ops ? op_name(op) : NULL);
	json_arr_begin(j, "op_flags");
	for (unsigned b = 0; ops && op_flag_name(b); b++)
		if (flags & (1U << b))
			json_str(j, NULL, op_flag_name(b));
	json_arr_end(j);
	json_obj_end(j);
}

static void json_subject(struct json *j, const struct diff_subject *s, bool ops,
			 const struct diff_names *nm)
{
	json_obj_begin(j, NULL);
	json_str(j, "class", class_name(s->class));
	json_str(j, "kind", diff_kind_name(s->kind));
	if (s->kind == DK_ROLE) {
		json_str(j, "label", s->label);
		json_obj_begin(j, "threads");
		for (int side = 0; side < 2; side++) {
			json_obj_begin(j, side ? "after" : "before");
			json_u64(j, "holders", s->threads[side][0]);
			json_u64(j, "waiters", s->threads[side][1]);
			json_obj_end(j);
		}
		json_obj_end(j);
		role_side_json(j, "holder", s->role.holder_comm,
			       diff_role_name(nm, s->role.holder_pid), s->role.holder_mode,
			       s->role.holder_op, s->role.holder_op_flags, ops);
		role_side_json(j, "waiter", s->role.waiter_comm,
			       diff_role_name(nm, s->role.waiter_pid), s->role.waiter_mode,
			       s->role.waiter_op, s->role.waiter_op_flags, ops);
	}
	if (s->is_inode) {
		json_str(j, "label", s->label);
		json_str(j, "class_fs_name", class_display_name(s->class, s->magic));
		json_str(j, "matched_by", diff_match_name(s->match));
		json_str(j, "before", s->ident_a[0] ? s->ident_a : NULL);
		json_str(j, "after", s->ident_b[0] ? s->ident_b : NULL);
	}
	json_obj_begin(j, "metrics");
	for (int m = 0; m < DM_COUNT; m++) {
		const struct diff_cmp *c = &s->m[m];

		if (!c->present)
			continue;
		json_obj_begin(j, diff_metric_name(m));
		json_double_or_null(j, "before", c->before, c->has_before);
		json_double_or_null(j, "after", c->after, c->has_after);
		json_double_or_null(j, "change", c->change, c->has_before && c->has_after);
		json_u64(j, "samples_before", c->na);
		json_u64(j, "samples_after", c->nb);
		json_bool(j, "tested", c->tested);
		json_double_or_null(j, "p", c->p, c->tested);
		json_double_or_null(j, "p_adjusted", c->p_adj, c->tested);
		json_str(j, "verdict", !c->tested ? "untested"
				       : c->out_of_reach ? "cannot_tell"
				       : c->verdict == DV_SAME ? "not_significant"
							       : diff_verdict_name(c->verdict));
		json_str(j, "why_untested", c->tested ? NULL : c->why);
		json_str(j, "why_not_significant", c->why_not == DWN_FLOOR ? "under_floor"
						   : c->why_not == DWN_DIRECTION ? "direction" : NULL);
		json_obj_end(j);
	}
	json_obj_end(j);
	json_obj_end(j);
}

void diff_render_json(FILE *f, const struct diff_result *d, const char *name_a, const char *name_b,
		      const struct recording *a, const struct recording *b)
{
	char line[2 * ILOCK_PATH_MAX + 256];
	bool ops = !d->roles_without_ops;
	struct json j;

	json_init(&j, f);
	json_obj_begin(&j, NULL);
	json_u64(&j, "version", 1);
	json_str(&j, "tool_version", ILOCK_VERSION_STR);
	json_side(&j, "before", name_a, a);
	json_side(&j, "after", name_b, b);
	json_str(&j, "window", d->o.window);
	json_obj_begin(&j, "method");
	json_str(&j, "test", "mann-whitney-u");
	json_str(&j, "approximation", "exact up to 40 intervals in all (ties by midranks); else "
				      "normal, tie-corrected variance, continuity correction 0.5");
	json_str(&j, "adjustment", "holm");
	json_double(&j, "alpha", d->o.alpha);
	json_double(&j, "min_change", d->o.min_change);
	json_double(&j, "min_change_latency", d->o.min_change_latency);
	json_u64(&j, "min_samples", d->o.min_samples);
	json_u64(&j, "tests", d->ntests);
	json_obj_end(&j);
	/* probes recorded with different modes: "-" where a side has no record */
	json_arr_begin(&j, "probe_changes");
	for (size_t i = 0; i < d->nprobes; i++) {
		json_obj_begin(&j, NULL);
		json_str(&j, "probe", d->probes[i].probe);
		json_str(&j, "before", d->probes[i].before);
		json_str(&j, "after", d->probes[i].after);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	/* the filters of each side as `ilock record` took them, or null when the same */
	if (d->filters_differ) {
		json_obj_begin(&j, "filter_change");
		json_str(&j, "before", d->filters_before);
		json_str(&j, "after", d->filters_after);
		json_obj_end(&j);
	} else {
		json_null(&j, "filter_change");
	}
	json_bool(&j, "intervals_differ", d->unlike_intervals);
	json_arr_begin(&j, "classes");
	for (size_t i = 0; i < d->n; i++)
		if (!d->s[i].is_inode && d->s[i].kind != DK_ROLE)
			json_subject(&j, &d->s[i], ops, &d->names);
	json_arr_end(&j);
	json_arr_begin(&j, "inodes");
	for (size_t i = 0; i < d->n; i++)
		if (d->s[i].is_inode)
			json_subject(&j, &d->s[i], ops, &d->names);
	json_arr_end(&j);
	json_bool(&j, "roles_by_op", ops);
	json_arr_begin(&j, "roles");
	for (size_t i = 0; i < d->n; i++)
		if (d->s[i].kind == DK_ROLE)
			json_subject(&j, &d->s[i], ops, &d->names);
	json_arr_end(&j);
	json_obj_begin(&j, "summary");
	json_bool(&j, "significant", d->nsig > 0);
	json_u64(&j, "significant_tests", d->nsig);
	json_u64(&j, "lower", d->nlower);
	json_u64(&j, "higher", d->nhigher);
	json_arr_begin(&j, "lines");
	for (size_t i = 0; i < d->n; i++) {
		if (d->s[i].is_inode || d->s[i].kind == DK_HOLD || d->s[i].kind == DK_ROLE)
			continue;
		diff_summary_line(line, sizeof(line), &d->s[i], DM_WAIT_PER_S);
		json_str(&j, NULL, line);
	}
	json_arr_end(&j);
	json_str(&j, "verdict", d->nsig ? "significant change"
				: d->ntests && !d->unreachable ? "no significant change"
				: !d->n ? "nothing to compare" : "too few intervals");
	json_u64(&j, "tests_out_of_reach", d->nout_of_reach);
	/* 0 unless more intervals would be needed (unreachable) */
	json_u64(&j, "intervals_needed", !d->n ? 0 : d->intervals_needed);
	json_obj_end(&j);
	json_obj_end(&j);
}
