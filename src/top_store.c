// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "top_store.h"
#include "util.h"

void top_store_init(struct top_store *st)
{
	memset(st, 0, sizeof(*st));
	snap_init(&st->cum);
	snap_init(&st->cum_edges);
}

void top_store_free(struct top_store *st)
{
	snap_free(&st->cum);
	snap_free(&st->cum_edges);
	free(st->wpos);
	free(st->epos);
	free(st->edges);
	free(st->edge_idx);
	top_store_init(st);
}

void top_store_scan_begin(struct top_store *st)
{
	st->wi = st->ei = 0;
}

void top_store_scan_end(struct top_store *st)
{
	st->nwpos = st->wi;
	st->nepos = st->ei;
}

enum pos_state { POS_NEW, POS_MOVED, POS_SAME };

/*
 * The entry at this position of the scan, against the one there last
 * time: POS_SAME (same key, same stats: skip it), POS_MOVED (same key,
 * new stats: its remembered row still holds), POS_NEW (another key: the
 * position now holds this one, row unknown). *pos is NULL when out of
 * memory, which only means no shortcut.
 */
static enum pos_state pos_take(struct scan_pos **arr, size_t *n, size_t *cap, size_t *i,
			       const void *key, size_t ksz, uint64_t count, uint64_t total_ns,
			       uint64_t max_ns, struct scan_pos **pos)
{
	enum pos_state st = POS_NEW;
	struct scan_pos *p;

	*pos = NULL;
	if (*i < *n) {
		p = &(*arr)[*i];
		if (!memcmp(&p->k, key, ksz)) {
			st = p->count == count && p->total_ns == total_ns && p->max_ns == max_ns
				     ? POS_SAME
				     : POS_MOVED;
			if (st == POS_SAME) {
				(*i)++;
				return st;
			}
		}
	} else if (*i >= *cap) {
		size_t ncap = *cap ? *cap * 2 : 1024;

		p = realloc(*arr, ncap * sizeof(*p));
		if (!p)
			return POS_NEW;
		*arr = p;
		*cap = ncap;
	}
	p = &(*arr)[*i];
	if (st == POS_NEW) {
		memset(&p->k, 0, sizeof(p->k));
		memcpy(&p->k, key, ksz);
		p->row = 0;
	}
	p->count = count;
	p->total_ns = total_ns;
	p->max_ns = max_ns;
	(*i)++;
	/* a new key shifts what follows: those now compare with the new order */
	if (*i > *n)
		*n = *i;
	*pos = p;
	return st;
}

static bool same_stats(const struct ilock_stats *a, const struct ilock_stats *b)
{
	/* every BPF update adds to the count: equal counts mean an untouched entry */
	return a->count == b->count && a->total_ns == b->total_ns && a->max_ns == b->max_ns;
}

/* pos: the wait scan's, whose row (cum never reorders) spares the lookup */
static int take_stats(struct top_store *st, struct snapshot *delta, const struct ilock_key *k,
		      const struct ilock_stats *cur, bool hold, struct scan_pos *pos)
{
	struct lock_row *c, *d;
	struct ilock_stats *prev, *out;

	if (k->mode > ILOCK_MODE_EXCL || k->class >= ILOCK_CLASS_MAX)
		return -EINVAL;
	if (pos && pos->row)
		c = &st->cum.locks[pos->row - 1];
	else
		c = snap_lock(&st->cum, k->dev, k->ino, k->gen, k->class);
	if (!c)
		return -ENOMEM;
	if (pos)
		pos->row = (uint32_t)(c - st->cum.locks) + 1;
	prev = hold ? &c->hold[k->mode] : &c->wait[k->mode];
	if (same_stats(cur, prev))
		return 0;
	d = snap_lock(delta, k->dev, k->ino, k->gen, k->class);
	if (!d)
		return -ENOMEM;
	out = hold ? &d->hold[k->mode] : &d->wait[k->mode];
	if (hold)
		c->has_hold = d->has_hold = true;
	if (stats_delta(out, cur, prev) && !hold)
		d->max_bound |= (uint8_t)(1u << k->mode);
	/*
	 * When the max did not rise, stats_delta can only bound it by a
	 * histogram slot; no single wait is longer than all of them together.
	 */
	if (out->max_ns > out->total_ns)
		out->max_ns = out->total_ns;
	*prev = *cur;
	return 1;
}

int top_store_wait(struct top_store *st, struct snapshot *delta, const struct ilock_key *k,
		   const struct ilock_stats *cur)
{
	struct scan_pos *pos;

	if (pos_take(&st->wpos, &st->nwpos, &st->cap_wpos, &st->wi, k, sizeof(*k), cur->count,
		     cur->total_ns, cur->max_ns, &pos) == POS_SAME)
		return 0;
	return take_stats(st, delta, k, cur, false, pos);
}

int top_store_hold(struct top_store *st, struct snapshot *delta, const struct ilock_key *k,
		   const struct ilock_stats *cur)
{
	return take_stats(st, delta, k, cur, true, NULL);
}

/* 64-bit words at a time: the byte-wise FNV of model.c is the hot spot here */
static uint64_t edge_hash(const struct ilock_edge_key *k)
{
	uint64_t w, h = 0x9e3779b97f4a7c15ULL;
	const char *p = (const char *)k;

	for (size_t i = 0; i + 8 <= sizeof(*k); i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	return h ^ (h >> 29);
}

static int edge_idx_grow(struct top_store *st)
{
	size_t want = st->edge_idx_cap ? st->edge_idx_cap * 2 : 1024;
	uint32_t *t;

	while (want < st->nedges * 2 + 2)
		want *= 2;
	t = calloc(want, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < st->nedges; i++) {
		size_t h = edge_hash(&st->edges[i].k) & (want - 1);

		while (t[h])
			h = (h + 1) & (want - 1);
		t[h] = (uint32_t)(i + 1);
	}
	free(st->edge_idx);
	st->edge_idx = t;
	st->edge_idx_cap = want;
	return 0;
}

static struct store_edge *edge_get(struct top_store *st, const struct ilock_edge_key *k)
{
	size_t h;

	if ((st->nedges + 1) * 2 + 2 > st->edge_idx_cap && edge_idx_grow(st))
		return NULL;
	h = edge_hash(k) & (st->edge_idx_cap - 1);
	while (st->edge_idx[h]) {
		struct store_edge *e = &st->edges[st->edge_idx[h] - 1];

		if (!memcmp(&e->k, k, sizeof(*k)))
			return e;
		h = (h + 1) & (st->edge_idx_cap - 1);
	}
	if (!grow_array((void **)&st->edges, &st->cap_edges, st->nedges, sizeof(*st->edges)))
		return NULL;
	memset(&st->edges[st->nedges], 0, sizeof(st->edges[0]));
	st->edges[st->nedges].k = *k;
	st->edge_idx[h] = (uint32_t)++st->nedges;
	return &st->edges[st->nedges - 1];
}

void top_edge_delta(struct ilock_edge_stats *out, const struct ilock_edge_stats *cur,
		    const struct ilock_edge_stats *prev)
{
	out->count = cur->count > prev->count ? cur->count - prev->count : 0;
	out->total_ns = cur->total_ns > prev->total_ns ? cur->total_ns - prev->total_ns : 0;
	/* as snap_delta: the max is exact only when it rose; else a bound */
	if (!out->count)
		out->max_ns = 0;
	else if (cur->max_ns > prev->max_ns)
		out->max_ns = cur->max_ns;
	else
		out->max_ns = out->total_ns < prev->max_ns ? out->total_ns : prev->max_ns;
}

int top_store_edge(struct top_store *st, struct snapshot *delta, const struct ilock_edge_key *k,
		   const struct ilock_edge_stats *cur)
{
	struct store_edge *e;
	struct ilock_edge_stats d;
	struct scan_pos *pos;

	if (pos_take(&st->epos, &st->nepos, &st->cap_epos, &st->ei, k, sizeof(*k), cur->count,
		     cur->total_ns, cur->max_ns, &pos) == POS_SAME)
		return 0;
	e = pos && pos->row ? &st->edges[pos->row - 1] : edge_get(st, k);
	if (!e)
		return -ENOMEM;
	if (pos)
		pos->row = (uint32_t)(e - st->edges) + 1;
	if (e->s.count == cur->count && e->s.total_ns == cur->total_ns)
		return 0;
	top_edge_delta(&d, cur, &e->s);
	e->s = *cur;
	if (!d.count)
		return 0;
	st->edges_stale = true;
	if (snap_add_edge(delta, k, &d))
		return -ENOMEM;
	return 1;
}

const struct snapshot *top_store_edges(struct top_store *st)
{
	if (!st->edges_stale)
		return &st->cum_edges;
	snap_reset(&st->cum_edges);
	for (size_t i = 0; i < st->nedges; i++)
		if (st->edges[i].s.count &&
		    snap_add_edge(&st->cum_edges, &st->edges[i].k, &st->edges[i].s))
			return NULL;
	st->cum_edges.mono_ns = st->cum.mono_ns;
	st->edges_stale = false;
	return &st->cum_edges;
}

bool top_store_counters(struct top_store *st, struct snapshot *delta, const uint64_t *cur)
{
	bool moved = false;

	for (int i = 0; i < ILOCK_COUNTER_MAX; i++) {
		uint64_t prev = st->cum.counters[i];

		delta->counters[i] = cur[i] >= prev ? cur[i] - prev : 0;
		moved |= cur[i] != prev;
		st->cum.counters[i] = cur[i];
	}
	return moved;
}

/* ---- kernel stacks kept across renewals ---- */

struct stack_content {
	uint8_t kind;
	uint8_t pad[7];
	struct ilock_stack_frames f;   /* ips past nr zeroed */
};

void kept_stacks_init(struct kept_stacks *k)
{
	memset(k, 0, sizeof(*k));
	snap_init(&k->s);
	idmap_init(&k->ids, sizeof(struct stack_content));
}

void kept_stacks_free(struct kept_stacks *k)
{
	snap_free(&k->s);
	idmap_free(&k->ids);
	kept_stacks_init(k);
}

static void content_of(struct stack_content *c, uint8_t kind, const struct ilock_stack_frames *f)
{
	uint32_t nr = f->nr < ILOCK_STACK_DEPTH ? f->nr : ILOCK_STACK_DEPTH;

	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->f.nr = nr;
	memcpy(c->f.ip, f->ip, nr * sizeof(f->ip[0]));
}

/* from's stack rows of the locks keep has, into n under n's ids */
static int keep_rows(struct kept_stacks *n, const struct snapshot *from, const struct snapshot *keep)
{
	struct stack_content c;

	for (size_t i = 0; i < from->nstacks; i++) {
		const struct stack_row *r = &from->stacks[i];
		const struct ilock_stack_frames *fr;
		struct ilock_stack_key key;
		uint32_t id;
		int err;

		if (!snap_find_lock(keep, r->k.edge.dev, r->k.edge.ino, r->k.edge.gen, r->k.edge.class) ||
		    !(fr = snap_find_frames(from, r->k.kind, r->k.stack)))
			continue;  /* a lock the view folded away, or frames never read */
		content_of(&c, r->k.kind, fr);
		if (!idmap_get(&n->ids, &c, &id)) {
			id = n->n;
			if ((err = idmap_put(&n->ids, &c, id)) ||
			    (err = snap_add_frames(&n->s, c.kind, id, &c.f)))
				return err;
			n->n++;
		}
		memset(&key, 0, sizeof(key));
		key.edge.dev = r->k.edge.dev;
		key.edge.ino = r->k.edge.ino;
		key.edge.gen = r->k.edge.gen;
		key.edge.class = r->k.edge.class;
		key.kind = r->k.kind;
		key.stack = id;
		if ((err = snap_add_stack(&n->s, &key, &r->s)))
			return err;
	}
	return 0;
}

int kept_stacks_add(struct kept_stacks *k, const struct snapshot *old, const struct snapshot *keep)
{
	struct kept_stacks n;
	int err;

	/* made anew: stacks of locks no longer kept whole go, and with them their frames */
	kept_stacks_init(&n);
	err = keep_rows(&n, &k->s, keep);
	if (!err)
		err = keep_rows(&n, old, keep);
	if (err) {
		kept_stacks_free(&n);
		return err;
	}
	kept_stacks_free(k);
	*k = n;
	return 0;
}

static bool same_frames(const struct ilock_stack_frames *a, const struct ilock_stack_frames *b)
{
	return a->nr == b->nr && a->nr <= ILOCK_STACK_DEPTH &&
	       !memcmp(a->ip, b->ip, a->nr * sizeof(a->ip[0]));
}

int kept_stacks_put(const struct kept_stacks *k, struct snapshot *cur, uint32_t dev, uint64_t ino,
		    uint32_t gen)
{
	size_t ncur = cur->nframes;  /* cur's own frames: the ones to match */

	for (size_t i = 0; i < k->s.nstacks; i++) {
		const struct stack_row *r = &k->s.stacks[i];
		const struct ilock_stack_frames *fr;
		struct ilock_stack_key key = r->k;
		int err;

		if (r->k.edge.dev != dev || r->k.edge.ino != ino || r->k.edge.gen != gen ||
		    !(fr = snap_find_frames(&k->s, r->k.kind, r->k.stack)))
			continue;
		key.stack = KEPT_STACK_ID_BASE + r->k.stack;
		for (size_t j = 0; j < ncur; j++)
			if (cur->frames[j].kind == r->k.kind && same_frames(&cur->frames[j].f, fr)) {
				key.stack = cur->frames[j].id;
				break;
			}
		if ((key.stack >= KEPT_STACK_ID_BASE && !snap_find_frames(cur, key.kind, key.stack) &&
		     (err = snap_add_frames(cur, key.kind, key.stack, fr))) ||
		    (err = snap_add_stack(cur, &key, &r->s)))
			return err;
	}
	return 0;
}
