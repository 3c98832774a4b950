// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"
#include "ops.h"
#include "titles.h"
#include "util.h"

static const char *const op_names[ILOCK_OP_MAX] = {
	[ILOCK_OP_UNKNOWN] = "unknown",
	[ILOCK_OP_BUFFERED_READ] = "buffered-read",
	[ILOCK_OP_BUFFERED_WRITE] = "buffered-write",
	[ILOCK_OP_DIRECT_READ] = "direct-read",
	[ILOCK_OP_DIRECT_WRITE] = "direct-write",
	[ILOCK_OP_FSYNC] = "fsync",
	[ILOCK_OP_FDATASYNC] = "fdatasync",
	[ILOCK_OP_FALLOCATE] = "fallocate",
	[ILOCK_OP_PUNCH_HOLE] = "punch-hole",
	[ILOCK_OP_ZERO_RANGE] = "zero-range",
	[ILOCK_OP_SHIFT_RANGE] = "shift-range",
	[ILOCK_OP_TRUNCATE] = "truncate",
	[ILOCK_OP_SETATTR] = "setattr",
	[ILOCK_OP_FAULT] = "mmap-fault",
	[ILOCK_OP_PAGE_MKWRITE] = "page-mkwrite",
	[ILOCK_OP_JOURNAL_COMMIT] = "journal-commit",
	[ILOCK_OP_OTHER] = "other",
	[ILOCK_OP_CREATE] = "create",
	[ILOCK_OP_MKDIR] = "mkdir",
	[ILOCK_OP_UNLINK] = "unlink",
	[ILOCK_OP_RMDIR] = "rmdir",
	[ILOCK_OP_RENAME] = "rename",
	[ILOCK_OP_LINK] = "link",
	[ILOCK_OP_LOOKUP] = "lookup",
	[ILOCK_OP_READDIR] = "readdir",
	[ILOCK_OP_SYNC_FILE_RANGE] = "sync-file-range",
};

const char *op_name(uint8_t op)
{
	return op < ILOCK_OP_MAX ? op_names[op] : "?";
}

bool op_from_name(const char *name, uint8_t *op)
{
	for (uint8_t i = 0; i < ILOCK_OP_MAX; i++) {
		if (!strcmp(name, op_names[i])) {
			*op = i;
			return true;
		}
	}
	return false;
}

static const char *const flag_names[] = {
	"unaligned",   /* ILOCK_OPF_UNALIGNED */
	"extending",   /* ILOCK_OPF_EXTENDING */
	"exclusive",   /* ILOCK_OPF_EXCL_LOCK */
	"append",      /* ILOCK_OPF_APPEND */
};

const char *op_flag_name(unsigned bit)
{
	return bit < sizeof(flag_names) / sizeof(flag_names[0]) ? flag_names[bit] : NULL;
}

char *op_label(char *buf, size_t len, uint8_t op, uint8_t flags)
{
	size_t n = (size_t)snprintf(buf, len, "%s", op_name(op));
	bool first = true;

	/* append implies extending: say the more specific one only */
	if (flags & ILOCK_OPF_APPEND)
		flags &= (uint8_t)~ILOCK_OPF_EXTENDING;
	for (unsigned b = 0; op_flag_name(b) && n < len; b++) {
		if (!(flags & (1U << b)))
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", first ? "(" : ",", op_flag_name(b));
		first = false;
	}
	if (!first && n < len)
		snprintf(buf + n, len - n, ")");
	return buf;
}

const char *range_group_name(uint8_t range)
{
	switch (range) {
	case ILOCK_RANGE_OVERLAP: return "overlapping";
	case ILOCK_RANGE_DISJOINT: return "disjoint";
	default: return "unknown";
	}
}

const char *range_name(uint8_t range)
{
	switch (range) {
	case ILOCK_RANGE_OVERLAP: return "overlapping";
	case ILOCK_RANGE_DISJOINT: return "disjoint";
	case ILOCK_RANGE_NO_WAITER: return "waiter";
	case ILOCK_RANGE_NO_HOLDER: return "holder";
	case ILOCK_RANGE_NO_BOTH: return "both";
	default: return "?";
	}
}

const char *mode_short(uint8_t mode)
{
	switch (mode) {
	case ILOCK_MODE_SHARED: return "SHARED";
	case ILOCK_MODE_EXCL: return "EXCL";
	case ILOCK_MODE_READERS: return "READERS";
	case ILOCK_MODE_QUEUED_EXCL: return "NEXT-EXCL";
	case ILOCK_MODE_QUEUED_SHARED: return "NEXT-SHARED";
	default: return "?";
	}
}

void pair_role_widths(const struct pair_row *r, int *hw, int *ww)
{
	char side[PAIR_SIDE_LEN];
	int n;

	n = (int)strlen(pair_side(side, sizeof(side), r, true, true));
	*hw = n > *hw ? n : *hw;
	n = (int)strlen(pair_side(side, sizeof(side), r, false, true));
	*ww = n > *ww ? n : *ww;
}

/* role_side() with its comm, or a role, as a string */
static char *side_text(char *buf, size_t len, const char *name, uint8_t mode, uint8_t op,
		       uint8_t flags, bool ops)
{
	char o[64];

	if (mode == ILOCK_MODE_UNKNOWN) {
		snprintf(buf, len, "(no owner)");
		return buf;
	}
	if (readers_unnamed(mode, name)) {
		snprintf(buf, len, "(readers)");
		return buf;
	}
	if (ops)
		snprintf(buf, len, "%s %s %s", name[0] ? name : "?", op_label(o, sizeof(o), op, flags),
			 mode_short(mode));
	else
		snprintf(buf, len, "%s %s", name[0] ? name : "?", mode_short(mode));
	return label_clean(buf);
}

char *role_side(char *buf, size_t len, const char *comm, uint8_t mode, uint8_t op, uint8_t flags,
		bool ops)
{
	char c[ILOCK_COMM_LEN + 1];

	str_copy(c, sizeof(c), comm, ILOCK_COMM_LEN);
	return side_text(buf, len, c, mode, op, flags, ops);
}

char *pair_side(char *buf, size_t len, const struct pair_row *r, bool holder, bool ops)
{
	const struct ilock_edge_key *k = &r->k;
	const char *role = holder ? r->holder_role : r->waiter_role;
	const char *comm = holder ? k->holder_comm : k->waiter_comm;
	uint8_t mode = holder ? k->holder_mode : k->waiter_mode;
	uint8_t op = holder ? k->holder_op : k->waiter_op;
	uint8_t flags = holder ? k->holder_op_flags : k->waiter_op_flags;

	return role ? side_text(buf, len, role, mode, op, flags, ops)
		    : role_side(buf, len, comm, mode, op, flags, ops);
}

bool pair_has_edge(const struct ilock_edge_key *p, const struct ilock_edge_key *e)
{
	struct ilock_edge_key k = *e;

	k.range = 0;
	return !memcmp(p, &k, sizeof(k));
}

/* As row_headroom: a lower bound, -1 when no wait had both ranges. */
double pair_headroom(const struct pair_row *p)
{
	uint64_t ns = 0;

	if (!class_has_ranges(p->k.class))
		return -1.0;
	for (int g = 0; g < ILOCK_RANGE_MAX; g++)
		ns += p->range_ns[g];
	if (!p->range_waits[ILOCK_RANGE_OVERLAP] && !p->range_waits[ILOCK_RANGE_DISJOINT])
		return -1.0;
	return ns ? (double)p->range_ns[ILOCK_RANGE_DISJOINT] / (double)ns : 0.0;
}

static int cmp_pairs(const void *pa, const void *pb)
{
	const struct pair_row *a = pa, *b = pb;

	if (a->s.total_ns != b->s.total_ns)
		return a->s.total_ns > b->s.total_ns ? -1 : 1;
	if (a->s.count != b->s.count)
		return a->s.count > b->s.count ? -1 : 1;
	return memcmp(&a->k, &b->k, sizeof(a->k));
}

/* An edge with its pair key, and what the key lost: range class and threads. */
struct tagged_edge {
	struct ilock_edge_key k;
	struct ilock_edge_stats s;
	uint8_t range;
	uint32_t holder, waiter;        /* thread ids; holder 0 when nobody was named */
	const char *hrole, *wrole;      /* titles_role(), NULL: by comm */
};

static int cmp_role(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

/*
 * Few edges per snapshot (thousands at most) and this runs once per
 * render: a sort by pair key then one pass is plenty. Within a key, by
 * holder thread, so that distinct holders are counted as the pass goes.
 */
static int cmp_pair_keys(const void *pa, const void *pb)
{
	const struct tagged_edge *a = pa, *b = pb;
	int c = memcmp(&a->k, &b->k, sizeof(a->k));

	if (!c)
		c = cmp_role(a->hrole, b->hrole);
	if (!c)
		c = cmp_role(a->wrole, b->wrole);
	if (c)
		return c;
	return a->holder < b->holder ? -1 : a->holder > b->holder;
}

static int cmp_u32(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return a < b ? -1 : a > b;
}

/* Distinct values among n (sorted in place). */
/* Distinct thread ids in v, ILOCK_PID_FOLDED (threads not told apart) left out. */
static uint32_t distinct_u32(uint32_t *v, size_t n)
{
	uint32_t d = 0;

	qsort(v, n, sizeof(*v), cmp_u32);
	for (size_t i = 0; i < n; i++)
		d += (!i || v[i] != v[i - 1]) && v[i] != ILOCK_PID_FOLDED;
	return d;
}

char *fmt_thread_count(char *buf, size_t len, uint32_t n, bool folded)
{
	/* a folded pair stands for one thread or more */
	if (folded)
		snprintf(buf, len, "%u+", n ? n : 1);
	else
		snprintf(buf, len, "%u", n);
	return buf;
}

static void tag_edge(struct tagged_edge *t, const struct edge_row *e, unsigned by,
		     const struct titles *ti)
{
	t->hrole = t->wrole = NULL;
	if (!(by & PAIRS_THREADS) && ti) {
		if (e->k.holder_mode != ILOCK_MODE_UNKNOWN)
			t->hrole = titles_role(ti, e->k.holder_pid, e->k.holder_comm);
		t->wrole = titles_role(ti, e->k.waiter_pid, e->k.waiter_comm);
	}
	t->k = e->k;
	t->s = e->s;
	t->range = t->k.range < ILOCK_RANGE_MAX ? t->k.range : ILOCK_RANGE_NO_BOTH;
	t->holder = t->k.holder_pid;
	t->waiter = t->k.waiter_pid;
	t->k.range = 0;
	if (!(by & PAIRS_THREADS)) {
		t->k.holder_pid = t->k.holder_tgid = t->k.waiter_pid = t->k.waiter_tgid = 0;
		/* a role: one name for a pool's threads (comm_role) */
		comm_role(t->k.holder_comm, e->k.holder_comm);
		comm_role(t->k.waiter_comm, e->k.waiter_comm);
	}
	if (!(by & PAIRS_OPS))
		t->k.holder_op = t->k.waiter_op = t->k.holder_op_flags = t->k.waiter_op_flags = 0;
}

long snap_pairs(const struct snapshot *s, struct pair_row **out, unsigned by)
{
	return snap_pairs_titled(s, out, by, NULL);
}

long snap_pairs_titled(const struct snapshot *s, struct pair_row **out, unsigned by,
		       const struct titles *ti)
{
	struct tagged_edge *e = NULL;
	struct pair_row *p = NULL;
	uint32_t *waiters = NULL;
	size_t first = 0;
	long n = 0;

	*out = NULL;
	if (!s->nedges)
		return 0;
	e = malloc(s->nedges * sizeof(*e));
	p = calloc(s->nedges, sizeof(*p));
	waiters = malloc(s->nedges * sizeof(*waiters));
	if (!e || !p || !waiters) {
		free(e);
		free(p);
		free(waiters);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->nedges; i++)
		tag_edge(&e[i], &s->edges[i], by, ti);
	qsort(e, s->nedges, sizeof(*e), cmp_pair_keys);
	for (size_t i = 0; i < s->nedges; i++) {
		struct pair_row *r = n ? &p[n - 1] : NULL;

		if (!r || memcmp(&r->k, &e[i].k, sizeof(r->k)) ||
		    cmp_role(r->holder_role, e[i].hrole) || cmp_role(r->waiter_role, e[i].wrole)) {
			if (r)
				r->waiters = distinct_u32(waiters + first, i - first);
			first = i;
			r = &p[n++];
			r->k = e[i].k;
			r->holder_role = e[i].hrole;
			r->waiter_role = e[i].wrole;
		}
		r->s.count += e[i].s.count;
		r->s.total_ns += e[i].s.total_ns;
		if (e[i].s.max_ns > r->s.max_ns)
			r->s.max_ns = e[i].s.max_ns;
		r->range_waits[e[i].range] += e[i].s.count;
		r->range_ns[e[i].range] += e[i].s.total_ns;
		/* sorted by holder within the key: a new holder is a change from the last */
		if (e[i].holder && e[i].holder != ILOCK_PID_FOLDED &&
		    (i == first || e[i].holder != e[i - 1].holder))
			r->holders++;
		/* folded waits are of threads not told apart: more, but how many is not known */
		if (e[i].holder == ILOCK_PID_FOLDED)
			r->holders_folded = true;
		if (e[i].waiter == ILOCK_PID_FOLDED)
			r->waiters_folded = true;
		waiters[i] = e[i].waiter;
	}
	p[n - 1].waiters = distinct_u32(waiters + first, s->nedges - first);
	free(e);
	free(waiters);
	qsort(p, (size_t)n, sizeof(*p), cmp_pairs);
	*out = p;
	return n;
}

static int cmp_pair_stacks(const void *pa, const void *pb)
{
	const struct pair_stack *a = pa, *b = pb;

	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

bool stacks_look_same(struct ksyms *ks, const struct ilock_stack_frames *a,
		      const struct ilock_stack_frames *b)
{
	uint32_t na = a->nr < ILOCK_STACK_DEPTH ? a->nr : ILOCK_STACK_DEPTH;
	uint32_t nb = b->nr < ILOCK_STACK_DEPTH ? b->nr : ILOCK_STACK_DEPTH;
	uint32_t i = ksyms_first_shown(ks, a), j = ksyms_first_shown(ks, b);

	if (i > na || j > nb || na - i != nb - j)
		return false;
	for (; i < na; i++, j++) {
		const char *x = ks ? ksyms_find(ks, a->ip[i], NULL) : NULL;
		const char *y = ks ? ksyms_find(ks, b->ip[j], NULL) : NULL;

		if (x && y ? strcmp(x, y) != 0 : x || y || a->ip[i] != b->ip[j])
			return false;
	}
	return true;
}

size_t stacks_rank(const struct snapshot *s, uint8_t kind, struct ksyms *ks, struct pair_stack *v,
		   size_t n)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		const struct ilock_stack_frames *fi = snap_find_frames(s, kind, v[i].id);
		size_t k;

		for (k = 0; fi && k < kept; k++) {
			const struct ilock_stack_frames *fk = snap_find_frames(s, kind, v[k].id);

			if (fk && stacks_look_same(ks, fk, fi))
				break;
		}
		if (fi && k < kept) {
			v[k].count += v[i].count;
			v[k].total_ns += v[i].total_ns;
		} else {
			v[kept++] = v[i];
		}
	}
	qsort(v, kept, sizeof(*v), cmp_pair_stacks);
	return kept;
}

size_t pair_stacks(const struct snapshot *s, const struct pair_row *p, uint8_t kind,
		   struct ksyms *ks, struct pair_stack *out, size_t max)
{
	struct pair_stack all[256];
	size_t n = 0;

	for (size_t i = 0; i < s->nstacks; i++) {
		const struct stack_row *r = &s->stacks[i];
		size_t j;

		if (r->k.kind != kind || !pair_has_edge(&p->k, &r->k.edge))
			continue;
		/* the same stack under several range classes of the pair adds up */
		for (j = 0; j < n && all[j].id != r->k.stack; j++)
			;
		if (j == n) {
			if (n == sizeof(all) / sizeof(all[0]))
				continue;
			all[n++] = (struct pair_stack){ .id = r->k.stack };
		}
		all[j].count += r->s.count;
		all[j].total_ns += r->s.total_ns;
	}
	n = stacks_rank(s, kind, ks, all, n);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof(*out));
	return n;
}
