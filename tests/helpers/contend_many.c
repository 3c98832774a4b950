// SPDX-License-Identifier: GPL-2.0
/*
 * contend_many: one real inode-lock wait on each of many files, over and
 * over, for ilocktop's tests and CPU benchmark.
 *
 *   contend_many DIR NFILES SECONDS NLANES [PACE]
 *
 * Creates DIR/f00000 .. (4 KiB each, data written), then NLANES lanes walk
 * the files (lane l takes l, l + NLANES, ...), pass after pass, until
 * SECONDS have gone by. For each file a lane:
 *   1. starts a buffered pwrite from a userfaultfd-backed page: the write
 *      faults while holding the inode's i_rwsem (XFS IOLOCK) exclusive;
 *   2. starts a buffered pread of the same file: on XFS it takes IOLOCK
 *      shared, so it queues behind the writer;
 *   3. waits until the reader is asleep ('D' in /proc), i.e. really
 *      waiting on the lock, then resolves the fault so both finish.
 * So every file gets at least one exclusive-holder -> shared-waiter wait
 * per pass, deterministically, with little CPU spent by us. The first pass
 * runs flat out; with PACE, later ones do PACE files per second in all
 * (a steady load on a set of files that is already tracked).
 *
 * Prints "READY files=N" once the files exist, "PASS n t=NS" after every
 * full pass over all files, and "DONE passes=.. waits=.. missed=.." at
 * the end (missed: the reader did not block within 50 ms; such a file is
 * tried again, up to 4 more times).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FILE_SIZE 4096
#define MAX_LANES 64
#define BLOCK_TIMEOUT_NS (50ULL * 1000000ULL)

static const char *dir;
static unsigned nfiles, nlanes, pace;
static uint64_t end_ns;
static volatile sig_atomic_t stopping;
static atomic_ulong total_waits, total_missed;
static pthread_barrier_t pass_barrier;
static size_t page;

struct lane {
	unsigned id;
	pthread_t thr, writer, reader;
	int uffd;
	char *ubuf;        /* registered with uffd: faults wait for us */
	char *src;         /* page copied in to resolve a fault */
	char *rbuf;
	int fd;            /* the file of this round */
	sem_t w_go, w_done, r_go, r_done;
	atomic_int reader_tid;
	bool quit;
};

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "contend_many: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void on_alarm(int sig)
{
	static const char msg[] = "contend_many: safety alarm fired, aborting\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to do */
	}
	_exit(1);
}

static void sem_wait_all(sem_t *s)
{
	while (sem_wait(s) && errno == EINTR)
		;
}

static void *writer_thread(void *arg)
{
	struct lane *l = arg;

	for (;;) {
		sem_wait_all(&l->w_go);
		if (l->quit)
			return NULL;
		if (pwrite(l->fd, l->ubuf, FILE_SIZE < page ? FILE_SIZE : page, 0) < 0)
			die("pwrite: %s", strerror(errno));
		sem_post(&l->w_done);
	}
}

static void *reader_thread(void *arg)
{
	struct lane *l = arg;

	atomic_store(&l->reader_tid, (int)gettid());
	for (;;) {
		sem_wait_all(&l->r_go);
		if (l->quit)
			return NULL;
		if (pread(l->fd, l->rbuf, FILE_SIZE, 0) < 0)
			die("pread: %s", strerror(errno));
		sem_post(&l->r_done);
	}
}

/* Is the thread asleep uninterruptibly (here: in down_read)? */
static bool thread_blocked(int tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'D';
}

/* Wait for the writer's first fault: it now holds i_rwsem exclusive. */
static void wait_fault(struct lane *l)
{
	struct pollfd pfd = { .fd = l->uffd, .events = POLLIN };
	struct uffd_msg msg;

	for (;;) {
		int r = poll(&pfd, 1, 5000);
		ssize_t n;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("no userfaultfd fault within 5 s (r=%d): %s", r, strerror(errno));
		n = read(l->uffd, &msg, sizeof(msg));
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n != sizeof(msg))
			die("read userfaultfd: %s", strerror(errno));
		if (msg.event == UFFD_EVENT_PAGEFAULT)
			return;
	}
}

static void resolve(struct lane *l)
{
	struct uffdio_copy cp = { .dst = (uintptr_t)l->ubuf, .src = (uintptr_t)l->src, .len = page };

	while (ioctl(l->uffd, UFFDIO_COPY, &cp)) {
		if (errno == EEXIST)
			return;
		if (errno != EAGAIN)
			die("UFFDIO_COPY: %s", strerror(errno));
		cp.copy = 0;
	}
}

/* One round on file i; false if the reader never blocked (no wait made). */
static bool one_file(struct lane *l, unsigned i)
{
	bool blocked = false;
	char path[4096];
	uint64_t t0;

	snprintf(path, sizeof(path), "%s/f%05u", dir, i);
	l->fd = open(path, O_RDWR | O_CLOEXEC);
	if (l->fd < 0)
		die("open %s: %s", path, strerror(errno));
	sem_post(&l->w_go);
	wait_fault(l);
	sem_post(&l->r_go);
	t0 = now_ns();
	while (!thread_blocked(atomic_load(&l->reader_tid))) {
		if (now_ns() - t0 > BLOCK_TIMEOUT_NS) {
			atomic_fetch_add(&total_missed, 1);
			goto release;
		}
		usleep(20);
	}
	atomic_fetch_add(&total_waits, 1);
	blocked = true;
release:
	resolve(l);
	sem_wait_all(&l->w_done);
	sem_wait_all(&l->r_done);
	/* drop the page so the next write faults (and holds) again */
	if (madvise(l->ubuf, page, MADV_DONTNEED))
		die("madvise: %s", strerror(errno));
	close(l->fd);
	return blocked;
}

static bool time_up(void)
{
	return stopping || now_ns() >= end_ns;
}

static void sleep_until_ns(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ULL),
			       .tv_nsec = (long)(t % 1000000000ULL) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !stopping)
		;
}

static void *lane_thread(void *arg)
{
	struct lane *l = arg;
	uint64_t due = 0, step = pace ? (uint64_t)nlanes * 1000000000ULL / pace : 0;

	for (unsigned pass = 0;; pass++) {
		for (unsigned i = l->id; i < nfiles && !time_up(); i += nlanes) {
			if (pass && step) {
				/* absolute deadlines: the pace does not drift */
				due = due ? due + step : now_ns();
				sleep_until_ns(due);
				if (time_up())
					break;
			}
			/* every file must get its wait: a few more tries if it missed */
			for (int tries = 0; !one_file(l, i) && tries < 4 && !time_up(); tries++)
				;
		}
		pthread_barrier_wait(&pass_barrier);
		/* everyone sees the same answer: main decides after the barrier */
		pthread_barrier_wait(&pass_barrier);
		if (stopping)
			break;
	}
	l->quit = true;
	sem_post(&l->w_go);
	sem_post(&l->r_go);
	pthread_join(l->writer, NULL);
	pthread_join(l->reader, NULL);
	return NULL;
}

static void lane_init(struct lane *l, unsigned id)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	int err;

	l->id = id;
	l->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (l->uffd < 0)
		die("userfaultfd: %s", strerror(errno));
	if (ioctl(l->uffd, UFFDIO_API, &api))
		die("UFFDIO_API: %s", strerror(errno));
	l->ubuf = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	l->src = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (l->ubuf == MAP_FAILED || l->src == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	memset(l->src, 'w', page);
	reg.range.start = (uintptr_t)l->ubuf;
	reg.range.len = page;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(l->uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER: %s", strerror(errno));
	l->rbuf = malloc(FILE_SIZE);
	if (!l->rbuf)
		die("out of memory");
	sem_init(&l->w_go, 0, 0);
	sem_init(&l->w_done, 0, 0);
	sem_init(&l->r_go, 0, 0);
	sem_init(&l->r_done, 0, 0);
	if ((err = pthread_create(&l->writer, NULL, writer_thread, l)) ||
	    (err = pthread_create(&l->reader, NULL, reader_thread, l)))
		die("pthread_create: %s", strerror(err));
	while (!atomic_load(&l->reader_tid))
		usleep(100);
}

static void make_files(void)
{
	char path[4096], data[FILE_SIZE];

	memset(data, 'd', sizeof(data));
	if (mkdir(dir, 0755) && errno != EEXIST)
		die("mkdir %s: %s", dir, strerror(errno));
	for (unsigned i = 0; i < nfiles; i++) {
		struct stat st;
		int fd;

		snprintf(path, sizeof(path), "%s/f%05u", dir, i);
		if (!stat(path, &st) && st.st_size >= FILE_SIZE)
			continue;
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			die("create %s: %s", path, strerror(errno));
		if (pwrite(fd, data, sizeof(data), 0) != (ssize_t)sizeof(data))
			die("write %s: %s", path, strerror(errno));
		close(fd);
	}
}

static unsigned parse_uint(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v == 0 || v > 10000000)
		die("bad %s '%s'", what, s);
	return (unsigned)v;
}

int main(int argc, char **argv)
{
	struct lane *lanes;
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned secs, pass = 0;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: contend_many DIR NFILES SECONDS NLANES [PACE]\n");
		return 2;
	}
	if (argc == 6)
		pace = parse_uint(argv[5], "PACE");
	dir = argv[1];
	nfiles = parse_uint(argv[2], "NFILES");
	secs = parse_uint(argv[3], "SECONDS");
	nlanes = parse_uint(argv[4], "NLANES");
	if (nlanes > MAX_LANES || nlanes > nfiles)
		die("NLANES must be at most %d and at most NFILES", MAX_LANES);
	page = (size_t)sysconf(_SC_PAGESIZE);

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	/* never hang a test run: creating the files counts too */
	alarm(secs + 300);

	make_files();
	printf("READY files=%u\n", nfiles);
	fflush(stdout);

	end_ns = now_ns() + (uint64_t)secs * 1000000000ULL;
	lanes = calloc(nlanes, sizeof(*lanes));
	if (!lanes)
		die("out of memory");
	pthread_barrier_init(&pass_barrier, NULL, nlanes + 1);
	for (unsigned i = 0; i < nlanes; i++) {
		int err;

		lane_init(&lanes[i], i);
		if ((err = pthread_create(&lanes[i].thr, NULL, lane_thread, &lanes[i])))
			die("pthread_create: %s", strerror(err));
	}
	for (;;) {
		pthread_barrier_wait(&pass_barrier);
		if (!time_up()) {
			printf("PASS %u t=%" PRIu64 "\n", ++pass, now_ns());
			fflush(stdout);
		} else {
			stopping = 1;
		}
		pthread_barrier_wait(&pass_barrier);
		if (stopping)
			break;
	}
	for (unsigned i = 0; i < nlanes; i++)
		pthread_join(lanes[i].thr, NULL);
	printf("DONE passes=%u waits=%lu missed=%lu\n", pass, atomic_load(&total_waits),
	       atomic_load(&total_missed));
	return 0;
}
