// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What the maps take, and whether that fits the machine. */
#include <linux/bpf.h>

#include "mapmem.h"
#include "unit.h"
#include "util.h"

static struct map_mem one(uint32_t type, uint32_t k, uint32_t v, uint32_t n, uint32_t flags,
			  int ncpus)
{
	struct map_mem m = { 0 };
	struct map_shape s = { type, k, v, n, flags };

	map_mem_add(&m, &s, ncpus);
	return m;
}

static void test_arrays(void)
{
	struct map_mem m;

	/* values are 8-byte aligned; an mmapable array takes whole pages */
	m = one(BPF_MAP_TYPE_ARRAY, 4, 12, 10, 0, 2);
	CHECK_EQ_U(m.at_load, 160);
	CHECK_EQ_U(m.at_most, 160);
	m = one(BPF_MAP_TYPE_ARRAY, 4, 456, 16384, BPF_F_MMAPABLE, 2);
	CHECK_EQ_U(m.at_load, 7471104);  /* 456 * 16384, already page-aligned */
	m = one(BPF_MAP_TYPE_ARRAY, 4, 8, 1, BPF_F_MMAPABLE, 2);
	CHECK_EQ_U(m.at_load, 4096);
	m = one(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 100, 0, 4);
	CHECK_EQ_U(m.at_load, 3200);
}

static void test_hashes(void)
{
	struct map_mem m;

	/* preallocated: buckets (next power of 2) + elements, all at load */
	m = one(BPF_MAP_TYPE_HASH, 16, 16, 1000, 0, 2);
	CHECK_EQ_U(m.at_load, 1024 * 16 + 1000 * (48 + 16 + 16));
	CHECK_EQ_U(m.at_most, m.at_load);
	/* on demand: buckets at load, kmalloc-sized elements when full */
	m = one(BPF_MAP_TYPE_HASH, 16, 4, 1000, BPF_F_NO_PREALLOC, 2);
	CHECK_EQ_U(m.at_load, 1024 * 16);
	CHECK_EQ_U(m.at_most, 1024 * 16 + 1000 * 96);   /* 72 bytes -> kmalloc-96 */
	m = one(BPF_MAP_TYPE_HASH, 16, 344, 10, BPF_F_NO_PREALLOC, 2);
	CHECK_EQ_U(m.at_most, 16 * 16 + 10 * 512);      /* 408 -> kmalloc-512 */
	/* per-CPU values: one per CPU behind a pointer */
	m = one(BPF_MAP_TYPE_PERCPU_HASH, 8, 8, 4, 0, 3);
	CHECK_EQ_U(m.at_load, 4 * 16 + 4 * (48 + 8 + 8 + 24));
	/* LRU maps are always preallocated */
	m = one(BPF_MAP_TYPE_LRU_HASH, 8, 8, 4, BPF_F_NO_PREALLOC, 1);
	CHECK_EQ_U(m.at_load, m.at_most);
	CHECK(m.at_load > 4 * 16);
}

static void test_others_and_sums(void)
{
	struct map_mem m = { 0 };
	struct map_shape st = { BPF_MAP_TYPE_STACK_TRACE, 4, 127 * 8, 3, 0 };
	struct map_shape ts = { BPF_MAP_TYPE_TASK_STORAGE, 4, 4000, 0, BPF_F_NO_PREALLOC };

	map_mem_add(&m, &st, 2);
	CHECK_EQ_U(m.at_load, 4 * 8 + 3 * (24 + 1016));
	map_mem_add(&m, &ts, 2);   /* per task, on demand: not counted */
	CHECK_EQ_U(m.at_load, 4 * 8 + 3 * (24 + 1016));
	map_mem_add(&m, &st, 2);   /* adds up */
	CHECK_EQ_U(m.at_most, 2 * (4 * 8 + 3 * (24 + 1016)));
}

static void test_meminfo_and_fit(void)
{
	const char *text = "MemTotal:       24595292 kB\n"
			   "MemFree:         1000000 kB\n"
			   "MemAvailable:   20000000 kB\n"
			   "Buffers:            1024 kB\n";
	struct map_mem m = { .at_load = 1, .at_most = 10240000000ULL };
	uint64_t avail = 0;
	char buf[32];

	CHECK(meminfo_available(text, &avail));
	CHECK_EQ_U(avail, 20000000ULL * 1024);
	CHECK(map_mem_fits(&m, avail));            /* 10.24 GB <= 10.24 GB */
	m.at_most++;
	CHECK(!map_mem_fits(&m, avail));
	CHECK(!meminfo_available("MemTotal: 5 kB\nMemAvail: 3 kB\n", &avail));
	CHECK(!meminfo_available("", &avail));
	CHECK(!meminfo_available("MemAvailable: lots\n", &avail));
	CHECK_STR(fmt_bytes(buf, sizeof(buf), 512), "512 B");
	CHECK_STR(fmt_bytes(buf, sizeof(buf), 7471104), "7.1 MiB");
	CHECK_STR(fmt_bytes(buf, sizeof(buf), 2040109466), "1.9 GiB");
	CHECK_STR(fmt_bytes(buf, sizeof(buf), 20480), "20 KiB");
}

int main(void)
{
	test_arrays();
	test_hashes();
	test_others_and_sums();
	test_meminfo_and_fit();
	UNIT_DONE();
}
