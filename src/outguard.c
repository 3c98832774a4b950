// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <unistd.h>

#include "outguard.h"
#include "signals.h"
#include "util.h"

static int guarded_fd = -1;
static void (*stop_hook)(void *);
static void *stop_hook_ctx;

void outguard_on_stop(void (*fn)(void *ctx), void *ctx)
{
	stop_hook = fn;
	stop_hook_ctx = ctx;
}

/*
 * A stop asked for while a write blocks (a pipe nobody reads): the signal
 * cuts the write short, and the hook runs here, once, outside the handler.
 */
static void check_stop(void)
{
	void (*fn)(void *) = stop_hook;

	if (fn && stop_requested) {
		stop_hook = NULL;
		fn(stop_hook_ctx);
	}
}

/* A failed write returns -1 with errno set, so that fflush and ferror report it. */
static ssize_t guarded_write(void *cookie, const char *buf, size_t n)
{
	char tmp[4096];
	size_t done = 0;

	(void)cookie;
	while (done < n) {
		size_t k = n - done < sizeof(tmp) ? n - done : sizeof(tmp), off = 0;

		memcpy(tmp, buf + done, k);
		display_clean(tmp, k, true);
		while (off < k) {
			ssize_t w = write(guarded_fd, tmp + off, k - off);

			check_stop();
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				if (!w)
					errno = EIO;
				return -1;
			}
			off += (size_t)w;
		}
		done += k;
	}
	return (ssize_t)n;
}

void outguard_stdout(void)
{
	cookie_io_functions_t io = { .write = guarded_write };
	FILE *f;

	if (fflush(stdout))
		return;
	guarded_fd = fileno(stdout);
	if (guarded_fd < 0)
		return;
	f = fopencookie(NULL, "w", io);
	if (!f)
		return;
	/* as stdout would be: a line at a time to a terminal */
	if (setvbuf(f, NULL, isatty(guarded_fd) ? _IOLBF : _IOFBF, BUFSIZ)) {
		fclose(f);
		return;
	}
	stdout = f;
}

bool outguard_reader_left(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };

	/* a pipe's writer polls POLLERR once its last reader closed; a file never does */
	if (poll(&p, 1, 0) != 1 || !(p.revents & (POLLERR | POLLHUP)))
		return false;
	__fpurge(stdout);
	clearerr(stdout);
	return true;
}
