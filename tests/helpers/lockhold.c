// SPDX-License-Identifier: GPL-2.0
/*
 * lockhold: deterministic inode-lock holders and waiters for ilock's tests.
 *
 *   lockhold write  FILE OFFSET LEN HOLD_MS
 *   lockhold read   FILE OFFSET LEN NTHREADS [START_DELAY_MS]
 *   lockhold pwrite FILE OFFSET LEN NTHREADS [START_DELAY_MS]
 *   lockhold dwrite FILE OFFSET LEN NTHREADS ITER
 *   lockhold spin   FILE SECONDS NTHREADS
 *   lockhold fiemap FILE HOLD_MS
 *   lockhold readdir DIR HOLD_MS
 *   lockhold dsparse FILE NTHREADS ITER
 *   lockhold truncate FILE DIRTY_BYTES NEW_SIZE
 *   lockhold rloop  FILE OFFSET LEN NTHREADS MS
 *   lockhold fsync  FILE
 *   lockhold copy   FILE OTHER sendfile|copy OFFSET LEN
 *
 * "write" holds the inode's i_rwsem exclusive for HOLD_MS: a buffered
 * write faults its user buffer in while holding i_rwsem, and our buffer is
 * userfaultfd-backed, so the fault (and the lock) lasts until we resolve it.
 * SIGUSR1 ends the hold early, so a test can release when its waiters have
 * waited long enough, however slowly the machine ran up to then.
 *
 * "fiemap" holds the XFS IOLOCK *shared* inside an ioctl for HOLD_MS: the
 * FS_IOC_FIEMAP extent array lives on a userfaultfd page, and XFS copies
 * extents out while holding the IOLOCK. A holder whose op no tracepoint
 * and no read/write syscall names.
 * "readdir" holds a directory's i_rwsem shared for HOLD_MS the same way,
 * inside getdents64: a holder whose op is a namespace op (readdir).
 * SIGUSR1 ends the fiemap and readdir holds early too.
 * "dsparse" does 512-byte O_DIRECT writes at offset 512 of successive 4 KiB
 * blocks of a sparse file (each thread its own blocks): unaligned writes
 * into holes, which ext4 serialises with i_rwsem exclusive.
 * "truncate" dirties DIRTY_BYTES with buffered writes, then ftruncate()s to
 * NEW_SIZE: XFS writes the dirty data back under the IOLOCK first.
 * "rloop" preads [OFFSET, OFFSET+LEN) in a loop on NTHREADS threads for MS.
 * "fsync" fsyncs FILE once and says how long it took (busybox has no fsync).
 * "copy" moves LEN bytes between FILE and OTHER once, by the two syscalls
 * whose ranges come through user pointers: sendfile(OTHER, FILE, &OFFSET)
 * reads FILE at OFFSET; copy_file_range(OTHER at 0, FILE at &OFFSET)
 * writes FILE there. It says how long that took.
 *
 * Any command: LOCKHOLD_TITLE="lockhold: role" rewrites the process's
 * command line to that title, as PostgreSQL's processes do;
 * LOCKHOLD_LINGER_MS keeps the process that long after its work.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 1024
#define SPIN_BLOCK 4096
/* Files smaller than this are spun over this much, so writes extend them. */
#define SPIN_MIN_SPAN (1u << 20)

static const char *prog = "lockhold";

static void usage(void)
{
	fprintf(stderr,
		"usage: %s write FILE OFFSET LEN HOLD_MS\n"
		"       %s read FILE OFFSET LEN NTHREADS [START_DELAY_MS]\n"
		"       %s pwrite FILE OFFSET LEN NTHREADS [START_DELAY_MS]\n"
		"       %s dwrite FILE OFFSET LEN NTHREADS ITER\n"
		"       %s spin FILE SECONDS NTHREADS\n"
		"       %s fiemap FILE HOLD_MS\n"
		"       %s readdir DIR HOLD_MS\n"
		"       %s dsparse FILE NTHREADS ITER\n"
		"       %s truncate FILE DIRTY_BYTES NEW_SIZE\n"
		"       %s rloop FILE OFFSET LEN NTHREADS MS\n"
		"       %s fsync FILE\n"
		"       %s copy FILE OTHER sendfile|copy OFFSET LEN\n",
		prog, prog, prog, prog, prog, prog, prog, prog, prog, prog, prog, prog);
	exit(2);
}

/* One-line error on stderr, exit 1: the tests read the line on failure. */
static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t parse_u64(const char *s)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		usage();
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		usage();
	return v;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Hold for ms, or less if SIGUSR1 asks for an early release. SIGUSR1 is
 * blocked in every thread (cmd_write blocks it before starting any), so
 * it waits pending for sigtimedwait here, whenever it comes.
 */
static void hold_ms_or_signal(uint64_t ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
	uint64_t end = now_ns() + ms * 1000000ull, now;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	while (sigtimedwait(&set, NULL, &ts) < 0 && errno == EINTR) {
		now = now_ns();
		if (now >= end)
			break;
		ts.tv_sec = (time_t)((end - now) / 1000000000ull);
		ts.tv_nsec = (long)((end - now) % 1000000000ull);
	}
}

static void on_alarm(int sig)
{
	static const char msg[] = "lockhold: safety alarm fired, aborting\n";

	(void)sig;
	/* write(2) and _exit are async-signal-safe; stdio is not. */
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more we can do */
	}
	_exit(1);
}

/* Never hang a test run: abort after `secs` whatever we are blocked in. */
static void arm_alarm(uint64_t secs)
{
	struct sigaction sa = { .sa_handler = on_alarm };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(secs > 86400 ? 86400 : (unsigned int)secs);
}

/* ---------------------------------------------------------------- write */

struct holder {
	int fd;
	char *buf;
	size_t len;
	off_t off;
	int donefd;		/* eventfd: writer finished */
	atomic_int tid;
	ssize_t ret;
	int err;
};

static void *holder_thread(void *arg)
{
	struct holder *h = arg;
	uint64_t one = 1;

	atomic_store(&h->tid, (int)gettid());
	h->ret = pwrite(h->fd, h->buf, h->len, h->off);
	h->err = errno;
	if (write(h->donefd, &one, sizeof(one)) != sizeof(one))
		die("eventfd write: %s", strerror(errno));
	return NULL;
}

/* Fill the page holding `addr`; EEXIST means it is already there. */
static void resolve_fault(int uffd, uint64_t addr, const char *src, size_t page)
{
	struct uffdio_copy cp;

	for (;;) {
		memset(&cp, 0, sizeof(cp));
		cp.dst = addr & ~(uint64_t)(page - 1);
		cp.src = (uintptr_t)src;
		cp.len = page;
		if (ioctl(uffd, UFFDIO_COPY, &cp) == 0 || errno == EEXIST)
			return;
		if (errno != EAGAIN)
			die("UFFDIO_COPY at 0x%" PRIx64 ": %s", addr, strerror(errno));
	}
}

/* Read one page-fault event; returns 0 if none is queued (fd is O_NONBLOCK). */
static int read_fault(int uffd, uint64_t *addr)
{
	struct uffd_msg msg;
	ssize_t n;

	for (;;) {
		n = read(uffd, &msg, sizeof(msg));
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n < 0)
			die("read userfaultfd: %s", strerror(errno));
		if (n != sizeof(msg))
			die("short read from userfaultfd: %zd", n);
		/* Only MISSING faults are registered; skip anything else. */
		if (msg.event == UFFD_EVENT_PAGEFAULT) {
			*addr = msg.arg.pagefault.address;
			return 1;
		}
	}
}

static int cmd_write(int argc, char **argv)
{
	struct holder h = { 0 };
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	struct pollfd pfd[2];
	pthread_t thr;
	uint64_t hold_ms, addr, t;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), maplen;
	char *src;
	int uffd, err;

	if (argc != 6)
		usage();
	h.off = (off_t)parse_u64(argv[3]);
	h.len = parse_u64(argv[4]);
	hold_ms = parse_u64(argv[5]);
	if (h.len == 0)
		usage();	/* an empty write never faults, so never holds */
	arm_alarm(60 + (hold_ms + 999) / 1000);
	{
		/* before any thread: SIGUSR1 stays pending for hold_ms_or_signal() */
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}

	h.fd = open(argv[2], O_RDWR | O_CLOEXEC);
	if (h.fd < 0)
		die("open %s: %s", argv[2], strerror(errno));

	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		die("userfaultfd unavailable: %s", strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api))
		die("UFFDIO_API: %s", strerror(errno));

	maplen = (h.len + page - 1) & ~(page - 1);
	h.buf = mmap(NULL, maplen, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h.buf == MAP_FAILED)
		die("mmap %zu bytes: %s", maplen, strerror(errno));
	reg.range.start = (uintptr_t)h.buf;
	reg.range.len = maplen;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER: %s", strerror(errno));
	if (!(reg.ioctls & (1ull << _UFFDIO_COPY)))
		die("UFFDIO_COPY not supported on this range");

	/* UFFDIO_COPY's source must be page-aligned and outside the range. */
	src = mmap(NULL, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED)
		die("mmap source page: %s", strerror(errno));
	memset(src, 'x', page);

	h.donefd = eventfd(0, EFD_CLOEXEC);
	if (h.donefd < 0)
		die("eventfd: %s", strerror(errno));

	err = pthread_create(&thr, NULL, holder_thread, &h);
	if (err)
		die("pthread_create: %s", strerror(err));

	pfd[0] = (struct pollfd){ .fd = uffd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = h.donefd, .events = POLLIN };

	/* Phase 1: the first fault means the writer is inside i_rwsem. */
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if ((pfd[0].revents & POLLIN) && read_fault(uffd, &addr))
			break;
		if (pfd[1].revents & POLLIN) {
			pthread_join(thr, NULL);
			die("pwrite finished without faulting (ret=%zd): %s",
			    h.ret, h.ret < 0 ? strerror(h.err) : "no fault seen");
		}
	}

	printf("HOLDING pid=%d tid=%d t=%" PRIu64 "\n",
	       (int)getpid(), atomic_load(&h.tid), now_ns());
	fflush(stdout);
	hold_ms_or_signal(hold_ms);

	/* Phase 2: feed every fault until the pwrite returns. */
	resolve_fault(uffd, addr, src, page);
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (pfd[0].revents & POLLIN)
			while (read_fault(uffd, &addr))
				resolve_fault(uffd, addr, src, page);
		if (pfd[1].revents & POLLIN)
			break;
	}
	pthread_join(thr, NULL);
	t = now_ns();
	if (h.ret < 0)
		die("pwrite: %s", strerror(h.err));

	printf("RELEASED t=%" PRIu64 " wrote=%zd\n", t, h.ret);
	fflush(stdout);
	return 0;
}

/* ------------------------------------------------- read / pwrite / dwrite */

enum op { OP_READ, OP_PWRITE, OP_DWRITE };

struct waiter {
	pthread_t thr;
	enum op op;
	int fd;
	off_t off;
	size_t len;
	uint64_t iter;
	pthread_barrier_t *start;
	/* results */
	int tid;
	uint64_t start_ns, end_ns;
	ssize_t ret;
	int err;
};

static void *waiter_thread(void *arg)
{
	struct waiter *w = arg;
	char *buf;
	uint64_t i;
	int err;

	w->tid = (int)gettid();
	/* O_DIRECT needs an aligned buffer; aligning the others costs nothing. */
	err = posix_memalign((void **)&buf, 4096, w->len ? w->len : 1);
	/* Release all threads together so they really compete; a failed
	 * thread still waits, or the others would wait for it forever. */
	pthread_barrier_wait(w->start);
	if (err) {
		w->ret = -1;
		w->err = err;
		return NULL;
	}
	memset(buf, 'y', w->len);

	w->start_ns = now_ns();
	w->ret = 0;
	for (i = 0; i < (w->op == OP_DWRITE ? w->iter : 1); i++) {
		ssize_t n = w->op == OP_READ ? pread(w->fd, buf, w->len, w->off)
					     : pwrite(w->fd, buf, w->len, w->off);
		if (n < 0) {
			w->ret = -1;
			w->err = errno;
			break;
		}
		w->ret += n;
	}
	w->end_ns = now_ns();
	free(buf);
	return NULL;
}

static void print_u64_array(const char *key, const struct waiter *w, size_t n,
			    uint64_t (*get)(const struct waiter *))
{
	size_t i;

	printf("\"%s\": [", key);
	for (i = 0; i < n; i++)
		printf("%s%" PRIu64, i ? ", " : "", get(&w[i]));
	printf("]");
}

static uint64_t get_tid(const struct waiter *w) { return (uint64_t)w->tid; }
static uint64_t get_blocked(const struct waiter *w) { return w->end_ns - w->start_ns; }
static uint64_t get_start(const struct waiter *w) { return w->start_ns; }
static uint64_t get_end(const struct waiter *w) { return w->end_ns; }

static int cmd_waiters(enum op op, int argc, char **argv)
{
	pthread_barrier_t start;
	struct waiter *w;
	uint64_t nthreads, extra = 0;
	size_t len, i;
	off_t off;
	int fd, flags, err;

	if (op == OP_DWRITE ? argc != 7 : (argc != 6 && argc != 7))
		usage();
	off = (off_t)parse_u64(argv[3]);
	len = parse_u64(argv[4]);
	nthreads = parse_u64(argv[5]);
	if (argc == 7)
		extra = parse_u64(argv[6]);	/* START_DELAY_MS, or ITER for dwrite */
	if (nthreads < 1 || nthreads > MAX_THREADS)
		usage();
	/* dwrite may legitimately run long (ITER is unbounded): no alarm. */
	if (op != OP_DWRITE)
		arm_alarm(120 + (extra + 999) / 1000);

	flags = op == OP_READ ? O_RDONLY : O_RDWR;
	if (op == OP_DWRITE)
		flags |= O_DIRECT;
	fd = open(argv[2], flags | O_CLOEXEC);
	if (fd < 0)
		die("open %s: %s", argv[2], strerror(errno));

	if (op != OP_DWRITE && extra)
		sleep_ms(extra);

	w = calloc(nthreads, sizeof(*w));
	if (!w)
		die("out of memory");
	err = pthread_barrier_init(&start, NULL, (unsigned int)nthreads);
	if (err)
		die("pthread_barrier_init: %s", strerror(err));
	for (i = 0; i < nthreads; i++) {
		w[i] = (struct waiter){ .op = op, .fd = fd, .off = off, .len = len,
					.iter = op == OP_DWRITE ? extra : 1,
					.start = &start };
		err = pthread_create(&w[i].thr, NULL, waiter_thread, &w[i]);
		if (err)
			die("pthread_create: %s", strerror(err));
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(w[i].thr, NULL);
	for (i = 0; i < nthreads; i++)
		if (w[i].ret < 0)
			die("%s in thread %d: %s",
			    op == OP_READ ? "pread" : "pwrite", w[i].tid,
			    strerror(w[i].err));

	printf("{\"pid\": %d, ", (int)getpid());
	print_u64_array("tids", w, nthreads, get_tid);
	printf(", ");
	print_u64_array("blocked_ns", w, nthreads, get_blocked);
	printf(", ");
	print_u64_array("start_ns", w, nthreads, get_start);
	printf(", ");
	print_u64_array("end_ns", w, nthreads, get_end);
	printf("}\n");
	fflush(stdout);
	free(w);
	return 0;
}

/* ----------------------------------------------------------------- spin */

struct spinner {
	pthread_t thr;
	int fd;
	unsigned int idx;
	uint64_t nblocks;
	uint64_t deadline;
	atomic_uint_fast64_t *ops;
	int err;
};

static void *spin_thread(void *arg)
{
	struct spinner *s = arg;
	char buf[SPIN_BLOCK];
	uint64_t i, n = 0;

	memset(buf, 'z', sizeof(buf));
	/* Alternate write/read; stride threads apart to touch different pages. */
	for (i = 0; now_ns() < s->deadline; i++) {
		off_t off = (off_t)(((s->idx * 7919ull + i) % s->nblocks) * SPIN_BLOCK);
		ssize_t r = (i & 1) ? pread(s->fd, buf, sizeof(buf), off)
				    : pwrite(s->fd, buf, sizeof(buf), off);
		if (r < 0) {
			s->err = errno;
			break;
		}
		n++;
	}
	atomic_fetch_add(s->ops, n);
	return NULL;
}

static int cmd_spin(int argc, char **argv)
{
	atomic_uint_fast64_t ops = 0;
	struct spinner *s;
	struct stat st;
	uint64_t secs, nthreads, span, deadline;
	unsigned int i;
	int fd, err;

	if (argc != 5)
		usage();
	secs = parse_u64(argv[3]);
	nthreads = parse_u64(argv[4]);
	if (nthreads < 1 || nthreads > MAX_THREADS)
		usage();
	arm_alarm(secs + 60);

	fd = open(argv[2], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open %s: %s", argv[2], strerror(errno));
	if (fstat(fd, &st))
		die("fstat %s: %s", argv[2], strerror(errno));
	span = (uint64_t)st.st_size < SPIN_MIN_SPAN ? SPIN_MIN_SPAN : (uint64_t)st.st_size;

	s = calloc(nthreads, sizeof(*s));
	if (!s)
		die("out of memory");
	deadline = now_ns() + secs * 1000000000ull;
	for (i = 0; i < nthreads; i++) {
		s[i] = (struct spinner){ .fd = fd, .idx = i, .nblocks = span / SPIN_BLOCK,
					 .deadline = deadline, .ops = &ops };
		err = pthread_create(&s[i].thr, NULL, spin_thread, &s[i]);
		if (err)
			die("pthread_create: %s", strerror(err));
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(s[i].thr, NULL);
	for (i = 0; i < nthreads; i++)
		if (s[i].err)
			die("spin I/O: %s", strerror(s[i].err));

	printf("{\"ops\": %" PRIu64 "}\n", (uint64_t)atomic_load(&ops));
	fflush(stdout);
	free(s);
	return 0;
}

/* ---------------------------------------------------------------- fiemap */

/*
 * A syscall whose output buffer reaches into a userfaultfd page: its first
 * copy-out there faults inside the lock the call holds, and waits until we
 * resolve the fault. FS_IOC_FIEMAP holds the XFS IOLOCK shared that way,
 * getdents64 a directory's i_rwsem shared.
 */
struct uffd_call {
	int fd, donefd;
	char *buf;		/* head bytes on an ordinary page, the rest on the uffd page */
	size_t len;
	long (*call)(struct uffd_call *c);
	atomic_int tid;
	long ret;
	int err;
};

static void *uffd_call_thread(void *arg)
{
	struct uffd_call *c = arg;
	uint64_t one = 1;

	atomic_store(&c->tid, (int)gettid());
	c->ret = c->call(c);
	c->err = errno;
	if (write(c->donefd, &one, sizeof(one)) != sizeof(one))
		die("eventfd write: %s", strerror(errno));
	return NULL;
}

/* Two pages, the second registered with a new userfaultfd (returned); *map the first. */
static int uffd_pages(char **map, char **src, size_t page)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (uffd < 0)
		die("userfaultfd unavailable: %s", strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api))
		die("UFFDIO_API: %s", strerror(errno));
	*map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	*src = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*map == MAP_FAILED || *src == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	memset(*map, 0, page);
	memset(*src, 0, page);
	reg.range.start = (uintptr_t)*map + page;
	reg.range.len = page;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER: %s", strerror(errno));
	return uffd;
}

/*
 * Run c->call on a thread; at its first fault print HOLDING, hold for
 * hold_ms (less on SIGUSR1), resolve every fault, and return once the
 * call did. `what` names the call in errors.
 */
static void uffd_hold(struct uffd_call *c, int uffd, const char *src, size_t page,
		      uint64_t hold_ms, const char *what)
{
	struct pollfd pfd[2];
	pthread_t thr;
	uint64_t addr;
	sigset_t usr1;
	int err;

	c->donefd = eventfd(0, EFD_CLOEXEC);
	if (c->donefd < 0)
		die("eventfd: %s", strerror(errno));
	/* blocked before any thread exists, so hold_ms_or_signal takes it */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	err = pthread_create(&thr, NULL, uffd_call_thread, c);
	if (err)
		die("pthread_create: %s", strerror(err));
	pfd[0] = (struct pollfd){ .fd = uffd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = c->donefd, .events = POLLIN };
	/* the first fault means the call is inside its lock */
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if ((pfd[0].revents & POLLIN) && read_fault(uffd, &addr))
			break;
		if (pfd[1].revents & POLLIN) {
			pthread_join(thr, NULL);
			die("%s finished without faulting (ret=%ld): %s", what, c->ret,
			    c->ret < 0 ? strerror(c->err) : "nothing to copy out?");
		}
	}
	printf("HOLDING pid=%d tid=%d t=%" PRIu64 "\n", (int)getpid(), atomic_load(&c->tid), now_ns());
	fflush(stdout);
	hold_ms_or_signal(hold_ms);
	resolve_fault(uffd, addr, src, page);
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (pfd[0].revents & POLLIN)
			while (read_fault(uffd, &addr))
				resolve_fault(uffd, addr, src, page);
		if (pfd[1].revents & POLLIN)
			break;
	}
	pthread_join(thr, NULL);
	if (c->ret < 0)
		die("%s: %s", what, strerror(c->err));
}

/*
 * "CMD PATH HOLD_MS": PATH opened with oflags into c->fd, the safety
 * alarm armed past the hold; returns HOLD_MS.
 */
static uint64_t uffd_cmd_open(int argc, char **argv, int oflags, struct uffd_call *c)
{
	uint64_t hold_ms;

	if (argc != 4)
		usage();
	hold_ms = parse_u64(argv[3]);
	arm_alarm(60 + (hold_ms + 999) / 1000);
	c->fd = open(argv[2], oflags | O_CLOEXEC);
	if (c->fd < 0)
		die("open %s: %s", argv[2], strerror(errno));
	return hold_ms;
}

static long fiemap_call(struct uffd_call *c)
{
	return ioctl(c->fd, FS_IOC_FIEMAP, c->buf);
}

static int cmd_fiemap(int argc, char **argv)
{
	struct uffd_call c = { .call = fiemap_call };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t hold_ms = uffd_cmd_open(argc, argv, O_RDONLY, &c);
	struct fiemap *fm;
	char *map, *src;
	int uffd = uffd_pages(&map, &src, page);

	/* the fiemap header at the very end of page 0, the extents on page 1 */
	fm = (struct fiemap *)(map + page - sizeof(struct fiemap));
	fm->fm_start = 0;
	fm->fm_length = FIEMAP_MAX_OFFSET;
	fm->fm_extent_count = (uint32_t)(page / sizeof(struct fiemap_extent));
	c.buf = (char *)fm;
	uffd_hold(&c, uffd, src, page, hold_ms, "FS_IOC_FIEMAP");
	printf("RELEASED t=%" PRIu64 " extents=%u\n", now_ns(), fm->fm_mapped_extents);
	fflush(stdout);
	return 0;
}

static long readdir_call(struct uffd_call *c)
{
	return syscall(SYS_getdents64, c->fd, c->buf, c->len);
}

/*
 * "readdir" holds DIR's i_rwsem shared inside getdents64: the entries are
 * copied out to a userfaultfd page, with the lock held (iterate_dir).
 */
static int cmd_readdir(int argc, char **argv)
{
	struct uffd_call c = { .call = readdir_call };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t hold_ms = uffd_cmd_open(argc, argv, O_RDONLY | O_DIRECTORY, &c);
	char *map, *src;
	int uffd = uffd_pages(&map, &src, page);

	c.buf = map + page;  /* the first entry already faults */
	c.len = page;
	uffd_hold(&c, uffd, src, page, hold_ms, "getdents64");
	printf("RELEASED t=%" PRIu64 " bytes=%ld\n", now_ns(), c.ret);
	fflush(stdout);
	return 0;
}

/* --------------------------------------------------------------- dsparse */

struct sparse_writer {
	pthread_t thr;
	int fd, idx, nthreads, err;
	uint64_t iter;
	pthread_barrier_t *start;
};

static void *sparse_thread(void *arg)
{
	struct sparse_writer *w = arg;
	char *buf;

	if (posix_memalign((void **)&buf, 4096, 4096)) {
		w->err = ENOMEM;
		pthread_barrier_wait(w->start);
		return NULL;
	}
	memset(buf, 's', 4096);
	pthread_barrier_wait(w->start);
	for (uint64_t i = 0; i < w->iter; i++) {
		off_t off = (off_t)((i * (uint64_t)w->nthreads + (uint64_t)w->idx) * 4096 + 512);

		if (pwrite(w->fd, buf, 512, off) != 512) {
			w->err = errno ? errno : EIO;
			break;
		}
	}
	free(buf);
	return NULL;
}

static int cmd_dsparse(int argc, char **argv)
{
	struct sparse_writer *w;
	pthread_barrier_t start;
	uint64_t nthreads, iter;
	struct stat st;
	int fd, err;

	if (argc != 5)
		usage();
	nthreads = parse_u64(argv[3]);
	iter = parse_u64(argv[4]);
	if (nthreads < 1 || nthreads > MAX_THREADS)
		usage();
	arm_alarm(300);
	fd = open(argv[2], O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		die("open %s: %s", argv[2], strerror(errno));
	if (fstat(fd, &st))
		die("fstat: %s", strerror(errno));
	/* stay inside EOF: a write past it would be extending, not just unaligned */
	if ((uint64_t)st.st_size < nthreads * iter * 4096)
		die("%s is %lld bytes: needs %" PRIu64 " (truncate it bigger, sparse)", argv[2],
		    (long long)st.st_size, nthreads * iter * 4096);
	w = calloc(nthreads, sizeof(*w));
	if (!w)
		die("out of memory");
	err = pthread_barrier_init(&start, NULL, (unsigned int)nthreads);
	if (err)
		die("pthread_barrier_init: %s", strerror(err));
	for (uint64_t i = 0; i < nthreads; i++) {
		w[i] = (struct sparse_writer){ .fd = fd, .idx = (int)i, .nthreads = (int)nthreads,
					       .iter = iter, .start = &start };
		err = pthread_create(&w[i].thr, NULL, sparse_thread, &w[i]);
		if (err)
			die("pthread_create: %s", strerror(err));
	}
	for (uint64_t i = 0; i < nthreads; i++)
		pthread_join(w[i].thr, NULL);
	for (uint64_t i = 0; i < nthreads; i++)
		if (w[i].err)
			die("O_DIRECT pwrite: %s", strerror(w[i].err));
	printf("{\"pid\": %d, \"writes\": %" PRIu64 "}\n", (int)getpid(), nthreads * iter);
	fflush(stdout);
	free(w);
	return 0;
}

/* -------------------------------------------------------------- truncate */

static int cmd_truncate(int argc, char **argv)
{
	static char buf[1 << 20];
	uint64_t dirty, newsize, t0, t1;
	int fd;

	if (argc != 5)
		usage();
	dirty = parse_u64(argv[3]);
	newsize = parse_u64(argv[4]);
	arm_alarm(120);
	fd = open(argv[2], O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		die("open %s: %s", argv[2], strerror(errno));
	memset(buf, 't', sizeof(buf));
	for (uint64_t off = 0; off < dirty; off += sizeof(buf)) {
		size_t n = dirty - off < sizeof(buf) ? (size_t)(dirty - off) : sizeof(buf);

		if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n)
			die("pwrite: %s", strerror(errno));
	}
	t0 = now_ns();
	printf("TRUNCATING pid=%d tid=%d t=%" PRIu64 "\n", (int)getpid(), (int)gettid(), t0);
	fflush(stdout);
	if (ftruncate(fd, (off_t)newsize))
		die("ftruncate: %s", strerror(errno));
	t1 = now_ns();
	printf("TRUNCATED t=%" PRIu64 " took_ns=%" PRIu64 "\n", t1, t1 - t0);
	fflush(stdout);
	close(fd);
	return 0;
}

/* ----------------------------------------------------------------- rloop */

struct rlooper {
	pthread_t thr;
	int fd, err;
	off_t off;
	size_t len;
	uint64_t deadline, n;
};

static void *rloop_thread(void *arg)
{
	struct rlooper *r = arg;
	char *buf = malloc(r->len ? r->len : 1);

	if (!buf) {
		r->err = ENOMEM;
		return NULL;
	}
	while (now_ns() < r->deadline) {
		if (pread(r->fd, buf, r->len, r->off) < 0) {
			r->err = errno;
			break;
		}
		r->n++;
	}
	free(buf);
	return NULL;
}

static int cmd_rloop(int argc, char **argv)
{
	struct rlooper *r;
	uint64_t nthreads, ms, total = 0, deadline, off, len;
	int fd, err;

	if (argc != 7)
		usage();
	off = parse_u64(argv[3]);
	len = parse_u64(argv[4]);
	nthreads = parse_u64(argv[5]);
	ms = parse_u64(argv[6]);
	if (nthreads < 1 || nthreads > MAX_THREADS)
		usage();
	arm_alarm(60 + ms / 1000);
	fd = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("open %s: %s", argv[2], strerror(errno));
	r = calloc(nthreads, sizeof(*r));
	if (!r)
		die("out of memory");
	deadline = now_ns() + ms * 1000000ull;
	for (uint64_t i = 0; i < nthreads; i++) {
		r[i] = (struct rlooper){ .fd = fd, .off = (off_t)off, .len = len, .deadline = deadline };
		err = pthread_create(&r[i].thr, NULL, rloop_thread, &r[i]);
		if (err)
			die("pthread_create: %s", strerror(err));
	}
	for (uint64_t i = 0; i < nthreads; i++) {
		pthread_join(r[i].thr, NULL);
		if (r[i].err)
			die("pread: %s", strerror(r[i].err));
		total += r[i].n;
	}
	printf("{\"pid\": %d, \"reads\": %" PRIu64 "}\n", (int)getpid(), total);
	fflush(stdout);
	free(r);
	return 0;
}

/* ----------------------------------------------------------------- fsync */

static int cmd_fsync(int argc, char **argv)
{
	uint64_t t0;
	int fd;

	if (argc != 3)
		usage();
	arm_alarm(120);
	fd = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("open %s: %s", argv[2], strerror(errno));
	t0 = now_ns();
	if (fsync(fd))
		die("fsync %s: %s", argv[2], strerror(errno));
	printf("{\"pid\": %d, \"tids\": [%d], \"fsync_ns\": %" PRIu64 "}\n", (int)getpid(),
	       (int)gettid(), now_ns() - t0);
	fflush(stdout);
	close(fd);
	return 0;
}

/* ------------------------------------------------------------------ copy */

static int cmd_copy(int argc, char **argv)
{
	bool send;
	uint64_t t0, len;
	loff_t off, zero = 0;
	ssize_t n;
	int fd, other;

	if (argc != 7)
		usage();
	send = !strcmp(argv[4], "sendfile");
	if (!send && strcmp(argv[4], "copy"))
		usage();
	off = (loff_t)parse_u64(argv[5]);
	len = parse_u64(argv[6]);
	arm_alarm(120);
	fd = open(argv[2], (send ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
	if (fd < 0)
		die("open %s: %s", argv[2], strerror(errno));
	other = open(argv[3], (send ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY) | O_CLOEXEC, 0644);
	if (other < 0)
		die("open %s: %s", argv[3], strerror(errno));
	t0 = now_ns();
	n = send ? sendfile(other, fd, &off, len) : copy_file_range(other, &zero, fd, &off, len, 0);
	if (n < 0)
		die("%s: %s", argv[4], strerror(errno));
	printf("{\"pid\": %d, \"tids\": [%d], \"bytes\": %zd, \"ns\": %" PRIu64 "}\n",
	       (int)getpid(), (int)gettid(), n, now_ns() - t0);
	fflush(stdout);
	close(other);
	close(fd);
	return 0;
}

/*
 * LOCKHOLD_TITLE="lockhold: role": rewrite our command line to that title,
 * as PostgreSQL's processes do ("postgres: checkpointer"), over the
 * arguments' own bytes, NUL-padded; the arguments are used from copies.
 */
static char **set_title(int argc, char **argv)
{
	const char *title = getenv("LOCKHOLD_TITLE");
	char **copy;
	size_t room;

	if (!title)
		return argv;
	copy = calloc((size_t)argc + 1, sizeof(*copy));
	if (!copy)
		die("out of memory");
	for (int i = 0; i < argc; i++)
		if (!(copy[i] = strdup(argv[i])))
			die("out of memory");
	room = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) - argv[0]);
	memset(argv[0], 0, room);
	memcpy(argv[0], title, strlen(title) < room ? strlen(title) : room);
	return copy;
}

static int run(int argc, char **argv)
{
	if (argc < 3)
		usage();
	if (!strcmp(argv[1], "write"))
		return cmd_write(argc, argv);
	if (!strcmp(argv[1], "read"))
		return cmd_waiters(OP_READ, argc, argv);
	if (!strcmp(argv[1], "pwrite"))
		return cmd_waiters(OP_PWRITE, argc, argv);
	if (!strcmp(argv[1], "dwrite"))
		return cmd_waiters(OP_DWRITE, argc, argv);
	if (!strcmp(argv[1], "spin"))
		return cmd_spin(argc, argv);
	if (!strcmp(argv[1], "fiemap"))
		return cmd_fiemap(argc, argv);
	if (!strcmp(argv[1], "readdir"))
		return cmd_readdir(argc, argv);
	if (!strcmp(argv[1], "dsparse"))
		return cmd_dsparse(argc, argv);
	if (!strcmp(argv[1], "truncate"))
		return cmd_truncate(argc, argv);
	if (!strcmp(argv[1], "rloop"))
		return cmd_rloop(argc, argv);
	if (!strcmp(argv[1], "fsync"))
		return cmd_fsync(argc, argv);
	if (!strcmp(argv[1], "copy"))
		return cmd_copy(argc, argv);
	usage();
	return 2;
}

/* LOCKHOLD_LINGER_MS: stay that long after the work, so that tracers still find us. */
int main(int argc, char **argv)
{
	const char *linger = getenv("LOCKHOLD_LINGER_MS");
	int rc;

	if (argc < 3)
		usage();
	rc = run(argc, set_title(argc, argv));
	fflush(stdout);
	if (linger)
		usleep((useconds_t)atoi(linger) * 1000);
	return rc;
}
