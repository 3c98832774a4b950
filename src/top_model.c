// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "titles.h"
#include "top_model.h"
#include "util.h"

double top_view_tasks_waiting(const struct top_view *v)
{
	double t = 0;

	for (size_t i = 0; i < v->nrows; i++)
		if (v->rows[i].class != ILOCK_CLASS_JBD2_WAIT)
			t += v->rows[i].wait_sps;
	return t;
}

double top_rate(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0.0;
}

void top_view_init(struct top_view *v)
{
	memset(v, 0, sizeof(*v));
}

void top_view_free(struct top_view *v)
{
	free(v->rows);
	free(v->row_of_lock);
	free(v->edge_next);
	free(v->scratch);
	top_view_init(v);
}

void top_inode_label(char *buf, size_t len, struct inode_view *v, const struct snapshot *meta,
		     const struct mount_table *mt, uint32_t dev, uint64_t ino, uint32_t gen,
		     bool has_hold)
{
	describe_inode(meta, mt, dev, ino, gen, has_hold, v);
	inode_label(buf, len, v, dev, ino);
}

/* Thread pid's comm or process title has text in it. */
static bool task_has(const struct top_filter *f, uint32_t pid, const char *comm)
{
	char c[ILOCK_COMM_LEN + 1];
	const char *title;

	str_copy(c, sizeof(c), comm, ILOCK_COMM_LEN);
	if (strstr(c, f->text))
		return true;
	title = f->titles ? titles_get(f->titles, pid, comm) : NULL;
	return title && strstr(title, f->text);
}

static int grow_rows(struct top_view *v, size_t need)
{
	void *p;

	if (need > v->cap) {
		size_t cap = v->cap ? v->cap : 256;

		while (cap < need)
			cap *= 2;
		p = realloc(v->rows, cap * sizeof(*v->rows));
		if (!p)
			return -ENOMEM;
		v->rows = p;
		v->cap = cap;
	}
	if (need > v->row_of_cap) {
		p = realloc(v->row_of_lock, need * sizeof(*v->row_of_lock));
		if (!p)
			return -ENOMEM;
		v->row_of_lock = p;
		v->row_of_cap = need;
	}
	return 0;
}

static void fill_row(struct top_row *r, const struct lock_row *l, const struct snapshot *meta,
		     double secs)
{
	const struct inode_meta *m = snap_find_inode(meta, l->dev, l->ino, l->gen);

	memset(r, 0, sizeof(*r));
	r->dev = l->dev;
	r->gen = l->gen;
	r->ino = l->ino;
	r->class = l->class;
	r->has_hold = l->has_hold;
	/* holds come only from the XFS tracepoints */
	r->magic = m && m->magic ? m->magic : l->has_hold ? ILOCK_XFS_SB_MAGIC : 0;
	r->lock = l;
	for (int mode = 0; mode < 2; mode++) {
		r->waits[mode] = l->wait[mode].count;
		r->rate[mode] = top_rate(l->wait[mode].count, secs);
	}
	r->wait_ns = l->wait[0].total_ns + l->wait[1].total_ns;
	r->max_ns = row_max_ns(l);
	r->max_bound = row_max_bound(l);
	/* a wait longer than the window began before it: the window's share only */
	r->wait_sps = secs > 0 ? (double)row_wait_in_window(l, u64_of(secs * 1e9)) / 1e9 / secs
			       : 0.0;
}

static void row_p99(struct top_row *r)
{
	const struct ilock_stats *w = r->lock->wait;
	struct ilock_stats both;

	if (r->p99_known)
		return;
	/* one mode only is the common case: no need to merge histograms */
	if (!w[ILOCK_MODE_EXCL].count) {
		r->p99_ns = stats_percentile(&w[ILOCK_MODE_SHARED], 0.99);
	} else if (!w[ILOCK_MODE_SHARED].count) {
		r->p99_ns = stats_percentile(&w[ILOCK_MODE_EXCL], 0.99);
	} else {
		both = w[ILOCK_MODE_SHARED];
		stats_merge(&both, &w[ILOCK_MODE_EXCL]);
		r->p99_ns = stats_percentile(&both, 0.99);
	}
	r->p99_known = true;
}

int top_view_build(struct top_view *v, const struct snapshot *win, const struct snapshot *edges,
		   const struct snapshot *meta, const struct mount_table *mt, double secs,
		   bool cumulative, const struct top_filter *f)
{
	bool filtering = f && f->text[0];
	size_t n = 0;

	v->nrows = 0;
	v->total = 0;
	v->sorted = 0;
	v->secs = secs;
	v->cumulative = cumulative;
	if (grow_rows(v, win->nlocks ? win->nlocks : 1))
		return -ENOMEM;
	if (edges->nedges > v->edge_next_cap) {
		uint32_t *p = realloc(v->edge_next, edges->nedges * sizeof(*p));

		if (!p)
			return -ENOMEM;
		v->edge_next = p;
		v->edge_next_cap = edges->nedges;
	}
	v->edge_rows = edges->edges;
	for (size_t i = 0; i < win->nlocks; i++) {
		const struct lock_row *l = &win->locks[i];

		v->row_of_lock[i] = -1;
		if (!row_waits(l))
			continue;
		fill_row(&v->rows[n], l, meta, secs);
		v->row_of_lock[i] = (int32_t)n++;
	}
	v->total = n;

	/* one pass over the edges: each lock's costliest holder, comm hits */
	for (size_t i = 0; i < edges->nedges; i++) {
		const struct edge_row *e = &edges->edges[i];
		const struct lock_row *l = snap_find_lock(win, e->k.dev, e->k.ino, e->k.gen,
							  e->k.class);
		struct top_row *r;
		int32_t ri;

		if (!l)
			continue;
		ri = v->row_of_lock[l - win->locks];
		if (ri < 0)
			continue;
		r = &v->rows[ri];
		/*
		 * As stat and report sum them: not on the ILOCK, a journal
		 * wait or names in a directory, whose BPF range class may still
		 * say disjoint from the two syscalls' byte ranges.
		 */
		edge_add_ranges(e, r->range);
		/* each row's pairs chained: top_view_prepare sums the shown rows' by holder */
		v->edge_next[i] = r->first_edge;
		r->first_edge = (uint32_t)(i + 1);
		if (filtering && !r->comm_hit &&
		    (task_has(f, e->k.waiter_pid, e->k.waiter_comm) ||
		     (e->k.holder_mode != ILOCK_MODE_UNKNOWN &&
		      task_has(f, e->k.holder_pid, e->k.holder_comm))))
			r->comm_hit = true;
	}

	if (filtering) {
		size_t kept = 0;

		for (size_t i = 0; i < n; i++) {
			struct top_row *r = &v->rows[i];
			char label[2 * ILOCK_PATH_MAX + 64];
			struct inode_view iv;

			if (!r->comm_hit) {
				top_inode_label(label, sizeof(label), &iv, meta, mt, r->dev, r->ino,
						r->gen, r->has_hold);
				if (!strstr(label, f->text))
					continue;
			}
			v->rows[kept++] = *r;
		}
		n = kept;
	}
	v->nrows = n;
	/* the rows come in map order; callers sort */
	return 0;
}

uint64_t top_sort_value(const struct top_row *r, enum sort_key key)
{
	switch (key) {
	case SORT_WAITS: return r->waits[0] + r->waits[1];
	case SORT_MAX: return r->max_ns;
	case SORT_P99: return r->p99_known ? r->p99_ns : 0;
	case SORT_SHARED: return r->waits[ILOCK_MODE_SHARED];
	case SORT_EXCL: return r->waits[ILOCK_MODE_EXCL];
	case SORT_WAIT_TIME:
	default: return r->wait_ns;
	}
}

static int cmp_desc(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct top_row *a = pa, *b = pb;
	enum sort_key key = *(const enum sort_key *)arg;
	int c = cmp_desc(top_sort_value(a, key), top_sort_value(b, key));

	if (!c)
		c = cmp_desc(a->wait_ns, b->wait_ns);
	if (!c)
		c = a->dev < b->dev ? -1 : a->dev > b->dev;
	if (!c)
		c = a->ino < b->ino ? -1 : a->ino > b->ino;
	if (!c)
		c = (int)a->class - (int)b->class;
	return c;
}

static void swap_rows(struct top_row *a, struct top_row *b)
{
	struct top_row t = *a;

	*a = *b;
	*b = t;
}

/* Move the `want` first rows in sort order to the front, in any order. */
static void select_front(struct top_row *rows, size_t n, size_t want, enum sort_key *key)
{
	size_t lo = 0, hi = n;  /* the boundary lies in [lo, hi) */

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2, store = lo;

		/* median of three as the pivot, parked at hi - 1 */
		if (cmp_rows(&rows[mid], &rows[lo], key) < 0)
			swap_rows(&rows[mid], &rows[lo]);
		if (cmp_rows(&rows[hi - 1], &rows[lo], key) < 0)
			swap_rows(&rows[hi - 1], &rows[lo]);
		if (cmp_rows(&rows[mid], &rows[hi - 1], key) < 0)
			swap_rows(&rows[mid], &rows[hi - 1]);
		for (size_t i = lo; i < hi - 1; i++)
			if (cmp_rows(&rows[i], &rows[hi - 1], key) < 0)
				swap_rows(&rows[i], &rows[store++]);
		swap_rows(&rows[store], &rows[hi - 1]);
		/* rows[store] is in its final place */
		if (store == want || store + 1 == want)
			return;
		if (store > want)
			hi = store;
		else
			lo = store + 1;
	}
}

void top_view_sort(struct top_view *v, enum sort_key key, size_t want)
{
	v->sort = key;
	if (key == SORT_P99)
		for (size_t i = 0; i < v->nrows; i++)
			row_p99(&v->rows[i]);
	if (!want || want >= v->nrows / 2) {
		qsort_r(v->rows, v->nrows, sizeof(*v->rows), cmp_rows, &key);
		v->sorted = v->nrows;
		return;
	}
	select_front(v->rows, v->nrows, want, &key);
	qsort_r(v->rows, want, sizeof(*v->rows), cmp_rows, &key);
	v->sorted = want;
}

/*
 * The row's top holder, as ilock stat finds it (top_holder_of): each
 * holder's pairs summed, a named thread before unnamed ones. For the rows
 * shown only: the pairs of 10,000 locks need no grouping for a screenful.
 */
static void row_holder(struct top_view *v, struct top_row *r)
{
	size_t n = 0;

	if (r->holder_known)
		return;
	for (uint32_t i = r->first_edge; i; i = v->edge_next[i - 1]) {
		if (!grow_array((void **)&v->scratch, &v->scratch_cap, n, sizeof(*v->scratch)))
			return;  /* no holder shown this frame; the next one tries again */
		v->scratch[n++] = &v->edge_rows[i - 1];
	}
	r->holder = top_holder_of(v->scratch, n);
	r->holder_known = true;
}

void top_view_prepare(struct top_view *v, size_t upto)
{
	if (upto > v->nrows)
		upto = v->nrows;
	if (upto > v->sorted)
		top_view_sort(v, v->sort, upto * 2);
	for (size_t i = 0; i < upto; i++) {
		row_p99(&v->rows[i]);
		row_holder(v, &v->rows[i]);
	}
}

long top_view_find(const struct top_view *v, uint32_t dev, uint64_t ino, uint32_t gen,
		   uint8_t class)
{
	for (size_t i = 0; i < v->nrows; i++) {
		const struct top_row *r = &v->rows[i];

		if (r->dev == dev && r->ino == ino && r->gen == gen && r->class == class)
			return (long)i;
	}
	return -1;
}

uint64_t top_next_deadline(uint64_t last, uint64_t interval_ns, uint64_t now)
{
	if (!interval_ns)
		return now;
	if (last > now)
		return last;
	/* a jump, not a loop: after a long stop (SIGSTOP, suspend) too */
	return last + ((now - last) / interval_ns + 1) * interval_ns;
}

enum sort_key top_sort_next(enum sort_key k, int dir)
{
	int n = SORT_KEY_MAX;

	return (enum sort_key)((((int)k + (dir < 0 ? -1 : 1)) % n + n) % n);
}

/* ---- the cumulative view across fresh tables (--renew) ---- */

struct retire_rank {
	uint32_t dev, gen;
	uint64_t ino;
	uint64_t wait_ns;
};

static int cmp_rank_key(const void *pa, const void *pb)
{
	const struct retire_rank *a = pa, *b = pb;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return a->gen < b->gen ? -1 : a->gen > b->gen;
}

static int cmp_rank_wait(const void *pa, const void *pb)
{
	const struct retire_rank *a = pa, *b = pb;

	if (a->wait_ns != b->wait_ns)
		return a->wait_ns > b->wait_ns ? -1 : 1;
	return cmp_rank_key(a, b);
}

static bool kept(const struct retire_rank *rk, size_t n, uint32_t dev, uint64_t ino, uint32_t gen)
{
	struct retire_rank key = { .dev = dev, .ino = ino, .gen = gen };

	return n && bsearch(&key, rk, n, sizeof(*rk), cmp_rank_key);
}

int top_retire(struct snapshot *dst, const struct snapshot *src, size_t keep)
{
	struct retire_rank *rk = NULL;
	size_t n = 0, j = 0;
	int err = -ENOMEM;

	snap_reset(dst);
	dst->mono_ns = src->mono_ns;
	rk = malloc((src->nlocks ? src->nlocks : 1) * sizeof(*rk));
	if (!rk)
		return -ENOMEM;
	/* the inodes by wait time, their classes summed */
	for (size_t i = 0; i < src->nlocks; i++) {
		const struct lock_row *r = &src->locks[i];

		if (r->ino != ILOCK_INO_FOLDED)
			rk[n++] = (struct retire_rank){ .dev = r->dev, .gen = r->gen, .ino = r->ino,
							.wait_ns = row_wait_ns(r) };
	}
	if (n)
		qsort(rk, n, sizeof(*rk), cmp_rank_key);
	for (size_t i = 0; i < n; i++) {
		if (j && !cmp_rank_key(&rk[j - 1], &rk[i]))
			rk[j - 1].wait_ns += rk[i].wait_ns;
		else
			rk[j++] = rk[i];
	}
	if (j)
		qsort(rk, j, sizeof(*rk), cmp_rank_wait);
	n = j < keep ? j : keep;
	/* the kept ones, by key, to be found again */
	if (n)
		qsort(rk, n, sizeof(*rk), cmp_rank_key);
	for (size_t i = 0; i < src->nlocks; i++) {
		const struct lock_row *r = &src->locks[i];
		bool own = r->ino != ILOCK_INO_FOLDED && kept(rk, n, r->dev, r->ino, r->gen);
		struct lock_row *d = snap_lock(dst, r->dev, own ? r->ino : ILOCK_INO_FOLDED,
					       own ? r->gen : 0, r->class);

		if (!d)
			goto out;
		row_merge(d, r);
	}
	/* pairs by command: a host that starts threads all the time has no end of them */
	for (size_t i = 0; i < src->nedges; i++) {
		struct ilock_edge_key k = src->edges[i].k;

		if (k.ino == ILOCK_INO_FOLDED || !kept(rk, n, k.dev, k.ino, k.gen)) {
			k.ino = ILOCK_INO_FOLDED;
			k.gen = 0;
		}
		k.holder_pid = k.holder_tgid = k.waiter_pid = k.waiter_tgid = ILOCK_PID_FOLDED;
		if (snap_add_edge(dst, &k, &src->edges[i].s))
			goto out;
	}
	for (size_t i = 0; i < src->ninodes; i++)
		if (kept(rk, n, src->inodes[i].dev, src->inodes[i].ino, src->inodes[i].gen) &&
		    snap_add_inode(dst, &src->inodes[i]))
			goto out;
	err = 0;
out:
	free(rk);
	return err;
}
