/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Messages to the user, and the one libbpf print callback. */
#ifndef ILOCK_LOG_H
#define ILOCK_LOG_H

extern int log_verbose;

/* "ilock: <message>" on stderr, one line. */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Only with -v. */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Route libbpf's messages: debug with -vv, info with -v, warnings always. */
void log_setup_libbpf(int verbose);

#endif
