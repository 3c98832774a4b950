// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The JSON of operations, ranges and stacks (docs/json-schema.md): the
 * "ranges" of each lock, and the "edges" array, one object per holder-to-
 * waiter pair with ops, its ranges and its top stacks.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "json.h"
#include "ksyms.h"
#include "ops.h"
#include "render_json_ops.h"
#include "render_ops.h"
#include "titles.h"
#include "util.h"

#define JSON_STACKS_PER_EDGE 5

/* {"overlapping": {waits, wait_ns}, "disjoint": {...}, "unknown": {..., which side}} */
static void ranges_json(struct json *j, const uint64_t waits[ILOCK_RANGE_MAX],
			const uint64_t ns[ILOCK_RANGE_MAX])
{
	json_obj_begin(j, "ranges");
	json_obj_begin(j, "overlapping");
	json_u64(j, "waits", waits[ILOCK_RANGE_OVERLAP]);
	json_u64(j, "wait_ns", ns[ILOCK_RANGE_OVERLAP]);
	json_obj_end(j);
	json_obj_begin(j, "disjoint");
	json_u64(j, "waits", waits[ILOCK_RANGE_DISJOINT]);
	json_u64(j, "wait_ns", ns[ILOCK_RANGE_DISJOINT]);
	json_obj_end(j);
	json_obj_begin(j, "unknown");
	json_u64(j, "waits", waits[ILOCK_RANGE_NO_WAITER] + waits[ILOCK_RANGE_NO_HOLDER] +
				     waits[ILOCK_RANGE_NO_BOTH]);
	json_u64(j, "wait_ns", ns[ILOCK_RANGE_NO_WAITER] + ns[ILOCK_RANGE_NO_HOLDER] +
				       ns[ILOCK_RANGE_NO_BOTH]);
	json_u64(j, "waiter_missing", waits[ILOCK_RANGE_NO_WAITER]);
	json_u64(j, "holder_missing", waits[ILOCK_RANGE_NO_HOLDER]);
	json_u64(j, "both_missing", waits[ILOCK_RANGE_NO_BOTH]);
	json_obj_end(j);
	json_obj_end(j);
}

static void headroom_json(struct json *j, double share)
{
	if (share < 0)
		json_null(j, "headroom");
	else
		json_double(j, "headroom", share);
}

void render_json_lock_ranges(struct json *j, const struct lock_row *r)
{
	uint64_t waits[ILOCK_RANGE_MAX], ns[ILOCK_RANGE_MAX];

	for (int g = 0; g < ILOCK_RANGE_MAX; g++) {
		waits[g] = r->range[g].waits;
		ns[g] = r->range[g].wait_ns;
	}
	ranges_json(j, waits, ns);
	headroom_json(j, row_headroom(r));
}

void render_json_op_flags(struct json *j, uint8_t flags)
{
	json_arr_begin(j, "op_flags");
	for (unsigned b = 0; op_flag_name(b); b++)
		if (flags & (1U << b))
			json_str(j, NULL, op_flag_name(b));
	json_arr_end(j);
}

/* One side of a pair; a role (by == PAIRS_OPS) has no thread ids. */
/* role: the process title's role of a side of a row by command (pair_row), or NULL */
static void task_json(struct json *j, const char *key, unsigned by, const struct titles *t,
		      uint32_t pid, uint32_t tgid, const char *comm, const char *role, uint8_t mode,
		      uint8_t op, uint8_t flags)
{
	char c[ILOCK_COMM_LEN + 1];

	str_copy(c, sizeof(c), comm, ILOCK_COMM_LEN);
	json_obj_begin(j, key);
	if (by & PAIRS_THREADS && pid == ILOCK_PID_FOLDED) {
		/* a pair kept without its threads (edge_threads_folded) */
		json_null(j, "pid");
		json_null(j, "tgid");
	} else if (by & PAIRS_THREADS) {
		json_u64(j, "pid", pid);
		json_u64(j, "tgid", tgid);
	}
	json_str(j, "comm", c);
	if (by & PAIRS_THREADS)
		json_str(j, "title", titles_get(t, pid, comm));
	else
		json_str(j, "role", role);
	json_str(j, "mode", mode_name(mode));
	json_str(j, "op", op_name(op));
	render_json_op_flags(j, flags);
	json_obj_end(j);
}

static void frames_json(struct json *j, const struct ilock_stack_frames *fr, struct ksyms *ks)
{
	char name[256];  /* ksyms keeps names of up to 255 bytes */
	/* the tracing machinery on top of a waiter stack is ours, not the kernel's path */
	uint32_t i = ksyms_first_shown(ks, fr);

	json_arr_begin(j, "frames");
	for (; i < fr->nr && i < ILOCK_STACK_DEPTH; i++) {
		render_frame_name(name, sizeof(name), ks, fr->ip[i]);
		json_str(j, NULL, name);
	}
	json_arr_end(j);
}

static void stacks_json(struct json *j, const struct snapshot *s, const struct pair_row *p,
			uint8_t kind, struct ksyms *ks)
{
	struct pair_stack top[JSON_STACKS_PER_EDGE];
	size_t n = pair_stacks(s, p, kind, ks, top, JSON_STACKS_PER_EDGE);

	json_arr_begin(j, kind == ILOCK_STACK_WAITER ? "waiter" : "holder");
	for (size_t i = 0; i < n; i++) {
		const struct ilock_stack_frames *fr = snap_find_frames(s, kind, top[i].id);

		json_obj_begin(j, NULL);
		json_u64(j, "waits", top[i].count);
		json_u64(j, "wait_ns", top[i].total_ns);
		if (fr)
			frames_json(j, fr, ks);
		else
			json_null(j, "frames");
		json_obj_end(j);
	}
	json_arr_end(j);
}

/*
 * The "edges" array (one object per pair of threads with ops, ranges and
 * top stacks) or the "roles" array (the same by command: thread counts,
 * no stacks).
 */
static void pairs_json(struct json *j, const struct snapshot *s, const struct report_meta *m,
		       const struct render_opts *o, unsigned by)
{
	struct pair_row *p;
	const struct titles *t = m ? m->titles : NULL;
	long np = snap_pairs_titled(s, &p, by, t);
	char d[24];

	json_arr_begin(j, by & PAIRS_THREADS ? "edges" : "roles");
	for (long i = 0; i < np; i++) {
		const struct pair_row *e = &p[i];

		json_obj_begin(j, NULL);
		json_str(j, "dev", fmt_kdev(d, sizeof(d), e->k.dev));
		json_u64(j, "ino", e->k.ino);
		json_u64(j, "gen", e->k.gen);
		json_str(j, "class", class_name(e->k.class));
		task_json(j, "holder", by, t, e->k.holder_pid, e->k.holder_tgid, e->k.holder_comm,
			  e->holder_role, e->k.holder_mode, e->k.holder_op, e->k.holder_op_flags);
		task_json(j, "waiter", by, t, e->k.waiter_pid, e->k.waiter_tgid, e->k.waiter_comm,
			  e->waiter_role, e->k.waiter_mode, e->k.waiter_op, e->k.waiter_op_flags);
		if (!(by & PAIRS_THREADS)) {
			json_u64(j, "holder_threads", e->holders);
			json_u64(j, "waiter_threads", e->waiters);
			/* true: some waits kept without their threads, so there were more */
			json_bool(j, "threads_folded", e->holders_folded || e->waiters_folded);
		}
		json_u64(j, "waits", e->s.count);
		json_u64(j, "wait_ns", e->s.total_ns);
		json_u64(j, "max_ns", e->s.max_ns);
		if (!edge_has_ranges(&e->k)) {
			/* a journal commit has no byte range; the ILOCK guards no bytes */
			json_null(j, "ranges");
			json_null(j, "headroom");
		} else {
			ranges_json(j, e->range_waits, e->range_ns);
			headroom_json(j, pair_headroom(e));
		}
		if (by & PAIRS_THREADS) {
			json_obj_begin(j, "stacks");
			stacks_json(j, s, e, ILOCK_STACK_WAITER, o ? o->ksyms : NULL);
			stacks_json(j, s, e, ILOCK_STACK_HOLDER, o ? o->ksyms : NULL);
			json_obj_end(j);
		}
		json_obj_end(j);
	}
	json_arr_end(j);
	free(p);
}

void render_json_edges(struct json *j, const struct snapshot *s, const struct report_meta *m,
		       const struct render_opts *o)
{
	pairs_json(j, s, m, o, PAIRS_THREADS | PAIRS_OPS);
}

void render_json_roles(struct json *j, const struct snapshot *s, const struct report_meta *m)
{
	pairs_json(j, s, m, NULL, PAIRS_OPS);
}

void render_json_dio(struct json *j, const struct snapshot *s)
{
	char d[24];

	json_arr_begin(j, "direct_writes");
	for (size_t i = 0; i < s->ndios; i++) {
		const struct dio_row *r = &s->dios[i];

		json_obj_begin(j, NULL);
		json_str(j, "dev", fmt_kdev(d, sizeof(d), r->k.dev));
		json_u64(j, "ino", r->k.ino);
		json_u64(j, "gen", r->k.gen);
		json_str(j, "lock", r->k.flags & ILOCK_OPF_EXCL_LOCK ? "exclusive" : "shared");
		json_bool(j, "unaligned", r->k.flags & ILOCK_OPF_UNALIGNED);
		json_bool(j, "extending", r->k.flags & ILOCK_OPF_EXTENDING);
		json_u64(j, "count", r->count);
		json_obj_end(j);
	}
	json_arr_end(j);
}
