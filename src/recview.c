// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hist.h"
#include "recview.h"
#include "util.h"

uint32_t rec_lock_magic(const struct recording *r, const struct rec_lock *l)
{
	uint32_t m = r->inodes[l->inode].magic;

	return m ? m : l->has_hold ? ILOCK_XFS_SB_MAGIC : 0;
}

bool rec_lock_match(const struct recording *r, const struct rec_lock *l, const struct filters *f)
{
	const struct rec_inode *in = &r->inodes[l->inode];

	return !f || filters_match_lock(f, in->dev, in->ino, l->class, rec_lock_magic(r, l));
}

void rec_edge_key(const struct recording *r, const struct rec_edge *e, struct ilock_edge_key *k)
{
	const struct rec_inode *in = &r->inodes[e->inode];
	const struct rec_task *h = &r->tasks[e->holder], *w = &r->tasks[e->waiter];

	memset(k, 0, sizeof(*k));
	k->dev = in->dev;
	k->ino = in->ino;
	k->gen = in->gen;
	k->class = e->class;
	k->holder_mode = e->holder_mode;
	k->waiter_mode = e->waiter_mode;
	k->holder_pid = h->pid;
	k->holder_tgid = h->tgid;
	k->waiter_pid = w->pid;
	k->waiter_tgid = w->tgid;
	memcpy(k->holder_comm, h->comm, ILOCK_COMM_LEN);
	memcpy(k->waiter_comm, w->comm, ILOCK_COMM_LEN);
	k->holder_op = e->holder_op;
	k->holder_op_flags = e->holder_op_flags;
	k->waiter_op = e->waiter_op;
	k->waiter_op_flags = e->waiter_op_flags;
	k->range = e->range;
}

/* An edge record's model key into *key; false when the filters reject it. */
static bool edge_key_match(const struct recording *r, const struct rec_edge *e,
			   const struct filters *f, struct ilock_edge_key *key)
{
	rec_edge_key(r, e, key);
	return !f || filters_match_edge(f, key, r->inodes[e->inode].magic);
}

bool rec_edge_match(const struct recording *r, const struct rec_edge *e, const struct filters *f)
{
	struct ilock_edge_key k;

	return !f || edge_key_match(r, e, f, &k);
}

static int add_inode(const struct recording *r, uint32_t id, struct snapshot *s)
{
	const struct rec_inode *in = &r->inodes[id];

	if (!in->has_meta || snap_find_inode(s, in->dev, in->ino, in->gen))
		return 0;
	return snap_add_inode(s, &in->meta);
}

/* A recorded stack's frames into s, under its file id, at their stand-in addresses. */
static int add_frames(const struct recording *r, uint32_t id, struct snapshot *s)
{
	const struct rec_stack *st = &r->stacks[id];
	struct ilock_stack_frames fr = { .nr = st->nr };

	if (snap_find_frames(s, st->kind, id))
		return 0;
	for (unsigned i = 0; i < st->nr; i++)
		fr.ip[i] = REC_FRAME_ADDR(r->frame_ids[st->frame0 + i]);
	return snap_add_frames(s, st->kind, id, &fr);
}

/* One stack row's sum into s: the model's key is the edge's plus the stack. */
static int add_stack(const struct recording *r, const struct ilock_edge_key *edge, uint32_t id,
		     uint64_t count, uint64_t total_ns, struct snapshot *s)
{
	struct ilock_stack_key key = { .edge = *edge, .stack = id, .kind = r->stacks[id].kind };
	struct ilock_stack_stats st = { .count = count, .total_ns = total_ns };
	int err = snap_add_stack(s, &key, &st);

	return err ? err : add_frames(r, id, s);
}

/* An interval's counters, and its locks that pass the filters, into s. */
static int add_locks(const struct recording *r, const struct rec_interval *iv,
		     const struct filters *f, struct snapshot *s)
{
	int err;

	for (int c = 0; c < ILOCK_COUNTER_MAX; c++)
		s->counters[c] += iv->counters[c];
	s->in_flight = iv->in_flight;
	for (size_t k = iv->lock0; k < iv->lock0 + iv->nlocks; k++) {
		const struct rec_lock *l = &r->locks[k];
		const struct rec_inode *in = &r->inodes[l->inode];
		struct lock_row *row;

		if (!rec_lock_match(r, l, f))
			continue;
		row = snap_lock(s, in->dev, in->ino, in->gen, l->class);
		if (!row)
			return -ENOMEM;
		row->has_hold |= l->has_hold;
		for (int m = 0; m < 2; m++) {
			stats_merge(&row->wait[m], &l->wait[m]);
			stats_merge(&row->hold[m], &l->hold[m]);
		}
		if ((err = add_inode(r, l->inode, s)))
			return err;
	}
	return 0;
}

int rec_add_interval(const struct recording *r, size_t i, const struct filters *f,
		     struct snapshot *s)
{
	const struct rec_interval *iv = &r->iv[i];
	int err;

	if ((err = add_locks(r, iv, f, s)))
		return err;
	for (size_t k = iv->edge0; k < iv->edge0 + iv->nedges; k++) {
		const struct rec_edge *e = &r->edges[k];
		struct ilock_edge_key key;

		if (!e->s.count || !edge_key_match(r, e, f, &key))
			continue;
		if ((err = snap_add_edge(s, &key, &e->s)) || (err = add_inode(r, e->inode, s)))
			return err;
	}
	for (size_t k = iv->srow0; k < iv->srow0 + iv->nsrows; k++) {
		const struct rec_stack_row *row = &r->srows[k];
		struct ilock_edge_key key;

		if (!edge_key_match(r, &r->edges[row->edge], f, &key))
			continue;
		if ((err = add_stack(r, &key, row->stack, row->count, row->total_ns, s)))
			return err;
	}
	return 0;
}

/*
 * Edges (and stack rows) summed over a window by the file's small integer
 * ids first, and only then turned into the model's 72-byte keys: an hour
 * holds hundreds of thousands of edge records but a few hundred distinct
 * pairs.
 */
struct psum {
	uint64_t k1, k2;          /* packed ids; k2 == 0 marks an empty slot */
	uint64_t k3;              /* packed ops and range */
	uint64_t k4;              /* stack id + 1 for stack rows, else 0 */
	size_t first;             /* an edge record with this key */
	struct ilock_edge_stats s;
};

struct psum_table {
	struct psum *t;
	size_t cap, n;
};

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* The slot of a packed key in a table of mask + 1 slots. */
static size_t sum_slot(const struct psum *p, size_t mask)
{
	return mix64(p->k1 ^ mix64(p->k2 ^ mix64(p->k3 ^ mix64(p->k4)))) & mask;
}

/* The sum for edge record e (with stack id + 1, or 0); NULL when out of memory. */
static struct psum *psum_get(struct psum_table *t, const struct recording *r, size_t edge,
			     uint64_t k4)
{
	const struct rec_edge *e = &r->edges[edge];
	/* +1 in k2: never 0, so 0 can mark an empty slot */
	struct psum key = {
		.k1 = (uint64_t)e->inode << 32 | e->holder,
		.k2 = ((uint64_t)e->waiter << 32 | (uint64_t)e->class << 16 |
		       (uint64_t)e->holder_mode << 8 | e->waiter_mode) + 1,
		.k3 = (uint64_t)e->holder_op << 32 | (uint64_t)e->holder_op_flags << 24 |
		      (uint64_t)e->waiter_op << 16 | (uint64_t)e->waiter_op_flags << 8 | e->range,
		.k4 = k4,
		.first = edge,
	};
	size_t h;

	if ((t->n + 1) * 2 > t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 1024;
		struct psum *nt = calloc(ncap, sizeof(*nt));

		if (!nt)
			return NULL;
		for (size_t j = 0; j < t->cap; j++) {
			if (!t->t[j].k2)
				continue;
			h = sum_slot(&t->t[j], ncap - 1);
			while (nt[h].k2)
				h = (h + 1) & (ncap - 1);
			nt[h] = t->t[j];
		}
		free(t->t);
		t->t = nt;
		t->cap = ncap;
	}
	h = sum_slot(&key, t->cap - 1);
	while (t->t[h].k2 && (t->t[h].k1 != key.k1 || t->t[h].k2 != key.k2 ||
			      t->t[h].k3 != key.k3 || t->t[h].k4 != key.k4))
		h = (h + 1) & (t->cap - 1);
	if (!t->t[h].k2) {
		t->t[h] = key;
		t->n++;
	}
	return &t->t[h];
}

/* The edge key of a sum, or false when the filters reject it. */
static bool psum_key(const struct recording *r, const struct psum *p, const struct filters *f,
		     struct ilock_edge_key *key)
{
	return edge_key_match(r, &r->edges[p->first], f, key);
}

static int sum_edges(const struct recording *r, size_t i0, size_t i1, const struct filters *f,
		     struct snapshot *s)
{
	struct psum_table t = {};
	int err = 0;

	for (size_t i = i0; i < i1; i++) {
		const struct rec_interval *iv = &r->iv[i];

		for (size_t k = iv->edge0; k < iv->edge0 + iv->nedges; k++) {
			const struct rec_edge *e = &r->edges[k];
			struct psum *p = psum_get(&t, r, k, 0);

			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			p->s.count += e->s.count;
			p->s.total_ns += e->s.total_ns;
			if (e->s.max_ns > p->s.max_ns)
				p->s.max_ns = e->s.max_ns;
		}
	}
	for (size_t j = 0; j < t.cap; j++) {
		struct ilock_edge_key key;

		/* an edge written only for its stacks has no waits of its own */
		if (!t.t[j].k2 || !t.t[j].s.count || !psum_key(r, &t.t[j], f, &key))
			continue;
		if ((err = snap_add_edge(s, &key, &t.t[j].s)) ||
		    (err = add_inode(r, r->edges[t.t[j].first].inode, s)))
			goto out;
	}
out:
	free(t.t);
	return err;
}

static int sum_stacks(const struct recording *r, size_t i0, size_t i1, const struct filters *f,
		      struct snapshot *s)
{
	struct psum_table t = {};
	int err = 0;

	for (size_t i = i0; i < i1; i++) {
		const struct rec_interval *iv = &r->iv[i];

		for (size_t k = iv->srow0; k < iv->srow0 + iv->nsrows; k++) {
			const struct rec_stack_row *row = &r->srows[k];
			struct psum *p = psum_get(&t, r, row->edge, (uint64_t)row->stack + 1);

			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			p->s.count += row->count;
			p->s.total_ns += row->total_ns;
		}
	}
	for (size_t j = 0; j < t.cap; j++) {
		struct ilock_edge_key key;

		if (!t.t[j].k2 || !psum_key(r, &t.t[j], f, &key))
			continue;
		if ((err = add_stack(r, &key, (uint32_t)(t.t[j].k4 - 1), t.t[j].s.count,
				     t.t[j].s.total_ns, s)))
			goto out;
	}
out:
	free(t.t);
	return err;
}

int rec_merge_window(const struct recording *r, size_t i0, size_t i1, const struct filters *f,
		     struct snapshot *s)
{
	int err;

	snap_reset(s);
	if (i1 > r->niv)
		i1 = r->niv;
	for (size_t i = i0; i < i1; i++)
		if ((err = add_locks(r, &r->iv[i], f, s)))
			return err;
	if (i0 < i1 && ((err = sum_edges(r, i0, i1, f, s)) || (err = sum_stacks(r, i0, i1, f, s))))
		return err;
	/* the per-lock range sums come from the edges, as in a live capture */
	if ((err = snap_ranges_from_edges(s)))
		return err;
	if (i1 > i0)
		s->mono_ns = r->iv[i1 - 1].t_start_ns + r->iv[i1 - 1].dur_ns;
	return 0;
}

int rec_window(const struct recording *r, const char *from_s, const char *to_s, size_t *i0,
	       size_t *i1, char *err, size_t errlen)
{
	uint64_t from = 0, to = UINT64_MAX;
	char end[32];

	if ((from_s && !rec_parse_time(r, from_s, &from, err, errlen)) ||
	    (to_s && !rec_parse_time(r, to_s, &to, err, errlen)))
		return -EINVAL;
	if (from >= to) {
		snprintf(err, errlen, "--from (%.1f s) must come before --to (%.1f s)",
			 (double)from / 1e9, (double)to / 1e9);
		return -EINVAL;
	}
	rec_select(r, from, to, i0, i1);
	if (*i1 > *i0)
		return 0;
	if (to == UINT64_MAX)
		snprintf(end, sizeof(end), "the end");
	else
		snprintf(end, sizeof(end), "%.1f s", (double)to / 1e9);
	snprintf(err, errlen, "no data in the time window %.1f s to %s (the recording covers "
		 "0.0 s to %.1f s in intervals of %g s; an interval is in a window when its middle "
		 "is)", (double)from / 1e9, end, (double)rec_end_ns(r) / 1e9,
		 (double)r->interval_ns / 1e9);
	return -ENODATA;
}

void rec_select(const struct recording *r, uint64_t from_ns, uint64_t to_ns, size_t *i0,
		size_t *i1)
{
	size_t a = r->niv, b = 0;

	for (size_t i = 0; i < r->niv; i++) {
		uint64_t mid = r->iv[i].t_start_ns + r->iv[i].dur_ns / 2;

		if (mid < from_ns || mid >= to_ns)
			continue;
		if (a == r->niv)
			a = i;
		b = i + 1;
	}
	*i0 = a == r->niv ? 0 : a;
	*i1 = a == r->niv ? 0 : b;
}

uint64_t rec_end_ns(const struct recording *r)
{
	uint64_t end = 0;

	for (size_t i = 0; i < r->niv; i++)
		if (r->iv[i].t_start_ns + r->iv[i].dur_ns > end)
			end = r->iv[i].t_start_ns + r->iv[i].dur_ns;
	return end;
}

uint64_t rec_dur_ns(const struct recording *r)
{
	uint64_t ns = 0;

	for (size_t i = 0; i < r->niv; i++)
		ns += r->iv[i].dur_ns;
	return ns;
}

static bool from_abs(const struct recording *r, double abs_s, uint64_t *ns, char *err,
		     size_t errlen, const char *arg)
{
	double start_s = (double)r->start_realtime_ns / 1e9;

	if (!r->start_realtime_ns) {
		snprintf(err, errlen, "%s: the recording has no start time; give seconds from the start",
			 arg);
		return false;
	}
	*ns = abs_s <= start_s ? 0 : (uint64_t)llround((abs_s - start_s) * 1e9);
	return true;
}

bool rec_parse_time(const struct recording *r, const char *arg, uint64_t *ns, char *err,
		    size_t errlen)
{
	struct tm tm = {};
	const char *end, *e;
	double v;
	size_t n;

	if (!arg || !*arg)
		goto bad;
	if (arg[0] == '@') {
		n = parse_decimal(arg + 1, &v);
		if (!n || arg[1 + n])
			goto bad;
		return from_abs(r, v, ns, err, errlen, arg);
	}
	/* a local date and time */
	end = strptime(arg, "%Y-%m-%d %H:%M:%S", &tm);
	if (!end || *end) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(arg, "%Y-%m-%dT%H:%M:%S", &tm);
	}
	if (!end || *end) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(arg, "%Y-%m-%d %H:%M", &tm);
	}
	if (end && !*end) {
		tm.tm_isdst = -1;
		return from_abs(r, (double)mktime(&tm), ns, err, errlen, arg);
	}
	/* a time of day on the recording's first day (or the next, if earlier) */
	memset(&tm, 0, sizeof(tm));
	end = strptime(arg, "%H:%M:%S", &tm);
	if (!end || *end) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(arg, "%H:%M", &tm);
	}
	if (end && !*end && strchr(arg, ':')) {
		time_t start = (time_t)(r->start_realtime_ns / 1000000000ULL);
		struct tm day;
		time_t t;

		if (!r->start_realtime_ns)
			return from_abs(r, 0, ns, err, errlen, arg);
		localtime_r(&start, &day);
		day.tm_hour = tm.tm_hour;
		day.tm_min = tm.tm_min;
		day.tm_sec = tm.tm_sec;
		day.tm_isdst = -1;
		t = mktime(&day);
		/*
		 * Far before the start it means the next day (a recording over
		 * midnight); a little before (the minute it started in, "--from
		 * 02:10" for one started at 02:10:47) it means the start.
		 */
		if (t + 12 * 3600 < start)
			t += 86400;
		return from_abs(r, (double)t, ns, err, errlen, arg);
	}
	/* seconds from the start, a plain decimal with an optional unit */
	n = parse_decimal(arg, &v);
	if (!n)
		goto bad;
	e = arg + n;
	if (!strcmp(e, "m"))
		v *= 60;
	else if (!strcmp(e, "h"))
		v *= 3600;
	else if (*e && strcmp(e, "s"))
		goto bad;
	/* after the unit: 99999999h in ns would overflow */
	if (v > 1e9)
		goto bad;
	*ns = (uint64_t)llround(v * 1e9);
	return true;
bad:
	snprintf(err, errlen,
		 "bad time '%s': seconds from the start (90, 1.5, 2m), HH:MM[:SS], "
		 "YYYY-MM-DD HH:MM[:SS] or @UNIXSECONDS", arg ? arg : "");
	return false;
}

void rec_fill_meta(const struct recording *r, struct report_meta *m, double duration_s)
{
	memset(m, 0, sizeof(*m));
	m->kernel = rec_meta(r, "kernel");
	m->hostname = rec_meta(r, "hostname");
	m->duration_s = duration_s;
	m->mounts = &r->mounts;
	m->titles = &r->titles;
	m->filters = rec_meta(r, "filters");
	for (size_t i = 0; i < r->nmeta && m->nattach < RENDER_MAX_ATTACH; i++) {
		if (strncmp(r->meta[i].key, "attach.", 7))
			continue;
		m->attach[m->nattach].probe = r->meta[i].key + 7;
		m->attach[m->nattach].mode = r->meta[i].val;
		m->nattach++;
	}
}

size_t rec_find_inodes(const struct recording *r, uint32_t dev, uint64_t ino, uint32_t *ids,
		       size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < r->ninodes && n < max; i++)
		if (r->inodes[i].dev == dev && r->inodes[i].ino == ino)
			ids[n++] = (uint32_t)i;
	return n;
}
