/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel symbols from /proc/kallsyms, for naming stack frames. Parsing
 * reads any FILE * (the unit tests feed it text); lookup is pure.
 */
#ifndef ILOCK_KSYMS_H
#define ILOCK_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ilock.h"

struct ksym {
	uint64_t addr;
	uint32_t name;   /* offset into names */
};

struct ksyms {
	struct ksym *syms;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	bool sorted;
};

/*
 * Add the text symbols of a kallsyms-format stream ("ffffffff81000000 T
 * _text", an optional "[module]" after). All-zero addresses (kptr_restrict)
 * add nothing. Returns 0 or -errno.
 */
int ksyms_parse(struct ksyms *k, FILE *f);
/* One symbol: name at addr. 0 or -errno. */
int ksyms_add(struct ksyms *k, uint64_t addr, const char *name);
/* ksyms_parse of /proc/kallsyms (or path). */
int ksyms_load(struct ksyms *k, const char *path);
void ksyms_free(struct ksyms *k);
/* The symbol at or before addr, its offset in *off; NULL if none (or too far). */
const char *ksyms_find(struct ksyms *k, uint64_t addr, uint64_t *off);
/* Frames of the tracing machinery itself (bpf_*, __traceiter_*): skipped at a stack's top. */
bool ksyms_is_tracing(const char *name);
/*
 * Index of a stack's first frame worth showing: past the tracing machinery
 * on top. k may be NULL (nothing is skipped then).
 */
uint32_t ksyms_first_shown(struct ksyms *k, const struct ilock_stack_frames *fr);

#endif
