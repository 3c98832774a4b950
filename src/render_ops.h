/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Text views of operations, ranges and stacks (render_ops.c). */
#ifndef ILOCK_RENDER_OPS_H
#define ILOCK_RENDER_OPS_H

#include <stdio.h>

#include "ksyms.h"
#include "model.h"
#include "render.h"

/*
 * The serialisation table by operation (with the top stacks of the top
 * pairs), byte ranges per lock and direct writes by lock mode. Expects s
 * sorted: locks, edges and stacks (snap_sort_stacks).
 */
void render_ops_text(FILE *f, const struct snapshot *s, const struct report_meta *m,
		     const struct render_opts *o);
/*
 * Holder-to-waiter pairs by command, op and mode, every thread of a
 * command summed (snap_pairs without PAIRS_THREADS): at most rows lines.
 */
void render_roles_text(FILE *f, const struct snapshot *s, const struct report_meta *m, int rows);
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
