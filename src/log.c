// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "log.h"

int log_verbose;
static const char *log_prog = "ilock";

void log_set_prog(const char *name)
{
	log_prog = name;
}

const char *log_prog_name(void)
{
	return log_prog;
}

/* log_capture()'s buffer, or NULL: messages go to stderr */
static char *cap_buf;
static size_t cap_len;

void log_capture(char *buf, size_t len)
{
	cap_buf = buf && len ? buf : NULL;
	cap_len = len;
	if (cap_buf)
		cap_buf[0] = 0;
}

static void vlog(const char *kind, const char *fmt, va_list ap)
{
	if (cap_buf) {
		size_t at = strlen(cap_buf);

		/* the first message is the one that matters; later ones follow it */
		if (at && at + 2 < cap_len)
			at += (size_t)snprintf(cap_buf + at, cap_len - at, "; ");
		if (at + 1 < cap_len) {
			int n = snprintf(cap_buf + at, cap_len - at, "%s", kind);

			if (n > 0 && (size_t)n < cap_len - at)
				vsnprintf(cap_buf + at + n, cap_len - at - n, fmt, ap);
		}
		return;
	}
	fprintf(stderr, "%s: %s", log_prog, kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (!log_verbose)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (cap_buf)
		return 0;  /* a screen is up: libbpf's lines would scribble on it */
	if (level == LIBBPF_DEBUG && log_verbose < 2)
		return 0;
	if (level == LIBBPF_INFO && log_verbose < 1)
		return 0;
	/* warnings are shown only with -v: every failure is reported by ilock itself */
	if (level == LIBBPF_WARN && log_verbose < 1)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void log_setup_libbpf(int verbose)
{
	log_verbose = verbose;
	libbpf_set_print(libbpf_print);
}
