/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The one signal handler: a first SIGINT, TERM, HUP or QUIT asks to stop, a second exits. */
#ifndef ILOCK_SIGNALS_H
#define ILOCK_SIGNALS_H

#include <signal.h>

extern volatile sig_atomic_t stop_requested;
extern volatile sig_atomic_t resize_pending;

/* cleanup runs (async-signal-safe only) before a forced exit. */
void signals_setup(void (*cleanup)(void));

#endif
