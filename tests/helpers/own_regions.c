// SPDX-License-Identifier: GPL-2.0
/*
 * own_regions: threads that each read and write a region of one file that
 * no other thread touches, as fast as they can.
 *
 *   own_regions FILE NTHREADS SECONDS READ_PERCENT
 *
 * FILE is made NTHREADS MiB long; thread i does 16 KiB preads and pwrites
 * (READ_PERCENT of them reads) at random 16 KiB-aligned offsets inside
 * [i MiB, (i + 1) MiB), until SECONDS have gone by. On XFS the reads take
 * the IOLOCK shared and the writes exclusive, so the threads wait on each
 * other all the time, yet no two of their byte ranges ever meet: every
 * wait is disjoint, and no thread can be the holder of its own wait.
 * Prints "DONE ops=N".
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define REGION (1L << 20)
#define IO 16384
#define MAX_THREADS 64

static int fd;
static double seconds;
static unsigned read_percent;
static unsigned long ops[MAX_THREADS];

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	long id = (long)arg;
	static __thread char buf[IO];
	unsigned seed = (unsigned)id * 7919 + 1;
	double end = now() + seconds;

	while (now() < end) {
		off_t off = id * REGION + (off_t)(rand_r(&seed) % (REGION / IO)) * IO;
		ssize_t n = (unsigned)rand_r(&seed) % 100 < read_percent ? pread(fd, buf, IO, off)
									: pwrite(fd, buf, IO, off);

		if (n != IO) {
			perror("own_regions: I/O");
			exit(1);
		}
		ops[id]++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_THREADS];
	unsigned long total = 0;
	long n;

	if (argc != 5 || (n = atol(argv[2])) < 1 || n > MAX_THREADS) {
		fprintf(stderr, "usage: own_regions FILE NTHREADS(1-%d) SECONDS READ_PERCENT\n",
			MAX_THREADS);
		return 2;
	}
	seconds = atof(argv[3]);
	read_percent = (unsigned)atoi(argv[4]);
	fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, n * REGION)) {
		perror(argv[1]);
		return 1;
	}
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, run, (void *)i)) {
			fprintf(stderr, "own_regions: cannot start a thread\n");
			return 1;
		}
	for (long i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		total += ops[i];
	}
	printf("DONE ops=%lu\n", total);
	return 0;
}
