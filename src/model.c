// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "counters.h"
#include "hist.h"
#include "model.h"
#include "util.h"

static void snap_ops_free(struct snapshot *s);
static void snap_ops_reset(struct snapshot *s);
static int snap_ops_delta(struct snapshot *out, const struct snapshot *cur,
			  const struct snapshot *prev);
static int snap_ops_merge(struct snapshot *dst, const struct snapshot *src);

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static uint64_t lock_hash(uint32_t dev, uint64_t ino, uint32_t gen, uint8_t class)
{
	return mix(ino * 31 + ((uint64_t)dev << 8) + class + ((uint64_t)gen << 32));
}

/* Word at a time: the key is a multiple of 8 bytes and fully initialised. */
static uint64_t edge_hash(const struct ilock_edge_key *k)
{
	uint64_t h = 1469598103934665603ULL, w;

	_Static_assert(sizeof(*k) % sizeof(w) == 0, "edge key is whole words");
	for (size_t i = 0; i < sizeof(*k); i += sizeof(w)) {
		memcpy(&w, (const char *)k + i, sizeof(w));
		h = mix(h ^ w);
	}
	return h;
}

static uint64_t lock_row_hash(const void *e)
{
	const struct lock_row *r = e;

	return lock_hash(r->dev, r->ino, r->gen, r->class);
}

static uint64_t edge_row_hash(const void *e)
{
	return edge_hash(&((const struct edge_row *)e)->k);
}

static uint64_t inode_hash(const void *e)
{
	const struct inode_meta *m = e;

	/* not by gen: every file that had one number is on one probe chain */
	return lock_hash(m->dev, m->ino, 0, 0xff);
}

/* Index slots hold array position + 1; 0 is empty. Capacity is a power of 2. */
static int idx_rebuild(uint32_t **idx, size_t *cap, size_t n, const void *arr, size_t esz,
		       uint64_t (*hash)(const void *))
{
	size_t want = 16;
	uint32_t *t;

	while (want < n * 2 + 2)
		want <<= 1;
	t = calloc(want, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t h = hash((const char *)arr + i * esz) & (want - 1);

		while (t[h])
			h = (h + 1) & (want - 1);
		t[h] = (uint32_t)(i + 1);
	}
	free(*idx);
	*idx = t;
	*cap = want;
	return 0;
}

static void *grow(void *arr, size_t *cap, size_t n, size_t esz)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return arr;
	ncap = *cap ? *cap * 2 : 64;
	p = realloc(arr, ncap * esz);
	if (!p)
		return NULL;
	*cap = ncap;
	return p;
}

void snap_init(struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
}

void snap_free(struct snapshot *s)
{
	free(s->locks);
	free(s->edges);
	free(s->inodes);
	free(s->lock_idx);
	free(s->edge_idx);
	free(s->inode_idx);
	waiting_free(&s->waiting);
	snap_ops_free(s);
	snap_init(s);
}

const char *table_name(int t)
{
	static const char *const names[TABLE_MAX] = {
		[TABLE_LOCKS] = "locks",
		[TABLE_PAIRS] = "pairs",
	};

	return t >= 0 && t < TABLE_MAX ? names[t] : "?";
}

int table_renew_due(const struct table_use *t, double renew_s, uint64_t now,
		    uint64_t not_before)
{
	if (renew_s <= 0 || now < not_before)
		return -1;
	return table_fullest(t, TABLE_ALARM_PCT);
}

int table_fullest(const struct table_use *t, unsigned pct)
{
	int best = -1;
	uint64_t best_fill = 0;

	for (int i = 0; i < TABLE_MAX; i++) {
		/* in parts per 10,000 of its capacity, so that 64 and 4M compare */
		uint64_t fill;

		if (!t[i].cap)
			continue;
		fill = (uint64_t)t[i].used * 10000 / t[i].cap;
		if (fill >= (uint64_t)pct * 100 && (best < 0 || fill > best_fill)) {
			best = i;
			best_fill = fill;
		}
	}
	return best;
}

void snap_reset(struct snapshot *s)
{
	s->nlocks = s->nedges = s->ninodes = 0;
	s->in_flight = 0;
	memset(s->tables, 0, sizeof(s->tables));
	waiting_reset(&s->waiting);
	s->mono_ns = 0;
	memset(s->counters, 0, sizeof(s->counters));
	if (s->lock_idx)
		memset(s->lock_idx, 0, s->lock_idx_cap * sizeof(*s->lock_idx));
	if (s->edge_idx)
		memset(s->edge_idx, 0, s->edge_idx_cap * sizeof(*s->edge_idx));
	if (s->inode_idx)
		memset(s->inode_idx, 0, s->inode_idx_cap * sizeof(*s->inode_idx));
	snap_ops_reset(s);
}

const struct lock_row *snap_find_lock(const struct snapshot *s, uint32_t dev, uint64_t ino,
				      uint32_t gen, uint8_t class)
{
	size_t h;

	if (!s->lock_idx_cap)
		return NULL;
	h = lock_hash(dev, ino, gen, class) & (s->lock_idx_cap - 1);
	while (s->lock_idx[h]) {
		const struct lock_row *r = &s->locks[s->lock_idx[h] - 1];

		if (r->dev == dev && r->ino == ino && r->gen == gen && r->class == class)
			return r;
		h = (h + 1) & (s->lock_idx_cap - 1);
	}
	return NULL;
}

struct lock_row *snap_lock(struct snapshot *s, uint32_t dev, uint64_t ino, uint32_t gen,
			   uint8_t class)
{
	struct lock_row *r = (struct lock_row *)snap_find_lock(s, dev, ino, gen, class), *arr;
	size_t h;

	if (r)
		return r;
	arr = grow(s->locks, &s->cap_locks, s->nlocks, sizeof(*arr));
	if (!arr)
		return NULL;
	s->locks = arr;
	if ((s->nlocks + 1) * 2 + 2 > s->lock_idx_cap &&
	    idx_rebuild(&s->lock_idx, &s->lock_idx_cap, s->nlocks, s->locks, sizeof(*s->locks),
			lock_row_hash))
		return NULL;
	r = &s->locks[s->nlocks];
	memset(r, 0, sizeof(*r));
	r->dev = dev;
	r->ino = ino;
	r->gen = gen;
	r->class = class;
	h = lock_hash(dev, ino, gen, class) & (s->lock_idx_cap - 1);
	while (s->lock_idx[h])
		h = (h + 1) & (s->lock_idx_cap - 1);
	s->lock_idx[h] = (uint32_t)++s->nlocks;
	return r;
}

static int add_stats(struct snapshot *s, const struct ilock_key *k, const struct ilock_stats *st,
		     bool hold)
{
	struct lock_row *r;

	if (k->mode > ILOCK_MODE_EXCL || k->class >= ILOCK_CLASS_MAX)
		return -EINVAL;
	r = snap_lock(s, k->dev, k->ino, k->gen, k->class);
	if (!r)
		return -ENOMEM;
	if (hold) {
		r->has_hold = true;
		stats_merge(&r->hold[k->mode], st);
	} else {
		stats_merge(&r->wait[k->mode], st);
	}
	return 0;
}

int snap_add_wait(struct snapshot *s, const struct ilock_key *k, const struct ilock_stats *st)
{
	return add_stats(s, k, st, false);
}

int snap_add_hold(struct snapshot *s, const struct ilock_key *k, const struct ilock_stats *st)
{
	return add_stats(s, k, st, true);
}

static struct edge_row *find_edge(const struct snapshot *s, const struct ilock_edge_key *k)
{
	size_t h;

	if (!s->edge_idx_cap)
		return NULL;
	h = edge_hash(k) & (s->edge_idx_cap - 1);
	while (s->edge_idx[h]) {
		struct edge_row *e = &s->edges[s->edge_idx[h] - 1];

		if (!memcmp(&e->k, k, sizeof(*k)))
			return e;
		h = (h + 1) & (s->edge_idx_cap - 1);
	}
	return NULL;
}

const struct edge_row *snap_find_edge(const struct snapshot *s, const struct ilock_edge_key *k)
{
	return find_edge(s, k);
}

int snap_add_edge(struct snapshot *s, const struct ilock_edge_key *k,
		  const struct ilock_edge_stats *st)
{
	struct edge_row *e = find_edge(s, k), *arr;
	size_t h;

	if (!e) {
		arr = grow(s->edges, &s->cap_edges, s->nedges, sizeof(*arr));
		if (!arr)
			return -ENOMEM;
		s->edges = arr;
		if ((s->nedges + 1) * 2 + 2 > s->edge_idx_cap &&
		    idx_rebuild(&s->edge_idx, &s->edge_idx_cap, s->nedges, s->edges,
				sizeof(*s->edges), edge_row_hash))
			return -ENOMEM;
		e = &s->edges[s->nedges];
		memset(e, 0, sizeof(*e));
		e->k = *k;
		h = edge_hash(k) & (s->edge_idx_cap - 1);
		while (s->edge_idx[h])
			h = (h + 1) & (s->edge_idx_cap - 1);
		s->edge_idx[h] = (uint32_t)++s->nedges;
	}
	e->s.count += st->count;
	e->s.total_ns += st->total_ns;
	if (st->max_ns > e->s.max_ns)
		e->s.max_ns = st->max_ns;
	return 0;
}

const struct inode_meta *snap_find_inode(const struct snapshot *s, uint32_t dev, uint64_t ino,
					 uint32_t gen)
{
	size_t h;

	if (!s->inode_idx_cap)
		return NULL;
	h = lock_hash(dev, ino, 0, 0xff) & (s->inode_idx_cap - 1);
	while (s->inode_idx[h]) {
		const struct inode_meta *m = &s->inodes[s->inode_idx[h] - 1];

		if (m->dev == dev && m->ino == ino && m->gen == gen)
			return m;
		h = (h + 1) & (s->inode_idx_cap - 1);
	}
	return NULL;
}

int snap_add_inode_info(struct snapshot *s, const struct ilock_inode_key *k,
			const struct ilock_inode_info *info)
{
	struct inode_meta m = { .ino = k->ino, .dev = k->dev, .gen = k->gen, .magic = info->magic,
				.flags = info->flags };
	unsigned off = info->path_off < ILOCK_PATH_MAX ? info->path_off : ILOCK_PATH_MAX - 1;

	str_copy(m.path, sizeof(m.path), info->path + off, ILOCK_PATH_MAX - off);
	return snap_add_inode(s, &m);
}

int snap_add_inode(struct snapshot *s, const struct inode_meta *m)
{
	struct inode_meta *old = (struct inode_meta *)snap_find_inode(s, m->dev, m->ino, m->gen);
	struct inode_meta *arr;
	size_t h;

	if (old) {
		/* keep the better of the two: a resolved path wins */
		if (!old->path[0] && m->path[0]) {
			uint16_t reused = old->flags & INODE_META_NUMBER_REUSED;

			*old = *m;
			old->flags |= reused;
		}
		return 0;
	}
	arr = grow(s->inodes, &s->cap_inodes, s->ninodes, sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	s->inodes = arr;
	if ((s->ninodes + 1) * 2 + 2 > s->inode_idx_cap &&
	    idx_rebuild(&s->inode_idx, &s->inode_idx_cap, s->ninodes, s->inodes,
			sizeof(*s->inodes), inode_hash))
		return -ENOMEM;
	s->inodes[s->ninodes] = *m;
	h = inode_hash(m) & (s->inode_idx_cap - 1);
	while (s->inode_idx[h]) {
		/* the other files of this number, if any, are on the way */
		struct inode_meta *o = &s->inodes[s->inode_idx[h] - 1];

		if (o->dev == m->dev && o->ino == m->ino) {
			o->flags |= INODE_META_NUMBER_REUSED;
			s->inodes[s->ninodes].flags |= INODE_META_NUMBER_REUSED;
		}
		h = (h + 1) & (s->inode_idx_cap - 1);
	}
	s->inode_idx[h] = (uint32_t)++s->ninodes;
	return 0;
}

static bool stats_empty(const struct ilock_stats *st)
{
	return st->count == 0;
}

int snap_delta(struct snapshot *out, const struct snapshot *cur, const struct snapshot *prev)
{
	snap_reset(out);
	out->mono_ns = cur->mono_ns;
	out->in_flight = cur->in_flight;
	memcpy(out->tables, cur->tables, sizeof(out->tables));
	if (waiting_copy(&out->waiting, &cur->waiting))
		return -ENOMEM;
	for (int i = 0; i < ILOCK_COUNTER_MAX; i++)
		out->counters[i] = cur->counters[i] -
				   (prev && prev->counters[i] <= cur->counters[i] ? prev->counters[i] : 0);

	for (size_t i = 0; i < cur->nlocks; i++) {
		const struct lock_row *c = &cur->locks[i];
		const struct lock_row *p =
			prev ? snap_find_lock(prev, c->dev, c->ino, c->gen, c->class) : NULL;
		struct lock_row d = { .dev = c->dev, .ino = c->ino, .gen = c->gen, .class = c->class,
				      .has_hold = c->has_hold };
		struct lock_row *r;

		for (int m = 0; m < 2; m++) {
			if (stats_delta(&d.wait[m], &c->wait[m], p ? &p->wait[m] : NULL))
				d.max_bound |= (uint8_t)(1u << m);
			stats_delta(&d.hold[m], &c->hold[m], p ? &p->hold[m] : NULL);
		}
		for (int g = 0; g < ILOCK_RANGE_MAX; g++) {
			const struct ilock_range_stats *pr = p ? &p->range[g] : NULL;

			d.range[g].waits = c->range[g].waits - (pr && pr->waits <= c->range[g].waits ?
								pr->waits : 0);
			d.range[g].wait_ns = c->range[g].wait_ns -
					     (pr && pr->wait_ns <= c->range[g].wait_ns ? pr->wait_ns : 0);
		}
		if (stats_empty(&d.wait[0]) && stats_empty(&d.wait[1]) &&
		    stats_empty(&d.hold[0]) && stats_empty(&d.hold[1]) && !row_range_waits(&d))
			continue;
		r = snap_lock(out, c->dev, c->ino, c->gen, c->class);
		if (!r)
			return -ENOMEM;
		*r = d;
	}
	for (size_t i = 0; i < cur->nedges; i++) {
		const struct edge_row *c = &cur->edges[i];
		const struct edge_row *p = prev ? find_edge(prev, &c->k) : NULL;
		struct ilock_edge_stats d = c->s;

		if (p) {
			d.count = c->s.count > p->s.count ? c->s.count - p->s.count : 0;
			d.total_ns = c->s.total_ns > p->s.total_ns ? c->s.total_ns - p->s.total_ns : 0;
			/* an edge's max only says something when it rose */
			d.max_ns = c->s.max_ns > p->s.max_ns ? c->s.max_ns
				   : (d.count ? (d.total_ns < p->s.max_ns ? d.total_ns : p->s.max_ns) : 0);
		}
		if (!d.count)
			continue;
		if (snap_add_edge(out, &c->k, &d))
			return -ENOMEM;
	}
	for (size_t i = 0; i < cur->ninodes; i++)
		if (snap_add_inode(out, &cur->inodes[i]))
			return -ENOMEM;
	return snap_ops_delta(out, cur, prev);
}

void ranges_merge(struct ilock_range_stats dst[ILOCK_RANGE_MAX],
		  const struct ilock_range_stats src[ILOCK_RANGE_MAX])
{
	for (int g = 0; g < ILOCK_RANGE_MAX; g++) {
		dst[g].waits += src[g].waits;
		dst[g].wait_ns += src[g].wait_ns;
	}
}

void row_merge(struct lock_row *dst, const struct lock_row *src)
{
	dst->has_hold |= src->has_hold;
	for (int m = 0; m < 2; m++) {
		uint8_t bit = (uint8_t)(1u << m);

		/* the larger max decides; of two equal ones, an exact one */
		if (src->wait[m].max_ns > dst->wait[m].max_ns ||
		    (src->wait[m].max_ns == dst->wait[m].max_ns && !(src->max_bound & bit)))
			dst->max_bound = (uint8_t)((dst->max_bound & ~bit) | (src->max_bound & bit));
		stats_merge(&dst->wait[m], &src->wait[m]);
		stats_merge(&dst->hold[m], &src->hold[m]);
	}
	ranges_merge(dst->range, src->range);
}

enum merge_how {
	MERGE_FOLD = 1,      /* as if every generation were 0 (snap_fold_gens) */
	MERGE_UNDER = 2,     /* src is earlier: dst's states stay (snap_merge_under) */
};

static int merge(struct snapshot *dst, const struct snapshot *src, unsigned how)
{
	bool fold = how & MERGE_FOLD;

	for (int i = 0; i < ILOCK_COUNTER_MAX; i++)
		dst->counters[i] += src->counters[i];
	if (!(how & MERGE_UNDER)) {
		if (src->mono_ns > dst->mono_ns)
			dst->mono_ns = src->mono_ns;
		dst->in_flight = src->in_flight;
		memcpy(dst->tables, src->tables, sizeof(dst->tables));
		/* a state, not a sum: the later read's */
		if (src->waiting.available && waiting_copy(&dst->waiting, &src->waiting))
			return -ENOMEM;
	}
	for (size_t i = 0; i < src->nlocks; i++) {
		const struct lock_row *c = &src->locks[i];
		struct lock_row *r = snap_lock(dst, c->dev, c->ino, fold ? 0 : c->gen, c->class);

		if (!r)
			return -ENOMEM;
		row_merge(r, c);
	}
	for (size_t i = 0; i < src->nedges; i++) {
		struct ilock_edge_key k = src->edges[i].k;

		if (fold)
			k.gen = 0;
		if (snap_add_edge(dst, &k, &src->edges[i].s))
			return -ENOMEM;
	}
	for (size_t i = 0; i < src->ninodes; i++) {
		struct inode_meta m = src->inodes[i];

		if (fold)
			m.gen = 0;
		if (snap_add_inode(dst, &m))
			return -ENOMEM;
	}
	return fold ? 0 : snap_ops_merge(dst, src);
}

int snap_merge(struct snapshot *dst, const struct snapshot *src)
{
	return merge(dst, src, 0);
}

int snap_merge_under(struct snapshot *dst, const struct snapshot *earlier)
{
	return merge(dst, earlier, MERGE_UNDER);
}

int snap_fold_gens(struct snapshot *dst, const struct snapshot *src)
{
	snap_reset(dst);
	dst->mono_ns = src->mono_ns;
	return merge(dst, src, MERGE_FOLD);
}

/* dst's array = src's, n entries of esz; its capacity grows to fit. */
static int copy_array(void **dst, size_t *cap, const void *src, size_t n, size_t esz)
{
	if (n > *cap) {
		void *p = realloc(*dst, n * esz);

		if (!p)
			return -ENOMEM;
		*dst = p;
		*cap = n;
	}
	if (n)
		memcpy(*dst, src, n * esz);
	return 0;
}

/* An index of positions is valid for a copy of its array: the same slots, the same size. */
static int copy_idx(uint32_t **dst, size_t *cap, const uint32_t *src, size_t src_cap)
{
	if (!src)
		return 0;  /* src empty; dst's, just reset, is empty too */
	if (*cap != src_cap) {
		uint32_t *p = malloc(src_cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		free(*dst);
		*dst = p;
		*cap = src_cap;
	}
	memcpy(*dst, src, src_cap * sizeof(**dst));
	return 0;
}

/*
 * Row by row through the indexes would cost a hash probe per row; the
 * rows and their indexes as they are cost a memcpy (ilocktop's cumulative
 * view copies 10,000 rows a second this way after a renewal).
 */
int snap_copy(struct snapshot *dst, const struct snapshot *src)
{
	snap_reset(dst);
	dst->mono_ns = src->mono_ns;
	memcpy(dst->counters, src->counters, sizeof(dst->counters));
	dst->in_flight = src->in_flight;
	memcpy(dst->tables, src->tables, sizeof(dst->tables));
	if (src->waiting.available && waiting_copy(&dst->waiting, &src->waiting))
		return -ENOMEM;
	if (copy_array((void **)&dst->locks, &dst->cap_locks, src->locks, src->nlocks,
		       sizeof(*src->locks)) ||
	    copy_idx(&dst->lock_idx, &dst->lock_idx_cap, src->lock_idx, src->lock_idx_cap) ||
	    copy_array((void **)&dst->edges, &dst->cap_edges, src->edges, src->nedges,
		       sizeof(*src->edges)) ||
	    copy_idx(&dst->edge_idx, &dst->edge_idx_cap, src->edge_idx, src->edge_idx_cap) ||
	    copy_array((void **)&dst->inodes, &dst->cap_inodes, src->inodes, src->ninodes,
		       sizeof(*src->inodes)) ||
	    copy_idx(&dst->inode_idx, &dst->inode_idx_cap, src->inode_idx, src->inode_idx_cap))
		return -ENOMEM;
	dst->nlocks = src->nlocks;
	dst->nedges = src->nedges;
	dst->ninodes = src->ninodes;
	return snap_ops_merge(dst, src);
}

int snap_copy_edges(struct snapshot *dst, const struct snapshot *src)
{
	if (dst->edge_idx)
		memset(dst->edge_idx, 0, dst->edge_idx_cap * sizeof(*dst->edge_idx));
	dst->nedges = 0;
	if (copy_array((void **)&dst->edges, &dst->cap_edges, src->edges, src->nedges,
		       sizeof(*src->edges)) ||
	    copy_idx(&dst->edge_idx, &dst->edge_idx_cap, src->edge_idx, src->edge_idx_cap))
		return -ENOMEM;
	dst->nedges = src->nedges;
	return 0;
}

uint64_t row_wait_ns(const struct lock_row *r)
{
	return r->wait[0].total_ns + r->wait[1].total_ns;
}

/*
 * Each wait counts at most the window: its slot's end bounds it, and the
 * exact sum bounds them all. Histograms that do not hold every wait
 * (none kept) cannot bound anything: the sum then.
 */
uint64_t row_wait_in_window(const struct lock_row *r, uint64_t window_ns)
{
	uint64_t sum = row_wait_ns(r), n = 0;
	double bound = 0;

	/*
	 * No wait longer than the window (a max bounds the longest; only a
	 * counted max_update_race leaves it lower): all of it is inside, as
	 * the slots would say, without 80 of them to add up for every row.
	 */
	if (!window_ns || (r->wait[0].max_ns <= window_ns && r->wait[1].max_ns <= window_ns))
		return sum;
	for (int m = 0; m < 2; m++) {
		for (unsigned k = 0; k < ILOCK_HIST_SLOTS; k++) {
			uint64_t hi = hist_slot_hi(k);

			n += r->wait[m].hist[k];
			bound += (double)r->wait[m].hist[k] * (double)(hi < window_ns ? hi : window_ns);
		}
	}
	if (n != row_waits(r) || bound >= (double)sum)
		return sum;
	return (uint64_t)bound;
}

uint64_t row_waits(const struct lock_row *r)
{
	return r->wait[0].count + r->wait[1].count;
}

uint64_t row_hold_ns(const struct lock_row *r)
{
	return r->hold[0].total_ns + r->hold[1].total_ns;
}

static int cmp_hold_ns(const void *pa, const void *pb)
{
	const struct lock_row *a = *(const struct lock_row *const *)pa;
	const struct lock_row *b = *(const struct lock_row *const *)pb;

	if (row_hold_ns(a) != row_hold_ns(b))
		return row_hold_ns(a) < row_hold_ns(b) ? 1 : -1;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

long snap_held_only(const struct snapshot *s, const struct lock_row ***out)
{
	const struct lock_row **v;
	size_t n = 0;

	*out = NULL;
	for (size_t i = 0; i < s->nlocks; i++)
		n += !row_waits(&s->locks[i]) && row_hold_ns(&s->locks[i]);
	if (!n)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < s->nlocks; i++)
		if (!row_waits(&s->locks[i]) && row_hold_ns(&s->locks[i]))
			v[n++] = &s->locks[i];
	qsort(v, n, sizeof(*v), cmp_hold_ns);
	*out = v;
	return (long)n;
}

uint64_t row_max_ns(const struct lock_row *r)
{
	return r->wait[0].max_ns > r->wait[1].max_ns ? r->wait[0].max_ns : r->wait[1].max_ns;
}

bool row_max_bound(const struct lock_row *r)
{
	const struct ilock_stats *w = r->wait;

	if (w[0].max_ns != w[1].max_ns)
		return r->max_bound & (w[0].max_ns > w[1].max_ns ? 1 : 2);
	return (r->max_bound & 3) == 3;  /* equal: exact if either is */
}

uint64_t row_p99_ns(const struct lock_row *r)
{
	struct ilock_stats both = r->wait[0];

	stats_merge(&both, &r->wait[1]);
	return stats_percentile(&both, 0.99);
}

static uint64_t sort_value(const struct lock_row *r, enum sort_key key)
{
	switch (key) {
	case SORT_WAITS: return row_waits(r);
	case SORT_MAX: return row_max_ns(r);
	case SORT_P99: return row_p99_ns(r);
	case SORT_SHARED: return r->wait[ILOCK_MODE_SHARED].count;
	case SORT_EXCL: return r->wait[ILOCK_MODE_EXCL].count;
	case SORT_WAIT_TIME:
	default: return row_wait_ns(r);
	}
}

static enum sort_key g_sort_key;  /* qsort has no context argument */

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct lock_row *a = pa, *b = pb;
	bool wa = row_waits(a) != 0, wb = row_waits(b) != 0;
	int c;

	if (wa != wb)
		return wa ? -1 : 1;
	c = cmp_u64_desc(sort_value(a, g_sort_key), sort_value(b, g_sort_key));
	if (!c)
		c = cmp_u64_desc(row_wait_ns(a), row_wait_ns(b));
	if (!c)
		c = cmp_u64_desc(b->hold[1].total_ns + b->hold[0].total_ns,
				 a->hold[1].total_ns + a->hold[0].total_ns) * -1;
	if (!c)
		c = a->dev < b->dev ? -1 : a->dev > b->dev;
	if (!c)
		c = a->ino < b->ino ? -1 : a->ino > b->ino;
	if (!c)
		c = a->gen < b->gen ? -1 : a->gen > b->gen;
	if (!c)
		c = (int)a->class - (int)b->class;
	return c;
}

void snap_sort_locks(struct snapshot *s, enum sort_key key)
{
	g_sort_key = key;
	if (s->nlocks > 1)  /* qsort's base must not be NULL, even for 0 items */
		qsort(s->locks, s->nlocks, sizeof(*s->locks), cmp_rows);
	idx_rebuild(&s->lock_idx, &s->lock_idx_cap, s->nlocks, s->locks, sizeof(*s->locks),
		    lock_row_hash);
}

static int cmp_edges(const void *pa, const void *pb)
{
	const struct edge_row *a = pa, *b = pb;
	int c = cmp_u64_desc(a->s.total_ns, b->s.total_ns);

	if (!c)
		c = cmp_u64_desc(a->s.count, b->s.count);
	if (!c)
		c = memcmp(&a->k, &b->k, sizeof(a->k));
	return c;
}

void snap_sort_edges(struct snapshot *s)
{
	if (s->nedges > 1)
		qsort(s->edges, s->nedges, sizeof(*s->edges), cmp_edges);
	idx_rebuild(&s->edge_idx, &s->edge_idx_cap, s->nedges, s->edges, sizeof(*s->edges),
		    edge_row_hash);
}

static int cmp_holder(const void *pa, const void *pb)
{
	const struct edge_row *a = *(const struct edge_row *const *)pa;
	const struct edge_row *b = *(const struct edge_row *const *)pb;

	if (a->k.holder_pid != b->k.holder_pid)
		return a->k.holder_pid < b->k.holder_pid ? -1 : 1;
	if (a->k.holder_mode != b->k.holder_mode)
		return a->k.holder_mode < b->k.holder_mode ? -1 : 1;
	/* within one holder, the first of the largest edges stands for it */
	if (a->s.total_ns != b->s.total_ns)
		return a->s.total_ns > b->s.total_ns ? -1 : 1;
	return a < b ? -1 : a > b;
}

bool holder_unnamed(const struct ilock_edge_key *k)
{
	/*
	 * Readers with no hint are every reader of the lock together: summed,
	 * they would outweigh each writer thread behind which the same waits
	 * queued, and name "readers" where the tables by command name fio.
	 */
	return k->holder_mode == ILOCK_MODE_UNKNOWN || k->holder_pid == ILOCK_PID_FOLDED ||
	       (k->holder_mode == ILOCK_MODE_READERS && !k->holder_pid);
}

/*
 * The holder that cost one lock's waiters the most time in total, summed
 * over all its waiters, of that lock's edges (reordered); returned as its
 * largest edge. Named holders win over unnamed ones (holder_unnamed)
 * whatever the time. One sort to group them by holder: O(n log n), not
 * O(n^2), so a full edge map (tens of thousands of pairs on one file)
 * stays cheap.
 */
const struct edge_row *top_holder_of(const struct edge_row **mine, size_t n)
{
	const struct edge_row *best = NULL, *best_first = NULL;
	uint64_t best_ns = 0;

	if (n > 1)
		qsort(mine, n, sizeof(*mine), cmp_holder);
	for (size_t i = 0; i < n;) {
		const struct edge_row *big = mine[i], *first = mine[i];
		uint64_t sum = 0;
		size_t j = i;

		for (; j < n && mine[j]->k.holder_pid == big->k.holder_pid &&
		       mine[j]->k.holder_mode == big->k.holder_mode; j++) {
			sum += mine[j]->s.total_ns;
			if (mine[j] < first)
				first = mine[j];
		}
		i = j;
		if (best && holder_unnamed(&big->k) != holder_unnamed(&best->k)) {
			if (holder_unnamed(&big->k))
				continue;
		} else if (best && (sum < best_ns || (sum == best_ns && first > best_first))) {
			continue;  /* equal sums: the holder seen first in the map wins */
		}
		best = big;
		best_ns = sum;
		best_first = first;
	}
	return best;
}

const struct edge_row *snap_top_holder(const struct snapshot *s, uint32_t dev, uint64_t ino,
				       uint32_t gen, uint8_t class)
{
	const struct edge_row **mine, *best;
	size_t n = 0;

	mine = malloc((s->nedges ? s->nedges : 1) * sizeof(*mine));
	if (!mine)
		return NULL;
	for (size_t i = 0; i < s->nedges; i++) {
		const struct edge_row *e = &s->edges[i];

		if (e->k.dev == dev && e->k.ino == ino && e->k.gen == gen && e->k.class == class)
			mine[n++] = e;
	}
	best = top_holder_of(mine, n);
	free(mine);
	return best;
}

uint64_t snap_lost_sum(const struct snapshot *s, bool (*which)(int c))
{
	uint64_t t = 0;

	for (int i = ILOCK_FIRST_LOST; i < ILOCK_COUNTER_MAX; i++)
		if (!which || which(i))
			t += s->counters[i];
	return t;
}

static const char *const class_names[ILOCK_CLASS_MAX] = {
	[ILOCK_CLASS_I_RWSEM] = "i_rwsem",
	[ILOCK_CLASS_INVALIDATE] = "invalidate_lock",
	[ILOCK_CLASS_XFS_ILOCK] = "xfs_ilock",
	[ILOCK_CLASS_JBD2_WAIT] = "jbd2_wait",
};

static const char *const xfs_class_names[ILOCK_CLASS_MAX] = {
	[ILOCK_CLASS_I_RWSEM] = "IOLOCK",
	[ILOCK_CLASS_INVALIDATE] = "MMAPLOCK",
	[ILOCK_CLASS_XFS_ILOCK] = "ILOCK",
	[ILOCK_CLASS_JBD2_WAIT] = "jbd2_wait",
};

const char *class_name(uint8_t class)
{
	return class < ILOCK_CLASS_MAX ? class_names[class] : "?";
}

const char *class_display_name(uint8_t class, uint32_t magic)
{
	if (class >= ILOCK_CLASS_MAX)
		return "?";
	return magic == ILOCK_XFS_SB_MAGIC ? xfs_class_names[class] : class_names[class];
}

bool class_from_name(const char *name, uint8_t *class)
{
	for (uint8_t i = 0; i < ILOCK_CLASS_MAX; i++) {
		if (!strcmp(name, class_names[i]) || !strcasecmp(name, xfs_class_names[i])) {
			*class = i;
			return true;
		}
	}
	return false;
}

const char *mode_name(uint8_t mode)
{
	switch (mode) {
	case ILOCK_MODE_SHARED: return "shared";
	case ILOCK_MODE_EXCL: return "exclusive";
	case ILOCK_MODE_READERS: return "readers";
	case ILOCK_MODE_QUEUED_EXCL: return "queued-exclusive";
	case ILOCK_MODE_QUEUED_SHARED: return "queued-shared";
	default: return "unknown";
	}
}

static const struct { uint32_t magic; const char *name; } fs_names[] = {
	{ ILOCK_XFS_SB_MAGIC, "xfs" },
	{ ILOCK_EXT4_SB_MAGIC, "ext4" },
	{ 0x9123683EU, "btrfs" },
	{ 0x01021994U, "tmpfs" },
	{ 0x2FC12FC1U, "zfs" },
	{ 0xF2F52010U, "f2fs" },
	{ 0x6969U, "nfs" },
	{ 0x65735546U, "fuse" },
	{ 0x794C7630U, "overlay" },
};

const char *fs_name(uint32_t magic)
{
	for (size_t i = 0; i < sizeof(fs_names) / sizeof(fs_names[0]); i++)
		if (fs_names[i].magic == magic)
			return fs_names[i].name;
	return magic ? "other" : "unknown";
}

/* "xfs, ext4, ...": the names --fs takes, for its error message. */
void fs_name_list(char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof(fs_names) / sizeof(fs_names[0]) && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", fs_names[i].name);

		if (n < 0)
			break;
		off += (size_t)n;
	}
}

/*
 * Names /proc/mounts gives filesystems that share one of those magics:
 * ext2 and ext3 mounted by the ext4 driver, NFS v4, FUSE's block and
 * typed ("fuse.sshfs") mounts.
 */
static const struct { const char *alias, *name; } fs_aliases[] = {
	{ "ext2", "ext4" }, { "ext3", "ext4" }, { "nfs4", "nfs" }, { "fuseblk", "fuse" },
};

bool fs_magic_from_name(const char *name, uint32_t *magic)
{
	for (size_t i = 0; i < sizeof(fs_aliases) / sizeof(fs_aliases[0]); i++)
		if (!strcasecmp(fs_aliases[i].alias, name))
			name = fs_aliases[i].name;
	if (!strncasecmp(name, "fuse.", 5) && name[5])
		name = "fuse";
	for (size_t i = 0; i < sizeof(fs_names) / sizeof(fs_names[0]); i++) {
		if (!strcasecmp(fs_names[i].name, name)) {
			*magic = fs_names[i].magic;
			return true;
		}
	}
	return false;
}

static const char *const sort_names[SORT_KEY_MAX] = {
	[SORT_WAIT_TIME] = "wait", [SORT_WAITS] = "waits", [SORT_MAX] = "max",
	[SORT_P99] = "p99", [SORT_SHARED] = "shared", [SORT_EXCL] = "exclusive",
};

const char *sort_key_name(enum sort_key k)
{
	return k < SORT_KEY_MAX ? sort_names[k] : "?";
}

/*
 * ---- What holders and waiters were doing: range classes live in the
 * lock rows; wait time per edge and kernel stack, the frames behind each
 * stack, and direct writes by lock mode live in tables of their own.
 */

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

/*
 * A growable array of fixed-size rows with an open-addressing index keyed
 * by the first klen bytes of each row. Slots hold position + 1; 0 is empty.
 */
struct table {
	void **rows;
	size_t *n, *cap;
	uint32_t **idx;
	size_t *idx_cap;
	size_t rsz, klen;
};

static int table_reindex(const struct table *t, size_t want_rows)
{
	size_t want = 16;
	uint32_t *idx;

	while (want < want_rows * 2 + 2)
		want <<= 1;
	if (*t->idx && *t->idx_cap >= want)
		return 0;
	idx = calloc(want, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < *t->n; i++) {
		size_t h = fnv((char *)*t->rows + i * t->rsz, t->klen) & (want - 1);

		while (idx[h])
			h = (h + 1) & (want - 1);
		idx[h] = (uint32_t)(i + 1);
	}
	free(*t->idx);
	*t->idx = idx;
	*t->idx_cap = want;
	return 0;
}

static void *table_find(const struct table *t, const void *key)
{
	size_t h;

	if (!*t->idx_cap)
		return NULL;
	h = fnv(key, t->klen) & (*t->idx_cap - 1);
	while ((*t->idx)[h]) {
		char *row = (char *)*t->rows + ((*t->idx)[h] - 1) * t->rsz;

		if (!memcmp(row, key, t->klen))
			return row;
		h = (h + 1) & (*t->idx_cap - 1);
	}
	return NULL;
}

/* Find the row with this key, or append a zeroed one with it. */
static void *table_get(const struct table *t, const void *key)
{
	char *row = table_find(t, key);
	size_t h;

	if (row)
		return row;
	if (*t->n >= *t->cap) {
		size_t ncap = *t->cap ? *t->cap * 2 : 64;
		void *p = realloc(*t->rows, ncap * t->rsz);

		if (!p)
			return NULL;
		*t->rows = p;
		*t->cap = ncap;
	}
	if (table_reindex(t, *t->n + 1))
		return NULL;
	row = (char *)*t->rows + *t->n * t->rsz;
	memset(row, 0, t->rsz);
	memcpy(row, key, t->klen);
	h = fnv(key, t->klen) & (*t->idx_cap - 1);
	while ((*t->idx)[h])
		h = (h + 1) & (*t->idx_cap - 1);
	(*t->idx)[h] = (uint32_t)++*t->n;
	return row;
}

static void table_reset(const struct table *t)
{
	*t->n = 0;
	if (*t->idx)
		memset(*t->idx, 0, *t->idx_cap * sizeof(**t->idx));
}

static void table_free(const struct table *t)
{
	free(*t->rows);
	free(*t->idx);
	*t->rows = NULL;
	*t->idx = NULL;
	*t->n = *t->cap = *t->idx_cap = 0;
}

#define TABLE(s, arr, cnt, capf, ix, ixcap, type, keylen)                                     \
	((struct table){ .rows = (void **)&(s)->arr, .n = &(s)->cnt, .cap = &(s)->capf,     \
			 .idx = &(s)->ix, .idx_cap = &(s)->ixcap, .rsz = sizeof(type),      \
			 .klen = (keylen) })
/* const snapshots are only read through these; the casts keep one table type */
#define STACKS(s) TABLE((struct snapshot *)(s), stacks, nstacks, cap_stacks, stack_idx, \
			stack_idx_cap, struct stack_row, sizeof(struct ilock_stack_key))
#define FRAMES(s) TABLE((struct snapshot *)(s), frames, nframes, cap_frames, frames_idx, \
			frames_idx_cap, struct frames_row, offsetof(struct frames_row, f))
#define DIOS(s) TABLE((struct snapshot *)(s), dios, ndios, cap_dios, dio_idx, dio_idx_cap, \
		      struct dio_row, sizeof(struct ilock_dio_key))

bool edge_add_ranges(const struct edge_row *e, struct ilock_range_stats range[ILOCK_RANGE_MAX])
{
	if (!edge_has_ranges(&e->k) || e->k.range >= ILOCK_RANGE_MAX)
		return false;
	range[e->k.range].waits += e->s.count;
	range[e->k.range].wait_ns += e->s.total_ns;
	return true;
}

int snap_ranges_from_edges(struct snapshot *s)
{
	for (size_t i = 0; i < s->nedges; i++) {
		const struct edge_row *e = &s->edges[i];
		struct ilock_range_stats add[ILOCK_RANGE_MAX] = {};
		struct lock_row *r;

		/* first, so that a pair without ranges makes no row */
		if (!edge_add_ranges(e, add))
			continue;
		r = snap_lock(s, e->k.dev, e->k.ino, e->k.gen, e->k.class);
		if (!r)
			return -ENOMEM;
		ranges_merge(r->range, add);
	}
	return 0;
}

int snap_add_stack(struct snapshot *s, const struct ilock_stack_key *k,
		   const struct ilock_stack_stats *st)
{
	struct stack_row *r = table_get(&STACKS(s), k);

	if (!r)
		return -ENOMEM;
	r->s.count += st->count;
	r->s.total_ns += st->total_ns;
	return 0;
}

int snap_add_edge_wstack(struct snapshot *s, const struct ilock_edge_key *k, const void *stats)
{
	const struct ilock_edge_wstack *w =
		(const void *)((const char *)stats + ILOCK_EDGE_WSTACK_FROM_STATS);
	/* acquire: the BPF side claims stack1 before its first count */
	struct ilock_stack_stats st = { .count = __atomic_load_n(&w->count, __ATOMIC_ACQUIRE) };
	struct ilock_stack_key sk;

	if (!st.count || !w->stack1)
		return 0;
	st.total_ns = w->total_ns;
	memset(&sk, 0, sizeof(sk));
	sk.edge = *k;
	sk.stack = w->stack1 - 1;
	sk.kind = ILOCK_STACK_WAITER;
	return snap_add_stack(s, &sk, &st);
}

/* The key of a frames row: kind, padding and id, all zeroed first. */
static void frames_key(struct frames_row *key, uint8_t kind, uint64_t id)
{
	memset(key, 0, sizeof(*key));
	key->kind = kind;
	key->id = id;
}

int snap_add_frames(struct snapshot *s, uint8_t kind, uint64_t id,
		    const struct ilock_stack_frames *f)
{
	struct frames_row key, *r;

	frames_key(&key, kind, id);
	r = table_get(&FRAMES(s), &key);
	if (!r)
		return -ENOMEM;
	r->f = *f;
	if (r->f.nr > ILOCK_STACK_DEPTH)
		r->f.nr = ILOCK_STACK_DEPTH;
	return 0;
}

const struct ilock_stack_frames *snap_find_frames(const struct snapshot *s, uint8_t kind,
						  uint64_t id)
{
	struct frames_row key;
	const struct frames_row *r;

	frames_key(&key, kind, id);
	r = table_find(&FRAMES(s), &key);
	return r ? &r->f : NULL;
}

int snap_add_dio(struct snapshot *s, const struct ilock_dio_key *k, uint64_t count)
{
	struct dio_row *r = table_get(&DIOS(s), k);

	if (!r)
		return -ENOMEM;
	r->count += count;
	return 0;
}

static int cmp_stacks(const void *pa, const void *pb)
{
	const struct stack_row *a = pa, *b = pb;

	if (a->s.total_ns != b->s.total_ns)
		return a->s.total_ns > b->s.total_ns ? -1 : 1;
	if (a->s.count != b->s.count)
		return a->s.count > b->s.count ? -1 : 1;
	return memcmp(&a->k, &b->k, sizeof(a->k));
}

void snap_sort_stacks(struct snapshot *s)
{
	if (s->nstacks)  /* qsort's base may not be NULL, even for none */
		qsort(s->stacks, s->nstacks, sizeof(*s->stacks), cmp_stacks);
	if (s->stack_idx) {
		free(s->stack_idx);
		s->stack_idx = NULL;
		s->stack_idx_cap = 0;
		table_reindex(&STACKS(s), s->nstacks);
	}
}

uint64_t row_range_waits(const struct lock_row *r)
{
	uint64_t n = 0;

	for (int g = 0; g < ILOCK_RANGE_MAX; g++)
		n += r->range[g].waits;
	return n;
}

/* The waits of unknown range class, whichever side's range was missing. */
struct ilock_range_stats range_unknown(const struct ilock_range_stats range[ILOCK_RANGE_MAX])
{
	static const int unknown[] = { ILOCK_RANGE_NO_WAITER, ILOCK_RANGE_NO_HOLDER,
				       ILOCK_RANGE_NO_BOTH };
	struct ilock_range_stats u = { 0 };

	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		u.waits += range[unknown[i]].waits;
		u.wait_ns += range[unknown[i]].wait_ns;
	}
	return u;
}

struct ilock_range_stats row_range_unknown(const struct lock_row *r)
{
	return range_unknown(r->range);
}

/*
 * Disjoint time over all classified-or-not wait time: waits of unknown
 * range count against the headroom, so it is a lower bound. Nothing to
 * say (-1) when no wait had both ranges.
 */
double range_headroom(const struct ilock_range_stats range[ILOCK_RANGE_MAX])
{
	uint64_t ns = 0;

	for (int g = 0; g < ILOCK_RANGE_MAX; g++)
		ns += range[g].wait_ns;
	if (!range[ILOCK_RANGE_OVERLAP].waits && !range[ILOCK_RANGE_DISJOINT].waits)
		return -1.0;
	return ns ? (double)range[ILOCK_RANGE_DISJOINT].wait_ns / (double)ns : 0.0;
}

void snap_wait_load(const struct snapshot *s, double secs, struct wait_load *out)
{
	double per_s = secs > 0 ? 1e-9 / secs : 0;
	uint64_t window = secs > 0 ? u64_of(secs * 1e9) : 0, in = 0, jin = 0, top_in = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < s->nlocks; i++) {
		const struct lock_row *r = &s->locks[i];
		uint64_t r_in = row_wait_in_window(r, window);

		if (r->class == ILOCK_CLASS_JBD2_WAIT) {
			out->journal_waits += row_waits(r);
			out->journal_ns += row_wait_ns(r);
			jin += r_in;
			continue;
		}
		out->waits += row_waits(r);
		out->wait_ns += row_wait_ns(r);
		in += r_in;
		if (row_wait_ns(r) && (!out->top || row_wait_ns(r) > row_wait_ns(out->top))) {
			out->top = r;
			top_in = r_in;
		}
	}
	out->began_before = in < out->wait_ns || jin < out->journal_ns;
	out->tasks = (double)in * per_s;
	out->journal_tasks = (double)jin * per_s;
	out->top_tasks = (double)top_in * per_s;
}

double row_headroom(const struct lock_row *r)
{
	return range_headroom(r->range);
}

static void snap_ops_free(struct snapshot *s)
{
	table_free(&STACKS(s));
	table_free(&FRAMES(s));
	table_free(&DIOS(s));
}

static void snap_ops_reset(struct snapshot *s)
{
	table_reset(&STACKS(s));
	table_reset(&FRAMES(s));
	table_reset(&DIOS(s));
}

static uint64_t sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static int snap_ops_delta(struct snapshot *out, const struct snapshot *cur, const struct snapshot *prev)
{
	for (size_t i = 0; i < cur->nstacks; i++) {
		const struct stack_row *c = &cur->stacks[i];
		const struct stack_row *p = prev ? table_find(&STACKS(prev), &c->k) : NULL;
		struct ilock_stack_stats d = c->s;

		if (p) {
			d.count = sub(c->s.count, p->s.count);
			d.total_ns = sub(c->s.total_ns, p->s.total_ns);
		}
		if (d.count && snap_add_stack(out, &c->k, &d))
			return -ENOMEM;
	}
	/* frames never change under an id: keep them all */
	for (size_t i = 0; i < cur->nframes; i++) {
		const struct frames_row *f = &cur->frames[i];

		if (snap_add_frames(out, f->kind, f->id, &f->f))
			return -ENOMEM;
	}
	for (size_t i = 0; i < cur->ndios; i++) {
		const struct dio_row *c = &cur->dios[i];
		const struct dio_row *p = prev ? table_find(&DIOS(prev), &c->k) : NULL;
		uint64_t d = p ? sub(c->count, p->count) : c->count;

		if (d && snap_add_dio(out, &c->k, d))
			return -ENOMEM;
	}
	return 0;
}

static int snap_ops_merge(struct snapshot *dst, const struct snapshot *src)
{
	for (size_t i = 0; i < src->nstacks; i++)
		if (snap_add_stack(dst, &src->stacks[i].k, &src->stacks[i].s))
			return -ENOMEM;
	for (size_t i = 0; i < src->nframes; i++)
		if (snap_add_frames(dst, src->frames[i].kind, src->frames[i].id, &src->frames[i].f))
			return -ENOMEM;
	for (size_t i = 0; i < src->ndios; i++)
		if (snap_add_dio(dst, &src->dios[i].k, src->dios[i].count))
			return -ENOMEM;
	return 0;
}
