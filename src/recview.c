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

bool rec_edge_match(const struct recording *r, const struct rec_edge *e, const struct filters *f)
{
	struct ilock_edge_key k;

	if (!f)
		return true;
	rec_edge_key(r, e, &k);
	return filters_match_edge(f, &k, r->inodes[e->inode].magic);
}

static int add_inode(const struct recording *r, uint32_t id, struct snapshot *s)
{
	const struct rec_inode *in = &r->inodes[id];

	if (!in->has_meta || snap_find_inode(s, in->dev, in->ino))
		return 0;
	return snap_add_inode(s, &in->meta);
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
		row = snap_lock(s, in->dev, in->ino, l->class);
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

		rec_edge_key(r, e, &key);
		if (f && !filters_match_edge(f, &key, r->inodes[e->inode].magic))
			continue;
		if ((err = snap_add_edge(s, &key, &e->s)) || (err = add_inode(r, e->inode, s)))
			return err;
	}
	return 0;
}

/*
 * Edges summed over a window by the file's small integer ids first, and
 * only then turned into the model's 72-byte keys: an hour holds hundreds
 * of thousands of edge records but a few hundred distinct pairs.
 */
struct edge_sum {
	uint64_t k1, k2;          /* packed ids; k2 == 0 marks an empty slot */
	uint64_t k3;              /* packed ops and range */
	size_t first;             /* an edge record with this key */
	struct ilock_edge_stats s;
};

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* The slot of a packed edge key in a table of mask + 1 slots. */
static size_t sum_slot(uint64_t k1, uint64_t k2, uint64_t k3, size_t mask)
{
	return mix64(k1 ^ mix64(k2 ^ mix64(k3))) & mask;
}

static int sum_edges(const struct recording *r, size_t i0, size_t i1, const struct filters *f,
		     struct snapshot *s)
{
	size_t cap = 1024, n = 0;
	struct edge_sum *t = calloc(cap, sizeof(*t));
	int err = 0;

	if (!t)
		return -ENOMEM;
	for (size_t i = i0; i < i1; i++) {
		const struct rec_interval *iv = &r->iv[i];

		for (size_t k = iv->edge0; k < iv->edge0 + iv->nedges; k++) {
			const struct rec_edge *e = &r->edges[k];
			uint64_t k1 = (uint64_t)e->inode << 32 | e->holder;
			/* +1: never 0, so 0 can mark an empty slot */
			uint64_t k2 = ((uint64_t)e->waiter << 32 | (uint64_t)e->class << 16 |
				       (uint64_t)e->holder_mode << 8 | e->waiter_mode) + 1;
			uint64_t k3 = (uint64_t)e->holder_op << 32 | (uint64_t)e->holder_op_flags << 24 |
				      (uint64_t)e->waiter_op << 16 | (uint64_t)e->waiter_op_flags << 8 |
				      e->range;
			size_t h;

			if ((n + 1) * 2 > cap) {
				struct edge_sum *nt = calloc(cap * 2, sizeof(*nt));

				if (!nt) {
					err = -ENOMEM;
					goto out;
				}
				for (size_t j = 0; j < cap; j++) {
					if (!t[j].k2)
						continue;
					h = sum_slot(t[j].k1, t[j].k2, t[j].k3, cap * 2 - 1);
					while (nt[h].k2)
						h = (h + 1) & (cap * 2 - 1);
					nt[h] = t[j];
				}
				free(t);
				t = nt;
				cap *= 2;
			}
			h = sum_slot(k1, k2, k3, cap - 1);
			while (t[h].k2 && (t[h].k1 != k1 || t[h].k2 != k2 || t[h].k3 != k3))
				h = (h + 1) & (cap - 1);
			if (!t[h].k2) {
				t[h].k1 = k1;
				t[h].k2 = k2;
				t[h].k3 = k3;
				t[h].first = k;
				n++;
			}
			t[h].s.count += e->s.count;
			t[h].s.total_ns += e->s.total_ns;
			if (e->s.max_ns > t[h].s.max_ns)
				t[h].s.max_ns = e->s.max_ns;
		}
	}
	for (size_t j = 0; j < cap; j++) {
		const struct rec_edge *e;
		struct ilock_edge_key key;

		if (!t[j].k2)
			continue;
		e = &r->edges[t[j].first];
		rec_edge_key(r, e, &key);
		if (f && !filters_match_edge(f, &key, r->inodes[e->inode].magic))
			continue;
		if ((err = snap_add_edge(s, &key, &t[j].s)) || (err = add_inode(r, e->inode, s)))
			goto out;
	}
out:
	free(t);
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
	if (i0 < i1 && (err = sum_edges(r, i0, i1, f, s)))
		return err;
	/* the per-lock range sums come from the edges, as in a live capture */
	if ((err = snap_ranges_from_edges(s)))
		return err;
	if (i1 > i0)
		s->mono_ns = r->iv[i1 - 1].t_start_ns + r->iv[i1 - 1].dur_ns;
	return 0;
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
	const char *end;
	char *e;
	double v;

	if (!arg || !*arg)
		goto bad;
	if (arg[0] == '@') {
		errno = 0;
		v = strtod(arg + 1, &e);
		if (errno || e == arg + 1 || *e || !(v >= 0))
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
		if (t + 1 < start)
			t += 86400;
		return from_abs(r, (double)t, ns, err, errlen, arg);
	}
	/* seconds from the start, with an optional unit */
	errno = 0;
	v = strtod(arg, &e);
	if (errno || e == arg || !(v >= 0) || v > 1e9)
		goto bad;
	if (!strcmp(e, "m"))
		v *= 60;
	else if (!strcmp(e, "h"))
		v *= 3600;
	else if (*e && strcmp(e, "s"))
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
