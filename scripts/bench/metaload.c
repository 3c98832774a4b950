// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * metaload DIR SECONDS NTHREADS: the benchmark's metadata load. Each thread
 * creates, stats and unlinks its own files in the one directory DIR, so the
 * directory's i_rwsem and (on XFS) its ILOCK are what everyone waits on.
 * fio 3.33's filecreate/filestat/filedelete engines each do one of the three
 * and cannot loop a create-stat-unlink cycle for a fixed time.
 *
 * Prints one JSON line: {"threads":N,"seconds":S,"ops":N,"iops":X}, where an
 * op is one create (open+close), one stat or one unlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256

static atomic_int stop;
static const char *dir;

struct worker {
	pthread_t thread;
	int id;
	unsigned long ops;
	int err;        /* errno of the first failure, 0 if none */
	const char *op; /* which call failed */
};

static void on_sig(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	char path[4096];
	struct stat st;
	unsigned long n = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int fd;

		snprintf(path, sizeof(path), "%s/m%d.%lu", dir, w->id, n++);
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0) {
			w->op = "open";
			goto fail;
		}
		close(fd);
		if (stat(path, &st)) {
			w->op = "stat";
			goto fail;
		}
		if (unlink(path)) {
			w->op = "unlink";
			goto fail;
		}
		w->ops += 3;
	}
	return NULL;
fail:
	w->err = errno;
	atomic_store(&stop, 1);  /* a broken run must not report a rate */
	return NULL;
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_THREADS];
	struct sigaction sa = { .sa_handler = on_sig };
	unsigned long ops = 0;
	double secs, t0, t1;
	int nthreads, started = 0, err = 0;
	char *end;

	if (argc != 4) {
		fprintf(stderr, "usage: metaload DIR SECONDS NTHREADS\n");
		return 2;
	}
	dir = argv[1];
	secs = strtod(argv[2], &end);
	if (*end || !(secs > 0)) {
		fprintf(stderr, "metaload: bad SECONDS '%s'\nusage: metaload DIR SECONDS NTHREADS\n",
			argv[2]);
		return 2;
	}
	nthreads = (int)strtol(argv[3], &end, 10);
	if (*end || nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "metaload: NTHREADS must be 1..%d\nusage: metaload DIR SECONDS NTHREADS\n",
			MAX_THREADS);
		return 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	t0 = now_s();
	for (int i = 0; i < nthreads; i++) {
		w[i].id = i;
		err = pthread_create(&w[i].thread, NULL, work, &w[i]);
		if (err) {
			fprintf(stderr, "metaload: pthread_create: %s\n", strerror(err));
			atomic_store(&stop, 1);
			break;
		}
		started++;
	}
	while (!atomic_load(&stop) && now_s() - t0 < secs)
		usleep(10000);
	atomic_store(&stop, 1);
	for (int i = 0; i < started; i++)
		pthread_join(w[i].thread, NULL);
	t1 = now_s();
	if (err)
		return 1;
	for (int i = 0; i < started; i++) {
		if (w[i].err) {
			fprintf(stderr, "metaload: %s in %s: %s\n", w[i].op, dir, strerror(w[i].err));
			return 1;
		}
		ops += w[i].ops;
	}
	printf("{\"threads\":%d,\"seconds\":%.3f,\"ops\":%lu,\"iops\":%.1f}\n", nthreads, t1 - t0,
	       ops, (double)ops / (t1 - t0));
	return 0;
}
