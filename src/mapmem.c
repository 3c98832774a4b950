// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>

#include "mapmem.h"

#define PAGE 4096ULL
#define HTAB_ELEM 48ULL        /* struct htab_elem before the key */
#define HTAB_BUCKET 16ULL      /* struct bucket */
#define STACK_BUCKET 24ULL     /* struct stack_map_bucket before the ips */

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* kmalloc's size classes: elements of maps that allocate on demand. */
static uint64_t kmalloc_size(uint64_t v)
{
	if (v <= 8)
		return 8;
	if (v > 64 && v <= 96)
		return 96;
	if (v > 128 && v <= 192)
		return 192;
	return v > PAGE ? round_up(v, PAGE) : pow2_at_least(v);
}

void map_mem_add(struct map_mem *m, const struct map_shape *s, int ncpus)
{
	uint64_t n = s->max_entries, cpus = ncpus > 0 ? (uint64_t)ncpus : 1;
	uint64_t val = round_up(s->value_size, 8), key = round_up(s->key_size, 8);
	uint64_t load = 0, most = 0, elem;

	switch (s->type) {
	case BPF_MAP_TYPE_ARRAY:
		load = most = s->flags & BPF_F_MMAPABLE ? round_up(n * val, PAGE) : n * val;
		break;
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		load = most = n * val * cpus;
		break;
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH: {
		bool percpu = s->type == BPF_MAP_TYPE_PERCPU_HASH ||
			      s->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
		bool lru = s->type == BPF_MAP_TYPE_LRU_HASH || s->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
		uint64_t buckets = pow2_at_least(n) * HTAB_BUCKET;

		/* per-CPU values hang off the element by a pointer */
		elem = HTAB_ELEM + key + (percpu ? 8 + val * cpus : val);
		if ((s->flags & BPF_F_NO_PREALLOC) && !lru) {
			load = buckets;
			most = buckets + n * kmalloc_size(elem);
		} else {
			/* preallocated: every element exists from the start */
			load = most = buckets + n * elem;
		}
		break;
	}
	case BPF_MAP_TYPE_STACK_TRACE:
		/* preallocated buckets of value_size ips, and a table of pointers */
		load = most = pow2_at_least(n) * 8 + n * (STACK_BUCKET + val);
		break;
	case BPF_MAP_TYPE_RINGBUF:
		load = most = n;
		break;
	default:
		/* task storage and the like: per object, on demand, not sized here */
		break;
	}
	m->at_load += load;
	m->at_most += most;
}

bool meminfo_available(const char *text, uint64_t *bytes)
{
	const char *p = text;

	while (p && *p) {
		unsigned long long kib;

		if (!strncmp(p, "MemAvailable:", 13) && sscanf(p + 13, "%llu kB", &kib) == 1) {
			*bytes = (uint64_t)kib * 1024;
			return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

bool map_mem_fits(const struct map_mem *m, uint64_t available)
{
	return m->at_most <= available / 2;
}
