// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"

/* A frame this far past the nearest symbol is not in it (the largest kernel functions are far smaller). */
#define KSYMS_MAX_OFFSET (1U << 20)

static int add_name(struct ksyms *k, const char *name, uint32_t *off)
{
	size_t len = strlen(name) + 1;

	if (k->names_len + len > UINT32_MAX)
		return -E2BIG;
	if (k->names_len + len > k->names_cap) {
		size_t ncap = k->names_cap ? k->names_cap * 2 : 1 << 16;
		char *p;

		while (ncap < k->names_len + len)
			ncap *= 2;
		p = realloc(k->names, ncap);
		if (!p)
			return -ENOMEM;
		k->names = p;
		k->names_cap = ncap;
	}
	memcpy(k->names + k->names_len, name, len);
	*off = (uint32_t)k->names_len;
	k->names_len += len;
	return 0;
}

int ksyms_add(struct ksyms *k, uint64_t addr, const char *name)
{
	struct ksym *s;
	int err;

	if (k->n == k->cap) {
		size_t ncap = k->cap ? k->cap * 2 : 4096;

		s = realloc(k->syms, ncap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		k->syms = s;
		k->cap = ncap;
	}
	s = &k->syms[k->n];
	s->addr = addr;
	err = add_name(k, name, &s->name);
	if (err)
		return err;
	k->n++;
	k->sorted = false;
	return 0;
}

int ksyms_parse(struct ksyms *k, FILE *f)
{
	char line[512], name[256], type;
	unsigned long long addr;
	int err;

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		/* text only: functions are what stack frames point into */
		if (!addr || !strchr("tTwW", type))
			continue;
		if ((err = ksyms_add(k, addr, name)))
			return err;
	}
	return ferror(f) ? -EIO : 0;
}

int ksyms_load(struct ksyms *k, const char *path)
{
	FILE *f = fopen(path ? path : "/proc/kallsyms", "re");
	int err;

	if (!f)
		return -errno;
	err = ksyms_parse(k, f);
	fclose(f);
	return err;
}

void ksyms_free(struct ksyms *k)
{
	free(k->syms);
	free(k->names);
	memset(k, 0, sizeof(*k));
}

static int cmp_sym(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

const char *ksyms_find(struct ksyms *k, uint64_t addr, uint64_t *off)
{
	size_t lo = 0, hi;

	if (!k->n)
		return NULL;
	if (!k->sorted) {
		qsort(k->syms, k->n, sizeof(*k->syms), cmp_sym);
		k->sorted = true;
	}
	if (addr < k->syms[0].addr)
		return NULL;
	/* the last symbol at or below addr */
	hi = k->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (addr - k->syms[lo].addr >= KSYMS_MAX_OFFSET)
		return NULL;
	if (off)
		*off = addr - k->syms[lo].addr;
	return k->names + k->syms[lo].name;
}

bool ksyms_is_tracing(const char *name)
{
	static const char *const prefixes[] = { "bpf_", "__bpf_", "__traceiter_", "trace_call_bpf",
						"perf_trace_", "__perf_" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

uint32_t ksyms_first_shown(struct ksyms *k, const struct ilock_stack_frames *fr)
{
	uint32_t i = 0, nr = fr->nr < ILOCK_STACK_DEPTH ? fr->nr : ILOCK_STACK_DEPTH;

	while (k && i < nr) {
		const char *n = ksyms_find(k, fr->ip[i], NULL);

		if (!n || !ksyms_is_tracing(n))
			break;
		i++;
	}
	return i;
}
