// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * faultloop FILE SECONDS: page faults on a file, for the cost of the fault
 * sources (scripts/bench/ops_cost.sh). Maps FILE shared, writes one byte
 * to each page, drops the mappings (MADV_DONTNEED) and starts again, so
 * every pass takes a ->fault and a ->page_mkwrite for each page, or for
 * each folio where the kernel maps a large folio in one fault. (Read
 * faults alone would mostly be served by fault-around, which calls
 * neither.)
 *
 * Prints one line: "passes N pages P".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long passes = 0;
	double secs, end;
	struct stat st;
	char *map;
	size_t len;
	int fd;

	if (argc != 3 || (secs = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: faultloop FILE SECONDS\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "faultloop: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	len = (size_t)st.st_size / page * page;
	if (!len) {
		fprintf(stderr, "faultloop: %s: smaller than a page\n", argv[1]);
		return 1;
	}
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "faultloop: mmap %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	end = now() + secs;
	while (now() < end) {
		for (size_t off = 0; off < len; off += page)
			map[off]++;
		if (madvise(map, len, MADV_DONTNEED)) {
			fprintf(stderr, "faultloop: madvise: %s\n", strerror(errno));
			return 1;
		}
		passes++;
	}
	printf("passes %lu pages %zu\n", passes, len / page);
	munmap(map, len);
	close(fd);
	return 0;
}
