/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Text views of operations, ranges and stacks (render_ops.c). */
#ifndef ILOCK_RENDER_OPS_H
#define ILOCK_RENDER_OPS_H

#include <stdbool.h>
#include <stdio.h>

#include "ksyms.h"
#include "model.h"
#include "render.h"

struct pair_row;

/*
 * The serialisation table by operation (with the top stacks of the top
 * pairs), byte ranges per lock and direct writes by lock mode. Expects s
 * sorted: locks, edges and stacks (snap_sort_stacks); p and np are
 * snap_pairs(s, .., PAIRS_THREADS | PAIRS_OPS)'s.
 */
void render_ops_text(FILE *f, const struct snapshot *s, const struct report_meta *m,
		     const struct render_opts *o, const struct pair_row *p, long np);
/*
 * Says why a table of pairs is empty: np is snap_pairs' return, and below
 * 0 it ran out of memory. True when there are pairs to show.
 */
bool render_have_pairs(FILE *f, long np);
/*
 * Holder-to-waiter pairs by command, op and mode, every thread of a
 * command summed: p and np from snap_pairs(s, .., PAIRS_OPS); at most rows lines.
 */
void render_roles_text(FILE *f, const struct snapshot *s, const struct report_meta *m,
		       const struct pair_row *p, long np, int rows);
/* A frame's symbol name, else its address in hex; snprintf's return. */
int render_frame_name(char *buf, size_t len, struct ksyms *ks, uint64_t ip);
/* "a < b < c", innermost first, tracing frames dropped, at most width columns. */
void render_stack_line(FILE *f, const struct ilock_stack_frames *fr, struct ksyms *ks, int width);
/*
 * Waiter stacks folded for flamegraph.pl or speedscope, one line per stack:
 * "CLASS;mode;outermost;...;innermost WAIT_NS". 0 or -ENOMEM.
 */
int render_folded(FILE *f, const struct snapshot *s, struct ksyms *ks);

#endif
