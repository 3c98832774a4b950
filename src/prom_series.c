// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which series the exporter shows, and their values. Pure: one cumulative
 * snapshot in, bounded series out.
 *
 * Series must stay stable and counters monotonic while the hot inodes
 * change. So an inode, once among the top K of an interval, keeps its own
 * series for good, up to 2 * K inodes; the rest fold into inode="other".
 * An inode admitted at a collection counts from the previous one: what it
 * waited before that was already exported in "other" and stays there (its
 * baseline), so "other" never goes down and the per-inode series of a
 * (device, class, mode) still add up exactly to the aggregate.
 * Holder/waiter command pairs work the same way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "prom.h"
#include "render.h"
#include "util.h"

static void *grow(void *arr, size_t *cap, size_t need, size_t esz)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return arr;
	ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	p = realloc(arr, ncap * esz);
	if (!p)
		return NULL;
	*cap = ncap;
	return p;
}

int prom_series_init(struct prom_series *ps, unsigned top_k, size_t max_pairs)
{
	memset(ps, 0, sizeof(*ps));
	ps->top_k = top_k;
	ps->max_inodes = (size_t)top_k * 2;
	ps->max_pairs = max_pairs;
	return 0;
}

void prom_series_free(struct prom_series *ps)
{
	free(ps->groups);
	free(ps->inodes);
	free(ps->retired);
	free(ps->gone_ids);
	free(ps->pairs);
	free(ps->folded);
	free(ps->pairs_retired);
	free(ps->devs);
	free(ps->ops);
	free(ps->totals);
	free(ps->agg);
	free(ps->prev_agg);
	snap_free(&ps->fold);
	snap_free(&ps->prev_fold);
	memset(ps, 0, sizeof(*ps));
}

/* qsort, but fine with an empty (NULL) array */
static void sort_n(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* a -= b for cumulative stats read twice; saturates at 0. max is not kept. */
static void stats_sub(struct ilock_stats *a, const struct ilock_stats *b)
{
	a->count = a->count > b->count ? a->count - b->count : 0;
	a->total_ns = a->total_ns > b->total_ns ? a->total_ns - b->total_ns : 0;
	for (unsigned i = 0; i < ILOCK_HIST_SLOTS; i++)
		a->hist[i] = a->hist[i] > b->hist[i] ? a->hist[i] - b->hist[i] : 0;
	a->max_ns = 0;
}

/* ---- devices: the fs label, decided once so label sets never change ---- */

const char *prom_dev_fs(const struct prom_series *ps, uint32_t dev)
{
	for (size_t i = 0; i < ps->ndevs; i++)
		if (ps->devs[i].dev == dev)
			return ps->devs[i].fs;
	return "unknown";
}

static int note_dev(struct prom_series *ps, const struct snapshot *s, const struct mount_table *mt,
		    const struct lock_row *r)
{
	struct inode_view v;
	struct prom_devfs *d;

	for (size_t i = 0; i < ps->ndevs; i++)
		if (ps->devs[i].dev == r->dev)
			return 0;
	d = grow(ps->devs, &ps->cap_devs, ps->ndevs + 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	ps->devs = d;
	d = &ps->devs[ps->ndevs++];
	memset(d, 0, sizeof(*d));
	d->dev = r->dev;
	describe_inode(s, mt, r->dev, r->ino, r->gen, r->has_hold, &v);
	snprintf(d->fs, sizeof(d->fs), "%s", v.fs ? v.fs : "unknown");
	return 0;
}

/* ---- aggregates per (dev, class) ---- */

static int cmp_group(const void *pa, const void *pb)
{
	const struct prom_group *a = pa, *b = pb;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return (int)a->class - (int)b->class;
}

static struct prom_group *find_group(const struct prom_series *ps, uint32_t dev, uint8_t class)
{
	struct prom_group key = { .dev = dev, .class = class };

	return ps->ngroups ? bsearch(&key, ps->groups, ps->ngroups, sizeof(key), cmp_group) : NULL;
}

static int build_groups(struct prom_series *ps, const struct snapshot *s)
{
	struct prom_group *last = NULL;

	ps->ngroups = 0;
	for (size_t i = 0; i < s->nlocks; i++) {
		const struct lock_row *r = &s->locks[i];
		struct prom_group *g = last;

		if (!g || g->dev != r->dev || g->class != r->class) {
			g = NULL;
			for (size_t j = 0; j < ps->ngroups; j++)
				if (ps->groups[j].dev == r->dev && ps->groups[j].class == r->class)
					g = &ps->groups[j];
		}
		if (!g) {
			g = grow(ps->groups, &ps->cap_groups, ps->ngroups + 1, sizeof(*g));
			if (!g)
				return -ENOMEM;
			ps->groups = g;
			g = &ps->groups[ps->ngroups++];
			memset(g, 0, sizeof(*g));
			g->dev = r->dev;
			g->class = r->class;
		}
		g->has_hold |= r->has_hold;
		for (int m = 0; m < 2; m++) {
			stats_merge(&g->wait[m], &r->wait[m]);
			stats_merge(&g->hold[m], &r->hold[m]);
		}
		ranges_merge(g->range, r->range);
		last = g;
	}
	sort_n(ps->groups, ps->ngroups, sizeof(*ps->groups), cmp_group);
	for (size_t i = 0; i < ps->ngroups; i++)
		for (int m = 0; m < 2; m++)
			ps->groups[i].other[m] = ps->groups[i].wait[m];
	return 0;
}

/* ---- per-inode totals and the interval ranking ---- */

static int cmp_total(const void *pa, const void *pb)
{
	const struct prom_ino_total *a = pa, *b = pb;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

/* Largest interval wait first; then total; then (dev, ino) so ties are stable. */
static int cmp_rank(const void *pa, const void *pb)
{
	const struct prom_ino_total *a = *(const struct prom_ino_total *const *)pa;
	const struct prom_ino_total *b = *(const struct prom_ino_total *const *)pb;

	if (a->delta_ns != b->delta_ns)
		return a->delta_ns > b->delta_ns ? -1 : 1;
	if (a->wait_ns != b->wait_ns)
		return a->wait_ns > b->wait_ns ? -1 : 1;
	return cmp_total(a, b);
}

static uint64_t inode_wait_ns(const struct snapshot *s, uint32_t dev, uint64_t ino)
{
	uint64_t ns = 0;

	for (uint8_t c = 0; c < ILOCK_CLASS_MAX; c++) {
		const struct lock_row *r = snap_find_lock(s, dev, ino, 0, c);

		if (r)
			ns += row_wait_ns(r);
	}
	return ns;
}

/* An inode's identity for ilock_contended_inodes: (dev, ino) mixed (splitmix64's finaliser). */
static uint64_t inode_id(uint32_t dev, uint64_t ino)
{
	uint64_t z = ino ^ ((uint64_t)dev << 40 | (uint64_t)dev >> 24);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

static bool retired_id_known(const struct prom_series *ps, uint64_t id)
{
	return ps->ngone_ids && bsearch(&id, ps->gone_ids, ps->ngone_ids, sizeof(id), cmp_u64);
}

static int build_totals(struct prom_series *ps, const struct snapshot *s,
			const struct snapshot *prev)
{
	struct prom_ino_total *t;
	size_t n = 0, j = 0;

	t = grow(ps->totals, &ps->cap_totals, s->nlocks ? s->nlocks : 1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	ps->totals = t;
	for (size_t i = 0; i < s->nlocks; i++) {
		const struct lock_row *r = &s->locks[i];

		if (!row_waits(r))
			continue;  /* XFS holds alone: not contended */
		t[n++] = (struct prom_ino_total){ .dev = r->dev, .ino = r->ino,
						  .wait_ns = row_wait_ns(r) };
	}
	sort_n(t, n, sizeof(*t), cmp_total);
	/* merge the classes of one inode */
	for (size_t i = 0; i < n; i++) {
		if (j && t[j - 1].dev == t[i].dev && t[j - 1].ino == t[i].ino)
			t[j - 1].wait_ns += t[i].wait_ns;
		else
			t[j++] = t[i];
	}
	ps->ntotals = j;
	/* this interval's wait: the ranking key */
	for (size_t i = 0; i < ps->ntotals; i++) {
		uint64_t before = prev ? inode_wait_ns(prev, t[i].dev, t[i].ino) : 0;

		t[i].delta_ns = t[i].wait_ns > before ? t[i].wait_ns - before : 0;
	}
	/*
	 * A row of waits kept without their inode is no inode; those retired
	 * still count, once, whether they waited again since or not.
	 */
	ps->contended_inodes = ps->retired_inodes;
	for (size_t i = 0; i < ps->ntotals; i++)
		ps->contended_inodes += t[i].ino != ILOCK_INO_FOLDED &&
					!retired_id_known(ps, inode_id(t[i].dev, t[i].ino));
	return 0;
}

static int cmp_inode_key(const void *pa, const void *pb)
{
	const struct prom_inode *a = pa, *b = pb;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

static struct prom_inode *find_tracked(const struct prom_series *ps, uint32_t dev, uint64_t ino)
{
	struct prom_inode key;

	key.dev = dev;
	key.ino = ino;
	return ps->ninodes ? bsearch(&key, ps->inodes, ps->ninodes, sizeof(key), cmp_inode_key)
			   : NULL;
}

static void inode_path(const struct snapshot *s, const struct mount_table *mt, uint32_t dev,
		       uint64_t ino, char *out, size_t len)
{
	struct inode_view v;

	describe_inode(s, mt, dev, ino, 0, false, &v);  /* generations folded */
	if (v.path[0])
		snprintf(out, len, "%s", v.path);
	else
		snprintf(out, len, "%s", v.rel);  /* from the fs root, or "" */
}

static int admit_inode(struct prom_series *ps, const struct snapshot *s,
		       const struct snapshot *prev, const struct mount_table *mt,
		       const struct prom_ino_total *t)
{
	struct prom_inode *arr, *ni;
	size_t pos = 0;

	/* capacity for max_inodes is reserved lazily, in one step */
	arr = realloc(ps->inodes, (ps->ninodes + 1) * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	ps->inodes = arr;
	while (pos < ps->ninodes && (arr[pos].dev < t->dev ||
				     (arr[pos].dev == t->dev && arr[pos].ino < t->ino)))
		pos++;
	memmove(&arr[pos + 1], &arr[pos], (ps->ninodes - pos) * sizeof(*arr));
	ps->ninodes++;
	ni = &arr[pos];
	memset(ni, 0, sizeof(*ni));
	ni->dev = t->dev;
	ni->ino = t->ino;
	inode_path(s, mt, t->dev, t->ino, ni->path, sizeof(ni->path));
	/* up to prev, its waits were exported in "other": they stay there */
	for (uint8_t c = 0; prev && c < ILOCK_CLASS_MAX; c++) {
		const struct lock_row *r = snap_find_lock(prev, t->dev, t->ino, 0, c);

		if (r)
			for (int m = 0; m < 2; m++)
				ni->base[c][m] = r->wait[m];
	}
	return 0;
}

static int admit_inodes(struct prom_series *ps, const struct snapshot *s,
			const struct snapshot *prev, const struct mount_table *mt)
{
	const struct prom_ino_total **cand;
	size_t n = 0;
	int err = 0;

	if (ps->ninodes >= ps->max_inodes || !ps->ntotals)
		return 0;
	cand = malloc(ps->ntotals * sizeof(*cand));
	if (!cand)
		return -ENOMEM;
	/* waits kept without their inode (a full table) are inode="other" by nature */
	for (size_t i = 0; i < ps->ntotals; i++)
		if (ps->totals[i].delta_ns && ps->totals[i].ino != ILOCK_INO_FOLDED)
			cand[n++] = &ps->totals[i];
	sort_n(cand, n, sizeof(*cand), cmp_rank);
	for (size_t i = 0; i < n && i < ps->top_k && ps->ninodes < ps->max_inodes; i++) {
		if (find_tracked(ps, cand[i]->dev, cand[i]->ino))
			continue;
		err = admit_inode(ps, s, prev, mt, cand[i]);
		if (err)
			break;
	}
	free(cand);
	return err;
}

static struct prom_retired *find_retired(const struct prom_series *ps, uint32_t dev, uint8_t class)
{
	for (size_t i = 0; i < ps->nretired; i++)
		if (ps->retired[i].dev == dev && ps->retired[i].class == class)
			return &ps->retired[i];
	return NULL;
}

/*
 * own = now - base for every tracked inode; the group's "other" loses own,
 * and what the series retired for idleness counted (retire_idle_inodes).
 */
static void settle_inodes(struct prom_series *ps, const struct snapshot *s)
{
	for (size_t i = 0; i < ps->nretired; i++) {
		const struct prom_retired *rt = &ps->retired[i];
		struct prom_group *g = find_group(ps, rt->dev, rt->class);

		for (int m = 0; g && m < 2; m++)
			stats_sub(&g->other[m], &rt->wait[m]);
	}
	for (size_t i = 0; i < ps->ninodes; i++) {
		struct prom_inode *ni = &ps->inodes[i];

		for (uint8_t c = 0; c < ILOCK_CLASS_MAX; c++) {
			const struct lock_row *r = snap_find_lock(s, ni->dev, ni->ino, 0, c);
			struct prom_group *g = find_group(ps, ni->dev, c);

			if (!r || !g)
				continue;  /* rows never vanish while tracing; be safe */
			for (int m = 0; m < 2; m++) {
				ni->present[c][m] |= r->wait[m].count > 0;
				ni->own[c][m] = r->wait[m];
				stats_sub(&ni->own[c][m], &ni->base[c][m]);
				stats_sub(&g->other[m], &ni->own[c][m]);
			}
		}
	}
}

/* An inode's waits in its own series, all classes and modes: they move or not. */
static uint64_t inode_own_count(const struct prom_inode *ni)
{
	uint64_t n = 0;

	for (uint8_t c = 0; c < ILOCK_CLASS_MAX; c++)
		n += ni->own[c][0].count + ni->own[c][1].count;
	return n;
}

/*
 * ni's series go; what they counted stays out of "other" (settle_inodes).
 * Every entry is made before any is added to, so that a failure adds nothing.
 */
static int retire_inode(struct prom_series *ps, const struct prom_inode *ni)
{
	for (uint8_t c = 0; c < ILOCK_CLASS_MAX; c++) {
		struct prom_retired *rt;

		if ((!ni->present[c][0] && !ni->present[c][1]) || find_retired(ps, ni->dev, c))
			continue;
		rt = grow(ps->retired, &ps->cap_retired, ps->nretired + 1, sizeof(*rt));
		if (!rt)
			return -ENOMEM;
		ps->retired = rt;
		rt = &ps->retired[ps->nretired++];
		memset(rt, 0, sizeof(*rt));
		rt->dev = ni->dev;
		rt->class = c;
	}
	for (uint8_t c = 0; c < ILOCK_CLASS_MAX; c++) {
		struct prom_retired *rt = find_retired(ps, ni->dev, c);

		for (int m = 0; rt && (ni->present[c][0] || ni->present[c][1]) && m < 2; m++)
			stats_merge(&rt->wait[m], &ni->own[c][m]);
	}
	return 0;
}

/* Notes a series' count at now; true once it has not moved for idle_ns (0: never). */
static bool series_idle(uint64_t count, uint64_t *last_count, uint64_t *active_ns, uint64_t now,
			uint64_t idle_ns)
{
	if (count != *last_count || !*active_ns) {
		*last_count = count;
		*active_ns = now;
		return false;
	}
	return idle_ns && now - *active_ns >= idle_ns;
}

/*
 * After settle_inodes: an inode whose own waits have not moved for idle_ns
 * gives its place up to the files hot now (admit_inodes, next update).
 * "other" already lacks its waits in this update, and keeps lacking them
 * through ps->retired: no counter jumps. Waits on it from now on count in
 * "other", until it is admitted again, counting from then.
 */
static int retire_idle_inodes(struct prom_series *ps, uint64_t now)
{
	size_t j = 0;
	int err = 0;

	for (size_t i = 0; i < ps->ninodes; i++) {
		struct prom_inode *ni = &ps->inodes[i];

		if (series_idle(inode_own_count(ni), &ni->last_count, &ni->active_ns, now, ps->idle_ns) &&
		    !err && !(err = retire_inode(ps, ni))) {
			ps->inode_series_retired++;
			continue;
		}
		if (j != i)
			ps->inodes[j] = *ni;
		j++;
	}
	ps->ninodes = j;
	return err;
}

/* ---- holder/waiter pairs by command name ---- */

static int cmp_pair_key(const struct prom_pair_key *a, const struct prom_pair_key *b)
{
	int c;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->class != b->class)
		return (int)a->class - (int)b->class;
	if (a->folded != b->folded)
		return (int)a->folded - (int)b->folded;
	c = strncmp(a->holder_comm, b->holder_comm, ILOCK_COMM_LEN);
	if (!c)
		c = strncmp(a->waiter_comm, b->waiter_comm, ILOCK_COMM_LEN);
	if (!c)
		c = strcmp(a->holder_role, b->holder_role);
	if (!c)
		c = strcmp(a->waiter_role, b->waiter_role);
	if (!c)
		c = (int)a->holder_mode - (int)b->holder_mode;
	if (!c)
		c = (int)a->waiter_mode - (int)b->waiter_mode;
	return c;
}

static int cmp_pair(const void *pa, const void *pb)
{
	return cmp_pair_key(&((const struct prom_pair *)pa)->k, &((const struct prom_pair *)pb)->k);
}

static const struct prom_pair *find_pair(const struct prom_pair *arr, size_t n,
					 const struct prom_pair *key)
{
	return n ? bsearch(key, arr, n, sizeof(*arr), cmp_pair) : NULL;
}

static int cmp_pair_rank(const void *pa, const void *pb)
{
	const struct prom_pair *a = *(const struct prom_pair *const *)pa;
	const struct prom_pair *b = *(const struct prom_pair *const *)pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return cmp_pair(a, b);
}

/* The role of a thread named comm (comm_role'd in role_of_comm): its title's, else that. */
static void role_of(char *out, const struct titles *ti, uint32_t pid, const char *comm,
		    const char *role_of_comm)
{
	const char *role = ti && pid ? titles_role(ti, pid, comm) : NULL;

	snprintf(out, ILOCK_TITLE_MAX, "%s", role && role[0] ? role : role_of_comm);
}

static void pair_key_of(struct prom_pair_key *k, const struct ilock_edge_key *e,
			const struct titles *ti)
{
	memset(k, 0, sizeof(*k));
	k->dev = e->dev;
	k->class = e->class;
	k->holder_mode = e->holder_mode;
	k->waiter_mode = e->waiter_mode;
	/*
	 * By role: a pool's threads (io_uring's iou-wrk-<tid>) are one series,
	 * not one per thread id. comm_role ends the key's names with a NUL.
	 */
	comm_role(k->holder_comm, e->holder_comm);
	comm_role(k->waiter_comm, e->waiter_comm);
	/* a holder not named (no owner, readers unnamed) has no title either */
	role_of(k->holder_role, ti, e->holder_mode == ILOCK_MODE_UNKNOWN ? 0 : e->holder_pid,
		e->holder_comm, k->holder_comm);
	role_of(k->waiter_role, ti, e->waiter_pid, e->waiter_comm, k->waiter_comm);
}

static bool pair_foldable_only(const struct prom_pair_key *k)
{
	/* its labels would be those of the folded series */
	return !strcmp(k->holder_comm, "other") && !strcmp(k->waiter_comm, "other") &&
	       !strcmp(k->holder_role, "other") && !strcmp(k->waiter_role, "other");
}

/* The "other" pair k folds into: its device, class and modes. */
static void folded_key(struct prom_pair_key *f, const struct prom_pair_key *k)
{
	*f = *k;
	memset(f->holder_comm, 0, sizeof(f->holder_comm));
	memset(f->waiter_comm, 0, sizeof(f->waiter_comm));
	strcpy(f->holder_comm, "other");
	strcpy(f->waiter_comm, "other");
	snprintf(f->holder_role, sizeof(f->holder_role), "other");
	snprintf(f->waiter_role, sizeof(f->waiter_role), "other");
	f->folded = 1;
}

/*
 * Adds count and ns to the "other" pair k folds into, in arr (ps->folded;
 * ps->pairs_retired for what retired pairs counted), made when new.
 */
static int fold_pair(struct prom_pair **arr, size_t *n, size_t *cap, const struct prom_pair_key *k,
		     uint64_t count, uint64_t ns)
{
	struct prom_pair f = {}, *a;

	if (!count && !ns)
		return 0;
	folded_key(&f.k, k);
	for (size_t i = 0; i < *n; i++) {
		if (!cmp_pair(&(*arr)[i], &f)) {
			(*arr)[i].count += count;
			(*arr)[i].ns += ns;
			return 0;
		}
	}
	a = grow(*arr, cap, *n + 1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*arr = a;
	f.count = count;
	f.ns = ns;
	a[(*n)++] = f;
	return 0;
}

/* Edges merged by comm/role/mode pair (pids and inodes dropped), sorted. */
static int aggregate_pairs(const struct snapshot *s, const struct titles *ti,
			   struct prom_pair **arr, size_t *cap, size_t *nout)
{
	struct prom_pair *agg = grow(*arr, cap, s->nedges ? s->nedges : 1, sizeof(*agg));
	size_t n = 0, j = 0;

	if (!agg)
		return -ENOMEM;
	*arr = agg;
	for (size_t i = 0; i < s->nedges; i++) {
		memset(&agg[n], 0, sizeof(agg[n]));
		pair_key_of(&agg[n].k, &s->edges[i].k, ti);
		agg[n].count = s->edges[i].s.count;
		agg[n].ns = s->edges[i].s.total_ns;
		n++;
	}
	sort_n(agg, n, sizeof(*agg), cmp_pair);
	for (size_t i = 0; i < n; i++) {
		if (j && !cmp_pair(&agg[j - 1], &agg[i])) {
			agg[j - 1].count += agg[i].count;
			agg[j - 1].ns += agg[i].ns;
		} else {
			agg[j++] = agg[i];
		}
	}
	*nout = j;
	return 0;
}

static int update_pairs(struct prom_series *ps, const struct snapshot *s,
			const struct snapshot *prev)
{
	const struct prom_pair **cand = NULL;
	struct prom_pair *agg;
	size_t n, ncand = 0;
	int err;

	ps->nprev_agg = 0;
	if ((err = aggregate_pairs(s, ps->titles, &ps->agg, &ps->cap_agg, &ps->nagg)) ||
	    (prev && (err = aggregate_pairs(prev, ps->titles, &ps->prev_agg, &ps->cap_prev_agg,
					    &ps->nprev_agg))))
		return err;
	agg = ps->agg;
	n = ps->nagg;
	ps->pairs_seen = n;

	/* admit the costliest untracked pairs while there is room */
	if (ps->npairs < ps->max_pairs && n) {
		cand = malloc(n * sizeof(*cand));
		if (!cand)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			if (!pair_foldable_only(&agg[i].k) && !find_pair(ps->pairs, ps->npairs, &agg[i]))
				cand[ncand++] = &agg[i];
		sort_n(cand, ncand, sizeof(*cand), cmp_pair_rank);
		if (ncand) {
			size_t room = ps->max_pairs - ps->npairs, add = ncand < room ? ncand : room;
			struct prom_pair *arr = realloc(ps->pairs, (ps->npairs + add) * sizeof(*arr));

			if (!arr) {
				free(cand);
				return -ENOMEM;
			}
			ps->pairs = arr;
			for (size_t i = 0; i < add; i++) {
				struct prom_pair *p = &ps->pairs[ps->npairs++];
				const struct prom_pair *before =
					find_pair(ps->prev_agg, ps->nprev_agg, cand[i]);

				*p = *cand[i];
				/* as for inodes: what prev exported in "other" stays there */
				p->base_count = before ? before->count : 0;
				p->base_ns = before ? before->ns : 0;
			}
			sort_n(ps->pairs, ps->npairs, sizeof(*ps->pairs), cmp_pair);
		}
		free(cand);
	}

	/* tracked pairs show now - base; everything else and every base folds */
	ps->nfolded = 0;
	for (size_t i = 0; i < ps->npairs; i++) {
		struct prom_pair *p = &ps->pairs[i];
		const struct prom_pair *cur = find_pair(agg, n, p);

		if (cur) {
			p->count = cur->count > p->base_count ? cur->count - p->base_count : 0;
			p->ns = cur->ns > p->base_ns ? cur->ns - p->base_ns : 0;
		}
		err = fold_pair(&ps->folded, &ps->nfolded, &ps->cap_folded, &p->k, p->base_count,
				p->base_ns);
		if (err)
			return err;
	}
	for (size_t i = 0; i < n; i++) {
		if (find_pair(ps->pairs, ps->npairs, &agg[i]))
			continue;
		err = fold_pair(&ps->folded, &ps->nfolded, &ps->cap_folded, &agg[i].k, agg[i].count,
				agg[i].ns);
		if (err)
			return err;
	}
	/* what retired pairs counted stays out of "other" (retire_idle_pairs) */
	for (size_t i = 0; i < ps->npairs_retired; i++) {
		const struct prom_pair *rt = &ps->pairs_retired[i];

		for (size_t j = 0; j < ps->nfolded; j++) {
			struct prom_pair *f = &ps->folded[j];

			if (cmp_pair(f, rt))
				continue;
			f->count = f->count > rt->count ? f->count - rt->count : 0;
			f->ns = f->ns > rt->ns ? f->ns - rt->ns : 0;
		}
	}
	sort_n(ps->folded, ps->nfolded, sizeof(*ps->folded), cmp_pair);
	return 0;
}

/* As retire_idle_inodes, for pairs: after update_pairs. */
static int retire_idle_pairs(struct prom_series *ps, uint64_t now)
{
	size_t j = 0;
	int err = 0;

	for (size_t i = 0; i < ps->npairs; i++) {
		struct prom_pair *p = &ps->pairs[i];

		/* what it counted is kept under its "other" key, which update_pairs takes off */
		if (series_idle(p->count, &p->last_count, &p->active_ns, now, ps->idle_ns) && !err &&
		    !(err = fold_pair(&ps->pairs_retired, &ps->npairs_retired,
				      &ps->cap_pairs_retired, &p->k, p->count, p->ns))) {
			ps->pair_series_retired++;
			continue;
		}
		if (j != i)
			ps->pairs[j] = *p;
		j++;
	}
	ps->npairs = j;
	return err;
}

/* ---- holder/waiter pairs by op and mode ---- */

static int cmp_op_pair(const void *pa, const void *pb)
{
	const struct prom_op_pair *a = pa, *b = pb;
	const uint8_t ka[] = { a->class, a->holder_op, a->holder_mode, a->waiter_op, a->waiter_mode };
	const uint8_t kb[] = { b->class, b->holder_op, b->holder_mode, b->waiter_op, b->waiter_mode };

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return memcmp(ka, kb, sizeof(ka));
}

/*
 * From the cumulative edges, every update: their ops and modes never change
 * and edges are never removed, so no series ever goes away.
 */
static int build_ops(struct prom_series *ps, const struct snapshot *s)
{
	struct prom_op_pair *o = grow(ps->ops, &ps->cap_ops, s->nedges ? s->nedges : 1, sizeof(*o));
	size_t n = 0, j = 0;

	if (!o)
		return -ENOMEM;
	ps->ops = o;
	for (size_t i = 0; i < s->nedges; i++) {
		const struct ilock_edge_key *k = &s->edges[i].k;

		o[n++] = (struct prom_op_pair){ .dev = k->dev, .class = k->class,
						.holder_op = k->holder_op, .holder_mode = k->holder_mode,
						.waiter_op = k->waiter_op, .waiter_mode = k->waiter_mode,
						.count = s->edges[i].s.count,
						.ns = s->edges[i].s.total_ns };
	}
	sort_n(o, n, sizeof(*o), cmp_op_pair);
	for (size_t i = 0; i < n; i++) {
		if (j && !cmp_op_pair(&o[j - 1], &o[i])) {
			o[j - 1].count += o[i].count;
			o[j - 1].ns += o[i].ns;
		} else {
			o[j++] = o[i];
		}
	}
	ps->nops = j;
	return 0;
}

int prom_series_update(struct prom_series *ps, const struct snapshot *s,
		       const struct snapshot *prev, const struct mount_table *mt)
{
	int err;

	/*
	 * Series follow inode numbers (dev:ino labels): a file created in a
	 * number another had adds to its series, whose path label stays the
	 * one frozen at admission (docs/exporter.md).
	 */
	if ((err = snap_fold_gens(&ps->fold, s)) ||
	    (prev && (err = snap_fold_gens(&ps->prev_fold, prev))))
		return err;
	s = &ps->fold;
	prev = prev ? &ps->prev_fold : NULL;
	memcpy(ps->counters, s->counters, sizeof(ps->counters));
	ps->in_flight = s->in_flight;
	memcpy(ps->tables, s->tables, sizeof(ps->tables));
	ps->waiting_available = s->waiting.available;
	/* lock waits and fsyncs apart: an fsync is slow for reasons of its own */
	ps->oldest_wait_ns = s->waiting.oldest_ns[0];
	ps->stalled_waits = s->waiting.stalled[0];
	ps->oldest_fsync_ns = s->waiting.oldest_ns[1];
	for (size_t i = 0; i < s->nlocks; i++) {
		/* rows of one device tend to come together: skip the search */
		if (i && s->locks[i].dev == s->locks[i - 1].dev)
			continue;
		if ((err = note_dev(ps, s, mt, &s->locks[i])))
			return err;
	}
	if ((err = build_groups(ps, s)) || (err = build_totals(ps, s, prev)))
		return err;
	if (ps->top_k && (err = admit_inodes(ps, s, prev, mt)))
		return err;
	settle_inodes(ps, s);
	if ((err = retire_idle_inodes(ps, s->mono_ns)) || (err = update_pairs(ps, s, prev)) ||
	    (err = retire_idle_pairs(ps, s->mono_ns)) || (err = build_ops(ps, s)))
		return err;
	ps->updates++;
	return 0;
}

/* ---- retiring the tables of a tracer (ilock export --renew) ---- */

/* A pair as its series read it: by prom key, and by ops, op flags and range. */
struct retire_edge {
	struct prom_pair_key pk;
	uint8_t rest[5];
	size_t idx;                    /* into the snapshot's edges: the first one represents */
};

static int cmp_retire_edge(const void *pa, const void *pb)
{
	const struct retire_edge *a = pa, *b = pb;
	int c = cmp_pair_key(&a->pk, &b->pk);

	if (!c)
		c = memcmp(a->rest, b->rest, sizeof(a->rest));
	if (!c)
		c = a->idx < b->idx ? -1 : a->idx > b->idx;
	return c;
}

/*
 * A retired pair's side, whose role came from its thread's title: an id no
 * thread has (pid_max is at most 2^22) with that title in the retired
 * titles, so that no thread taking the pid later changes the role.
 * Otherwise no thread: the role is the comm.
 */
static int retire_side(struct prom_series *ps, struct titles *rt, uint32_t *pid, uint32_t *tgid,
		       const char *comm, bool named)
{
	const char *title = named && ps->titles && *pid && *pid != ILOCK_PID_FOLDED
			    ? titles_get(ps->titles, *pid, comm) : NULL;
	int err;

	if (!title || !title[0]) {
		*pid = *tgid = ILOCK_PID_FOLDED;
		return 0;
	}
	if (ps->retired_ids < PROM_RETIRED_ID_FIRST || ps->retired_ids >= ILOCK_PID_FOLDED - 1)
		ps->retired_ids = PROM_RETIRED_ID_FIRST;
	*pid = *tgid = ps->retired_ids++;
	err = titles_put(rt, *pid, comm, title);
	return err == -ENOSPC ? 0 : err;  /* a table full of roles: that one is the comm */
}

static int retire_edges(struct prom_series *ps, struct snapshot *dst, struct titles *rt,
			const struct snapshot *s)
{
	struct retire_edge *re;
	struct ilock_edge_key rep = {};
	int err = 0;

	if (!s->nedges)
		return 0;
	re = calloc(s->nedges, sizeof(*re));
	if (!re)
		return -ENOMEM;
	for (size_t i = 0; i < s->nedges; i++) {
		const struct ilock_edge_key *k = &s->edges[i].k;

		pair_key_of(&re[i].pk, k, ps->titles);
		re[i].rest[0] = k->holder_op;
		re[i].rest[1] = k->waiter_op;
		re[i].rest[2] = k->holder_op_flags;
		re[i].rest[3] = k->waiter_op_flags;
		re[i].rest[4] = k->range;
		re[i].idx = i;
	}
	sort_n(re, s->nedges, sizeof(*re), cmp_retire_edge);
	for (size_t i = 0; i < s->nedges && !err; i++) {
		const struct edge_row *e = &s->edges[re[i].idx];

		if (!i || cmp_pair_key(&re[i - 1].pk, &re[i].pk) ||
		    memcmp(re[i - 1].rest, re[i].rest, sizeof(re[i].rest))) {
			/* the group's first pair stands for all of it, its inode gone */
			rep = e->k;
			rep.ino = ILOCK_INO_FOLDED;
			rep.gen = 0;
			err = retire_side(ps, rt, &rep.holder_pid, &rep.holder_tgid, rep.holder_comm,
					  rep.holder_mode != ILOCK_MODE_UNKNOWN);
			if (!err)
				err = retire_side(ps, rt, &rep.waiter_pid, &rep.waiter_tgid,
						  rep.waiter_comm, true);
			if (err)
				break;
		}
		if (snap_add_edge(dst, &rep, &e->s))
			err = -ENOMEM;
	}
	free(re);
	return err;
}

/*
 * The inodes folded away, one per inode whatever its classes, into
 * ilock_contended_inodes: each once, over any number of renewals, as long
 * as their identities fit. Nothing changes on a failure (the renewal is
 * tried again later).
 */
static int note_retired_ids(struct prom_series *ps, const struct prom_ino_total *gone, size_t n)
{
	uint64_t *ids, *merged = NULL;
	size_t nids = 0, keep, i = 0, j = 0, k = 0;

	if (!n)
		return 0;
	ids = malloc(n * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (size_t g = 0; g < n; g++) {
		uint64_t id = inode_id(gone[g].dev, gone[g].ino);

		if (!retired_id_known(ps, id))
			ids[nids++] = id;
	}
	sort_n(ids, nids, sizeof(*ids), cmp_u64);
	for (size_t g = 0; g < nids; g++)
		if (!g || ids[g] != ids[k - 1])
			ids[k++] = ids[g];
	nids = k;
	/* past the cap, counted and not remembered: such an inode may count twice */
	keep = ps->ngone_ids >= PROM_RETIRED_IDS_MAX ? 0
	       : nids < PROM_RETIRED_IDS_MAX - ps->ngone_ids ? nids
	       : PROM_RETIRED_IDS_MAX - ps->ngone_ids;
	if (keep) {
		merged = malloc((ps->ngone_ids + keep) * sizeof(*merged));
		if (!merged) {
			free(ids);
			return -ENOMEM;
		}
		for (k = 0; i < ps->ngone_ids || j < keep;)
			merged[k++] = j >= keep || (i < ps->ngone_ids && ps->gone_ids[i] < ids[j])
					      ? ps->gone_ids[i++] : ids[j++];
		free(ps->gone_ids);
		ps->gone_ids = merged;
		ps->ngone_ids = k;
	}
	ps->retired_inodes += nids;
	free(ids);
	return 0;
}

int prom_series_retire(struct prom_series *ps, struct snapshot *dst, struct titles *rt,
		       const struct snapshot *cur)
{
	struct snapshot s;
	struct prom_ino_total *gone = NULL;
	size_t ngone = 0;
	int err;

	snap_init(&s);
	snap_reset(dst);
	err = snap_fold_gens(&s, cur);
	if (err)
		goto out;
	dst->mono_ns = s.mono_ns;
	memcpy(dst->counters, s.counters, sizeof(dst->counters));
	gone = malloc((s.nlocks ? s.nlocks : 1) * sizeof(*gone));
	if (!gone) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s.nlocks; i++) {
		const struct lock_row *r = &s.locks[i];
		bool own = r->ino != ILOCK_INO_FOLDED && find_tracked(ps, r->dev, r->ino);
		struct lock_row *d = snap_lock(dst, r->dev, own ? r->ino : ILOCK_INO_FOLDED, 0,
					       r->class);

		if (!d) {
			err = -ENOMEM;
			goto out;
		}
		row_merge(d, r);
		if (!own && r->ino != ILOCK_INO_FOLDED && row_waits(r))
			gone[ngone++] = (struct prom_ino_total){ .dev = r->dev, .ino = r->ino };
	}
	for (size_t i = 0; i < s.ninodes; i++)
		if (find_tracked(ps, s.inodes[i].dev, s.inodes[i].ino) &&
		    snap_add_inode(dst, &s.inodes[i])) {
			err = -ENOMEM;
			goto out;
		}
	err = retire_edges(ps, dst, rt, &s);
	if (err)
		goto out;
	err = note_retired_ids(ps, gone, ngone);
out:
	free(gone);
	snap_free(&s);
	return err;
}
