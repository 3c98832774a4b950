/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The operations, ranges, stacks and journal-wait side of the tracer:
 * which op programs to load on this kernel, their switches, and reading
 * their maps into the snapshot. Called from tracer.c.
 */
#ifndef ILOCK_TRACER_OPS_H
#define ILOCK_TRACER_OPS_H

#include "cli.h"
#include "model.h"

struct tracer;

/* Between open and load: autoload, rodata switches, attach info. */
void tracer_ops_configure(struct tracer *t, const struct ilock_opts *o);
/* After the core maps: ranges, stacks and their frames, direct writes. */
int tracer_ops_read(struct tracer *t, struct snapshot *s);
/* The frames of every stack in s that has none yet: one lookup each. */
int tracer_read_frames(struct tracer *t, struct snapshot *s);

#endif
