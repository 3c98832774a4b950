// SPDX-License-Identifier: GPL-2.0
/*
 * faults SECONDS: touch freshly mapped anonymous pages for SECONDS and
 * print {"faults": N}. Every first touch is a page fault, which takes the
 * mmap_lock for reading on kernels without per-VMA locks (before 6.4):
 * the rw_semaphore traffic --holds=all pays for on every down_read/up_read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define SPAN (16u << 20)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t n = 0, end;

	if (argc != 2 || atoi(argv[1]) <= 0) {
		fprintf(stderr, "usage: faults SECONDS\n");
		return 2;
	}
	end = now_ns() + (uint64_t)atoi(argv[1]) * 1000000000u;
	while (now_ns() < end) {
		volatile char *p = mmap(NULL, SPAN, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("faults: mmap");
			return 1;
		}
		for (size_t i = 0; i < SPAN; i += 4096)
			p[i] = 1;
		munmap((void *)p, SPAN);
		n += SPAN / 4096;
	}
	printf("{\"faults\": %" PRIu64 "}\n", n);
	return 0;
}
