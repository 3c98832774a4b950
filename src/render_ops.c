// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the holders and waiters were doing, as text: the serialisation
 * table by operation with range-lock headroom and top stacks, byte ranges
 * per lock, direct writes by lock mode, and waiter stacks folded for
 * flame graphs. Pure functions of the snapshot; golden-tested.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "render.h"
#include "render_ops.h"
#include "util.h"

#define STACK_LINE_MAX 200   /* columns of a one-line stack */

/* the op views' inode: its name (a directory's with its slash), the notes are in the tables above them */
static void inode_name(char *buf, size_t len, const struct snapshot *s, const struct report_meta *m,
		       uint32_t dev, uint64_t ino, uint32_t gen, struct inode_view *v)
{
	describe_inode(s, m->mounts, dev, ino, gen, false, v);
	inode_label_as(buf, len, v, dev, ino, LABEL_SLASH);
}

int render_frame_name(char *buf, size_t len, struct ksyms *ks, uint64_t ip)
{
	const char *n = ks ? ksyms_find(ks, ip, NULL) : NULL;

	return n ? snprintf(buf, len, "%s", n) : snprintf(buf, len, "0x%" PRIx64, ip);
}

void render_stack_line(FILE *f, const struct ilock_stack_frames *fr, struct ksyms *ks, int width)
{
	char line[STACK_LINE_MAX + 64], name[128];
	size_t n = 0;

	line[0] = 0;
	for (uint32_t i = ksyms_first_shown(ks, fr); i < fr->nr && i < ILOCK_STACK_DEPTH; i++) {
		render_frame_name(name, sizeof(name), ks, fr->ip[i]);
		if (n && n + strlen(name) + 3 > (size_t)width) {
			snprintf(line + n, sizeof(line) - n, " < ...");
			break;
		}
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", n ? " < " : "", name);
		if (n >= sizeof(line))
			break;
	}
	fprintf(f, "%s\n", line[0] ? line : "(empty)");
}

/* Top stacks of one kind behind a pair, by wait time. */
static void print_pair_stacks(FILE *f, const struct snapshot *s, const struct pair_row *p,
			      uint8_t kind, int max, struct ksyms *ks)
{
	struct pair_stack top[8];
	size_t n = pair_stacks(s, p, kind, ks, top, max < 8 ? (size_t)max : 8);

	for (size_t i = 0; i < n; i++) {
		const struct ilock_stack_frames *fr = snap_find_frames(s, kind, top[i].id);
		char t[24], c[24], share[16];

		fprintf(f, "      %s %9s %5s %7s wait%s:%s ",
			kind == ILOCK_STACK_WAITER ? "waiter" : "holder",
			fmt_ns(t, sizeof(t), top[i].total_ns),
			fmt_share(share, sizeof(share),
			    p->s.total_ns ? (double)top[i].total_ns / (double)p->s.total_ns : -1),
			fmt_count(c, sizeof(c), top[i].count), plural(top[i].count),
			top[i].count == 1 ? " " : "");
		if (fr)
			render_stack_line(f, fr, ks, STACK_LINE_MAX);
		else
			fprintf(f, "(frames not read)\n");
	}
}

/* Which side's range was missing for most of a pair's unknown waits. */
static const char *unknown_side(const struct pair_row *r)
{
	uint64_t w = r->range_waits[ILOCK_RANGE_NO_WAITER], h = r->range_waits[ILOCK_RANGE_NO_HOLDER],
		 b = r->range_waits[ILOCK_RANGE_NO_BOTH];

	if (b >= w && b >= h)
		return "both";
	return h >= w ? "holder" : "waiter";
}

/* "(disjoint 97%)": a range lock's headroom on a pair, or why there is none. */
static void range_note(FILE *f, const struct pair_row *r)
{
	char share[16];

	if (r->k.class == ILOCK_CLASS_JBD2_WAIT)
		fprintf(f, "  (journal)");
	else if (!class_has_ranges(r->k.class))
		fprintf(f, "  (metadata: no ranges)");
	else if (ilock_op_is_namespace(r->k.holder_op) || ilock_op_is_namespace(r->k.waiter_op))
		fprintf(f, "  (names, not bytes)");
	else if (pair_headroom(r) < 0)
		fprintf(f, "  (ranges unknown: %s)", unknown_side(r));
	else
		fprintf(f, "  (disjoint %s)", fmt_share(share, sizeof(share), pair_headroom(r)));
}

static void serialisation(FILE *f, const struct snapshot *s, const struct report_meta *m,
			  const struct render_opts *o, const struct pair_row *p, long np)
{
	int rows = o->top_n * 3, with_stacks = o->top_n / 2 ? o->top_n / 2 : 1;

	fprintf(f, "\nSERIALISATION BY THREAD AND OPERATION (holder[tid] op mode -> waiter[tid] op mode)\n");
	if (!np) {
		fprintf(f, "  (no holder-to-waiter pairs)\n");
		return;
	}
	for (long i = 0; i < np && i < rows; i++) {
		const struct pair_row *r = &p[i];
		char h[48], w[48], hop[64], wop[64], n[24], t[24], where[2 * ILOCK_PATH_MAX + 8];
		char left[160], right[160];
		struct inode_view v;

		inode_name(where, sizeof(where), s, m, r->k.dev, r->k.ino, r->k.gen, &v);
		if (r->k.holder_mode == ILOCK_MODE_UNKNOWN)
			snprintf(left, sizeof(left), "(no owner)");
		else if (readers_unnamed(r->k.holder_mode, r->k.holder_comm))
			/* as the tables by command say it */
			snprintf(left, sizeof(left), "(readers)");
		else
			snprintf(left, sizeof(left), "%s %s %s",
				 fmt_task(h, sizeof(h), r->k.holder_comm, r->k.holder_pid),
				 op_label(hop, sizeof(hop), r->k.holder_op, r->k.holder_op_flags),
				 mode_short(r->k.holder_mode));
		snprintf(right, sizeof(right), "%s %s %s", fmt_task(w, sizeof(w), r->k.waiter_comm,
								  r->k.waiter_pid),
			 op_label(wop, sizeof(wop), r->k.waiter_op, r->k.waiter_op_flags),
			 mode_short(r->k.waiter_mode));
		fprintf(f, "  %-42s ->  %-42s %9s wait%-1s %9s", left, right,
			fmt_count(n, sizeof(n), r->s.count), plural(r->s.count),
			fmt_ns(t, sizeof(t), r->s.total_ns));
		range_note(f, r);
		fprintf(f, "  %s %s\n", where, class_display_name(r->k.class, v.magic));
		if (i < with_stacks && s->nstacks) {
			print_pair_stacks(f, s, r, ILOCK_STACK_WAITER, 3, o->ksyms);
			print_pair_stacks(f, s, r, ILOCK_STACK_HOLDER, 2, o->ksyms);
		}
	}
	if (np > rows)
		fprintf(f, "  ... %ld more pairs (use --json for all)\n", np - rows);
}

bool render_have_pairs(FILE *f, long np)
{
	if (np < 0)
		fprintf(f, "  (out of memory)\n");
	else if (!np)
		fprintf(f, "  (no holder-to-waiter pairs)\n");
	return np > 0;
}

void render_roles_text(FILE *f, const struct snapshot *s, const struct report_meta *m,
		       const struct pair_row *p, long np, int rows)
{
	/* both sides as wide as the widest shown: a long command and op keep the columns */
	int lw = 36, rw = 36;

	fprintf(f, "\nWHO SERIALISES WHOM, BY COMMAND (the threads of a command summed)\n");
	if (!render_have_pairs(f, np))
		return;
	for (long i = 0; i < np && i < rows; i++)
		pair_role_widths(&p[i], &lw, &rw);
	for (long i = 0; i < np && i < rows; i++) {
		const struct pair_row *r = &p[i];
		char left[PAIR_SIDE_LEN], right[PAIR_SIDE_LEN], n[24], t[24], mx[24], th[16], tw[16];
		char where[2 * ILOCK_PATH_MAX + 8], path[48];
		struct inode_view v;

		inode_name(where, sizeof(where), s, m, r->k.dev, r->k.ino, r->k.gen, &v);
		pair_side(left, sizeof(left), r, true, true);
		pair_side(right, sizeof(right), r, false, true);
		fprintf(f, "  %-*s ->  %-*s %9s wait%-1s %9s  max %9s  %3s -> %-3s threads", lw, left,
			rw, right, fmt_count(n, sizeof(n), r->s.count), plural(r->s.count),
			fmt_ns(t, sizeof(t), r->s.total_ns), fmt_ns(mx, sizeof(mx), r->s.max_ns),
			fmt_thread_count(th, sizeof(th), r->holders, r->holders_folded),
			fmt_thread_count(tw, sizeof(tw), r->waiters, r->waiters_folded));
		range_note(f, r);
		fprintf(f, "  %s %s\n", fmt_path_left(path, sizeof(path), where, 40),
			class_display_name(r->k.class, v.magic));
	}
	if (np > rows)
		fprintf(f, "  ... %ld more (use --json for all)\n", np - rows);
}

static void ranges(FILE *f, const struct snapshot *s, const struct report_meta *m, int rows)
{
	bool any = false;

	fprintf(f, "\nBYTE RANGES (would a range lock have let them run together?)\n");
	for (size_t i = 0; i < s->nlocks && (int)i < rows; i++) {
		const struct lock_row *r = &s->locks[i];
		const struct ilock_range_stats *g = r->range;
		char where[2 * ILOCK_PATH_MAX + 8], path[48], a[24], b[24], c[24], d[24], e[24], x[24];
		char share[16];
		struct inode_view v;
		struct ilock_range_stats unk = row_range_unknown(r);

		if (!row_range_waits(r))
			continue;
		any = true;
		inode_name(where, sizeof(where), s, m, r->dev, r->ino, r->gen, &v);
		/* 15: the longest class name, invalidate_lock */
		fprintf(f, "  %-40s %-15s overlapping %s (%s)  disjoint %s (%s)  unknown %s (%s)",
			fmt_path_left(path, sizeof(path), where, 40), class_display_name(r->class, v.magic),
			fmt_count(a, sizeof(a), g[ILOCK_RANGE_OVERLAP].waits),
			fmt_ns(b, sizeof(b), g[ILOCK_RANGE_OVERLAP].wait_ns),
			fmt_count(c, sizeof(c), g[ILOCK_RANGE_DISJOINT].waits),
			fmt_ns(d, sizeof(d), g[ILOCK_RANGE_DISJOINT].wait_ns),
			fmt_count(e, sizeof(e), unk.waits), fmt_ns(x, sizeof(x), unk.wait_ns));
		fprintf(f, "  headroom %s\n", fmt_share(share, sizeof(share), row_headroom(r)));
		if (unk.waits)
			fprintf(f, "  %-40s %-15s unknown: waiter's range missing %" PRIu64
				   ", holder's %" PRIu64 ", both %" PRIu64 "\n", "", "",
				(uint64_t)g[ILOCK_RANGE_NO_WAITER].waits,
				(uint64_t)g[ILOCK_RANGE_NO_HOLDER].waits,
				(uint64_t)g[ILOCK_RANGE_NO_BOTH].waits);
	}
	if (!any)
		fprintf(f, "  (no waits with a range class)\n");
}

static void dio_writes(FILE *f, const struct snapshot *s, const struct report_meta *m)
{
	if (!s->ndios)
		return;
	fprintf(f, "\nDIRECT WRITES (how they took i_rwsem)\n");
	for (size_t i = 0; i < s->ndios; i++) {
		uint64_t shared = 0, excl = 0, unaligned = 0, extending = 0, other = 0;
		const struct dio_row *d0 = &s->dios[i];
		char where[2 * ILOCK_PATH_MAX + 8], path[48], a[24], b[24], c[24], e[24], g[24];
		struct inode_view v;
		bool done = false;

		/* one line per inode, at its first row */
		for (size_t j = 0; j < i && !done; j++)
			done = s->dios[j].k.dev == d0->k.dev && s->dios[j].k.ino == d0->k.ino &&
			       s->dios[j].k.gen == d0->k.gen;
		if (done)
			continue;
		for (size_t j = i; j < s->ndios; j++) {
			const struct dio_row *d = &s->dios[j];

			if (d->k.dev != d0->k.dev || d->k.ino != d0->k.ino || d->k.gen != d0->k.gen)
				continue;
			if (!(d->k.flags & ILOCK_OPF_EXCL_LOCK)) {
				shared += d->count;
				continue;
			}
			excl += d->count;
			/* why: extending wins over unaligned, as ext4_dio_write_checks decides */
			if (d->k.flags & ILOCK_OPF_EXTENDING)
				extending += d->count;
			else if (d->k.flags & ILOCK_OPF_UNALIGNED)
				unaligned += d->count;
			else
				other += d->count;
		}
		inode_name(where, sizeof(where), s, m, d0->k.dev, d0->k.ino, d0->k.gen, &v);
		fprintf(f, "  %-40s %-5s shared %s  exclusive %s (unaligned %s, extending %s, other %s)\n",
			fmt_path_left(path, sizeof(path), where, 40), v.fs, fmt_count(a, sizeof(a), shared),
			fmt_count(b, sizeof(b), excl), fmt_count(c, sizeof(c), unaligned),
			fmt_count(e, sizeof(e), extending), fmt_count(g, sizeof(g), other));
	}
}

void render_ops_text(FILE *f, const struct snapshot *s, const struct report_meta *m,
		     const struct render_opts *o, const struct pair_row *p, long np)
{
	if (np < 0) {
		fprintf(f, "\n(out of memory for the serialisation table)\n");
		return;
	}
	serialisation(f, s, m, o, p, np);
	ranges(f, s, m, o->top_n);
	dio_writes(f, s, m);
}

/* ---- folded stacks ---- */

struct folded {
	char *line;
	uint64_t weight;
};

static int cmp_folded(const void *pa, const void *pb)
{
	return strcmp(((const struct folded *)pa)->line, ((const struct folded *)pb)->line);
}

static char *fold_one(const struct snapshot *s, const struct stack_row *r,
		      const struct ilock_stack_frames *fr, struct ksyms *ks)
{
	const struct inode_meta *im = snap_find_inode(s, r->k.edge.dev, r->k.edge.ino,
						      r->k.edge.gen);
	size_t cap = 256, n;
	uint32_t top = ksyms_first_shown(ks, fr);
	char *line = malloc(cap), name[128];

	if (!line)
		return NULL;
	n = (size_t)snprintf(line, cap, "%s;%s", class_display_name(r->k.edge.class, im ? im->magic : 0),
			     mode_name(r->k.edge.waiter_mode));
	/* outermost frame first, as flamegraph.pl and speedscope read them */
	for (uint32_t i = fr->nr < ILOCK_STACK_DEPTH ? fr->nr : ILOCK_STACK_DEPTH; i-- > top;) {
		int k = render_frame_name(name, sizeof(name), ks, fr->ip[i]);

		/* folded format: ';' separates frames, ' ' ends the stack */
		for (char *c = name; *c; c++)
			if (*c == ';' || *c == ' ')
				*c = '_';
		if (n + (size_t)k + 2 > cap) {
			char *p;

			cap = (n + (size_t)k + 2) * 2;
			p = realloc(line, cap);
			if (!p) {
				free(line);
				return NULL;
			}
			line = p;
		}
		n += (size_t)snprintf(line + n, cap - n, ";%s", name);
	}
	return line;
}

int render_folded(FILE *f, const struct snapshot *s, struct ksyms *ks)
{
	struct folded *v = calloc(s->nstacks ? s->nstacks : 1, sizeof(*v));
	size_t n = 0;
	int err = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->nstacks; i++) {
		const struct stack_row *r = &s->stacks[i];
		const struct ilock_stack_frames *fr;

		if (r->k.kind != ILOCK_STACK_WAITER || !r->s.total_ns)
			continue;
		fr = snap_find_frames(s, ILOCK_STACK_WAITER, r->k.stack);
		if (!fr)
			continue;
		v[n].line = fold_one(s, r, fr, ks);
		if (!v[n].line) {
			err = -ENOMEM;
			goto out;
		}
		v[n++].weight = r->s.total_ns;
	}
	/* one line per distinct stack: edges that share a stack add up */
	qsort(v, n, sizeof(*v), cmp_folded);
	for (size_t i = 0; i < n;) {
		uint64_t w = 0;
		size_t j = i;

		while (j < n && !strcmp(v[j].line, v[i].line))
			w += v[j++].weight;
		fprintf(f, "%s %" PRIu64 "\n", v[i].line, w);
		i = j;
	}
out:
	for (size_t i = 0; i < n; i++)
		free(v[i].line);
	free(v);
	return err;
}
