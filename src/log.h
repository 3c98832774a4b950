/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Messages to the user, and the one libbpf print callback. */
#ifndef ILOCK_LOG_H
#define ILOCK_LOG_H

#include <stddef.h>

extern int log_verbose;

/*
 * The name messages start with: "ilock", or "ilocktop" for the live view
 * however it was started, so that its messages all say one name.
 */
void log_set_prog(const char *name);
const char *log_prog_name(void);

/* "ilock: <message>" on stderr, one line. */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Only with -v. */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * While buf is set (not NULL), messages are kept there, "; "-separated and
 * cut to len, instead of going to stderr, and libbpf's are dropped: for a
 * curses screen that must not be written over. NULL: stderr again.
 */
void log_capture(char *buf, size_t len);
/* Route libbpf's messages: debug with -vv, info and warnings with -v (ilock reports failures itself). */
void log_setup_libbpf(int verbose);

#endif
