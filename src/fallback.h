/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Attach points beyond the tracepoints, chosen by the strategy: the rwsem
 * slow paths (lock waits on kernels without lock:contention_*, with
 * fentry/fexit or kprobes) and the rwsem lock functions (--holds=all).
 */
#ifndef ILOCK_FALLBACK_H
#define ILOCK_FALLBACK_H

struct tracer;
struct bpf_program;
struct bpf_link;

/* Between open and load: autoload, attach targets, rodata, attach list. */
void fallback_configure(struct tracer *t);
/* Attach one program; kprobes go to the symbol as this kernel names it. */
struct bpf_link *fallback_attach(struct tracer *t, struct bpf_program *prog);

#endif
