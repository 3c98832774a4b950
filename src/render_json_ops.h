/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* JSON of operations, ranges and stacks, called by render_json.c. */
#ifndef ILOCK_RENDER_JSON_OPS_H
#define ILOCK_RENDER_JSON_OPS_H

#include "model.h"
#include "render.h"

struct json;

/* "ranges" and "headroom" keys of one lock object. */
void render_json_lock_ranges(struct json *j, const struct lock_row *r);
/* The "edges" array: one object per pair with ops, ranges and top stacks. */
void render_json_edges(struct json *j, const struct snapshot *s, const struct report_meta *m,
		       const struct render_opts *o);
/* The "roles" array: the pairs by command, op and mode, threads summed. */
void render_json_roles(struct json *j, const struct snapshot *s, const struct report_meta *m);
/* "op_flags": the names of an op's flags (ILOCK_OPF_KEY_MASK bits) as an array. */
void render_json_op_flags(struct json *j, uint8_t flags);
/* The "direct_writes" array. */
void render_json_dio(struct json *j, const struct snapshot *s);

#endif
