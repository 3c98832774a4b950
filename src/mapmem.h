/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How much kernel memory the BPF maps take: what is allocated when they
 * are created, and what they can grow to when full. Pure; estimates after
 * the kernel's allocators (kernel/bpf/hashtab.c, arraymap.c, stackmap.c),
 * to decide before load whether a --max-inodes fits the machine.
 */
#ifndef ILOCK_MAPMEM_H
#define ILOCK_MAPMEM_H

#include <stdbool.h>
#include <stdint.h>

struct map_shape {
	uint32_t type;         /* enum bpf_map_type */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t flags;        /* BPF_F_NO_PREALLOC, BPF_F_MMAPABLE */
};

struct map_mem {
	uint64_t at_load;      /* allocated when the map is created */
	uint64_t at_most;      /* when every entry is in use */
};

/* One map's memory on a machine with ncpus possible CPUs; adds into *m. */
void map_mem_add(struct map_mem *m, const struct map_shape *s, int ncpus);
/* MemAvailable from the text of /proc/meminfo, in bytes; false if absent. */
bool meminfo_available(const char *text, uint64_t *bytes);
/*
 * The maps may take at most half of the memory available now: the rest is
 * the workload's, which ilock is there to watch, not to push into reclaim.
 */
bool map_mem_fits(const struct map_mem *m, uint64_t available);

#endif
